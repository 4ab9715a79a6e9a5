// Package registry lists the platforms reelay publishes to, each as its own package describes
// it (platform.Description), and answers what the rest of reelay asks of them: a platform's
// name, capabilities, credentials and static options. A new platform is added to the list
// here, once its package declares a Description.
package registry

import (
	"strings"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/bluesky"
	"github.com/reelay/reelay/internal/platform/discord"
	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/instagram"
	"github.com/reelay/reelay/internal/platform/linkedin"
	"github.com/reelay/reelay/internal/platform/mastodon"
	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/reddit"
	"github.com/reelay/reelay/internal/platform/telegram"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/reelay/reelay/internal/platform/tiktok"
	"github.com/reelay/reelay/internal/platform/youtube"
)

// descriptions holds every platform, in the order of platform.All.
var descriptions = []platform.Description{
	youtube.Description, instagram.Description, tiktok.Description, linkedin.Description,
	pinterest.Description, threads.Description, facebook.Description, bluesky.Description,
	telegram.Description, discord.Description, mastodon.Description, reddit.Description,
}

var byID = func() map[string]*platform.Description {
	m := make(map[string]*platform.Description, len(descriptions))
	for i := range descriptions {
		m[descriptions[i].ID] = &descriptions[i]
	}
	return m
}()

// Describe returns the named platform's description, and false when the name is not a
// platform. Its Capabilities are a copy the caller may change.
func Describe(name string) (platform.Description, bool) {
	d, ok := byID[name]
	if !ok {
		return platform.Description{}, false
	}
	out := *d
	out.Capabilities = d.Capabilities.Clone()
	out.RequiredCredentials = platform.CloneStrings(d.RequiredCredentials)
	return out, true
}

// Descriptions returns every platform's description, in the order of platform.All.
func Descriptions() []platform.Description {
	out := make([]platform.Description, 0, len(descriptions))
	for _, d := range descriptions {
		c, _ := Describe(d.ID)
		out = append(out, c)
	}
	return out
}

// CapabilitiesOf returns the capabilities of the named platform, and false when the name is
// not a platform. The result is a deep copy: callers may change it (to merge live limits, say)
// without touching the registry.
func CapabilitiesOf(name string) (platform.Capabilities, bool) {
	d, ok := byID[name]
	if !ok {
		return platform.Capabilities{}, false
	}
	return d.Capabilities.Clone(), true
}

// DisplayName is how people write the platform's name ("TikTok" for tiktok); an unknown name
// is returned as it is.
func DisplayName(name string) string {
	if d, ok := byID[name]; ok {
		return d.Name
	}
	return name
}

// RequiredCredentials returns the credential fields that connecting a channel of the named
// platform with POST /channels must supply (for OAuth platforms, the access token). It
// returns nil for an unknown platform.
func RequiredCredentials(name string) []string {
	d, ok := byID[name]
	if !ok {
		return nil
	}
	return platform.CloneStrings(d.RequiredCredentials)
}

// CredentialsHint names what connecting a channel of the platform takes, for messages: the
// required fields, or every field where the choice is between sets (Discord).
func CredentialsHint(name string) string {
	if req := RequiredCredentials(name); len(req) > 0 {
		return strings.Join(req, ", ")
	}
	caps, _ := CapabilitiesOf(name)
	return strings.Join(caps.CredentialFields, ", ")
}

// StaticOptions returns the publish options of the named platform that
// GET /channels/{id}/options shows before the provider reads the account's own: the choices
// and defaults of the fields of its per-platform object (platform.Option). A new map is built
// on each call, so callers may change it. The result is nil for an unknown platform and an
// empty map for a platform without options.
func StaticOptions(name string) map[string]any {
	d, ok := byID[name]
	switch {
	case !ok:
		return nil
	case d.StaticOptions == nil:
		return map[string]any{}
	}
	return d.StaticOptions()
}
