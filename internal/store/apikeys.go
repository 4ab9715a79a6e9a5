package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// APIKey is the stored record of a key: never the key itself, only its SHA-256 and a short
// display prefix.
type APIKey struct {
	ID         string
	AccountID  string
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// NewAPIKey is a key minted by internal/auth, ready to be stored.
type NewAPIKey struct {
	Name   string
	Prefix string
	Hash   []byte
}

// KeyOwner is what authentication learns from a key: whose it is.
type KeyOwner struct {
	KeyID     string
	AccountID string
}

// CreateAPIKey stores a new key for an account, within its cap of active keys.
func (s *Store) CreateAPIKey(ctx context.Context, accountID string, k NewAPIKey) (key APIKey, err error) {
	err = s.InTx(ctx, func(tx *Tx) error {
		if err := tx.roomFor(ctx, s.capOf(CappedAPIKeys), CappedAPIKeys, accountID, 1); err != nil {
			return err
		}
		key, err = createAPIKey(ctx, tx.tx, accountID, k)
		return err
	})
	return key, err
}

func createAPIKey(ctx context.Context, q queryer, accountID string, k NewAPIKey) (APIKey, error) {
	key := APIKey{ID: uuid.NewString(), AccountID: accountID, Name: k.Name, Prefix: k.Prefix, CreatedAt: now()}
	_, err := q.ExecContext(ctx, `INSERT INTO api_keys (id, account_id, name, prefix, key_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, key.ID, key.AccountID, key.Name, key.Prefix, k.Hash, key.CreatedAt)
	if err != nil {
		return APIKey{}, fmt.Errorf("store: create api key: %w", err)
	}
	return key, nil
}

// ListAPIKeys lists an account's active (not revoked) keys, oldest first.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string) ([]APIKey, error) {
	keys, err := collect(scanAPIKey)(s.read.QueryContext(ctx, `SELECT id, account_id, name, prefix, created_at, last_used_at
		FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, accountID))
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", err)
	}
	return keys, nil
}

func scanAPIKey(r scanner) (APIKey, error) {
	var k APIKey
	var used sql.NullTime
	err := r.Scan(&k.ID, &k.AccountID, &k.Name, &k.Prefix, &k.CreatedAt, &used)
	k.CreatedAt = k.CreatedAt.UTC()
	k.LastUsedAt = timePtr(used)
	return k, err
}

// RevokeAPIKey revokes one of an account's active keys. A key that is already revoked, or
// belongs to another account, is ErrNotFound.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, id string) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	res, err := s.write.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $1
		WHERE id = $2 AND account_id = $3 AND revoked_at IS NULL`, now(), id, accountID)
	if err != nil {
		return fmt.Errorf("store: revoke api key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// LookupAPIKey finds the active key with the given hash.
func (s *Store) LookupAPIKey(ctx context.Context, hash []byte) (KeyOwner, error) {
	var o KeyOwner
	err := s.read.QueryRowContext(ctx, `SELECT id, account_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
		hash).Scan(&o.KeyID, &o.AccountID)
	return o, notFound(err)
}

// TouchAPIKeys records when keys were last used, in one transaction. Authentication collects
// these in memory and flushes them now and then, so that a request costs no write.
func (s *Store) TouchAPIKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.InTx(ctx, func(tx *Tx) error {
		for id, at := range used {
			_, err := tx.tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $1
				WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $1)`, at.UTC().Truncate(time.Microsecond), id)
			if err != nil {
				return fmt.Errorf("store: touch api keys: %w", err)
			}
		}
		return nil
	})
}
