package store

import (
	"context"
	"fmt"
	"net/http"

	"github.com/reelay/reelay/internal/apierr"
)

// Capped names a kind of thing an account holds a bounded number of. Each is a row (or rows)
// that anyone holding one of the account's keys could otherwise create without end.
type Capped string

// The capped kinds.
const (
	CappedAPIKeys  Capped = "api_keys"
	CappedProjects Capped = "projects"
	CappedChannels Capped = "channels"
	CappedWebhooks Capped = "webhooks"
)

// CappedKinds lists every capped kind.
var CappedKinds = []Capped{CappedAPIKeys, CappedProjects, CappedChannels, CappedWebhooks}

// Caps bound how many of each kind an account may hold at once; 0 leaves a kind unbounded.
// The zero value bounds nothing: the server sets its caps from its settings (SetCaps), and the
// local administration commands, which work on the database as its operator, are not bound.
type Caps struct {
	APIKeys  int // active keys: revoked ones do not count
	Projects int
	Channels int // connected channels: disconnected ones do not count
	Webhooks int // enabled or disabled: deleting one makes room
}

func (c Caps) of(k Capped) int {
	switch k {
	case CappedAPIKeys:
		return c.APIKeys
	case CappedProjects:
		return c.Projects
	case CappedChannels:
		return c.Channels
	case CappedWebhooks:
		return c.Webhooks
	}
	return 0
}

// SetCaps sets the caps the store enforces from now on.
func (s *Store) SetCaps(c Caps) { s.caps.Store(&c) }

func (s *Store) capOf(k Capped) int {
	if c := s.caps.Load(); c != nil {
		return c.of(k)
	}
	return 0
}

// capDetail is what counts towards a cap, and what a refusal tells the caller.
type capDetail struct {
	// held selects one row per thing the account holds, $1 being the account.
	held string
	// noun names the things, one a single one; setting is the server setting that sets the
	// cap (internal/config registers it; TestCapSettingsAreServerFlags checks the two agree);
	// room says how to make room.
	noun, one, setting, room string
}

var capDetails = map[Capped]capDetail{
	CappedAPIKeys: {held: `SELECT 1 FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`,
		noun: "API keys", one: "API key", setting: "REELAY_MAX_KEYS_PER_ACCOUNT", room: "revoke a key that is no longer used, or ask the server's operator to raise the cap"},
	CappedProjects: {held: `SELECT 1 FROM projects WHERE account_id = $1`,
		noun: "projects", one: "project", setting: "REELAY_MAX_PROJECTS_PER_ACCOUNT", room: "projects cannot be deleted, so only the server's operator can make room, by raising the cap"},
	// Through projects, whose index by account leads to the channels' index by project.
	CappedChannels: {held: `SELECT 1 FROM projects p JOIN channels c ON c.project_id = p.id
		WHERE p.account_id = $1 AND c.deleted_at IS NULL`,
		noun: "channels", one: "channel", setting: "REELAY_MAX_CHANNELS_PER_ACCOUNT", room: "disconnect a channel that is no longer used, or ask the server's operator to raise the cap"},
	CappedWebhooks: {held: `SELECT 1 FROM webhooks WHERE account_id = $1`,
		noun: "webhooks", one: "webhook", setting: "REELAY_MAX_WEBHOOKS_PER_ACCOUNT", room: "delete a webhook that is no longer used, or ask the server's operator to raise the cap"},
}

// CapSetting is the server setting (environment variable) that sets the cap on k.
func CapSetting(k Capped) string { return capDetails[k].setting }

// CapError is the refusal of a create that would take an account past a cap; nothing of the
// create was stored. It reaches callers inside an *apierr.Error (409 limit_reached), the same
// answer for the API, the dashboard and the OAuth callback.
type CapError struct {
	Kind  Capped
	Limit int // the cap
	Held  int // what the account holds, counted no further than Limit
	Added int // how many the create would have added
}

func (e *CapError) Error() string {
	return fmt.Sprintf("account cap reached: %d of at most %d %s, %d more asked for", e.Held, e.Limit, e.Kind, e.Added)
}

// clientError is what the caller is told: the cap, the setting that sets it, and how to make
// room.
func (e *CapError) clientError() *apierr.Error {
	d := capDetails[e.Kind]
	count := func(n int) string {
		if n == 1 {
			return "1 " + d.one
		}
		return fmt.Sprintf("%d %s", n, d.noun)
	}
	var msg string
	if e.Added == 1 || e.Held >= e.Limit {
		msg = fmt.Sprintf("this account is at its cap of %s (%s), so nothing was created; %s",
			count(e.Limit), d.setting, d.room)
	} else {
		msg = fmt.Sprintf("this would add %s to an account with room for %d more under its cap of %s (%s), so nothing was created; %s",
			count(e.Added), e.Limit-e.Held, count(e.Limit), d.setting, d.room)
	}
	ae := apierr.New(http.StatusConflict, apierr.CodeLimitReached, msg).Wrap(e)
	ae.Extra = map[string]any{"limit": e.Limit}
	return ae
}

// roomFor refuses, with a CapError inside an *apierr.Error, to add n of kind k to an account
// that has not the room for them. It must run in the transaction that then inserts them: on
// PostgreSQL it takes a lock of the account's kind held until the transaction ends, so that
// concurrent creates count one after the other (each sees the rows the one before committed);
// SQLite's one writer already serialises them.
func (t *Tx) roomFor(ctx context.Context, limit int, k Capped, accountID string, n int) error {
	if limit <= 0 || n <= 0 {
		return nil
	}
	if err := t.advisoryLock(ctx, "cap:"+string(k)+":"+accountID); err != nil {
		return err
	}
	// Counted no further than the cap: an account's refusal costs the same however far past
	// a lowered cap it is.
	var held int
	if err := t.tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (`+capDetails[k].held+` LIMIT $2) held`,
		accountID, limit).Scan(&held); err != nil {
		return fmt.Errorf("store: count %s: %w", k, err)
	}
	if held+n > limit {
		return (&CapError{Kind: k, Limit: limit, Held: held, Added: n}).clientError()
	}
	return nil
}
