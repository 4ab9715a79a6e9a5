package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Webhook event types (docs/CONTRACT.md, Webhooks).
const (
	EventPostScheduled          = "post.scheduled"
	EventPostPublished          = "post.published"
	EventPostPartiallyPublished = "post.partially_published"
	EventPostFailed             = "post.failed"
	EventChannelReauthRequired  = "channel.reauth_required"
	// EventChannelCheckFailed is sent the first time a channel's health check fails for a
	// reason other than its token (a missing scope, a refused API version, an account that may
	// not publish video); a refused token marks the channel reauth_required instead.
	EventChannelCheckFailed = "channel.check_failed"
)

// WebhookEvents lists every event type a webhook can subscribe to.
var WebhookEvents = []string{EventPostScheduled, EventPostPublished, EventPostPartiallyPublished, EventPostFailed,
	EventChannelReauthRequired, EventChannelCheckFailed}

// Delivery statuses of a webhook event.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

// Webhook is an endpoint an account registered for events. Secret is the signing secret as
// internal/secret sealed it; the store never sees it in plain text.
type Webhook struct {
	ID        string
	AccountID string
	URL       string
	Events    []string
	Secret    []byte
	CreatedAt time.Time
	// DisabledAt is when the webhook was disabled (nil while it is enabled), and
	// DisabledReason why: no event is recorded for a disabled webhook.
	DisabledAt     *time.Time
	DisabledReason string
}

