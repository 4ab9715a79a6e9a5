package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestGroupTx runs many small transactions at once through group commit: each one's writes
// are kept or undone on its own, whatever the others in its batch do, and so are the
// functions it asked to run after the commit.
func TestGroupTx(t *testing.T) {
	errRefused := errors.New("refused")
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if _, err := s.WriteDB().ExecContext(ctx, `CREATE TABLE group_test (n INTEGER PRIMARY KEY)`); err != nil {
			t.Fatal(err)
		}
		const calls = 120
		var (
			mu  sync.Mutex
			txs = map[*store.Tx]int{}
			wg  sync.WaitGroup
		)
		errs := make([]error, calls)
		hooks := make([]atomic.Int32, calls)
		for i := range calls {
			wg.Go(func() {
				errs[i] = s.InGroupTx(ctx, func(tx *store.Tx) error {
					mu.Lock()
					txs[tx]++
					mu.Unlock()
					tx.AfterCommit(func() { hooks[i].Add(1) })
					if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO group_test (n) VALUES ($1)`, i); err != nil {
						return err
					}
					// Long enough that the calls arriving meanwhile queue for the next batch.
					time.Sleep(time.Millisecond)
					if i%3 == 0 {
						return fmt.Errorf("call %d: %w", i, errRefused) // after writing: undone alone
					}
					return nil
				})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if want := i%3 == 0; errors.Is(err, errRefused) != want || (!want && err != nil) {
				t.Errorf("call %d: error %v", i, err)
			}
		}
		kept := rowsOf(t, s)
		for i := range calls {
			if kept[i] != (i%3 != 0) {
				t.Errorf("row %d kept %v; want %v", i, kept[i], i%3 != 0)
			}
			if want := map[bool]int32{true: 1, false: 0}[kept[i]]; hooks[i].Load() != want {
				t.Errorf("call %d: its after-commit function ran %d times; want %d", i, hooks[i].Load(), want)
			}
		}
		if s.Dialect() == store.SQLite && len(txs) >= calls {
			t.Errorf("%d calls ran in %d transactions; want them grouped", calls, len(txs))
		}
		if s.Dialect() == store.Postgres && len(txs) != calls {
			t.Errorf("PostgreSQL: %d calls ran in %d transactions; want one each", calls, len(txs))
		}
	})
}

// TestGroupTxBrokenBatch: a body that breaks the shared transaction (here by failing, so that
// its batch runs again in savepoints, and then releasing the savepoint it runs in) fails
// alone; the others of its batch are run again and kept.
func TestGroupTxBrokenBatch(t *testing.T) {
	errBroken := errors.New("broken")
	s := storetest.New(t, store.SQLite)
	ctx := context.Background()
	if _, err := s.WriteDB().ExecContext(ctx, `CREATE TABLE group_test (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 40)
	hooks := make([]atomic.Int32, len(errs))
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.InGroupTx(ctx, func(tx *store.Tx) error {
				tx.AfterCommit(func() { hooks[i].Add(1) })
				if _, err := tx.SQL().ExecContext(ctx, `INSERT INTO group_test (n) VALUES ($1)`, i); err != nil {
					return err
				}
				time.Sleep(time.Millisecond)
				if i == 7 {
					// Savepoints are named g0, g1, ... by position in the batch: releasing its
					// own from inside leaves the batch's ROLLBACK TO failing, and so the batch.
					for j := range 64 {
						_, _ = tx.SQL().ExecContext(ctx, fmt.Sprintf("RELEASE g%d", j))
					}
					return errBroken
				}
				return nil
			})
		})
	}
	wg.Wait()
	kept := rowsOf(t, s)
	for i, err := range errs {
		if i == 7 {
			if !errors.Is(err, errBroken) || kept[i] || hooks[i].Load() != 0 {
				t.Errorf("breaking call: error %v, kept %v, after-commit function run %d times; want its own error, nothing kept or run",
					err, kept[i], hooks[i].Load())
			}
			continue
		}
		if err != nil || !kept[i] || hooks[i].Load() != 1 {
			t.Errorf("call %d: error %v, kept %v, after-commit function run %d times; want its write kept, the function run once",
				i, err, kept[i], hooks[i].Load())
		}
	}
}

// TestGroupTxCanceled: a call whose context has ended writes nothing and says so.
func TestGroupTxCanceled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		err := s.InGroupTx(ctx, func(tx *store.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Errorf("canceled call: error %v, ran %v", err, ran)
		}
	})
}

func rowsOf(t *testing.T, s *store.Store) map[int]bool {
	t.Helper()
	rows, err := s.WriteDB().QueryContext(context.Background(), `SELECT n FROM group_test`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	kept := map[int]bool{}
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		kept[n] = true
	}
	return kept
}
