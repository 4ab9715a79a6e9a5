// Package store is reelay's persistence: explicit SQL on database/sql, one implementation for
// SQLite (the embedded default) and PostgreSQL (scale-out), selected by the database URL.
// The SQL is written once with $N placeholders, which both engines accept; where the dialects
// differ (column types), each has its own migrations folder.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/reelay/reelay/internal/fileperm"
)

// ErrNotFound is returned when a row does not exist or belongs to another account; callers
// cannot tell the two apart, by design.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a unique constraint refuses a write.
var ErrConflict = errors.New("conflict")

// Dialect names the database engine behind a Store.
type Dialect string

// The two supported engines.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

//go:embed migrations
var migrationsFS embed.FS

// Store holds the database handles. On SQLite, writes go through one connection (SQLite has one
// writer; a single connection with BEGIN IMMEDIATE means requests queue instead of failing with
// "database is locked") and reads through a pool of read-only connections, which WAL lets run
// beside the writer. River works on the same single write connection: with a pool of its own
// the two writers would wait for each other inside SQLite (busy sleeps, a third of the time
// under load), where sharing one connection makes them queue in Go instead.
// On PostgreSQL all three are the same pgx pool.
type Store struct {
	dialect Dialect
	write   *sql.DB
	read    *sql.DB
	pgPool  *pgxpool.Pool // PostgreSQL: the pool River's pgx driver works on
	// listenerPID is the server process of ListenPostSettled's connection (tests end it).
	listenerPID atomic.Uint32
	// migrations applied the schema at Open; Ready asks it what is pending.
	migrations *goose.Provider
	// webhooks inserts the jobs of the webhook deliveries transactions record (webhooks.go).
	webhooks webhookHook
	// group batches the publish steps saved at the same moment into one transaction (grouptx.go).
	group groupTx
	// openSteps batches the open steps saved at the same moment on PostgreSQL (opensteps.go).
	openSteps openSteps
	// settlingSteps batches the settling steps saved at the same moment on PostgreSQL
	// (settling.go).
	settlingSteps settlingSteps
	// firings batches the starts of scheduled posts' jobs on PostgreSQL (fires.go).
	firings firings
	// loads batches the jobs' reads of their deliveries on PostgreSQL (loads.go).
	loads deliveryLoads
	// channelWrites counts the channels saved or deleted through this Store (ChannelWrites).
	channelWrites atomic.Uint64
	// caps bound what an account may hold (caps.go); nil bounds nothing.
	caps atomic.Pointer[Caps]
}

// Open connects to the database named by databaseURL (a postgres:// URL, or a SQLite file path
// or sqlite:// URL) and applies pending migrations, reelay's and River's.
func Open(ctx context.Context, databaseURL string) (*Store, error) {
	var s *Store
	var err error
	if isPostgresURL(databaseURL) {
		s, err = openPostgres(ctx, databaseURL)
	} else {
		s, err = openSQLite(databaseURL)
	}
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func isPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// SQLitePath turns a sqlite URL or plain path into a file path.
func SQLitePath(databaseURL string) string {
	p := strings.TrimPrefix(databaseURL, "sqlite://")
	p = strings.TrimPrefix(p, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p
}

func openSQLite(databaseURL string) (*Store, error) {
	path := SQLitePath(databaseURL)
	if path == "" {
		return nil, errors.New("store: empty SQLite path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, fileperm.Dir); err != nil {
			return nil, fmt.Errorf("store: create database folder: %w", err)
		}
	}
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	params := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		params.Add("_pragma", p)
	}
	params.Set("_time_format", "sqlite")
	base := "file:" + path + "?"

	writeParams := cloneValues(params)
	writeParams.Set("_txlock", "immediate")
	write, err := sql.Open(sqliteDriverName, base+writeParams.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)

	readParams := cloneValues(params)
	readParams.Add("_pragma", "query_only(1)")
	read, err := sql.Open(sqliteDriverName, base+readParams.Encode())
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	read.SetMaxOpenConns(max(4, 2*runtime.NumCPU()))
	read.SetMaxIdleConns(max(4, 2*runtime.NumCPU()))

	// The first connection creates the file and switches it to WAL before the read-only pool
	// touches it.
	if err := write.Ping(); err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	return &Store{dialect: SQLite, write: write, read: read}, nil
}

// createPrivate creates the database file, empty (which SQLite takes for an empty database),
// readable by this user only. SQLite would create it 0644 whatever the umask, and it gives its
// -wal and -shm files the database's mode, so this makes all three private.
func createPrivate(path string) error {
	if path == ":memory:" || strings.HasPrefix(path, ":") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, fileperm.File)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: create database file: %w", err)
	}
	return f.Close()
}