// WebhookDelivery is one event owed to one webhook, and what its attempts found.
type WebhookDelivery struct {
	ID        string
	WebhookID string
	AccountID string
	// EventID is the event's webhook-id: the same on every attempt (and for every webhook the
	// event goes to), so that receivers can deduplicate.
	EventID   string
	EventType string
	// Payload is the exact body sent on every attempt.
	Payload        json.RawMessage
	Status         string
	Attempts       int
	LastStatusCode *int
	LastError      string
	NextAttemptAt  *time.Time
	DeliveredAt    *time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// WebhookEnqueuer inserts the jobs that deliver the given webhook_deliveries rows, in the
// transaction that wrote them.
type WebhookEnqueuer func(ctx context.Context, tx *Tx, deliveryIDs []string) error

// webhookHook holds the store's WebhookEnqueuer.
type webhookHook struct {
	fn atomic.Pointer[WebhookEnqueuer]
}

// SetWebhookEnqueuer sets what inserts delivery jobs when the store records webhook events
// (the app wires River's queue here). Without one, events are recorded and nothing delivers
// them.
func (s *Store) SetWebhookEnqueuer(fn WebhookEnqueuer) {
	if fn == nil {
		s.webhooks.fn.Store(nil)
		return
	}
	s.webhooks.fn.Store(&fn)
}

func (h *webhookHook) get() WebhookEnqueuer {
	if p := h.fn.Load(); p != nil {
		return *p
	}
	return nil
}

// webhookColumns are those a new webhook is written with; webhookReadColumns those read.
const (
	webhookColumns     = `id, account_id, url, events, secret, created_at`
	webhookReadColumns = webhookColumns + `, disabled_at, disabled_reason`
)

func scanWebhook(r scanner) (Webhook, error) {
	var w Webhook
	var events string
	var disabled sql.NullTime
	err := r.Scan(&w.ID, &w.AccountID, &w.URL, &events, &w.Secret, &w.CreatedAt, &disabled, &w.DisabledReason)
	if err != nil {
		return w, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return w, fmt.Errorf("store: webhook %s events: %w", w.ID, err)
	}
	w.CreatedAt, w.DisabledAt = w.CreatedAt.UTC(), timePtr(disabled)
	return w, nil
}

// CreateWebhook stores a webhook of w.AccountID (with w.ID when the caller chose it, as it does
// when the sealed secret is bound to the id), within the account's cap of webhooks.
func (s *Store) CreateWebhook(ctx context.Context, w Webhook) (Webhook, error) {
	if w.ID == "" {
		w.ID = uuid.NewString()
	}
	w.CreatedAt = now()
	events, err := json.Marshal(w.Events)
	if err != nil {
		return Webhook{}, err
	}
	err = s.InTx(ctx, func(tx *Tx) error {
		if err := tx.roomFor(ctx, s.capOf(CappedWebhooks), CappedWebhooks, w.AccountID, 1); err != nil {
			return err
		}
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
			w.ID, w.AccountID, w.URL, string(events), w.Secret, w.CreatedAt)
		if err != nil {
			return fmt.Errorf("store: create webhook: %w", err)
		}
		return nil
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// ListWebhooks lists an account's webhooks, oldest first.
func (s *Store) ListWebhooks(ctx context.Context, accountID string) ([]Webhook, error) {
	hooks, err := collect(scanWebhook)(s.read.QueryContext(ctx, `SELECT `+webhookReadColumns+` FROM webhooks
		WHERE account_id = $1 ORDER BY created_at, id`, accountID))
	if err != nil {
		return nil, fmt.Errorf("store: list webhooks: %w", err)
	}
	return hooks, nil
}

// GetWebhook reads one of an account's webhooks.
func (s *Store) GetWebhook(ctx context.Context, accountID, id string) (Webhook, error) {
	if !ValidID(id) {
		return Webhook{}, ErrNotFound
	}
	w, err := scanWebhook(s.read.QueryRowContext(ctx, `SELECT `+webhookReadColumns+` FROM webhooks
		WHERE id = $1 AND account_id = $2`, id, accountID))
	return w, notFound(err)
}

// DeleteWebhook deletes one of an account's webhooks with its delivery log; the jobs of its
// pending deliveries find nothing to do.
func (s *Store) DeleteWebhook(ctx context.Context, accountID, id string) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	res, err := s.write.ExecContext(ctx, `DELETE FROM webhooks WHERE id = $1 AND account_id = $2`, id, accountID)
	if err != nil {
		return fmt.Errorf("store: delete webhook: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

const webhookDeliveryColumns = `id, webhook_id, account_id, event_id, event_type, payload, status, attempts,
	last_status_code, last_error, next_attempt_at, delivered_at, created_at, updated_at`

func scanWebhookDelivery(r scanner) (WebhookDelivery, error) {
	var d WebhookDelivery
	var payload string
	var code sql.NullInt64
	var next, delivered sql.NullTime
	err := r.Scan(&d.ID, &d.WebhookID, &d.AccountID, &d.EventID, &d.EventType, &payload, &d.Status, &d.Attempts,
		&code, &d.LastError, &next, &delivered, &d.CreatedAt, &d.UpdatedAt)
	d.Payload = json.RawMessage(payload)
	if code.Valid {
		c := int(code.Int64)
		d.LastStatusCode = &c
	}
	d.NextAttemptAt, d.DeliveredAt = timePtr(next), timePtr(delivered)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, err
}

// DeliveryFilter pages a webhook's delivery log, newest first.
type DeliveryFilter struct {
	Limit int
	// AfterTime and AfterID continue after the last delivery of the previous page.
	AfterTime *time.Time
	AfterID   string
}

// ListWebhookDeliveries lists the deliveries of one of an account's webhooks, newest first.
// Another account's webhook answers ErrNotFound.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, webhookID string, f DeliveryFilter) ([]WebhookDelivery, error) {
	if _, err := s.GetWebhook(ctx, accountID, webhookID); err != nil {
		return nil, err
	}
	q := `SELECT ` + webhookDeliveryColumns + ` FROM webhook_deliveries WHERE webhook_id = $1 AND account_id = $2`
	args := []any{webhookID, accountID}
	if f.AfterTime != nil {
		q += ` AND (created_at < $3 OR (created_at = $3 AND id < $4))`
		args = append(args, f.AfterTime.UTC(), f.AfterID)
	}
	args = append(args, f.Limit)
	q += fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args))
	ds, err := collect(scanWebhookDelivery)(s.read.QueryContext(ctx, q, args...))
	if err != nil {
		return nil, fmt.Errorf("store: list webhook deliveries: %w", err)
	}
	return ds, nil
}

// LoadWebhookDelivery reads a delivery with its webhook, whoever owns them: for the delivery
// worker, never for API callers. A delivery whose webhook was deleted is ErrNotFound.
func (s *Store) LoadWebhookDelivery(ctx context.Context, id string) (WebhookDelivery, Webhook, error) {
	if !ValidID(id) {
		return WebhookDelivery{}, Webhook{}, ErrNotFound
	}
	d, err := scanWebhookDelivery(s.read.QueryRowContext(ctx, `SELECT `+webhookDeliveryColumns+`
		FROM webhook_deliveries WHERE id = $1`, id))
	if err != nil {
		return d, Webhook{}, notFound(err)
	}
	w, err := scanWebhook(s.read.QueryRowContext(ctx, `SELECT `+webhookReadColumns+` FROM webhooks WHERE id = $1`, d.WebhookID))
	return d, w, notFound(err)
}

// WebhookAttempt is the outcome of one delivery attempt.
type WebhookAttempt struct {
	// Status is the delivery's status after the attempt: delivered, pending (another attempt
	// follows at NextAttemptAt) or failed (no more attempts).
	Status string
	// StatusCode is the receiver's HTTP status; 0 when it did not answer.
	StatusCode    int
	Error         string
	NextAttemptAt *time.Time
	At            time.Time
}

// RecordWebhookAttempt counts an attempt of a delivery and stores its outcome. A delivery that
// is no longer pending (delivered by a duplicate job, say) is left alone.
func (s *Store) RecordWebhookAttempt(ctx context.Context, id string, a WebhookAttempt) error {
	at := a.At.UTC().Truncate(time.Microsecond)
	var code sql.NullInt64
	if a.StatusCode != 0 {
		code = sql.NullInt64{Int64: int64(a.StatusCode), Valid: true}
	}
	var next, delivered any
	if a.NextAttemptAt != nil {
		next = a.NextAttemptAt.UTC().Truncate(time.Microsecond)
	}
	if a.Status == WebhookDelivered {
		delivered = at
	}
	_, err := s.write.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $1, attempts = attempts + 1,
		last_status_code = $2, last_error = $3, next_attempt_at = $4, delivered_at = $5, updated_at = $6
		WHERE id = $7 AND status = $8`,
		a.Status, code, a.Error, next, delivered, at, id, WebhookPending)
	if err != nil {
		return fmt.Errorf("store: record webhook attempt: %w", err)
	}
	return nil
}

// WebhookDisableAfter is how long a webhook may go without a delivery taken before a delivery
// that fails for good disables it.
const WebhookDisableAfter = 5 * 24 * time.Hour

// DisableWebhook disables a webhook (one already disabled keeps its first reason).
func (s *Store) DisableWebhook(ctx context.Context, id, reason string, at time.Time) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE webhooks SET disabled_at = $1, disabled_reason = $2
		WHERE id = $3 AND disabled_at IS NULL`, at.UTC().Truncate(time.Microsecond), reason, id); err != nil {
		return fmt.Errorf("store: disable webhook: %w", err)
	}
	return nil
}

// SetWebhookEnabled enables or disables one of an account's webhooks by its owner's wish, and
// answers it as it now is.
func (s *Store) SetWebhookEnabled(ctx context.Context, accountID, id string, enabled bool) (Webhook, error) {
	if !ValidID(id) {
		return Webhook{}, ErrNotFound
	}
	q := `UPDATE webhooks SET disabled_at = NULL, disabled_reason = '' WHERE id = $1 AND account_id = $2`
	args := []any{id, accountID}
	if !enabled {
		q = `UPDATE webhooks SET disabled_at = COALESCE(disabled_at, $3),
			disabled_reason = CASE WHEN disabled_at IS NULL THEN 'disabled by its owner' ELSE disabled_reason END
			WHERE id = $1 AND account_id = $2`
		args = append(args, now())
	}
	res, err := s.write.ExecContext(ctx, q, args...)
	if err != nil {
		return Webhook{}, fmt.Errorf("store: enable webhook: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Webhook{}, ErrNotFound
	}
	return s.GetWebhook(ctx, accountID, id)
}

// WebhookDeliveredSince reports whether any delivery of a webhook was taken by its receiver
// after since.
func (s *Store) WebhookDeliveredSince(ctx context.Context, webhookID string, since time.Time) (bool, error) {
	var taken bool
	err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND delivered_at > $2)`,
		webhookID, since.UTC().Truncate(time.Microsecond)).Scan(&taken)
	if err != nil {
		return false, fmt.Errorf("store: webhook deliveries: %w", err)
	}
	return taken, nil
}

// SkipWebhookDelivery fails a pending delivery without sending it (its webhook was disabled);
// it counts no attempt.
func (s *Store) SkipWebhookDelivery(ctx context.Context, id, reason string) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $1, last_error = $2, next_attempt_at = NULL,
		updated_at = $3 WHERE id = $4 AND status = $5`, WebhookFailed, reason, now(), id, WebhookPending); err != nil {
		return fmt.Errorf("store: skip webhook delivery: %w", err)
	}
	return nil
}

