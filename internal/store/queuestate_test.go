package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestQueueState counts a backlog laid out row by row: open destinations due, idle for known
// times, and scheduled in the future; settled ones; pending and delivered webhook deliveries;
// River jobs in every state the gauges tell apart.
func TestQueueState(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		at := time.Now().UTC().Truncate(time.Millisecond)
		ago := func(d time.Duration) time.Time { return at.Add(-d) }
		ca := newAccount(t, s, "q")
		newWebhook(t, s, ca, store.EventPostPublished)
		db := s.WriteDB()
		exec := func(query string, args ...any) {
			t.Helper()
			if _, err := db.ExecContext(ctx, query, args...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}

		// Each destination is one post's, set to the platform, status, last move and schedule
		// given.
		dests := []struct {
			platform, status string
			updated          time.Duration // ago
			scheduled        *time.Time
		}{
			{"youtube", store.DestQueued, 10 * time.Minute, nil},
			{"youtube", store.DestQueued, 3 * time.Minute, nil},
			{"youtube", store.DestUploading, 7 * time.Minute, nil},
			// Scheduled an hour from now: open, not due.
			{"youtube", store.DestQueued, 30 * time.Minute, ptrTime(at.Add(time.Hour))},
			// Due 20 minutes ago, created long before: idle since it became due.
			{"tiktok", store.DestQueued, 2 * time.Hour, ptrTime(ago(20 * time.Minute))},
			// Moved after its scheduled time: idle since that move.
			{"tiktok", store.DestProcessing, 4 * time.Minute, ptrTime(ago(time.Hour))},
			// Settled: not counted, however old.
			{"tiktok", store.DestFailed, 5 * time.Hour, nil},
			{"youtube", store.DestCanceled, 5 * time.Hour, ptrTime(at.Add(time.Hour))},
		}
		for i, d := range dests {
			p := newPostTo(t, s, ca, "q"+string(rune('a'+i)), 1, nil)
			exec(`UPDATE posts SET scheduled_for = $1 WHERE id = $2`, d.scheduled, p.ID)
			exec(`UPDATE destinations SET platform = $1, status = $2, updated_at = $3 WHERE id = $4`,
				d.platform, d.status, ago(d.updated), p.Destinations[0].ID)
		}
		// A published destination settles its post and records a webhook delivery.
		published := newPostTo(t, s, ca, "published", 1, nil)
		if _, _, err := s.SaveStep(ctx, published.Destinations[0].ID, published.Destinations[0].Seq,
			store.StepUpdate{Status: store.DestPublished}); err != nil {
			t.Fatal(err)
		}
		second := newPostTo(t, s, ca, "published2", 1, nil)
		if _, _, err := s.SaveStep(ctx, second.Destinations[0].ID, second.Destinations[0].Seq,
			store.StepUpdate{Status: store.DestPublished}); err != nil {
			t.Fatal(err)
		}
		hooks, err := s.ListWebhooks(ctx, ca.Account.ID)
		if err != nil || len(hooks) != 1 {
			t.Fatalf("webhooks: %v %v", hooks, err)
		}
		ds := deliveries(t, s, ca, hooks[0])
		if len(ds) != 2 {
			t.Fatalf("%d deliveries, want 2", len(ds))
		}
		exec(`UPDATE webhook_deliveries SET created_at = $1 WHERE id = $2`, ago(9*time.Minute), ds[0].ID)
		exec(`UPDATE webhook_deliveries SET created_at = $1 WHERE id = $2`, ago(2*time.Minute), ds[1].ID)
		// The older one is delivered: the pending one left is 2 minutes old.
		if err := s.RecordWebhookAttempt(ctx, ds[0].ID, store.WebhookAttempt{Status: store.WebhookDelivered, StatusCode: 200, At: at}); err != nil {
			t.Fatal(err)
		}

		riverTime := func(t time.Time) any {
			if s.Dialect() == store.SQLite {
				return t.Format("2006-01-02 15:04:05.000")
			}
			return t
		}
		jobs := []struct {
			queue, state string
			scheduled    time.Time
		}{
			{"publish", "available", ago(90 * time.Second)},
			{"publish", "available", ago(time.Second)},
			{"publish", "running", ago(time.Hour)},
			{"publish", "retryable", ago(3 * time.Minute)}, // due: the oldest waiting
			{"publish", "scheduled", at.Add(time.Minute)},
			{"publish", "completed", ago(2 * time.Hour)},
			{"webhooks", "scheduled", at.Add(time.Hour)},
			{"webhooks", "running", ago(time.Minute)},
		}
		for _, j := range jobs {
			var finalized any
			if j.state == "completed" {
				finalized = riverTime(at)
			}
			exec(`INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, finalized_at) VALUES ('{}', 'test', 25, $1, $2, $3, $4)`,
				j.queue, j.state, riverTime(j.scheduled), finalized)
		}

		got, err := s.QueueState(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		want := store.QueueState{
			Destinations: []store.OpenDestinations{
				{Platform: "tiktok", Status: store.DestProcessing, Count: 1, IdleSince: ptrTime(ago(4 * time.Minute))},
				{Platform: "tiktok", Status: store.DestQueued, Count: 1, IdleSince: ptrTime(ago(20 * time.Minute))},
				{Platform: "youtube", Status: store.DestQueued, Count: 3, IdleSince: ptrTime(ago(10 * time.Minute))},
				{Platform: "youtube", Status: store.DestUploading, Count: 1, IdleSince: ptrTime(ago(7 * time.Minute))},
			},
			Jobs: []store.JobBacklog{
				{Queue: "publish", Available: 2, Due: 1, Scheduled: 1, Running: 1, OldestDue: ptrTime(ago(3 * time.Minute))},
				{Queue: "webhooks", Scheduled: 1, Running: 1},
			},
			WebhooksPending:      1,
			OldestWebhookPending: ptrTime(ago(2 * time.Minute)),
		}
		if g, w := describeQueueState(got, at), describeQueueState(want, at); g != w {
			t.Errorf("queue state:\n%s\nwant:\n%s", g, w)
		}

		// Nothing open, nothing waiting: empty, without a time.
		empty := storetest.New(t, s.Dialect())
		if got, err := empty.QueueState(ctx, at); err != nil || describeQueueState(got, at) != describeQueueState(store.QueueState{}, at) {
			t.Errorf("empty database: %s %v", describeQueueState(got, at), err)
		}
	})
}

