package pinterestsim

// Pinterest simulator, the audience side: Pin analytics, GET /v5/pins/{pin_id}/analytics, and
// multi-Pin analytics, GET /v5/pins/analytics (beta).
//
// Sources: Pinterest's v5 reference as its generated SDKs carry it (pins/analytics,
// pins/multi_pins_analytics, PinAnalyticsMetricsResponse, DataStatus and the metric type
// enums), and what integrators report of the answers (copies read through the search tool).
// What the pages leave open, and how it is decided here:
//
//   - start_date, end_date (YYYY-MM-DD, UTC) and metric_types (comma-separated) are required.
//     start_date may be at most 90 days before today and end_date at most 90 days after
//     start_date (the reference's words); an end_date after today or before start_date is
//     refused too (integrators report the first). Refusals are 400 code 1.
//   - metric_types are the reference's enum: IMPRESSION, OUTBOUND_CLICK, PIN_CLICK, SAVE,
//     SAVE_RATE, TOTAL_COMMENTS, TOTAL_REACTIONS, USER_FOLLOW, PROFILE_VISIT, VIDEO_MRC_VIEW
//     ("Video views"), VIDEO_10S_VIEW, QUARTILE_95_PERCENT_VIEW, VIDEO_V50_WATCH_TIME ("Total
//     play time", milliseconds), VIDEO_START and VIDEO_AVG_WATCH_TIME (milliseconds: total play
//     time over starts, as Pinterest's answers show); ALL on the single-Pin endpoint. Only
//     app_types=ALL and split_field=NO_SPLIT are simulated (others answer 400 here).
//   - The answer is keyed by app type, "all": {lifetime_metrics, summary_metrics,
//     daily_metrics: [{date, data_status, metrics}]}; multi-Pin analytics key it by Pin id
//     first. Lifetime figures are AudienceOf(pin id, creation, now): IMPRESSION = Impressions,
//     SAVE = Saves, VIDEO_MRC_VIEW = Views, VIDEO_START = 1.5 × Views, VIDEO_10S_VIEW = Views/2,
//     QUARTILE_95_PERCENT_VIEW = Views/4, VIDEO_V50_WATCH_TIME = WatchSeconds × 1000,
//     TOTAL_REACTIONS = Likes and TOTAL_COMMENTS = the audience's comments; the rates follow
//     from those. PIN_CLICK, OUTBOUND_CLICK, PROFILE_VISIT and USER_FOLLOW have no figure in
//     the simulated audience and are left out of the answer, never reported as 0. Summary and
//     daily figures are the growth within the window (a day before the Pin is
//     BEFORE_PIN_CREATED, today PROCESSING, others READY); TOTAL_COMMENTS and TOTAL_REACTIONS
//     are lifetime figures only (integrators report them absent from daily rows).
//   - A Pin that is unknown or another account's answers 404 code 50 "Pin not found." on the
//     single-Pin endpoint and is left out of a multi-Pin answer. Multi-Pin analytics take 1 to
//     100 pin_ids; an app without beta access (Options.NoBetaAccess) is refused with
//     403 (the wording is this simulator's: Pinterest documents the endpoint as "not available
//     to all apps").
//   - Both count as org_read calls for the per-minute rate limit.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// pinterestAnalyticsDays is how far back analytics reach, and the longest window.
const pinterestAnalyticsDays = 90

// pinterestMaxAnalyticsPins is how many Pins one multi-Pin analytics call takes.
const pinterestMaxAnalyticsPins = 100

// pinterestCounts are the counting metrics the simulated audience has a figure for.
var pinterestCounts = map[string]func(a sim.Audience) int64{
	"IMPRESSION":               func(a sim.Audience) int64 { return a.Impressions },
	"SAVE":                     func(a sim.Audience) int64 { return a.Saves },
	"VIDEO_MRC_VIEW":           func(a sim.Audience) int64 { return a.Views },
	"VIDEO_START":              func(a sim.Audience) int64 { return a.Views + a.Views/2 },
	"VIDEO_10S_VIEW":           func(a sim.Audience) int64 { return a.Views / 2 },
	"QUARTILE_95_PERCENT_VIEW": func(a sim.Audience) int64 { return a.Views / 4 },
	"VIDEO_V50_WATCH_TIME":     func(a sim.Audience) int64 { return a.WatchSeconds * 1000 },
	"TOTAL_REACTIONS":          func(a sim.Audience) int64 { return a.Likes },
	"TOTAL_COMMENTS":           func(a sim.Audience) int64 { return a.Comments },
}

