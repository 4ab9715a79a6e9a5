package ai

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/reelay/reelay/internal/platform"
)

const coldBrew = "Cold brew is easier than you think. Most people make it wrong because they use the wrong grind. " +
	"Use coarse beans, a 1:8 ratio and 16 hours in the fridge. The result is smoother, sweeter coffee with half the acidity. " +
	"Cold brew keeps for two weeks, so one batch covers your mornings. Why pay $6 at a café when cold brew costs 50 cents at home?"

// scripts are the inputs every platform's limit is checked against: ordinary copy, and the
// cases where counting units differ most (emoji, CJK) or where trimming has to work hard.
var scripts = map[string]string{
	"cold brew": coldBrew,
	"emoji heavy": strings.Repeat("🔥🔥 Best 👨‍👩‍👧‍👦 family hack ever 🇫🇷🇩🇪! Your kids will 😍 it, 100% 👍🏽👍🏽. ", 40) +
		"Why wait? 🚀🚀🚀",
	"emoji without spaces": strings.Repeat("👨‍👩‍👧‍👦🔥👍🏽🇯🇵", 400),
	"very long": strings.Repeat("Sourdough needs patience and a warm kitchen to rise properly overnight. "+
		"Feed the starter twice a day with equal parts flour and water. ", 70), // about 9,000 characters
	"one endless sentence": strings.Repeat("and then the dough rises again ", 300),
	"cjk":                  strings.Repeat("今日は最高のコーヒーを作ります。豆は粗挽きにして、十六時間冷蔵庫に入れます。", 40),
	"accents and marks":    strings.Repeat("Crème brûlée à la française, naïve café façade, e\u0301te\u0301 e\u0301le\u0301gant. ", 60),
	"list":                 "Three mistakes with rice:\n- rinsing too little\n- too much water\n3) lifting the lid\nFix them and it's perfect.",
}

func TestAdaptFitsEveryPlatform(t *testing.T) {
	for name, script := range scripts {
		for _, tone := range Tones {
			t.Run(name+"/"+tone, func(t *testing.T) {
				got, err := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: script, Platforms: platform.All, Tone: tone, IncludeJEV: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(platform.All) {
					t.Fatalf("copy for %d platforms, want %d", len(got), len(platform.All))
				}
				for _, p := range platform.All {
					checkCopy(t, p, got[p], true)
				}
			})
		}
	}
}

// checkCopy checks what every engine's copy must satisfy on platform p.
func checkCopy(t *testing.T, p string, c Copy, jev bool) {
	t.Helper()
	lim, _ := LimitsOf(p)
	for _, l := range lim.Text {
		if !l.Check(c.Text) {
			t.Errorf("%s text is %d %s, over %d", p, l.Count(c.Text), l.Unit, l.Max)
		}
	}
	if c.Text == "" || c.Hook == "" {
		t.Errorf("%s: empty text or hook: %+v", p, c)
	}
	if !strings.HasPrefix(c.Text, c.Hook) {
		t.Errorf("%s text does not open with the hook %q: %q", p, c.Hook, c.Text)
	}
	if len(lim.Title) > 0 {
		if c.Title == "" {
			t.Errorf("%s has a title field but no title", p)
		}
		for _, l := range lim.Title {
			if !l.Check(c.Title) {
				t.Errorf("%s title is %d %s, over %d", p, l.Count(c.Title), l.Unit, l.Max)
			}
		}
	} else if c.Title != "" {
		t.Errorf("%s has no title field but got title %q", p, c.Title)
	}
	seen := map[string]bool{}
	for _, h := range c.Hashtags {
		if !ValidHashtag(h) {
			t.Errorf("%s: malformed hashtag %q", p, h)
		}
		if seen[strings.ToLower(h)] {
			t.Errorf("%s: hashtag %q twice", p, h)
		}
		seen[strings.ToLower(h)] = true
		if !containsTag(c.Text, h) {
			t.Errorf("%s: hashtag %q is not in the text", p, h)
		}
	}
	if p == platform.YouTube && strings.ContainsAny(c.Text+c.Title, "<>") {
		t.Errorf("youtube copy contains < or >, which YouTube refuses")
	}
	if jev != (len(c.JEV) > 0) {
		t.Errorf("%s: jev = %q with includeJev %v", p, c.JEV, jev)
	}
	for _, line := range c.JEV {
		if !JEVLineLimit.Check(line) || strings.TrimSpace(line) == "" {
			t.Errorf("%s: on-screen line %q is empty or over %d", p, line, JEVLineLimit.Max)
		}
	}
}

