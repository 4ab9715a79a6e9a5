-- +goose Up
-- Idempotency keys of comment replies (POST /inbox/reply): a key is claimed before the reply
-- goes to the platform and gets its reply once the platform has posted it. A key without a reply
-- is one being sent, or one whose outcome was never learned (the platform did not answer, or
-- the process stopped mid-call): it is not sent again under that key.
CREATE TABLE reply_keys (
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    reply_id     TEXT REFERENCES comments (id) ON DELETE CASCADE,
    created_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (account_id, key)
);

-- +goose Down
DROP TABLE reply_keys;
