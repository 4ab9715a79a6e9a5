package web

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// postStatuses are the statuses the post list filters by.
var postStatuses = []string{store.PostScheduled, store.PostProcessing, store.PostPublished,
	store.PostPartiallyPublished, store.PostFailed, store.PostCanceled}

const postsPerPage = 25

type postsData struct {
	Posts    []store.Post
	Statuses []string
	// Status and ProjectID are the filters ("" = all; ProjectID "all" = every project).
	Status    string
	ProjectID string
	// Next is the URL of the next page ("" on the last); First that of the first page when
	// this one is not it.
	Next, First string
}

// postsPage is the post history, newest first, filtered by project and status, paged by the
// store's cursor.
func (h *Handler) postsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	p, err := h.pageFor(r, s, "Posts", "posts", nil)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := postsData{Statuses: postStatuses, Status: q.Get("status"), ProjectID: q.Get("project")}
	var f apierr.Fields
	filter := store.PostFilter{Status: d.Status, Limit: postsPerPage + 1}
	if d.Status != "" && !slices.Contains(postStatuses, d.Status) {
		f.Addf("status", "must be one of %s", strings.Join(postStatuses, ", "))
	}
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
	if c := q.Get("cursor"); c != "" {
		t, id, ok := store.DecodeCursor(c)
		if !ok {
			f.Add("cursor", "is not a page this server handed out")
		}
		filter.AfterTime, filter.AfterID = &t, id
		d.First = postsURL(d.ProjectID, d.Status, "")
	}
	if err := f.Err(); err != nil {
		return err
	}
	posts, err := h.o.Store.ListPosts(r.Context(), s.AccountID, filter)
	if err != nil {
		return err
	}
	posts, next := store.Page(posts, postsPerPage, func(p store.Post) (time.Time, string) { return p.CreatedAt, p.ID })
	d.Posts = posts
	if next != nil {
		d.Next = postsURL(d.ProjectID, d.Status, *next)
	}
	p.Data = d
	h.render(w, r, http.StatusOK, "posts", p)
	return nil
}

func postsURL(project, status, cursor string) string {
	v := url.Values{}
	if project != "" {
		v.Set("project", project)
	}
	if status != "" {
		v.Set("status", status)
	}
	if cursor != "" {
		v.Set("cursor", cursor)
	}
	if len(v) == 0 {
		return "/posts"
	}
	return "/posts?" + v.Encode()
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
	"rescheduled":     "The post is rescheduled.",
	"replied":         "Reply posted.",
}

func (h *Handler) ownPost(r *http.Request, s *session) (store.Post, error) {
	id := r.PathValue("id")
	if !store.ValidID(id) {
		return store.Post{}, apierr.NotFound("post")
	}
	p, err := h.o.Store.GetPost(r.Context(), s.AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return p, apierr.NotFound("post")
	}
	return p, err
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
