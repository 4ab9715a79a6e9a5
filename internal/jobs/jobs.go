// Package jobs runs reelay's background work on River, on whichever database the store uses:
// River's SQLite driver for the embedded default, its pgx driver on PostgreSQL. Jobs are always
// inserted in the same transaction as the state they act on, so that a job exists exactly when
// its state was committed.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/store"
)

// Config says what a Queue works on. With no Queues it only inserts (the API role).
type Config struct {
	Workers      *river.Workers
	Queues       map[string]river.QueueConfig
	PeriodicJobs []*river.PeriodicJob
	Logger       *slog.Logger
	// FetchPollInterval bounds how long an available job waits when no notification arrives.
	FetchPollInterval time.Duration
	// JobTimeout is the time limit of a job whose worker names none (River cancels the run's
	// context at it); workers with a Timeout method have their own.
	JobTimeout time.Duration
	// LongestTimeout is the longest time limit of any worker. River's own rescuer leaves a
	// running job alone for a minute more, so that it never takes a job from a live run; on
	// PostgreSQL the lease (Lease) moves a dead worker's jobs on long before.
	LongestTimeout time.Duration
	// Lease is how long a running job's lease lasts unrenewed on PostgreSQL before another
	// worker process takes it over (DefaultLease when zero); see lease.go.
	Lease time.Duration
	// MaxAttempts bounds River's retries of a job that returns an error.
	MaxAttempts int
	// RescueRunningOnStart makes jobs left running by a dead process available again when the
	// queue starts. Only for a process that is the database's sole worker (SQLite, locked):
	// on PostgreSQL the other workers take a dead one's jobs over when their lease lapses.
	RescueRunningOnStart bool
}

// Queue inserts and works jobs. Exactly one of the two clients is set, by dialect.
type Queue struct {
	sqlite *river.Client[*sql.Tx]
	pg     *river.Client[pgx.Tx]
	// working is false for an insert-only queue, which has nothing to start.
	working bool
	st      *store.Store
	rescue  bool
	log     *slog.Logger
	// sqliteDriver hurries the listener after this process commits a job (SQLite only).
	sqliteDriver *sqliteDriver
	// leases renews the leases of the jobs this process runs (PostgreSQL, working only).
	leases *leases
	// stopper tells the running jobs that the process stops, and cuts them (stop.go).
	stopper *stopper
}

// New builds a Queue on the store's database.
func New(st *store.Store, cfg Config) (*Queue, error) {
	rc := &river.Config{
		Workers:           cfg.Workers,
		Queues:            cfg.Queues,
		PeriodicJobs:      cfg.PeriodicJobs,
		Logger:            cfg.Logger,
		FetchPollInterval: cfg.FetchPollInterval,
		FetchCooldown:     50 * time.Millisecond,
		JobTimeout:        cfg.JobTimeout,
		MaxAttempts:       cfg.MaxAttempts,
	}
	stop := newStopper()
	rc.Middleware = []rivertype.Middleware{&onTime{}, &stopMiddleware{s: stop}}
	// Without workers there is nothing to work: the queue only inserts (River refuses to start
	// queues with no worker).
	if rc.Workers == nil {
		rc.Workers = river.NewWorkers()
		rc.Queues = nil
		// The kinds it inserts are registered with the workers of other processes.
		rc.SkipUnknownJobCheck = true
	}
	if rc.Logger == nil {
		rc.Logger = slog.New(slog.DiscardHandler)
	}
	if rc.FetchPollInterval == 0 {
		rc.FetchPollInterval = 250 * time.Millisecond
	}
	if rc.FetchCooldown > rc.FetchPollInterval {
		rc.FetchCooldown = rc.FetchPollInterval
	}
	if longest := max(cfg.JobTimeout, cfg.LongestTimeout); longest > 0 {
		// River's rescuer treats a job running this long as orphaned by a dead process. It
		// also waits for the job kind's own time limit, but would take a job at the very
		// moment River cancels the run: the minute is the run's time to stop.
		rc.RescueStuckJobsAfter = longest + time.Minute
	}
	q := &Queue{working: len(rc.Queues) > 0, st: st, rescue: cfg.RescueRunningOnStart, log: rc.Logger, stopper: stop}
	var err error
	switch st.Dialect() {
	case store.Postgres:
		if q.working {
			q.leases = newLeases(st.PgPool(), cfg.Lease, rc.Logger)
			rc.Middleware = append(rc.Middleware, &leaseMiddleware{leases: q.leases})
			rc.ID = leaseClientID(time.Now())
		}
		q.pg, err = river.NewClient(riverpgxv5.New(st.PgPool()), rc)
	default:
		q.sqliteDriver = newSQLiteDriver(riversqlite.New(st.JobsDB()))
		q.sqlite, err = river.NewClient[*sql.Tx](q.sqliteDriver, rc)
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: new client: %w", err)
	}
	return q, nil
}

