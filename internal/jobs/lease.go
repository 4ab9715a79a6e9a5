package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// On PostgreSQL any number of worker processes share the jobs, and one may die (SIGKILL, a lost
// machine) in the middle of some. River's rescuer makes such a job available again only once it
// has run longer than its kind's time limit, which must cover the longest run of a live job:
// an upload's run includes one step of up to ten minutes, because Telegram, Discord, Mastodon,
// Pinterest and Reddit take a video in one request that cannot stop halfway and resume. Jobs
// short enough for a one-minute rescue would cut those uploads on a slow link every time. So a
// lease says whether the process running a job is alive instead, whatever the job's kind:
//
//   - every worker process renews, every renew interval, the attempted_at of the jobs it runs
//     (one statement for all of them), which River's rescuer then never sees as stuck either;
//   - a run whose lease this process could not renew for giveUp (the database unreachable from
//     here) is cancelled, as is a run whose job is no longer its own (rescued meanwhile);
//   - every worker process makes the jobs whose lease is older than the lapse available again,
//     to resume from their stored state.
//
// Only jobs run by processes that renew leases are rescued this way: their River client's name
// begins with leaseClientPrefix. A worker of an earlier version, still running during a rolling
// upgrade, renews nothing, and its jobs are left to River's rescuer, which waits for their
// time limit.
//
// A run that cannot renew is cancelled giveUp after its last renewal was sent (a renew
// interval or two later at worst, as a renewal that gets no answer waits giveUp/3), and its
// job moves at the lapse, three times giveUp after the database stored that renewal: the run
// has some 20 s to stop. A step cut by its context returns at once, and River's completer
// writes the run's end before the job moves. Should that write come later still (the completer
// retries for up to ~37 s), it would end the new run's row, whose own renewal then finds the
// row no longer its own and stops that run too: River runs the job again from the stored state.
//
// SQLite has one worker process, which resumes what it left running when it starts again
// (Config.RescueRunningOnStart): it needs no lease.

// DefaultLease is how long a running job's lease lasts unrenewed before another worker process
// takes the job over: it is renewed every DefaultLease/9 (5 s), and a run that could not renew
// it for DefaultLease/3 (15 s) stops. A dead worker's job moves on within DefaultLease plus a
// renew interval.
const DefaultLease = 45 * time.Second

// leaseClientPrefix begins the River client name of a process that renews its jobs' leases.
const leaseClientPrefix = "reelay_lease_"

// leaseClientID names this process's River client: the prefix, the host and the start time,
// as unique as River's own default name (host and start time) and within its 100 characters.
func leaseClientID(now time.Time) string {
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, ".", "_")
	if len(host) > 50 {
		host = host[:50]
	}
	if host == "" {
		host = "unknown_host"
	}
	return leaseClientPrefix + host + "_" + strings.Replace(now.UTC().Format("2006_01_02T15_04_05.000000"), ".", "_", 1)
}

// errLeaseLost is the cause of the cancellation of a run whose lease lapsed or was taken.
var errLeaseLost = errors.New("jobs: the job's lease was lost")

// rescueMessage is the error River shows for an attempt a lapsed lease ended.
const rescueMessage = "the worker process running this attempt stopped renewing its lease (it died, or lost the database); rescued by reelay"

// leases renews the leases of the jobs this process runs and rescues lapsed ones.
type leases struct {
	pool     *pgxpool.Pool
	clientID func() string
	log      *slog.Logger
	lapse    time.Duration
	renew    time.Duration // interval of renewals and rescues
	giveUp   time.Duration

	mu   sync.Mutex
	runs map[*leaseRun]struct{}

	stop func()
	done chan struct{}
}

// leaseRun is one run of a job in this process.
type leaseRun struct {
	id      int64
	attempt int
	cancel  context.CancelCauseFunc
	// renewed is when the last renewal that covered the run was sent (its start at first):
	// the database's attempted_at is no earlier, so a run that gives up giveUp after it has
	// stopped before the database sees its lease older than giveUp.
	renewed time.Time
}

func newLeases(pool *pgxpool.Pool, lapse time.Duration, log *slog.Logger) *leases {
	if lapse <= 0 {
		lapse = DefaultLease
	}
	return &leases{pool: pool, log: log, lapse: lapse, renew: lapse / 9, giveUp: lapse / 3, runs: map[*leaseRun]struct{}{}}
}

// hold registers a run of job and returns its context, cancelled when the lease is lost, and
// the function that ends the registration.
func (l *leases) hold(ctx context.Context, job *rivertype.JobRow) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	r := &leaseRun{id: job.ID, attempt: job.Attempt, cancel: cancel, renewed: time.Now()}
	l.mu.Lock()
	l.runs[r] = struct{}{}
	l.mu.Unlock()
	return ctx, func() {
		l.mu.Lock()
		delete(l.runs, r)
		l.mu.Unlock()
		cancel(nil)
	}
}

// start renews and rescues until halt.
func (l *leases) start(clientID func() string) {
	l.clientID = clientID
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		// At once: jobs a worker that died before this one started left behind.
		l.rescue(ctx)
		t := time.NewTicker(l.renew)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			l.renewAll(ctx)
			l.rescue(ctx)
		}
	}()
}

