package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/inbox"
	"github.com/reelay/reelay/internal/store"
)

// commentJSON is a Comment as the API shows it: the contract's fields (id, platform, author, text,
// created_at) and where it sits.
type commentJSON struct {
	ID        string    `json:"id"`
	Platform  string    `json:"platform"`
	Author    string    `json:"author"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	PostID    string    `json:"post_id"`
	ChannelID string    `json:"channel_id"`
	// ParentID is reelay's id of the comment this one answers, null for a comment on the post.
	ParentID          *string `json:"parent_id"`
	LikeCount         *int64  `json:"like_count"`
	Own               bool    `json:"own"`
	PlatformCommentID string  `json:"platform_comment_id"`
}

func toCommentJSON(c store.Comment) commentJSON {
	out := commentJSON{
		ID: c.ID, Platform: c.Platform, Author: c.Author, Text: c.Text, CreatedAt: c.CreatedAt, PostID: c.PostID,
		ChannelID: c.ChannelID, LikeCount: c.LikeCount, Own: c.Own, PlatformCommentID: c.PlatformID,
	}
	if c.ParentID != "" {
		out.ParentID = &c.ParentID
	}
	return out
}

// listComments answers the stored comments, newest first; refresh=true reads the platforms
// first (bounded in time, like POST /analytics/sync).
func (s *Server) listComments(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var fields apierr.Fields
	f := store.CommentFilter{
		Platform:  q.Get("platform"),
		ProjectID: firstParam(q, "project_id", "projectId"),
		PostID:    firstParam(q, "post_id", "postId"),
	}
	if f.ProjectID != "" && !store.ValidID(f.ProjectID) {
		fields.Add("project_id", "must be a UUID")
	}
	f.Since = timeQuery(q, &fields, "since")
	refresh := q.Get("refresh")
	if refresh != "" && refresh != "true" && refresh != "false" {
		fields.Add("refresh", "must be true or false")
	}
	limit, err := limitQuery(r, 20, 100)
	if err != nil {
		return err
	}
	cq := inbox.CommentQuery{Filter: f, Unanswered: q.Get("unanswered"), Limit: limit, Cursor: q.Get("cursor")}
	s.comments.CheckList(&fields, cq)
	if err := fields.Err(); err != nil {
		return err
	}
	accountID := mustPrincipal(r).AccountID
	if f.ProjectID != "" {
		if _, err := s.ownProject(r, f.ProjectID); err != nil {
			return err
		}
	}
	body := map[string]any{"success": true}
	if refresh == "true" {
		ctx, cancel := context.WithTimeout(r.Context(), syncTimeout)
		defer cancel()
		af := store.AudienceFilter{AccountID: accountID, ProjectID: f.ProjectID, PostID: f.PostID, Limit: maxSyncDestinations}
		if f.Platform != "" && f.Platform != "all" {
			af.Platforms = []string{f.Platform}
		}
		sum, err := s.inbox.Sync(ctx, af)
		if err != nil {
			return err
		}
		sum.Errors = nonNil(sum.Errors)
		body["sync"] = sum
	}
	comments, next, err := s.comments.List(r.Context(), accountID, cq)
	if err != nil {
		return err
	}
	out := make([]commentJSON, len(comments))
	for i, c := range comments {
		out[i] = toCommentJSON(c)
	}
	body["comments"] = out
	body["next_cursor"] = next
	writeJSON(w, http.StatusOK, body)
	return nil
}

// replyToComment posts a reply on the comment's platform, as the channel the comment was read
// through, and answers the stored reply. An Idempotency-Key makes it safe to repeat.
func (s *Server) replyToComment(w http.ResponseWriter, r *http.Request) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var body struct {
		CommentID string `json:"commentId"`
		Platform  string `json:"platform"`
		ReplyText string `json:"replyText"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return err
	}
	reply, replayed, err := s.inbox.Reply(r.Context(), mustPrincipal(r).AccountID, body.CommentID, body.Platform, body.ReplyText, key)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("comment")
	}
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "reply": toCommentJSON(reply)})
	return nil
}
