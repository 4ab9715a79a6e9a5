package analytics

import (
	"testing"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

func TestNextRead(t *testing.T) {
	published := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		age   time.Duration
		every time.Duration
	}{
		{0, 10 * time.Minute},
		{30 * time.Minute, 10 * time.Minute},
		{3 * time.Hour, 30 * time.Minute},
		{3 * 24 * time.Hour, 2 * time.Hour},
		{20 * 24 * time.Hour, 12 * time.Hour},
		{60 * 24 * time.Hour, 48 * time.Hour},
		{400 * 24 * time.Hour, 7 * 24 * time.Hour},
	} {
		now := published.Add(tc.age)
		seen := map[time.Duration]bool{}
		for range 50 {
			wait := NextRead(published, now).Sub(now)
			if wait < tc.every*9/10 || wait > tc.every*11/10 {
				t.Fatalf("age %s: next read in %s, want %s ± 10%%", tc.age, wait, tc.every)
			}
			seen[wait] = true
		}
		if len(seen) < 2 {
			t.Errorf("age %s: every read comes due at the same moment (%v)", tc.age, seen)
		}
	}
}

func TestRetryAt(t *testing.T) {
	published := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := published.Add(3 * 24 * time.Hour)
	for _, tc := range []struct {
		name     string
		err      *provider.Error
		min, max time.Duration
	}{
		{"rate limit with a long Retry-After", provider.Transient(provider.CategoryRateLimited, 429, time.Hour, "slow down"), time.Hour, time.Hour},
		{"rate limit with a short Retry-After", provider.Transient(provider.CategoryRateLimited, 429, time.Second, "slow down"), 5 * time.Minute, 5 * time.Minute},
		{"quota", provider.Permanent(provider.CategoryQuotaExceeded, 403, "quota"), 5 * time.Minute, 5 * time.Minute},
		{"unavailable", provider.Transient(provider.CategoryUpstreamUnavailable, 503, 0, "down"), 15 * time.Minute, 15 * time.Minute},
		{"refused", provider.Permanent(provider.CategoryAuthExpired, 401, "token"), 108 * time.Minute, 132 * time.Minute},
	} {
		if wait := RetryAt(tc.err, published, now).Sub(now); wait < tc.min || wait > tc.max {
			t.Errorf("%s: retry in %s, want %s–%s", tc.name, wait, tc.min, tc.max)
		}
	}
}
