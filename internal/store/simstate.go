package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sim/simstate"
)

// SimState keeps the platform simulators' records and what they received in the database
// (sim.State), so that the sandbox survives a restart and every API process on the database
// serves the same simulated platforms. Records expire by its clock, the simulators'.
type SimState struct {
	s   *Store
	now func() time.Time
}

// SimState returns the simulators' state in this store, with the simulators' clock (time.Now
// when nil).
func (s *Store) SimState(now func() time.Time) *SimState {
	if now == nil {
		now = time.Now
	}
	return &SimState{s: s, now: now}
}

// simTime is a time as both engines keep it (see now).
func simTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// simExpiry is a record's expires_at: NULL for a record kept until retention.
func simExpiry(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return simTime(t)
}

const simRecordColumns = `platform, kind, id, account, data, blobs, expires_at`

func scanSimRecord(row scanner) (simstate.Record, error) {
	var r simstate.Record
	var exp sql.NullTime
	if err := row.Scan(&r.Platform, &r.Kind, &r.ID, &r.Account, &r.Data, &r.Blobs, &exp); err != nil {
		return simstate.Record{}, err
	}
	if exp.Valid {
		r.Expires = exp.Time
	}
	return r, nil
}

// Get reads a live record.
func (st *SimState) Get(ctx context.Context, key simstate.Key) (simstate.Record, bool, error) {
	r, err := scanSimRecord(st.s.read.QueryRowContext(ctx, `SELECT `+simRecordColumns+` FROM sim_records
		WHERE platform = $1 AND kind = $2 AND id = $3 AND (expires_at IS NULL OR expires_at > $4)`,
		key.Platform, key.Kind, key.ID, simTime(st.now())))
	if errors.Is(err, sql.ErrNoRows) {
		return simstate.Record{}, false, nil
	}
	if err != nil {
		return simstate.Record{}, false, fmt.Errorf("store: sim record: %w", err)
	}
	return r, true, nil
}

// simAccount selects one account's records, or every account's when account is "".
const simAccount = `($4 = '' OR account = $4)`

// List reads the live records of one kind and account ("": every account), in the order they
// were first written.
func (st *SimState) List(ctx context.Context, platform, kind, account string) ([]simstate.Record, error) {
	recs, err := collect(scanSimRecord)(st.s.read.QueryContext(ctx, `SELECT `+simRecordColumns+` FROM sim_records
		WHERE platform = $1 AND kind = $2 AND (expires_at IS NULL OR expires_at > $3) AND `+simAccount+`
		ORDER BY seq`, platform, kind, simTime(st.now()), account))
	if err != nil {
		return nil, fmt.Errorf("store: sim records: %w", err)
	}
	return recs, nil
}

// Count counts the live records of one kind and account ("": every account).
func (st *SimState) Count(ctx context.Context, platform, kind, account string) (int, error) {
	var n int
	err := st.s.read.QueryRowContext(ctx, `SELECT count(*) FROM sim_records
		WHERE platform = $1 AND kind = $2 AND (expires_at IS NULL OR expires_at > $3) AND `+simAccount,
		platform, kind, simTime(st.now()), account).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count sim records: %w", err)
	}
	return n, nil
}

// Purge deletes the expired records of one kind that have no blobs.
func (st *SimState) Purge(ctx context.Context, platform, kind string) error {
	_, err := st.s.write.ExecContext(ctx, `DELETE FROM sim_records
		WHERE platform = $1 AND kind = $2 AND expires_at <= $3 AND NOT blobs`, platform, kind, simTime(st.now()))
	if err != nil {
		return fmt.Errorf("store: purge sim records: %w", err)
	}
	return nil
}

// Entries lists what the simulator of platform ("": every one) received for accounts (nil:
// every account), oldest first.
func (st *SimState) Entries(ctx context.Context, platform string, accounts []string) ([]simstate.Entry, error) {
	q := `SELECT platform, account, kind, data FROM sim_entries WHERE ($1 = '' OR platform = $1)`
	args := []any{platform}
	if accounts != nil {
		if len(accounts) == 0 {
			return []simstate.Entry{}, nil
		}
		marks := make([]string, len(accounts))
		for i, a := range accounts {
			args = append(args, a)
			marks[i] = fmt.Sprintf("$%d", i+2)
		}
		q += ` AND account IN (` + strings.Join(marks, ", ") + `)`
	}
	entries, err := collect(func(r scanner) (simstate.Entry, error) {
		var e simstate.Entry
		return e, r.Scan(&e.Platform, &e.Account, &e.Kind, &e.Data)
	})(st.s.read.QueryContext(ctx, q+` ORDER BY seq`, args...))
	if err != nil {
		return nil, fmt.Errorf("store: sim entries: %w", err)
	}
	return entries, nil
}

