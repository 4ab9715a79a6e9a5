package platform

import (
	"slices"
	"strings"
	"testing"
)

func TestAllAndDefaults(t *testing.T) {
	want := []string{"youtube", "instagram", "tiktok", "linkedin", "pinterest", "threads",
		"facebook", "bluesky", "telegram", "discord", "mastodon", "reddit"}
	if !slices.Equal(All, want) {
		t.Fatalf("All = %v, want the seed's order %v", All, want)
	}
	if !slices.Equal(Defaults, []string{"youtube", "instagram", "tiktok"}) {
		t.Fatalf("Defaults = %v", Defaults)
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"youtube", true},
		{"reddit", true},
		{"YouTube", false},
		{"", false},
		{"x", false},
		{" youtube", false},
		{"twitter", false},
	}
	for _, tt := range tests {
		if got := Valid(tt.name); got != tt.want {
			t.Errorf("Valid(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, name := range All {
		if !Valid(name) {
			t.Errorf("Valid(%q) = false for a member of All", name)
		}
	}
}

func TestCount(t *testing.T) {
	const (
		family   = "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466" // man, woman, girl, boy joined by ZWJ
		flags    = "\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA"                   // FR DE
		thumbsUp = "\U0001F44D\U0001F3FD"                                       // thumbs up, medium skin tone
		heart    = "\u2764\uFE0F"                                               // heart + emoji presentation
		keycap   = "1\uFE0F\u20E3"
		rainbow  = "\U0001F3F3\uFE0F\u200D\U0001F308"                                       // rainbow flag
		scotland = "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F" // tag sequence
		astro    = "\U0001F469\U0001F3FD\u200D\U0001F680"                                   // woman astronaut, skin tone
		eAcute   = "e\u0301"                                                                // e + combining acute
		zalgo    = "a\u0300\u0301\u0302\u0316"
		jamo     = "\u1100\u1161\u11A8" // conjoining Hangul: one syllable
		math     = "\U0001D4B3"         // mathematical script X, astral plane
	)
	tests := []struct {
		name                         string
		s                            string
		chars, graphemes, utf16, byt int
	}{
		{"empty", "", 0, 0, 0, 0},
		{"ascii", "hello", 5, 5, 5, 5},
		{"crlf", "a\r\nb", 4, 3, 4, 4},
		{"precomposed accent", "café", 4, 4, 4, 5},
		{"combining accent", eAcute, 2, 1, 2, 3},
		{"stacked marks", zalgo, 5, 1, 5, 9},
		{"cjk", "日本語", 3, 3, 3, 9},
		{"hangul syllables", "한국어", 3, 3, 3, 9},
		{"hangul jamo", jamo, 3, 1, 3, 9},
		{"devanagari conjunct", "नमस्ते", 6, 3, 6, 18},
		{"devanagari ksha", "क्षि", 4, 1, 4, 12},
		{"thai sara am", "นำ", 2, 1, 2, 6},
		{"astral char", math, 1, 1, 2, 4},
		{"emoji", "\U0001F600", 1, 1, 2, 4},
		{"zwj family", family, 7, 1, 11, 25},
		{"two flags", flags, 4, 2, 8, 16},
		{"odd regional indicators", flags[:12], 3, 2, 6, 12},
		{"skin tone", thumbsUp, 2, 1, 4, 8},
		{"variation selector", heart, 2, 1, 2, 6},
		{"keycap", keycap, 3, 1, 3, 7},
		{"rainbow flag", rainbow, 4, 1, 6, 14},
		{"subdivision flag", scotland, 7, 1, 14, 28},
		{"zwj with modifier", astro, 4, 1, 7, 15},
		{"zwj between letters", "a\u200Db", 3, 2, 3, 5},
		{"mixed", "Hi " + family + " " + flags + "!", 16, 8, 24, 46},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				unit string
				want int
			}{
				{UnitCharacters, tt.chars},
				{UnitGraphemes, tt.graphemes},
				{UnitUTF16, tt.utf16},
				{UnitBytes, tt.byt},
			} {
				if got := (TextLimit{Max: 1, Unit: c.unit}).Count(tt.s); got != c.want {
					t.Errorf("Count(%q) in %s = %d, want %d", tt.s, c.unit, got, c.want)
				}
			}
		})
	}
	if got := (TextLimit{Unit: "words"}).Count("héllo"); got != 6 {
		t.Errorf("unknown unit counted %d, want the byte count 6", got)
	}
}

func TestCheck(t *testing.T) {
	family := "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"
	tests := []struct {
		limit TextLimit
		s     string
		want  bool
	}{
		{TextLimit{Max: 5, Unit: UnitCharacters}, "hello", true},
		{TextLimit{Max: 5, Unit: UnitCharacters}, "hello!", false},
		{TextLimit{Max: 1, Unit: UnitGraphemes}, family, true},
		{TextLimit{Max: 10, Unit: UnitUTF16}, family, false},
		{TextLimit{Max: 11, Unit: UnitUTF16}, family, true},
		{TextLimit{Max: 24, Unit: UnitBytes}, family, false},
		{TextLimit{Max: 0, Unit: UnitBytes}, strings.Repeat("x", 100000), true},
		{TextLimit{Max: 300, Unit: UnitGraphemes}, strings.Repeat(family, 300), true},
		{TextLimit{Max: 300, Unit: UnitGraphemes}, strings.Repeat(family, 301), false},
		// Bluesky counts both: 119 families (25 bytes each) are 2,975 bytes, 120 are 3,000 and
		// 121 too many; 300 "é" are 600 bytes.
		{TextLimit{Max: 300, Unit: UnitGraphemes, MaxBytes: 3000}, strings.Repeat(family, 120), true},
		{TextLimit{Max: 300, Unit: UnitGraphemes, MaxBytes: 3000}, strings.Repeat(family, 121), false},
		{TextLimit{Max: 300, Unit: UnitGraphemes, MaxBytes: 3000}, strings.Repeat("é", 300), true},
		{TextLimit{Max: 300, Unit: UnitGraphemes, MaxBytes: 3000}, strings.Repeat("é", 301), false},
		{TextLimit{MaxBytes: 3}, "abc", true},
		{TextLimit{MaxBytes: 3}, "abcd", false},
	}
	for _, tt := range tests {
		if got := tt.limit.Check(tt.s); got != tt.want {
			t.Errorf("%+v.Check(%.20q) = %v, want %v", tt.limit, tt.s, got, tt.want)
		}
	}
}

