package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"

	"github.com/reelay/reelay/internal/apierr"
)

// Description is everything reelay knows about one platform that is not how to talk to it:
// what it is called, what it accepts and offers, what connecting a channel takes, and the
// choices of its publish options. Each platform's package declares its own (a variable named
// Description), and internal/platform/registry lists the twelve.
type Description struct {
	// ID is the platform's identifier (one of All).
	ID string
	// Name is how people write the platform's name: "TikTok" for tiktok.
	Name string
	// API is the version of the platform's API the provider speaks, where the platform
	// versions its API (the zero value where it does not).
	API APIVersion
	// Capabilities are the platform's limits and abilities, shown as channel.capabilities.
	Capabilities Capabilities
	// RequiredCredentials are the fields of Capabilities.CredentialFields that connecting a
	// channel with POST /channels must supply (for OAuth platforms, the access token).
	RequiredCredentials []string
	// StaticOptions returns the choices and defaults of the platform's publish options, as
	// GET /channels/{id}/options shows them before the provider reads the account's own (nil:
	// the platform has none). Each call builds new maps, so callers may change the result.
	StaticOptions func() map[string]any
	// CheckCredentials adds to f what is wrong with the shape of credentials a user pastes,
	// beyond the fields being known, present and not blank (nil: nothing more); whether the
	// platform accepts them is its provider's to say. Fields are named "credentials.<name>".
	CheckCredentials func(f *apierr.Fields, creds map[string]string)
	// AccountOf derives a stable account id and a user name from credentials whose shape was
	// checked, for a channel its provider could not name; it never reveals a secret (nil:
	// a fingerprint of the access token, TokenAccount).
	AccountOf func(creds map[string]string) (externalID, username string)
	// NewOptions returns a new, empty object of the platform's publish options: a pointer to
	// the struct type its package declares, which the request decodes into and the provider
	// reads back (see CheckOptions).
	NewOptions func() any
	// TextFallbacks says, for each text of the platform's object (a key of Capabilities.Text),
	// what stands in for it when the request leaves it out: FromTitle, FromCaption,
	// FromCaptionOrTitle or FromTitleOrDerived. A text without one stays empty.
	TextFallbacks map[string]string
	// OwnTexts are the texts the options type checks and fills itself, because the platform
	// counts them in a way a TextLimit cannot say (Mastodon's text, with its content warning).
	OwnTexts []string
}

// APIVersion is a version of a platform's API: the one the provider speaks, when it was last
// compared with the platform's documentation, and until when the platform serves it. Versions
// run out (LinkedIn serves each monthly version for about a year, Meta each Graph API version
// for about two), so the day it was checked and its sunset are kept beside it, and an operator
// can choose another one without a new build (VersionSetting).
type APIVersion struct {
	// Version is written as the platform writes it: "v26.0" (a Graph API path segment),
	// "202603" (LinkedIn-Version), "3.1.3" (the oldest Mastodon server reelay works with).
	Version string
	// InPath says Version is a segment of every call's path, after PathPrefix (Meta's Graph
	// API: /v26.0/me; Discord: /api/v10/channels/…), so a sandbox channel's simulator URL
	// carries both too.
	InPath bool
	// PathPrefix is what comes before the version in call paths ("/api" for Discord).
	PathPrefix string
	// Checked is the day (YYYY-MM-DD) Version was last compared with Source.
	Checked string
	// Sunset is the day (YYYY-MM-DD) the platform stops serving Version, where it has said
	// ("" where it has not).
	Sunset string
	// Source is the platform's page that lists its versions and their sunsets.
	Source string
}

// VersionSetting is the name of the setting that chooses another version of the platform's API
// (--<platform>-api-version, REELAY_<PLATFORM>_API_VERSION).
func (d Description) VersionSetting() string { return d.ID + "-api-version" }

// TokenAccount is the account of credentials that are an access token, when the platform
// cannot be asked: "token:" and a fingerprint of the token, which names it without revealing
// it.
func TokenAccount(creds map[string]string) (externalID, username string) {
	fp := Fingerprint(creds["access_token"])
	return "token:" + fp, fp
}

// Fingerprint is a short hex digest of secret: the same secret gives the same fingerprint, and
// the fingerprint does not give the secret back.
func Fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}

// IsWebURL reports whether raw is an absolute http or https URL without a user name or
// password: what an instance or server address a user pastes must be.
func IsWebURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}
