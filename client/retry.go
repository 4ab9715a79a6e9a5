package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// RetryPolicy bounds how the client retries a request that failed transiently.
type RetryPolicy struct {
	// MaxRetries is how many times a request may be sent again after its first attempt; 0
	// never retries.
	MaxRetries int
	// BaseDelay is the wait before the first retry; each later one doubles it, with jitter
	// (a wait falls between half and all of its nominal value).
	BaseDelay time.Duration
	// MaxDelay caps a wait. A Retry-After longer than this is not waited out: the error is
	// returned with Error.RetryAfter, for the caller to decide.
	MaxDelay time.Duration
}

// DefaultRetryPolicy is 3 retries, 500 ms doubling to at most 30 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second}
}

func (p RetryPolicy) validate() error {
	if p.MaxRetries < 0 || p.BaseDelay < 0 || p.MaxDelay < 0 {
		return fmt.Errorf("reelay: retry policy %+v: retries and delays must not be negative", p)
	}
	if p.MaxRetries > 0 && p.MaxDelay < p.BaseDelay {
		return fmt.Errorf("reelay: retry policy %+v: MaxDelay is below BaseDelay", p)
	}
	return nil
}

// backoff is the nominal wait before retry number attempt+1, jittered.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retry.BaseDelay
	for range attempt {
		d *= 2
		if d >= c.retry.MaxDelay {
			d = c.retry.MaxDelay
			break
		}
	}
	return c.jitter(min(d, c.retry.MaxDelay))
}

// equalJitter waits between half and all of d, so that clients failing together do not come
// back together, yet none retries at once.
func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// retryDelay decides whether the failure of attempt may be retried and after how long.
//
//   - 429 and 503 say the request was refused before any work: every request is retried.
//   - 502 and 504 come from a gateway that may have passed the request on: only idempotent
//     requests are retried (a publish is, by its Idempotency-Key).
//   - No answer at all: idempotent requests are retried; others only when the connection was
//     never made, so that nothing reached the server.
//   - An upload whose reader cannot be rewound is retried only when none of it was read.
//
// Other statuses (400, 404, 409, 500, ...) are answers, not accidents, and are returned.
func (c *Client) retryDelay(cl *call, attempt int, err error) (time.Duration, bool) {
	if attempt >= c.retry.MaxRetries {
		return 0, false
	}
	if cl.form != nil && !cl.form.replayable() {
		return 0, false
	}
	var apiErr *Error
	var reqErr *RequestError
	switch {
	case errors.As(err, &apiErr):
		switch apiErr.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		case http.StatusBadGateway, http.StatusGatewayTimeout:
			if cl.safety != idempotent {
				return 0, false
			}
		default:
			return 0, false
		}
		if apiErr.RetryAfter > 0 {
			if apiErr.RetryAfter > c.retry.MaxDelay {
				return 0, false
			}
			return apiErr.RetryAfter, true
		}
		return c.backoff(attempt), true
	case errors.As(err, &reqErr):
		if cl.safety != idempotent && !neverConnected(reqErr.Err) {
			return 0, false
		}
		return c.backoff(attempt), true
	}
	return 0, false
}

// neverConnected tells a failure to connect (nothing was sent) from a failure after.
func neverConnected(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// sleepContext waits d, or less when ctx ends first.
func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
