package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func newWebhook(t *testing.T, s *store.Store, ca store.CreatedAccount, events ...string) store.Webhook {
	t.Helper()
	w, err := s.CreateWebhook(context.Background(), store.Webhook{AccountID: ca.Account.ID, URL: "https://hooks.example/x",
		Events: events, Secret: []byte("sealed")})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// deliveries lists every delivery of a webhook, oldest first.
func deliveries(t *testing.T, s *store.Store, ca store.CreatedAccount, w store.Webhook) []store.WebhookDelivery {
	t.Helper()
	ds, err := s.ListWebhookDeliveries(context.Background(), ca.Account.ID, w.ID, store.DeliveryFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(ds)
	return ds
}

type eventBody struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

func decodeEvent(t *testing.T, d store.WebhookDelivery) (eventBody, map[string]any) {
	t.Helper()
	var e eventBody
	if err := json.Unmarshal(d.Payload, &e); err != nil {
		t.Fatalf("payload %s: %v", d.Payload, err)
	}
	var data map[string]any
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatalf("data %s: %v", e.Data, err)
	}
	return e, data
}

// recorder is a WebhookEnqueuer that remembers what it was handed and checks that the rows are
// there, inside the transaction it runs in.
type recorder struct {
	mu   sync.Mutex
	ids  []string
	fail error
	t    *testing.T
}

func (r *recorder) enqueue(ctx context.Context, tx *store.Tx, ids []string) error {
	for _, id := range ids {
		var n int
		if err := tx.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
			r.t.Errorf("delivery %s not visible in the hook's transaction: %d %v", id, n, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.ids = append(r.ids, ids...)
	return nil
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ids)
}

func countDeliveries(t *testing.T, s *store.Store) int {
	t.Helper()
	var n int
	if err := s.JobsDB().QueryRow(`SELECT COUNT(*) FROM webhook_deliveries`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The state changes that announce events record them in their own transaction, for the
// account's subscribed webhooks only, and hand them to the enqueuer there.
func TestWebhookEventsRecordedWithTheChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		rec := &recorder{t: t}
		s.SetWebhookEnqueuer(rec.enqueue)
		a := newAccount(t, s, "alice")
		b := newAccount(t, s, "bob")

		// Without webhooks, publishing writes no delivery and calls no hook.
		p := newPost(t, s, a, store.NewPost{ContentHash: "h0"})
		d := p.Destinations[0]
		if _, st, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, URL: "https://yt/1"}); err != nil || st != store.PostPublished {
			t.Fatalf("publish: %s %v", st, err)
		}
		if n := countDeliveries(t, s); n != 0 || rec.count() != 0 {
			t.Fatalf("no webhooks, yet %d deliveries and %d enqueued", n, rec.count())
		}

		settled := newWebhook(t, s, a, store.EventPostPublished, store.EventPostScheduled, store.EventChannelReauthRequired)
		failures := newWebhook(t, s, a, store.EventPostFailed)
		bobs := newWebhook(t, s, b, store.WebhookEvents...)

		// A post created for later: post.scheduled.
		at := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		sp := newPost(t, s, a, store.NewPost{ContentHash: "h1", ScheduledFor: &at})
		ds := deliveries(t, s, a, settled)
		if len(ds) != 1 || ds[0].EventType != store.EventPostScheduled || ds[0].Status != store.WebhookPending || ds[0].Attempts != 0 {
			t.Fatalf("after scheduling: %+v", ds)
		}
		ev, data := decodeEvent(t, ds[0])
		if ev.Type != store.EventPostScheduled || ev.Timestamp.IsZero() || data["id"] != sp.ID || data["status"] != "scheduled" ||
			data["project_id"] != a.Project.ID || data["scheduled_for"] == nil {
			t.Errorf("post.scheduled payload: %s", ds[0].Payload)
		}
		if dests, _ := data["destinations"].([]any); len(dests) != 1 || dests[0].(map[string]any)["status"] != "queued" {
			t.Errorf("post.scheduled destinations: %s", ds[0].Payload)
		}

		// A post that publishes: post.published, once, when it settles (not at each step).
		q := newPost(t, s, a, store.NewPost{ContentHash: "h2"})
		qd := q.Destinations[0]
		if err := s.StartDelivery(ctx, qd.ID, qd.Seq); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SaveStep(ctx, qd.ID, qd.Seq, store.StepUpdate{Status: store.DestUploading}); err != nil {
			t.Fatal(err)
		}
		if n := len(deliveries(t, s, a, settled)); n != 1 {
			t.Fatalf("an unsettled step announced something: %d deliveries", n)
		}
		if _, _, err := s.SaveStep(ctx, qd.ID, qd.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: "v1", URL: "https://yt/v1"}); err != nil {
			t.Fatal(err)
		}
		ds = deliveries(t, s, a, settled)
		if len(ds) != 2 || ds[1].EventType != store.EventPostPublished {
			t.Fatalf("after publishing: %+v", ds)
		}
		_, data = decodeEvent(t, ds[1])
		dest := data["destinations"].([]any)[0].(map[string]any)
		if data["id"] != q.ID || data["status"] != "published" || data["published_at"] == nil ||
			dest["url"] != "https://yt/v1" || dest["status"] != "published" || dest["channel_id"] != qd.ChannelID ||
			dest["platform"] != "youtube" || dest["error"] != nil {
			t.Errorf("post.published payload: %s", ds[1].Payload)
		}

		// A post that fails goes to the webhook subscribed to failures only.
		f := newPost(t, s, a, store.NewPost{ContentHash: "h3"})
		fd := f.Destinations[0]
		if _, _, err := s.SaveStep(ctx, fd.ID, fd.Seq, store.StepUpdate{Status: store.DestFailed, Error: "too long", ErrorCategory: "invalid_media"}); err != nil {
			t.Fatal(err)
		}
		if n := len(deliveries(t, s, a, settled)); n != 2 {
			t.Errorf("post.failed reached a webhook not subscribed to it: %d", n)
		}
		fs := deliveries(t, s, a, failures)
		if len(fs) != 1 || fs[0].EventType != store.EventPostFailed {
			t.Fatalf("failures webhook: %+v", fs)
		}
		_, data = decodeEvent(t, fs[0])
		dest = data["destinations"].([]any)[0].(map[string]any)
		if data["status"] != "failed" || dest["error"] != "too long" || dest["error_category"] != "invalid_media" {
			t.Errorf("post.failed payload: %s", fs[0].Payload)
		}
		// A retry that fails again is a new failure, announced again.
		if _, err := s.RetryPost(ctx, a.Account.ID, f.ID, func(*store.Tx, store.Post) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SaveStep(ctx, fd.ID, fd.Seq+1, store.StepUpdate{Status: store.DestFailed, Error: "still too long"}); err != nil {
			t.Fatal(err)
		}
		if n := len(deliveries(t, s, a, failures)); n != 2 {
			t.Errorf("failure after retry: %d deliveries, want 2", n)
		}

		// A channel that becomes reauth_required: announced once however often it is marked.
		ch := sp.Destinations[0].ChannelID
		for range 2 {
			if err := s.SetChannelStatus(ctx, ch, store.ChannelReauthRequired); err != nil {
				t.Fatal(err)
			}
		}
		ds = deliveries(t, s, a, settled)
		if len(ds) != 3 || ds[2].EventType != store.EventChannelReauthRequired {
			t.Fatalf("after reauth_required: %+v", ds)
		}
		_, data = decodeEvent(t, ds[2])
		if data["id"] != ch || data["platform"] != "youtube" || data["project_id"] != a.Project.ID || data["status"] != "reauth_required" {
			t.Errorf("channel.reauth_required payload: %s", ds[2].Payload)
		}
		// Active again, then a refused token refresh: announced again.
		if err := s.SetChannelStatus(ctx, ch, store.ChannelActive); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.AcquireRefreshLease(ctx, ch, time.Now().Add(time.Minute)); err != nil || !ok {
			t.Fatalf("lease: %v %v", ok, err)
		}
		if err := s.ReleaseRefreshLease(ctx, ch, store.ChannelReauthRequired); err != nil {
			t.Fatal(err)
		}
		if ds = deliveries(t, s, a, settled); len(ds) != 4 || ds[3].EventType != store.EventChannelReauthRequired {
			t.Fatalf("after a refused refresh: %+v", ds)
		}

		// Every delivery went to the enqueuer, and none to the other account's webhook.
		if n := countDeliveries(t, s); n != 6 || rec.count() != 6 {
			t.Errorf("%d deliveries, %d enqueued, want 6", n, rec.count())
		}
		if n := len(deliveries(t, s, b, bobs)); n != 0 {
			t.Errorf("bob's webhook received %d of alice's events", n)
		}
		// One event id per event, never shared between events.
		seen := map[string]bool{}
		for _, w := range []store.Webhook{settled, failures} {
			for _, d := range deliveries(t, s, a, w) {
				if seen[d.EventID] || len(d.EventID) < 10 {
					t.Errorf("event id %q reused or short", d.EventID)
				}
				seen[d.EventID] = true
			}
		}

		// The hook runs in the change's transaction: when it fails, the change does not happen.
		rec.fail = errors.New("queue down")
		g := newPost(t, s, a, store.NewPost{ContentHash: "h4"})
		gd := g.Destinations[0]
		if _, _, err := s.SaveStep(ctx, gd.ID, gd.Seq, store.StepUpdate{Status: store.DestPublished}); !errors.Is(err, rec.fail) {
			t.Fatalf("SaveStep with a failing hook: %v", err)
		}
		if got, _ := s.GetPost(ctx, a.Account.ID, g.ID); got.Status != store.PostProcessing || got.Destinations[0].Status != store.DestQueued {
			t.Errorf("the change survived its hook's failure: %s / %s", got.Status, got.Destinations[0].Status)
		}
		if n := countDeliveries(t, s); n != 6 {
			t.Errorf("a rolled-back change left deliveries: %d", n)
		}
	})
}