func TestRefusal(t *testing.T) {
	youtube := TextLimit{Max: 100, Unit: UnitCharacters, Forbidden: "<>"}
	instagram := TextLimit{Max: 2200, Unit: UnitUTF16, MaxHashtags: 2, MaxMentions: 1}
	tests := []struct {
		limit        TextLimit
		s            string
		does, allows string
	}{
		{youtube, "a fine title", "", ""},
		{youtube, "1 > 0", `contains ">"`, "no < or >"},
		{youtube, "<b>bold</b>", `contains "<"`, "no < or >"},
		{instagram, "#one #two @me", "", ""},
		{instagram, "#one #two #three", "has 3 hashtags", "at most 2"},
		{instagram, "@me and @you", "has 2 @-mentions", "at most 1"},
		{TextLimit{Max: 5, Unit: UnitCharacters}, "#a #b <c>", "", ""},
	}
	for _, tt := range tests {
		if does, allows := tt.limit.Refusal(tt.s); does != tt.does || allows != tt.allows {
			t.Errorf("Refusal(%q) = %q, %q; want %q, %q", tt.s, does, allows, tt.does, tt.allows)
		}
	}
}

func TestCountTags(t *testing.T) {
	for _, c := range []struct {
		s        string
		hashtags int
		mentions int
	}{
		{"#one #two and #three", 3, 0},
		{"no#tag here, a # alone, ## and #", 0, 0},
		{"#été #日本 #tag_1", 3, 0},
		{"mail me@example.com or @someone. and @some.one_2", 0, 2},
		{"@ alone and @.dot", 0, 0},
	} {
		if h, m := CountTags(c.s, '#'), CountTags(c.s, '@'); h != c.hashtags || m != c.mentions {
			t.Errorf("%q: %d hashtags, %d mentions; want %d, %d", c.s, h, m, c.hashtags, c.mentions)
		}
	}
}

func TestMastodonLength(t *testing.T) {
	for _, c := range []struct {
		text, spoiler string
		want          int
	}{
		// The family is one grapheme, the link 23 whatever its length, the mention @bob.
		{"👩‍👩‍👧 https://x.org/a/b?c=d, @bob@example.org!", "cw", 2 + 1 + 1 + 23 + 1 + 1 + 4 + 1},
		{"see https://example.com/" + strings.Repeat("p", 100) + ".", "", 4 + 23 + 1},
		{"https:// alone", "", 14},
		{"mail bob@example.org", "", 20},
		{"   ", "warning", 7},
	} {
		if n := MastodonLength(c.text, c.spoiler, MastodonURLLength); n != c.want {
			t.Errorf("MastodonLength(%q, %q) = %d, want %d", c.text, c.spoiler, n, c.want)
		}
	}
}

// TestEmojiBytes: Threads' unit counts a character as one and an emoji, a flag or an emoji
// sequence as its UTF-8 bytes.
func TestEmojiBytes(t *testing.T) {
	lim := TextLimit{Max: 500, Unit: UnitEmojiBytes}
	tests := []struct {
		s    string
		want int
	}{
		{"hello", 5},
		{"日本語のテキスト", 8},
		{"é", 1},
		{"\U0001F600", 4},                  // 😀
		{"hi \U0001F600!", 8},              // 3 + 4 + 1
		{"\U0001F1EB\U0001F1F7", 8},        // a flag: two regional indicators
		{"\u2764\ufe0f", 6},                // ❤️: pictograph and variation selector, one cluster
		{"\U0001F44D\U0001F3FD", 8},        // 👍🏽 with a skin tone
		{"\U0001F468\u200D\U0001F469", 11}, // 👨‍👩: 4 + 3 + 4
	}
	for _, tt := range tests {
		if got := lim.Count(tt.s); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
	long := strings.Repeat("日本語", 160) // 480 characters, 1,440 bytes
	if !lim.Check(long) {
		t.Errorf("480 Japanese characters do not fit Threads' 500")
	}
	if got := lim.Truncate(strings.Repeat("\U0001F600", 200)); lim.Count(got) != 500 {
		t.Errorf("Truncate of 200 emoji counts %d, want 500 (125 emoji)", lim.Count(got))
	}
}

// TestCountLinks: distinct links, with or without a scheme, trailing punctuation not included.
func TestCountLinks(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"no links here", 0},
		{"see https://example.com/a.", 1},
		{"www.facebook.com and https://www.facebook.com", 2},
		{"https://a.example https://a.example HTTPS://A.EXAMPLE", 1},
		{"http://1.example http://2.example www.3.example (https://4.example) https://5.example, https://6.example", 6},
	}
	for _, tt := range tests {
		if got := CountLinks(tt.s); got != tt.want {
			t.Errorf("CountLinks(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
	lim := TextLimit{Max: 500, Unit: UnitEmojiBytes, MaxLinks: 5}
	if does, allows := lim.Refusal(tests[4].s); does != "has 6 links" || allows != "at most 5" {
		t.Errorf("Refusal of six links = %q, %q", does, allows)
	}
}