func cloneValues(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

// defaultPostgresConns is each process's connection pool size on PostgreSQL.
const defaultPostgresConns = 20

func openPostgres(ctx context.Context, databaseURL string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: parse database URL: %w", err)
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		// pgxpool's default (4 on a small machine) starves hundreds of publish jobs, each
		// holding a connection for a short transaction; pool_max_conns in the URL wins.
		cfg.MaxConns = defaultPostgresConns
	}
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		// reelay's statements are short, and PostgreSQL decides to compile one by its
		// estimated cost: on tables it has not analysed yet, the statements that lock and
		// save a batch of destinations (settling.go) were estimated past jit_above_cost and
		// spent 10 to 30 ms compiling, against about 1 ms running (docs/BENCHMARKS.md).
		// jit in the URL wins.
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect postgres: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	return &Store{dialect: Postgres, write: db, read: db, pgPool: pool}, nil
}

// Dialect tells which engine the store runs on.
func (s *Store) Dialect() Dialect { return s.dialect }

// PgPool is the pgx pool on PostgreSQL (nil on SQLite); River's pgx driver works on it.
func (s *Store) PgPool() *pgxpool.Pool { return s.pgPool }

// JobsDB is the *sql.DB River works on with its SQLite driver: the write connection.
func (s *Store) JobsDB() *sql.DB { return s.write }

// Close releases every connection.
func (s *Store) Close() error {
	var errs []error
	if s.dialect == SQLite {
		errs = append(errs, s.read.Close())
	}
	errs = append(errs, s.write.Close())
	if s.pgPool != nil {
		s.pgPool.Close()
	}
	return errors.Join(errs...)
}

func (s *Store) gooseProvider() (*goose.Provider, error) {
	sub, err := fs.Sub(migrationsFS, "migrations/"+string(s.dialect))
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	if s.dialect == Postgres {
		dialect = goose.DialectPostgres
	}
	return goose.NewProvider(dialect, s.write, sub, goose.WithDisableGlobalRegistry(true))
}

