package bluesky

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
)

// Rich text. A post's hashtags and links are not markup: they are facets next to the text, each
// a UTF-8 byte range (start inclusive, end exclusive) with features (app.bsky.richtext.facet:
// #tag {tag} without the "#", #link {uri}). Detection follows the rules of Bluesky's own client
// library: a tag starts with # or ＃ at the start of the text or after white space, runs to the
// next white space or invisible separator, loses trailing punctuation, must hold something other
// than digits and punctuation, and is at most 64 graphemes (the lexicon's limit); a link is an
// http(s) URL at the start, after white space or after "(", losing trailing .,;:!? and the
// ")"s it did not open. Bare domains ("example.com") are not linked: telling them from other dotted
// words needs the list of top-level domains.

// Facet is one app.bsky.richtext.facet.
type Facet struct {
	Index    ByteSlice `json:"index"`
	Features []Feature `json:"features"`
}

// ByteSlice is a facet's range in UTF-8 bytes.
type ByteSlice struct {
	ByteStart int `json:"byteStart"`
	ByteEnd   int `json:"byteEnd"`
}

// Feature is a facet feature: a tag or a link.
type Feature struct {
	Type string `json:"$type"`
	Tag  string `json:"tag,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// Feature types.
const (
	FeatureTag  = "app.bsky.richtext.facet#tag"
	FeatureLink = "app.bsky.richtext.facet#link"
)

var linkRE = regexp.MustCompile(`(?i)(?:^|[\s(])(https?://[^\s]+)`)

// tagGraphemes is the lexicon's maxGraphemes of a tag.
var tagLimit = platform.TextLimit{Max: 64, Unit: platform.UnitGraphemes}

// Facets detects the links and hashtags of text, in the order they appear.
func Facets(text string) []Facet {
	var out []Facet
	for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2], m[3]
		uri := text[start:end]
		uri = strings.TrimRight(uri, ".,;:!?")
		// A closing parenthesis the URL did not open belongs to the text around it.
		for strings.HasSuffix(uri, ")") && strings.Count(uri, ")") > strings.Count(uri, "(") {
			uri = uri[:len(uri)-1]
		}
		if len(uri) <= len("https://") {
			continue
		}
		out = append(out, Facet{Index: ByteSlice{start, start + len(uri)}, Features: []Feature{{Type: FeatureLink, URI: uri}}})
	}
	out = append(out, tagFacets(text)...)
	// Links come first from the scan above; put everything in text order.
	sortFacets(out)
	return out
}

// tagSeparator reports the characters that end a tag besides white space: soft hyphen, word
// joiner, hair and zero-width spaces, zero-width (non-)joiners and the combining enclosing
// keycap.
func tagSeparator(r rune) bool {
	switch r {
	case 0x00AD, 0x2060, 0x200A, 0x200B, 0x200C, 0x200D, 0x20E2:
		return true
	}
	return unicode.IsSpace(r)
}

func tagFacets(text string) []Facet {
	var out []Facet
	prevSpace := true // the start of the text counts as white space
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if (r == '#' || r == '＃') && prevSpace {
			start := i
			j := i + size
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if tagSeparator(r2) {
					break
				}
				j += s2
			}
			tag := text[i+size : j]
			// Trailing punctuation is not part of the tag.
			for tag != "" {
				last, n := utf8.DecodeLastRuneInString(tag)
				if !unicode.IsPunct(last) {
					break
				}
				tag = tag[:len(tag)-n]
			}
			if validTag(tag) {
				out = append(out, Facet{
					Index:    ByteSlice{start, i + size + len(tag)},
					Features: []Feature{{Type: FeatureTag, Tag: tag}},
				})
			}
			i = j
			prevSpace = false
			continue
		}
		prevSpace = unicode.IsSpace(r)
		i += size
	}
	return out
}

// validTag: not empty, not starting with the emoji variation selector (a "#️⃣" keycap), holding
// at least one character that is not a digit or punctuation, and short enough.
func validTag(tag string) bool {
	if tag == "" || strings.HasPrefix(tag, "\uFE0F") || len(tag) > 640 || !tagLimit.Check(tag) {
		return false
	}
	for _, r := range tag {
		if !unicode.IsDigit(r) && !unicode.IsPunct(r) && !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

func sortFacets(f []Facet) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j].Index.ByteStart < f[j-1].Index.ByteStart; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}
