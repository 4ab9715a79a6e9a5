package publish

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
)

// Posts reads the post history for both front doors (GET /api/v1/posts and /posts/{id}, the
// dashboard's posts pages): a list's filters are checked once, and a post the account does not
// have is refused the same way by both.
type Posts struct {
	Store *store.Store
}

// PostStatuses are the statuses a post list filters by.
var PostStatuses = []string{store.PostScheduled, store.PostProcessing, store.PostPublished,
	store.PostPartiallyPublished, store.PostFailed, store.PostCanceled}

// PostQuery asks for one page of an account's posts, newest first.
type PostQuery struct {
	// Filter selects the posts: project (checked by the caller: each front door has its own
	// way to name one), status, platform ("all" or "" for every one) and time ranges. Its
	// Limit and After are set from Limit and Cursor.
	Filter store.PostFilter
	// Limit is the page's size; Cursor where the previous page ended ("" for the first).
	Limit  int
	Cursor string
}

// CheckList adds to f what is wrong with q's status, platform and cursor.
func (p Posts) CheckList(f *apierr.Fields, q PostQuery) {
	p.pageFilter(f, q)
}

// pageFilter checks q and answers the store's filter for its page.
func (p Posts) pageFilter(f *apierr.Fields, q PostQuery) store.PostFilter {
	filter := q.Filter
	if filter.Status != "" && !slices.Contains(PostStatuses, filter.Status) {
		f.Addf("status", "must be one of %s", strings.Join(PostStatuses, ", "))
	}
	if filter.Platform == "all" {
		filter.Platform = ""
	}
	if filter.Platform != "" && !platform.Valid(filter.Platform) {
		f.Add("platform", "must be all or a platform reelay knows")
	}
	filter.Limit = q.Limit + 1
	filter.AfterTime, filter.AfterID = store.ReadCursor(f, q.Cursor)
	return filter
}

// List checks q (CheckList) and answers its page of the account's posts, and the cursor of
// the next page (nil on the last).
func (p Posts) List(ctx context.Context, accountID string, q PostQuery) ([]store.Post, *string, error) {
	var f apierr.Fields
	filter := p.pageFilter(&f, q)
	if err := f.Err(); err != nil {
		return nil, nil, err
	}
	posts, err := p.Store.ListPosts(ctx, accountID, filter)
	if err != nil {
		return nil, nil, err
	}
	posts, next := store.Page(posts, q.Limit, func(p store.Post) (time.Time, string) { return p.CreatedAt, p.ID })
	return posts, next, nil
}

// Get is one of the account's posts with its destinations.
func (p Posts) Get(ctx context.Context, accountID, id string) (store.Post, error) {
	post, err := p.Store.GetPost(ctx, accountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return post, apierr.NotFound("post")
	}
	return post, err
}
