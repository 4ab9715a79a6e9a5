package publish

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

// ChannelAccess opens a channel's way in to its platform: the unsealed credentials and the
// API base URL, which for a sandbox channel is the simulator mounted on this server and for a
// connected channel the platform's own (the provider's default).
type ChannelAccess struct {
	Box *secret.Box
	// SandboxKey signs the tokens sandbox channels present to the simulators.
	SandboxKey []byte
	// SimulatorsURL is where the simulators are mounted (at /sandbox/{platform}): the
	// server's own public URL, or a separate simulator host (REELAY_SANDBOX_URL).
	SimulatorsURL string
	// SandboxAPIPaths are what follows a simulator's mount point in its API base URL, per
	// platform (Instagram's Graph API version segment).
	SandboxAPIPaths map[string]string
}

// SandboxAPIBase is the API base URL of platform's simulator: where a sandbox channel's provider
// calls go.
func (a ChannelAccess) SandboxAPIBase(platform string) string {
	return a.SimulatorsURL + "/sandbox/" + platform + a.SandboxAPIPaths[platform]
}

// CredentialsAD binds sealed credentials to the channel they belong to, so that a sealed value
// moved to another row does not open.
func CredentialsAD(c store.Channel) []byte {
	return []byte("channel-credentials:" + c.ProjectID + "|" + c.Platform + "|" + c.ExternalAccountID)
}

// Seal encrypts a channel's credentials for storage.
func (a ChannelAccess) Seal(c store.Channel, creds map[string]string) []byte {
	plain, _ := json.Marshal(creds)
	return a.Box.Seal(plain, CredentialsAD(c))
}

// Open returns the base URL ("" = the provider's default) and credentials of a channel.
func (a ChannelAccess) Open(c store.Channel) (baseURL string, creds map[string]string, err error) {
	if c.Sandbox {
		baseURL = a.SandboxAPIBase(c.Platform)
		if len(c.Credentials) == 0 {
			// A sandbox channel created as such: its token is minted, never stored.
			token := sandboxtoken.Token(a.SandboxKey, c.Platform, c.ExternalAccountID)
			return baseURL, sandboxtoken.Credentials(c.Platform, baseURL, c.ExternalAccountID, token), nil
		}
		// Connected through a simulator's consent: the tokens it issued, stored like any.
	}
	if len(c.Credentials) == 0 {
		return "", nil, fmt.Errorf("channel %s has no credentials", c.ID)
	}
	plain, err := a.Box.Open(c.Credentials, CredentialsAD(c))
	if err != nil {
		return "", nil, fmt.Errorf("channel %s: credentials do not open: %w", c.ID, err)
	}
	if err := json.Unmarshal(plain, &creds); err != nil {
		return "", nil, fmt.Errorf("channel %s: credentials: %w", c.ID, err)
	}
	return baseURL, creds, nil
}

// ChannelCaller runs calls to a channel's platform outside publishing (reading figures and
// comments, replying): it renews the channel's token when due, opens its credentials, and when
// the platform refuses the token renews it once and repeats the call, as the publisher does.
type ChannelCaller struct {
	Access ChannelAccess
	// Tokens renews OAuth tokens; nil never renews.
	Tokens TokenRefresher
	Store  *store.Store
}

// Call runs fn against ch. A channel already marked reauth_required is not called; a refusal
// that survives a renewal marks it so. Errors are *Error values.
func (c ChannelCaller) Call(ctx context.Context, ch store.Channel, fn func(provider.Channel) error) error {
	if ch.Status == store.ChannelReauthRequired {
		return provider.Permanent(provider.CategoryAuthExpired, 0, "%s refused the channel's credentials earlier; reconnect the channel", ch.Platform)
	}
	if c.Tokens != nil {
		fresh, err := c.Tokens.Refresh(ctx, ch, false)
		switch {
		case err == nil:
			ch = fresh
		case !provider.AsError(err).Transient:
			return provider.AsError(err)
		}
		// A transient failure leaves the old token, which may well still work.
	}
	open := func() (provider.Channel, error) {
		base, creds, err := c.Access.Open(ch)
		if err != nil {
			return provider.Channel{}, provider.Permanent(provider.CategoryAuthExpired, 0, "%v; reconnect the channel", err)
		}
		return provider.Channel{Account: ch.ExternalAccountID, Credentials: creds, BaseURL: base}, nil
	}
	pc, err := open()
	if err != nil {
		return err
	}
	err = fn(pc)
	if err == nil {
		return nil
	}
	pe := provider.AsError(err)
	if pe.Category != provider.CategoryAuthExpired {
		return pe
	}
	if c.Tokens != nil {
		fresh, rerr := c.Tokens.Refresh(ctx, ch, true)
		if rerr != nil && provider.AsError(rerr).Transient {
			return provider.AsError(rerr)
		}
		if rerr == nil {
			ch = fresh
			if pc, err = open(); err != nil {
				return err
			}
			if err = fn(pc); err == nil {
				return nil
			}
			if pe = provider.AsError(err); pe.Category != provider.CategoryAuthExpired {
				return pe
			}
		}
	}
	if serr := c.Store.SetChannelStatus(context.WithoutCancel(ctx), ch.ID, store.ChannelReauthRequired); serr != nil {
		return fmt.Errorf("%w (and marking the channel failed: %v)", pe, serr)
	}
	return pe
}