func TestWebhookRegistry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		b := newAccount(t, s, "bob")
		w := newWebhook(t, s, a, store.EventPostFailed, store.EventPostPublished)
		got, err := s.GetWebhook(ctx, a.Account.ID, w.ID)
		if err != nil || got.URL != w.URL || !slices.Equal(got.Events, w.Events) || string(got.Secret) != "sealed" || !got.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("GetWebhook = %+v, %v", got, err)
		}
		// Another account sees nothing of it.
		if _, err := s.GetWebhook(ctx, b.Account.ID, w.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetWebhook across accounts: %v", err)
		}
		if _, err := s.ListWebhookDeliveries(ctx, b.Account.ID, w.ID, store.DeliveryFilter{Limit: 10}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deliveries across accounts: %v", err)
		}
		if err := s.DeleteWebhook(ctx, b.Account.ID, w.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("DeleteWebhook across accounts: %v", err)
		}
		if list, _ := s.ListWebhooks(ctx, b.Account.ID); len(list) != 0 {
			t.Errorf("bob lists %d webhooks", len(list))
		}

		// Deliveries page newest first; attempts are recorded.
		var ids []string
		for i := range 5 {
			f := newPost(t, s, a, store.NewPost{ContentHash: "h" + string(rune('a'+i))})
			fd := f.Destinations[0]
			if _, _, err := s.SaveStep(ctx, fd.ID, fd.Seq, store.StepUpdate{Status: store.DestFailed}); err != nil {
				t.Fatal(err)
			}
		}
		page, err := s.ListWebhookDeliveries(ctx, a.Account.ID, w.ID, store.DeliveryFilter{Limit: 3})
		if err != nil || len(page) != 3 {
			t.Fatalf("first page: %d %v", len(page), err)
		}
		last := page[2]
		rest, err := s.ListWebhookDeliveries(ctx, a.Account.ID, w.ID, store.DeliveryFilter{Limit: 3, AfterTime: &last.CreatedAt, AfterID: last.ID})
		if err != nil || len(rest) != 2 {
			t.Fatalf("second page: %d %v", len(rest), err)
		}
		for _, d := range append(page, rest...) {
			ids = append(ids, d.ID)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != 5 {
			t.Errorf("pages overlap: %v", ids)
		}

		next := time.Now().Add(time.Minute)
		if err := s.RecordWebhookAttempt(ctx, ids[0], store.WebhookAttempt{Status: store.WebhookPending, StatusCode: 500,
			Error: "the receiver answered 500", NextAttemptAt: &next, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordWebhookAttempt(ctx, ids[0], store.WebhookAttempt{Status: store.WebhookDelivered, StatusCode: 204, At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		// A settled delivery does not change any more.
		if err := s.RecordWebhookAttempt(ctx, ids[0], store.WebhookAttempt{Status: store.WebhookFailed, Error: "late", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		d, hook, err := s.LoadWebhookDelivery(ctx, ids[0])
		if err != nil || hook.ID != w.ID || d.Status != store.WebhookDelivered || d.Attempts != 2 || d.LastStatusCode == nil ||
			*d.LastStatusCode != 204 || d.LastError != "" || d.DeliveredAt == nil || d.NextAttemptAt != nil {
			t.Fatalf("after two attempts: %+v %v", d, err)
		}
		if err := s.RecordWebhookAttempt(ctx, ids[1], store.WebhookAttempt{Status: store.WebhookFailed, Error: "no answer", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if d, _, _ := s.LoadWebhookDelivery(ctx, ids[1]); d.Status != store.WebhookFailed || d.LastStatusCode != nil || d.LastError != "no answer" || d.DeliveredAt != nil {
			t.Errorf("failed delivery: %+v", d)
		}

		// Settled deliveries leave the log after the retention; pending ones stay.
		cutoff := time.Now().Add(-store.WebhookDeliveryRetention)
		if n, err := s.DeleteSettledWebhookDeliveries(ctx, cutoff); err != nil || n != 0 {
			t.Errorf("deleted %d recent deliveries (%v)", n, err)
		}
		if _, err := s.WriteDB().ExecContext(ctx, `UPDATE webhook_deliveries SET updated_at = $1`, cutoff.Add(-time.Minute).UTC()); err != nil {
			t.Fatal(err)
		}
		if n, err := s.DeleteSettledWebhookDeliveries(ctx, cutoff); err != nil || n != 2 {
			t.Errorf("deleted %d old deliveries, want the delivered and the failed one (%v)", n, err)
		}
		if left := deliveries(t, s, a, w); len(left) != 3 || slices.ContainsFunc(left, func(d store.WebhookDelivery) bool { return d.Status != store.WebhookPending }) {
			t.Errorf("left after the retention: %+v", left)
		}

		// Deleting the webhook takes its deliveries with it.
		if err := s.DeleteWebhook(ctx, a.Account.ID, w.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.LoadWebhookDelivery(ctx, ids[2]); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delivery of a deleted webhook: %v", err)
		}
		if _, err := s.GetWebhook(ctx, a.Account.ID, w.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted webhook still there: %v", err)
		}
		if _, _, err := s.LoadWebhookDelivery(ctx, uuid.NewString()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown delivery: %v", err)
		}

		// An account holds no more webhooks than its cap (caps_test.go tests the caps in full).
		s.SetCaps(store.Caps{Webhooks: 3})
		held, _ := s.ListWebhooks(ctx, b.Account.ID)
		for range 3 - len(held) {
			newWebhook(t, s, b, store.EventPostFailed)
		}
		var capped *store.CapError
		if _, err := s.CreateWebhook(ctx, store.Webhook{AccountID: b.Account.ID, URL: "https://x", Events: []string{store.EventPostFailed},
			Secret: []byte("s")}); !errors.As(err, &capped) || capped.Kind != store.CappedWebhooks {
			t.Errorf("webhook over the cap: %v", err)
		}
		if list, _ := s.ListWebhooks(ctx, b.Account.ID); len(list) != 3 {
			t.Errorf("bob has %d webhooks", len(list))
		}
	})
}
