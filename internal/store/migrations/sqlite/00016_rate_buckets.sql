-- +goose Up
-- The token bucket of each credential, shared by the API processes on one database: each
-- process takes tokens from here a few at a time, so that N processes allow a credential its
-- limit once, not N times. (Only PostgreSQL runs several API processes; the table exists on
-- SQLite for a uniform schema.)
CREATE TABLE rate_buckets (
    credential TEXT PRIMARY KEY,
    tokens     REAL NOT NULL,
    updated_at TIMESTAMP NOT NULL
);

-- +goose Down
DROP TABLE rate_buckets;
