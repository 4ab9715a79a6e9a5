package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// UsageTracker remembers when keys were used and writes that to the store in batches, so that
// an authenticated request costs no database write.
type UsageTracker struct {
	mu      sync.Mutex
	pending map[string]time.Time
	flush   func(context.Context, map[string]time.Time) error
	log     *slog.Logger
}

// NewUsageTracker returns a tracker that writes through flush.
func NewUsageTracker(flush func(context.Context, map[string]time.Time) error, log *slog.Logger) *UsageTracker {
	return &UsageTracker{pending: map[string]time.Time{}, flush: flush, log: log}
}

// Used records that a key was used now.
func (u *UsageTracker) Used(keyID string, at time.Time) {
	u.mu.Lock()
	if at.After(u.pending[keyID]) {
		u.pending[keyID] = at
	}
	u.mu.Unlock()
}

// Pending returns when a key was last used, if that is not yet written.
func (u *UsageTracker) Pending(keyID string) (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t, ok := u.pending[keyID]
	return t, ok
}

// Flush writes what is pending. On failure the times are kept for the next try.
func (u *UsageTracker) Flush(ctx context.Context) error {
	u.mu.Lock()
	batch := u.pending
	u.pending = map[string]time.Time{}
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := u.flush(ctx, batch); err != nil {
		u.mu.Lock()
		for id, t := range batch {
			if t.After(u.pending[id]) {
				u.pending[id] = t
			}
		}
		u.mu.Unlock()
		return err
	}
	return nil
}

// Run flushes every interval until ctx ends, then once more.
func (u *UsageTracker) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := u.Flush(fctx); err != nil {
				u.log.Warn("write key usage at shutdown", "error", err)
			}
			cancel()
			return
		case <-t.C:
			if err := u.Flush(ctx); err != nil {
				u.log.Warn("write key usage", "error", err)
			}
		}
	}
}
