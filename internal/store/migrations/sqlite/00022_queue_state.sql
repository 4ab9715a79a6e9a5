-- +goose Up
-- The queue-state gauges (store.QueueState, read at most every 15 s by each API process) count
-- the open destinations and the pending webhook deliveries: these partial indexes hold only
-- those rows, so the counts cost the backlog's size, not the whole history's. The queries name
-- the same literal conditions, which both engines need to use a partial index.
CREATE INDEX destinations_open_idx ON destinations (platform, status) WHERE status IN ('queued', 'uploading', 'processing');
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (created_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_pending_idx;
DROP INDEX destinations_open_idx;
