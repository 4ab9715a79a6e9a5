package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
	"github.com/reelay/reelay/internal/webhooks"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	public := media.PublicOnly
	for _, tc := range []struct {
		url    string
		policy media.AddressPolicy
		ok     bool
	}{
		{"https://93.184.215.14/hooks/reelay", public, true},
		{"http://93.184.215.14:8443/x?team=1", public, true},
		{"ftp://93.184.215.14/x", public, false},
		{"/relative/path", public, false},
		{"93.184.215.14/x", public, false},
		{"https://user:pass@93.184.215.14/x", public, false},
		{"https://93.184.215.14/x#frag", public, false},
		{"http://127.0.0.1:8080/x", public, false},
		{"http://10.1.2.3/x", public, false},
		{"http://169.254.169.254/latest/meta-data", public, false},
		{"http://[::1]/x", public, false},
		{"http://[::ffff:127.0.0.1]/x", public, false},
		{"http://localhost/x", public, false},
		{"https://no-such-host.invalid/x", public, false},
		{"https://" + strings.Repeat("a", 2050), public, false},
		// Private addresses only when allowed (tests).
		{"http://127.0.0.1:8080/x", media.Guard(true, nil), true},
	} {
		_, err := webhooks.CheckURL(ctx, tc.url, tc.policy)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%.60q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

// fixture is a store with one account, a webhook at url subscribed to channel.reauth_required,
// and one delivery of that event.
type fixture struct {
	st       *store.Store
	box      *secret.Box
	secret   string
	hook     store.Webhook
	delivery store.WebhookDelivery
	channel  string
}

func newFixture(t *testing.T, url string) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{st: storetest.New(t, store.SQLite), secret: webhooks.NewSecret()}
	f.box, _ = secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	ca, err := f.st.CreateAccount(ctx, store.NewAccount{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	id := "6f1c1d4e-7a51-4d5e-9a0b-0c1d2e3f4a5b"
	f.hook, err = f.st.CreateWebhook(ctx, store.Webhook{ID: id, AccountID: ca.Account.ID, URL: url,
		Events: []string{store.EventChannelReauthRequired}, Secret: webhooks.SealSecret(f.box, id, f.secret)})
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := f.st.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: "tiktok",
		Name: "t", ExternalAccountID: "x", Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	f.channel = ch.ID
	if err := f.st.SetChannelStatus(ctx, ch.ID, store.ChannelReauthRequired); err != nil {
		t.Fatal(err)
	}
	ds, err := f.st.ListWebhookDeliveries(ctx, ca.Account.ID, f.hook.ID, store.DeliveryFilter{Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %v %v", ds, err)
	}
	f.delivery = ds[0]
	return f
}

func (f *fixture) work(t *testing.T, w *webhooks.Worker, attempt int) error {
	t.Helper()
	return w.Work(context.Background(), &river.Job[webhooks.DeliverArgs]{
		JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: webhooks.MaxAttempts},
		Args:   webhooks.DeliverArgs{DeliveryID: f.delivery.ID},
	})
}

// attempts reads reelay_webhook_attempts_total by outcome.
func attempts(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "reelay_webhook_attempts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	return out
}

func (f *fixture) load(t *testing.T) store.WebhookDelivery {
	t.Helper()
	d, _, err := f.st.LoadWebhookDelivery(context.Background(), f.delivery.ID)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type received struct {
	header http.Header
	body   []byte
}

func TestWorkerDelivers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Clone(), b})
		n := len(got)
		mu.Unlock()
		if n == 1 {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	f := newFixture(t, srv.URL+"/hook")
	reg := prometheus.NewRegistry()
	w := &webhooks.Worker{Store: f.st, Box: f.box, Client: webhooks.NewClient(media.Guard(true, nil)), UserAgent: "reelay-test",
		Metrics: webhooks.NewMetrics(reg)}

	// The first attempt meets a 503: recorded, pending, retried later.
	if err := f.work(t, w, 1); err == nil {
		t.Fatal("a 503 answer did not fail the attempt")
	}
	d := f.load(t)
	if d.Status != store.WebhookPending || d.Attempts != 1 || d.LastStatusCode == nil || *d.LastStatusCode != 503 ||
		!strings.Contains(d.LastError, "503") || d.NextAttemptAt == nil || d.NextAttemptAt.Before(time.Now()) {
		t.Fatalf("after a 503: %+v", d)
	}
	// The second is answered 204: delivered.
	if err := f.work(t, w, 2); err != nil {
		t.Fatal(err)
	}
	d = f.load(t)
	if d.Status != store.WebhookDelivered || d.Attempts != 2 || *d.LastStatusCode != 204 || d.DeliveredAt == nil || d.LastError != "" {
		t.Fatalf("after a 204: %+v", d)
	}
	// A job run again after delivery sends nothing more.
	if err := f.work(t, w, 3); err != nil || len(got) != 2 {
		t.Fatalf("a delivered delivery was sent again: %v, %d requests", err, len(got))
	}
	if n := attempts(t, reg); n["retried"] != 1 || n["delivered"] != 1 || len(n) != 2 {
		t.Errorf("attempts counted: %v", n)
	}

	for i, r := range got {
		ts := r.header.Get("webhook-timestamp")
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || time.Since(time.Unix(sec, 0)) > time.Minute {
			t.Errorf("request %d: webhook-timestamp %q", i, ts)
		}
		if r.header.Get("webhook-id") != f.delivery.EventID || !strings.HasPrefix(f.delivery.EventID, "msg_") {
			t.Errorf("request %d: webhook-id %q, want the event's %q", i, r.header.Get("webhook-id"), f.delivery.EventID)
		}
		if !verify(f.secret, r.header.Get("webhook-id"), ts, r.header.Get("webhook-signature"), r.body) {
			t.Errorf("request %d: signature %q does not verify", i, r.header.Get("webhook-signature"))
		}
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("User-Agent") != "reelay-test" {
			t.Errorf("request %d: headers %v", i, r.header)
		}
		if !bytes.Equal(r.body, f.delivery.Payload) {
			t.Errorf("request %d: body %s, want the stored payload", i, r.body)
		}
		var ev struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.body, &ev); err != nil || ev.Type != store.EventChannelReauthRequired || ev.Data["platform"] != "tiktok" {
			t.Errorf("request %d: body %s", i, r.body)
		}
	}
}

