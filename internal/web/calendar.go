package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	_ "time/tzdata" // timezone rules inside the binary, so a calendar in any zone works everywhere

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// tzCookie holds the browser's IANA timezone, set by the page's script; times are shown and
// read in it (UTC without it).
const tzCookie = "reelay_tz"

// userZone is the request's timezone.
func userZone(r *http.Request) *time.Location {
	if c, err := r.Cookie(tzCookie); err == nil {
		if name, err := url.QueryUnescape(c.Value); err == nil && name != "" && len(name) < 64 && !strings.HasPrefix(name, "/") {
			if loc, err := time.LoadLocation(name); err == nil {
				return loc
			}
		}
	}
	return time.UTC
}

// Calendar views and their limits: a day shows at most this many posts (the rest are counted,
// one click away), so a page stays small however many posts a range holds.
const (
	monthPerDay = 4
	weekPerDay  = 40
	// calendarMax bounds the posts read for one page.
	calendarMax = 20000
)

type calendarData struct {
	View string // "month" or "week"
	Zone string
	// Title names the range ("December 2026", "30 Nov – 6 Dec 2026").
	Title string
	// Prev, Next and Today are the URLs of the neighbouring ranges; MonthURL and WeekURL show
	// the same date in the other view.
	Prev, Next, Today, MonthURL, WeekURL string
	Weekdays                             []string
	Weeks                                [][]calendarDay
	Total                                int
	CSRF                                 string
}

type calendarDay struct {
	Date      string // 2006-01-02
	Day       int
	InRange   bool // in the month shown (month view)
	IsToday   bool
	Entries   []calendarEntry
	More      int
	DayURL    string
	Weekday   string
	LongLabel string
}

type calendarEntry struct {
	store.CalendarEntry
	// Local is the time of day in the user's zone; Movable: scheduled and not fired.
	Local   string
	Movable bool
	Label   string
}

// calendarPage shows the current project's posts by day: a month (weeks from Monday) or a
// week, in the user's timezone. Scheduled posts can be dragged to another day (keeping their
// time of day) where the browser runs the script; each post's page reschedules it too.
func (h *Handler) calendarPage(w http.ResponseWriter, r *http.Request, s *session) error {
	p, err := h.pageFor(r, s, "Calendar", "calendar", nil)
	if err != nil {
		return err
	}
	loc := userZone(r)
	q := r.URL.Query()
	view := q.Get("view")
	if view != "week" {
		view = "month"
	}
	now := h.o.Now().In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	anchor := today
	if v := q.Get("date"); v != "" {
		if anchor, err = time.ParseInLocation("2006-01-02", v, loc); err != nil {
			return apierr.Field("date", "must be a date such as 2026-12-01")
		}
	}
	var from, to, first time.Time
	d := calendarData{View: view, Zone: loc.String(), CSRF: s.CSRF()}
	link := func(view string, t time.Time) string {
		return "/calendar?" + url.Values{"view": {view}, "date": {t.Format("2006-01-02")}}.Encode()
	}
	if view == "month" {
		first = time.Date(anchor.Year(), anchor.Month(), 1, 0, 0, 0, 0, loc)
		from = mondayOf(first)
		last := first.AddDate(0, 1, -1)
		to = mondayOf(last).AddDate(0, 0, 7)
		d.Title = first.Format("January 2006")
		d.Prev, d.Next = link("month", first.AddDate(0, -1, 0)), link("month", first.AddDate(0, 1, 0))
	} else {
		from = mondayOf(anchor)
		to = from.AddDate(0, 0, 7)
		end := to.AddDate(0, 0, -1)
		d.Title = from.Format("2 Jan") + " – " + end.Format("2 Jan 2006")
		d.Prev, d.Next = link("week", from.AddDate(0, 0, -7)), link("week", from.AddDate(0, 0, 7))
	}
	d.Today, d.MonthURL, d.WeekURL = link(view, today), link("month", anchor), link("week", anchor)
	entries, err := h.o.Store.ListCalendar(r.Context(), s.AccountID, p.Project.ID, from, to, calendarMax)
	if err != nil {
		return err
	}
	d.Total = len(entries)
	perDay := monthPerDay
	if view == "week" {
		perDay = weekPerDay
	}
	byDay := map[string][]store.CalendarEntry{}
	for _, e := range entries {
		key := e.At.In(loc).Format("2006-01-02")
		byDay[key] = append(byDay[key], e)
	}
	for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
		if day.Weekday() == time.Monday {
			d.Weeks = append(d.Weeks, nil)
		}
		if len(d.Weekdays) < 7 {
			d.Weekdays = append(d.Weekdays, day.Format("Mon"))
		}
		key := day.Format("2006-01-02")
		cd := calendarDay{Date: key, Day: day.Day(), InRange: view == "week" || day.Month() == first.Month(),
			IsToday: day.Equal(today), DayURL: link("week", day), Weekday: day.Format("Mon"), LongLabel: day.Format("Monday 2 January")}
		for i, e := range byDay[key] {
			if i == perDay {
				cd.More = len(byDay[key]) - perDay
				break
			}
			label := e.Title
			if label == "" {
				label = e.Caption
			}
			if label == "" {
				label = "Untitled post"
			}
			cd.Entries = append(cd.Entries, calendarEntry{CalendarEntry: e, Local: e.At.In(loc).Format("15:04"), Label: label,
				Movable: e.Scheduled && e.Status == store.PostScheduled})
		}
		d.Weeks[len(d.Weeks)-1] = append(d.Weeks[len(d.Weeks)-1], cd)
	}
	p.Data = d
	h.render(w, r, http.StatusOK, "calendar", p)
	return nil
}

