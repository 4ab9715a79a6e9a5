package platform

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file counts extended grapheme clusters (Unicode UAX #29) closely enough
// for length limits, without a dependency. It follows the boundary rules
// GB3-GB13 with character classes approximated from the general categories the
// standard library knows plus explicit ranges. What it gets right: CR LF,
// combining marks, variation selectors, emoji modifiers (skin tones), emoji ZWJ
// sequences, tag sequences (subdivision flags), regional-indicator pairs
// (flags), conjoining Hangul jamo, Thai and Lao AM, and Indic conjuncts (GB9c)
// in the six scripts Unicode 15.1 defines them for. What it approximates: the
// rare spacing and prepended marks outside the general categories used here,
// and the Extended_Pictographic set, which only matters inside ZWJ sequences.
// Compared with a full implementation on random mixes of these characters it
// disagrees only on unusual ZWJ sequences of non-emoji symbols and on conjuncts
// in later-added scripts, and then by a cluster.

// gcb is a Grapheme_Cluster_Break class.
type gcb uint8

const (
	gcbOther gcb = iota
	gcbCR
	gcbLF
	gcbControl
	gcbExtend
	gcbZWJ
	gcbRegionalIndicator
	gcbPrepend
	gcbSpacingMark
	gcbL
	gcbV
	gcbT
	gcbLV
	gcbLVT
)

// graphemeClass approximates the Grapheme_Cluster_Break property of r. The
// order of the cases matters: emoji modifiers and tags must be found before
// the broad category tests that would otherwise classify them.
func graphemeClass(r rune) gcb {
	switch {
	case r == '\r':
		return gcbCR
	case r == '\n':
		return gcbLF
	case r == 0x200D:
		return gcbZWJ
	case r == 0x200C: // zero width non-joiner
		return gcbExtend
	case r >= 0x1F1E6 && r <= 0x1F1FF:
		return gcbRegionalIndicator
	case r >= 0x1F3FB && r <= 0x1F3FF: // emoji skin-tone modifiers
		return gcbExtend
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return gcbExtend
	case r >= 0xE0020 && r <= 0xE007F: // tags, as in subdivision flags
		return gcbExtend
	case isPrepend(r):
		return gcbPrepend
	case r == 0x0E33, r == 0x0EB3: // Thai and Lao AM: letters, yet spacing marks
		return gcbSpacingMark
	case unicode.In(r, unicode.Mn, unicode.Me):
		return gcbExtend
	case unicode.Is(unicode.Mc, r):
		return gcbSpacingMark
	case r >= 0x1100 && r <= 0x115F, r >= 0xA960 && r <= 0xA97C:
		return gcbL
	case r >= 0x1160 && r <= 0x11A7, r >= 0xD7B0 && r <= 0xD7C6:
		return gcbV
	case r >= 0x11A8 && r <= 0x11FF, r >= 0xD7CB && r <= 0xD7FB:
		return gcbT
	case r >= 0xAC00 && r <= 0xD7A3: // precomposed Hangul syllables
		if (r-0xAC00)%28 == 0 {
			return gcbLV
		}
		return gcbLVT
	case r == 0x2028, r == 0x2029, unicode.In(r, unicode.Cc, unicode.Cf):
		return gcbControl
	}
	return gcbOther
}

// isPrepend reports the prepended concatenation marks (Arabic number signs and
// the like), which join the character after them.
func isPrepend(r rune) bool {
	switch {
	case r >= 0x0600 && r <= 0x0605, r == 0x06DD, r == 0x070F, r == 0x0890, r == 0x0891,
		r == 0x08E2, r == 0x0D4E, r == 0x110BD, r == 0x110CD:
		return true
	}
	return false
}

// extendedPictographic holds the Extended_Pictographic ranges of Unicode's
// emoji data (as of Unicode 15), which only matter for emoji ZWJ sequences
// (GB11). Regional indicators and skin-tone modifiers have their own classes.
var extendedPictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00A9, Hi: 0x00A9, Stride: 1},
		{Lo: 0x00AE, Hi: 0x00AE, Stride: 1},
		{Lo: 0x203C, Hi: 0x203C, Stride: 1},
		{Lo: 0x2049, Hi: 0x2049, Stride: 1},
		{Lo: 0x2122, Hi: 0x2122, Stride: 1},
		{Lo: 0x2139, Hi: 0x2139, Stride: 1},
		{Lo: 0x2194, Hi: 0x2199, Stride: 1},
		{Lo: 0x21A9, Hi: 0x21AA, Stride: 1},
		{Lo: 0x231A, Hi: 0x231B, Stride: 1},
		{Lo: 0x2328, Hi: 0x2328, Stride: 1},
		{Lo: 0x2388, Hi: 0x2388, Stride: 1},
		{Lo: 0x23CF, Hi: 0x23CF, Stride: 1},
		{Lo: 0x23E9, Hi: 0x23F3, Stride: 1},
		{Lo: 0x23F8, Hi: 0x23FA, Stride: 1},
		{Lo: 0x24C2, Hi: 0x24C2, Stride: 1},
		{Lo: 0x25AA, Hi: 0x25AB, Stride: 1},
		{Lo: 0x25B6, Hi: 0x25B6, Stride: 1},
		{Lo: 0x25C0, Hi: 0x25C0, Stride: 1},
		{Lo: 0x25FB, Hi: 0x25FE, Stride: 1},
		{Lo: 0x2600, Hi: 0x2605, Stride: 1},
		{Lo: 0x2607, Hi: 0x2612, Stride: 1},
		{Lo: 0x2614, Hi: 0x2685, Stride: 1},
		{Lo: 0x2690, Hi: 0x2705, Stride: 1},
		{Lo: 0x2708, Hi: 0x2712, Stride: 1},
		{Lo: 0x2714, Hi: 0x2714, Stride: 1},
		{Lo: 0x2716, Hi: 0x2716, Stride: 1},
		{Lo: 0x271D, Hi: 0x271D, Stride: 1},
		{Lo: 0x2721, Hi: 0x2721, Stride: 1},
		{Lo: 0x2728, Hi: 0x2728, Stride: 1},
		{Lo: 0x2733, Hi: 0x2734, Stride: 1},
		{Lo: 0x2744, Hi: 0x2744, Stride: 1},
		{Lo: 0x2747, Hi: 0x2747, Stride: 1},
		{Lo: 0x274C, Hi: 0x274C, Stride: 1},
		{Lo: 0x274E, Hi: 0x274E, Stride: 1},
		{Lo: 0x2753, Hi: 0x2755, Stride: 1},
		{Lo: 0x2757, Hi: 0x2757, Stride: 1},
		{Lo: 0x2763, Hi: 0x2767, Stride: 1},
		{Lo: 0x2795, Hi: 0x2797, Stride: 1},
		{Lo: 0x27A1, Hi: 0x27A1, Stride: 1},
		{Lo: 0x27B0, Hi: 0x27B0, Stride: 1},
		{Lo: 0x27BF, Hi: 0x27BF, Stride: 1},
		{Lo: 0x2934, Hi: 0x2935, Stride: 1},
		{Lo: 0x2B05, Hi: 0x2B07, Stride: 1},
		{Lo: 0x2B1B, Hi: 0x2B1C, Stride: 1},
		{Lo: 0x2B50, Hi: 0x2B50, Stride: 1},
		{Lo: 0x2B55, Hi: 0x2B55, Stride: 1},
		{Lo: 0x3030, Hi: 0x3030, Stride: 1},
		{Lo: 0x303D, Hi: 0x303D, Stride: 1},
		{Lo: 0x3297, Hi: 0x3297, Stride: 1},
		{Lo: 0x3299, Hi: 0x3299, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1F000, Hi: 0x1F0FF, Stride: 1},
		{Lo: 0x1F10D, Hi: 0x1F10F, Stride: 1},
		{Lo: 0x1F12F, Hi: 0x1F12F, Stride: 1},
		{Lo: 0x1F16C, Hi: 0x1F171, Stride: 1},
		{Lo: 0x1F17E, Hi: 0x1F17F, Stride: 1},
		{Lo: 0x1F18E, Hi: 0x1F18E, Stride: 1},
		{Lo: 0x1F191, Hi: 0x1F19A, Stride: 1},
		{Lo: 0x1F1AD, Hi: 0x1F1E5, Stride: 1},
		{Lo: 0x1F201, Hi: 0x1F20F, Stride: 1},
		{Lo: 0x1F21A, Hi: 0x1F21A, Stride: 1},
		{Lo: 0x1F22F, Hi: 0x1F22F, Stride: 1},
		{Lo: 0x1F232, Hi: 0x1F23A, Stride: 1},
		{Lo: 0x1F23C, Hi: 0x1F23F, Stride: 1},
		{Lo: 0x1F249, Hi: 0x1F3FA, Stride: 1},
		{Lo: 0x1F400, Hi: 0x1F53D, Stride: 1},
		{Lo: 0x1F546, Hi: 0x1F64F, Stride: 1},
		{Lo: 0x1F680, Hi: 0x1F6FF, Stride: 1},
		{Lo: 0x1F774, Hi: 0x1F77F, Stride: 1},
		{Lo: 0x1F7D5, Hi: 0x1F7FF, Stride: 1},
		{Lo: 0x1F80C, Hi: 0x1F80F, Stride: 1},
		{Lo: 0x1F848, Hi: 0x1F84F, Stride: 1},
		{Lo: 0x1F85A, Hi: 0x1F85F, Stride: 1},
		{Lo: 0x1F888, Hi: 0x1F88F, Stride: 1},
		{Lo: 0x1F8AE, Hi: 0x1F8FF, Stride: 1},
		{Lo: 0x1F90C, Hi: 0x1F93A, Stride: 1},
		{Lo: 0x1F93C, Hi: 0x1F945, Stride: 1},
		{Lo: 0x1F947, Hi: 0x1FAFF, Stride: 1},
		{Lo: 0x1FC00, Hi: 0x1FFFD, Stride: 1},
	},
	LatinOffset: 2,
}