// pinterestRates are the ratio metrics: numerator over denominator.
var pinterestRates = map[string][2]string{
	"SAVE_RATE":            {"SAVE", "IMPRESSION"},
	"VIDEO_AVG_WATCH_TIME": {"VIDEO_V50_WATCH_TIME", "VIDEO_START"},
}

// pinterestLifetimeOnly are the metrics Pinterest gives as lifetime figures only.
var pinterestLifetimeOnly = []string{"TOTAL_COMMENTS", "TOTAL_REACTIONS"}

// pinterestMetricTypes is the reference's enum of Pin metric types.
var pinterestMetricTypes = []string{
	"IMPRESSION", "OUTBOUND_CLICK", "PIN_CLICK", "SAVE", "SAVE_RATE", "TOTAL_COMMENTS", "TOTAL_REACTIONS", "USER_FOLLOW",
	"PROFILE_VISIT", "VIDEO_MRC_VIEW", "VIDEO_10S_VIEW", "QUARTILE_95_PERCENT_VIEW", "VIDEO_V50_WATCH_TIME", "VIDEO_START",
	"VIDEO_AVG_WATCH_TIME",
}

// pinterestWindow is a validated analytics query.
type pinterestWindow struct {
	start, end time.Time // days, UTC
	metrics    []string
}

// analyticsQuery validates what both analytics endpoints share; it answers 400 itself.
func (p *Sim) analyticsQuery(w http.ResponseWriter, q url.Values, allowAll bool) (pinterestWindow, bool) {
	fail := func(msg string) (pinterestWindow, bool) {
		pinterestError(w, http.StatusBadRequest, 1, "Invalid parameters: "+msg)
		return pinterestWindow{}, false
	}
	var win pinterestWindow
	for name, dst := range map[string]*time.Time{"start_date": &win.start, "end_date": &win.end} {
		v := q.Get(name)
		if v == "" {
			return fail(name + " is required.")
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return fail(fmt.Sprintf("%s %q is not a date in the format YYYY-MM-DD.", name, v))
		}
		*dst = d
	}
	now := p.cfg.Now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case win.start.Before(today.AddDate(0, 0, -pinterestAnalyticsDays)):
		return fail("start_date cannot be more than 90 days back from today.")
	case win.end.After(win.start.AddDate(0, 0, pinterestAnalyticsDays)):
		return fail("end_date cannot be more than 90 days past start_date.")
	case win.end.Before(win.start):
		return fail("end_date cannot be before start_date.")
	case win.end.After(today):
		return fail("end_date cannot be after today.")
	}
	for _, v := range q["metric_types"] {
		for _, m := range strings.Split(v, ",") {
			switch {
			case m == "ALL" && allowAll:
				win.metrics = append(win.metrics, pinterestMetricTypes...)
			case slices.Contains(pinterestMetricTypes, m):
				win.metrics = append(win.metrics, m)
			default:
				return fail(fmt.Sprintf("metric_types value %q is not a Pin metric type.", m))
			}
		}
	}
	if len(win.metrics) == 0 {
		return fail("metric_types is required.")
	}
	if v := q.Get("app_types"); v != "" && v != "ALL" {
		return fail("this simulator answers app_types=ALL only.")
	}
	if v := q.Get("split_field"); v != "" && v != "NO_SPLIT" {
		return fail("this simulator answers split_field=NO_SPLIT only.")
	}
	return win, true
}

// figures returns the requested metrics of an audience, leaving out those it has no figure for.
func (win pinterestWindow) figures(a sim.Audience, withLifetimeOnly bool) map[string]any {
	counts := map[string]int64{}
	for name, f := range pinterestCounts {
		counts[name] = f(a)
	}
	out := map[string]any{}
	for _, m := range win.metrics {
		if !withLifetimeOnly && slices.Contains(pinterestLifetimeOnly, m) {
			continue
		}
		if n, ok := counts[m]; ok {
			out[m] = n
		} else if r, ok := pinterestRates[m]; ok {
			rate := 0.0
			if d := counts[r[1]]; d > 0 {
				rate = float64(counts[r[0]]) / float64(d)
			}
			out[m] = rate
		}
	}
	return out
}