// WebhookDeliveryRetention is how long a settled delivery stays in the delivery log.
const WebhookDeliveryRetention = 30 * 24 * time.Hour

// DeleteSettledWebhookDeliveries deletes the deliveries that were delivered or failed before
// settledBefore; pending ones stay whatever their age.
func (s *Store) DeleteSettledWebhookDeliveries(ctx context.Context, settledBefore time.Time) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE status <> 'pending' AND updated_at < $1`,
		settledBefore.UTC().Truncate(time.Microsecond))
	if err != nil {
		return 0, fmt.Errorf("store: delete settled webhook deliveries: %w", err)
	}
	return res.RowsAffected()
}

// emit records an event of an account for each of its webhooks subscribed to the type, and
// hands the new deliveries to the store's WebhookEnqueuer, all in t. data is called only when
// some webhook wants the event, so that an account without webhooks costs one indexed read.
func (t *Tx) emit(ctx context.Context, accountID, eventType string, at time.Time, data func() (any, error)) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT id, events FROM webhooks WHERE account_id = $1 AND disabled_at IS NULL`, accountID)
	if err != nil {
		return fmt.Errorf("store: read webhooks: %w", err)
	}
	var hooks []string
	for rows.Next() {
		var id, events string
		if err := rows.Scan(&id, &events); err != nil {
			rows.Close()
			return fmt.Errorf("store: read webhooks: %w", err)
		}
		var types []string
		if json.Unmarshal([]byte(events), &types) == nil && slices.Contains(types, eventType) {
			hooks = append(hooks, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read webhooks: %w", err)
	}
	if len(hooks) == 0 {
		return nil
	}
	d, err := data()
	if err != nil {
		return err
	}
	payload, err := json.Marshal(struct {
		Type      string `json:"type"`
		Timestamp string `json:"timestamp"`
		Data      any    `json:"data"`
	}{eventType, at.UTC().Format(time.RFC3339Nano), d})
	if err != nil {
		return fmt.Errorf("store: encode %s event: %w", eventType, err)
	}
	// One id per event, shared by its deliveries to every webhook and kept across retries: the
	// webhook-id receivers deduplicate on. Never a '.', which the signed content delimits with.
	eventID := "msg_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	ids := make([]string, len(hooks))
	for i, hook := range hooks {
		ids[i] = uuid.NewString()
		_, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, account_id, event_id, event_type,
			payload, status, attempts, last_error, next_attempt_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 0, '', $8, $8, $8)`,
			ids[i], hook, accountID, eventID, eventType, string(payload), WebhookPending, at)
		if err != nil {
			return fmt.Errorf("store: record webhook delivery: %w", err)
		}
	}
	if t.enqueueWebhooks != nil {
		if err := t.enqueueWebhooks(ctx, t, ids); err != nil {
			return fmt.Errorf("store: queue webhook deliveries: %w", err)
		}
	}
	return nil
}

// PostEvent is the data of a post.* event.
type PostEvent struct {
	ID           string             `json:"id"`
	ProjectID    string             `json:"project_id"`
	Status       string             `json:"status"`
	ScheduledFor *time.Time         `json:"scheduled_for"`
	PublishedAt  *time.Time         `json:"published_at"`
	Destinations []DestinationEvent `json:"destinations"`
}

// DestinationEvent is one destination in a PostEvent.
type DestinationEvent struct {
	Platform      string  `json:"platform"`
	ChannelID     string  `json:"channel_id"`
	Status        string  `json:"status"`
	URL           *string `json:"url"`
	Error         *string `json:"error"`
	ErrorCategory *string `json:"error_category"`
}

// ChannelEvent is the data of a channel.* event.
type ChannelEvent struct {
	ID        string `json:"id"`
	Platform  string `json:"platform"`
	ProjectID string `json:"project_id"`
	Status    string `json:"status"`
}

func postEventOf(p Post) PostEvent {
	e := PostEvent{ID: p.ID, ProjectID: p.ProjectID, Status: p.Status, ScheduledFor: p.ScheduledFor,
		PublishedAt: p.PublishedAt, Destinations: make([]DestinationEvent, len(p.Destinations))}
	for i, d := range p.Destinations {
		e.Destinations[i] = DestinationEvent{Platform: d.Platform, ChannelID: d.ChannelID, Status: d.Status,
			URL: optional(d.URL), Error: optional(d.Error), ErrorCategory: optional(d.ErrorCategory)}
	}
	return e
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// postEventType is the event a post entering status announces ("" for none).
func postEventType(status string) string {
	switch status {
	case PostPublished:
		return EventPostPublished
	case PostPartiallyPublished:
		return EventPostPartiallyPublished
	case PostFailed:
		return EventPostFailed
	}
	return ""
}

// emitPostSettled records the event of a post whose status just became next, read back as the
// transaction sees it.
func (t *Tx) emitPostSettled(ctx context.Context, accountID, postID, next string, at time.Time) error {
	typ := postEventType(next)
	if typ == "" {
		return nil
	}
	return t.emit(ctx, accountID, typ, at, func() (any, error) {
		p, err := scanPost(t.tx.QueryRowContext(ctx, `SELECT `+postColumns+` FROM posts WHERE id = $1`, postID))
		if err != nil {
			return nil, fmt.Errorf("store: read post for event: %w", err)
		}
		p.Destinations, err = collect(func(r scanner) (Destination, error) {
			var d Destination
			return d, r.Scan(&d.Platform, &d.ChannelID, &d.Status, &d.URL, &d.Error, &d.ErrorCategory)
		})(t.tx.QueryContext(ctx, `SELECT platform, channel_id, status, url, error, error_category
			FROM destinations WHERE post_id = $1 ORDER BY position`, postID))
		if err != nil {
			return nil, fmt.Errorf("store: read destinations for event: %w", err)
		}
		return postEventOf(p), nil
	})
}

// setChannelStatus changes a channel's status in t; a channel that becomes reauth_required
// (from another status) emits channel.reauth_required.
func (t *Tx) setChannelStatus(ctx context.Context, id, status string) error {
	var c ChannelEvent
	var accountID string
	var deleted sql.NullTime
	err := t.tx.QueryRowContext(ctx, `SELECT id, account_id, project_id, platform, status, deleted_at FROM channels
		WHERE id = $1`+t.forUpdate(), id).Scan(&c.ID, &accountID, &c.ProjectID, &c.Platform, &c.Status, &deleted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // as the UPDATE alone did: nothing to change
	}
	if err != nil {
		return fmt.Errorf("store: read channel: %w", err)
	}
	if c.Status == status {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE channels SET status = $1 WHERE id = $2`, status, id); err != nil {
		return fmt.Errorf("store: set channel status: %w", err)
	}
	if status != ChannelReauthRequired || deleted.Valid {
		// A disconnected channel concerns nobody any more.
		return nil
	}
	c.Status = status
	return t.emit(ctx, accountID, EventChannelReauthRequired, now(), func() (any, error) { return c, nil })
}
