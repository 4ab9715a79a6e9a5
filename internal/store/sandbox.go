package store

import (
	"context"
	"fmt"
)

// SandboxChannel finds the live sandbox channel that is the given simulated platform account.
// Simulators call it to learn how that account misbehaves.
func (s *Store) SandboxChannel(ctx context.Context, platform, externalID string) (Channel, error) {
	row := s.read.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE platform = $1 AND external_account_id = $2 AND sandbox = $3 AND deleted_at IS NULL`, platform, externalID, true)
	c, err := scanChannel(row)
	return c, notFound(err)
}

// SandboxAccountIDs lists the simulated platform accounts (external ids) of an account's
// sandbox channels on one platform, deleted ones included: what they received stays theirs.
func (s *Store) SandboxAccountIDs(ctx context.Context, accountID, platform string) ([]string, error) {
	ids, err := collect(func(r scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	})(s.read.QueryContext(ctx, `SELECT external_account_id FROM channels
		WHERE account_id = $1 AND platform = $2 AND sandbox = $3`, accountID, platform, true))
	if err != nil {
		return nil, fmt.Errorf("store: sandbox accounts: %w", err)
	}
	return ids, nil
}
