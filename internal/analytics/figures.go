package analytics

import (
	"context"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
)

// Figures reads the stored figures for both front doors (GET /api/v1/analytics/overview and
// /analytics/metrics, the dashboard's analytics page): the filters are checked once, in the
// API's words. It never asks the platforms (that is the Syncer's job), so it serves on a server
// that cannot read them.
type Figures struct {
	Store *store.Store
}

// ItemQuery asks for one page of an account's per-destination figures, newest published first.
type ItemQuery struct {
	// Filter selects the destinations (see CheckFilter; the project is checked by the caller:
	// each front door has its own way to name one).
	Filter store.AnalyticsFilter
	// Limit is the page's size; Cursor where the previous page ended ("" for the first).
	Limit  int
	Cursor string
}

// CheckFilter adds to f what is wrong with filter's post and platform ("all" or "" for every
// one), and answers the filter the store reads.
func (a Figures) CheckFilter(f *apierr.Fields, filter store.AnalyticsFilter) store.AnalyticsFilter {
	if filter.PostID != "" && !store.ValidID(filter.PostID) {
		f.Add("postId", "must be a UUID")
	}
	if filter.Platform == "all" {
		filter.Platform = ""
	}
	if filter.Platform != "" && !platform.Valid(filter.Platform) {
		f.Add("platform", "is not a platform reelay knows")
	}
	return filter
}

// CheckList adds to f what is wrong with q's filter (CheckFilter) and cursor.
func (a Figures) CheckList(f *apierr.Fields, q ItemQuery) {
	a.CheckFilter(f, q.Filter)
	store.ReadCursor(f, q.Cursor)
}

// checked answers filter as CheckFilter reads it, or its refusal.
func (a Figures) checked(filter store.AnalyticsFilter) (store.AnalyticsFilter, error) {
	var f apierr.Fields
	filter = a.CheckFilter(&f, filter)
	return filter, f.Err()
}

// Totals checks filter (CheckFilter) and answers the account's figures summed per platform,
// and how many posts they come from.
func (a Figures) Totals(ctx context.Context, accountID string, filter store.AnalyticsFilter) ([]store.PlatformTotals, int, error) {
	filter, err := a.checked(filter)
	if err != nil {
		return nil, 0, err
	}
	return a.Store.AnalyticsTotals(ctx, accountID, filter)
}

// ByDay checks filter (CheckFilter) and answers the account's figures summed by the day their
// destinations were published, oldest first.
func (a Figures) ByDay(ctx context.Context, accountID string, filter store.AnalyticsFilter) ([]store.DayTotals, error) {
	filter, err := a.checked(filter)
	if err != nil {
		return nil, err
	}
	return a.Store.AnalyticsByDay(ctx, accountID, filter)
}

// List checks q (CheckList) and answers its page of per-destination figures, and the cursor
// of the next page (nil on the last).
func (a Figures) List(ctx context.Context, accountID string, q ItemQuery) ([]store.ItemFigures, *string, error) {
	var f apierr.Fields
	filter := a.CheckFilter(&f, q.Filter)
	afterTime, afterID := store.ReadCursor(&f, q.Cursor)
	if err := f.Err(); err != nil {
		return nil, nil, err
	}
	items, err := a.Store.ListItemFigures(ctx, accountID, filter, q.Limit+1, afterTime, afterID)
	if err != nil {
		return nil, nil, err
	}
	items, next := store.Page(items, q.Limit, func(it store.ItemFigures) (time.Time, string) { return it.PublishedAt, it.DestinationID })
	return items, next, nil
}

// Samples answers the time series of some of the account's destinations, oldest first, by
// destination id.
func (a Figures) Samples(ctx context.Context, accountID string, destinationIDs []string) (map[string][]store.Sample, error) {
	return a.Store.MetricSamples(ctx, accountID, destinationIDs)
}