// TestQueueStateUsesIndexes: the backlog's reads find the open destinations and the pending
// deliveries through their partial indexes, not by reading every row ever written.
func TestQueueStateUsesIndexes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		destinations, webhooks, err := s.QueueStatePlans(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(destinations, "destinations_open_idx") {
			t.Errorf("open destinations are not read through destinations_open_idx:\n%s", destinations)
		}
		if !strings.Contains(webhooks, "webhook_deliveries_pending_idx") {
			t.Errorf("pending deliveries are not read through webhook_deliveries_pending_idx:\n%s", webhooks)
		}
	})
}

// describeQueueState writes qs one line per entry, its times as how long before at they are.
func describeQueueState(qs store.QueueState, at time.Time) string {
	age := func(t *time.Time) string {
		if t == nil {
			return "none"
		}
		return at.Sub(*t).String()
	}
	var b strings.Builder
	for _, d := range qs.Destinations {
		fmt.Fprintf(&b, "destinations %s %s: %d, idle %s\n", d.Platform, d.Status, d.Count, age(d.IdleSince))
	}
	for _, j := range qs.Jobs {
		fmt.Fprintf(&b, "jobs %s: available %d due %d scheduled %d running %d, oldest due %s\n",
			j.Queue, j.Available, j.Due, j.Scheduled, j.Running, age(j.OldestDue))
	}
	fmt.Fprintf(&b, "webhooks pending %d, oldest %s\n", qs.WebhooksPending, age(qs.OldestWebhookPending))
	return b.String()
}
