package platform

import "unicode/utf8"

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
)

// TextLimit is the maximum length of one text field on one platform, with the
// unit the platform counts it in.
type TextLimit struct {
	// Max is the largest allowed length; 0 means no limit.
	Max int `json:"max"`
	// Unit is one of UnitCharacters, UnitGraphemes, UnitUTF16 or UnitBytes.
	Unit string `json:"unit"`
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
	default:
		return len(s)
	}
}

// Check reports whether s fits within the limit.
func (l TextLimit) Check(s string) bool {
	if l.Max <= 0 {
		return true
	}
	return l.Count(s) <= l.Max
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
	if l.Max <= 0 || l.Count(s) <= l.Max {
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
		if used > l.Max {
			return false
		}
		cut, prev = i, i
		return true
	})
	// The last cluster is never added: s as a whole is known not to fit.
	return s[:cut]
}