// halt stops the renewals; the process no longer runs jobs.
func (l *leases) halt() {
	if l.stop != nil {
		l.stop()
		<-l.done
	}
}

// renewAll renews the lease of every run of this process, and cancels the runs whose lease is
// lost: not renewed for giveUp, or no longer theirs.
func (l *leases) renewAll(ctx context.Context) {
	l.mu.Lock()
	runs := make([]*leaseRun, 0, len(l.runs))
	for r := range l.runs {
		runs = append(runs, r)
	}
	l.mu.Unlock()
	if len(runs) == 0 {
		return
	}
	// In id order, as every renewal of every process locks the rows.
	slices.SortFunc(runs, func(a, b *leaseRun) int { return cmp.Compare(a.id, b.id) })
	ids, attempts := make([]int64, len(runs)), make([]int32, len(runs))
	for i, r := range runs {
		ids[i], attempts[i] = r.id, int32(r.attempt)
	}
	sent := time.Now()
	kept, err := l.renewRows(ctx, ids, attempts)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		l.log.Warn("could not renew the leases of running jobs", "jobs", len(runs), "error", err)
	}
	for _, r := range runs {
		switch {
		case err == nil && kept[[2]int64{r.id, int64(r.attempt)}]:
			r.renewed = sent
		case err == nil:
			l.log.Warn("a running job is no longer this process's: stopping its run", "job", r.id, "attempt", r.attempt)
			r.cancel(fmt.Errorf("%w: the job was taken over by another process", errLeaseLost))
		case time.Since(r.renewed) > l.giveUp:
			l.log.Warn("stopping a job whose lease could not be renewed", "job", r.id, "attempt", r.attempt,
				"unrenewed", time.Since(r.renewed).Round(time.Second))
			r.cancel(fmt.Errorf("%w: not renewed for %s", errLeaseLost, l.giveUp))
		}
	}
}

// renewRows moves the attempted_at of the given runs' jobs to now, for the jobs still running
// in that attempt by this process, and returns those as {id, attempt}.
func (l *leases) renewRows(ctx context.Context, ids []int64, attempts []int32) (map[[2]int64]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.giveUp/3)
	defer cancel()
	rows, err := l.pool.Query(ctx, `UPDATE river_job SET attempted_at = now()
		FROM unnest($1::bigint[], $2::int[]) AS run(id, attempt)
		WHERE river_job.id = run.id AND river_job.attempt = run.attempt AND river_job.state = 'running'
			AND river_job.attempted_by[cardinality(river_job.attempted_by)] = $3
		RETURNING river_job.id, river_job.attempt`, ids, attempts, l.clientID())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	kept := map[[2]int64]bool{}
	for rows.Next() {
		var id int64
		var attempt int32
		if err := rows.Scan(&id, &attempt); err != nil {
			return nil, err
		}
		kept[[2]int64{id, int64(attempt)}] = true
	}
	return kept, rows.Err()
}

// rescue makes the jobs whose lease lapsed available again, as River's rescuer would (an
// error recorded for the attempt; discarded when it was the last, cancelled when a cancel was
// asked for), but at once rather than after a retry delay: the job resumes from its stored
// state within a fetch poll.
func (l *leases) rescue(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, l.giveUp/3)
	defer cancel()
	rows, err := l.pool.Query(ctx, `UPDATE river_job SET
			state = CASE
				WHEN metadata ? 'cancel_attempted_at' THEN 'cancelled'::river_job_state
				WHEN attempt < max_attempts THEN 'available'::river_job_state
				ELSE 'discarded'::river_job_state END,
			finalized_at = CASE WHEN metadata ? 'cancel_attempted_at' OR attempt >= max_attempts THEN now() END,
			scheduled_at = now(),
			errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', $2::text, 'trace', '')),
			metadata = metadata || jsonb_build_object('river:rescue_count', coalesce(
				CASE WHEN jsonb_typeof(metadata -> 'river:rescue_count') = 'number'
					THEN (metadata ->> 'river:rescue_count')::int END, 0) + 1)
		WHERE state = 'running' AND attempted_at < now() - make_interval(secs => $1)
			AND starts_with(attempted_by[cardinality(attempted_by)], $3)
		RETURNING id, kind, state::text`, l.lapse.Seconds(), rescueMessage, leaseClientPrefix)
	if err != nil {
		if ctx.Err() == nil || !errors.Is(err, context.Canceled) {
			l.log.Warn("could not rescue jobs whose lease lapsed", "error", err)
		}
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var kind, state string
		if err := rows.Scan(&id, &kind, &state); err != nil {
			l.log.Warn("could not rescue jobs whose lease lapsed", "error", err)
			return
		}
		l.log.Info("rescued a job whose worker stopped renewing its lease", "job", id, "kind", kind, "state", state,
			"lapse", l.lapse)
	}
	if err := rows.Err(); err != nil {
		l.log.Warn("could not rescue jobs whose lease lapsed", "error", err)
	}
}

// leaseMiddleware runs every job under a lease.
type leaseMiddleware struct {
	river.MiddlewareDefaults
	leases *leases
}

func (m *leaseMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	ctx, release := m.leases.hold(ctx, job)
	defer release()
	err := doInner(ctx)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, errLeaseLost) {
		// River records why the attempt ended.
		return fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}
