package publish

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/store"
)

// HousekeepingArgs is the hourly job that forgets expired idempotency keys, deletes the
// temporary uploads a process killed in the middle of one left behind, and deletes webhook
// deliveries settled longer ago than store.WebhookDeliveryRetention.
type HousekeepingArgs struct{}

// Kind names the job for River.
func (HousekeepingArgs) Kind() string { return "publish_housekeeping" }

// Housekeeper works HousekeepingArgs.
type Housekeeper struct {
	river.WorkerDefaults[HousekeepingArgs]
	Store *store.Store
	Media *media.Store
	Log   *slog.Logger
}

// tempUploadAge is how old a temporary upload must be to count as abandoned: far longer than
// any upload of a 100 MB file takes.
const tempUploadAge = time.Hour

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
	deliveries, err := h.Store.DeleteSettledWebhookDeliveries(ctx, time.Now().Add(-store.WebhookDeliveryRetention))
	if err != nil {
		return fmt.Errorf("housekeeping: %w", err)
	}
	if h.Log != nil && keys+states+int64(temps)+deliveries > 0 {
		h.Log.Info("housekeeping", "expired_idempotency_keys", keys, "expired_oauth_states", states, "abandoned_uploads", temps,
			"old_webhook_deliveries", deliveries)
	}
	return nil
}

// HousekeepingJob is the periodic job that runs Housekeeper hourly (and once at start).
func HousekeepingJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Hour),
		func() (river.JobArgs, *river.InsertOpts) { return HousekeepingArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})
}
