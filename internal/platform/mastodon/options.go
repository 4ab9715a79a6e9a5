package mastodon

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the mastodon object of a publish request; the provider reads it back from the
// destination. Visibility, Sensitive, SpoilerText (the content warning), Language and
// Description (the video's alt text) are reelay's additions to the interface's object
// (docs/CONTRACT.md, Platform objects): the status's own parameters, sent as they are.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	Text        string `json:"text,omitempty"`
	Visibility  string `json:"visibility,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	SpoilerText string `json:"spoiler_text,omitempty"`
	Language    string `json:"language,omitempty"`
	Description string `json:"description,omitempty"`
}

// visibilities are the visibility values Mastodon takes; altTextMax bounds a media
// attachment's description (alt text), in characters.
var visibilities = []string{"public", "unlisted", "private", "direct"}

const altTextMax = 1500

// validLanguageCode reports whether s is an ISO 639-1 code as Mastodon takes it: two
// lower-case letters.
func validLanguageCode(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'
}

// The rules of the mastodon object beyond its texts' limits.
var (
	_ platform.Checker  = (*Options)(nil)
	_ platform.Resolver = (*Options)(nil)
)

// UnmarshalJSON decodes the object strictly, naming a bad field mastodon.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Mastodon, b, (*plain)(o))
}

// Check implements platform.Checker. Mastodon counts a content warning with the text against
// its limit, so the two are checked together, as Mastodon counts them (over).
func (o *Options) Check(f *apierr.Fields) {
	switch {
	case !utf8.ValidString(o.Text):
		f.Add("mastodon.text", "must be valid UTF-8")
	case !utf8.ValidString(o.SpoilerText):
		f.Add("mastodon.spoiler_text", "must be valid UTF-8")
	case o.SpoilerText == "":
		if n, max, over := over(o.Text, ""); over {
			f.Addf("mastodon.text", "is %d characters long as Mastodon counts them (a link as %d); Mastodon allows %d",
				n, platform.MastodonURLLength, max)
		}
	default:
		if n, max, over := over(o.Text, o.SpoilerText); over {
			f.Addf("mastodon.spoiler_text", "and mastodon.text are %d characters long together; Mastodon allows %d", n, max)
		}
	}
	if o.Visibility != "" && !slices.Contains(visibilities, o.Visibility) {
		f.Addf("mastodon.visibility", "must be one of %s", strings.Join(visibilities, ", "))
	}
	if o.Language != "" && !validLanguageCode(o.Language) {
		f.Add("mastodon.language", "must be an ISO 639-1 language code of two lower-case letters, such as en")
	}
	if n := utf8.RuneCountInString(o.Description); n > altTextMax {
		f.Addf("mastodon.description", "is %d characters long; Mastodon allows %d", n, altTextMax)
	}
}

// Resolve implements platform.Resolver. The post's text stands in for a missing text, and
// counts with the content warning (the text is one of the description's OwnTexts).
func (o *Options) Resolve(_ platform.Post, fill *platform.Filler, f *apierr.Fields) {
	if o.Text != "" {
		return
	}
	v, from := fill.Source("text")
	if v == "" {
		return
	}
	o.Text, fill.Derived["text"] = v, from
	if n, max, over := over(o.Text, o.SpoilerText); over && o.SpoilerText != "" {
		f.Addf(from, "is %d characters long with mastodon.spoiler_text, over Mastodon's limit of %d; shorten them or set mastodon.text", n, max)
	} else if over {
		f.Addf(from, "is %d characters long as Mastodon counts them, over its limit of %d for mastodon.text; shorten it or set mastodon.text", n, max)
	}
}

// over measures a status as Mastodon does (graphemes, a link as MastodonURLLength,
// @user@domain as @user, the content warning included) against the description's limit,
// which is that of an instance that sets none of its own; the provider checks the instance's
// own.
func over(text, spoiler string) (n, max int, over bool) {
	max = Description.Capabilities.Text["text"].Max
	n = platform.MastodonLength(text, spoiler, platform.MastodonURLLength)
	return n, max, n > max
}
