package jobs_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/jobs"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// testLease is the lease of the tests' queues: renewed every 0.67 s, given up after 2 s.
const testLease = 6 * time.Second

type holdArgs struct {
	Tag string `json:"tag"`
	// For is how long the run lasts; 0 until its context ends.
	For time.Duration `json:"for"`
}

func (holdArgs) Kind() string { return "test_hold" }

// holdRun is what one run of a holdArgs job saw.
type holdRun struct {
	tag     string
	started time.Time
	ended   time.Time
	cause   error // of the run's context when it ended early
}

// holdWorker runs each job for its For, or until its context ends, and reports each run.
type holdWorker struct {
	river.WorkerDefaults[holdArgs]
	started chan string
	mu      sync.Mutex
	runs    []holdRun
}

func newHoldWorker() *holdWorker { return &holdWorker{started: make(chan string, 10)} }

func (w *holdWorker) Timeout(*river.Job[holdArgs]) time.Duration { return time.Minute }

func (w *holdWorker) Work(ctx context.Context, job *river.Job[holdArgs]) error {
	run := holdRun{tag: job.Args.Tag, started: time.Now()}
	w.started <- job.Args.Tag
	var timer <-chan time.Time
	if job.Args.For > 0 {
		timer = time.After(job.Args.For)
	}
	select {
	case <-timer:
	case <-ctx.Done():
		run.cause = context.Cause(ctx)
	}
	run.ended = time.Now()
	w.mu.Lock()
	w.runs = append(w.runs, run)
	w.mu.Unlock()
	return run.cause
}

func (w *holdWorker) ranRuns() []holdRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]holdRun(nil), w.runs...)
}

// startWorkerQueue starts a worker process's queue on s, stopped at cleanup.
func startWorkerQueue(t *testing.T, s *store.Store, w *holdWorker) *jobs.Queue {
	t.Helper()
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	q, err := jobs.New(s, jobs.Config{Workers: workers, Lease: testLease,
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(ctx)
	})
	return q
}

