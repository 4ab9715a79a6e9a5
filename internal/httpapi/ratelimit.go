package httpapi

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter keeps a token bucket per credential. The buckets live in this process: with
// several API processes behind a balancer each applies the limit on its own, which bounds a
// credential to N times the limit, an accepted trade for needing no shared state.
type rateLimiter struct {
	rps   rate.Limit
	burst int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// idleBucket is how long an unused bucket is kept; by then it has refilled, so dropping it
// changes nothing for its credential.
const idleBucket = 10 * time.Minute

func newRateLimiter(rps float64, burst int) *rateLimiter {
	return &rateLimiter{rps: rate.Limit(rps), burst: burst, buckets: map[string]*bucket{}, lastSweep: time.Now()}
}

// allow takes a token for the credential and sets the RateLimit-* headers; when none is left
// it also sets Retry-After and answers false.
func (l *rateLimiter) allow(w http.ResponseWriter, credential string) bool {
	now := time.Now()
	l.mu.Lock()
	b, ok := l.buckets[credential]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(l.rps, l.burst)}
		l.buckets[credential] = b
	}
	b.lastSeen = now
	if now.Sub(l.lastSweep) > idleBucket {
		for k, v := range l.buckets {
			if now.Sub(v.lastSeen) > idleBucket {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	l.mu.Unlock()

	allowed := b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(l.burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(0, int(math.Floor(tokens)))))
	// Reset: seconds until the bucket is full again.
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil((float64(l.burst)-tokens)/float64(l.rps)))))
	if !allowed {
		wait := (1 - tokens) / float64(l.rps)
		h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait)))))
	}
	return allowed
}
