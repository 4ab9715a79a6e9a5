-- +goose Up
-- Consent flows in progress: one row per state handed to a platform's consent page, consumed by
-- the callback that brings it back (so a state works once) and useless after expires_at.
CREATE TABLE oauth_states (
    id         TEXT PRIMARY KEY,
    account_id UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id UUID NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    platform   TEXT NOT NULL,
    sandbox    BOOLEAN NOT NULL,
    verifier   BYTEA,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX oauth_states_expiry_idx ON oauth_states (expires_at);

-- When a channel's access token expires (NULL: never, or unknown), so the refresher finds the
-- channels due without opening every channel's credentials; refresh_lease_until is held by the
-- one process refreshing a channel's token, so that two never refresh it at once.
ALTER TABLE channels ADD COLUMN token_expires_at TIMESTAMPTZ;
ALTER TABLE channels ADD COLUMN refresh_lease_until TIMESTAMPTZ;
CREATE INDEX channels_token_expiry_idx ON channels (token_expires_at) WHERE deleted_at IS NULL AND token_expires_at IS NOT NULL;

-- +goose Down
DROP INDEX channels_token_expiry_idx;
ALTER TABLE channels DROP COLUMN refresh_lease_until;
ALTER TABLE channels DROP COLUMN token_expires_at;
DROP TABLE oauth_states;