// TestAdaptCountsInThePlatformsUnit shows that each limit is counted in its own unit: emoji
// copy on Bluesky may run past 300 bytes as long as it is within 300 graphemes, while on
// Threads, which counts bytes, it may not.
func TestAdaptCountsInThePlatformsUnit(t *testing.T) {
	got, err := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: scripts["emoji heavy"], Platforms: []string{platform.Bluesky, platform.Threads, platform.Mastodon}})
	if err != nil {
		t.Fatal(err)
	}
	graphemes := platform.TextLimit{Unit: platform.UnitGraphemes}
	bytesOf := platform.TextLimit{Unit: platform.UnitBytes}
	tests := []struct {
		platform          string
		unit              platform.TextLimit
		min, max          int
		otherUnit         platform.TextLimit
		otherAbove        int
		otherAboveMeaning string
	}{
		{platform.Bluesky, graphemes, 200, 300, bytesOf, 300, "the room of graphemes is used, not bytes"},
		{platform.Mastodon, graphemes, 350, 500, bytesOf, 500, "the room of graphemes is used, not bytes"},
		{platform.Threads, bytesOf, 350, 500, graphemes, 0, "counted in bytes"},
	}
	for _, tt := range tests {
		text := got[tt.platform].Text
		if n := tt.unit.Count(text); n < tt.min || n > tt.max {
			t.Errorf("%s text is %d %s, want %d..%d", tt.platform, n, tt.unit.Unit, tt.min, tt.max)
		}
		if n := tt.otherUnit.Count(text); n <= tt.otherAbove {
			t.Errorf("%s text is %d %s: %s", tt.platform, n, tt.otherUnit.Unit, tt.otherAboveMeaning)
		}
	}
}

func TestAdaptBodyEndsAtSentences(t *testing.T) {
	got, err := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: scripts["very long"], Platforms: platform.All, Tone: ToneProfessional})
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range got {
		// Professional copy is hook, paragraph, call to action, tags: the paragraph is the
		// second block, and must end a sentence.
		blocks := strings.Split(c.Text, "\n\n")
		if len(blocks) < 2 {
			t.Errorf("%s: no body in %q", p, c.Text)
			continue
		}
		if body := blocks[1]; !endsSentence(body) {
			t.Errorf("%s body is cut inside a sentence: %q", p, body)
		}
		if strings.Contains(c.Text, ellipsis) {
			t.Errorf("%s: text was cut with an ellipsis although the script has short sentences: %q", p, c.Text)
		}
	}
}

func TestAdaptTonesDiffer(t *testing.T) {
	texts := map[string]string{}
	for _, tone := range Tones {
		got, err := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: []string{platform.Instagram, platform.LinkedIn}, Tone: tone})
		if err != nil {
			t.Fatal(err)
		}
		for other, text := range texts {
			if text == got[platform.Instagram].Text {
				t.Errorf("tones %s and %s give the same text", tone, other)
			}
		}
		texts[tone] = got[platform.Instagram].Text
		if tone == ToneProfessional {
			for _, c := range got {
				if strings.ContainsFunc(c.Text, isEmoji) {
					t.Errorf("professional copy has emoji the script does not: %q", c.Text)
				}
			}
		}
	}
	if !strings.Contains(texts[ToneEducational], "\n1. ") {
		t.Errorf("educational copy is not laid out as points: %q", texts[ToneEducational])
	}
	if !strings.Contains(texts[ToneEngaging], "?") || !strings.Contains(texts[ToneEngaging], "👇") {
		t.Errorf("engaging copy does not invite comments: %q", texts[ToneEngaging])
	}
}

func isEmoji(r rune) bool { return r >= 0x1F000 || (r >= 0x2600 && r <= 0x27BF) }

