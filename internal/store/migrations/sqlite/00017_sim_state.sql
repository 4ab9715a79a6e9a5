-- +goose Up
-- The platform simulators' records (sim.State): each simulator's own struct, JSON-encoded,
-- named by platform, kind and id. seq orders an account's records as they were first written.
-- A record ends at expires_at (NULL: kept until housekeeping's retention of records unchanged
-- since updated_at); blobs says it may have blobs in storage, deleted with it.
CREATE TABLE sim_records (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    platform   TEXT NOT NULL,
    kind       TEXT NOT NULL,
    id         TEXT NOT NULL,
    account    TEXT NOT NULL,
    data       BLOB NOT NULL,
    blobs      BOOLEAN NOT NULL,
    expires_at TIMESTAMP,
    updated_at TIMESTAMP NOT NULL,
    UNIQUE (platform, kind, id)
);
CREATE INDEX sim_records_account_idx ON sim_records (platform, kind, account, seq);
CREATE INDEX sim_records_expiry_idx ON sim_records (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX sim_records_updated_idx ON sim_records (updated_at) WHERE expires_at IS NULL;

-- What the simulators received, as _introspect shows it: appended, never changed.
CREATE TABLE sim_entries (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    platform    TEXT NOT NULL,
    account     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    data        BLOB NOT NULL,
    received_at TIMESTAMP NOT NULL
);
CREATE INDEX sim_entries_account_idx ON sim_entries (platform, account, seq);
CREATE INDEX sim_entries_received_idx ON sim_entries (received_at);

-- +goose Down
DROP TABLE sim_entries;
DROP TABLE sim_records;
