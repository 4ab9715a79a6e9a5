package jobs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connTx is a pgx.Tx over a connection that is already inside a transaction begun by
// database/sql. Nested Begin calls become savepoints; the outermost Commit and Rollback are
// refused, because ending the transaction is the store's business.
type connTx struct {
	conn      *pgx.Conn
	savepoint string // "" for the outermost level
	depth     int
}

var errOuterTx = errors.New("jobs: the outer transaction is owned by the store")

func (t *connTx) Begin(ctx context.Context) (pgx.Tx, error) {
	name := fmt.Sprintf("reelay_jobs_sp%d", t.depth+1)
	if _, err := t.conn.Exec(ctx, "SAVEPOINT "+name); err != nil {
		return nil, err
	}
	return &connTx{conn: t.conn, savepoint: name, depth: t.depth + 1}, nil
}

func (t *connTx) Commit(ctx context.Context) error {
	if t.savepoint == "" {
		return errOuterTx
	}
	_, err := t.conn.Exec(ctx, "RELEASE SAVEPOINT "+t.savepoint)
	return err
}

func (t *connTx) Rollback(ctx context.Context) error {
	if t.savepoint == "" {
		return errOuterTx
	}
	_, err := t.conn.Exec(ctx, "ROLLBACK TO SAVEPOINT "+t.savepoint)
	return err
}

func (t *connTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return t.conn.CopyFrom(ctx, table, columns, src)
}

func (t *connTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return t.conn.SendBatch(ctx, b)
}

func (t *connTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }

func (t *connTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.conn.Prepare(ctx, name, sql)
}

func (t *connTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.conn.Exec(ctx, sql, args...)
}

func (t *connTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return t.conn.Query(ctx, sql, args...)
}

func (t *connTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return t.conn.QueryRow(ctx, sql, args...)
}

func (t *connTx) Conn() *pgx.Conn { return t.conn }
