package platform

// Description is everything reelay knows about one platform that is not how to talk to it:
// what it is called, what it accepts and offers, what connecting a channel takes, and the
// choices of its publish options. Each platform's package declares its own (a variable named
// Description), and internal/platform/registry lists the twelve.
type Description struct {
	// ID is the platform's identifier (one of All).
	ID string
	// Name is how people write the platform's name: "TikTok" for tiktok.
	Name string
	// Capabilities are the platform's limits and abilities, shown as channel.capabilities.
	Capabilities Capabilities
	// RequiredCredentials are the fields of Capabilities.CredentialFields that connecting a
	// channel with POST /channels must supply (for OAuth platforms, the access token).
	RequiredCredentials []string
	// StaticOptions returns the choices and defaults of the platform's publish options, as
	// GET /channels/{id}/options shows them before the provider reads the account's own (nil:
	// the platform has none). Each call builds new maps, so callers may change the result.
	StaticOptions func() map[string]any
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