// Start starts working jobs (a no-op for an insert-only queue). They run until Stop, whatever
// becomes of ctx: River would take the end of its start context for a stop that cuts every
// running job at once, where Stop lets their steps finish first.
func (q *Queue) Start(ctx context.Context) error {
	if !q.working {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	if q.pg != nil {
		if err := q.pg.Start(ctx); err != nil {
			return err
		}
		q.leases.start(q.pg.ID)
		return nil
	}
	if q.rescue {
		// River's SQLite schema; the jobs were running in a process that no longer exists.
		res, err := q.st.JobsDB().ExecContext(ctx, `UPDATE river_job SET state = 'available', scheduled_at = datetime('now', 'subsec')
			WHERE state = 'running'`)
		if err != nil {
			return fmt.Errorf("jobs: rescue running jobs: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 && q.log != nil {
			q.log.Info("resumed jobs a previous process left running", "jobs", n)
		}
	}
	return q.sqlite.Start(ctx)
}

// Stop stops fetching new jobs and lets the running ones reach a point where they can stop
// (Stopping), until shortly before ctx's deadline: then it cuts those still running, which
// snooze to resume from their stored state (CutByStop), and waits for them until the
// deadline. Without a deadline it waits for the running jobs as long as they take.
func (q *Queue) Stop(ctx context.Context) error {
	if !q.working {
		return nil
	}
	stop, stopAndCancel := q.sqlite.Stop, q.sqlite.StopAndCancel
	if q.pg != nil {
		stop, stopAndCancel = q.pg.Stop, q.pg.StopAndCancel
		// The leases are renewed until the last run has ended.
		defer q.leases.halt()
	}
	q.stopper.begin()
	soft := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		soft, cancel = context.WithDeadline(ctx, deadline.Add(-min(time.Until(deadline)/4, maxCutReserve)))
		defer cancel()
	}
	err := stop(soft)
	if err == nil || soft.Err() == nil || ctx.Err() != nil {
		return err
	}
	if n := q.stopper.cut(); n > 0 {
		q.log.Warn("jobs still running at the shutdown timeout: cutting them; they resume from their stored state", "jobs", n)
	}
	return stopAndCancel(ctx)
}

// InsertTx inserts a job inside a store transaction: it runs only if the transaction commits.
func (q *Queue) InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	if q.pg != nil {
		ptx, err := pgxTxOf(tx)
		if err != nil {
			return nil, err
		}
		return q.pg.InsertTx(ctx, ptx, args, opts)
	}
	res, err := q.sqlite.InsertTx(ctx, tx.SQL(), args, opts)
	if err == nil && q.working {
		tx.AfterCommit(q.sqliteDriver.woke)
	}
	return res, err
}

// Subscribe returns a channel of job events of the given kinds, and a function that ends the
// subscription. Tests and the publish wait use it to learn that work finished.
func (q *Queue) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	if q.pg != nil {
		return q.pg.Subscribe(kinds...)
	}
	return q.sqlite.Subscribe(kinds...)
}

// pgxTxOf presents the connection a store transaction runs on as a pgx.Tx, because River's pgx
// driver takes a pgx.Tx and River v0.47.0 has no database/sql driver for PostgreSQL on the
// module proxy. The store's *sql.Tx has already begun the transaction on that connection, so
// connTx sends River's statements down the same connection, inside the same transaction; it
// never begins or ends the outer transaction itself (database/sql owns it). The *pgx.Conn is
// used outside Raw's callback, which database/sql permits only because store.Tx holds the
// *sql.Conn until the transaction ends and nothing else uses it concurrently.
func pgxTxOf(tx *store.Tx) (pgx.Tx, error) {
	if tx.Conn() == nil {
		return nil, errors.New("jobs: transaction has no dedicated connection")
	}
	var conn *pgx.Conn
	err := tx.Conn().Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("jobs: unexpected driver connection %T", driverConn)
		}
		conn = c.Conn()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &connTx{conn: conn}, nil
}

// onTime inserts jobs meant for later as available rather than scheduled, keeping their time.
// River's fetch takes only available jobs whose time has come, so such a job starts within a
// fetch poll interval of its time; as scheduled it would wait for River's scheduler, which
// runs every 5 seconds and only then makes it available. Scheduled posts must fire within a
// second or two of their time.
type onTime struct{ river.MiddlewareDefaults }

func (*onTime) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	for _, p := range params {
		if p.State == rivertype.JobStateScheduled {
			p.State = rivertype.JobStateAvailable
		}
	}
	return doInner(ctx)
}