// simUpdateAttempts bounds how many times an update is tried when it conflicts with others.
const simUpdateAttempts = 8

// Update runs fn in one transaction: on SQLite behind the one writer, on PostgreSQL with the
// records it reads locked (SELECT … FOR UPDATE). Two first writes of the same record, or two
// transactions that lock the same records in opposite orders, conflict on PostgreSQL: the
// loser is rolled back and fn runs again, on what the winner wrote.
func (st *SimState) Update(ctx context.Context, fn func(tx simstate.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := st.update(ctx, fn)
		if err == nil || !st.conflict(err) {
			return err
		}
		if attempt == simUpdateAttempts {
			return fmt.Errorf("%w: %w", simstate.ErrTooManyRetries, err)
		}
	}
}

// conflict recognises what another transaction's concurrent write makes an update fail with on
// PostgreSQL: a unique violation (the same new record), a deadlock or a serialization failure.
func (st *SimState) conflict(err error) bool {
	if st.s.dialect != Postgres {
		return false
	}
	msg := err.Error()
	return errors.Is(err, errSimRace) || isUniqueViolation(err) || strings.Contains(msg, "SQLSTATE 40P01") || strings.Contains(msg, "SQLSTATE 40001")
}

func (st *SimState) update(ctx context.Context, fn func(tx simstate.Tx) error) error {
	now := simTime(st.now())
	if st.s.dialect == SQLite {
		// A burst's simulated requests write at the same moment as its publish steps: they
		// share their transactions (grouptx.go), one COMMIT for many.
		return st.s.inGroupTx(ctx, func(tx *Tx) error {
			return fn(&simTx{ctx: ctx, tx: tx.tx, dialect: SQLite, now: now})
		})
	}
	tx := &simTx{ctx: ctx, dialect: Postgres, now: now, db: st.s.write}
	err := fn(tx)
	if err == nil {
		err = tx.flush()
	}
	if tx.tx == nil {
		return err
	}
	if err != nil {
		_ = tx.tx.Rollback()
		return err
	}
	if err := tx.tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// errSimRace: a record the transaction read as absent was written by another meanwhile.
var errSimRace = errors.New("store: sim record written concurrently")

// simTx is one transaction of SimState.Update.
//
// On SQLite it runs its statements as they come, in the group transaction it was given. On
// PostgreSQL, where each statement is a round trip, its writes wait for the end and go in one
// statement (flush), and the transaction itself begins at the first read that must lock a row:
// an update that only writes (what a simulator received, a new record under a new id) is that
// one statement, atomic by itself, with no BEGIN nor COMMIT.
type simTx struct {
	ctx     context.Context
	dialect Dialect
	now     time.Time
	tx      *sql.Tx
	// db begins tx on PostgreSQL.
	db *sql.DB
	// absent are the keys Get found no row for: PostgreSQL locks no row then, so their Put
	// must insert, and fail if another transaction inserted first.
	absent map[simstate.Key]bool
	// puts and entries are PostgreSQL's writes waiting for flush (puts: one per key, the last).
	puts    []simstate.Record
	entries []simstate.Entry
}

// begin starts the PostgreSQL transaction, if it has not begun.
func (t *simTx) begin() error {
	if t.tx != nil {
		return nil
	}
	tx, err := t.db.BeginTx(t.ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	t.tx = tx
	return nil
}

func (t *simTx) Get(key simstate.Key) (simstate.Record, bool, error) {
	q := `SELECT ` + simRecordColumns + ` FROM sim_records WHERE platform = $1 AND kind = $2 AND id = $3`
	if t.dialect == Postgres {
		for i := len(t.puts) - 1; i >= 0; i-- {
			if r := t.puts[i]; r.Key == key {
				r.Data = slices.Clone(r.Data)
				return r, r.Live(t.now), nil
			}
		}
		if err := t.begin(); err != nil {
			return simstate.Record{}, false, err
		}
		// The row is locked even when it has expired: the write that replaces it must wait.
		q += ` FOR UPDATE`
	}
	r, err := scanSimRecord(t.tx.QueryRowContext(t.ctx, q, key.Platform, key.Kind, key.ID))
	if errors.Is(err, sql.ErrNoRows) {
		if t.absent == nil {
			t.absent = map[simstate.Key]bool{}
		}
		t.absent[key] = true
		return simstate.Record{}, false, nil
	}
	if err == nil && !r.Live(t.now) {
		return simstate.Record{}, false, nil
	}
	if err != nil {
		return simstate.Record{}, false, fmt.Errorf("store: sim record: %w", err)
	}
	return r, true, nil
}

// simUpsert is what a Put does to a record that exists: it replaces it, keeping its blobs flag
// set (and its seq, its place in lists).
const simUpsert = `DO UPDATE SET account = excluded.account, data = excluded.data,
	blobs = excluded.blobs OR sim_records.blobs, expires_at = excluded.expires_at, updated_at = excluded.updated_at`

func (t *simTx) Put(r simstate.Record) error {
	if t.dialect == Postgres {
		r.Data = slices.Clone(r.Data)
		for i := range t.puts {
			if t.puts[i].Key == r.Key {
				t.puts[i] = r
				return nil
			}
		}
		t.puts = append(t.puts, r)
		return nil
	}
	onConflict := simUpsert
	absent := t.absent[r.Key]
	if absent {
		// Read as absent: another transaction's insert since would be overwritten unseen.
		onConflict = `DO NOTHING`
	}
	res, err := t.tx.ExecContext(t.ctx, `INSERT INTO sim_records (`+simRecordColumns+`, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (platform, kind, id) `+onConflict,
		r.Platform, r.Kind, r.ID, r.Account, r.Data, r.Blobs, simExpiry(r.Expires), t.now)
	if err != nil {
		return fmt.Errorf("store: put sim record: %w", err)
	}
	if absent {
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return errSimRace
		}
		delete(t.absent, r.Key) // inserted, and so locked
	}
	return nil
}

func (t *simTx) Delete(key simstate.Key) error {
	if t.dialect == Postgres {
		t.puts = slices.DeleteFunc(t.puts, func(r simstate.Record) bool { return r.Key == key })
		if err := t.begin(); err != nil {
			return err
		}
	}
	// A record with blobs expires now instead: housekeeping deletes its blobs, then it.
	_, err := t.tx.ExecContext(t.ctx, `UPDATE sim_records SET expires_at = $4, updated_at = $4
		WHERE platform = $1 AND kind = $2 AND id = $3 AND blobs`, key.Platform, key.Kind, key.ID, t.now)
	if err == nil {
		_, err = t.tx.ExecContext(t.ctx, `DELETE FROM sim_records WHERE platform = $1 AND kind = $2 AND id = $3 AND NOT blobs`,
			key.Platform, key.Kind, key.ID)
	}
	if err != nil {
		return fmt.Errorf("store: delete sim record: %w", err)
	}
	return nil
}

const simEntryInsert = `INSERT INTO sim_entries (platform, account, kind, data, received_at) VALUES `

func (t *simTx) Receive(e simstate.Entry) error {
	if t.dialect == Postgres {
		e.Data = slices.Clone(e.Data)
		t.entries = append(t.entries, e)
		return nil
	}
	_, err := t.tx.ExecContext(t.ctx, simEntryInsert+`($1, $2, $3, $4, $5)`, e.Platform, e.Account, e.Kind, e.Data, t.now)
	if err != nil {
		return fmt.Errorf("store: sim entry: %w", err)
	}
	return nil
}

// flush writes PostgreSQL's waiting writes in one statement: the records read as absent
// inserted (all of them, or the transaction conflicted), the others replaced, the entries
// appended.
func (t *simTx) flush() error {
	if t.dialect != Postgres || len(t.puts)+len(t.entries) == 0 {
		return nil
	}
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	records := func(recs []simstate.Record) string {
		rows := make([]string, len(recs))
		for i, r := range recs {
			rows[i] = "(" + strings.Join([]string{arg(r.Platform), arg(r.Kind), arg(r.ID), arg(r.Account), arg(r.Data),
				arg(r.Blobs), arg(simExpiry(r.Expires)) + "::timestamptz", arg(t.now)}, ", ") + ")"
		}
		return `INSERT INTO sim_records (` + simRecordColumns + `, updated_at) VALUES ` + strings.Join(rows, ", ")
	}
	var inserts, upserts []simstate.Record
	for _, r := range t.puts {
		if t.absent[r.Key] {
			inserts = append(inserts, r)
		} else {
			upserts = append(upserts, r)
		}
	}
	var ctes []string
	if len(upserts) > 0 {
		ctes = append(ctes, `u AS (`+records(upserts)+` ON CONFLICT (platform, kind, id) `+simUpsert+`)`)
	}
	inserted := "0"
	if len(inserts) > 0 {
		ctes = append(ctes, `i AS (`+records(inserts)+` ON CONFLICT (platform, kind, id) DO NOTHING RETURNING 1)`)
		inserted = `(SELECT count(*) FROM i)`
	}
	if len(t.entries) > 0 {
		rows := make([]string, len(t.entries))
		for i, e := range t.entries {
			rows[i] = "(" + strings.Join([]string{arg(e.Platform), arg(e.Account), arg(e.Kind), arg(e.Data), arg(t.now)}, ", ") + ")"
		}
		ctes = append(ctes, `e AS (`+simEntryInsert+strings.Join(rows, ", ")+`)`)
	}
	q := `WITH ` + strings.Join(ctes, ", ") + ` SELECT ` + inserted
	var run interface {
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	} = t.db
	if t.tx != nil {
		run = t.tx
	}
	var n int
	if err := run.QueryRowContext(t.ctx, q, args...).Scan(&n); err != nil {
		return fmt.Errorf("store: write sim records: %w", err)
	}
	if n != len(inserts) {
		return errSimRace
	}
	return nil
}

// ExpiredSimRecords lists up to limit keys of records that expired before now and have blobs,
// whose blobs housekeeping deletes before DeleteExpiredSimRecords deletes them.
func (s *Store) ExpiredSimRecords(ctx context.Context, now time.Time, limit int) ([]simstate.Key, error) {
	keys, err := collect(func(r scanner) (simstate.Key, error) {
		var k simstate.Key
		return k, r.Scan(&k.Platform, &k.Kind, &k.ID)
	})(s.read.QueryContext(ctx, `SELECT platform, kind, id FROM sim_records
		WHERE expires_at <= $1 AND blobs ORDER BY expires_at LIMIT $2`, simTime(now), limit))
	if err != nil {
		return nil, fmt.Errorf("store: expired sim records: %w", err)
	}
	return keys, nil
}

// DeleteSimRecord deletes one record whatever it holds (housekeeping, once its blobs are gone),
// if it is still expired at now: one written again since lives on.
func (s *Store) DeleteSimRecord(ctx context.Context, key simstate.Key, now time.Time) error {
	_, err := s.write.ExecContext(ctx, `DELETE FROM sim_records WHERE platform = $1 AND kind = $2 AND id = $3 AND expires_at <= $4`,
		key.Platform, key.Kind, key.ID, simTime(now))
	if err != nil {
		return fmt.Errorf("store: delete sim record: %w", err)
	}
	return nil
}

// DeleteOldSimState deletes the records without blobs that expired before now, the records
// kept until retention that were not written since before, and the entries received before
// before; it answers how many rows it deleted.
func (s *Store) DeleteOldSimState(ctx context.Context, now, before time.Time) (int64, error) {
	var total int64
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM sim_records WHERE expires_at <= $1 AND NOT blobs`, []any{simTime(now)}},
		{`DELETE FROM sim_records WHERE expires_at IS NULL AND updated_at < $1 AND NOT blobs`, []any{simTime(before)}},
		{`UPDATE sim_records SET expires_at = $1 WHERE expires_at IS NULL AND updated_at < $2 AND blobs`, []any{simTime(now), simTime(before)}},
		{`DELETE FROM sim_entries WHERE received_at < $1`, []any{simTime(before)}},
	} {
		res, err := s.write.ExecContext(ctx, q.sql, q.args...)
		if err != nil {
			return total, fmt.Errorf("store: delete old sim state: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
