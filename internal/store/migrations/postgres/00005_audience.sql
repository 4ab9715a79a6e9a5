-- +goose Up
-- One row per published destination: what the overview filters on (copied from its post, so
-- that totals read this table alone), the latest figures the platform gave (NULL: a figure the
-- platform does not give, never zero), and when its figures and its comments are next read
-- (NULL: never again, e.g. its channel was disconnected).
CREATE TABLE published_items (
    destination_id     UUID PRIMARY KEY REFERENCES destinations (id) ON DELETE CASCADE,
    account_id         UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id         UUID NOT NULL,
    post_id            UUID NOT NULL,
    channel_id         UUID NOT NULL,
    platform           TEXT NOT NULL,
    published_at       TIMESTAMPTZ NOT NULL,
    views              BIGINT,
    likes              BIGINT,
    comments           BIGINT,
    shares             BIGINT,
    impressions        BIGINT,
    reach              BIGINT,
    saves              BIGINT,
    watch_time_seconds BIGINT,
    metrics_synced_at  TIMESTAMPTZ,
    metrics_next_at    TIMESTAMPTZ,
    metrics_error      TEXT NOT NULL DEFAULT '',
    comments_synced_at TIMESTAMPTZ,
    comments_next_at   TIMESTAMPTZ,
    comments_error     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX published_items_account_idx ON published_items (account_id, published_at);
CREATE INDEX published_items_metrics_due_idx ON published_items (metrics_next_at) WHERE metrics_next_at IS NOT NULL;
CREATE INDEX published_items_comments_due_idx ON published_items (comments_next_at) WHERE comments_next_at IS NOT NULL;

-- Every reading that changed a destination's figures: the time series behind the latest ones.
CREATE TABLE metric_samples (
    destination_id     UUID NOT NULL REFERENCES published_items (destination_id) ON DELETE CASCADE,
    captured_at        TIMESTAMPTZ NOT NULL,
    views              BIGINT,
    likes              BIGINT,
    comments           BIGINT,
    shares             BIGINT,
    impressions        BIGINT,
    reach              BIGINT,
    saves              BIGINT,
    watch_time_seconds BIGINT,
    PRIMARY KEY (destination_id, captured_at)
);

-- Audience comments on published destinations, and the replies written to them, once each:
-- a platform's comment id is unique within the channel it was read through.
CREATE TABLE comments (
    id                 UUID PRIMARY KEY,
    account_id         UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id         UUID NOT NULL,
    post_id            UUID NOT NULL,
    destination_id     UUID NOT NULL REFERENCES published_items (destination_id) ON DELETE CASCADE,
    channel_id         UUID NOT NULL,
    platform           TEXT NOT NULL,
    platform_id        TEXT NOT NULL,
    parent_platform_id TEXT NOT NULL DEFAULT '',
    author             TEXT NOT NULL,
    text               TEXT NOT NULL,
    like_count         BIGINT,
    own                BOOLEAN NOT NULL,
    created_at         TIMESTAMPTZ NOT NULL,
    synced_at          TIMESTAMPTZ NOT NULL,
    UNIQUE (channel_id, platform_id)
);
CREATE INDEX comments_account_idx ON comments (account_id, created_at, id);
CREATE INDEX comments_destination_idx ON comments (destination_id);

-- Destinations published before this migration: their figures and comments are read from now on.
INSERT INTO published_items (destination_id, account_id, project_id, post_id, channel_id, platform, published_at,
    metrics_next_at, comments_next_at)
SELECT d.id, p.account_id, p.project_id, d.post_id, d.channel_id, d.platform, d.published_at, d.published_at, d.published_at
FROM destinations d JOIN posts p ON p.id = d.post_id
WHERE d.status = 'published' AND d.published_at IS NOT NULL;

-- +goose Down
DROP TABLE comments;
DROP TABLE metric_samples;
DROP TABLE published_items;
