package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestChannelCheckFailedOnce: a failed check announces channel.check_failed the first time
// only; a passing check in between, and the next failure announces again. An inconclusive
// check (the platform did not answer) changes nothing but when the channel was checked, which
// ChannelsDueForCheck reads.
func TestChannelCheckFailedOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "alice")
		hook := newWebhook(t, s, a, store.EventChannelCheckFailed)
		ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: a.Account.ID, ProjectID: a.Project.ID, Platform: "linkedin",
			Name: "n", ExternalAccountID: "x", Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		due := func() int {
			t.Helper()
			cs, err := s.ChannelsDueForCheck(ctx, now.Add(-time.Hour), 10)
			if err != nil {
				t.Fatal(err)
			}
			return len(cs)
		}
		if due() != 1 {
			t.Fatal("a channel never checked is not due")
		}
		failed := []store.CheckLine{{Name: "api_version", Detail: "426 NONEXISTENT_VERSION", Fix: "update reelay"}}
		steps := []struct {
			conclusive bool
			failed     []store.CheckLine
			events     int
		}{
			{true, failed, 1},  // first failure: announced
			{true, failed, 1},  // the same failure again: not announced
			{false, nil, 1},    // the platform did not answer: still failed, nothing sent
			{true, failed, 1},  // still failing
			{true, nil, 1},     // recovered
			{true, failed, 2},  // fails again: announced again
			{false, failed, 2}, // inconclusive
		}
		for i, st := range steps {
			if err := s.RecordChannelCheck(ctx, ch.ID, now, st.conclusive, st.failed); err != nil {
				t.Fatal(err)
			}
			if ds := deliveries(t, s, a, hook); len(ds) != st.events {
				t.Fatalf("step %d: %d events, want %d", i, len(ds), st.events)
			}
		}
		ds := deliveries(t, s, a, hook)
		ev, data := decodeEvent(t, ds[1])
		if ev.Type != store.EventChannelCheckFailed || data["id"] != ch.ID || data["platform"] != "linkedin" {
			t.Errorf("event %s %v", ev.Type, data)
		}
		if f, _ := data["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["fix"] != "update reelay" {
			t.Errorf("failed checks in the event: %v", data["failed"])
		}
		if due() != 0 {
			t.Error("a channel checked just now is due again")
		}
	})
}
