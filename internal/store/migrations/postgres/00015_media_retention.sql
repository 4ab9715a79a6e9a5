-- +goose Up
-- Stored files are deleted some time after their last use (REELAY_MEDIA_RETENTION).
-- last_used_at is when a request last took the file in; purged_at when its bytes were
-- deleted from blob storage (the row stays while posts refer to it).
ALTER TABLE media ADD COLUMN last_used_at TIMESTAMPTZ;
ALTER TABLE media ADD COLUMN purged_at TIMESTAMPTZ;
UPDATE media SET last_used_at = created_at;
CREATE INDEX media_unpurged_idx ON media (last_used_at) WHERE purged_at IS NULL;

-- A claim keeps a file from being deleted while the request that took it in is still
-- deciding whether to use it; it lapses by itself should the process die.
CREATE TABLE media_claims (
    token      TEXT PRIMARY KEY,
    sha256     TEXT NOT NULL REFERENCES media (sha256) ON DELETE CASCADE,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX media_claims_sha256_idx ON media_claims (sha256, expires_at);

-- Which posts use a file, for retention's checks.
CREATE INDEX posts_video_idx ON posts (video_sha256);
CREATE INDEX posts_thumbnail_idx ON posts (thumbnail_sha256) WHERE thumbnail_sha256 IS NOT NULL;

-- +goose Down
DROP INDEX posts_thumbnail_idx;
DROP INDEX posts_video_idx;
DROP TABLE media_claims;
DROP INDEX media_unpurged_idx;
ALTER TABLE media DROP COLUMN purged_at;
ALTER TABLE media DROP COLUMN last_used_at;
