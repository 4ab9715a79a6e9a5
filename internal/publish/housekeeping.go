package publish

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/sim/simstate"
	"github.com/reelay/reelay/internal/store"
)

// HousekeepingArgs is the hourly job that forgets expired idempotency keys, lapsed media
// claims and idle rate-limit buckets, deletes the temporary uploads a process killed in the
// middle of one left behind, deletes webhook deliveries settled longer ago than
// store.WebhookDeliveryRetention, deletes stored media unused for the Housekeeper's
// MediaRetention, and deletes what the sandbox's simulators keep once it expired (with the
// blobs of their uploads) or after SimRetention.
type HousekeepingArgs struct{}

// Kind names the job for River.
func (HousekeepingArgs) Kind() string { return "publish_housekeeping" }

// Housekeeper works HousekeepingArgs.
type Housekeeper struct {
	river.WorkerDefaults[HousekeepingArgs]
	Store *store.Store
	Media *media.Store
	Log   *slog.Logger
	// MediaRetention is how long media are kept after their last use (0: for good).
	MediaRetention time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time

	// lastWalk is when this process last listed the storage for files the database does not
	// know (Unix nanoseconds).
	lastWalk atomic.Int64
}

// walkEvery spaces the listings of the whole storage: what they find was stored by an earlier
// version, so once a day is plenty, and a big bucket costs one LIST per 1,000 files each time.
const walkEvery = 24 * time.Hour

// idleRateBucket is how long a credential's shared rate-limit bucket is kept unused: far longer
// than any bucket takes to refill, so forgetting it (a new one starts full) changes nothing.
const idleRateBucket = time.Hour

// purgeBatch bounds the files one round looks at, so that a round ends; the next hour's goes on.
const purgeBatch = 1000

// tempUploadAge is how old a temporary upload must be to count as abandoned: far longer than
// any upload of a 100 MB file takes.
const tempUploadAge = time.Hour

// SimRetention is how long the sandbox's simulators keep a record that does not expire by
// itself (a published item, a daily quota) after it was last written, and what they received
// (_introspect).
const SimRetention = 90 * 24 * time.Hour

// Work runs one round of housekeeping.
func (h *Housekeeper) Work(ctx context.Context, _ *river.Job[HousekeepingArgs]) error {
	keys, err := h.Store.DeleteExpiredIdempotencyKeys(ctx)
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	states, err := h.Store.DeleteExpiredOAuthStates(ctx)
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	temps, err := h.Media.CleanupTemp(ctx, tempUploadAge)
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	deliveries, err := h.Store.DeleteSettledWebhookDeliveries(ctx, now().Add(-store.WebhookDeliveryRetention))
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	claims, err := h.Store.DeleteLapsedMediaClaims(ctx)
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	if _, err := h.Store.DeleteIdleRateBuckets(ctx, idleRateBucket); err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	sim, err := h.purgeSim(ctx, now())
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	purged := 0
	if h.MediaRetention > 0 {
		if purged, err = h.purgeMedia(ctx, now()); err != nil {
			return fmt.Errorf("housekeeping: %w", err)
		}
	}
	if h.Log != nil && keys+states+int64(temps)+deliveries+claims+int64(purged)+sim > 0 {
		h.Log.Info("housekeeping", "expired_idempotency_keys", keys, "expired_oauth_states", states, "abandoned_uploads", temps,
			"old_webhook_deliveries", deliveries, "lapsed_media_claims", claims, "purged_media", purged, "sandbox_state", sim)
	}
	return nil
}

// purgeSim deletes the simulators' records that expired: first the blobs of those that have
// some (a round of at most purgeBatch; the next hour's goes on), each record once its blobs are
// gone, so that a failure leaves the record to try again; then the others, and what is older
// than SimRetention.
func (h *Housekeeper) purgeSim(ctx context.Context, now time.Time) (int64, error) {
	keys, err := h.Store.ExpiredSimRecords(ctx, now, purgeBatch)
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := simstate.DeleteBlobs(ctx, h.Media.Bucket(), k); err != nil {
			return 0, err
		}
		if err := h.Store.DeleteSimRecord(ctx, k, now); err != nil {
			return 0, err
		}
	}
	n, err := h.Store.DeleteOldSimState(ctx, now, now.Add(-SimRetention))
	return n + int64(len(keys)), err
}

// purgeMedia deletes the media unused for MediaRetention: those the database knows (a round of
// at most purgeBatch), then, once a day, stored files it does not know that are as old (a
// listing of the storage, checked against the database a page at a time).
func (h *Housekeeper) purgeMedia(ctx context.Context, now time.Time) (int, error) {
	purged, err := h.Store.PurgeMedia(ctx, now, h.MediaRetention, purgeBatch, h.Media.Delete)
	last := h.lastWalk.Load()
	if err != nil || now.Sub(time.Unix(0, last)) < walkEvery || !h.lastWalk.CompareAndSwap(last, now.UnixNano()) {
		return purged, err
	}
	deleteFile := func(ctx context.Context, id string) error {
		key, _ := media.KeyFromID(id)
		return h.Media.Delete(ctx, key)
	}
	err = h.Media.ListStoredBefore(ctx, now.Add(-h.MediaRetention), purgeBatch, func(ids []string) error {
		n, err := h.Store.DeleteUnknownMedia(ctx, ids, deleteFile)
		purged += n
		return err
	})
	return purged, err
}

// MediaRegistry records in the store the files the media store takes in (media.Registry).
type MediaRegistry struct{ Store *store.Store }

// ClaimMedia claims st for a request (store.ClaimMedia).
func (r MediaRegistry) ClaimMedia(ctx context.Context, st media.Stored) (string, bool, error) {
	return r.Store.ClaimMedia(ctx, storedMedia(&st))
}

// RestoreMedia records that a purged file's bytes are stored again (store.RestoreMedia).
func (r MediaRegistry) RestoreMedia(ctx context.Context, sha256 string) error {
	return r.Store.RestoreMedia(ctx, sha256)
}

// HousekeepingJob is the periodic job that runs Housekeeper hourly (and once at start).
func HousekeepingJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return HousekeepingArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}
