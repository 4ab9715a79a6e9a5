-- +goose Up
-- The post history filtered by when posts are scheduled reads an account's posts by that time.
-- (Filtering by creation time uses posts_account_idx, by platform the destinations of each post
-- through destinations_post_idx.)
CREATE INDEX posts_scheduled_idx ON posts (account_id, scheduled_for);

-- The inbox's "not replied to" looks up the channel's own replies to each comment: the comments
-- of a channel whose parent is that comment.
CREATE INDEX comments_replies_idx ON comments (channel_id, parent_platform_id);

-- +goose Down
DROP INDEX comments_replies_idx;
DROP INDEX posts_scheduled_idx;
