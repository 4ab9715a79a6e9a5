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
    -- published_day is published_at's UTC date (YYYY-MM-DD); first_of_post marks the first of
    -- its post's destinations to publish, first_on_platform the first on its platform: what
    -- figure_totals counts posts by.
    published_day      TEXT NOT NULL,
    first_of_post      BOOLEAN NOT NULL,
    first_on_platform  BOOLEAN NOT NULL,
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

-- The overview's totals per account, project, platform and UTC day of publishing, kept up to
-- date with every change of published_items, so that totals read a few rows per day instead of
-- every destination: each figure's sum over the destinations that gave it and their number
-- (a figure no destination gave has _n = 0 and shows as null, never as zero). posts counts the
-- posts first published on the platform that day, first_posts those first published anywhere.
CREATE TABLE figure_totals (
    account_id                 UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id                 UUID NOT NULL,
    platform                   TEXT NOT NULL,
    day                        TEXT NOT NULL,
    destinations               BIGINT NOT NULL DEFAULT 0,
    posts                      BIGINT NOT NULL DEFAULT 0,
    first_posts                BIGINT NOT NULL DEFAULT 0,
    views                      BIGINT NOT NULL DEFAULT 0,
    views_n                    BIGINT NOT NULL DEFAULT 0,
    likes                      BIGINT NOT NULL DEFAULT 0,
    likes_n                    BIGINT NOT NULL DEFAULT 0,
    comments                   BIGINT NOT NULL DEFAULT 0,
    comments_n                 BIGINT NOT NULL DEFAULT 0,
    shares                     BIGINT NOT NULL DEFAULT 0,
    shares_n                   BIGINT NOT NULL DEFAULT 0,
    impressions                BIGINT NOT NULL DEFAULT 0,
    impressions_n              BIGINT NOT NULL DEFAULT 0,
    reach                      BIGINT NOT NULL DEFAULT 0,
    reach_n                    BIGINT NOT NULL DEFAULT 0,
    saves                      BIGINT NOT NULL DEFAULT 0,
    saves_n                    BIGINT NOT NULL DEFAULT 0,
    watch_time_seconds         BIGINT NOT NULL DEFAULT 0,
    watch_time_seconds_n       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, project_id, platform)
);

-- Destinations published before this migration: their figures and comments are read from now on.
INSERT INTO published_items (destination_id, account_id, project_id, post_id, channel_id, platform, published_at,
    published_day, first_of_post, first_on_platform, metrics_next_at, comments_next_at)
SELECT d.id, p.account_id, p.project_id, d.post_id, d.channel_id, d.platform, d.published_at, to_char(d.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'),
    ROW_NUMBER() OVER (PARTITION BY d.post_id ORDER BY d.published_at, d.id) = 1,
    ROW_NUMBER() OVER (PARTITION BY d.post_id, d.platform ORDER BY d.published_at, d.id) = 1,
    d.published_at, d.published_at
FROM destinations d JOIN posts p ON p.id = d.post_id
WHERE d.status = 'published' AND d.published_at IS NOT NULL;

INSERT INTO figure_totals (account_id, project_id, platform, day, destinations, posts, first_posts)
SELECT account_id, project_id, platform, published_day, COUNT(*),
    SUM(CASE WHEN first_on_platform THEN 1 ELSE 0 END), SUM(CASE WHEN first_of_post THEN 1 ELSE 0 END)
FROM published_items GROUP BY account_id, project_id, platform, published_day;

-- +goose Down
DROP TABLE figure_totals;
DROP TABLE comments;
DROP TABLE metric_samples;
DROP TABLE published_items;
