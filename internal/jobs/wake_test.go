package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
)

// pollListener stands in for River's SQLite listener with a poll that never comes: it reads
// its table (queued) when a wait begins, then waits for the context.
type pollListener struct {
	riverdriver.Listener // unused methods
	mu                   sync.Mutex
	queued               []*riverdriver.Notification
	reads                int
}

func (l *pollListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	l.mu.Lock()
	l.reads++
	if len(l.queued) > 0 {
		n := l.queued[0]
		l.queued = l.queued[1:]
		l.mu.Unlock()
		return n, nil
	}
	l.mu.Unlock()
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWakeListener: a wake makes a waiting listener read again at once, so a notification
// written meanwhile arrives without waiting for a poll; the caller's context still ends the
// wait.
func TestWakeListener(t *testing.T) {
	t.Parallel()
	d := &sqliteDriver{wake: make(chan struct{}, 1)}
	inner := &pollListener{}
	l := &wakeListener{Listener: inner, wake: d.wake}

	// A guard against a hang, not a measure: without the wake the wait never ends.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan *riverdriver.Notification, 1)
	go func() {
		n, err := l.WaitForNotification(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- n
	}()
	for { // the wait has begun once the listener has read once
		inner.mu.Lock()
		reads := inner.reads
		inner.mu.Unlock()
		if reads > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	want := &riverdriver.Notification{Topic: "river_insert", Payload: `{"queue":"publish"}`}
	inner.mu.Lock()
	inner.queued = append(inner.queued, want)
	inner.mu.Unlock()
	d.woke()
	d.woke() // a second wake so soon neither blocks nor is lost
	if n := <-got; n != want {
		t.Fatalf("notification %+v, want %+v", n, want)
	}

	// The caller's context ends a wait.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.WaitForNotification(ctx2)
		done <- err
	}()
	cancel2()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("after the caller's context ended: %v", err)
	}
}