func mondayOf(t time.Time) time.Time {
	back := (int(t.Weekday()) + 6) % 7 // days since Monday
	return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, t.Location())
}

// reschedulePost moves a scheduled post that has not fired (publish.Update, as PATCH
// /api/v1/posts/{id} does). The new time comes as scheduled_local (a wall-clock date-time,
// 2026-12-01T09:00) with timezone (IANA name; the user's when empty), or as scheduled_for (RFC
// 3339). Scripts (the calendar's drag) get JSON; forms (the post's page) the post's page again,
// with the message beside the field when the time is refused.
func (h *Handler) reschedulePost(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	if !store.ValidID(id) {
		return apierr.NotFound("post")
	}
	local, zone := strings.TrimSpace(r.PostFormValue("scheduled_local")), strings.TrimSpace(r.PostFormValue("timezone"))
	at := strings.TrimSpace(r.PostFormValue("scheduled_for"))
	if at == "" {
		var err error
		if at, err = wallClock(local, zone, userZone(r)); err != nil {
			return h.rescheduleRefused(w, r, s, id, local, err)
		}
	}
	p, err := publish.Update(r.Context(), h.o.Store, h.o.Queue, s.AccountID, id, publish.Change{ScheduledFor: &at})
	if err != nil {
		return h.rescheduleRefused(w, r, s, id, local, err)
	}
	if wantsJSON(r) {
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "post_id": p.ID, "scheduled_for": p.ScheduledFor})
		return nil
	}
	http.Redirect(w, r, "/posts/"+id+"?done=rescheduled", http.StatusSeeOther)
	return nil
}

// wallClock turns a wall-clock date-time in a zone into RFC 3339 with that zone's offset.
func wallClock(local, zone string, fallback *time.Location) (string, error) {
	loc := fallback
	if zone != "" {
		var err error
		if loc, err = time.LoadLocation(zone); err != nil || strings.HasPrefix(zone, "/") {
			return "", apierr.Field("timezone", "is not a timezone name such as Europe/Paris")
		}
	}
	t, err := time.ParseInLocation("2006-01-02T15:04", local, loc)
	if err != nil {
		return "", apierr.Field("scheduled_for", "give a date and time, such as 2026-12-01 09:00")
	}
	return t.Format(time.RFC3339), nil
}

// rescheduleRefused answers a refused reschedule: JSON for scripts; for the form, the post's
// page with the message beside the field and the typed time kept.
func (h *Handler) rescheduleRefused(w http.ResponseWriter, r *http.Request, s *session, id, typed string, err error) error {
	var ae *apierr.Error
	if wantsJSON(r) || !errors.As(err, &ae) || ae.Status >= 500 || ae.Status == http.StatusNotFound {
		return err
	}
	post, gerr := h.ownPost(r, s)
	if gerr != nil {
		return gerr
	}
	d := newPostData(post, s.CSRF(), userZone(r))
	d.RescheduleError, d.RescheduleValue = ae.Message, typed
	for _, m := range ae.Fields {
		d.RescheduleError = m
	}
	p, perr := h.pageFor(r, s, "Post", "posts", d)
	if perr != nil {
		return perr
	}
	h.render(w, r, ae.Status, "post", p)
	return nil
}
