-- +goose Up
-- The health check of a channel (reelay channels check, and the periodic job that runs it for
-- every channel): when it last ran, and whether its last conclusive result was a failure, so
-- that channel.check_failed is sent the first time a check fails and not again until the
-- channel has passed a check in between.
ALTER TABLE channels ADD COLUMN checked_at TIMESTAMP;
ALTER TABLE channels ADD COLUMN check_failed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX channels_checked_idx ON channels (checked_at) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX channels_checked_idx;
ALTER TABLE channels DROP COLUMN check_failed;
ALTER TABLE channels DROP COLUMN checked_at;
