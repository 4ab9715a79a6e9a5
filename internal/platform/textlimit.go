package platform

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Units in which a TextLimit counts. Platforms count text differently, and a
// limit checked in the wrong unit either rejects valid posts or lets the
// platform reject (or silently truncate) them.
const (
	// UnitCharacters counts Unicode code points.
	UnitCharacters = "characters"
	// UnitGraphemes counts user-perceived characters (extended grapheme
	// clusters): an emoji family or a flag counts once. Bluesky and Mastodon count so.
	UnitGraphemes = "graphemes"
	// UnitUTF16 counts UTF-16 code units: a character outside the Basic
	// Multilingual Plane (most emoji) counts twice. TikTok counts so, as does
	// any backend that measures JavaScript or Java string length.
	UnitUTF16 = "utf16"
	// UnitBytes counts UTF-8 bytes. YouTube's description limit is in bytes.
	UnitBytes = "bytes"
	// UnitEmojiBytes counts code points, but an emoji (a grapheme cluster holding an
	// Extended_Pictographic character or a regional indicator) as its UTF-8 bytes. Threads
	// counts so: "Emojis are counted as the number of UTF-8 bytes"
	// (developers.facebook.com/documentation/threads/posts, Limitations).
	UnitEmojiBytes = "emoji_bytes"
)

// TextLimit is the maximum length of one text field on one platform, with the
// unit the platform counts it in.
type TextLimit struct {
	// Max is the largest allowed length; 0 means no limit.
	Max int `json:"max"`
	// Unit is one of UnitCharacters, UnitGraphemes, UnitUTF16 or UnitBytes.
	Unit string `json:"unit"`
	// MaxBytes caps the UTF-8 length too, for platforms that count both (Bluesky: 300
	// graphemes and 3000 bytes); 0 means no second cap.
	MaxBytes int `json:"max_bytes,omitempty"`
	// Forbidden holds the characters the platform refuses in the text (YouTube: < and >).
	Forbidden string `json:"forbidden,omitempty"`
	// MaxHashtags and MaxMentions cap the #hashtags and @mentions the text may hold
	// (Instagram: 30 and 20, counted as CountTags does); 0 means no cap.
	MaxHashtags int `json:"max_hashtags,omitempty"`
	MaxMentions int `json:"max_mentions,omitempty"`
	// MaxLinks caps the distinct links the text may hold (Threads: 5, counted as CountLinks
	// does); 0 means no cap.
	MaxLinks int `json:"max_links,omitempty"`
}

// Count returns the length of s in the limit's unit. An unknown unit counts
// UTF-8 bytes, the largest of the four counts, so a mistyped unit can only make
// a check stricter, never let an over-long text through.
func (l TextLimit) Count(s string) int {
	switch l.Unit {
	case UnitCharacters:
		return utf8.RuneCountInString(s)
	case UnitGraphemes:
		return countGraphemes(s)
	case UnitUTF16:
		return countUTF16(s)
	case UnitEmojiBytes:
		return countEmojiBytes(s)
	default:
		return len(s)
	}
}

// Check reports whether s fits within the limit's length caps (Max and MaxBytes).
func (l TextLimit) Check(s string) bool {
	return (l.Max <= 0 || l.Count(s) <= l.Max) && (l.MaxBytes <= 0 || len(s) <= l.MaxBytes)
}

// Refusal says what in s the platform refuses other than its length, as what s does and what
// the platform allows ("contains \"<\"", "no < or >"); both are "" when nothing is.
func (l TextLimit) Refusal(s string) (does, allows string) {
	if i := strings.IndexAny(s, l.Forbidden); i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		return fmt.Sprintf("contains %q", string(r)), "no " + strings.Join(strings.Split(l.Forbidden, ""), " or ")
	}
	if l.MaxHashtags > 0 {
		if n := CountTags(s, '#'); n > l.MaxHashtags {
			return fmt.Sprintf("has %d hashtags", n), fmt.Sprintf("at most %d", l.MaxHashtags)
		}
	}
	if l.MaxMentions > 0 {
		if n := CountTags(s, '@'); n > l.MaxMentions {
			return fmt.Sprintf("has %d @-mentions", n), fmt.Sprintf("at most %d", l.MaxMentions)
		}
	}
	if l.MaxLinks > 0 {
		if n := CountLinks(s); n > l.MaxLinks {
			return fmt.Sprintf("has %d links", n), fmt.Sprintf("at most %d", l.MaxLinks)
		}
	}
	return "", ""
}

// link is what CountLinks takes for a link: a run of non-space characters starting with a
// scheme or with www. (Meta's own example of a link in a Threads text is www.facebook.com).
var link = regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s]+`)

// CountLinks counts the distinct links in s, as Threads does: "All unique URLs found in the
// text field are counted as links" (developers.facebook.com/documentation/threads/
// create-posts/text-attachments). Trailing punctuation is not part of a link.
func CountLinks(s string) int {
	seen := map[string]bool{}
	for _, m := range link.FindAllString(s, -1) {
		seen[strings.ToLower(strings.TrimRight(m, ".,;:!?)]}'\""))] = true
	}
	return len(seen)
}

// CountTags counts the tags marked with mark (# or @) in s as Instagram does: the mark at the
// start of a word, followed by a letter, digit or underscore (or, in a mention, a dot inside
// the name).
func CountTags(s string, mark rune) int {
	n := 0
	rs := []rune(s)
	for i, r := range rs {
		if r != mark || i+1 >= len(rs) {
			continue
		}
		if i > 0 && tagRune(rs[i-1], mark) {
			continue
		}
		if tagRune(rs[i+1], mark) && rs[i+1] != '.' {
			n++
		}
	}
	return n
}

func tagRune(r, mark rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || (mark == '@' && r == '.')
}

// countUTF16 counts UTF-16 code units without allocating: code points above
// U+FFFF need a surrogate pair. Invalid UTF-8 bytes decode to U+FFFD, one unit,
// which is how a UTF-16 encoder would replace them too.
func countUTF16(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Truncate returns the longest prefix of s that fits within the limit, cut
// between grapheme clusters so that no emoji, flag or accented letter is split
// whatever the unit. A limit without a maximum returns s unchanged.
func (l TextLimit) Truncate(s string) string {
	if l.Check(s) {
		return s
	}
	// Every unit is additive over concatenation, so the count of a prefix is
	// the sum of its clusters' counts.
	cut, used, prev := 0, 0, 0
	graphemeStarts(s, func(i int) bool {
		if i == 0 {
			return true
		}
		used += l.Count(s[prev:i])
		if l.Max > 0 && used > l.Max || l.MaxBytes > 0 && i > l.MaxBytes {
			return false
		}
		cut, prev = i, i
		return true
	})
	// The last cluster is never added: s as a whole is known not to fit.
	return s[:cut]
}