// migrate applies reelay's migrations and River's. On PostgreSQL several processes may start
// at once, so both run under one advisory lock keyed by the schema, which also keeps parallel
// test schemas from waiting on each other.
func (s *Store) migrate(ctx context.Context) error {
	if s.dialect == Postgres {
		conn, err := s.write.Conn(ctx)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		defer conn.Close()
		const key = `('x' || substr(md5('reelay-migrate:' || current_schema()), 1, 16))::bit(64)::bigint`
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`)
	}
	p, err := s.gooseProvider()
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	s.migrations = p
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: apply migrations: %w", err)
	}
	if err := s.migrateRiver(ctx); err != nil {
		return fmt.Errorf("store: apply job queue migrations: %w", err)
	}
	return nil
}

func (s *Store) migrateRiver(ctx context.Context) error {
	if s.dialect == Postgres {
		m, err := rivermigrate.New(riverpgxv5.New(s.pgPool), nil)
		if err != nil {
			return err
		}
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}
	m, err := rivermigrate.New(riversqlite.New(s.write), nil)
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

// Ready checks that the database answers and that no migration is pending (a newer binary may
// have been rolled out against an older schema by a process that could not migrate it).
func (s *Store) Ready(ctx context.Context) map[string]error {
	checks := map[string]error{}
	checks["database"] = s.write.PingContext(ctx)
	if checks["database"] != nil {
		checks["migrations"] = errors.New("database unreachable")
		return checks
	}
	pending, err := s.migrations.HasPending(ctx)
	if err == nil && pending {
		err = errors.New("pending migrations")
	}
	checks["migrations"] = err
	return checks
}

// Tx is a transaction of the store. Its methods mirror the Store's write methods that must
// be able to commit together with other work, such as the insertion of jobs.
type Tx struct {
	tx      *sql.Tx
	dialect Dialect
	conn    *sql.Conn // PostgreSQL: the connection the transaction runs on, for River
	// enqueueWebhooks is the store's WebhookEnqueuer when the transaction began.
	enqueueWebhooks WebhookEnqueuer
	// afterCommit runs, in order, once the transaction has committed.
	afterCommit []func()
}

// AfterCommit has fn run once the transaction has committed, never if it rolls back (nor when
// this call's part of a group transaction is rolled back).
func (t *Tx) AfterCommit(fn func()) { t.afterCommit = append(t.afterCommit, fn) }

// SQL returns the underlying transaction, for River's SQLite driver.
func (t *Tx) SQL() *sql.Tx { return t.tx }

// Conn returns the connection the transaction runs on (PostgreSQL only; nil on SQLite).
func (t *Tx) Conn() *sql.Conn { return t.conn }

// Dialect tells which engine the transaction runs on.
func (t *Tx) Dialect() Dialect { return t.dialect }

// InTx runs fn in a transaction and commits it when fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	t := &Tx{dialect: s.dialect, enqueueWebhooks: s.webhooks.get()}
	var err error
	if s.dialect == Postgres {
		// A dedicated connection, so that River's pgx driver can be handed the very connection
		// this transaction runs on (see internal/jobs).
		t.conn, err = s.write.Conn(ctx)
		if err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
		defer t.conn.Close()
		t.tx, err = t.conn.BeginTx(ctx, nil)
	} else {
		t.tx, err = s.write.BeginTx(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(t); err != nil {
		_ = t.tx.Rollback()
		return err
	}
	if err := t.tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	for _, fn := range t.afterCommit {
		fn()
	}
	return nil
}

// queryer is what both *sql.DB and *sql.Tx offer; store functions shared between a Store and a
// Tx take one.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// now is the store's clock: UTC, truncated to microseconds, the precision both engines keep,
// so a value read back equals the value written.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// isUniqueViolation recognises a unique-constraint failure on either engine.
func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || // SQLite
		strings.Contains(msg, "SQLSTATE 23505") // PostgreSQL
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// collect returns a function that scans every row of a query into a slice (never nil, so that
// an empty list encodes as []). It is curried so that QueryContext's two results can be passed
// straight in: collect(scanProject)(db.QueryContext(...)).
func collect[T any](scan func(scanner) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := []T{}
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, rows.Err()
	}
}

// notFound maps sql.ErrNoRows to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// where builds a WHERE clause with numbered placeholders: add takes a condition with ? for
// each argument.
type where struct {
	conds []string
	args  []any
}

func newWhere() *where { return &where{} }

func (w *where) add(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// in adds column IN (values...).
func (w *where) in(column string, values []string) {
	marks := make([]string, len(values))
	for i, v := range values {
		w.args = append(w.args, v)
		marks[i] = fmt.Sprintf("$%d", len(w.args))
	}
	w.conds = append(w.conds, column+" IN ("+strings.Join(marks, ", ")+")")
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return "TRUE"
	}
	return strings.Join(w.conds, " AND ")
}

// limit is a LIMIT clause for n (none when n <= 0), its argument appended.
func (w *where) limit(n int) string {
	if n <= 0 {
		return ""
	}
	w.args = append(w.args, n)
	return fmt.Sprintf(" LIMIT $%d", len(w.args))
}
