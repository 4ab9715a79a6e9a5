package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestOpenStepsAsOne: a batch of open steps writes each step that saveOpenStep would (with its
// state, keeping the stored external id and state where the step gives none) and leaves to
// be saved alone the ones it must not write: a stale job's, a settled destination's, one of a
// post not fired yet, and one another transaction holds locked, which it skips rather than
// waits for.
func TestOpenStepsAsOne(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ca := newAccount(t, s, "a")
	live := newPostTo(t, s, ca, "live", 4, nil)
	settled := newPostTo(t, s, ca, "settled", 1, nil)
	d := settled.Destinations[0]
	if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestFailed, Error: "no"}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour)
	notFired := newPostTo(t, s, ca, "later", 1, &at)
	// The first live destination has a state and an external id from an earlier step.
	first := live.Destinations[0]
	if _, _, err := s.SaveStep(ctx, first.ID, first.Seq, store.StepUpdate{Status: store.DestUploading,
		State: []byte(`{"session":"s1"}`), ExternalID: "ext1"}); err != nil {
		t.Fatal(err)
	}
	locked := live.Destinations[3]
	tx, err := s.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM destinations WHERE id = $1 FOR UPDATE`, locked.ID); err != nil {
		t.Fatal(err)
	}

	steps := []store.BatchedStep{
		{first.ID, first.Seq, store.StepUpdate{Status: store.DestProcessing, Message: "processing"}},
		{live.Destinations[1].ID, live.Destinations[1].Seq, store.StepUpdate{Status: store.DestUploading,
			State: []byte(`{"session":"s2"}`), URL: "https://example.com/2", Attempts: 2}},
		{live.Destinations[2].ID, live.Destinations[2].Seq + 1, store.StepUpdate{Status: store.DestUploading}}, // stale
		{locked.ID, locked.Seq, store.StepUpdate{Status: store.DestUploading}},
		{d.ID, d.Seq, store.StepUpdate{Status: store.DestUploading}},
		{notFired.Destinations[0].ID, notFired.Destinations[0].Seq, store.StepUpdate{Status: store.DestUploading}},
	}
	got := s.SaveOpenStepsAsOne(ctx, steps)
	want := []string{live.ID, live.ID, "", "", "", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d (%s): saved under %q, want %q", i, steps[i].Update.Status, got[i], want[i])
		}
	}
	tx.Rollback()

	p, err := s.GetPost(ctx, ca.Account.ID, live.ID)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		status, state, externalID, url, message string
		attempts                                int
	}
	wantRows := []row{
		{store.DestProcessing, `{"session":"s1"}`, "ext1", "", "processing", 0},
		{store.DestUploading, `{"session":"s2"}`, "", "https://example.com/2", "", 2},
		{store.DestQueued, "", "", "", "", 0},
		{store.DestQueued, "", "", "", "", 0},
	}
	for i, dest := range p.Destinations {
		var state string
		if err := s.WriteDB().QueryRowContext(ctx, `SELECT COALESCE(state, '') FROM destinations WHERE id = $1`, dest.ID).Scan(&state); err != nil {
			t.Fatal(err)
		}
		r := row{dest.Status, state, dest.ExternalID, dest.URL, dest.Message, dest.Attempts}
		if r != wantRows[i] {
			t.Errorf("destination %d: %+v, want %+v", i, r, wantRows[i])
		}
	}
}

// TestOpenStepsTogether: many destinations' open steps saved at once through SaveStep, some of
// them by stale jobs, while another transaction holds one destination locked: each ends as
// saved alone would end it, and the locked one's, once the lock is gone, too.
func TestOpenStepsTogether(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ca := newAccount(t, s, "a")
	// Stale jobs take the long way, which locks all the post's destinations: theirs are of
	// another post than the locked one.
	current, stale := newPostTo(t, s, ca, "current", 30, nil), newPostTo(t, s, ca, "stale", 10, nil)
	locked := current.Destinations[0]
	var jobs []stepJob
	for _, d := range current.Destinations[1:] {
		jobs = append(jobs, stepJob{d, store.DestUploading, false})
	}
	for _, d := range stale.Destinations {
		jobs = append(jobs, stepJob{d, store.DestUploading, true})
	}
	saveStepsWhileLocked(t, ctx, s, locked, jobs)
	if _, _, err := s.SaveStep(ctx, locked.ID, locked.Seq, store.StepUpdate{Status: store.DestUploading, ExternalID: locked.ID}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []store.Post{current, stale} {
		got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range got.Destinations {
			want, wantID := store.DestUploading, d.ID
			if p.ID == stale.ID {
				want, wantID = store.DestQueued, ""
			}
			if d.Status != want || d.ExternalID != wantID {
				t.Errorf("destination %d: %s %q, want %s %q", i, d.Status, d.ExternalID, want, wantID)
			}
		}
	}
}

// stepJob is a job's step for saveStepsWhileLocked: the destination to status, by a stale job
// (its seq one past the destination's) or by the current one.
type stepJob struct {
	d      store.Destination
	status string
	stale  bool
}

// saveStepsWhileLocked saves every job's step at once through SaveStep, with the
// destination's id as its external id, while another transaction holds destination locked,
// and fails the test unless each stale job answered ErrStale and every other one nil.
func saveStepsWhileLocked(t *testing.T, ctx context.Context, s *store.Store, locked store.Destination, jobs []stepJob) {
	t.Helper()
	err := whileHeld(t, ctx, func(hold func(context.Context) error) error {
		tx, err := s.WriteDB().BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM destinations WHERE id = $1 FOR UPDATE`, locked.ID); err != nil {
			return err
		}
		return hold(ctx)
	}, func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make([]error, len(jobs))
		for i, j := range jobs {
			wg.Go(func() {
				seq := j.d.Seq
				if j.stale {
					seq++
				}
				_, _, errs[i] = s.SaveStep(ctx, j.d.ID, seq, store.StepUpdate{Status: j.status, ExternalID: j.d.ID})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if jobs[i].stale && !errors.Is(err, store.ErrStale) || !jobs[i].stale && err != nil {
				return fmt.Errorf("job %d: %v (stale: %v)", i, err, jobs[i].stale)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
