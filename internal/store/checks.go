package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// CheckEvent is the data of a channel.check_failed event: the channel, and the failed checks.
type CheckEvent struct {
	ChannelEvent
	Failed []CheckLine `json:"failed"`
}

// CheckLine is one failed check in a CheckEvent.
type CheckLine struct {
	Name   string `json:"name"`
	Detail string `json:"detail"`
	Fix    string `json:"fix"`
}

// ChannelsDueForCheck lists up to limit active channels whose health was last checked before
// `before` (or never), the longest unchecked first.
func (s *Store) ChannelsDueForCheck(ctx context.Context, before time.Time, limit int) ([]Channel, error) {
	channels, err := collect(scanChannel)(s.read.QueryContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE deleted_at IS NULL AND status = $1 AND (checked_at IS NULL OR checked_at < $2)
		ORDER BY checked_at IS NOT NULL, checked_at, created_at LIMIT $3`, ChannelActive, before.UTC(), limit))
	if err != nil {
		return nil, fmt.Errorf("store: channels due for a check: %w", err)
	}
	return channels, nil
}

// RecordChannelCheck stores when a channel was checked and, when the check was conclusive
// (conclusive: the platform answered), whether it failed. A channel whose last conclusive
// check passed (or that was never checked) and that now fails emits channel.check_failed with
// failed, in the same transaction; one that fails again emits nothing until a check passes in
// between. An inconclusive check (the platform unreachable) only moves checked_at.
func (s *Store) RecordChannelCheck(ctx context.Context, id string, at time.Time, conclusive bool, failed []CheckLine) error {
	return s.InTx(ctx, func(t *Tx) error {
		var c ChannelEvent
		var accountID string
		var deleted sql.NullTime
		var wasFailed bool
		err := t.tx.QueryRowContext(ctx, `SELECT id, account_id, project_id, platform, status, deleted_at, check_failed
			FROM channels WHERE id = $1`+t.forUpdate(), id).
			Scan(&c.ID, &accountID, &c.ProjectID, &c.Platform, &c.Status, &deleted, &wasFailed)
		if errors.Is(err, sql.ErrNoRows) || deleted.Valid {
			return nil // disconnected meanwhile: nothing to remember
		}
		if err != nil {
			return fmt.Errorf("store: read channel: %w", err)
		}
		nowFailed := wasFailed
		if conclusive {
			nowFailed = len(failed) > 0
		}
		if _, err := t.tx.ExecContext(ctx, `UPDATE channels SET checked_at = $1, check_failed = $2 WHERE id = $3`,
			at.UTC(), nowFailed, id); err != nil {
			return fmt.Errorf("store: record channel check: %w", err)
		}
		if !nowFailed || wasFailed {
			return nil
		}
		return t.emit(ctx, accountID, EventChannelCheckFailed, at, func() (any, error) {
			return CheckEvent{ChannelEvent: c, Failed: failed}, nil
		})
	})
}
