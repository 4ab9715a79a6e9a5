package jobs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// A worker process stops in two stages (Queue.Stop). First it fetches no more jobs and tells
// the running ones (Stopping): a job that works in steps, such as a destination's publish
// job, ends after the step in progress, its state saved, and snoozes, so that another worker
// (or this one once restarted) resumes it at once. Then, at the bound, the runs still going
// are cut (CutByStop): a cut run says nothing about its job, so it snoozes too instead of
// spending an attempt on an error, and resumes from its last stored state.

// ErrStopping is the cause of the cancellation of a run cut because its process stops.
var ErrStopping = errors.New("jobs: the worker process is stopping")

// maxCutReserve is the most of a stop's time kept for cut runs to return: a step cut by its
// context returns at once, and River then writes its end.
const maxCutReserve = 5 * time.Second

type stoppingKey struct{}

// Stopping is closed when the process running the job with ctx begins to stop; nil (never
// ready) outside a job run.
func Stopping(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stoppingKey{}).(chan struct{})
	return ch
}

// IsStopping reports whether the process running the job with ctx is stopping.
func IsStopping(ctx context.Context) bool {
	select {
	case <-Stopping(ctx):
		return true
	default:
		return false
	}
}

// CutByStop reports whether the run with ctx was cut because its process stops.
func CutByStop(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrStopping)
}

// stopper tells the runs of one process that it stops, and cuts them.
type stopper struct {
	stopping chan struct{}
	once     sync.Once

	mu   sync.Mutex
	runs map[*context.CancelCauseFunc]struct{}
}

func newStopper() *stopper {
	return &stopper{stopping: make(chan struct{}), runs: map[*context.CancelCauseFunc]struct{}{}}
}

func (s *stopper) begin() { s.once.Do(func() { close(s.stopping) }) }

// cut cancels every run still going and returns how many there were.
func (s *stopper) cut() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cancel := range s.runs {
		(*cancel)(ErrStopping)
	}
	return len(s.runs)
}

// stopMiddleware runs every job where its process's stop reaches it.
type stopMiddleware struct {
	river.MiddlewareDefaults
	s *stopper
}

func (m *stopMiddleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, stoppingKey{}, m.s.stopping))
	m.s.mu.Lock()
	m.s.runs[&cancel] = struct{}{}
	m.s.mu.Unlock()
	defer func() {
		m.s.mu.Lock()
		delete(m.s.runs, &cancel)
		m.s.mu.Unlock()
		cancel(nil)
	}()
	err := doInner(ctx)
	var snooze *rivertype.JobSnoozeError
	var cancelled *rivertype.JobCancelError
	if err != nil && CutByStop(ctx) && !errors.As(err, &snooze) && !errors.As(err, &cancelled) {
		// Whatever error the cut caused, the job itself did not fail: it is available again
		// at once, without an attempt spent.
		return river.JobSnooze(0)
	}
	return err
}