// indicConsonant holds the consonants (Indic_Conjunct_Break=Consonant) of
// Devanagari, Bengali, Gujarati, Oriya, Telugu and Malayalam, the scripts in
// which a virama joins two consonants into one cluster (GB9c).
var indicConsonant = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0915, Hi: 0x0939, Stride: 1},
		{Lo: 0x0958, Hi: 0x095F, Stride: 1},
		{Lo: 0x0978, Hi: 0x097F, Stride: 1},
		{Lo: 0x0995, Hi: 0x09A8, Stride: 1},
		{Lo: 0x09AA, Hi: 0x09B0, Stride: 1},
		{Lo: 0x09B2, Hi: 0x09B2, Stride: 1},
		{Lo: 0x09B6, Hi: 0x09B9, Stride: 1},
		{Lo: 0x09DC, Hi: 0x09DD, Stride: 1},
		{Lo: 0x09DF, Hi: 0x09DF, Stride: 1},
		{Lo: 0x09F0, Hi: 0x09F1, Stride: 1},
		{Lo: 0x0A95, Hi: 0x0AA8, Stride: 1},
		{Lo: 0x0AAA, Hi: 0x0AB0, Stride: 1},
		{Lo: 0x0AB2, Hi: 0x0AB3, Stride: 1},
		{Lo: 0x0AB5, Hi: 0x0AB9, Stride: 1},
		{Lo: 0x0AF9, Hi: 0x0AF9, Stride: 1},
		{Lo: 0x0B15, Hi: 0x0B28, Stride: 1},
		{Lo: 0x0B2A, Hi: 0x0B30, Stride: 1},
		{Lo: 0x0B32, Hi: 0x0B33, Stride: 1},
		{Lo: 0x0B35, Hi: 0x0B39, Stride: 1},
		{Lo: 0x0B5C, Hi: 0x0B5D, Stride: 1},
		{Lo: 0x0B5F, Hi: 0x0B5F, Stride: 1},
		{Lo: 0x0B71, Hi: 0x0B71, Stride: 1},
		{Lo: 0x0C15, Hi: 0x0C28, Stride: 1},
		{Lo: 0x0C2A, Hi: 0x0C39, Stride: 1},
		{Lo: 0x0C58, Hi: 0x0C5A, Stride: 1},
		{Lo: 0x0D15, Hi: 0x0D3A, Stride: 1},
	},
}

