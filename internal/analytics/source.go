// Package analytics keeps the figures of published items: it asks each platform for them
// (Syncer), stores them per destination as a time series with nullable columns, and answers
// totals and breakdowns from what is stored.
package analytics

import (
	"context"

	"github.com/reelay/reelay/internal/provider"
)

// Source reads a platform's current figures for items one channel published. Providers of
// platforms with an analytics API implement it, batching ids where the platform allows (TikTok
// 20 a call, Bluesky 25, YouTube 50, Reddit 100).
//
// The answer is keyed by item id (the destination's external_id). An id missing from it has
// no figures on the platform (deleted, or not yet visible); it is not an error. An error means
// a call failed: figures read before it are still in the map, and are kept. Errors are
// *publish.Error values, so that a rate limit carries the platform's Retry-After.
type Source interface {
	Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]Metrics, error)
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
