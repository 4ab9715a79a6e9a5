// Package inbox keeps the comments on published items: it reads them from each platform into
// the database (deduplicated by the platform's id) and posts replies on the origin platform.
package inbox

import (
	"context"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// Source reads the comments on a channel's published item and answers them. Providers of
// platforms with a comments API implement it. Errors are *publish.Error values.
type Source interface {
	// Comments returns the item's comments, replies included (each with its ParentID), newest
	// first or in any order, as many as the platform answers in a bounded number of calls.
	Comments(ctx context.Context, ch provider.Channel, itemID string) ([]Comment, error)
	// Reply posts text as the channel in answer to the comment to on the item itemID, and
	// returns the reply as the platform stored it.
	Reply(ctx context.Context, ch provider.Channel, itemID string, to Comment, text string) (Comment, error)
}

// Comment is a comment as a platform gives it.
type Comment struct {
	// ID is the platform's id of the comment (a Bluesky at:// URI, a Reddit t1_ fullname, ...).
	ID string
	// ParentID is the platform id of the comment this one answers; "" for a comment on the
	// item itself.
	ParentID string
	// Author is the commenter's name as the platform shows it (handle or display name).
	Author string
	Text   string
	// CreatedAt is when the platform says the comment was written.
	CreatedAt time.Time
	// LikeCount is nil where the platform does not give it.
	LikeCount *int64
	// Own reports a comment the channel itself wrote (a reply posted through reelay or
	// elsewhere).
	Own bool
}
