package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"reflect"
	"strings"

	"modernc.org/sqlite"
)

// sqliteDriverName is modernc's SQLite driver with a cache of prepared statements per
// connection. Without it every query is compiled again: under publishing load SQLite's parser
// took a quarter of the CPU (docs/BENCHMARKS.md), and River's own queries, which reelay does
// not write, go through the same connections.
const sqliteDriverName = "sqlite-stmtcache"

func init() { sql.Register(sqliteDriverName, stmtCacheDriver{base: &sqlite.Driver{}}) }

type stmtCacheDriver struct{ base driver.Driver }

// sqliteConn is what modernc's connections offer and the cache relies on.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.SessionResetter
	driver.Validator
	driver.Pinger
}

func (d stmtCacheDriver) Open(name string) (driver.Conn, error) {
	c, err := d.base.Open(name)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(sqliteConn)
	if !ok {
		return c, nil
	}
	return &stmtCacheConn{sqliteConn: sc, stmts: map[string]*cachedStmt{}}, nil
}

// maxCachedStmts bounds a connection's cache; queries past it run uncached. reelay's queries
// with IN lists vary with the list's length, so the set of texts is large but bounded.
const maxCachedStmts = 512

// stmtCacheConn runs queries through prepared statements it keeps. database/sql never uses a
// connection from two goroutines at once, so the map needs no lock.
type stmtCacheConn struct {
	sqliteConn
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	stmt driver.Stmt
	// busy: rows of this statement are open; a second query with the same text on the same
	// connection (possible inside a transaction) gets a statement of its own.
	busy bool
}

// cached returns the connection's statement for query, or nil when the query must run
// uncached (a script of several statements, a statement in use, a full cache).
func (c *stmtCacheConn) cached(ctx context.Context, query string) (*cachedStmt, error) {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if len(c.stmts) >= maxCachedStmts || strings.Contains(strings.TrimRight(strings.TrimSpace(query), ";"), ";") {
		return nil, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s := &cachedStmt{stmt: st}
	c.stmts[query] = s
	return s, nil
}

func (c *stmtCacheConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.cached(ctx, query)
	if err != nil || s == nil {
		if err != nil {
			return nil, err
		}
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return s.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *stmtCacheConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.cached(ctx, query)
	if err != nil || s == nil {
		if err != nil {
			return nil, err
		}
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &cachedRows{Rows: rows, stmt: s}, nil
}

func (c *stmtCacheConn) Close() error {
	for _, s := range c.stmts {
		s.stmt.Close()
	}
	c.stmts = nil
	return c.sqliteConn.Close()
}

// cachedRows frees its statement for reuse when closed, and passes on the column type
// information database/sql asks rows for.
type cachedRows struct {
	driver.Rows
	stmt *cachedStmt
}

func (r *cachedRows) Close() error {
	r.stmt.busy = false
	return r.Rows.Close()
}

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}
