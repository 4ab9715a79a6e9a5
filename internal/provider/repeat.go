package provider

import (
	"context"
	"math/rand/v2"
	"time"
)

// Repeat is how a provider repeats one platform call in place, within a Step, when it fails
// transiently: at most Tries calls, waiting Delay before the second and twice as long before
// each next one (with equal jitter), and never less than the platform's Retry-After.
//
// It is the first of two tiers. A Step makes several calls, and the publisher (Worker) counts
// a failed Step as one of its RetryAttempts whichever call failed: with calls that fail half
// the time, a Step of four calls would lose an attempt 15 times in 16. Repeated in place, each
// call fails a Step only 1 time in 2^Tries. What still fails (a platform that is down, a
// Retry-After longer than MaxWait) goes back to the publisher, which snoozes the job with its
// own, longer back-off; the waits here stay short so that a platform that is down costs a
// Step little more than a second per call before that happens.
//
// Only a call that is safe to make again may be repeated, and each call site says why it is:
// a read; a write whose repeat the platform's protocol makes harmless (a byte range PUT again,
// a request under an idempotency key, a create whose duplicate is never published and
// expires); or, with DoChecked, a call whose effect the platform lets the provider look for
// before it is made again.
type Repeat struct {
	// Tries bounds the calls (4 when 0).
	Tries int
	// Delay is the wait before the second call (200 ms when 0), doubled for each next one.
	Delay time.Duration
	// MaxWait is the longest Retry-After waited out in place (2 s when 0, the publisher's own
	// SleepUnder); a longer one ends the tries at once, for the publisher to snooze the job.
	MaxWait time.Duration
}

// MaxCalls is how many calls r makes at most: Tries, or its default.
func (r Repeat) MaxCalls() int {
	if r.Tries <= 0 {
		return 4
	}
	return r.Tries
}

// Do makes call until it returns nil or an error that is not transient, at most Tries times,
// and returns call's last error as call returned it, for the caller to read as it reads any
// answer of the platform's. classify reads the errors (the provider's own classification of
// the platform's answers; AsError when nil). The context ends the tries early.
func (r Repeat) Do(ctx context.Context, classify func(error) *Error, call func() error) error {
	return r.DoChecked(ctx, classify, call, nil)
}

// DoChecked is Do for a call that may have taken effect even though it failed (a publish
// whose answer was lost or that failed after the platform acted). Before each repeat, check
// asks the platform whether the last call took effect after all: true ends the tries with
// nil, so that the call is never made twice; false repeats it. check is a read, which the
// caller repeats as it repeats its other reads (with Do). Its error, read by classify, ends
// the tries: a transient one with call's error (the failure the tries were about), a
// permanent one as it is. A nil check repeats the call blindly, as Do does.
func (r Repeat) DoChecked(ctx context.Context, classify func(error) *Error, call func() error, check func() (bool, error)) error {
	if classify == nil {
		classify = AsError
	}
	delay := r.Delay
	if delay <= 0 {
		delay = 200 * time.Millisecond
	}
	maxWait := r.MaxWait
	if maxWait <= 0 {
		maxWait = 2 * time.Second
	}
	for try := 1; ; try++ {
		err := call()
		if err == nil {
			return nil
		}
		pe := classify(err)
		if !pe.Transient || try >= r.MaxCalls() || pe.RetryAfter > maxWait || ctx.Err() != nil {
			return err
		}
		wait := max(delay/2+rand.N(delay/2+1), pe.RetryAfter)
		if !sleep(ctx, wait) {
			return err
		}
		delay *= 2
		if check == nil {
			continue
		}
		took, cerr := check()
		switch {
		case cerr != nil && classify(cerr).Transient:
			return err
		case cerr != nil:
			return cerr
		case took:
			return nil
		}
	}
}

// sleep waits d, or less when ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
