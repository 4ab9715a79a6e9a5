package linkedin

import (
	"strings"
	"unicode"
)

// Commentary of the Posts API is in LinkedIn's "little" text format (learn.microsoft.com …
// /shares/little-text-format): the characters \ | { } @ [ ] ( ) < > # * _ ~ are reserved for its
// elements (mentions @[Name](urn), hashtags) and must be backslash-escaped to be plain text,
// "even if those characters are not used in one of the supported elements". LinkedIn does not
// refuse a commentary with an unescaped one: it publishes the text cut off before it (reported
// by many API users: a post ends at its first "(").
//
// Little reserves the characters below. Hashtags are kept as hashtags: a '#' that starts a word
// of letters, digits and underscores (with at least one letter) becomes the documented
// HashtagTemplate {hashtag|\#|word}, which LinkedIn shows as a clickable #word. Every other
// reserved character, '#' included ("C#", "#1", "# heading"), is escaped and shows as itself.
const reserved = `\|{}@[]()<>#*_~`

func isReserved(r rune) bool { return r < 0x80 && strings.ContainsRune(reserved, r) }

// hashtagRune reports whether r may be part of a hashtag's word.
func hashtagRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// Little converts plain text to little text: what is shown on LinkedIn is the text itself,
// with its #hashtags as hashtags.
func Little(text string) string {
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if r == '#' && (i == 0 || !hashtagRune(rs[i-1])) {
			j := i + 1
			letter := false
			for j < len(rs) && hashtagRune(rs[j]) {
				letter = letter || unicode.IsLetter(rs[j])
				j++
			}
			if letter {
				b.WriteString(`{hashtag|\#|`)
				escapeTo(&b, string(rs[i+1:j]))
				b.WriteByte('}')
				i = j - 1
				continue
			}
		}
		if isReserved(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapeTo writes s with every reserved character escaped.
func escapeTo(b *strings.Builder, s string) {
	for _, r := range s {
		if isReserved(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
}