// The SSRF guard applies at delivery too: a URL that leads to a private address (registered
// when it did not, or DNS changed since) is refused at connection, recorded, retried.
func TestWorkerRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	f := newFixture(t, srv.URL)
	w := &webhooks.Worker{Store: f.st, Box: f.box} // the default client: public addresses only
	if err := f.work(t, w, 1); err == nil {
		t.Fatal("a delivery to loopback succeeded")
	}
	d := f.load(t)
	if hits != 0 || d.Status != store.WebhookPending || d.LastStatusCode != nil || !strings.Contains(d.LastError, "does not connect to") {
		t.Fatalf("hits %d, delivery %+v", hits, d)
	}
}

// After the last attempt the delivery is failed; a 410 Gone fails it at once, without retries.
func TestWorkerGivesUp(t *testing.T) {
	t.Parallel()
	status := http.StatusInternalServerError
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	f := newFixture(t, srv.URL)
	reg := prometheus.NewRegistry()
	w := &webhooks.Worker{Store: f.st, Box: f.box, Client: webhooks.NewClient(media.Guard(true, nil)), Metrics: webhooks.NewMetrics(reg)}
	if err := f.work(t, w, webhooks.MaxAttempts); err == nil {
		t.Fatal("a 500 answer did not fail the attempt")
	}
	if d := f.load(t); d.Status != store.WebhookFailed || d.NextAttemptAt != nil || *d.LastStatusCode != 500 {
		t.Fatalf("after the last attempt: %+v", d)
	}
	if n := attempts(t, reg); n["failed"] != 1 || len(n) != 1 {
		t.Errorf("attempts counted: %v", n)
	}

	g := newFixture(t, srv.URL)
	status = http.StatusGone
	err := g.work(t, &webhooks.Worker{Store: g.st, Box: g.box, Client: webhooks.NewClient(media.Guard(true, nil))}, 1)
	var cancel *rivertype.JobCancelError
	if !errors.As(err, &cancel) {
		t.Fatalf("410 Gone: %v, want the job canceled", err)
	}
	if d := g.load(t); d.Status != store.WebhookFailed || *d.LastStatusCode != 410 {
		t.Fatalf("after a 410: %+v", d)
	}
	// A 410 also disables the webhook: the receiver asks for no more events.
	if h := g.webhook(t); h.DisabledAt == nil || !strings.Contains(h.DisabledReason, "410") {
		t.Errorf("after a 410 the webhook is %+v", h)
	}
	// The other one is younger than WebhookDisableAfter: its failure leaves it enabled.
	if h := f.webhook(t); h.DisabledAt != nil {
		t.Errorf("a new webhook was disabled by one failure: %+v", h)
	}
}