// isIndicLinker reports the viramas of those scripts (Indic_Conjunct_Break=Linker).
func isIndicLinker(r rune) bool {
	switch r {
	case 0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D:
		return true
	}
	return false
}

// graphemeState is what the boundary rules need to know about the text
// before the current position.
type graphemeState struct {
	// prev is the class of the previous code point.
	prev gcb
	// riRun counts the regional indicators immediately before the current
	// position, so flags pair up as 1-2, 3-4, ... (GB12, GB13).
	riRun int
	// pictRun is true while the text since the last Extended_Pictographic
	// character consists only of Extend characters (GB11's "ExtPict Extend*").
	pictRun bool
	// zwjAfterPict is true when the previous code point is a ZWJ that follows
	// "ExtPict Extend*", so that a following pictograph joins (GB11).
	zwjAfterPict bool
	// conjunct is 1 after an Indic consonant followed only by extending
	// marks, and 2 once a virama has been among those marks, so that a
	// following consonant joins (GB9c).
	conjunct int
}

// countEmojiBytes counts s in UnitEmojiBytes: each grapheme cluster that holds an
// Extended_Pictographic character or a regional indicator (an emoji, a flag) as its UTF-8
// bytes, every other code point as one.
func countEmojiBytes(s string) int {
	n, start := 0, 0
	count := func(cluster string) {
		if strings.IndexFunc(cluster, func(r rune) bool {
			return unicode.Is(extendedPictographic, r) || graphemeClass(r) == gcbRegionalIndicator
		}) >= 0 {
			n += len(cluster)
		} else {
			n += utf8.RuneCountInString(cluster)
		}
	}
	graphemeStarts(s, func(i int) bool {
		if i > start {
			count(s[start:i])
		}
		start = i
		return true
	})
	if start < len(s) {
		count(s[start:])
	}
	return n
}

