-- +goose Up
-- web_sessions are the web dashboard's sign-ins. The browser holds a random token in a cookie;
-- only its SHA-256 is kept here, so a copy of the database signs no one in.
--   api_key_id  the key the user signed in with: revoking it ends the session (the lookup joins
--               the key and refuses a revoked one); NULL for a sign-in without a key (OIDC)
--   project_id  the project the dashboard shows (the project switcher), NULL for the first one
--   expires_at  moved forward as the session is used (sliding), never past the session's
--               absolute end, max_expires_at
CREATE TABLE web_sessions (
    id             UUID PRIMARY KEY,
    token_hash     BYTEA NOT NULL UNIQUE,
    account_id     UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id     UUID REFERENCES api_keys (id) ON DELETE CASCADE,
    project_id     UUID REFERENCES projects (id) ON DELETE SET NULL,
    created_at     TIMESTAMPTZ NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL,
    max_expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX web_sessions_account_idx ON web_sessions (account_id);
CREATE INDEX web_sessions_expiry_idx ON web_sessions (expires_at);

-- The dashboard's calendar places a post at its scheduled time, else when it was published,
-- else when it was created; it reads an account's posts by that time.
CREATE INDEX posts_calendar_idx ON posts (account_id, (COALESCE(scheduled_for, published_at, created_at)));

-- Where the browser goes after a consent the dashboard started (a path of this server; NULL for
-- consents started through the API, which answer as before).
ALTER TABLE oauth_states ADD COLUMN return_to TEXT;

-- +goose Down
DROP INDEX posts_calendar_idx;
ALTER TABLE oauth_states DROP COLUMN return_to;
DROP TABLE web_sessions;
