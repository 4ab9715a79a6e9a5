package connect

import (
	"context"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// Channels connected with credentials a user pastes (token platforms, or a token pair of an
// OAuth platform): the HTTP API's POST /channels and the web dashboard's form both check and
// build them here.

// CredentialChannel builds a channel of project on platformName from credentials whose shape
// CheckCredentials accepted: the platform itself says whose they are (and refuses wrong ones,
// with nothing stored); without a connector to ask (c nil), the identity is derived from the
// credentials without revealing them. The credentials are sealed; the channel is not stored.
func CredentialChannel(ctx context.Context, c *Connector, access publish.ChannelAccess, project store.Project,
	platformName, name string, creds map[string]string) (store.Channel, error) {
	ch := store.Channel{AccountID: project.AccountID, ProjectID: project.ID, Platform: platformName, Name: name}
	who, verified := provider.Identity{}, false
	if c != nil {
		var err error
		if who, verified, err = c.Verify(ctx, platformName, creds); err != nil {
			return store.Channel{}, err
		}
	}
	if verified {
		ch.ExternalAccountID, ch.Username, ch.AvatarURL = who.ExternalID, who.Username, who.AvatarURL
		if ch.Name == "" {
			ch.Name = who.Name
		}
	} else {
		ch.ExternalAccountID, ch.Username = identityFromCredentials(platformName, creds)
	}
	if ch.Name == "" {
		ch.Name = registry.DisplayName(platformName) + " " + ch.Username
	}
	ch.Credentials = access.Seal(ch, creds)
	return ch, nil
}

// CheckCredentials adds to f what is wrong with the shape of token-based credentials: fields
// the platform does not know, blank or oversized values, missing required ones, and then what
// the platform's description checks of their shape; whether the platform accepts them is
// checked by the platform's provider.
func CheckCredentials(f *apierr.Fields, name string, creds map[string]string) {
	d, _ := registry.Describe(name)
	if creds == nil {
		f.Addf("credentials", "is required for a %s channel: %s (or set \"sandbox\": true)",
			d.Name, registry.CredentialsHint(name))
		return
	}
	known := d.Capabilities.CredentialFields
	for k, v := range creds {
		field := "credentials." + k
		switch {
		case !slices.Contains(known, k):
			f.Addf(field, "unknown credential for %s; expected %s", d.Name, strings.Join(known, ", "))
		case strings.TrimSpace(v) == "":
			f.Add(field, "must not be blank")
		case len(v) > 4096:
			f.Add(field, "must be at most 4096 bytes")
		}
	}
	for _, k := range d.RequiredCredentials {
		if _, ok := creds[k]; !ok {
			f.Add("credentials."+k, "is required")
		}
	}
	if len(*f) == 0 && d.CheckCredentials != nil {
		d.CheckCredentials(f, creds)
	}
}

// identityFromCredentials derives a stable account id and a username from credentials, never
// revealing a secret (platform.Description.AccountOf).
func identityFromCredentials(name string, creds map[string]string) (externalID, username string) {
	if d, ok := registry.Describe(name); ok && d.AccountOf != nil {
		return d.AccountOf(creds)
	}
	return platform.TokenAccount(creds)
}
