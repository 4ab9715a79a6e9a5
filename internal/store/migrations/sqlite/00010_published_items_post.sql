-- +goose Up
-- Settling a published destination asks whether its post (and its post on that platform) was
-- published before; without this index each question read every published item, so a burst
-- of publications slowed down with the size of the table.
CREATE INDEX published_items_post_idx ON published_items (post_id, platform);

-- +goose Down
DROP INDEX published_items_post_idx;
