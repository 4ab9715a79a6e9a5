package provider

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRepeatDo(t *testing.T) {
	unavailable := Transient(CategoryUpstreamUnavailable, 503, 0, "down")
	refused := Permanent(CategoryInvalidOptions, 400, "no")
	throttled := Transient(CategoryRateLimited, 429, time.Minute, "later")
	briefly := Transient(CategoryRateLimited, 429, 30*time.Millisecond, "in a moment")
	raw := errors.New("connection reset")
	for _, tc := range []struct {
		name string
		// answers are what the calls return, in order (nil: success); the last repeats.
		answers   []error
		want      error
		wantCalls int
	}{
		{"success at once", []error{nil}, nil, 1},
		{"transient twice, then success", []error{unavailable, unavailable, nil}, nil, 3},
		{"a failure outside Error counts as transient", []error{raw, nil}, nil, 2},
		{"permanent: not repeated", []error{refused}, refused, 1},
		{"transient, then permanent", []error{unavailable, refused}, refused, 2},
		{"always transient: Tries calls", []error{unavailable}, unavailable, 4},
		{"a Retry-After past MaxWait goes back to the publisher", []error{throttled, nil}, throttled, 1},
		{"a short Retry-After is waited out", []error{briefly, nil}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			started := time.Now()
			err := Repeat{Delay: time.Millisecond}.Do(t.Context(), nil, func() error {
				calls++
				return tc.answers[min(calls, len(tc.answers))-1]
			})
			if err != tc.want || calls != tc.wantCalls {
				t.Errorf("got %v after %d calls, want %v after %d", err, calls, tc.want, tc.wantCalls)
			}
			if tc.want == nil && tc.answers[0] == briefly && time.Since(started) < 30*time.Millisecond {
				t.Errorf("repeated %s after the failure, before its Retry-After", time.Since(started))
			}
		})
	}
}

func TestRepeatDoStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := Repeat{Delay: time.Hour}.Do(ctx, nil, func() error {
		calls++
		cancel()
		return Transient(CategoryUpstreamUnavailable, 503, 0, "down")
	})
	if err == nil || calls != 1 {
		t.Errorf("got %v after %d calls", err, calls)
	}
}

func TestRepeatDoChecked(t *testing.T) {
	unavailable := Transient(CategoryUpstreamUnavailable, 503, 0, "down")
	other := Permanent(CategoryInternal, 0, "another record holds the key")
	type check struct {
		took bool
		err  error
	}
	for _, tc := range []struct {
		name string
		// calls and checks are what each call and check returns, in order; the last repeats.
		calls      []error
		checks     []check
		want       error
		wantCalls  int
		wantChecks int
	}{
		{"no check after a success", []error{nil}, []check{{}}, nil, 1, 0},
		{"took effect: not made again", []error{unavailable}, []check{{took: true}}, nil, 1, 1},
		{"did not take effect: made again", []error{unavailable, nil}, []check{{took: false}}, nil, 2, 1},
		{"checked before every repeat", []error{unavailable}, []check{{took: false}}, unavailable, 4, 3},
		{"a failed check ends the tries with the call's error", []error{unavailable},
			[]check{{err: Transient(CategoryUpstreamUnavailable, 502, 0, "still down")}}, unavailable, 1, 1},
		{"a permanent check error is returned", []error{unavailable}, []check{{err: other}}, other, 1, 1},
		{"a permanent call error is not checked", []error{other}, []check{{took: true}}, other, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls, checks := 0, 0
			err := Repeat{Delay: time.Millisecond}.DoChecked(t.Context(), nil, func() error {
				calls++
				return tc.calls[min(calls, len(tc.calls))-1]
			}, func() (bool, error) {
				checks++
				c := tc.checks[min(checks, len(tc.checks))-1]
				return c.took, c.err
			})
			if err != tc.want || calls != tc.wantCalls || checks != tc.wantChecks {
				t.Errorf("got %v after %d calls and %d checks, want %v after %d and %d", err, calls, checks, tc.want, tc.wantCalls, tc.wantChecks)
			}
		})
	}
}

// The provider's classify reads the errors, and the caller gets the last one as the call
// returned it, to read the platform's answer itself.
func TestRepeatDoClassifies(t *testing.T) {
	type platformError struct{ error }
	refused := platformError{errors.New("scope_not_authorized")}
	down := platformError{errors.New("internal_error")}
	classify := func(err error) *Error {
		if err == down {
			return Transient(CategoryUpstreamUnavailable, 503, 0, "down")
		}
		return Permanent(CategoryAuthExpired, 401, "refused")
	}
	calls := 0
	err := Repeat{Delay: time.Millisecond}.Do(t.Context(), classify, func() error {
		calls++
		if calls < 3 {
			return down
		}
		return refused
	})
	if err != refused || calls != 3 {
		t.Errorf("got %v after %d calls, want the platform's refusal after 3", err, calls)
	}
}
