package client

import (
	"context"
	"time"
)

// Hooks for the external tests: they replace the clock and the waits so that retry delays can
// be asserted without being waited out.

// WithSleep replaces the wait between attempts (and between polls of WaitPost, WaitAIJob).
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = f }
}

// WithoutJitter makes every back-off delay its nominal value.
func WithoutJitter() Option {
	return func(c *Client) { c.jitter = func(d time.Duration) time.Duration { return d } }
}

// WithClock replaces the clock Retry-After dates are read against.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }
