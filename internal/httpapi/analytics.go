package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

// figuresJSON are a set of figures as the API shows them: null where no destination gave the
// figure, never zero in its place.
type figuresJSON struct {
	Views            *int64 `json:"views"`
	Likes            *int64 `json:"likes"`
	Comments         *int64 `json:"comments"`
	Shares           *int64 `json:"shares"`
	Impressions      *int64 `json:"impressions"`
	Reach            *int64 `json:"reach"`
	Saves            *int64 `json:"saves"`
	WatchTimeSeconds *int64 `json:"watch_time_seconds"`
}

func toFiguresJSON(f store.Figures) figuresJSON {
	return figuresJSON{
		Views: f.Views, Likes: f.Likes, Comments: f.Comments, Shares: f.Shares, Impressions: f.Impressions,
		Reach: f.Reach, Saves: f.Saves, WatchTimeSeconds: f.WatchTimeSeconds,
	}
}

// breakdownJSON is one platform's entry in platformBreakdown (camelCase, as the overview's
// top-level members the contract names: docs/CONTRACT.md, Analytics and inbox).
type breakdownJSON struct {
	Posts            int    `json:"posts"`
	Destinations     int    `json:"destinations"`
	Views            *int64 `json:"views"`
	Likes            *int64 `json:"likes"`
	Comments         *int64 `json:"comments"`
	Shares           *int64 `json:"shares"`
	Impressions      *int64 `json:"impressions"`
	Reach            *int64 `json:"reach"`
	Saves            *int64 `json:"saves"`
	WatchTimeSeconds *int64 `json:"watchTimeSeconds"`
}

// overviewJSON is GET /analytics/overview's answer.
type overviewJSON struct {
	Success               bool                     `json:"success"`
	TotalViews            *int64                   `json:"totalViews"`
	TotalLikes            *int64                   `json:"totalLikes"`
	TotalComments         *int64                   `json:"totalComments"`
	TotalImpressions      *int64                   `json:"totalImpressions"`
	TotalShares           *int64                   `json:"totalShares"`
	TotalReach            *int64                   `json:"totalReach"`
	TotalSaves            *int64                   `json:"totalSaves"`
	TotalWatchTimeSeconds *int64                   `json:"totalWatchTimeSeconds"`
	TotalPosts            int                      `json:"totalPosts"`
	PlatformBreakdown     map[string]breakdownJSON `json:"platformBreakdown"`
	ProjectID             *string                  `json:"projectId"`
	StartDate             *string                  `json:"startDate"`
	EndDate               *string                  `json:"endDate"`
}

// analyticsOverview answers totals of the stored figures; it never asks the platforms.
func (s *Server) analyticsOverview(w http.ResponseWriter, r *http.Request) error {
	f, echo, err := s.analyticsFilter(r)
	if err != nil {
		return err
	}
	perPlatform, posts, err := s.figures.Totals(r.Context(), mustPrincipal(r).AccountID, f)
	if err != nil {
		return err
	}
	out := overviewJSON{Success: true, TotalPosts: posts, PlatformBreakdown: map[string]breakdownJSON{},
		ProjectID: echo.projectID, StartDate: echo.startDate, EndDate: echo.endDate}
	var total store.Figures
	for _, p := range perPlatform {
		fig := p.Figures
		total.Add(fig)
		out.PlatformBreakdown[p.Platform] = breakdownJSON{
			Posts: p.Posts, Destinations: p.Destinations, Views: fig.Views, Likes: fig.Likes, Comments: fig.Comments,
			Shares: fig.Shares, Impressions: fig.Impressions, Reach: fig.Reach, Saves: fig.Saves, WatchTimeSeconds: fig.WatchTimeSeconds,
		}
	}
	out.TotalViews, out.TotalLikes, out.TotalComments, out.TotalShares = total.Views, total.Likes, total.Comments, total.Shares
	out.TotalImpressions, out.TotalReach, out.TotalSaves, out.TotalWatchTimeSeconds = total.Impressions, total.Reach, total.Saves, total.WatchTimeSeconds
	writeJSON(w, http.StatusOK, out)
	return nil
}

// filterEcho is what the overview repeats of its filters (null when not given).
type filterEcho struct {
	projectID, startDate, endDate *string
}

