package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// takeRateTokens refills the bucket by the time since it was last touched (the database's
// clock, the same for every process), caps it at the burst, and takes up to $2 whole tokens.
const takeRateTokens = `WITH cur AS (
		SELECT LEAST($3::float8, tokens + $4::float8 * EXTRACT(EPOCH FROM (now() - updated_at))::float8) AS t
		FROM rate_buckets WHERE credential = $1 FOR UPDATE
	), took AS (
		SELECT t, LEAST($2::int, GREATEST(FLOOR(t), 0)::int) AS n FROM cur
	)
	UPDATE rate_buckets SET tokens = took.t - took.n, updated_at = now() FROM took
	WHERE credential = $1 RETURNING took.n, took.t - took.n`

// TakeRateTokens takes up to n tokens from credential's token bucket (refilled at rps, holding
// at most burst, full when new), which every API process on the database shares, and answers
// how many it took and how many are left. PostgreSQL only: one SQLite database has one server.
func (s *Store) TakeRateTokens(ctx context.Context, credential string, n int, rps float64, burst int) (taken int, left float64, err error) {
	if s.dialect != Postgres {
		return 0, 0, errors.New("store: shared rate limits need PostgreSQL")
	}
	for range 2 {
		err = s.write.QueryRowContext(ctx, takeRateTokens, credential, n, burst, rps).Scan(&taken, &left)
		if !errors.Is(err, sql.ErrNoRows) {
			break
		}
		// A credential's first request: its bucket starts full.
		_, err = s.write.ExecContext(ctx, `INSERT INTO rate_buckets (credential, tokens, updated_at) VALUES ($1, $2, now())
			ON CONFLICT (credential) DO NOTHING`, credential, burst)
		if err != nil {
			break
		}
	}
	if err != nil {
		return 0, 0, fmt.Errorf("store: take rate tokens: %w", err)
	}
	return taken, left, nil
}

// DeleteIdleRateBuckets forgets the buckets untouched for longer than idle: by then they have
// refilled, and a new one starts full. Idleness is measured on the database's clock, which
// stamped updated_at, not on this process's, which may differ from it.
func (s *Store) DeleteIdleRateBuckets(ctx context.Context, idle time.Duration) (int64, error) {
	if s.dialect != Postgres {
		return 0, nil // TakeRateTokens writes no bucket there
	}
	res, err := s.write.ExecContext(ctx, `DELETE FROM rate_buckets WHERE updated_at < now() - $1 * INTERVAL '1 microsecond'`,
		idle.Microseconds())
	if err != nil {
		return 0, fmt.Errorf("store: delete idle rate buckets: %w", err)
	}
	return res.RowsAffected()
}