func (f *fixture) webhook(t *testing.T) store.Webhook {
	t.Helper()
	h, err := f.st.GetWebhook(context.Background(), f.hook.AccountID, f.hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A webhook that took no delivery for WebhookDisableAfter is disabled when a delivery fails
// for good; its pending deliveries are then dropped unsent, and it records no events until
// it is enabled again.
func TestWorkerDisablesDeadWebhooks(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	ctx := context.Background()
	day := 24 * time.Hour
	for _, tc := range []struct {
		name string
		// delivered: a delivery is taken this long after the webhook was made (0: none);
		// failed: the last attempt of another fails this long after.
		delivered, failed time.Duration
		disabled          bool
	}{
		{"four days old, nothing taken", 0, 4 * day, false},
		{"six days old, nothing taken", 0, 6 * day, true},
		{"one taken six days before", day, 7 * day, true},
		{"one taken the day before", 5 * day, 6 * day, false},
	} {
		f := newFixture(t, srv.URL)
		clock := time.Now()
		w := &webhooks.Worker{Store: f.st, Box: f.box, Client: webhooks.NewClient(media.Guard(true, nil)),
			Now: func() time.Time { return clock }}
		// Each change of the channel's standing to reauth_required is an event.
		event := func() {
			t.Helper()
			for _, st := range []string{store.ChannelActive, store.ChannelReauthRequired} {
				if err := f.st.SetChannelStatus(ctx, f.channel, st); err != nil {
					t.Fatal(err)
				}
			}
		}
		deliveries := func() []store.WebhookDelivery {
			t.Helper()
			ds, err := f.st.ListWebhookDeliveries(ctx, f.hook.AccountID, f.hook.ID, store.DeliveryFilter{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		if tc.delivered > 0 {
			event()
			g := *f
			g.delivery = deliveries()[0] // newest first
			clock = f.hook.CreatedAt.Add(tc.delivered)
			status.Store(http.StatusNoContent)
			if err := g.work(t, w, 1); err != nil {
				t.Fatal(err)
			}
		}
		clock = f.hook.CreatedAt.Add(tc.failed)
		status.Store(http.StatusInternalServerError)
		if err := f.work(t, w, webhooks.MaxAttempts); err == nil {
			t.Fatalf("%s: a 500 did not fail the attempt", tc.name)
		}
		h := f.webhook(t)
		if disabled := h.DisabledAt != nil; disabled != tc.disabled || (disabled && !strings.Contains(h.DisabledReason, "500")) {
			t.Errorf("%s: webhook %+v, want disabled %v", tc.name, h, tc.disabled)
		}
		if !tc.disabled {
			continue
		}
		// A new event records nothing for it; enabled again, it does.
		before := len(deliveries())
		event()
		if n := len(deliveries()); n != before {
			t.Errorf("%s: a disabled webhook recorded %d events", tc.name, n-before)
		}
		if _, err := f.st.SetWebhookEnabled(ctx, f.hook.AccountID, f.hook.ID, true); err != nil {
			t.Fatal(err)
		}
		event()
		if n := len(deliveries()); n != before+1 {
			t.Errorf("%s: enabled again, the webhook recorded %d events, want 1", tc.name, n-before)
		}
	}

	// A delivery pending when its webhook was disabled is dropped unsent.
	f := newFixture(t, srv.URL)
	if err := f.st.DisableWebhook(ctx, f.hook.ID, "the receiver answered 410 Gone", time.Now()); err != nil {
		t.Fatal(err)
	}
	hits.Store(0)
	reg := prometheus.NewRegistry()
	w := &webhooks.Worker{Store: f.st, Box: f.box, Client: webhooks.NewClient(media.Guard(true, nil)), Metrics: webhooks.NewMetrics(reg)}
	if err := f.work(t, w, 1); err != nil {
		t.Fatal(err)
	}
	if d := f.load(t); hits.Load() != 0 || d.Status != store.WebhookFailed || d.Attempts != 0 || !strings.Contains(d.LastError, "disabled") {
		t.Errorf("a delivery of a disabled webhook: %d requests, %+v", hits.Load(), d)
	}
	if n := attempts(t, reg); n["skipped"] != 1 || len(n) != 1 {
		t.Errorf("attempts counted: %v", n)
	}
}

// Redirects are not followed: a 3xx is a failed attempt.
func TestWorkerDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	followed := false
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed = true }))
	defer target.Close()
	srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	defer srv.Close()
	f := newFixture(t, srv.URL)
	w := &webhooks.Worker{Store: f.st, Box: f.box, Client: webhooks.NewClient(media.Guard(true, nil))}
	if err := f.work(t, w, 1); err == nil || followed {
		t.Fatalf("redirect: err %v, followed %v", err, followed)
	}
	if d := f.load(t); *d.LastStatusCode != http.StatusTemporaryRedirect {
		t.Errorf("after a redirect: %+v", d)
	}
}
