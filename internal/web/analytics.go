package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// metric is one figure the analytics page can chart.
type metric struct {
	Key, Name string
	get       func(store.Figures) *int64
	format    func(int64) string
}

var metrics = []metric{
	{"views", "Views", func(f store.Figures) *int64 { return f.Views }, formatCount},
	{"likes", "Likes", func(f store.Figures) *int64 { return f.Likes }, formatCount},
	{"comments", "Comments", func(f store.Figures) *int64 { return f.Comments }, formatCount},
	{"shares", "Shares", func(f store.Figures) *int64 { return f.Shares }, formatCount},
	{"impressions", "Impressions", func(f store.Figures) *int64 { return f.Impressions }, formatCount},
	{"reach", "Reach", func(f store.Figures) *int64 { return f.Reach }, formatCount},
	{"saves", "Saves", func(f store.Figures) *int64 { return f.Saves }, formatCount},
	{"watch_time", "Watch time", func(f store.Figures) *int64 { return f.WatchTimeSeconds }, formatDuration},
}

// maxAnalyticsDays bounds the range of the analytics page.
const maxAnalyticsDays = 366

type analyticsData struct {
	From, To string
	Metric   metric
	Metrics  []metric
	Posts    int
	// Totals are every figure summed over the platforms ("—" where none gives it).
	Totals     []totalFigure
	ByPlatform barChart
	ByDay      columnChart
	Platforms  []platformRow
	Notice     string
}

type totalFigure struct {
	Name, Text string
	Known      bool
}

type platformRow struct {
	Name         string
	Posts        int
	Destinations int
	Text         string
}

// analyticsPage shows the stored figures of the current project's posts published in a range
// of UTC days: totals, one figure by platform and by day as SVG charts drawn here, with their
// numbers as tables. It reads stored figures only; "Read figures now" asks the platforms.
func (h *Handler) analyticsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	p, err := h.pageFor(r, s, "Analytics", "analytics", nil)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	today := h.o.Now().UTC().Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -29), today
	var f apierr.Fields
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.DateOnly, v); err != nil {
			f.Add("from", "must be a date as YYYY-MM-DD")
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.DateOnly, v); err != nil {
			f.Add("to", "must be a date as YYYY-MM-DD")
		}
	}
	if len(f) == 0 && to.Before(from) {
		f.Add("to", "is before from")
	}
	if len(f) == 0 && to.Sub(from) > maxAnalyticsDays*24*time.Hour {
		f.Addf("from", "the range may span at most %d days", maxAnalyticsDays)
	}
	d := analyticsData{From: from.Format(time.DateOnly), To: to.Format(time.DateOnly), Metric: metrics[0], Metrics: metrics,
		Notice: notices[q.Get("done")]}
	if k := q.Get("metric"); k != "" {
		found := false
		for _, m := range metrics {
			if m.Key == k {
				d.Metric, found = m, true
			}
		}
		if !found {
			f.Add("metric", "is not a figure reelay keeps")
		}
	}
	if q.Get("done") == "synced" {
		d.Notice = fmt.Sprintf("Read the platforms: figures of %s published destinations updated.", q.Get("synced"))
	}
	if err := f.Err(); err != nil {
		return err
	}
	until := to.AddDate(0, 0, 1)
	filter := store.AnalyticsFilter{ProjectID: p.Project.ID, From: &from, Until: &until}
	perPlatform, posts, err := h.figures.Totals(r.Context(), s.AccountID, filter)
	if err != nil {
		return err
	}
	days, err := h.figures.ByDay(r.Context(), s.AccountID, filter)
	if err != nil {
		return err
	}
	d.Posts = posts

	var all store.Figures
	var labels []string
	var values []*int64
	for _, pt := range perPlatform {
		all.Add(pt.Figures)
		v := d.Metric.get(pt.Figures)
		labels, values = append(labels, registry.DisplayName(pt.Platform)), append(values, v)
		text := "not reported"
		if v != nil {
			text = d.Metric.format(*v)
		}
		d.Platforms = append(d.Platforms, platformRow{Name: registry.DisplayName(pt.Platform), Posts: pt.Posts, Destinations: pt.Destinations, Text: text})
	}
	for _, m := range metrics {
		t := totalFigure{Name: m.Name, Text: "—"}
		if v := m.get(all); v != nil {
			t.Text, t.Known = m.format(*v), true
		}
		d.Totals = append(d.Totals, t)
	}
	d.ByPlatform = newBarChart(labels, values, d.Metric.format)

	byDay := map[string]*int64{}
	for _, dt := range days {
		byDay[dt.Day.Format(time.DateOnly)] = d.Metric.get(dt.Figures)
	}
	var dayLabels []string
	var dayValues []*int64
	for day := from; !day.After(to); day = day.AddDate(0, 0, 1) {
		k := day.Format(time.DateOnly)
		dayLabels, dayValues = append(dayLabels, k), append(dayValues, byDay[k])
	}
	d.ByDay = newColumnChart(dayLabels, dayValues, d.Metric.format)
	p.Data = d
	h.render(w, r, http.StatusOK, "analytics", p)
	return nil
}

// syncAnalytics reads the figures of the current project's published posts from the platforms
// now (bounded like POST /api/v1/analytics/sync), then shows the page again.
func (h *Handler) syncAnalytics(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.Analytics == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "reading figures is not available on this server")
	}
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), analytics.OnDemandTimeout)
	defer cancel()
	sum, err := h.o.Analytics.Sync(ctx, store.AudienceFilter{AccountID: s.AccountID, ProjectID: p.Project.ID, Limit: analytics.OnDemandDestinations})
	if err != nil {
		return err
	}
	v := url.Values{"done": {"synced"}, "synced": {fmt.Sprint(sum.Synced)}}
	for _, k := range []string{"from", "to", "metric"} {
		if x := r.PostFormValue(k); x != "" {
			v.Set(k, x)
		}
	}
	http.Redirect(w, r, "/analytics?"+v.Encode(), http.StatusSeeOther)
	return nil
}
