package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/inbox"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

const commentsPerPage = 25

type inboxData struct {
	Comments []inboxComment
	// Platform and PostID are the filters ("" = all); Unanswered keeps the comments the
	// channel has not replied to.
	Platform   string
	PostID     string
	Unanswered bool
	// AllPosts is the list with the same filters on every post.
	AllPosts  string
	Platforms []string
	Next      string
	First     string
	Notice    string
	// Query is the filters' query string, for the forms to come back to the same list.
	Query string
	CSRF  string
	// ReplyKey is this page's: each reply form sends it, and the reply's idempotency key is it
	// and the comment's id, so that a form submitted twice posts one reply.
	ReplyKey string
}

type inboxComment struct {
	store.Comment
	// CanReply: the platform takes replies; ReplyMax and ReplyUnit are its limit.
	CanReply  bool
	ReplyMax  int
	ReplyUnit string
	// Typed and Error are a refused reply's text and why, shown again beside its field.
	Typed string
	Error string
}

// inboxPage lists the comments read from the platforms on the current project's posts, newest
// first, filtered by platform (and post) and to those not replied to yet, each with a reply form
// where its platform takes one.
func (h *Handler) inboxPage(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.renderInbox(w, r, s, http.StatusOK, "", "", "")
}

func (h *Handler) renderInbox(w http.ResponseWriter, r *http.Request, s *session, status int, failedID, typed, message string) error {
	p, err := h.pageFor(r, s, "Inbox", "inbox", nil)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := inboxData{Platform: q.Get("platform"), PostID: q.Get("post"), Platforms: platform.All, CSRF: s.CSRF(), ReplyKey: newToken(),
		Notice: notices[q.Get("done")]}
	var f apierr.Fields
	d.Unanswered = q.Get("unanswered") == "true"
	if q.Get("done") == "refreshed" {
		switch n := q.Get("added"); n {
		case "0":
			d.Notice = "Read the platforms: no new comments."
		case "1":
			d.Notice = "Read the platforms: 1 new comment."
		default:
			d.Notice = fmt.Sprintf("Read the platforms: %d new comments.", atoiOr(n, 0))
		}
	}
	cq := inbox.CommentQuery{Filter: store.CommentFilter{Platform: d.Platform, PostID: d.PostID, ProjectID: p.Project.ID},
		Unanswered: q.Get("unanswered"), Limit: commentsPerPage, Cursor: q.Get("cursor")}
	keep := url.Values{}
	if d.Platform != "" {
		keep.Set("platform", d.Platform)
	}
	if d.Unanswered {
		keep.Set("unanswered", "true")
	}
	d.AllPosts = "/inbox"
	if len(keep) > 0 {
		d.AllPosts += "?" + keep.Encode()
	}
	if d.PostID != "" {
		keep.Set("post", d.PostID)
	}
	d.Query = keep.Encode()
	if cq.Cursor != "" {
		d.First = "/inbox?" + d.Query
	}
	if h.comments.CheckList(&f, cq); len(f) > 0 {
		return f.Err()
	}
	comments, next, err := h.comments.List(r.Context(), s.AccountID, cq)
	if err != nil {
		return err
	}
	if next != nil {
		v := url.Values{}
		for k, vs := range keep {
			v[k] = vs
		}
		v.Set("cursor", *next)
		d.Next = "/inbox?" + v.Encode()
	}
	for _, c := range comments {
		caps, _ := registry.CapabilitiesOf(c.Platform)
		ic := inboxComment{Comment: c, CanReply: caps.Replies && !c.Own, ReplyMax: caps.ReplyText.Max, ReplyUnit: caps.ReplyText.Unit}
		if c.ID == failedID {
			ic.Typed, ic.Error = typed, message
		}
		d.Comments = append(d.Comments, ic)
	}
	p.Data = d
	h.render(w, r, status, "inbox", p)
	return nil
}

// refreshInbox reads new comments from the platforms now (bounded like the API's refresh=true;
// the periodic sync reads them anyway), then shows the list again.
func (h *Handler) refreshInbox(w http.ResponseWriter, r *http.Request, s *session) error {
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	if h.o.Inbox == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reading comments is not available on this server")
	}
	ctx, cancel := context.WithTimeout(r.Context(), analytics.OnDemandTimeout)
	defer cancel()
	before, err := h.o.Store.ListComments(r.Context(), s.AccountID, store.CommentFilter{ProjectID: p.Project.ID})
	if err != nil {
		return err
	}
	if _, err := h.o.Inbox.Sync(ctx, store.AudienceFilter{AccountID: s.AccountID, ProjectID: p.Project.ID,
		Limit: analytics.OnDemandDestinations}); err != nil {
		return err
	}
	after, err := h.o.Store.ListComments(r.Context(), s.AccountID, store.CommentFilter{ProjectID: p.Project.ID})
	if err != nil {
		return err
	}
	http.Redirect(w, r, fmt.Sprintf("/inbox?done=refreshed&added=%d", max(0, len(after)-len(before))), http.StatusSeeOther)
	return nil
}

// replyToComment posts a reply on the comment's platform (inbox.Service.Reply, as POST
// /api/v1/inbox/reply does) and comes back to the list; a refused reply is shown beside its
// field, with what was typed.
func (h *Handler) replyToComment(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.Inbox == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "replying is not available on this server")
	}
	id, text := r.PathValue("id"), r.PostFormValue("reply_text")
	c, err := h.o.Store.GetComment(r.Context(), s.AccountID, id)
	if errors.Is(err, store.ErrNotFound) || !store.ValidID(id) {
		return apierr.NotFound("comment")
	}
	if err != nil {
		return err
	}
	back := "/inbox"
	if q := r.PostFormValue("back"); q != "" {
		if v, err := url.ParseQuery(q); err == nil {
			back += "?" + v.Encode()
			r.URL.RawQuery = v.Encode()
		}
	}
	key := r.PostFormValue("reply_key")
	if key != "" && !idempotencyKeyPattern.MatchString(key) {
		return apierr.Field("reply_key", "is not a key this page made; reload the page")
	}
	if key != "" {
		key = "web-reply:" + key + ":" + c.ID
	}
	_, _, err = h.o.Inbox.Reply(r.Context(), s.AccountID, c.ID, c.Platform, text, key)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Status < 500 && ae.Status != http.StatusNotFound {
		msg := ae.Message
		for _, m := range ae.Fields {
			msg = m
		}
		return h.renderInbox(w, r, s, ae.Status, c.ID, text, msg)
	}
	if err != nil {
		return err
	}
	sep := "?"
	if len(back) > len("/inbox") {
		sep = "&"
	}
	http.Redirect(w, r, back+sep+"done=replied#comment-"+c.ID, http.StatusSeeOther)
	return nil
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}
