package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// WebSession is a sign-in to the web dashboard. The token that names it lives only in the
// browser's cookie; the store keeps its hash.
type WebSession struct {
	ID        string
	AccountID string
	// APIKeyID is the key the user signed in with ("" for a sign-in without a key).
	APIKeyID string
	// ProjectID is the project the dashboard shows ("" until one is chosen).
	ProjectID    string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	MaxExpiresAt time.Time
}

// NewWebSession is a sign-in to store.
type NewWebSession struct {
	TokenHash    []byte
	AccountID    string
	APIKeyID     string
	ExpiresAt    time.Time
	MaxExpiresAt time.Time
}

// CreateWebSession stores a sign-in, and drops the sessions that have expired (of anyone), so
// that the table holds live sessions only without a sweeper of its own.
func (s *Store) CreateWebSession(ctx context.Context, n NewWebSession) (WebSession, error) {
	t := now()
	ws := WebSession{ID: uuid.NewString(), AccountID: n.AccountID, APIKeyID: n.APIKeyID, CreatedAt: t,
		ExpiresAt: n.ExpiresAt.UTC().Truncate(time.Microsecond), MaxExpiresAt: n.MaxExpiresAt.UTC().Truncate(time.Microsecond)}
	err := s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= $1`, t); err != nil {
			return err
		}
		_, err := tx.tx.ExecContext(ctx, `INSERT INTO web_sessions (id, token_hash, account_id, api_key_id, created_at, expires_at, max_expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, ws.ID, n.TokenHash, ws.AccountID, nullString(ws.APIKeyID), t, ws.ExpiresAt, ws.MaxExpiresAt)
		return err
	})
	if err != nil {
		return WebSession{}, fmt.Errorf("store: create web session: %w", err)
	}
	return ws, nil
}

// LookupWebSession finds the live session whose token has the given hash: not expired at at,
// and signed in with a key that is still active. Anything else is ErrNotFound.
func (s *Store) LookupWebSession(ctx context.Context, tokenHash []byte, at time.Time) (WebSession, error) {
	var ws WebSession
	var keyID, projectID sql.NullString
	err := s.read.QueryRowContext(ctx, `SELECT ws.id, ws.account_id, ws.api_key_id, ws.project_id, ws.created_at, ws.expires_at, ws.max_expires_at
		FROM web_sessions ws LEFT JOIN api_keys k ON k.id = ws.api_key_id
		WHERE ws.token_hash = $1 AND ws.expires_at > $2 AND (ws.api_key_id IS NULL OR k.revoked_at IS NULL)`,
		tokenHash, at.UTC()).Scan(&ws.ID, &ws.AccountID, &keyID, &projectID, &ws.CreatedAt, &ws.ExpiresAt, &ws.MaxExpiresAt)
	if err != nil {
		return WebSession{}, notFound(err)
	}
	ws.APIKeyID, ws.ProjectID = keyID.String, projectID.String
	ws.CreatedAt, ws.ExpiresAt, ws.MaxExpiresAt = ws.CreatedAt.UTC(), ws.ExpiresAt.UTC(), ws.MaxExpiresAt.UTC()
	return ws, nil
}

// ExtendWebSession moves a session's expiry to expiresAt (capped at its absolute end); it never
// brings an expiry closer.
func (s *Store) ExtendWebSession(ctx context.Context, id string, expiresAt time.Time) error {
	t := expiresAt.UTC().Truncate(time.Microsecond)
	_, err := s.write.ExecContext(ctx, `UPDATE web_sessions
		SET expires_at = CASE WHEN $1 < max_expires_at THEN $1 ELSE max_expires_at END
		WHERE id = $2 AND expires_at < $1`, t, id)
	if err != nil {
		return fmt.Errorf("store: extend web session: %w", err)
	}
	return nil
}

// SetWebSessionProject records the project a session's dashboard shows; the project must be the
// session's account's (ErrNotFound otherwise).
func (s *Store) SetWebSessionProject(ctx context.Context, id, accountID, projectID string) error {
	if !ValidID(projectID) {
		return ErrNotFound
	}
	res, err := s.write.ExecContext(ctx, `UPDATE web_sessions SET project_id = $1
		WHERE id = $2 AND account_id = $3 AND EXISTS (SELECT 1 FROM projects WHERE id = $1 AND account_id = $3)`,
		projectID, id, accountID)
	if err != nil {
		return fmt.Errorf("store: set web session project: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteWebSession ends the session whose token has the given hash (sign-out); ending one that
// does not exist is not an error.
func (s *Store) DeleteWebSession(ctx context.Context, tokenHash []byte) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM web_sessions WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("store: delete web session: %w", err)
	}
	return nil
}
