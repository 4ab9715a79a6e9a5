package ai

import (
	"slices"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "One. Two! Three?", []string{"One.", "Two!", "Three?"}},
		{"decimals and domains", "It costs 3.5 dollars at example.com today. Then more.", []string{"It costs 3.5 dollars at example.com today.", "Then more."}},
		{"abbreviations", "Add spices, e.g. cinnamon. Ask Dr. Smith. So did I. Done.", []string{"Add spices, e.g. cinnamon.", "Ask Dr. Smith.", "So did I.", "Done."}},
		{"runs and closers", `Wait... what?! He said "no." Fine.`, []string{"Wait...", "what?!", `He said "no."`, "Fine."}},
		{"lines and bullets", "Three tips:\n- grind coarse\n- steep 16 hours\n2) strain twice", []string{"Three tips:", "grind coarse", "steep 16 hours", "strain twice"}},
		{"blank lines and spaces", "  First   line  \n\n\nSecond\r\nThird.", []string{"First line", "Second", "Third."}},
		{"cjk", "今日は晴れ。散歩しよう！", []string{"今日は晴れ。", "散歩しよう！"}},
		{"emoji only", "🔥🔥🔥", []string{"🔥🔥🔥"}},
		{"empty", " \n ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sentences(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("sentences(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestStrongestSentence(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"question with a number", "I went to the shop. Why do 90% of people overpay for coffee? Anyway, here we are.", "Why do 90% of people overpay for coffee?"},
		{"superlative and you", "Coffee is a drink. This is the easiest trick you will ever learn. It uses water.", "This is the easiest trick you will ever learn."},
		{"first wins a tie", "Beans matter a lot here. Water matters a lot here.", "Beans matter a lot here."},
		{"too short loses", "Wow. Most people never clean their grinder and it ruins the taste.", "Most people never clean their grinder and it ruins the taste."},
		{"rambling loses", "This is the sentence that goes on and on and on about everything and nothing for far longer than anybody would ever want to read in a caption on a phone. Stop rinsing rice the wrong way!", "Stop rinsing rice the wrong way!"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := sentences(tt.script)
			if got := ss[strongest(ss)]; got != tt.want {
				t.Errorf("strongest = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKeywordsAndHashtags(t *testing.T) {
	script := "Cold brew is easier than you think. Most people grind their beans too fine. " +
		"Cold brew needs coarse beans and 16 hours in the fridge. The fridge does the work. NASA does not make cold brew, but my iPhone timer helps."
	kws := keywords(sentences(script))
	var tags []string
	for _, kw := range kws {
		tags = append(tags, hashtag(kw, false))
	}
	if len(tags) == 0 || tags[0] != "#ColdBrew" {
		t.Fatalf("best tag = %v, want #ColdBrew first (a recurring pair)", tags)
	}
	for _, want := range []string{"#beans", "#fridge", "#NASA", "#iPhone"} {
		if !slices.Contains(tags, want) {
			t.Errorf("tags %v lack %s", tags, want)
		}
	}
	for _, tag := range tags {
		if !ValidHashtag(tag) {
			t.Errorf("%q is not a valid hashtag", tag)
		}
		if w := strings.ToLower(strings.TrimPrefix(tag, "#")); stopWords[w] {
			t.Errorf("stop word %q became a tag", tag)
		}
	}
	if slices.Contains(tags, "#bean") && slices.Contains(tags, "#beans") {
		t.Errorf("plural and singular both tagged: %v", tags)
	}
	if got := hashtag(keyword{parts: []string{"coffee"}}, true); got != "#Coffee" {
		t.Errorf("professional tag = %q, want #Coffee", got)
	}
}

func TestHashtagForms(t *testing.T) {
	valid := map[string]bool{
		"#coffee": true, "#ColdBrew": true, "#café": true, "#日本語": true, "#top_10": true, "#2024": false,
		"coffee": false, "#": false, "#cold brew": false, "#a-b": false, "##x": false, "#" + strings.Repeat("a", 31): false,
	}
	for tag, want := range valid {
		if got := ValidHashtag(tag); got != want {
			t.Errorf("ValidHashtag(%q) = %v, want %v", tag, got, want)
		}
	}
	contains := []struct {
		text, tag string
		want      bool
	}{
		{"Try it #ColdBrew", "#coldbrew", true},
		{"#cold_brew and more", "#cold", false},
		{"#coldbrew2024", "#coldbrew", false},
		{"#a #b", "#b", true},
		{"no tags", "#tags", false},
	}
	for _, c := range contains {
		if got := containsTag(c.text, c.tag); got != c.want {
			t.Errorf("containsTag(%q, %q) = %v, want %v", c.text, c.tag, got, c.want)
		}
	}
	normalized := map[string]string{
		"cold brew": "#ColdBrew", "#Coffee!": "#Coffee", "coffee": "#coffee", "  #fyp ": "#fyp",
		"low-acid coffee": "#LowAcidCoffee", "🔥": "", "#123": "", "": "",
	}
	for in, want := range normalized {
		if got := normalizeHashtag(in); got != want {
			t.Errorf("normalizeHashtag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShorten(t *testing.T) {
	chars := func(n int) []platform.TextLimit { return []platform.TextLimit{{Max: n, Unit: platform.UnitCharacters}} }
	tests := []struct {
		name string
		in   string
		lims []platform.TextLimit
		want string
	}{
		{"fits", "short text", chars(20), "short text"},
		{"word boundary", "the quick brown fox jumps", chars(15), "the quick…"},
		{"trailing comma dropped", "alpha, beta gamma delta", chars(10), "alpha…"},
		{"one long word cut inside", strings.Repeat("a", 30), chars(10), strings.Repeat("a", 9) + "…"},
		{"emoji without spaces, graphemes", strings.Repeat("👍🏽", 10), []platform.TextLimit{{Max: 4, Unit: platform.UnitGraphemes}}, strings.Repeat("👍🏽", 3) + "…"},
		{"emoji without spaces, bytes", strings.Repeat("🔥", 10), []platform.TextLimit{{Max: 12, Unit: platform.UnitBytes}}, "🔥🔥…"},
		{"no room even for the ellipsis", "abc", chars(1), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := shorten(tt.in, tt.lims)
			if got != tt.want {
				t.Errorf("shorten = %q, want %q", got, tt.want)
			}
			if got != "" && !fits(got, tt.lims) {
				t.Errorf("%q does not fit", got)
			}
		})
	}
}

func TestTrimAtSentences(t *testing.T) {
	chars := func(n int) []platform.TextLimit { return []platform.TextLimit{{Max: n, Unit: platform.UnitCharacters}} }
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "One. Two.", 20, "One. Two."},
		{"whole sentences", "First one. Second one. Third one.", 25, "First one. Second one."},
		{"keeps the hashtag line", "First one. Second one. Third one.\n\n#a #b", 28, "First one.\n\n#a #b"},
		{"drops the tags when needed", "First sentence here.\n\n#alpha #beta #gamma", 22, "First sentence here."},
		{"lines count as ends", "Hook line\nBody line that is long", 12, "Hook line"},
		{"first sentence too long", "This single sentence is far too long to fit.", 20, "This single…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := trimAtSentences(tt.in, chars(tt.max)); got != tt.want {
				t.Errorf("trimAtSentences = %q, want %q", got, tt.want)
			}
		})
	}
}
