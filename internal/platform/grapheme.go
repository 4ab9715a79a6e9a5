package platform

import "unicode"

// This file counts extended grapheme clusters (Unicode UAX #29) closely enough
// for length limits, without a dependency. It follows the boundary rules
// GB3-GB13 with character classes approximated from the general categories the
// standard library knows plus explicit emoji ranges. What it gets right: CR LF,
// combining marks, variation selectors, emoji modifiers (skin tones), emoji ZWJ
// sequences, tag sequences (subdivision flags), regional-indicator pairs
// (flags) and conjoining Hangul jamo. What it approximates: the few spacing
// marks and prepended concatenation marks outside the general categories used
// here, Indic conjunct rules (GB9c, Unicode 15.1) and the exact
// Extended_Pictographic set. These differ from a full implementation only on
// rare text, and only by a cluster or two.

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
	case r >= 0x0600 && r <= 0x0605, r == 0x06DD, r == 0x070F,
		r == 0x0890, r == 0x0891, r == 0x08E2, r == 0x110BD, r == 0x110CD:
		return true
	}
	return false
}

// extendedPictographic approximates the Extended_Pictographic property, which
// only matters for emoji ZWJ sequences (GB11). It is deliberately coarse in
// the dingbat and supplementary-symbol blocks; it leaves out the regional
// indicators and skin-tone modifiers, which have their own classes.
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
		{Lo: 0x2600, Hi: 0x27BF, Stride: 1},
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
		{Lo: 0x1F000, Hi: 0x1F1E5, Stride: 1},
		{Lo: 0x1F201, Hi: 0x1F3FA, Stride: 1},
		{Lo: 0x1F400, Hi: 0x1FAFF, Stride: 1},
		{Lo: 0x1FC00, Hi: 0x1FFFD, Stride: 1},
	},
	LatinOffset: 2,
}

// countGraphemes counts extended grapheme clusters in s by walking it once and
// deciding, between each pair of code points, whether a boundary falls there.
func countGraphemes(s string) int {
	var (
		n    int
		prev gcb
		// riRun counts the regional indicators immediately before the
		// current position, so flags pair up as 1-2, 3-4, ... (GB12, GB13).
		riRun int
		// pictRun is true while the text since the last Extended_Pictographic
		// character consists only of Extend characters (GB11's "ExtPict Extend*").
		pictRun bool
		// zwjAfterPict is true when the previous character is a ZWJ that
		// follows "ExtPict Extend*", so a following pictograph joins (GB11).
		zwjAfterPict bool
	)
	first := true
	for _, r := range s {
		c := graphemeClass(r)
		pict := unicode.Is(extendedPictographic, r)
		if first || graphemeBoundary(prev, c, pict, riRun, zwjAfterPict) {
			n++
		}
		first = false
		zwjAfterPict = c == gcbZWJ && pictRun
		pictRun = pict || (pictRun && c == gcbExtend)
		if c == gcbRegionalIndicator {
			riRun++
		} else {
			riRun = 0
		}
		prev = c
	}
	return n
}

// graphemeBoundary applies the UAX #29 rules in order to the pair (prev, c).
func graphemeBoundary(prev, c gcb, pict bool, riRun int, zwjAfterPict bool) bool {
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
	case prev == gcbZWJ && pict && zwjAfterPict: // GB11
		return false
	case prev == gcbRegionalIndicator && c == gcbRegionalIndicator && riRun%2 == 1: // GB12, GB13
		return false
	}
	return true // GB999
}
