package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/jobs"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

type echoArgs struct {
	Tag string `json:"tag"`
}

func (echoArgs) Kind() string { return "test_echo" }

type echoWorker struct {
	river.WorkerDefaults[echoArgs]
	done chan string
}

func (w *echoWorker) Work(ctx context.Context, job *river.Job[echoArgs]) error {
	w.done <- job.Args.Tag
	return nil
}

// A job inserted in a store transaction runs once the transaction commits, and never when it
// rolls back, on each database.
func TestInsertTxRunsAfterCommitOnly(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w := &echoWorker{done: make(chan string, 10)}
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		q, err := jobs.New(s, jobs.Config{Workers: workers,
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(context.Background())

		boom := errors.New("rolled back")
		err = s.InTx(ctx, func(tx *store.Tx) error {
			if _, err := q.InsertTx(ctx, tx, echoArgs{Tag: "rolled-back"}, nil); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		var projectID string
		err = s.InTx(ctx, func(tx *store.Tx) error {
			// A write of the store and the job, committed together.
			if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO accounts (id, name, ai_credits, suspended, created_at)
				VALUES ('6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11', 'a', 0, $1, $2)`, false, time.Now().UTC()); err != nil {
				return err
			}
			projectID = "committed"
			_, err := q.InsertTx(ctx, tx, echoArgs{Tag: projectID}, nil)
			return err
		})
		if err != nil {
			t.Fatalf("InTx = %v", err)
		}
		select {
		case tag := <-w.done:
			if tag != "committed" {
				t.Fatalf("worked %q, want the committed job", tag)
			}
		case <-ctx.Done():
			t.Fatal("the committed job did not run")
		}
		// Give a wrongly inserted rolled-back job the time to run too.
		select {
		case tag := <-w.done:
			t.Fatalf("a second job ran: %q", tag)
		case <-time.After(time.Second):
		}
	})
}

type stampWorker struct {
	river.WorkerDefaults[echoArgs]
	ran chan time.Time
}

func (w *stampWorker) Work(ctx context.Context, job *river.Job[echoArgs]) error {
	w.ran <- time.Now()
	return nil
}

// A job inserted for later runs at its time, not before, and without waiting for River's
// scheduler (every 5 s): scheduled posts fire within a second or two.
func TestScheduledJobRunsOnTime(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		w := &stampWorker{ran: make(chan time.Time, 1)}
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		q, err := jobs.New(s, jobs.Config{Workers: workers,
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer q.Stop(context.Background())
		at := time.Now().Add(1500 * time.Millisecond)
		err = s.InTx(ctx, func(tx *store.Tx) error {
			res, err := q.InsertTx(ctx, tx, echoArgs{Tag: "later"}, &river.InsertOpts{ScheduledAt: at})
			if err == nil && res.Job.State != rivertype.JobStateAvailable {
				t.Errorf("inserted as %s: it would wait for River's scheduler", res.Job.State)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ran := <-w.ran:
			if ran.Before(at) {
				t.Fatalf("ran %s before its time", at.Sub(ran))
			}
			if late := ran.Sub(at); late > 3*time.Second {
				t.Errorf("ran %s late", late)
			}
		case <-ctx.Done():
			t.Fatal("the scheduled job did not run")
		}
	})
}

// An insert-only queue (the API role) inserts kinds that only another process works.
func TestInsertOnlyQueue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		api, err := jobs.New(s, jobs.Config{})
		if err != nil {
			t.Fatal(err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			_, err := api.InsertTx(ctx, tx, echoArgs{Tag: "from-api"}, nil)
			return err
		})
		if err != nil {
			t.Fatalf("insert-only queue refused a job: %v", err)
		}
		w := &echoWorker{done: make(chan string, 1)}
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		worker, err := jobs.New(s, jobs.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := worker.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer worker.Stop(context.Background())
		select {
		case tag := <-w.done:
			if tag != "from-api" {
				t.Fatalf("worked %q", tag)
			}
		case <-ctx.Done():
			t.Fatal("the worker did not run the API's job")
		}
	})
}
