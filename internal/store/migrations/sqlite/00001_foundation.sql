-- +goose Up
CREATE TABLE accounts (
    id                 TEXT PRIMARY KEY,
    name               TEXT NOT NULL,
    monthly_post_limit INTEGER,
    ai_credits         INTEGER NOT NULL DEFAULT 0,
    suspended          INTEGER NOT NULL DEFAULT 0,
    created_at         TIMESTAMP NOT NULL
);

CREATE TABLE projects (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX projects_account_idx ON projects (account_id, created_at);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    key_hash     BLOB NOT NULL UNIQUE,
    created_at   TIMESTAMP NOT NULL,
    last_used_at TIMESTAMP,
    revoked_at   TIMESTAMP
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at);

CREATE TABLE account_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (issuer, subject)
);

CREATE TABLE channels (
    id                  TEXT PRIMARY KEY,
    account_id          TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id          TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    platform            TEXT NOT NULL,
    name                TEXT NOT NULL,
    username            TEXT NOT NULL DEFAULT '',
    avatar_url          TEXT NOT NULL DEFAULT '',
    external_account_id TEXT NOT NULL,
    sandbox             INTEGER NOT NULL DEFAULT 0,
    sandbox_behavior    TEXT NOT NULL DEFAULT '{}',
    credentials         BLOB,
    status              TEXT NOT NULL DEFAULT 'active',
    created_at          TIMESTAMP NOT NULL,
    deleted_at          TIMESTAMP
);
CREATE INDEX channels_project_idx ON channels (project_id, created_at) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX channels_external_uidx ON channels (project_id, platform, external_account_id) WHERE deleted_at IS NULL;

-- +goose Down
DROP TABLE channels;
DROP TABLE account_identities;
DROP TABLE api_keys;
DROP TABLE projects;
DROP TABLE accounts;