// analyticsFilter reads the filters the overview and the listing share: projectId, postId,
// platform, startDate and endDate (each also in snake_case). Post and platform are checked by
// analytics.Figures, as for the dashboard; the project and the dates are the API's own. Dates
// are whole UTC days, both ends included, and select destinations by when they were published.
func (s *Server) analyticsFilter(r *http.Request) (store.AnalyticsFilter, filterEcho, error) {
	q := r.URL.Query()
	var f store.AnalyticsFilter
	var echo filterEcho
	var fields apierr.Fields
	f.ProjectID = firstParam(q, "projectId", "project_id")
	f.PostID = firstParam(q, "postId", "post_id")
	f.Platform = q.Get("platform")
	if f.ProjectID != "" {
		if !store.ValidID(f.ProjectID) {
			fields.Add("projectId", "must be a UUID")
		}
		echo.projectID = &f.ProjectID
	}
	f = s.figures.CheckFilter(&fields, f)
	start, startOK := parseDay(q, &fields, "startDate", "start_date")
	end, endOK := parseDay(q, &fields, "endDate", "end_date")
	if startOK && endOK && end.Before(start) {
		fields.Add("endDate", "is before startDate")
	}
	if err := fields.Err(); err != nil {
		return f, echo, err
	}
	if startOK {
		f.From = &start
		d := start.Format(time.DateOnly)
		echo.startDate = &d
	}
	if endOK {
		until := end.AddDate(0, 0, 1)
		f.Until = &until
		d := end.Format(time.DateOnly)
		echo.endDate = &d
	}
	if f.ProjectID != "" {
		if _, err := s.ownProject(r, f.ProjectID); err != nil {
			return f, echo, err
		}
	}
	return f, echo, nil
}

// parseDay reads a YYYY-MM-DD query parameter under any of its names; ok is false when it is
// absent or invalid (recorded in fields).
func parseDay(q url.Values, fields *apierr.Fields, names ...string) (time.Time, bool) {
	v := firstParam(q, names...)
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		fields.Add(names[0], "must be a date as YYYY-MM-DD")
		return time.Time{}, false
	}
	return t, true
}

// firstParam is the first non-empty value among a parameter's names.
func firstParam(q url.Values, names ...string) string {
	for _, n := range names {
		if v := q.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// itemFiguresJSON is one destination's entry in GET /analytics/metrics.
type itemFiguresJSON struct {
	DestinationID string     `json:"destination_id"`
	PostID        string     `json:"post_id"`
	ProjectID     string     `json:"project_id"`
	ChannelID     string     `json:"channel_id"`
	Platform      string     `json:"platform"`
	ExternalID    string     `json:"external_id"`
	URL           string     `json:"url"`
	PublishedAt   time.Time  `json:"published_at"`
	SyncedAt      *time.Time `json:"synced_at"`
	SyncError     string     `json:"sync_error,omitempty"`
	figuresJSON
	Samples []sampleJSON `json:"samples,omitempty"`
}

type sampleJSON struct {
	At time.Time `json:"at"`
	figuresJSON
}

// analyticsMetrics lists per-destination figures for the overview's filters, newest first;
// samples=true adds each destination's time series.
func (s *Server) analyticsMetrics(w http.ResponseWriter, r *http.Request) error {
	f, _, err := s.analyticsFilter(r)
	if err != nil {
		return err
	}
	limit, err := limitQuery(r, 20, 100)
	if err != nil {
		return err
	}
	accountID := mustPrincipal(r).AccountID
	items, next, err := s.figures.List(r.Context(), accountID, analytics.ItemQuery{Filter: f, Limit: limit, Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	var samples map[string][]store.Sample
	if r.URL.Query().Get("samples") == "true" {
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.DestinationID
		}
		if samples, err = s.figures.Samples(r.Context(), accountID, ids); err != nil {
			return err
		}
	}
	out := make([]itemFiguresJSON, len(items))
	for i, it := range items {
		out[i] = itemFiguresJSON{
			DestinationID: it.DestinationID, PostID: it.PostID, ProjectID: it.ProjectID, ChannelID: it.ChannelID,
			Platform: it.Platform, ExternalID: it.ExternalID, URL: it.URL, PublishedAt: it.PublishedAt,
			SyncedAt: it.SyncedAt, SyncError: it.Error, figuresJSON: toFiguresJSON(it.Figures),
		}
		for _, sm := range samples[it.DestinationID] {
			out[i].Samples = append(out[i].Samples, sampleJSON{At: sm.At, figuresJSON: toFiguresJSON(sm.Figures)})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "metrics": out, "next_cursor": next})
	return nil
}

// syncTimeout bounds a sync asked for over the API: what is not read by then is reported
// pending and read by the periodic job.
const syncTimeout = analytics.OnDemandTimeout

// analyticsSync reads figures from the platforms now: all of the caller's published
// destinations, or one post's.
func (s *Server) analyticsSync(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		PostID string `json:"postId"`
	}
	if err := decodeOptionalJSON(w, r, &body); err != nil {
		return err
	}
	accountID := mustPrincipal(r).AccountID
	if body.PostID != "" {
		if _, err := s.posts.Get(r.Context(), accountID, body.PostID); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), syncTimeout)
	defer cancel()
	sum, err := s.analytics.Sync(ctx, store.AudienceFilter{AccountID: accountID, PostID: body.PostID, Limit: maxSyncDestinations})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "synced": sum.Synced, "failed": sum.Failed,
		"unavailable": sum.Unavailable, "pending": sum.Pending, "errors": nonNil(sum.Errors)})
	return nil
}

// maxSyncDestinations bounds one sync asked for over the API: the most recent ones are read.
const maxSyncDestinations = analytics.OnDemandDestinations

// nonNil answers an empty list for nil, so that JSON shows [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
