package store

import (
	"context"
	"path/filepath"
	"testing"
)

// The statement cache must give each open result its own statement: inside a transaction a
// second query with the same text can run while the first one's rows are still open.
func TestStatementCacheSameQueryTwice(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.InTx(ctx, func(tx *Tx) error {
		// A script of several statements goes through uncached.
		if _, err := tx.tx.ExecContext(ctx, `CREATE TABLE n (v INTEGER); INSERT INTO n VALUES (1), (2), (3);`); err != nil {
			return err
		}
		const q = `SELECT v FROM n WHERE v >= $1 ORDER BY v`
		outer, err := tx.tx.QueryContext(ctx, q, 1)
		if err != nil {
			return err
		}
		defer outer.Close()
		var got []int
		for outer.Next() {
			var v int
			if err := outer.Scan(&v); err != nil {
				return err
			}
			inner, err := tx.tx.QueryContext(ctx, q, v)
			if err != nil {
				return err
			}
			n := 0
			for inner.Next() {
				n++
			}
			inner.Close()
			got = append(got, v*10+n)
		}
		if want := []int{13, 22, 31}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("interleaved results %v, want %v", got, want)
		}
		return outer.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	// Reused many times over, the cached statement keeps answering with new arguments.
	for i := 1; i <= 3; i++ {
		var n int
		if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM n WHERE v >= $1`, i).Scan(&n); err != nil || n != 4-i {
			t.Fatalf("count from %d: %d %v", i, n, err)
		}
	}
}
