package pinterestsim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
)

// createPin uploads a video and makes a Pin of it.
func (e *pinEnv) createPin(t *testing.T) pinterestsim.Pin {
	t.Helper()
	r := e.upload(t, "tok", providertest.ShortVideo())
	e.Clock.Advance(3 * time.Second)
	a := e.call(t, http.MethodPost, "/v5/pins", "tok", map[string]any{
		"board_id":     pinterestsim.DefaultBoards(pinAcct)[0].ID,
		"media_source": map[string]any{"source_type": "video_id", "media_id": r.MediaID, "cover_image_key_frame_time": 1},
	})
	if a.status != http.StatusCreated {
		t.Fatalf("pin: %d %s", a.status, a.body)
	}
	id := a.json(t)["id"]
	for _, p := range e.sim.Pins(pinAcct) {
		if p.ID == id {
			return p
		}
	}
	t.Fatalf("no pin %v", id)
	return pinterestsim.Pin{}
}

type pinFigures struct {
	Lifetime map[string]float64 `json:"lifetime_metrics"`
	Summary  map[string]float64 `json:"summary_metrics"`
	Daily    []struct {
		Date       string
		DataStatus string `json:"data_status"`
		Metrics    map[string]float64
	} `json:"daily_metrics"`
}

func analyticsQuery(start, end time.Time, metrics string) string {
	return url.Values{"start_date": {start.Format(time.DateOnly)}, "end_date": {end.Format(time.DateOnly)}, "metric_types": {metrics}}.Encode()
}

func TestPinterestSimPinAnalytics(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	e.Clock.Advance(20 * time.Hour) // 2026-03-02 08:00 UTC
	pin := e.createPin(t)
	e.Clock.Advance(30 * time.Hour) // 2026-03-03 14:00
	now := e.Clock.Now()
	today := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	a := sim.AudienceOf(pin.ID, pin.CreatedAt, now)

	ans := e.call(t, http.MethodGet, "/v5/pins/"+pin.ID+"/analytics?"+analyticsQuery(today.AddDate(0, 0, -2), today,
		"IMPRESSION,SAVE,VIDEO_MRC_VIEW,VIDEO_V50_WATCH_TIME,VIDEO_START,VIDEO_AVG_WATCH_TIME,TOTAL_REACTIONS,TOTAL_COMMENTS,PIN_CLICK"), "tok", nil)
	if ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	var body map[string]pinFigures
	if err := json.Unmarshal(ans.body, &body); err != nil {
		t.Fatal(err)
	}
	all := body["all"]
	starts := a.Views + a.Views/2
	for name, want := range map[string]float64{
		"IMPRESSION": float64(a.Impressions), "SAVE": float64(a.Saves), "VIDEO_MRC_VIEW": float64(a.Views),
		"VIDEO_V50_WATCH_TIME": float64(a.WatchSeconds * 1000), "VIDEO_START": float64(starts),
		"VIDEO_AVG_WATCH_TIME": float64(a.WatchSeconds*1000) / float64(starts),
		"TOTAL_REACTIONS":      float64(a.Likes), "TOTAL_COMMENTS": float64(a.Comments),
	} {
		if got, ok := all.Lifetime[name]; !ok || got != want {
			t.Errorf("lifetime %s = %v, want %v", name, got, want)
		}
	}
	// No audience figure for Pin clicks: left out, not 0.
	if _, ok := all.Lifetime["PIN_CLICK"]; ok || len(all.Lifetime) != 8 {
		t.Errorf("lifetime metrics %v", all.Lifetime)
	}
	// Three days: before the Pin, its first day, today so far; comments and reactions are
	// lifetime figures only.
	if len(all.Daily) != 3 || all.Daily[0].DataStatus != "BEFORE_PIN_CREATED" || len(all.Daily[0].Metrics) != 0 ||
		all.Daily[1].DataStatus != "READY" || all.Daily[2].DataStatus != "PROCESSING" || all.Daily[2].Date != "2026-03-03" {
		t.Fatalf("daily %+v", all.Daily)
	}
	var sum float64
	for _, d := range all.Daily {
		sum += d.Metrics["IMPRESSION"]
		if _, ok := d.Metrics["TOTAL_COMMENTS"]; ok {
			t.Errorf("daily comments on %s", d.Date)
		}
	}
	if sum != float64(a.Impressions) || all.Summary["IMPRESSION"] != sum {
		t.Errorf("daily impressions sum to %v, summary %v; want %d", sum, all.Summary["IMPRESSION"], a.Impressions)
	}
	// The first day ends at midnight: its figures are the audience then.
	if first := sim.AudienceOf(pin.ID, pin.CreatedAt, today); all.Daily[1].Metrics["SAVE"] != float64(first.Saves) {
		t.Errorf("first day saves %v, want %d", all.Daily[1].Metrics["SAVE"], first.Saves)
	}
}

