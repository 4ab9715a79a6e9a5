package store

import (
	"context"
	"fmt"
)

// SealedKind names a column whose values internal/secret sealed under the secret key.
type SealedKind string

// The sealed columns: what a key rotation must reseal.
const (
	SealedChannelCredentials SealedKind = "channel_credentials"
	SealedWebhookSecrets     SealedKind = "webhook_secrets"
	SealedOAuthVerifiers     SealedKind = "oauth_verifiers"
	SealedAIJobKeys          SealedKind = "ai_job_keys"
)

// SealedKinds lists every sealed column.
var SealedKinds = []SealedKind{SealedChannelCredentials, SealedWebhookSecrets, SealedOAuthVerifiers, SealedAIJobKeys}

// sealedColumns says where each kind lives; extra are the columns its associated data is made of.
var sealedColumns = map[SealedKind]struct{ table, column, extra string }{
	SealedChannelCredentials: {"channels", "credentials", ", project_id, platform, external_account_id"},
	SealedWebhookSecrets:     {"webhooks", "secret", ""},
	SealedOAuthVerifiers:     {"oauth_states", "verifier", ""},
	SealedAIJobKeys:          {"ai_jobs", "provider_key", ""},
}

// SealedValue is one sealed value and the row it belongs to.
type SealedValue struct {
	ID    string
	Value []byte
	// ProjectID, Platform and ExternalAccountID are the channel's, for channel credentials:
	// their associated data names them.
	ProjectID, Platform, ExternalAccountID string
}

// SealedValues returns up to limit values of kind in rows whose id sorts after afterID ("" for
// the first page), in id order: a caller pages through a table without holding a transaction.
func (s *Store) SealedValues(ctx context.Context, kind SealedKind, afterID string, limit int) ([]SealedValue, error) {
	c, ok := sealedColumns[kind]
	if !ok {
		return nil, fmt.Errorf("store: unknown sealed kind %q", kind)
	}
	query := `SELECT id, ` + c.column + c.extra + ` FROM ` + c.table + ` WHERE ` + c.column + ` IS NOT NULL`
	args := []any{limit}
	if afterID != "" {
		query += ` AND id > $2`
		args = append(args, afterID)
	}
	rows, err := s.read.QueryContext(ctx, query+` ORDER BY id LIMIT $1`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: sealed %s: %w", kind, err)
	}
	defer rows.Close()
	var out []SealedValue
	for rows.Next() {
		var v SealedValue
		dest := []any{&v.ID, &v.Value}
		if kind == SealedChannelCredentials {
			dest = append(dest, &v.ProjectID, &v.Platform, &v.ExternalAccountID)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("store: sealed %s: %w", kind, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: sealed %s: %w", kind, err)
	}
	return out, nil
}

// ReplaceSealed stores next in place of old in row id. It changes nothing, and says so, when
// the row no longer holds old: whoever wrote since (a token refresh) sealed with the current key.
func (s *Store) ReplaceSealed(ctx context.Context, kind SealedKind, id string, old, next []byte) (bool, error) {
	c, ok := sealedColumns[kind]
	if !ok {
		return false, fmt.Errorf("store: unknown sealed kind %q", kind)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE `+c.table+` SET `+c.column+` = $1 WHERE id = $2 AND `+c.column+` = $3`,
		next, id, old)
	if err != nil {
		return false, fmt.Errorf("store: reseal %s %s: %w", kind, id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
