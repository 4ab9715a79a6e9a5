package jobs

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// SQLite has no LISTEN/NOTIFY: River's SQLite driver writes a job's insert notification to a
// table that its listener reads every 50 ms, so a post published for now waited 25 ms on
// average before a worker took it (bench ingest). When this process commits a job, it knows:
// sqliteDriver's listener then reads the table at once instead of at its next poll. Jobs
// inserted by other processes still arrive within the 50 ms.

// sqliteDriver is River's SQLite driver with a listener that wake can hurry.
type sqliteDriver struct {
	*riversqlite.Driver
	wake     chan struct{}
	lastWake atomic.Int64 // unix nanoseconds
}

// wakeEvery spaces the wakes. River writes at most one insert notification per queue per
// fetch cooldown (50 ms), and each read of the table takes the one SQLite connection the
// store and River write through: woken at every commit, the reads slowed the workers under a
// stream of publishes (bench throughput: completion p50 0.4 s → 4 s). An isolated publish, the
// case the wake is for, is always woken.
const wakeEvery = 50 * time.Millisecond

func newSQLiteDriver(d *riversqlite.Driver) *sqliteDriver {
	return &sqliteDriver{Driver: d, wake: make(chan struct{}, 1)}
}

// woke asks the listener to read the notifications now, unless it was asked less than
// wakeEvery ago. It never blocks: a wake already pending covers this one.
func (d *sqliteDriver) woke() {
	now, last := time.Now().UnixNano(), d.lastWake.Load()
	if now-last < int64(wakeEvery) || !d.lastWake.CompareAndSwap(last, now) {
		return
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *sqliteDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	return &wakeListener{Listener: d.Driver.GetListener(params), wake: d.wake}
}

// wakeListener is a listener whose wait for a notification starts over, with a fresh read,
// when wake fires.
type wakeListener struct {
	riverdriver.Listener
	wake <-chan struct{}
}

func (l *wakeListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		wctx, cancel := context.WithCancel(ctx)
		waited := make(chan struct{})
		go func() {
			select {
			case <-l.wake:
				cancel()
			case <-waited:
			}
		}()
		// River's SQLite listener reads the table first, then waits for its next poll.
		n, err := l.Listener.WaitForNotification(wctx)
		close(waited)
		cancel()
		if err != nil && ctx.Err() == nil && wctx.Err() != nil {
			continue // woken: read again
		}
		return n, err
	}
}
