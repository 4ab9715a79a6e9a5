-- +goose Up
-- webhooks are the endpoints an account registered for lifecycle events. secret is the signing
-- secret sealed by internal/secret (never stored in plain text); events is a JSON array of
-- event types.
CREATE TABLE webhooks (
    id         UUID PRIMARY KEY,
    account_id UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    secret     BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
-- Every state change reads an account's webhooks through this index (and nothing more when
-- there are none).
CREATE INDEX webhooks_account_idx ON webhooks (account_id, created_at);

-- webhook_deliveries are the events owed to an endpoint: one row per event and webhook,
-- written in the transaction of the state change, updated by each attempt. account_id repeats
-- the webhook's, so that listings are scoped without a join; rows go with their webhook.
CREATE TABLE webhook_deliveries (
    id               UUID PRIMARY KEY,
    webhook_id       UUID NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    account_id       UUID NOT NULL,
    event_id         TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    last_error       TEXT NOT NULL DEFAULT '',
    next_attempt_at  TIMESTAMPTZ,
    delivered_at     TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
-- The delivery log of a webhook, newest first, paged by (created_at, id).
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at, id);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
