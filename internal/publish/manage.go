package publish

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

// The changes a caller can make to a post after submitting it: cancel or edit one that has not
// fired, retry the failed destinations of one that has. The HTTP API and the web dashboard both
// call these, so that both refuse the same things with the same errors.

// errNotScheduled is the 409 of an edit or cancel that came too late.
func errNotScheduled(action string) error {
	return apierr.Newf(http.StatusConflict, apierr.CodeInvalidState,
		"only a scheduled post that has not fired can be %s; read its status with GET /posts/{id}", action)
}

// Cancel cancels one of the account's scheduled posts that has not fired (its allowance is
// refunded by the store).
func Cancel(ctx context.Context, st *store.Store, accountID, postID string) (store.Post, error) {
	p, err := st.CancelPost(ctx, accountID, postID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, apierr.NotFound("post")
	case errors.Is(err, store.ErrConflict):
		return p, errNotScheduled("canceled")
	}
	return p, err
}

// Retry sends the failed destinations of one of the account's posts again (never the published
// ones), queueing their jobs in the same transaction.
func Retry(ctx context.Context, st *store.Store, q Enqueuer, accountID, postID string) (store.Post, error) {
	p, err := st.RetryPost(ctx, accountID, postID, func(tx *store.Tx, p store.Post) error {
		return EnqueueDestinations(ctx, q, tx, p)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, apierr.NotFound("post")
	case errors.Is(err, store.ErrConflict):
		return p, apierr.New(http.StatusConflict, apierr.CodeInvalidState,
			"this post has no failed destination to retry; published destinations are never sent again")
	case errors.Is(err, store.ErrAccountSuspended):
		return p, apierr.New(http.StatusForbidden, apierr.CodeAccountSuspended, "this account is suspended; contact the operator of this server")
	case errors.Is(err, store.ErrMediaPurged):
		return p, apierr.New(http.StatusConflict, apierr.CodeInvalidState,
			"this post's video is no longer stored (media are deleted some time after their posts settle); publish it again")
	}
	return p, err
}

// Change is an edit of a post that has not fired: each non-nil field replaces the stored one.
type Change struct {
	ScheduledFor *string
	Title        *string
	Caption      *string
	PlatformObjects
}

// Update applies c to one of the account's scheduled posts that has not fired, checked as a new
// request would be, and queues its jobs again for the (possibly new) time.
func Update(ctx context.Context, st *store.Store, q Enqueuer, accountID, postID string, c Change) (store.Post, error) {
	p, err := st.UpdatePost(ctx, accountID, postID, func(p *store.Post) error {
		req, err := loadRequest(p.Request)
		if err != nil {
			return err
		}
		if c.Title != nil {
			req.Title = *c.Title
		}
		if c.Caption != nil {
			req.Caption = *c.Caption
		}
		if c.ScheduledFor != nil {
			req.ScheduledFor = *c.ScheduledFor
		}
		req.PlatformObjects.Merge(c.PlatformObjects)
		video, err := st.GetMedia(ctx, p.VideoSHA256)
		if err != nil {
			return err
		}
		return Edit(&req, p, video, time.Now())
	}, func(tx *store.Tx, p store.Post) error {
		return EnqueueDestinations(ctx, q, tx, p)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return p, apierr.NotFound("post")
	case errors.Is(err, store.ErrConflict):
		return p, errNotScheduled("changed")
	}
	return p, err
}
