package client

import (
	"context"
	"iter"
	"time"
)

// A metric is nil when no destination gives it (views on Bluesky, anything on Telegram):
// unavailable, which is not zero. The contract types metrics as numbers, hence float64.

// AnalyticsOverview is the totals of the stored metrics, and each platform's.
type AnalyticsOverview struct {
	TotalViews            *float64 `json:"totalViews"`
	TotalLikes            *float64 `json:"totalLikes"`
	TotalComments         *float64 `json:"totalComments"`
	TotalImpressions      *float64 `json:"totalImpressions"`
	TotalShares           *float64 `json:"totalShares"`
	TotalReach            *float64 `json:"totalReach"`
	TotalSaves            *float64 `json:"totalSaves"`
	TotalWatchTimeSeconds *float64 `json:"totalWatchTimeSeconds"`
	// TotalPosts counts the distinct posts published in the period.
	TotalPosts        int                          `json:"totalPosts"`
	PlatformBreakdown map[Platform]PlatformMetrics `json:"platformBreakdown"`
	// ProjectID, StartDate and EndDate repeat the filters; empty when not given.
	ProjectID string `json:"projectId"`
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate"`
}

// PlatformMetrics are one platform's sums.
type PlatformMetrics struct {
	Posts            int      `json:"posts"`
	Destinations     int      `json:"destinations"`
	Views            *float64 `json:"views"`
	Likes            *float64 `json:"likes"`
	Comments         *float64 `json:"comments"`
	Impressions      *float64 `json:"impressions"`
	Shares           *float64 `json:"shares"`
	Reach            *float64 `json:"reach"`
	Saves            *float64 `json:"saves"`
	WatchTimeSeconds *float64 `json:"watchTimeSeconds"`
}

// AnalyticsParams select the published destinations counted.
type AnalyticsParams struct {
	ProjectID string `query:"projectId"`
	// StartDate and EndDate are UTC days as YYYY-MM-DD, both included, selecting by
	// publication date.
	StartDate string `query:"startDate"`
	EndDate   string `query:"endDate"`
	// Platform is one platform; empty (or "all"): every platform.
	Platform Platform `query:"platform"`
}

// Figures are a destination's metrics, or one reading of them.
type Figures struct {
	Views            *float64 `json:"views"`
	Likes            *float64 `json:"likes"`
	Comments         *float64 `json:"comments"`
	Impressions      *float64 `json:"impressions"`
	Shares           *float64 `json:"shares"`
	Saves            *float64 `json:"saves"`
	Reach            *float64 `json:"reach"`
	WatchTimeSeconds *float64 `json:"watch_time_seconds"`
}

// DestinationMetrics are the latest stored metrics of one published destination.
type DestinationMetrics struct {
	DestinationID string   `json:"destination_id"`
	PostID        string   `json:"post_id"`
	ProjectID     string   `json:"project_id"`
	ExternalID    string   `json:"external_id"`
	ChannelID     string   `json:"channel_id"`
	Platform      Platform `json:"platform"`
	URL           string   `json:"url"`
	// PublishedAt and SyncedAt (when the figures were read) are nil when unknown.
	PublishedAt *time.Time `json:"published_at"`
	Figures
	SyncedAt *time.Time `json:"synced_at"`
	// SyncError is why the last reading failed, when it did.
	SyncError string `json:"sync_error"`
	// Samples, with MetricsParams.Samples, are the readings that changed the figures, oldest
	// first.
	Samples []MetricSample `json:"samples"`
}

// MetricSample is one reading of a destination's figures.
type MetricSample struct {
	At time.Time `json:"at"`
	Figures
}

// MetricsList is a page of destination metrics, most recently published first.
type MetricsList struct {
	Metrics    []DestinationMetrics `json:"metrics"`
	NextCursor string               `json:"next_cursor"`
}

// MetricsParams select and page destination metrics.
type MetricsParams struct {
	AnalyticsParams
	PostID string `query:"postId"`
	// Samples adds each destination's time series.
	Samples bool `query:"samples"`
	ListParams
}

// SyncRequest narrows SyncAnalytics to one post.
type SyncRequest struct {
	PostID string `json:"postId,omitempty"`
}

// SyncSummary says what a synchronisation read.
type SyncSummary struct {
	// Synced destinations were read; Failed ones were not (see Errors); Unavailable ones are
	// on platforms without the API or disconnected channels; Pending ones ran out of time and
	// are left to the periodic sync.
	Synced      int         `json:"synced"`
	Failed      int         `json:"failed"`
	Unavailable int         `json:"unavailable"`
	Pending     int         `json:"pending"`
	Errors      []SyncError `json:"errors"`
}

// SyncError is a channel whose reading failed.
type SyncError struct {
	Platform  Platform `json:"platform"`
	ChannelID string   `json:"channel_id"`
	// Category is as a destination's ErrorCategory (rate_limited, auth_expired, ...).
	Category string `json:"category"`
	Message  string `json:"message"`
	// Destinations of the channel left unread.
	Destinations int `json:"destinations"`
}

// AnalyticsOverview answers totals of the stored metrics; it never asks the platforms (see
// SyncAnalytics).
func (c *Client) AnalyticsOverview(ctx context.Context, params AnalyticsParams) (*AnalyticsOverview, error) {
	var out AnalyticsOverview
	if err := c.get(ctx, "/analytics/overview", encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AnalyticsMetrics answers a page of per-destination metrics.
func (c *Client) AnalyticsMetrics(ctx context.Context, params MetricsParams) (*MetricsList, error) {
	var out MetricsList
	if err := c.get(ctx, "/analytics/metrics", encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllAnalyticsMetrics walks every page of AnalyticsMetrics.
func (c *Client) AllAnalyticsMetrics(ctx context.Context, params MetricsParams) iter.Seq2[DestinationMetrics, error] {
	return pages(ctx, params.Cursor, func(ctx context.Context, cursor string) ([]DestinationMetrics, string, error) {
		p := params
		p.Cursor = cursor
		l, err := c.AnalyticsMetrics(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return l.Metrics, l.NextCursor, nil
	})
}

// SyncAnalytics reads the metrics of the account's published destinations (or one post's)
// from the platforms now, within 25 s, and stores them.
func (c *Client) SyncAnalytics(ctx context.Context, req SyncRequest) (*SyncSummary, error) {
	var out SyncSummary
	// Reading figures again changes nothing but their freshness: safe to retry.
	cl := &call{method: "POST", path: "/analytics/sync", body: req, safety: idempotent}
	if _, err := c.send(ctx, cl, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
