package platform_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
)

// fuzzPlatforms are the twelve platforms whose text limits FuzzTextLimit checks.
var fuzzPlatforms = []string{"youtube", "instagram", "tiktok", "linkedin", "pinterest", "threads", "facebook",
	"bluesky", "telegram", "discord", "mastodon", "reddit"}

var fuzzUnits = []string{platform.UnitCharacters, platform.UnitGraphemes, platform.UnitUTF16, platform.UnitBytes, "furlongs"}

// checkTruncate asserts what Truncate promises for lim and s: the result is a prefix of s that
// fits, cut between grapheme clusters, the longest such, valid UTF-8 when s is, and a fixed
// point of Truncate.
func checkTruncate(t *testing.T, name string, lim platform.TextLimit, s string) {
	t.Helper()
	n := lim.Count(s)
	if n < 0 || n > len(s) {
		t.Fatalf("%s: Count(%q) = %d, outside 0..%d bytes", name, s, n, len(s))
	}
	cut := lim.Truncate(s)
	switch {
	case !strings.HasPrefix(s, cut):
		t.Fatalf("%s: Truncate(%q) = %q is not a prefix", name, s, cut)
	case !lim.Check(cut):
		t.Fatalf("%s: Truncate(%q) = %q counts %d, over %+v", name, s, cut, lim.Count(cut), lim)
	case lim.Check(s) && cut != s:
		t.Fatalf("%s: %q fits, yet Truncate cut it to %q", name, s, cut)
	case utf8.ValidString(s) && !utf8.ValidString(cut):
		t.Fatalf("%s: Truncate(%q) = %q is not valid UTF-8", name, s, cut)
	case lim.Truncate(cut) != cut:
		t.Fatalf("%s: Truncate is not idempotent on %q: %q", name, cut, lim.Truncate(cut))
	}
	if cut == s {
		return
	}
	// The cut is at a cluster boundary, and the next cluster would not have fitted.
	next, atBoundary := -1, len(cut) == 0
	platform.GraphemeStarts(s, func(i int) bool {
		if i == len(cut) {
			atBoundary = true
		}
		if i > len(cut) {
			next = i
			return false
		}
		return true
	})
	if next < 0 {
		next = len(s)
	}
	if !atBoundary {
		t.Fatalf("%s: Truncate(%q) = %q splits a grapheme cluster", name, s, cut)
	}
	if lim.Check(s[:next]) {
		t.Fatalf("%s: Truncate(%q) = %q, yet %q fits too", name, s, cut, s[:next])
	}
}

// FuzzTextLimit checks counting and truncation in every platform's units (graphemes, UTF-16
// units, characters, bytes, with and without a byte cap), Mastodon's length with its weighted
// links and mentions, and the tag counting of Instagram's caps, on arbitrary text: nothing
// may panic, and Truncate keeps its promises (checkTruncate) for each platform's limits and
// for arbitrary ones.
func FuzzTextLimit(f *testing.F) {
	seeds := []string{
		"hello world",
		"\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 family",
		"\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA\U0001F1EB flags, one odd",
		"e\u0301 a\u0308\u0323 combining",
		"\U0001F44D\U0001F3FD skin tone, \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F tag flag",
		"\u1100\u1161\u11A8 \uAC00\uD7A3 hangul",
		"\u0915\u094D\u0937 \u0E01\u0E33 indic and thai",
		"line\r\nbreak\r\rand\n\n",
		"see https://example.com/a/very/long/path?q=1, and http://x.y.",
		"hi @someone@mastodon.social and @local, #tag #two_words #123",
		"\xff\xfe broken \xe2\x82 utf-8",
		"<script>alert(1)</script>",
		strings.Repeat("\u200D", 40),
		"",
	}
	for i, s := range seeds {
		f.Add(s, uint16(i%7+1), uint8(i), uint16(i*3))
	}
	f.Fuzz(func(t *testing.T, s string, max uint16, unit uint8, maxBytes uint16) {
		own := platform.TextLimit{Max: int(max % 512), Unit: fuzzUnits[int(unit)%len(fuzzUnits)], MaxBytes: int(maxBytes % 1024)}
		checkTruncate(t, "arbitrary", own, s)
		for _, name := range fuzzPlatforms {
			caps, ok := registry.CapabilitiesOf(name)
			if !ok {
				t.Fatalf("no capabilities for %s", name)
			}
			for field, lim := range caps.Text {
				checkTruncate(t, name+"."+field, lim, s)
				lim.Refusal(s)
			}
			checkTruncate(t, name+" replies", caps.ReplyText, s)
		}
		for _, perURL := range []int{0, platform.MastodonURLLength, int(max % 64)} {
			n := platform.MastodonLength(s, "", perURL)
			if n < 0 {
				t.Fatalf("platform.MastodonLength(%q) = %d", s, n)
			}
			if !strings.Contains(s, "://") && !strings.Contains(s, "@") && strings.TrimSpace(s) != "" {
				if want := platform.CountGraphemes(s); n != want {
					t.Fatalf("platform.MastodonLength(%q) = %d, yet it holds no link or mention and counts %d graphemes", s, n, want)
				}
			}
			platform.MastodonLength(s, s, perURL)
		}
		if platform.CountTags(s, '#') < 0 || platform.CountTags(s, '@') < 0 {
			t.Fatal("negative tag count")
		}
	})
}
