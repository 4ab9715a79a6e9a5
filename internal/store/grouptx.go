package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SQLite has one writer, and under load most of a small write transaction's cost is not its
// statements but what surrounds them: waiting for the write connection (handed from goroutine
// to goroutine), BEGIN, and COMMIT writing every touched page to the WAL again. When hundreds of
// publish jobs save their steps at once (a burst of scheduled posts firing together), those
// costs dominate. groupTx runs the small transactions submitted at the same moment as one
// transaction (group commit), with one COMMIT for all; one's error still undoes only its own
// writes (see runGroup). The calls are gathered into batches by a batcher.
//
// Only SQLite uses it. On PostgreSQL writers run in parallel on their own connections, and one
// transaction locking several posts could deadlock with another process's.
type groupTx = batcher[*groupCall]

// groupCall is one caller's transaction body, and what became of it.
type groupCall struct {
	ctx context.Context
	fn  func(tx *Tx) error
	err error
}

// maxGroup bounds a batch so that one COMMIT never holds the writer for long.
const maxGroup = 64

// groupTimeout bounds a whole batch; each body also runs under its caller's context.
const groupTimeout = 30 * time.Second

// inGroupTx runs fn in a transaction, possibly shared with other callers' (see groupTx). fn
// must use only tx and ctx, and be ready to run in a transaction that also holds others'
// writes: its own writes are committed together with theirs, or, when fn fails, undone alone.
func (s *Store) inGroupTx(ctx context.Context, fn func(tx *Tx) error) error {
	if s.dialect != SQLite {
		return s.InTx(ctx, fn)
	}
	// A batch is short (maxGroup small transactions) and skips calls whose context has ended.
	c := &groupCall{ctx: ctx, fn: fn}
	s.group.do(c, maxGroup, s.runGroup)
	return c.err
}

// runGroup runs a batch in one transaction and sets each call's err. A batch is first run
// without a savepoint per call: most batches have no failing call, and a savepoint's two
// statements (SAVEPOINT, RELEASE) were a third of a burst's statements on SQLite
// (docs/BENCHMARKS.md). When a call fails, that transaction is rolled back and the batch run
// again with savepoints, so that the failing call's writes alone are undone; a call may thus
// run twice, as it already may when the shared transaction fails.
func (s *Store) runGroup(batch []*groupCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.err = s.InTx(c.ctx, c.fn)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	err := s.InTx(ctx, func(tx *Tx) error {
		for _, c := range batch {
			if c.err = c.ctx.Err(); c.err != nil {
				continue
			}
			if c.err = c.fn(tx); c.err != nil {
				return errCallFailed
			}
		}
		return nil
	})
	if errors.Is(err, errCallFailed) {
		err = s.runGroupInSavepoints(ctx, batch)
	}
	if err == nil {
		return
	}
	// The transaction itself failed (a savepoint statement or the COMMIT): every call is run
	// again alone, so that none is told it failed because of another.
	for _, c := range batch {
		if c.ctx.Err() != nil {
			c.err = c.ctx.Err()
			continue
		}
		c.err = s.InTx(c.ctx, c.fn)
	}
}

// errCallFailed ends a batch's first transaction when one of its calls failed.
var errCallFailed = errors.New("store: a call of the batch failed")

// runGroupInSavepoints runs a batch in one transaction, each call in a savepoint of its own,
// and sets each call's err. It answers an error when the transaction itself failed.
func (s *Store) runGroupInSavepoints(ctx context.Context, batch []*groupCall) error {
	return s.InTx(ctx, func(tx *Tx) error {
		for i, c := range batch {
			if c.err = c.ctx.Err(); c.err != nil {
				continue
			}
			sp := fmt.Sprintf("g%d", i)
			if _, err := tx.tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
				return err
			}
			hooks := len(tx.afterCommit)
			c.err = c.fn(tx)
			if c.err != nil {
				tx.afterCommit = tx.afterCommit[:hooks]
				if _, err := tx.tx.ExecContext(ctx, "ROLLBACK TO "+sp); err != nil {
					return err
				}
			}
			if _, err := tx.tx.ExecContext(ctx, "RELEASE "+sp); err != nil {
				return err
			}
		}
		return nil
	})
}
