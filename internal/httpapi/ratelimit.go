package httpapi

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter keeps a token bucket per credential. With one API process (SQLite, or a single
// PostgreSQL server) the buckets live in the process. API processes sharing a PostgreSQL
// database share the buckets there instead (shared): each process takes tokens a few at a time
// (leaseSize) and spends them locally, so that N processes allow a credential its limit once
// rather than N times, at the price of one statement per lease.
type rateLimiter struct {
	rps   rate.Limit
	burst int
	// shared is the database's buckets; nil keeps them in this process.
	shared RateBuckets
	log    *slog.Logger
	warned atomic.Int64 // when the shared buckets' failure was last logged (Unix seconds)

	// maxBuckets, when positive, bounds how many buckets are kept: the buckets of client
	// addresses, which anyone can make more of (see makeRoom).
	maxBuckets int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

// RateBuckets is where API processes share their token buckets (the store on PostgreSQL).
type RateBuckets interface {
	TakeRateTokens(ctx context.Context, credential string, n int, rps float64, burst int) (taken int, left float64, err error)
}

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time

	// With shared buckets: the tokens taken and not spent yet, what the shared bucket held
	// after the last take, and, after it had none, when it will have one again (until then
	// requests are refused here without asking). mu serialises one credential's takes in this
	// process.
	mu     sync.Mutex
	leased int
	left   float64
	empty  time.Time
}

// idleBucket is how long an unused bucket is kept; by then it has refilled, so dropping it
// changes nothing for its credential.
const idleBucket = 10 * time.Minute

func newRateLimiter(rps float64, burst int, shared RateBuckets, log *slog.Logger) *rateLimiter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &rateLimiter{rps: rate.Limit(rps), burst: burst, shared: shared, log: log, buckets: map[string]*bucket{}, lastSweep: time.Now()}
}

// leaseSize is how many tokens a process takes from a shared bucket at once: a tenth of a
// second's worth, at most a quarter of the burst, at least one. What one process holds unspent
// is what the others may miss, so it stays small.
func (l *rateLimiter) leaseSize() int {
	return max(1, min(l.burst/4, int(float64(l.rps)/10)))
}

// verdict is what taking a token from a bucket answered: whether the request may go on, about
// how many tokens are left, and the bucket's rate and size, for the RateLimit-* headers.
type verdict struct {
	allowed bool
	tokens  float64
	rps     rate.Limit
	burst   int
}

// setHeaders writes the RateLimit-* headers of v and, when v refused, Retry-After.
func (v verdict) setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(v.burst))
	h.Set("RateLimit-Remaining", strconv.Itoa(max(0, int(math.Floor(v.tokens)))))
	// Reset: seconds until the bucket is full again.
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil((float64(v.burst)-v.tokens)/float64(v.rps)))))
	if !v.allowed {
		wait := (1 - v.tokens) / float64(v.rps)
		h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait)))))
	}
}

// allow takes a token for the credential and sets the RateLimit-* headers; when none is left
// it also sets Retry-After and answers false.
func (l *rateLimiter) allow(ctx context.Context, w http.ResponseWriter, credential string) bool {
	v := l.take(ctx, credential)
	v.setHeaders(w)
	return v.allowed
}

// bucketOf finds (or makes) the credential's bucket, and now and then forgets idle ones.
func (l *rateLimiter) bucketOf(credential string, now time.Time) *bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[credential]
	if !ok {
		if l.maxBuckets > 0 && len(l.buckets) >= l.maxBuckets {
			l.makeRoom(now)
		}
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
	return b
}

// makeRoom, called with l.mu held when maxBuckets are kept, first forgets the buckets that have
// refilled since their last use (forgetting them changes nothing), then, if that freed less
// than a tenth, arbitrary others until a tenth is free. Only a client with that many addresses
// gets there, and what it gains is fresh buckets for addresses of its own; memory stays bounded
// whatever it does.
func (l *rateLimiter) makeRoom(now time.Time) {
	refill := time.Duration(float64(l.burst) / float64(l.rps) * float64(time.Second))
	for k, v := range l.buckets {
		if now.Sub(v.lastSeen) > refill {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) <= l.maxBuckets-l.maxBuckets/10-1 {
			break
		}
		delete(l.buckets, k)
	}
}

// take takes a token for the credential, if there is one.
func (l *rateLimiter) take(ctx context.Context, credential string) verdict {
	now := time.Now()
	b := l.bucketOf(credential, now)
	v := verdict{rps: l.rps, burst: l.burst}
	if l.shared != nil {
		v.allowed, v.tokens = l.takeShared(ctx, b, credential, now)
	} else {
		v.allowed = b.lim.AllowN(now, 1)
		v.tokens = b.lim.TokensAt(now)
	}
	return v
}

// exhausted answers, without taking anything, whether the credential's bucket (kept in this
// process) has no token left, with the verdict to tell the client. A credential without a
// bucket has all its tokens.
func (l *rateLimiter) exhausted(credential string) (verdict, bool) {
	now := time.Now()
	l.mu.Lock()
	b, ok := l.buckets[credential]
	l.mu.Unlock()
	if !ok {
		return verdict{}, false
	}
	tokens := b.lim.TokensAt(now)
	return verdict{tokens: tokens, rps: l.rps, burst: l.burst}, tokens < 1
}

// takeShared spends a token of the credential's shared bucket, taking a lease of them from the
// database when this process has none left, and answers whether the request may go on and about
// how many tokens remain. When the database cannot be asked, the process's own bucket decides.
func (l *rateLimiter) takeShared(ctx context.Context, b *bucket, credential string, now time.Time) (bool, float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leased == 0 && now.Before(b.empty) {
		// The bucket reaches one token at b.empty.
		return false, 1 - float64(l.rps)*b.empty.Sub(now).Seconds()
	}
	if b.leased == 0 {
		taken, left, err := l.shared.TakeRateTokens(ctx, credential, l.leaseSize(), float64(l.rps), l.burst)
		if err != nil {
			if last := l.warned.Load(); now.Unix()-last >= 60 && l.warned.CompareAndSwap(last, now.Unix()) {
				l.log.Warn("shared rate limits unavailable; limiting in this process", "error", err)
			}
			return b.lim.AllowN(now, 1), b.lim.TokensAt(now)
		}
		b.leased, b.left = taken, left
		if taken == 0 {
			b.empty = now.Add(time.Duration((1 - left) / float64(l.rps) * float64(time.Second)))
		}
	}
	if b.leased == 0 {
		return false, b.left
	}
	b.leased--
	return true, b.left + float64(b.leased)
}
