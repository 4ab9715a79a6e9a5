-- +goose Up
-- A rendition is a stored file converted from a post's video so that a platform accepts it
-- (internal/conform plans it, a make_rendition job makes it). It is named by its source and
-- its conversion, so every destination and retry that needs the same conversion of the same
-- file shares it, and it lives as long as its source: retention deletes both together.
CREATE TABLE renditions (
    key           TEXT PRIMARY KEY,
    source_sha256 TEXT NOT NULL REFERENCES media (sha256) ON DELETE CASCADE,
    conversion    TEXT NOT NULL,
    status        TEXT NOT NULL,
    progress      REAL NOT NULL DEFAULT 0,
    error         TEXT NOT NULL DEFAULT '',
    blob_key      TEXT NOT NULL DEFAULT '',
    sha256        TEXT NOT NULL DEFAULT '',
    size          INTEGER NOT NULL DEFAULT 0,
    width         INTEGER NOT NULL DEFAULT 0,
    height        INTEGER NOT NULL DEFAULT 0,
    duration_ms   INTEGER NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL,
    updated_at    TIMESTAMP NOT NULL
);
CREATE INDEX renditions_source_idx ON renditions (source_sha256);

-- What a destination's video needs (a JSON conform.Plan; '' for a destination planned before
-- this migration or needing nothing), and the rendition it is sent instead of the post's video.
ALTER TABLE destinations ADD COLUMN conversion TEXT NOT NULL DEFAULT '';
ALTER TABLE destinations ADD COLUMN rendition_key TEXT NOT NULL DEFAULT '';
CREATE INDEX destinations_rendition_idx ON destinations (rendition_key) WHERE rendition_key <> '';

-- +goose Down
DROP INDEX destinations_rendition_idx;
ALTER TABLE destinations DROP COLUMN rendition_key;
ALTER TABLE destinations DROP COLUMN conversion;
DROP TABLE renditions;
