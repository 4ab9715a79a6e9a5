-- +goose Up
-- Housekeeping deletes the deliveries that settled (delivered or failed) longer ago than the
-- retention (store.WebhookDeliveryRetention): it finds them by when they settled.
CREATE INDEX webhook_deliveries_settled_idx ON webhook_deliveries (updated_at) WHERE status <> 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_settled_idx;
