package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// AnalyticsConfig is the overview scenario: Items published destinations with figures stored
// directly in the database (publishing that many through the API would take the benchmark's
// whole budget), then GET /api/v1/analytics/overview loaded the way `bench api` loads a path.
type AnalyticsConfig struct {
	URL, Key    string
	Items       int
	Concurrency int
	Duration    time.Duration
	Warmup      time.Duration
}

// AnalyticsResult is the overview scenario's outcome.
type AnalyticsResult struct {
	Scenario string `json:"scenario"`
	Items    int    `json:"items"`
	Samples  int    `json:"samples"`
	Result
	Targets Targets `json:"targets"`
}

// Summary is the line printed on stderr.
func (r AnalyticsResult) Summary() string {
	return fmt.Sprintf("analytics: GET /api/v1/analytics/overview over %d stored items (%d samples): %.0f req/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms, %d requests, %d errors",
		r.Items, r.Samples, r.RPS, r.P50ms, r.P90ms, r.P99ms, r.MaxMs, r.Requests, r.Errors)
}

// OverviewPaths are the overviews the scenario asks for, in turn: everything, one project, a
// thirty-day window, one platform, and a window of one project.
func OverviewPaths(projectID string, now time.Time) []string {
	day := func(d int) string { return now.AddDate(0, 0, d).Format(time.DateOnly) }
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return "/api/v1/analytics/overview?" + v.Encode()
	}
	return []string{
		"/api/v1/analytics/overview",
		q("projectId", projectID),
		q("startDate", day(-30), "endDate", day(0)),
		q("platform", platform.YouTube),
		q("projectId", projectID, "startDate", day(-7), "endDate", day(0)),
	}
}

// Analytics runs the overview load against a server whose database SeedAnalytics filled.
func Analytics(ctx context.Context, cfg AnalyticsConfig, projectID string, samples int) (AnalyticsResult, error) {
	res := AnalyticsResult{Scenario: "analytics", Items: cfg.Items, Samples: samples}
	r, err := Run(ctx, Config{URL: cfg.URL, Header: http.Header{"X-Api-Key": {cfg.Key}}, Concurrency: cfg.Concurrency,
		Duration: cfg.Duration, Warmup: cfg.Warmup, Paths: OverviewPaths(projectID, time.Now().UTC())})
	res.Result = r
	res.Targets = Targets{"p99_ms": {Want: "< 50", Met: r.Requests > 0 && r.P99ms < 50}}
	if err != nil {
		return res, err
	}
	if r.Errors > 0 {
		return res, fmt.Errorf("%d of %d requests failed, statuses %v %s", r.Errors, r.Requests, r.StatusCounts, r.FirstError)
	}
	return res, nil
}

// SeedAnalytics stores items published destinations of one account's project, spread over the
// last 90 days and the twelve platforms (one channel each), each with its latest figures (null
// where its platform gives none, as the sync would store them) and one sample. It writes with
// plain SQL in one transaction (the rows are the store's, the shortcut is only in how they get
// there), then has the store compute the totals from them. It returns the number of samples.
func SeedAnalytics(ctx context.Context, st *store.Store, accountID, projectID string, items int) (int, error) {
	samples, err := seedItems(ctx, st.JobsDB(), accountID, projectID, items)
	if err != nil {
		return 0, err
	}
	return samples, st.RebuildFigureTotals(ctx, accountID)
}

func seedItems(ctx context.Context, db *sql.DB, accountID, projectID string, items int) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := tx.ExecContext(ctx, `INSERT INTO media (sha256, blob_key, kind, content_type, size, created_at)
		VALUES ('bench', 'media/sha256/bench', 'mp4', 'video/mp4', 1, $1) ON CONFLICT (sha256) DO NOTHING`, now); err != nil {
		return 0, fmt.Errorf("seed media: %w", err)
	}
	channels := map[string]string{}
	for _, p := range platform.All {
		id := uuid.NewString()
		channels[p] = id
		if _, err := tx.ExecContext(ctx, `INSERT INTO channels (id, account_id, project_id, platform, name, external_account_id, created_at)
			VALUES ($1, $2, $3, $4, $4, $5, $6)`, id, accountID, projectID, p, "bench-"+p, now); err != nil {
			return 0, fmt.Errorf("seed channel: %w", err)
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	const batch = 200
	samples := 0
	for start := 0; start < items; start += batch {
		n := min(batch, items-start)
		var posts, dests, pubs, smp rowsInsert
		for range n {
			p := platform.All[rnd.IntN(len(platform.All))]
			postID, destID := uuid.NewString(), uuid.NewString()
			published := now.Add(-time.Duration(rnd.Int64N(int64(90 * 24 * time.Hour))))
			posts.add(postID, accountID, projectID, "published", "{}", "bench", postID, published.Format("2006-01"), published, published, published)
			dests.add(destID, postID, channels[p], p, 0, "published", "{}", "x-"+destID[:8], published, published)
			fig := figuresFor(p, rnd)
			pubs.add(append([]any{destID, accountID, projectID, postID, channels[p], p, published, published.Format(time.DateOnly),
				true, true, now, now.Add(time.Hour)}, fig...)...)
			smp.add(append([]any{destID, now}, fig...)...)
			samples++
		}
		for _, ins := range []struct {
			sql  string
			rows *rowsInsert
		}{
			{`INSERT INTO posts (id, account_id, project_id, status, request, video_sha256, content_hash, usage_month, published_at, created_at, updated_at) VALUES `, &posts},
			{`INSERT INTO destinations (id, post_id, channel_id, platform, position, status, options, external_id, published_at, updated_at) VALUES `, &dests},
			{`INSERT INTO published_items (destination_id, account_id, project_id, post_id, channel_id, platform, published_at,
				published_day, first_of_post, first_on_platform, metrics_synced_at, metrics_next_at,
				views, likes, comments, shares, impressions, reach, saves, watch_time_seconds) VALUES `, &pubs},
			{`INSERT INTO metric_samples (destination_id, captured_at, views, likes, comments, shares, impressions, reach, saves, watch_time_seconds) VALUES `, &smp},
		} {
			if _, err := tx.ExecContext(ctx, ins.sql+ins.rows.values(), ins.rows.args...); err != nil {
				return 0, fmt.Errorf("seed: %w", err)
			}
		}
	}
	return samples, tx.Commit()
}

// figuresFor draws the figures of one item on platform p: a number for each metric the
// platform gives (in the order of store.Figures), nil for the others.
func figuresFor(p string, rnd *rand.Rand) []any {
	caps, _ := registry.CapabilitiesOf(p)
	names := []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricShares,
		platform.MetricImpressions, platform.MetricReach, platform.MetricSaves, platform.MetricWatchTime}
	out := make([]any, len(names))
	for i, m := range names {
		if slices.Contains(caps.Analytics, m) {
			out[i] = rnd.Int64N(100000)
		}
	}
	return out
}

// rowsInsert collects the rows of a multi-row INSERT with numbered placeholders.
type rowsInsert struct {
	rows []string
	args []any
}

func (r *rowsInsert) add(values ...any) {
	marks := make([]string, len(values))
	for i, v := range values {
		r.args = append(r.args, v)
		marks[i] = fmt.Sprintf("$%d", len(r.args))
	}
	r.rows = append(r.rows, "("+strings.Join(marks, ", ")+")")
}

func (r *rowsInsert) values() string { return strings.Join(r.rows, ", ") }
