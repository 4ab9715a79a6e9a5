package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestTakeRateTokens: a shared bucket starts full, never gives more than it holds, even to many
// takers at once, and refills at its rate.
func TestTakeRateTokens(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx := context.Background()
	take := func(credential string, n int, rps float64) (int, float64) {
		t.Helper()
		got, left, err := s.TakeRateTokens(ctx, credential, n, rps, 10)
		if err != nil {
			t.Fatal(err)
		}
		return got, left
	}
	if got, left := take("key:a", 4, 0.001); got != 4 || left < 5.99 || left > 6.01 {
		t.Fatalf("first take: %d, left %.3f; want 4 of a full bucket of 10", got, left)
	}
	if got, _ := take("key:a", 10, 0.001); got != 6 {
		t.Fatalf("took %d, want the 6 left", got)
	}
	if got, left := take("key:a", 1, 0.001); got != 0 || left >= 1 {
		t.Fatalf("an empty bucket gave %d (left %.3f)", got, left)
	}
	if got, _ := take("key:b", 1, 0.001); got != 1 {
		t.Fatalf("another credential's bucket: %d", got)
	}

	// Many takers at once: exactly the burst between them.
	var total atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				n, _, err := s.TakeRateTokens(ctx, "key:c", 1, 0.001, 10)
				if err != nil {
					t.Error(err)
					return
				}
				total.Add(int64(n))
			}
		}()
	}
	wg.Wait()
	if total.Load() != 10 {
		t.Errorf("40 takes of one token from a bucket of 10 gave %d", total.Load())
	}

	// Refill: 20 a second, so half a second gives about 10.
	take("key:d", 10, 20)
	time.Sleep(500 * time.Millisecond)
	if got, _ := take("key:d", 10, 20); got < 8 {
		t.Errorf("after half a second at 20/s the bucket gave %d", got)
	}
	if n, err := s.DeleteIdleRateBuckets(ctx, time.Hour); err != nil || n != 0 {
		t.Errorf("deleted %d fresh buckets (%v)", n, err)
	}
	if n, err := s.DeleteIdleRateBuckets(ctx, -time.Minute); err != nil || n != 4 {
		t.Errorf("deleted %d buckets idle for the test's purpose, want 4 (%v)", n, err)
	}
}
