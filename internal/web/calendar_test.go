package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
)

func TestCalendarAndReschedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	zone, _ := time.LoadLocation("America/New_York")
	u, _ := url.Parse(e.url)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "reelay_tz", Value: url.QueryEscape("America/New_York"), Path: "/"}})

	ch := b.sandboxChannel("tiktok")
	// Three days ahead at 09:30 in New York.
	day := time.Now().In(zone).AddDate(0, 0, 3)
	at := time.Date(day.Year(), day.Month(), day.Day(), 9, 30, 0, 0, zone)
	r, out := b.publish("", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", `["` + ch + `"]`}, {"title", "Calendar post"},
		{"scheduled_for", at.Format(time.RFC3339)}}, "", fileField{"video", "c.mp4", smallVideo(t)})
	if r.Code != 200 {
		t.Fatalf("schedule: %d %v", r.Code, out)
	}
	id := out["post_id"].(string)

	for _, view := range []string{"month", "week"} {
		page := b.get("/calendar?view=" + view + "&date=" + at.Format("2006-01-02"))
		cell := `data-date="` + at.Format("2006-01-02") + `"`
		i := strings.Index(page.Body, cell)
		if page.Code != 200 || i < 0 {
			t.Fatalf("%s view: %d, no cell for %s", view, page.Code, at.Format("2006-01-02"))
		}
		// The post is in its day's cell, at its New York time, movable.
		rest := page.Body[i:]
		if end := strings.Index(rest[1:], `data-date="`); end > 0 {
			rest = rest[:end]
		}
		if !strings.Contains(rest, `data-post="`+id+`"`) || !strings.Contains(rest, `data-time="09:30"`) || !strings.Contains(rest, `draggable="true"`) {
			t.Errorf("%s view, the post's day:\n%s", view, rest)
		}
		if !strings.Contains(page.Body, "in America/New_York") {
			t.Errorf("%s view does not say its timezone", view)
		}
	}
	if r := b.get("/calendar?date=31-12-2026"); r.Code != 400 {
		t.Errorf("a date that is not one: %d", r.Code)
	}

	// Moved by the calendar's script: the wall-clock time in the zone becomes that instant.
	move := func(local string, asJSON bool) answer {
		h := map[string]string{}
		if asJSON {
			h = map[string]string{"X-CSRF-Token": b.csrf, "Accept": "application/json"}
		}
		return b.post("/posts/"+id+"/reschedule", url.Values{"scheduled_local": {local}, "timezone": {"America/New_York"}}, h)
	}
	next := at.AddDate(0, 0, 1)
	r = move(next.Format("2006-01-02T15:04"), true)
	var moved map[string]any
	json.Unmarshal([]byte(r.Body), &moved)
	p, _ := e.st.GetPost(context.Background(), e.a.AccountID, id)
	if r.Code != 200 || moved["success"] != true || p.ScheduledFor == nil || !p.ScheduledFor.Equal(next) {
		t.Fatalf("move: %d %s, scheduled %v, want %v", r.Code, r.Body, p.ScheduledFor, next)
	}
	// Into the past: refused beside the field (JSON for the script, the page for the form),
	// the typed time kept, nothing changed.
	past := time.Now().In(zone).AddDate(0, 0, -1).Format("2006-01-02T15:04")
	if r := move(past, true); r.Code != 400 || !strings.Contains(r.Body, `"scheduled_for"`) {
		t.Errorf("move into the past (script): %d %s", r.Code, r.Body)
	}
	r = move(past, false)
	if r.Code != 400 || !strings.Contains(r.Body, `id="scheduled_local-error"`) || !strings.Contains(r.Body, `value="`+past+`"`) ||
		!strings.Contains(r.Body, "in the future") {
		t.Errorf("move into the past (form): %d\n%s", r.Code, r.Body)
	}
	if p, _ := e.st.GetPost(context.Background(), e.a.AccountID, id); !p.ScheduledFor.Equal(next) {
		t.Errorf("a refused move changed the post: %v", p.ScheduledFor)
	}
	if r := b.post("/posts/"+id+"/reschedule", url.Values{"scheduled_local": {"soon"}}, nil); r.Code != 400 {
		t.Errorf("not a time: %d", r.Code)
	}
	// The form's way: back to the post's page.
	later := next.AddDate(0, 0, 1)
	if r := move(later.Format("2006-01-02T15:04"), false); r.Code != http.StatusSeeOther || r.location() != "/posts/"+id+"?done=rescheduled" {
		t.Errorf("move by the form: %d %q", r.Code, r.location())
	}
	if page := b.get("/posts/" + id + "?done=rescheduled"); !strings.Contains(page.Body, "The post is rescheduled.") ||
		!strings.Contains(page.Body, `value="`+later.Format("2006-01-02T15:04")+`"`) {
		t.Errorf("the post's page after the move:\n%s", page.Body)
	}

	// Another account's post is not found; a post that has fired cannot move.
	other := e.browser()
	other.signIn(e.b.Key)
	if r := other.post("/posts/"+id+"/reschedule", url.Values{"scheduled_local": {later.Format("2006-01-02T15:04")}}, nil); r.Code != 404 {
		t.Errorf("another account's post: %d", r.Code)
	}
	b.post("/posts/"+id+"/cancel", url.Values{}, nil)
	if r := move(later.Format("2006-01-02T15:04"), true); r.Code != 409 {
		t.Errorf("a canceled post moved: %d %s", r.Code, r.Body)
	}
	if page := b.get("/calendar?view=week&date=" + later.Format("2006-01-02")); strings.Contains(page.Body, `draggable="true"`) {
		t.Error("a canceled post is still movable on the calendar")
	}
}
