package publish

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	w := &Worker{RetryBaseDelay: time.Second}
	cases := []struct {
		n          int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 500 * time.Millisecond, time.Second},
		{2, 0, time.Second, 2 * time.Second},
		{4, 0, 4 * time.Second, 8 * time.Second},
		{9, 0, 128 * time.Second, 256 * time.Second},
		{30, 0, 128 * time.Second, 256 * time.Second}, // capped at 256 × base
		{1, time.Minute, time.Minute, time.Minute},    // Retry-After wins when longer
	}
	for _, c := range cases {
		for range 50 {
			if d := w.backoff(c.n, c.retryAfter); d < c.lo || d > c.hi {
				t.Fatalf("backoff(%d, %s) = %s, want within [%s, %s]", c.n, c.retryAfter, d, c.lo, c.hi)
			}
		}
	}
	long := &Worker{RetryBaseDelay: 5 * time.Second}
	if d := long.backoff(20, 0); d > 10*time.Minute {
		t.Errorf("backoff above 10 minutes: %s", d)
	}
}
