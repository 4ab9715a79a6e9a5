package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
)

// Channel statuses.
const (
	ChannelActive         = "active"
	ChannelReauthRequired = "reauth_required"
)

// Channel is a connected social account inside a project. Credentials are sealed by
// internal/secret before they reach the store; the store never sees them in plain text.
type Channel struct {
	ID                string
	AccountID         string
	ProjectID         string
	Platform          string
	Name              string
	Username          string
	AvatarURL         string
	ExternalAccountID string
	Sandbox           bool
	SandboxBehavior   string // JSON object
	Credentials       []byte // sealed
	Status            string
	CreatedAt         time.Time
	// TokenExpiresAt is when the access token in Credentials expires (nil: never, or unknown):
	// what the token refresher looks at without opening the credentials.
	TokenExpiresAt *time.Time
}

const channelColumns = `id, account_id, project_id, platform, name, username, avatar_url, external_account_id,
	sandbox, sandbox_behavior, credentials, status, created_at, token_expires_at`

// SaveChannel stores a channel. Connecting the same platform account to the same project again
// updates the existing channel (new credentials, active again) instead of adding a second one,
// which is what a user who reconnects means; created says which happened. A new channel must
// fit within the account's cap of channels; a reconnection always may.
func (s *Store) SaveChannel(ctx context.Context, c Channel) (saved Channel, created bool, err error) {
	all, news, err := s.saveChannels(ctx, []Channel{c})
	if err != nil {
		return Channel{}, false, err
	}
	return all[0], news[0], nil
}

// SaveChannels stores channels of one account as SaveChannel does, all in one transaction:
// when the new ones among them do not fit within the account's cap, none is stored. A consent
// that grants several accounts at once (Facebook's Pages) connects them all or none.
func (s *Store) SaveChannels(ctx context.Context, cs []Channel) ([]Channel, error) {
	all, _, err := s.saveChannels(ctx, cs)
	return all, err
}

func (s *Store) saveChannels(ctx context.Context, cs []Channel) (saved []Channel, created []bool, err error) {
	if len(cs) == 0 {
		return nil, nil, nil
	}
	cs = slices.Clone(cs)
	for i := range cs {
		c := &cs[i]
		if c.AccountID != cs[0].AccountID {
			return nil, nil, fmt.Errorf("store: save channels: of accounts %s and %s at once", cs[0].AccountID, c.AccountID)
		}
		if c.SandboxBehavior == "" {
			c.SandboxBehavior = "{}"
		}
		if c.TokenExpiresAt != nil {
			// UTC always: SQLite compares these as text.
			t := c.TokenExpiresAt.UTC().Truncate(time.Microsecond)
			c.TokenExpiresAt = &t
		}
	}
	err = s.InTx(ctx, func(tx *Tx) error {
		saved, created = make([]Channel, len(cs)), make([]bool, len(cs))
		var existing []*Channel
		adding := 0
		for _, c := range cs {
			row := tx.tx.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels
				WHERE project_id = $1 AND platform = $2 AND external_account_id = $3 AND deleted_at IS NULL`,
				c.ProjectID, c.Platform, c.ExternalAccountID)
			e, err := scanChannel(row)
			switch {
			case err == nil:
				existing = append(existing, &e)
			case errors.Is(err, sql.ErrNoRows):
				existing = append(existing, nil)
				adding++
			default:
				return fmt.Errorf("store: save channel: %w", err)
			}
		}
		if err := tx.roomFor(ctx, s.capOf(CappedChannels), CappedChannels, cs[0].AccountID, adding); err != nil {
			return err
		}
		for i, c := range cs {
			if e := existing[i]; e != nil {
				_, err := tx.tx.ExecContext(ctx, `UPDATE channels SET name = $1, username = $2, avatar_url = $3,
					sandbox_behavior = $4, credentials = $5, status = $6, token_expires_at = $7, refresh_lease_until = NULL
					WHERE id = $8`,
					c.Name, c.Username, c.AvatarURL, c.SandboxBehavior, c.Credentials, ChannelActive, c.TokenExpiresAt, e.ID)
				if err != nil {
					return fmt.Errorf("store: update channel: %w", err)
				}
				c.ID, c.CreatedAt, c.Status = e.ID, e.CreatedAt, ChannelActive
				saved[i] = c
				continue
			}
			c.ID, c.CreatedAt, c.Status = uuid.NewString(), now(), ChannelActive
			_, err := tx.tx.ExecContext(ctx, `INSERT INTO channels (`+channelColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
				c.ID, c.AccountID, c.ProjectID, c.Platform, c.Name, c.Username, c.AvatarURL, c.ExternalAccountID,
				c.Sandbox, c.SandboxBehavior, c.Credentials, c.Status, c.CreatedAt, c.TokenExpiresAt)
			if err != nil {
				return fmt.Errorf("store: create channel: %w", err)
			}
			saved[i], created[i] = c, true
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	s.channelWrites.Add(1)
	return saved, created, nil
}

// ChannelWrites counts the channels this Store has saved or deleted (other processes' writes
// are not seen): what a cache of channels checks to know it may still answer.
func (s *Store) ChannelWrites() uint64 { return s.channelWrites.Load() }

// ListChannels lists the channels of one of an account's projects, oldest first.
func (s *Store) ListChannels(ctx context.Context, accountID, projectID string) ([]Channel, error) {
	channels, err := collect(scanChannel)(s.read.QueryContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE account_id = $1 AND project_id = $2 AND deleted_at IS NULL ORDER BY created_at, id`, accountID, projectID))
	if err != nil {
		return nil, fmt.Errorf("store: list channels: %w", err)
	}
	return channels, nil
}

// GetChannel reads one of an account's channels.
func (s *Store) GetChannel(ctx context.Context, accountID, id string) (Channel, error) {
	if !ValidID(id) {
		return Channel{}, ErrNotFound
	}
	row := s.read.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels
		WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`, id, accountID)
	c, err := scanChannel(row)
	return c, notFound(err)
}

// DeleteChannel disconnects one of an account's channels. The row stays (marked deleted, its
// credentials erased) so that the history of posts that went through it keeps its name.
func (s *Store) DeleteChannel(ctx context.Context, accountID, id string) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	res, err := s.write.ExecContext(ctx, `UPDATE channels SET deleted_at = $1, credentials = NULL
		WHERE id = $2 AND account_id = $3 AND deleted_at IS NULL`, now(), id, accountID)
	if err != nil {
		return fmt.Errorf("store: delete channel: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	s.channelWrites.Add(1)
	return nil
}

// SetChannelStatus marks a channel active or reauth_required; a channel that becomes
// reauth_required emits channel.reauth_required in the same transaction.
func (s *Store) SetChannelStatus(ctx context.Context, id, status string) error {
	return s.InTx(ctx, func(tx *Tx) error { return tx.setChannelStatus(ctx, id, status) })
}

func scanChannel(r scanner) (Channel, error) {
	var s channelScan
	err := r.Scan(s.targets()...)
	return s.channel(), err
}

type channelScan struct {
	c       Channel
	expires sql.NullTime
}

func (s *channelScan) targets() []any {
	c := &s.c
	return []any{&c.ID, &c.AccountID, &c.ProjectID, &c.Platform, &c.Name, &c.Username, &c.AvatarURL,
		&c.ExternalAccountID, &c.Sandbox, &c.SandboxBehavior, &c.Credentials, &c.Status, &c.CreatedAt, &s.expires}
}

func (s *channelScan) channel() Channel {
	c := s.c
	c.CreatedAt = c.CreatedAt.UTC()
	if s.expires.Valid {
		t := s.expires.Time.UTC()
		c.TokenExpiresAt = &t
	}
	return c
}
