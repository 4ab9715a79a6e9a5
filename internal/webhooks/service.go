package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

// Service is the one place behind both front doors' webhooks (/api/v1/webhooks and the
// dashboard's webhooks pages): registration (Register's checks), the delivery log's paging,
// and the same refusal for a webhook the account does not have.
type Service struct {
	Store *store.Store
	// Box seals the signing secrets; Policy is where webhook URLs may point (nil: public
	// addresses only).
	Box    *secret.Box
	Policy media.AddressPolicy
}

// notFound words the store's refusal of a webhook id the account does not hold.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("webhook")
	}
	return err
}

// Register registers a webhook for the account (Register) and answers it with its signing
// secret, shown this once.
func (s Service) Register(ctx context.Context, accountID, rawURL string, events []string) (store.Webhook, string, error) {
	policy := s.Policy
	if policy == nil {
		policy = media.PublicOnly
	}
	return Register(ctx, s.Store, s.Box, policy, accountID, rawURL, events)
}

// List is the account's webhooks.
func (s Service) List(ctx context.Context, accountID string) ([]store.Webhook, error) {
	return s.Store.ListWebhooks(ctx, accountID)
}

// Get is one of the account's webhooks.
func (s Service) Get(ctx context.Context, accountID, id string) (store.Webhook, error) {
	hook, err := s.Store.GetWebhook(ctx, accountID, id)
	return hook, notFound(err)
}

// SetEnabled enables one of the account's webhooks again, or disables it.
func (s Service) SetEnabled(ctx context.Context, accountID, id string, enabled bool) (store.Webhook, error) {
	hook, err := s.Store.SetWebhookEnabled(ctx, accountID, id, enabled)
	return hook, notFound(err)
}

// Delete removes one of the account's webhooks.
func (s Service) Delete(ctx context.Context, accountID, id string) error {
	return notFound(s.Store.DeleteWebhook(ctx, accountID, id))
}

// Deliveries is one page of a webhook's delivery log, newest first: at most limit deliveries
// after cursor ("" for the first page), and the cursor of the next page (nil on the last).
func (s Service) Deliveries(ctx context.Context, accountID, id, cursor string, limit int) ([]store.WebhookDelivery, *string, error) {
	filter := store.DeliveryFilter{Limit: limit + 1}
	var f apierr.Fields
	filter.AfterTime, filter.AfterID = store.ReadCursor(&f, cursor)
	if err := f.Err(); err != nil {
		return nil, nil, err
	}
	ds, err := s.Store.ListWebhookDeliveries(ctx, accountID, id, filter)
	if err != nil {
		return nil, nil, notFound(err)
	}
	ds, next := store.Page(ds, limit, func(d store.WebhookDelivery) (time.Time, string) { return d.CreatedAt, d.ID })
	return ds, next, nil
}
