package pinterest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// publishPin publishes a Pin with "tok" and returns it as the simulator knows it.
func (e *env) publishPin(t *testing.T, title string) pinterestsim.Pin {
	t.Helper()
	d := e.dest("tok", providertest.ShortVideo(), fmt.Sprintf(`{"board_id":%q,"title":%q}`, board(), title))
	outs, err := e.Run(e.prov, d, 30)
	if err != nil {
		t.Fatal(err)
	}
	id := outs[len(outs)-1].ExternalID
	for _, pin := range e.sim.Pins(acct) {
		if pin.ID == id {
			return pin
		}
	}
	t.Fatalf("the simulator has no Pin %s", id)
	return pinterestsim.Pin{}
}

func (e *env) channel(token string) provider.Channel {
	return provider.Channel{Account: acct, Credentials: map[string]string{"access_token": token}, BaseURL: e.BaseURL}
}

// wantPinMetrics is what Pinterest reports for a Pin with the audience a: no reach or shares.
func wantPinMetrics(a sim.Audience) provider.Metrics {
	return provider.Metrics{
		Views: provider.N(a.Views), Likes: provider.N(a.Likes), Comments: provider.N(a.Comments),
		Impressions: provider.N(a.Impressions), Saves: provider.N(a.Saves), WatchTimeSeconds: provider.N(a.WatchSeconds),
	}
}

func checkMetrics(t *testing.T, what string, got, want provider.Metrics) {
	t.Helper()
	for name, pair := range map[string][2]*int64{
		"views": {got.Views, want.Views}, "likes": {got.Likes, want.Likes}, "comments": {got.Comments, want.Comments},
		"shares": {got.Shares, want.Shares}, "impressions": {got.Impressions, want.Impressions}, "reach": {got.Reach, want.Reach},
		"saves": {got.Saves, want.Saves}, "watch_time": {got.WatchTimeSeconds, want.WatchTimeSeconds},
	} {
		g, w := pair[0], pair[1]
		if (g == nil) != (w == nil) || g != nil && *g != *w {
			t.Errorf("%s: %s = %s, want %s", what, name, show(g), show(w))
		}
	}
}

func show(n *int64) string {
	if n == nil {
		return "nil"
	}
	return strconv.FormatInt(*n, 10)
}

// analyticsCalls counts the multi-Pin and the single-Pin analytics calls so far.
func (e *env) analyticsCalls() (multi, single []providertest.Request) {
	for _, r := range e.Requests(http.MethodGet, "/analytics") {
		if strings.HasSuffix(r.Path, "/v5/pins/analytics") {
			multi = append(multi, r)
		} else {
			single = append(single, r)
		}
	}
	return multi, single
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	first := e.publishPin(t, "first")
	e.Clock.Advance(20 * time.Minute)
	second := e.publishPin(t, "second")
	e.Clock.Advance(50 * time.Minute)

	got, err := e.prov.Metrics(context.Background(), e.channel("tok"), []string{first.ID, "1234567890", second.ID, "not-a-pin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("figures for %v; want the 2 Pins", got)
	}
	for _, pin := range []pinterestsim.Pin{first, second} {
		checkMetrics(t, pin.ID, got[pin.ID], wantPinMetrics(sim.AudienceOf(pin.ID, pin.CreatedAt, e.Clock.Now())))
	}
	multi, single := e.analyticsCalls()
	if len(multi) != 1 || len(single) != 0 {
		t.Fatalf("%d multi-Pin and %d single-Pin calls, want one multi-Pin call", len(multi), len(single))
	}
	q, _ := url.ParseQuery(multi[0].Query)
	day := e.Clock.Now().UTC().Add(-time.Hour).Format(time.DateOnly) // the day an hour ago
	if q.Get("pin_ids") != first.ID+",1234567890,"+second.ID || q.Get("start_date") != day || q.Get("end_date") != day {
		t.Errorf("query %s", multi[0].Query)
	}
}

func TestMetricsAreLifetime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	pin := e.publishPin(t, "old")
	// Far beyond the 90 days a window may reach back: the figures are the Pin's whole life.
	e.Clock.Advance(200 * 24 * time.Hour)
	got, err := e.prov.Metrics(context.Background(), e.channel("tok"), []string{pin.ID})
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, pin.ID, got[pin.ID], wantPinMetrics(sim.AudienceOf(pin.ID, pin.CreatedAt, e.Clock.Now())))
}

func TestMetricsBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	pins := []pinterestsim.Pin{e.publishPin(t, "a"), e.publishPin(t, "b"), e.publishPin(t, "c")}
	e.Clock.Advance(time.Hour)
	// 250 ids, the Pins among Pin ids Pinterest does not know: three calls of at most 100.
	var ids []string
	for i := range 247 {
		ids = append(ids, strconv.Itoa(900_000+i))
	}
	ids = append(ids[:50], append([]string{pins[0].ID}, ids[50:]...)...)
	ids = append(ids[:120], append([]string{pins[1].ID}, ids[120:]...)...)
	ids = append(ids, pins[2].ID)
	got, err := e.prov.Metrics(context.Background(), e.channel("tok"), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("figures for %d items, want the 3 Pins", len(got))
	}
	for _, pin := range pins {
		checkMetrics(t, pin.ID, got[pin.ID], wantPinMetrics(sim.AudienceOf(pin.ID, pin.CreatedAt, e.Clock.Now())))
	}
	multi, single := e.analyticsCalls()
	if len(multi) != 3 || len(single) != 0 {
		t.Fatalf("%d multi-Pin and %d single-Pin calls, want 3 multi-Pin calls", len(multi), len(single))
	}
	for i, want := range []int{100, 100, 50} {
		q, _ := url.ParseQuery(multi[i].Query)
		if n := len(strings.Split(q.Get("pin_ids"), ",")); n != want {
			t.Errorf("call %d asked for %d Pins, want %d", i+1, n, want)
		}
	}
}

func TestMetricsWithoutBetaAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{NoBetaAccess: true}, providertest.Options{})
	first, second := e.publishPin(t, "a"), e.publishPin(t, "b")
	e.Clock.Advance(time.Hour)
	// 150 ids, more than one batch: the Pins and ids Pinterest does not know.
	ids := []string{first.ID}
	for i := range 148 {
		ids = append(ids, strconv.Itoa(900_000+i))
	}
	ids = append(ids, second.ID)
	got, err := e.prov.Metrics(context.Background(), e.channel("tok"), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("figures for %v; want the 2 Pins", got)
	}
	for _, pin := range []pinterestsim.Pin{first, second} {
		checkMetrics(t, pin.ID, got[pin.ID], wantPinMetrics(sim.AudienceOf(pin.ID, pin.CreatedAt, e.Clock.Now())))
	}
	// One refused multi-Pin call, then one call a Pin: the refusal is not asked again.
	multi, single := e.analyticsCalls()
	if len(multi) != 1 || multi[0].Status != http.StatusForbidden || len(single) != len(ids) {
		t.Fatalf("%d multi-Pin calls and %d single-Pin calls; want one refused, then %d", len(multi), len(single), len(ids))
	}
}

func TestMetricsFaults(t *testing.T) {
	t.Parallel()
	for _, beta := range []bool{true, false} {
		e := newEnv(t, pinterestsim.Options{NoBetaAccess: !beta}, providertest.Options{})
		pin := e.publishPin(t, "a")
		for _, c := range []struct {
			token, category, text string
			transient             bool
			retryAfter            time.Duration
		}{
			{"tok-unavailable", provider.CategoryUpstreamUnavailable, "HTTP 503", true, 0},
			{"tok-auth", provider.CategoryAuthExpired, "Authentication failed.", false, 0},
			{"tok-ratelimit", provider.CategoryRateLimited, "exceeded a rate limit", true, time.Second},
			{"nobody", provider.CategoryAuthExpired, "Authentication failed.", false, 0},
		} {
			got, err := e.prov.Metrics(context.Background(), e.channel(c.token), []string{pin.ID})
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retryAfter || len(got) != 0 {
				t.Errorf("beta %v, %s: RetryAfter %s (want %s), figures %v", beta, c.token, pe.RetryAfter, c.retryAfter, got)
			}
		}
	}
}

func TestNoCommentInbox(t *testing.T) {
	t.Parallel()
	// Pinterest v5 cannot read comments: the provider must not claim to.
	if _, ok := any(pinterest.New(pinterest.Config{})).(provider.CommentSource); ok {
		t.Error("the Pinterest provider implements inbox.Source")
	}
}
