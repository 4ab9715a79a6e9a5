package store

import (
	"context"
	"sync"
)

// batcher runs calls that arrive at the same moment as one batch. Nothing waits for a batch to
// fill: a call that arrives while no batch is running leads one at once; calls that arrive
// while one runs join the next, which the first of them leads. A leader runs one batch (its
// own) and hands the lead on, so that no caller runs batches for others after its own is done.
// SQLite's group commit (groupTx) and PostgreSQL's open steps (openSteps) use it.
type batcher[C any] struct {
	mu      sync.Mutex
	pending []*batched[C]
	running bool // a caller is running a batch (or about to)
}

// batched is one call waiting for, or done by, a batch.
type batched[C any] struct {
	call C
	wake chan struct{} // closed when the call's batch has run, or when the call is to lead
	lead bool
}

// do queues call and returns once a batch holding it has run: run, given at most max calls,
// records each one's outcome in it. Waiting ignores any context on purpose: once queued, a
// call may already be in a running batch, and its caller must learn what became of it; run
// decides what to do with calls whose context has ended.
func (b *batcher[C]) do(call C, max int, run func(batch []C)) {
	c := &batched[C]{call: call, wake: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, c)
	if b.running {
		b.mu.Unlock()
		<-c.wake
		if !c.lead {
			return
		}
	} else {
		b.running = true
		b.mu.Unlock()
	}
	b.mu.Lock()
	n := min(len(b.pending), max)
	batch := b.pending[:n:n]
	b.pending = b.pending[n:]
	b.mu.Unlock()

	calls := make([]C, n)
	for i, o := range batch {
		calls[i] = o.call
	}
	run(calls)

	b.mu.Lock()
	if len(b.pending) > 0 {
		next := b.pending[0]
		next.lead = true
		close(next.wake)
	} else {
		b.running = false
	}
	b.mu.Unlock()
	for _, o := range batch {
		if o != c {
			close(o.wake)
		}
	}
}

// callState is what every call of PostgreSQL's batched statements carries (openSteps,
// settlingSteps, firings, deliveryLoads): its caller's context, and whether the batch left it
// to its caller to make alone.
type callState struct {
	ctx   context.Context
	alone bool
}

func (c *callState) state() *callState { return c }

// liveCalls marks every call of batch to be made alone, until the batch makes it, and answers
// those whose caller still waits for them: a call whose context has ended is left to its
// caller, who answers the context's error.
func liveCalls[C interface{ state() *callState }](batch []C) []C {
	var live []C
	for _, c := range batch {
		st := c.state()
		st.alone = true
		if st.ctx.Err() == nil {
			live = append(live, c)
		}
	}
	return live
}
