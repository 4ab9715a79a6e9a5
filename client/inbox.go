package client

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// Comment is an audience comment on a published post, or a reply the channel wrote.
type Comment struct {
	// ID is reelay's id of the comment: pass it to Reply.
	ID        string    `json:"id"`
	Platform  Platform  `json:"platform"`
	Author    string    `json:"author"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	PostID    string    `json:"post_id"`
	ChannelID string    `json:"channel_id"`
	// ParentID is the comment this one answers; empty for a comment on the post.
	ParentID string `json:"parent_id"`
	// LikeCount is nil where the platform does not give it.
	LikeCount *int64 `json:"like_count"`
	// Own: written by the channel itself (a reply sent through reelay, or on the platform).
	Own               bool   `json:"own"`
	PlatformCommentID string `json:"platform_comment_id"`
}

// CommentList is a page of comments, newest first.
type CommentList struct {
	Comments   []Comment `json:"comments"`
	NextCursor string    `json:"next_cursor"`
	// Sync says what ListCommentsParams.Refresh read from the platforms; nil without it.
	Sync *SyncSummary `json:"sync"`
}

// ListCommentsParams filter and page the comments.
type ListCommentsParams struct {
	// Platform is one platform; empty (or "all"): every platform.
	Platform  Platform `query:"platform"`
	ProjectID string   `query:"project_id"`
	PostID    string   `query:"post_id"`
	// Since keeps the comments created at or after this time; zero: all.
	Since time.Time `query:"since"`
	// Unanswered keeps the audience's comments the channel has not replied to.
	Unanswered bool `query:"unanswered"`
	// Refresh reads the selected posts' comments from the platforms first (within 25 s).
	Refresh bool `query:"refresh"`
	ListParams
}

// ReplyRequest answers a comment on its platform, as the channel it was read through.
type ReplyRequest struct {
	CommentID string `json:"commentId"`
	// Platform must be the comment's.
	Platform Platform `json:"platform"`
	// ReplyText must fit the platform's limit (the channel's capabilities, "reply_text").
	ReplyText string `json:"replyText"`
	// IdempotencyKey makes the reply safe to repeat: the same key and request within 24 h
	// answer the reply posted the first time. Empty: Reply makes one for the call.
	IdempotencyKey string `json:"-"`
}

type replyResponse struct {
	Reply Comment `json:"reply"`
}

// ListComments answers a page of comments on the account's published posts.
func (c *Client) ListComments(ctx context.Context, params ListCommentsParams) (*CommentList, error) {
	var out CommentList
	if err := c.get(ctx, "/inbox/comments", encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllComments walks every page of ListComments; Refresh applies to the first page only.
func (c *Client) AllComments(ctx context.Context, params ListCommentsParams) iter.Seq2[Comment, error] {
	return pages(ctx, params.Cursor, func(ctx context.Context, cursor string) ([]Comment, string, error) {
		p := params
		p.Cursor = cursor
		p.Refresh = params.Refresh && cursor == params.Cursor
		l, err := c.ListComments(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return l.Comments, l.NextCursor, nil
	})
}

// Reply publishes a reply to a comment on its platform and answers it as stored. It is
// retried like Publish, under one Idempotency-Key, so a retry cannot post twice: a repeat the
// server already answered gets that reply, and one whose reply may be out without the server
// knowing (the platform did not answer) gets an Error with CodeIdempotencyConflict.
func (c *Client) Reply(ctx context.Context, req ReplyRequest) (*Comment, error) {
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = uuid.NewString()
	}
	cl := &call{method: http.MethodPost, path: "/inbox/reply", body: req, safety: idempotent,
		header: http.Header{"Idempotency-Key": {req.IdempotencyKey}}}
	var out replyResponse
	if _, err := c.send(ctx, cl, &out); err != nil {
		return nil, err
	}
	return &out.Reply, nil
}
