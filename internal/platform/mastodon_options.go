package platform

// MastodonVisibilities are the visibility values Mastodon takes; MastodonAltTextMax bounds a
// media attachment's description (alt text), in characters. The publish request and the
// mastodon provider check the mastodon object against the same.
var MastodonVisibilities = []string{"public", "unlisted", "private", "direct"}

const MastodonAltTextMax = 1500

// ValidLanguageCode reports whether s is an ISO 639-1 code as Mastodon takes it: two
// lower-case letters.
func ValidLanguageCode(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'
}
