-- +goose Up
-- media is each stored file, once per content hash; the bytes live in blob storage.
CREATE TABLE media (
    sha256       TEXT PRIMARY KEY,
    blob_key     TEXT NOT NULL,
    kind         TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size         INTEGER NOT NULL,
    width        INTEGER NOT NULL DEFAULT 0,
    height       INTEGER NOT NULL DEFAULT 0,
    duration_ms  INTEGER NOT NULL DEFAULT 0,
    created_at   TIMESTAMP NOT NULL
);

CREATE TABLE posts (
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id       TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    status           TEXT NOT NULL,
    title            TEXT NOT NULL DEFAULT '',
    caption          TEXT NOT NULL DEFAULT '',
    request          TEXT NOT NULL,
    video_sha256     TEXT NOT NULL REFERENCES media (sha256),
    thumbnail_sha256 TEXT REFERENCES media (sha256),
    content_hash     TEXT NOT NULL,
    usage_month      TEXT NOT NULL,
    scheduled_for    TIMESTAMP,
    published_at     TIMESTAMP,
    created_at       TIMESTAMP NOT NULL,
    updated_at       TIMESTAMP NOT NULL
);
CREATE INDEX posts_account_idx ON posts (account_id, created_at, id);
CREATE INDEX posts_content_idx ON posts (account_id, content_hash, created_at);

CREATE TABLE destinations (
    id             TEXT PRIMARY KEY,
    post_id        TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    channel_id     TEXT NOT NULL REFERENCES channels (id),
    platform       TEXT NOT NULL,
    position       INTEGER NOT NULL,
    status         TEXT NOT NULL,
    options        TEXT NOT NULL,
    state          TEXT,
    seq            INTEGER NOT NULL DEFAULT 1,
    external_id    TEXT NOT NULL DEFAULT '',
    url            TEXT NOT NULL DEFAULT '',
    message        TEXT NOT NULL DEFAULT '',
    error          TEXT NOT NULL DEFAULT '',
    error_category TEXT NOT NULL DEFAULT '',
    attempts       INTEGER NOT NULL DEFAULT 0,
    published_at   TIMESTAMP,
    updated_at     TIMESTAMP NOT NULL
);
CREATE INDEX destinations_post_idx ON destinations (post_id, position);
CREATE INDEX destinations_channel_idx ON destinations (channel_id);

CREATE TABLE idempotency_keys (
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    post_id      TEXT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    created_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (account_id, key)
);

CREATE TABLE usage_months (
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    month      TEXT NOT NULL,
    posts      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, month)
);

-- +goose Down
DROP TABLE usage_months;
DROP TABLE idempotency_keys;
DROP TABLE destinations;
DROP TABLE posts;
DROP TABLE media;
