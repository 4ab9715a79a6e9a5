package httpapi

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"
)

// Drain is a process's HTTP side stopping. Once it begins, /readyz answers 503 so that load
// balancers take the process out of their rotation while it still serves, and the requests
// that wait by design (a publish waiting for its destinations, an AI job, the dashboard's
// event stream) end early with what they have rather than holding the shutdown open.
type Drain struct {
	// ctx ends when the drain begins: waits hang on it with context.AfterFunc.
	ctx    context.Context
	begin  context.CancelFunc
	probed atomic.Int64 // unix nanoseconds of the last /readyz request
}

// NewDrain returns a Drain that has not begun.
func NewDrain() *Drain {
	ctx, cancel := context.WithCancel(context.Background())
	return &Drain{ctx: ctx, begin: cancel}
}

// Begin starts the drain; later calls do nothing.
func (d *Drain) Begin() { d.begin() }

// ProbedSince reports whether /readyz was requested at or after t: whether anything routes by
// it and needs time to see the 503.
func (d *Drain) ProbedSince(t time.Time) bool { return d.probed.Load() >= t.UnixNano() }

func (d *Drain) began() bool { return d.ctx.Err() != nil }

type drainKey struct{}

// WithDrain returns ctx carrying d: the http.Server's BaseContext, through which the handlers
// of every request learn of the drain.
func WithDrain(ctx context.Context, d *Drain) context.Context {
	return context.WithValue(ctx, drainKey{}, d)
}

func drainOf(ctx context.Context) *Drain {
	d, _ := ctx.Value(drainKey{}).(*Drain)
	return d
}

// Draining is closed when the process serving the request with ctx begins to drain; nil (never
// ready) when it was not started with WithDrain.
func Draining(ctx context.Context) <-chan struct{} {
	if d := drainOf(ctx); d != nil {
		return d.ctx.Done()
	}
	return nil
}

// errDraining is the cause of the end of a wait cut short by the drain.
var errDraining = errors.New("the server is stopping")

// waitUnlessDraining runs wait, which waits up to d for something to settle, with a context
// that also ends when the process begins to drain. A wait the drain cut is run again with
// nothing left to wait for, so that the request is answered with what stands now, as when
// its wait elapses: the client reads the rest later, from whichever process serves it.
func waitUnlessDraining[T any](r *http.Request, d time.Duration, wait func(ctx context.Context, d time.Duration) (T, error)) (T, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	if dr := drainOf(r.Context()); dr != nil {
		stop := context.AfterFunc(dr.ctx, func() { cancel(errDraining) })
		defer stop()
	}
	v, err := wait(ctx, d)
	if err != nil && errors.Is(context.Cause(ctx), errDraining) && r.Context().Err() == nil {
		return wait(r.Context(), 0)
	}
	return v, err
}
