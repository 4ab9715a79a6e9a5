package httpapi

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
)

type unreachableBuckets struct{ calls int }

func (u *unreachableBuckets) TakeRateTokens(context.Context, string, int, float64, int) (int, float64, error) {
	u.calls++
	return 0, 0, errors.New("connection refused")
}

// TestSharedRateLimitFallsBack: when the shared buckets cannot be reached, each process limits
// on its own rather than letting everything through or refusing everything.
func TestSharedRateLimitFallsBack(t *testing.T) {
	shared := &unreachableBuckets{}
	l := newRateLimiter(0.001, 2, shared, nil)
	var got []bool
	for range 3 {
		got = append(got, l.allow(context.Background(), httptest.NewRecorder(), "key:a"))
	}
	if !got[0] || !got[1] || got[2] || shared.calls != 3 {
		t.Errorf("allowed %v with %d calls to the shared buckets; want the local burst of 2 and a refusal", got, shared.calls)
	}
}

func TestLeaseSize(t *testing.T) {
	for _, c := range []struct {
		rps   float64
		burst int
		want  int
	}{
		{20, 40, 2},     // a tenth of a second's worth
		{1000, 40, 10},  // at most a quarter of the burst
		{0.5, 3, 1},     // at least one
		{1e9, 1e9, 1e8}, // the benchmarks' unlimited keys: one take in a hundred million
	} {
		l := newRateLimiter(c.rps, c.burst, nil, nil)
		if got := l.leaseSize(); got != c.want {
			t.Errorf("lease at %v/s, burst %d: %d, want %d", c.rps, c.burst, got, c.want)
		}
	}
}
