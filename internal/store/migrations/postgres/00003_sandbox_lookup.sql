-- +goose Up
-- Simulators resolve every request's sandbox token to its channel by platform and account id.
CREATE INDEX channels_account_lookup_idx ON channels (platform, external_account_id);

-- +goose Down
DROP INDEX channels_account_lookup_idx;