func TestPinterestSimPinAnalyticsStrict(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	pin := e.createPin(t)
	today := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	path := "/v5/pins/" + pin.ID + "/analytics?"
	for _, c := range []struct {
		name, query, token string
		status, code       int
		text               string
	}{
		{"valid", analyticsQuery(today, today, "IMPRESSION"), "tok", 200, 0, ""},
		{"all", analyticsQuery(today, today, "ALL"), "tok", 200, 0, ""},
		{"90 days back", analyticsQuery(today.AddDate(0, 0, -90), today, "SAVE"), "tok", 200, 0, ""},
		{"91 days back", analyticsQuery(today.AddDate(0, 0, -91), today, "SAVE"), "tok", 400, 1, "90 days back"},
		{"window over 90 days", analyticsQuery(today.AddDate(0, 0, -90), today.AddDate(0, 0, 1), "SAVE"), "tok", 400, 1, "90 days past start_date"},
		{"end before start", analyticsQuery(today, today.AddDate(0, 0, -1), "SAVE"), "tok", 400, 1, "before start_date"},
		{"end after today", analyticsQuery(today, today.AddDate(0, 0, 1), "SAVE"), "tok", 400, 1, "after today"},
		{"no start", "end_date=2026-03-01&metric_types=SAVE", "tok", 400, 1, "start_date is required"},
		{"bad date", "start_date=2026-3-1&end_date=2026-03-01&metric_types=SAVE", "tok", 400, 1, "YYYY-MM-DD"},
		{"no metrics", "start_date=2026-03-01&end_date=2026-03-01", "tok", 400, 1, "metric_types is required"},
		{"unknown metric", analyticsQuery(today, today, "IMPRESSION,LIKES"), "tok", 400, 1, `"LIKES"`},
		{"app types", analyticsQuery(today, today, "SAVE") + "&app_types=MOBILE", "tok", 400, 1, "app_types"},
		{"another account", analyticsQuery(today, today, "SAVE"), "tok-other", 404, 50, "Pin not found."},
		{"unavailable", analyticsQuery(today, today, "SAVE"), "tok-down", 503, 503, "unavailable"},
		{"auth", analyticsQuery(today, today, "SAVE"), "tok-auth", 401, 2, "Authentication failed."},
		{"rate limit", analyticsQuery(today, today, "SAVE"), "tok-limited", 429, 8, "rate limit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := e.call(t, http.MethodGet, path+c.query, c.token, nil)
			if c.status == 200 {
				if a.status != 200 || !strings.Contains(string(a.body), `"lifetime_metrics"`) {
					t.Errorf("%d %s", a.status, a.body)
				}
				return
			}
			a.wantError(t, c.status, c.code, c.text)
		})
	}
	e.call(t, http.MethodGet, "/v5/pins/123/analytics?"+analyticsQuery(today, today, "SAVE"), "tok", nil).wantError(t, 404, 50, "Pin not found.")
}

func TestPinterestSimMultiPinAnalytics(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	first, second := e.createPin(t), e.createPin(t)
	e.Clock.Advance(time.Hour)
	today := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	q := analyticsQuery(today, today, "IMPRESSION,TOTAL_COMMENTS")

	a := e.call(t, http.MethodGet, "/v5/pins/analytics?pin_ids="+first.ID+",42,"+second.ID+"&"+q, "tok", nil)
	var body map[string]map[string]pinFigures
	if a.status != http.StatusOK || json.Unmarshal(a.body, &body) != nil {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if len(body) != 2 {
		t.Fatalf("answer for %d Pins, want 2 (an unknown id is left out): %s", len(body), a.body)
	}
	for _, pin := range []pinterestsim.Pin{first, second} {
		want := sim.AudienceOf(pin.ID, pin.CreatedAt, e.Clock.Now())
		if got := body[pin.ID]["all"].Lifetime; got["IMPRESSION"] != float64(want.Impressions) || got["TOTAL_COMMENTS"] != float64(want.Comments) {
			t.Errorf("%s: %v, want %+v", pin.ID, got, want)
		}
	}
	// Another account's Pins are left out too.
	if a := e.call(t, http.MethodGet, "/v5/pins/analytics?pin_ids="+first.ID+"&"+q, "tok-other", nil); string(a.body) != "{}\n" {
		t.Errorf("another account: %d %s", a.status, a.body)
	}

	ids := make([]string, 101)
	for i := range ids {
		ids[i] = strconv.Itoa(1000 + i)
	}
	if a := e.call(t, http.MethodGet, "/v5/pins/analytics?pin_ids="+strings.Join(ids[:100], ",")+"&"+q, "tok", nil); a.status != http.StatusOK {
		t.Errorf("100 pins: %d %s", a.status, a.body)
	}
	for _, c := range []struct{ name, query, text string }{
		{"101 pins", "pin_ids=" + strings.Join(ids, ",") + "&" + q, "at most 100"},
		{"no pins", q, "pin_ids is required"},
		{"not a pin id", "pin_ids=12,abc&" + q, `"abc"`},
		{"ALL", "pin_ids=12&" + analyticsQuery(today, today, "ALL"), `"ALL"`},
	} {
		e.call(t, http.MethodGet, "/v5/pins/analytics?"+c.query, "tok", nil).wantError(t, 400, 1, c.text)
	}

	closed := newPinEnv(t, pinterestsim.Options{NoBetaAccess: true})
	closed.call(t, http.MethodGet, "/v5/pins/analytics?pin_ids=12&"+q, "tok", nil).wantError(t, 403, 29, "beta")
}
