-- +goose Up
-- A consent flow is bound to the browser that opened reelay's start page for it: that browser
-- holds a random secret in a cookie, and only its SHA-256 is kept here (NULL until the page is
-- opened). The callback finishes the flow only for the browser whose cookie hashes to it.
ALTER TABLE oauth_states ADD COLUMN browser_hash BYTEA;

-- +goose Down
ALTER TABLE oauth_states DROP COLUMN browser_hash;
