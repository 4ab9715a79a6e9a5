// Package storetest gives tests a real, empty database: a SQLite file in a temporary folder,
// and, when REELAY_TEST_DATABASE_URL names a PostgreSQL server, a schema of its own on it, so
// that tests run in parallel without seeing each other and leave nothing behind.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reelay/reelay/internal/store"
)

// EnvPostgres names the environment variable holding the PostgreSQL server tests may use.
const EnvPostgres = "REELAY_TEST_DATABASE_URL"

// Dialects lists the engines tests run on here: SQLite always, PostgreSQL when configured.
func Dialects() []store.Dialect {
	if os.Getenv(EnvPostgres) != "" {
		return []store.Dialect{store.SQLite, store.Postgres}
	}
	return []store.Dialect{store.SQLite}
}

// Each runs fn as a subtest on a fresh store of every available dialect.
func Each(t *testing.T, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, New(t, d))
		})
	}
}

// New opens a migrated store on a fresh database of the given dialect, closed at cleanup.
func New(t testing.TB, d store.Dialect) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), URL(t, d))
	if err != nil {
		t.Fatalf("open %s store: %v", d, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// URL returns the URL of a fresh, empty database of the given dialect, removed at cleanup.
func URL(t testing.TB, d store.Dialect) string {
	t.Helper()
	if d == store.SQLite {
		return filepath.Join(t.TempDir(), "reelay.db")
	}
	base := os.Getenv(EnvPostgres)
	if base == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL run", EnvPostgres)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", EnvPostgres, err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "reelay_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
