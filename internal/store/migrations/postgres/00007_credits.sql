-- +goose Up
-- credit_reservations are the credits set aside for one piece of AI work. A reservation is
-- opened 'held' (the credits already left accounts.ai_credits) and closed exactly once:
-- 'settled' when the work succeeded (the credits are spent) or 'refunded' when it failed (the
-- credits went back). closed_at is set by the close.
CREATE TABLE credit_reservations (
    id         UUID PRIMARY KEY,
    account_id UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    amount     BIGINT NOT NULL CHECK (amount > 0),
    status     TEXT NOT NULL CHECK (status IN ('held', 'settled', 'refunded')),
    purpose    TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    closed_at  TIMESTAMPTZ
);
CREATE INDEX credit_reservations_account_idx ON credit_reservations (account_id, created_at);

-- credit_ledger records every movement of an account's AI credits. The id is a sequence, not a
-- UUID: movements of one account are serialised on its row, so id order is the order in which
-- they happened, which timestamps alone cannot tell apart within a microsecond. delta is signed
-- (0 for a settle, which only marks credits already taken as spent); balance_after is
-- accounts.ai_credits right after the movement, so the deltas of an account sum to its balance.
-- reservation_id links a reserve, settle or refund to its reservation.
CREATE TABLE credit_ledger (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id     UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    delta          BIGINT NOT NULL,
    balance_after  BIGINT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('grant', 'reserve', 'settle', 'refund', 'adjust')),
    reservation_id UUID REFERENCES credit_reservations (id) ON DELETE CASCADE,
    reason         TEXT NOT NULL DEFAULT '',
    created_at     TIMESTAMPTZ NOT NULL
);
-- An account's ledger, newest first, paged by id.
CREATE INDEX credit_ledger_account_idx ON credit_ledger (account_id, id);

-- Balances given before the ledger existed become its first rows, so that every account's
-- deltas sum to its balance from the start.
INSERT INTO credit_ledger (account_id, delta, balance_after, kind, reason, created_at)
SELECT id, ai_credits, ai_credits, 'grant', 'balance before the credit ledger', now()
FROM accounts WHERE ai_credits <> 0 ORDER BY created_at, id;

-- +goose Down
DROP TABLE credit_ledger;
DROP TABLE credit_reservations;
