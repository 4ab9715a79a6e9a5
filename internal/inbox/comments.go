package inbox

import (
	"context"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
)

// Comments reads the stored comments for both front doors (GET /api/v1/inbox/comments, the
// dashboard's inbox): a list's filters are checked once, in the API's words. It only reads
// the store, so it serves on a server that cannot read the platforms (no Service).
type Comments struct {
	Store *store.Store
}

// CommentQuery asks for one page of an account's comments, newest first.
type CommentQuery struct {
	// Filter selects the comments: project (checked by the caller: each front door has its
	// own way to name one), platform ("all" or "" for every one), post and since. Its
	// Unanswered is set from Unanswered, its Limit and After from Limit and Cursor.
	Filter store.CommentFilter
	// Unanswered is the parameter as sent: "true" keeps the comments not replied to, "" or
	// "false" keeps them all.
	Unanswered string
	// Limit is the page's size; Cursor where the previous page ended ("" for the first).
	Limit  int
	Cursor string
}

// CheckList adds to f what is wrong with q's platform, post, unanswered and cursor.
func (c Comments) CheckList(f *apierr.Fields, q CommentQuery) {
	c.pageFilter(f, q)
}

// pageFilter checks q and answers the store's filter for its page.
func (c Comments) pageFilter(f *apierr.Fields, q CommentQuery) store.CommentFilter {
	filter := q.Filter
	if filter.Platform == "all" {
		filter.Platform = ""
	}
	if filter.Platform != "" && !platform.Valid(filter.Platform) {
		f.Add("platform", "must be all or a platform reelay knows")
	}
	if filter.PostID != "" && !store.ValidID(filter.PostID) {
		f.Add("post_id", "must be a UUID")
	}
	switch q.Unanswered {
	case "", "false":
		filter.Unanswered = false
	case "true":
		filter.Unanswered = true
	default:
		f.Add("unanswered", "must be true or false")
	}
	filter.Limit = q.Limit + 1
	filter.AfterTime, filter.AfterID = store.ReadCursor(f, q.Cursor)
	return filter
}

// List checks q (CheckList) and answers its page of the account's comments, and the cursor of
// the next page (nil on the last).
func (c Comments) List(ctx context.Context, accountID string, q CommentQuery) ([]store.Comment, *string, error) {
	var f apierr.Fields
	filter := c.pageFilter(&f, q)
	if err := f.Err(); err != nil {
		return nil, nil, err
	}
	comments, err := c.Store.ListComments(ctx, accountID, filter)
	if err != nil {
		return nil, nil, err
	}
	comments, next := store.Page(comments, q.Limit, func(c store.Comment) (time.Time, string) { return c.CreatedAt, c.ID })
	return comments, next, nil
}
