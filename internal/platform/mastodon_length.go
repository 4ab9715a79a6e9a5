package platform

import (
	"regexp"
	"strings"
)

// MastodonURLLength is what a link counts for in a Mastodon status when the instance does not
// say otherwise (its configuration's characters_reserved_per_url).
const MastodonURLLength = 23

// MastodonLength is the length Mastodon's StatusLengthValidator checks against max_characters:
// the content warning and the text together, in grapheme clusters, with each http(s) URL
// counted as perURL characters and each mention @user@domain as @user. URLs are found more
// simply than twitter-text does (up to the next space, less trailing punctuation).
func MastodonLength(text, spoiler string, perURL int) int {
	lim := TextLimit{Unit: UnitGraphemes}
	return lim.Count(spoiler + mastodonCountable(text, perURL))
}

var (
	mastodonURLRe     = regexp.MustCompile(`https?://[^\s<>"]+`)
	mastodonMentionRe = regexp.MustCompile(`(^|[^\p{L}\p{N}_/@])@([\p{L}\p{N}_]+(?:[.-]+[\p{L}\p{N}_]+)*)@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`)
)

func mastodonCountable(text string, perURL int) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	var b strings.Builder
	last := 0
	for _, loc := range mastodonURLRe.FindAllStringIndex(text, -1) {
		end := loc[1]
		for end > loc[0] && strings.ContainsRune(".,:;!?'\")]", rune(text[end-1])) {
			end--
		}
		if end-loc[0] <= len("https://") {
			continue
		}
		b.WriteString(text[last:loc[0]])
		b.WriteString(strings.Repeat("x", perURL))
		last = end
	}
	b.WriteString(text[last:])
	return mastodonMentionRe.ReplaceAllString(b.String(), "${1}@${2}")
}
