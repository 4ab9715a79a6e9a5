package provider

import (
	"context"
	"time"
)

// What a provider can do besides publishing. Each is optional: reelay finds a provider's
// abilities by asking whether it implements these interfaces, and each provider package
// asserts at compile time the ones it means to implement.

// Identifier tells whose credentials these are on a platform: a token-based channel is
// verified that way before it is stored, and an OAuth channel named that way after the code
// exchange.
type Identifier interface {
	Identify(ctx context.Context, baseURL string, credentials map[string]string) (Identity, error)
}

// OptionsReader reads a channel's live publish options (its boards, its playlists, ...).
type OptionsReader interface {
	Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error)
}

// SubredditOptionsReader reads one subreddit's requirements and flair (Reddit), asked for with
// ?subreddit= on the options endpoint.
type SubredditOptionsReader interface {
	SubredditOptions(ctx context.Context, baseURL string, credentials map[string]string, subreddit string) (map[string]any, error)
}

// MetricsSource reads a platform's current figures for items one channel published. Providers
// of platforms with an analytics API implement it, batching ids where the platform allows
// (TikTok 20 a call, Bluesky 25, YouTube 50, Reddit 100).
//
// The answer is keyed by item id (the destination's external_id). An id missing from it has
// no figures on the platform (deleted, or not yet visible); it is not an error. An error means
// a call failed: figures read before it are still in the map, and are kept. Errors are *Error
// values, so that a rate limit carries the platform's Retry-After.
type MetricsSource interface {
	Metrics(ctx context.Context, ch Channel, itemIDs []string) (map[string]Metrics, error)
}

// Metrics is what a platform says about one item at one moment. A nil field is a figure the
// platform does not give (or did not give this time): it is stored as null and never summed
// as zero.
type Metrics struct {
	Views       *int64
	Likes       *int64
	Comments    *int64
	Shares      *int64
	Impressions *int64
	Reach       *int64
	Saves       *int64
	// WatchTimeSeconds is the total time the item was watched, in seconds.
	WatchTimeSeconds *int64
}

// N returns a pointer to n, for filling Metrics.
func N(n int64) *int64 { return &n }

// CommentSource reads the comments on a channel's published item and answers them. Providers
// of platforms with a comments API implement it. Errors are *Error values.
type CommentSource interface {
	// Comments returns the item's comments, replies included (each with its ParentID), newest
	// first or in any order, as many as the platform answers in a bounded number of calls.
	Comments(ctx context.Context, ch Channel, itemID string) ([]Comment, error)
	// Reply posts text as the channel in answer to the comment to on the item itemID, and
	// returns the reply as the platform stored it.
	Reply(ctx context.Context, ch Channel, itemID string, to Comment, text string) (Comment, error)
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

// Closer is a provider that holds what must be released when the process stops (sessions,
// background work).
type Closer interface {
	Close()
}

// Checker asks a platform, with harmless read calls only, whether a channel works: its token,
// the scopes publishing, figures and comments need, the API version reelay speaks, and the
// account's right to publish video. It answers one Check per question, in that order (the
// Check* names); a question the platform cannot be asked is a skipped line saying why.
type Checker interface {
	Check(ctx context.Context, ch Channel) []Check
}
