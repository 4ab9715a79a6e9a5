-- +goose Up
-- A webhook whose receiver asked to be left alone (410 Gone) or took no delivery for days is
-- disabled: no event is recorded for it until it is enabled again. disabled_reason says why.
ALTER TABLE webhooks ADD COLUMN disabled_at TIMESTAMP;
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE webhooks DROP COLUMN disabled_reason;
ALTER TABLE webhooks DROP COLUMN disabled_at;
