package pinterest

// Pin analytics. Pinterest answers a Pin's figures for a window of days (at most 90, ending at
// most 90 days back) and, besides them, its lifetime figures (lifetime_metrics), which are what
// reelay keeps: a window's sum would fall as the window moves past a Pin's first days.
//
// GET /v5/pins/analytics?pin_ids=… takes up to 100 Pins a call, but it is a beta endpoint "not
// available to all apps": when Pinterest refuses it (403), the rest of the read goes one Pin a
// call, GET /v5/pins/{pin_id}/analytics; when it answers 404, that batch does.
//
// Pinterest v5 has no way to read comments, so the provider is no provider.CommentSource; it reports
// comment and reaction counts (TOTAL_COMMENTS, TOTAL_REACTIONS) as figures.

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// pathPinAnalytics is multi-Pin analytics; a Pin's own is pathPins/{pin_id}/analytics.
const pathPinAnalytics = "/pins/analytics"

// maxAnalyticsPins is how many Pins one multi-Pin analytics call takes.
const maxAnalyticsPins = 100

// pinMetrics are the metric types read and where each lifetime figure goes. VIDEO_MRC_VIEW is
// what Pinterest calls video views; VIDEO_V50_WATCH_TIME, "total play time", is in
// milliseconds.
var pinMetrics = []struct {
	name string
	set  func(m *provider.Metrics, v int64)
}{
	{"IMPRESSION", func(m *provider.Metrics, v int64) { m.Impressions = provider.N(v) }},
	{"SAVE", func(m *provider.Metrics, v int64) { m.Saves = provider.N(v) }},
	{"VIDEO_MRC_VIEW", func(m *provider.Metrics, v int64) { m.Views = provider.N(v) }},
	{"VIDEO_V50_WATCH_TIME", func(m *provider.Metrics, v int64) { m.WatchTimeSeconds = provider.N(v / 1000) }},
	{"TOTAL_REACTIONS", func(m *provider.Metrics, v int64) { m.Likes = provider.N(v) }},
	{"TOTAL_COMMENTS", func(m *provider.Metrics, v int64) { m.Comments = provider.N(v) }},
}

// pinAnalytics is a Pin's answer: figures by app type ("all" without app_types).
type pinAnalytics map[string]struct {
	LifetimeMetrics map[string]float64 `json:"lifetime_metrics"`
}

// metrics are the Pin's lifetime figures; a metric Pinterest did not give stays nil.
func (a pinAnalytics) metrics() provider.Metrics {
	var m provider.Metrics
	all := a["all"].LifetimeMetrics
	for _, pm := range pinMetrics {
		if v, ok := all[pm.name]; ok {
			pm.set(&m, int64(math.Round(v)))
		}
	}
	return m
}

// analyticsQuery is the query both endpoints take. The window is a single day, the day an hour
// ago (UTC): lifetime figures do not depend on it, and a day Pinterest may not have reached yet
// on its own clock would be refused.
func (p *Provider) analyticsQuery() url.Values {
	day := p.cfg.Now().UTC().Add(-time.Hour).Format(time.DateOnly)
	names := make([]string, len(pinMetrics))
	for i, pm := range pinMetrics {
		names[i] = pm.name
	}
	return url.Values{"start_date": {day}, "end_date": {day}, "metric_types": {strings.Join(names, ",")}, "app_types": {"ALL"}}
}

// Metrics implements provider.MetricsSource. itemIDs are Pin ids (what Step returns as ExternalID);
// an id that is not one, or a Pin Pinterest does not know, has no figures.
func (p *Provider) Metrics(ctx context.Context, ch provider.Channel, itemIDs []string) (map[string]provider.Metrics, error) {
	base, token, err := p.target(ch.BaseURL, ch.Credentials)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, id := range itemIDs {
		if id != "" && strings.Trim(id, "0123456789") == "" {
			ids = append(ids, id)
		}
	}
	out := map[string]provider.Metrics{}
	batches := true
	for len(ids) > 0 {
		n := 1
		if batches {
			n = min(len(ids), maxAnalyticsPins)
		}
		batch := ids[:n]
		ids = ids[n:]
		if batches {
			err := p.batchMetrics(ctx, base, token, batch, out)
			var ae *apiError
			switch {
			case err == nil:
				continue
			case errors.As(err, &ae) && ae.HTTP == http.StatusForbidden:
				batches = false // not available to this app: one Pin a call from here on
			case !errors.As(err, &ae) || ae.HTTP != http.StatusNotFound:
				return out, classify(err, provider.CategoryInternal)
			}
		}
		for _, id := range batch {
			if err := p.pinMetrics(ctx, base, token, id, out); err != nil {
				return out, classify(err, provider.CategoryInternal)
			}
		}
	}
	return out, nil
}

// batchMetrics reads the Pins of one multi-Pin analytics call into out. A Pin the answer leaves
// out has no figures.
func (p *Provider) batchMetrics(ctx context.Context, base, token string, ids []string, out map[string]provider.Metrics) error {
	q := p.analyticsQuery()
	q.Set("pin_ids", strings.Join(ids, ","))
	var answer map[string]pinAnalytics
	if err := p.call(ctx, http.MethodGet, base, token, pathPinAnalytics, q, nil, &answer); err != nil {
		return err
	}
	for _, id := range ids {
		if a, ok := answer[id]; ok {
			out[id] = a.metrics()
		}
	}
	return nil
}

// pinMetrics reads one Pin into out; a Pin Pinterest does not know (404) has no figures.
func (p *Provider) pinMetrics(ctx context.Context, base, token, id string, out map[string]provider.Metrics) error {
	var answer pinAnalytics
	err := p.call(ctx, http.MethodGet, base, token, pathPins+"/"+id+"/analytics", p.analyticsQuery(), nil, &answer)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.HTTP == http.StatusNotFound:
		return nil
	case err != nil:
		return err
	}
	out[id] = answer.metrics()
	return nil
}