func TestAdaptDeterministic(t *testing.T) {
	req := AdaptRequest{Prompt: coldBrew, Platforms: platform.All, Tone: ToneHumorous, IncludeJEV: true}
	a, err := Builtin{}.Adapt(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, _ := Builtin{}.Adapt(context.Background(), req)
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			t.Fatalf("two answers differ:\n%s\n%s", ja, jb)
		}
	}
}

func TestAdaptCopy(t *testing.T) {
	got, err := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: platform.All, Tone: ToneViral, IncludeJEV: true})
	if err != nil {
		t.Fatal(err)
	}
	hookSentence := "Why pay $6 at a café when cold brew costs 50 cents at home?"
	tests := []struct {
		platform   string
		tags       []string // exactly these hashtags
		titleWants string   // substring of the title ("" = no title)
	}{
		{platform.YouTube, []string{"#ColdBrew", "#mornings", "#grind", "#Shorts"}, hookSentence + " #Shorts"},
		{platform.TikTok, []string{"#ColdBrew", "#mornings", "#grind", "#fridge", "#fyp"}, ""},
		{platform.Threads, []string{"#ColdBrew"}, ""},
		{platform.Bluesky, []string{"#ColdBrew", "#mornings"}, ""},
		{platform.Reddit, []string{}, hookSentence},
		{platform.Discord, []string{}, ""},
		{platform.Pinterest, []string{"#ColdBrew", "#mornings", "#grind", "#fridge"}, hookSentence},
	}
	for _, tt := range tests {
		c := got[tt.platform]
		if !strings.Contains(c.Hook, hookSentence) {
			t.Errorf("%s hook %q is not built on the strongest sentence", tt.platform, c.Hook)
		}
		if !slices.Equal(c.Hashtags, tt.tags) && !(len(tt.tags) == 0 && len(c.Hashtags) == 0) {
			t.Errorf("%s hashtags = %q, want %q", tt.platform, c.Hashtags, tt.tags)
		}
		if c.Title != tt.titleWants {
			t.Errorf("%s title = %q, want %q", tt.platform, c.Title, tt.titleWants)
		}
		if c.JEV[0] == "" || !strings.HasPrefix(c.Hook, strings.TrimSuffix(c.JEV[0], ellipsis)) {
			t.Errorf("%s first on-screen line %q is not the hook %q", tt.platform, c.JEV[0], c.Hook)
		}
	}
	if r := got[platform.Reddit]; strings.ContainsFunc(r.Text, isEmoji) || strings.Contains(r.Text, "#") {
		t.Errorf("reddit copy should be plain: %q", r.Text)
	}
	// The script's sentences that are not the hook follow it in order.
	if body := got[platform.LinkedIn].Text; !strings.Contains(body, "Cold brew is easier than you think.\nMost people make it wrong") {
		t.Errorf("linkedin body does not follow the script: %q", body)
	}
	// Copy without includeJev has no on-screen lines.
	plain, _ := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: coldBrew, Platforms: []string{platform.TikTok}})
	if plain[platform.TikTok].JEV != nil {
		t.Errorf("jev without includeJev: %q", plain[platform.TikTok].JEV)
	}
}

func TestAdaptRefuses(t *testing.T) {
	tests := []struct {
		name string
		req  AdaptRequest
	}{
		{"blank prompt", AdaptRequest{Prompt: " \n\t", Platforms: []string{platform.TikTok}}},
		{"unknown platform", AdaptRequest{Prompt: "hi there", Platforms: []string{"myspace"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := (Builtin{}).Adapt(context.Background(), tt.req); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestYouTubeAngleBrackets(t *testing.T) {
	got, err := Builtin{}.Adapt(context.Background(), AdaptRequest{Prompt: "I <3 coffee more than tea. Is 5 > 3 in coffee math? Yes.", Platforms: []string{platform.YouTube, platform.TikTok}})
	if err != nil {
		t.Fatal(err)
	}
	checkCopy(t, platform.YouTube, got[platform.YouTube], false)
	if !strings.Contains(got[platform.TikTok].Text, "<3") {
		t.Errorf("tiktok text lost the script's <3: %q", got[platform.TikTok].Text)
	}
	if !strings.ContainsRune(got[platform.YouTube].Text, unicode.SimpleFold('‹')) {
		t.Errorf("youtube text should keep <3 readable as ‹3: %q", got[platform.YouTube].Text)
	}
}
