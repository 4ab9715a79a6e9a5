package web

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

const postsPerPage = 25

// Which time a post list's range of days bounds.
const (
	datesCreated   = "created"
	datesScheduled = "scheduled"
)

type postsData struct {
	Posts     []store.Post
	Statuses  []string
	Platforms []string
	// The filters ("" = all; ProjectID "all" = every project). From and To are days in the
	// user's timezone, Zone, both included, of the creation or the scheduled time (Dates).
	Status, ProjectID, Platform string
	Dates, From, To, Zone       string
	// Errors are the refused filters' messages, by field.
	Errors map[string]string
	// Next is the URL of the next page ("" on the last); First that of the first page when
	// this one is not it.
	Next, First string
}

// Filtered says some filter beside the project is set.
func (d postsData) Filtered() bool {
	return d.Status != "" || d.Platform != "" || d.From != "" || d.To != ""
}

// query is the URL of the list with these filters, from the page at cursor ("" = the first).
func (d postsData) query(cursor string) string {
	v := url.Values{}
	for k, s := range map[string]string{"project": d.ProjectID, "status": d.Status, "platform": d.Platform,
		"from": d.From, "to": d.To, "cursor": cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if d.From != "" || d.To != "" {
		v.Set("dates", d.Dates)
	}
	if len(v) == 0 {
		return "/posts"
	}
	return "/posts?" + v.Encode()
}

// postsPage is the post history, newest first, filtered by project, status, platform and a
// range of days of creation or scheduling in the user's timezone (store.ListPosts, as GET
// /api/v1/posts filters), paged by the store's cursor. Refused filters are shown beside their
// fields.
func (h *Handler) postsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	p, err := h.pageFor(r, s, "Posts", "posts", nil)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	loc := userZone(r)
	d := postsData{Statuses: publish.PostStatuses, Platforms: platform.All, Status: q.Get("status"), ProjectID: q.Get("project"),
		Platform: q.Get("platform"), Dates: q.Get("dates"), From: strings.TrimSpace(q.Get("from")),
		To: strings.TrimSpace(q.Get("to")), Zone: loc.String()}
	var f apierr.Fields
	filter := store.PostFilter{Status: d.Status, Platform: d.Platform}
	switch d.ProjectID {
	case "":
		d.ProjectID = p.Project.ID
		filter.ProjectID = p.Project.ID
	case "all":
	default:
		if _, err := h.o.Store.GetProject(r.Context(), s.AccountID, d.ProjectID); err != nil {
			f.Add("project", "is not one of your projects")
		}
		filter.ProjectID = d.ProjectID
	}
	since, before := dayRange(&f, d.From, d.To, loc)
	switch d.Dates {
	case "", datesCreated:
		d.Dates = datesCreated
		filter.CreatedSince, filter.CreatedBefore = since, before
	case datesScheduled:
		filter.ScheduledSince, filter.ScheduledBefore = since, before
	default:
		f.Add("dates", "must be created or scheduled")
	}
	pq := publish.PostQuery{Filter: filter, Limit: postsPerPage, Cursor: q.Get("cursor")}
	if pq.Cursor != "" {
		d.First = d.query("")
	}
	if h.posts.CheckList(&f, pq); len(f) > 0 {
		d.Errors = f
		p.Data = d
		h.render(w, r, http.StatusBadRequest, "posts", p)
		return nil
	}
	posts, next, err := h.posts.List(r.Context(), s.AccountID, pq)
	if err != nil {
		return err
	}
	d.Posts = posts
	if next != nil {
		d.Next = d.query(*next)
	}
	p.Data = d
	h.render(w, r, http.StatusOK, "posts", p)
	return nil
}

// dayRange turns two days in loc (YYYY-MM-DD, both included, either may be empty) into the
// half-open range of times the store filters by: from the first day's start to the start of the
// day after the last.
func dayRange(f *apierr.Fields, from, to string, loc *time.Location) (since, before *time.Time) {
	day := func(field, v string) *time.Time {
		if v == "" {
			return nil
		}
		t, err := time.ParseInLocation(time.DateOnly, v, loc)
		if err != nil {
			f.Add(field, "must be a date as YYYY-MM-DD")
			return nil
		}
		return &t
	}
	since, last := day("from", from), day("to", to)
	if since != nil && last != nil && last.Before(*since) {
		f.Add("to", "must not be before the first day")
	}
	if last != nil {
		// The next day's start, which time.Date finds across a change of summer time too.
		next := time.Date(last.Year(), last.Month(), last.Day()+1, 0, 0, 0, 0, loc)
		before = &next
	}
	return since, before
}

type postData struct {
	Post store.Post
	// Live: the post may still change (a script follows it).
	Live bool
	// Retryable: some destination failed; Cancelable: scheduled and not fired.
	Retryable, Cancelable bool
	Notice                string
	CSRF                  string
	// Zone is the user's timezone; RescheduleValue the reschedule form's date-time in it (the
	// scheduled time, or what was typed), RescheduleError why the last one was refused.
	Zone            string
	RescheduleValue string
	RescheduleError string
}

