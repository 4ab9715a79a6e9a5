package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestFiringsAsOne: a batch of starts fires the scheduled posts of current jobs (both jobs of
// one post in the batch fire it once), answers ErrStale to a stale job and to a settled
// destination's without firing their posts, and leaves to be made alone the start of a post
// another transaction holds locked, which it skips rather than waits for, and that of a
// destination it does not find.
func TestFiringsAsOne(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ca := newAccount(t, s, "a")
	at := time.Now().Add(time.Hour)
	both := newPostTo(t, s, ca, "both", 2, &at)
	stale := newPostTo(t, s, ca, "stale", 1, &at)
	locked := newPostTo(t, s, ca, "locked", 1, &at)
	canceled := newPostTo(t, s, ca, "canceled", 2, &at)
	if _, err := s.CancelPost(ctx, ca.Account.ID, canceled.ID); err != nil {
		t.Fatal(err)
	}

	tx, err := s.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM posts WHERE id = $1 FOR UPDATE`, locked.ID); err != nil {
		t.Fatal(err)
	}
	// Were the batch to wait for the lock, this would end the wait, and the test.
	var waited atomic.Bool
	watchdog := time.AfterFunc(10*time.Second, func() { waited.Store(true); tx.Rollback() })
	defer watchdog.Stop()

	job := func(d store.Destination, seq int) store.BatchedStep { return store.BatchedStep{ID: d.ID, Seq: seq} }
	jobs := []store.BatchedStep{
		job(both.Destinations[0], both.Destinations[0].Seq),
		job(stale.Destinations[0], stale.Destinations[0].Seq+1),
		job(locked.Destinations[0], locked.Destinations[0].Seq),
		job(canceled.Destinations[0], canceled.Destinations[0].Seq),
		{ID: uuid.NewString(), Seq: 1},
		job(both.Destinations[1], both.Destinations[1].Seq),
	}
	made, errs := s.StartDeliveriesAsOne(ctx, jobs)
	if waited.Load() {
		t.Fatal("the batch waited for a lock")
	}
	wantMade := []bool{true, true, false, true, false, true}
	wantStale := []bool{false, true, false, true, false, false}
	for i := range jobs {
		if made[i] != wantMade[i] || made[i] && (errors.Is(errs[i], store.ErrStale) != wantStale[i] || !wantStale[i] && errs[i] != nil) {
			t.Errorf("job %d: made %v, %v; want made %v, stale %v", i, made[i], errs[i], wantMade[i], wantStale[i])
		}
	}
	tx.Rollback()

	for _, want := range []struct {
		p      store.Post
		status string
	}{{both, store.PostProcessing}, {stale, store.PostScheduled}, {locked, store.PostScheduled}, {canceled, store.PostCanceled}} {
		if got, err := s.GetPost(ctx, ca.Account.ID, want.p.ID); err != nil || got.Status != want.status {
			t.Errorf("post %s: %s %v, want %s", want.p.ID, got.Status, err, want.status)
		}
	}
	// Made alone, the locked post's start fires it now that the lock is gone.
	ld := locked.Destinations[0]
	if err := s.StartDelivery(ctx, ld.ID, ld.Seq); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetPost(ctx, ca.Account.ID, locked.ID); got.Status != store.PostProcessing {
		t.Errorf("locked post after its start: %s", got.Status)
	}
}