// growth is the audience gained between two moments (counts only).
func growth(to, from sim.Audience) sim.Audience {
	return sim.Audience{
		Views: to.Views - from.Views, Impressions: to.Impressions - from.Impressions, Reach: to.Reach - from.Reach,
		Likes: to.Likes - from.Likes, Shares: to.Shares - from.Shares, Saves: to.Saves - from.Saves,
		WatchSeconds: to.WatchSeconds - from.WatchSeconds, Comments: to.Comments - from.Comments,
	}
}

// pinAnalyticsJSON is one Pin's answer, keyed by app type.
func (p *Sim) pinAnalyticsJSON(pin pinterestPin, win pinterestWindow) map[string]any {
	now := p.cfg.Now()
	at := func(t time.Time) sim.Audience {
		if t.Before(pin.CreatedAt) {
			t = pin.CreatedAt
		}
		return sim.AudienceOf(pin.ID, pin.CreatedAt, t)
	}
	daily := []map[string]any{}
	for day := win.start; !day.After(win.end); day = day.AddDate(0, 0, 1) {
		next := day.AddDate(0, 0, 1)
		row := map[string]any{"date": day.Format(time.DateOnly), "metrics": map[string]any{}}
		switch {
		case !next.After(pin.CreatedAt):
			row["data_status"] = "BEFORE_PIN_CREATED"
		case next.After(now):
			row["data_status"] = "PROCESSING"
			row["metrics"] = win.figures(growth(at(now), at(day)), false)
		default:
			row["data_status"] = "READY"
			row["metrics"] = win.figures(growth(at(next), at(day)), false)
		}
		daily = append(daily, row)
	}
	end := win.end.AddDate(0, 0, 1)
	if end.After(now) {
		end = now
	}
	return map[string]any{"all": map[string]any{
		"lifetime_metrics": win.figures(at(now), true),
		"summary_metrics":  win.figures(growth(at(end), at(win.start)), false),
		"daily_metrics":    daily,
	}}
}

// ownPin reads acc's Pin with the id.
func (p *Sim) ownPin(ctx context.Context, acc sim.Account, id string) (pinterestPin, bool, error) {
	pin, _, found, err := sim.Load[pinterestPin](ctx, p.cfg.State, pinterestKey(pinterestPinKind, id))
	return pin, found && pin.Account == acc.ID, err
}

func (p *Sim) pinAnalytics(w http.ResponseWriter, r *http.Request, acc sim.Account, id string) {
	win, ok := p.analyticsQuery(w, r.URL.Query(), true)
	if !ok {
		return
	}
	pin, found, err := p.ownPin(r.Context(), acc, id)
	if err != nil {
		pinterestInternal(w)
		return
	}
	if !found {
		pinterestError(w, http.StatusNotFound, 50, "Pin not found.")
		return
	}
	writePinterestJSON(w, http.StatusOK, p.pinAnalyticsJSON(pin, win))
}

func (p *Sim) multiPinAnalytics(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	if p.opts.NoBetaAccess {
		pinterestError(w, http.StatusForbidden, 29, "Your application does not have access to this beta endpoint.")
		return
	}
	q := r.URL.Query()
	var ids []string
	for _, v := range q["pin_ids"] {
		ids = append(ids, strings.Split(v, ",")...)
	}
	switch {
	case len(ids) == 0:
		pinterestError(w, http.StatusBadRequest, 1, "Invalid parameters: pin_ids is required.")
		return
	case len(ids) > pinterestMaxAnalyticsPins:
		pinterestError(w, http.StatusBadRequest, 1, fmt.Sprintf("Invalid parameters: pin_ids takes at most %d Pins, got %d.", pinterestMaxAnalyticsPins, len(ids)))
		return
	}
	for _, id := range ids {
		if !pinterestDigits(id) {
			pinterestError(w, http.StatusBadRequest, 1, fmt.Sprintf("Invalid parameters: pin_ids value %q is not a Pin id.", id))
			return
		}
	}
	win, ok := p.analyticsQuery(w, q, false)
	if !ok {
		return
	}
	out := map[string]any{}
	for _, id := range ids {
		pin, found, err := p.ownPin(r.Context(), acc, id)
		if err != nil {
			pinterestInternal(w)
			return
		}
		if found {
			out[id] = p.pinAnalyticsJSON(pin, win)
		}
	}
	writePinterestJSON(w, http.StatusOK, out)
}