func newPostData(p store.Post, csrf string, loc *time.Location) postData {
	d := postData{Post: p, CSRF: csrf, Cancelable: p.Status == store.PostScheduled,
		Live: p.Status == store.PostScheduled || p.Status == store.PostProcessing, Zone: loc.String()}
	if p.ScheduledFor != nil {
		d.RescheduleValue = p.ScheduledFor.In(loc).Format("2006-01-02T15:04")
	}
	for _, dest := range p.Destinations {
		if dest.Status == store.DestFailed {
			d.Retryable = true
		}
	}
	return d
}

// notices are the outcomes a redirect announces (fixed words, never text from the URL).
var notices = map[string]string{
	"retried":         "The failed destinations are being sent again.",
	"canceled":        "The post is canceled.",
	"published":       "Submitted. Each destination's status below follows what the platform answers.",
	"scheduled":       "Scheduled. It will be published at the time shown.",
	"connected":       "Channel connected.",
	"deleted":         "Channel deleted.",
	"revoked":         "Key revoked. Sessions signed in with it have ended.",
	"webhook_deleted": "Webhook deleted, with its delivery log.",
	"webhook_enabled": "Webhook enabled: the events from now on are sent to it.",
	"rescheduled":     "The post is rescheduled.",
	"replied":         "Reply posted.",
}

func (h *Handler) ownPost(r *http.Request, s *session) (store.Post, error) {
	id := r.PathValue("id")
	if !store.ValidID(id) {
		return store.Post{}, apierr.NotFound("post")
	}
	return h.posts.Get(r.Context(), s.AccountID, id)
}

// postPage shows one post and each destination's live status.
func (h *Handler) postPage(w http.ResponseWriter, r *http.Request, s *session) error {
	post, err := h.ownPost(r, s)
	if err != nil {
		return err
	}
	d := newPostData(post, s.CSRF(), userZone(r))
	d.Notice = notices[r.URL.Query().Get("done")]
	title := post.Title
	if title == "" {
		title = "Post"
	}
	p, err := h.pageFor(r, s, title, "posts", d)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "post", p)
	return nil
}

// postEventPoll is how often the event stream reads the post; postEventLimit how long one
// stream lasts (the browser reconnects by itself).
const (
	postEventPoll  = 500 * time.Millisecond
	postEventLimit = 5 * time.Minute
)

// postEvents streams the post's status section as server-sent events: one event whenever it
// changes, and a "settled" event when the post can no longer change by itself. Workers may run
// in other processes, so the stream reads the store rather than waiting on this process.
func (h *Handler) postEvents(w http.ResponseWriter, r *http.Request, s *session) error {
	post, err := h.ownPost(r, s)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	ctx := r.Context()
	deadline := time.NewTimer(postEventLimit)
	defer deadline.Stop()
	tick := time.NewTicker(postEventPoll)
	defer tick.Stop()
	var last []byte
	for {
		var buf bytes.Buffer
		d := newPostData(post, s.CSRF(), time.UTC)
		if err := templates["post"].ExecuteTemplate(&buf, "status", d); err != nil {
			return err
		}
		if !bytes.Equal(buf.Bytes(), last) {
			last = buf.Bytes()
			event := "status"
			if !d.Live {
				event = "settled"
			}
			fmt.Fprintf(w, "event: %s\n", event)
			for _, line := range strings.Split(buf.String(), "\n") {
				fmt.Fprintf(w, "data: %s\n", line)
			}
			fmt.Fprint(w, "\n")
			if err := rc.Flush(); err != nil {
				return nil
			}
			if !d.Live {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-httpapi.Draining(ctx):
			// The server is stopping: the browser reconnects by itself, to a process that
			// is not (a stream would otherwise hold the shutdown open for minutes).
			return nil
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
		if post, err = h.o.Store.GetPost(ctx, s.AccountID, post.ID); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// retryPost sends a post's failed destinations again.
func (h *Handler) retryPost(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	if !store.ValidID(id) {
		return apierr.NotFound("post")
	}
	if _, err := publish.Retry(r.Context(), h.o.Store, h.o.Queue, s.AccountID, id); err != nil {
		return err
	}
	http.Redirect(w, r, "/posts/"+id+"?done=retried", http.StatusSeeOther)
	return nil
}

// cancelPost cancels a scheduled post that has not fired.
func (h *Handler) cancelPost(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	if !store.ValidID(id) {
		return apierr.NotFound("post")
	}
	if _, err := publish.Cancel(r.Context(), h.o.Store, s.AccountID, id); err != nil {
		return err
	}
	http.Redirect(w, r, "/posts/"+id+"?done=canceled", http.StatusSeeOther)
	return nil
}