// countGraphemes counts extended grapheme clusters in s by walking it once and
// deciding, between each pair of code points, whether a boundary falls there.
func countGraphemes(s string) int {
	n := 0
	graphemeStarts(s, func(int) bool { n++; return true })
	return n
}

// graphemeStarts calls yield with the byte offset of each grapheme cluster's
// start in s, in order, until yield returns false.
func graphemeStarts(s string, yield func(i int) bool) {
	var st graphemeState
	for i, r := range s {
		c := graphemeClass(r)
		pict := unicode.Is(extendedPictographic, r)
		consonant := unicode.Is(indicConsonant, r)
		if i == 0 || st.boundary(c, pict, consonant) {
			if !yield(i) {
				return
			}
		}
		st.zwjAfterPict = c == gcbZWJ && st.pictRun
		st.pictRun = pict || (st.pictRun && c == gcbExtend)
		if c == gcbRegionalIndicator {
			st.riRun++
		} else {
			st.riRun = 0
		}
		switch {
		case consonant:
			st.conjunct = 1
		case st.conjunct > 0 && isIndicLinker(r):
			st.conjunct = 2
		case st.conjunct > 0 && (c == gcbExtend || c == gcbZWJ):
		default:
			st.conjunct = 0
		}
		st.prev = c
	}
}

// boundary applies the UAX #29 rules, in order, between the previous code
// point and one of class c.
func (st *graphemeState) boundary(c gcb, pict, consonant bool) bool {
	prev := st.prev
	switch {
	case prev == gcbCR && c == gcbLF: // GB3
		return false
	case prev == gcbCR || prev == gcbLF || prev == gcbControl: // GB4
		return true
	case c == gcbCR || c == gcbLF || c == gcbControl: // GB5
		return true
	case prev == gcbL && (c == gcbL || c == gcbV || c == gcbLV || c == gcbLVT): // GB6
		return false
	case (prev == gcbLV || prev == gcbV) && (c == gcbV || c == gcbT): // GB7
		return false
	case (prev == gcbLVT || prev == gcbT) && c == gcbT: // GB8
		return false
	case c == gcbExtend || c == gcbZWJ: // GB9
		return false
	case c == gcbSpacingMark: // GB9a
		return false
	case prev == gcbPrepend: // GB9b
		return false
	case consonant && st.conjunct == 2: // GB9c
		return false
	case prev == gcbZWJ && pict && st.zwjAfterPict: // GB11
		return false
	case prev == gcbRegionalIndicator && c == gcbRegionalIndicator && st.riRun%2 == 1: // GB12, GB13
		return false
	}
	return true // GB999
}