// insertJob inserts a holdArgs job from an insert-only queue (the API role) and returns its id.
func insertJob(t *testing.T, s *store.Store, args holdArgs) int64 {
	t.Helper()
	api, err := jobs.New(s, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	err = s.InTx(context.Background(), func(tx *store.Tx) error {
		res, err := api.InsertTx(context.Background(), tx, args, nil)
		if err == nil {
			id = res.Job.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The jobs a dead worker process left running move on once their lease lapses, and not
// before: a job whose lease is fresh belongs to a live process. A job run by a process that
// renews no lease (an earlier version, during a rolling upgrade) is left to River's rescuer.
func TestLeaseRescuesDeadWorkersJobs(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, store.Postgres)
	ctx := context.Background()
	lapsed := insertJob(t, s, holdArgs{Tag: "lapsed", For: time.Millisecond})
	fresh := insertJob(t, s, holdArgs{Tag: "fresh", For: time.Millisecond})
	unleased := insertJob(t, s, holdArgs{Tag: "unleased", For: time.Millisecond})
	// As a killed process leaves them: running, by a client that no longer renews them, one
	// last renewed long ago, the other just now; and one started long ago by a client of a
	// process that never renews (River's own rescuer waits an hour here).
	left := []struct {
		id     int64
		ago    time.Duration
		client string
	}{
		{lapsed, 10 * time.Minute, "reelay_lease_dead_worker"},
		{fresh, 0, "reelay_lease_dead_worker"},
		{unleased, 10 * time.Minute, "worker_2026_01_02T03_04_05_000000"},
	}
	for _, j := range left {
		_, err := s.PgPool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
				attempted_at = now() - make_interval(secs => $2), attempted_by = ARRAY[$3]
			WHERE id = $1`, j.id, j.ago.Seconds(), j.client)
		if err != nil {
			t.Fatal(err)
		}
	}
	var freshAt time.Time
	if err := s.PgPool().QueryRow(ctx, `SELECT attempted_at FROM river_job WHERE id = $1`, fresh).Scan(&freshAt); err != nil {
		t.Fatal(err)
	}

	w := newHoldWorker()
	started := time.Now()
	startWorkerQueue(t, s, w)
	ran := map[string]time.Time{}
	deadline := time.After(testLease + 20*time.Second)
	for ran["lapsed"].IsZero() || ran["fresh"].IsZero() {
		select {
		case tag := <-w.started:
			ran[tag] = time.Now()
		case <-deadline:
			t.Fatalf("after %s only %v ran: a dead worker's jobs did not move on", time.Since(started).Round(time.Millisecond), ran)
		}
	}
	select {
	case tag := <-w.started:
		ran[tag] = time.Now()
	case <-time.After(testLease / 3):
	}
	if !ran["unleased"].IsZero() {
		t.Errorf("the job of a process that renews no lease was taken over after %s", ran["unleased"].Sub(started))
	}
	if early := freshAt.Add(testLease).Sub(ran["fresh"]); early > 0 {
		t.Errorf("the job renewed %s before the worker started ran %s before its lease lapsed", started.Sub(freshAt), early)
	}
	t.Logf("lapsed job ran %s after the worker started; fresh one %s after its last renewal (lease %s)",
		ran["lapsed"].Sub(started).Round(time.Millisecond), ran["fresh"].Sub(freshAt).Round(time.Millisecond), testLease)

	// River shows why the dead worker's attempt ended.
	var msg string
	if err := s.PgPool().QueryRow(ctx, `SELECT errors[1]->>'error' FROM river_job WHERE id = $1`, lapsed).Scan(&msg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "stopped renewing its lease") {
		t.Errorf("the rescued attempt's error is %q", msg)
	}
}

// A job that runs for longer than the lease, in one of two worker processes, is never taken
// over by the other while it runs: its process renews the lease.
func TestLeaseKeepsLiveRunsJob(t *testing.T) {
	t.Parallel()
	s := storetest.New(t, store.Postgres)
	w := newHoldWorker()
	startWorkerQueue(t, s, w)
	startWorkerQueue(t, s, w)
	insertJob(t, s, holdArgs{Tag: "long", For: 2*testLease + testLease/2})
	select {
	case <-w.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not start")
	}
	deadline := time.Now().Add(3*testLease + 30*time.Second)
	for len(w.ranRuns()) == 0 && time.Now().Before(deadline) {
		select {
		case tag := <-w.started:
			t.Errorf("job %q started again while its first run went on", tag)
		case <-time.After(100 * time.Millisecond):
		}
	}
	runs := w.ranRuns()
	if len(runs) != 1 {
		t.Fatalf("%d runs ended, want 1: %+v", len(runs), runs)
	}
	if runs[0].cause != nil {
		t.Errorf("the run was stopped after %s: %v", runs[0].ended.Sub(runs[0].started), runs[0].cause)
	}
	select {
	case tag := <-w.started:
		t.Errorf("job %q ran a second time", tag)
	case <-time.After(testLease / 3):
	}
}

// A run stops when its lease is lost: its job was taken over by another process, or this
// process could not renew the lease for a third of it (so that it has stopped well before
// another process may take the job).
func TestLeaseLostStopsRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// lose makes the running job's lease lost and returns what undoes it.
		lose  func(t *testing.T, s *store.Store, id int64) func()
		cause string
	}{
		{
			name: "taken over",
			lose: func(t *testing.T, s *store.Store, id int64) func() {
				// What a rescue and another process's fetch do to the row.
				_, err := s.PgPool().Exec(context.Background(), `UPDATE river_job SET attempt = attempt + 1,
					attempted_at = now(), attempted_by = array_append(attempted_by, 'another-worker') WHERE id = $1`, id)
				if err != nil {
					t.Fatal(err)
				}
				return func() {}
			},
			cause: "taken over by another process",
		},
		{
			name: "database not answering",
			lose: func(t *testing.T, s *store.Store, id int64) func() {
				// The renewal waits for the row, as it would for an unreachable server.
				tx, err := s.PgPool().Begin(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tx.Exec(context.Background(), `SELECT 1 FROM river_job WHERE id = $1 FOR UPDATE`, id); err != nil {
					t.Fatal(err)
				}
				return func() { tx.Rollback(context.Background()) }
			},
			cause: "not renewed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := storetest.New(t, store.Postgres)
			w := newHoldWorker()
			startWorkerQueue(t, s, w)
			id := insertJob(t, s, holdArgs{Tag: "held"})
			select {
			case <-w.started:
			case <-time.After(30 * time.Second):
				t.Fatal("the job did not start")
			}
			lost := time.Now()
			undo := tc.lose(t, s, id)
			defer undo()
			deadline := time.Now().Add(testLease)
			for len(w.ranRuns()) == 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			runs := w.ranRuns()
			if len(runs) != 1 {
				t.Fatalf("the run did not stop within %s of losing its lease", testLease)
			}
			if runs[0].cause == nil || !strings.Contains(runs[0].cause.Error(), tc.cause) {
				t.Errorf("the run stopped with %v, want a lost lease (%q)", runs[0].cause, tc.cause)
			}
			t.Logf("stopped %s after the lease was lost: %v", runs[0].ended.Sub(lost).Round(time.Millisecond), runs[0].cause)
		})
	}
}
