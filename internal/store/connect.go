package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// OAuthState is a consent flow in progress: what the state parameter handed to a platform
// stands for. Verifier is the PKCE code verifier, sealed.
type OAuthState struct {
	ID        string
	AccountID string
	ProjectID string
	Platform  string
	Sandbox   bool
	Verifier  []byte
	ExpiresAt time.Time
	// ReturnTo is the path of this server the browser goes to once the consent is over ("" for
	// consents started through the API).
	ReturnTo string
}

// CreateOAuthState records a consent flow.
func (s *Store) CreateOAuthState(ctx context.Context, st OAuthState) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO oauth_states (id, account_id, project_id, platform, sandbox, verifier, expires_at, return_to)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		st.ID, st.AccountID, st.ProjectID, st.Platform, st.Sandbox, st.Verifier, st.ExpiresAt.UTC(), nullString(st.ReturnTo))
	if err != nil {
		return fmt.Errorf("store: create oauth state: %w", err)
	}
	return nil
}

const oauthStateColumns = `id, account_id, project_id, platform, sandbox, verifier, expires_at, return_to`

func scanOAuthState(row *sql.Row) (OAuthState, error) {
	var st OAuthState
	var returnTo sql.NullString
	err := row.Scan(&st.ID, &st.AccountID, &st.ProjectID, &st.Platform, &st.Sandbox, &st.Verifier, &st.ExpiresAt, &returnTo)
	st.ReturnTo = returnTo.String
	return st, err
}

// BindOAuthState ties a consent flow of platform to the browser that opened its start page:
// browserHash is the SHA-256 of a secret that browser keeps in a cookie. The first browser
// binds the flow; the same browser may open the page again (its hash matches); any other is
// ErrConflict. An unknown or expired flow, or one of another platform, is ErrNotFound.
func (s *Store) BindOAuthState(ctx context.Context, id, platform string, browserHash []byte) (OAuthState, error) {
	st, err := scanOAuthState(s.write.QueryRowContext(ctx, `UPDATE oauth_states SET browser_hash = $1
		WHERE id = $2 AND platform = $3 AND (browser_hash IS NULL OR browser_hash = $4)
		RETURNING `+oauthStateColumns, browserHash, id, platform, browserHash))
	if errors.Is(err, sql.ErrNoRows) {
		return st, s.oauthStateElsewhere(ctx, id, platform)
	}
	if err != nil {
		return st, fmt.Errorf("store: bind oauth state: %w", err)
	}
	if !now().Before(st.ExpiresAt) {
		return st, ErrNotFound
	}
	return st, nil
}

// ConsumeOAuthState takes a consent flow out of the table, so that its state works once, and
// returns it; only the browser it is bound to (browserHash, see BindOAuthState) can: for
// another, or before any browser opened its start page, it is ErrConflict and the flow stays.
// An unknown, used or expired state is ErrNotFound. The project must still exist.
func (s *Store) ConsumeOAuthState(ctx context.Context, id string, browserHash []byte) (OAuthState, error) {
	st, err := scanOAuthState(s.write.QueryRowContext(ctx, `DELETE FROM oauth_states WHERE id = $1 AND browser_hash = $2
		RETURNING `+oauthStateColumns, id, browserHash))
	if errors.Is(err, sql.ErrNoRows) {
		return st, s.oauthStateElsewhere(ctx, id, "")
	}
	if err != nil {
		return st, fmt.Errorf("store: consume oauth state: %w", err)
	}
	if !now().Before(st.ExpiresAt) {
		return st, ErrNotFound
	}
	return st, nil
}

// oauthStateElsewhere tells why a flow did not match a browser: ErrConflict when it is still
// live (of platform, unless "") and so bound to another browser or none yet, ErrNotFound when
// there is no such live flow.
func (s *Store) oauthStateElsewhere(ctx context.Context, id, platform string) error {
	var expires time.Time
	err := s.write.QueryRowContext(ctx, `SELECT expires_at FROM oauth_states WHERE id = $1 AND ($2 = '' OR platform = $3)`,
		id, platform, platform).Scan(&expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("store: read oauth state: %w", err)
	case !now().Before(expires):
		return ErrNotFound
	}
	return ErrConflict
}

// DeleteExpiredOAuthStates removes consent flows nobody finished.
func (s *Store) DeleteExpiredOAuthStates(ctx context.Context) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM oauth_states WHERE expires_at < $1`, now())
	if err != nil {
		return 0, fmt.Errorf("store: delete expired oauth states: %w", err)
	}
	return res.RowsAffected()
}

// ChannelByID reads a live channel whoever owns it: for the workers, never for API callers.
func (s *Store) ChannelByID(ctx context.Context, id string) (Channel, error) {
	if !ValidID(id) {
		return Channel{}, ErrNotFound
	}
	c, err := scanChannel(s.read.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE id = $1 AND deleted_at IS NULL`, id))
	return c, notFound(err)
}

// ChannelsDueForRefresh lists active channels whose access token expires before `before` and
// that nobody is refreshing, soonest first.
func (s *Store) ChannelsDueForRefresh(ctx context.Context, before time.Time, limit int) ([]Channel, error) {
	t := now()
	channels, err := collect(scanChannel)(s.read.QueryContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE deleted_at IS NULL AND status = $1 AND token_expires_at IS NOT NULL AND token_expires_at < $2
		AND (refresh_lease_until IS NULL OR refresh_lease_until < $3)
		ORDER BY token_expires_at LIMIT $4`, ChannelActive, before.UTC(), t, limit))
	if err != nil {
		return nil, fmt.Errorf("store: channels due for refresh: %w", err)
	}
	return channels, nil
}

// AcquireRefreshLease makes this caller the one refreshing a channel's token until `until`;
// false when another holds an unexpired lease. A lease that outlives a crashed holder simply
// expires.
func (s *Store) AcquireRefreshLease(ctx context.Context, id string, until time.Time) (bool, error) {
	res, err := s.write.ExecContext(ctx, `UPDATE channels SET refresh_lease_until = $1
		WHERE id = $2 AND deleted_at IS NULL AND (refresh_lease_until IS NULL OR refresh_lease_until < $3)`,
		until.UTC(), id, now())
	if err != nil {
		return false, fmt.Errorf("store: acquire refresh lease: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReleaseRefreshLease ends a refresh that changed nothing; status, when not empty, is the
// channel's new status (reauth_required after a refused refresh, which emits
// channel.reauth_required in the same transaction).
func (s *Store) ReleaseRefreshLease(ctx context.Context, id, status string) error {
	const q = `UPDATE channels SET refresh_lease_until = NULL WHERE id = $1`
	if status == "" {
		if _, err := s.write.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("store: release refresh lease: %w", err)
		}
		return nil
	}
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("store: release refresh lease: %w", err)
		}
		return tx.setChannelStatus(ctx, id, status)
	})
}

// SaveRefreshedCredentials stores a refreshed token and ends the lease.
func (s *Store) SaveRefreshedCredentials(ctx context.Context, id string, sealed []byte, expiresAt *time.Time) error {
	var exp any
	if expiresAt != nil {
		exp = expiresAt.UTC()
	}
	_, err := s.write.ExecContext(ctx, `UPDATE channels SET credentials = $1, token_expires_at = $2,
		refresh_lease_until = NULL, status = $3 WHERE id = $4 AND deleted_at IS NULL`, sealed, exp, ChannelActive, id)
	if err != nil {
		return fmt.Errorf("store: save refreshed credentials: %w", err)
	}
	return nil
}
