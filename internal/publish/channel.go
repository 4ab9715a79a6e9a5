package publish

import (
	"encoding/json"
	"fmt"

	"github.com/reelay/reelay/internal/platform/sim"
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
			token := sim.SandboxToken(a.SandboxKey, c.Platform, c.ExternalAccountID)
			return baseURL, sim.SandboxCredentials(c.Platform, baseURL, c.ExternalAccountID, token), nil
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
