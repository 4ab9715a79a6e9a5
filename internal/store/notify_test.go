package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestListenPostSettled: a process hears the posts another process settles, and hears them
// again after its connection was cut.
func TestListenPostSettled(t *testing.T) {
	t.Parallel()
	u := storetest.URL(t, store.Postgres)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func() *store.Store {
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	api, worker := open(), open()

	heard := make(chan string, 1024)
	states := make(chan error, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		api.ListenPostSettled(ctx, func(id string) {
			select {
			case heard <- id:
			default: // full of other schemas' posts: never block the listener
			}
		}, func(err error) { states <- err })
	}()
	nextState := func() error {
		t.Helper()
		select {
		case err := <-states:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("the listener reported nothing")
			return nil
		}
	}
	settle := func(hash string) string {
		t.Helper()
		p := newPost(t, worker, newAccount(t, worker, hash), store.NewPost{ContentHash: hash})
		d := p.Destinations[0]
		// A step that leaves the post processing says nothing; the settling one does.
		if _, _, err := worker.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestUploading}); err != nil {
			t.Fatal(err)
		}
		if _, status, err := worker.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: "v1"}); err != nil || status != store.PostPublished {
			t.Fatalf("settle: %s, %v", status, err)
		}
		return p.ID
	}
	// The channel is the database's: tests in other schemas settle posts too, and those ids
	// are passed over, as a process passes over posts nobody waits for.
	expect := func(id string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case got := <-heard:
				if got == id {
					return
				}
			case <-deadline:
				t.Fatalf("post %s settled unheard", id)
			}
		}
	}

	if err := nextState(); err != nil {
		t.Fatalf("first state: %v", err)
	}
	expect(settle("first"))

	// The connection is cut: the listener says so, connects again, and hears again.
	var ended bool
	if err := worker.WriteDB().QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, int64(api.ListenerPID())).Scan(&ended); err != nil || !ended {
		t.Fatalf("end the listener's connection: %v, %v", ended, err)
	}
	if err := nextState(); err == nil {
		t.Fatal("a cut connection was not reported")
	}
	if err := nextState(); err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	expect(settle("second"))

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not stop with its context")
	}
}
