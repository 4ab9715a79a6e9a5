package platform

import (
	"encoding/json"
	"reflect"
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
	if len(registry) != len(All) {
		t.Fatalf("registry has %d platforms, All has %d", len(registry), len(All))
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

func TestEveryPlatformHasCapabilities(t *testing.T) {
	uploads := []string{UploadResumable, UploadChunked, UploadPull, UploadMultipart, UploadDirect}
	formats := []string{FormatMP4, FormatMOV, FormatWebM}
	metrics := []string{MetricViews, MetricLikes, MetricComments, MetricShares,
		MetricImpressions, MetricReach, MetricSaves, MetricWatchTime}
	units := []string{UnitCharacters, UnitGraphemes, UnitUTF16, UnitBytes}
	for _, name := range All {
		t.Run(name, func(t *testing.T) {
			c, ok := CapabilitiesOf(name)
			if !ok {
				t.Fatal("no capabilities")
			}
			if c.MaxVideoBytes <= 0 {
				t.Errorf("max_video_bytes = %d", c.MaxVideoBytes)
			}
			if c.MaxDurationSeconds != 0 && c.MaxDurationSeconds < c.MinDurationSeconds {
				t.Errorf("duration bounds %v..%v", c.MinDurationSeconds, c.MaxDurationSeconds)
			}
			if c.MaxAspectRatio != 0 && c.MaxAspectRatio < c.MinAspectRatio {
				t.Errorf("aspect bounds %v..%v", c.MinAspectRatio, c.MaxAspectRatio)
			}
			if len(c.VideoFormats) == 0 {
				t.Error("no video formats")
			}
			for _, f := range c.VideoFormats {
				if !slices.Contains(formats, f) {
					t.Errorf("unknown video format %q", f)
				}
			}
			for _, a := range c.AspectRatios {
				if w, h, ok := strings.Cut(a, ":"); !ok || w == "" || h == "" {
					t.Errorf("malformed aspect ratio %q", a)
				}
			}
			if !slices.Contains(uploads, c.UploadMethod) {
				t.Errorf("upload_method %q", c.UploadMethod)
			}
			for _, m := range c.Analytics {
				if !slices.Contains(metrics, m) {
					t.Errorf("unknown metric %q", m)
				}
			}
			if c.Replies && !c.Comments {
				t.Error("replies without comments")
			}
			if len(c.Text) == 0 {
				t.Error("no text limits")
			}
			for field, l := range c.Text {
				if l.Max <= 0 || !slices.Contains(units, l.Unit) {
					t.Errorf("text[%q] = %+v", field, l)
				}
			}
			switch c.Connect {
			case ConnectOAuth:
				if !slices.Equal(c.CredentialFields, []string{"access_token", "refresh_token"}) {
					t.Errorf("oauth credential_fields = %v", c.CredentialFields)
				}
			case ConnectToken:
			default:
				t.Errorf("connect = %q", c.Connect)
			}
			req := RequiredCredentials(name)
			// Discord alone connects with one of two sets (a webhook, or a bot and channel),
			// which the API checks together.
			if len(req) == 0 && name != Discord {
				t.Error("no required credentials")
			}
			for _, f := range req {
				if !slices.Contains(c.CredentialFields, f) {
					t.Errorf("required credential %q not in credential_fields %v", f, c.CredentialFields)
				}
			}
			if len(c.Notes) == 0 {
				t.Error("no notes")
			}
			if StaticOptions(name) == nil {
				t.Error("StaticOptions is nil")
			}
		})
	}
	if _, ok := CapabilitiesOf("YouTube"); ok {
		t.Error(`CapabilitiesOf("YouTube") found a platform`)
	}
}

// TestSeedTextLimits holds the limits the interface sets in its per-platform
// objects (docs/CONTRACT.md, Platform objects): every one must exist, keyed by
// the object's field name, with the interface's maximum.
func TestSeedTextLimits(t *testing.T) {
	seed := []struct {
		platform, field string
		max             int
	}{
		{"linkedin", "commentary", 3000},
		{"linkedin", "title", 200},
		{"pinterest", "title", 100},
		{"pinterest", "description", 500},
		{"threads", "text", 500},
		{"facebook", "description", 5000},
		{"facebook", "title", 200},
		{"bluesky", "text", 300},
		{"telegram", "caption", 1024},
		{"discord", "content", 2000},
		{"mastodon", "text", 500},
		{"reddit", "title", 300},
	}
	for _, tt := range seed {
		c, _ := CapabilitiesOf(tt.platform)
		l, ok := c.Text[tt.field]
		if !ok {
			t.Errorf("%s.%s: no limit", tt.platform, tt.field)
			continue
		}
		if l.Max != tt.max {
			t.Errorf("%s.%s: max %d, seed says %d", tt.platform, tt.field, l.Max, tt.max)
		}
	}
}

// TestPlatformTextLimits holds the limits taken from the platforms themselves
// where the interface gives none or counts differently.
func TestPlatformTextLimits(t *testing.T) {
	tests := []struct {
		platform, field string
		want            TextLimit
	}{
		{"youtube", "title", TextLimit{Max: 100, Unit: UnitCharacters, Forbidden: "<>"}},
		{"youtube", "description", TextLimit{Max: 5000, Unit: UnitBytes, Forbidden: "<>"}},
		{"instagram", "caption", TextLimit{Max: 2200, Unit: UnitUTF16, MaxHashtags: 30, MaxMentions: 20}},
		{"tiktok", "title", TextLimit{Max: 2200, Unit: UnitUTF16}},
		{"bluesky", "text", TextLimit{Max: 300, Unit: UnitGraphemes, MaxBytes: 3000}},
		{"mastodon", "text", TextLimit{Max: 500, Unit: UnitGraphemes}},
		{"threads", "text", TextLimit{Max: 500, Unit: UnitBytes}},
		{"pinterest", "link", TextLimit{Max: 2048, Unit: UnitUTF16}},
	}
	for _, tt := range tests {
		c, _ := CapabilitiesOf(tt.platform)
		if got := c.Text[tt.field]; got != tt.want {
			t.Errorf("%s.%s = %+v, want %+v", tt.platform, tt.field, got, tt.want)
		}
	}
}

func TestCapabilitiesOfReturnsCopy(t *testing.T) {
	for _, name := range All {
		first, _ := CapabilitiesOf(name)
		snapshot, _ := CapabilitiesOf(name)

		first.MaxVideoBytes = 1
		first.VideoFormats[0] = "avi"
		first.VideoFormats = append(first.VideoFormats, "mkv")
		first.CredentialFields[0] = "password"
		first.Notes[0] = "changed"
		if len(first.Analytics) > 0 {
			first.Analytics[0] = "dislikes"
		}
		if len(first.AspectRatios) > 0 {
			first.AspectRatios[0] = "4:3"
		}
		for k := range first.Text {
			first.Text[k] = TextLimit{Max: 1, Unit: UnitBytes}
		}
		first.Text["extra"] = TextLimit{Max: 1}

		again, _ := CapabilitiesOf(name)
		if !reflect.DeepEqual(again, snapshot) {
			t.Errorf("%s: mutating a result changed the registry:\n got %+v\nwant %+v", name, again, snapshot)
		}
	}

	req := RequiredCredentials(Bluesky)
	req[0] = "password"
	if got := RequiredCredentials(Bluesky); got[0] != "handle" {
		t.Errorf("mutating RequiredCredentials changed the registry: %v", got)
	}
}

func TestRequiredCredentials(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"bluesky", []string{"handle", "app_password"}},
		{"telegram", []string{"bot_token", "chat_id"}},
		{"discord", []string{}}, // a webhook_url, or a bot_token and channel_id
		{"mastodon", []string{"instance_url", "access_token"}},
		{"youtube", []string{"access_token"}},
		{"reddit", []string{"access_token"}},
		{"nope", nil},
	}
	for _, tt := range tests {
		if got := RequiredCredentials(tt.name); !slices.Equal(got, tt.want) {
			t.Errorf("RequiredCredentials(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	c, _ := CapabilitiesOf(Bluesky)
	if !slices.Contains(c.CredentialFields, "pds_url") {
		t.Errorf("bluesky credential_fields %v lack the optional pds_url", c.CredentialFields)
	}
	for _, name := range []string{Bluesky, Telegram, Discord, Mastodon} {
		if c, _ := CapabilitiesOf(name); c.Connect != ConnectToken {
			t.Errorf("%s connect = %q, want token", name, c.Connect)
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

func TestStaticOptions(t *testing.T) {
	if StaticOptions("YouTube") != nil {
		t.Error("StaticOptions of an unknown platform is not nil")
	}
	choices := func(t *testing.T, platform, key string) []any {
		t.Helper()
		o, ok := StaticOptions(platform)[key].(map[string]any)
		if !ok {
			t.Fatalf("%s has no option %q", platform, key)
		}
		c, _ := o["choices"].([]any)
		return c
	}

	if got := choices(t, YouTube, "privacy_status"); !reflect.DeepEqual(got, []any{"public", "unlisted", "private"}) {
		t.Errorf("youtube privacy_status choices = %v", got)
	}
	cats := choices(t, YouTube, "category_id")
	if len(cats) != 15 {
		t.Errorf("youtube has %d assignable categories, want 15", len(cats))
	}
	found := false
	for _, c := range cats {
		if m := c.(map[string]any); m["id"] == "22" && m["title"] == "People & Blogs" {
			found = true
		}
	}
	if !found {
		t.Error("youtube categories lack 22 People & Blogs")
	}
	if _, ok := StaticOptions(YouTube)["made_for_kids"]; !ok {
		t.Error("youtube lacks made_for_kids")
	}
	if got := choices(t, TikTok, "privacy_level"); !reflect.DeepEqual(got,
		[]any{"PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"}) {
		t.Errorf("tiktok privacy_level choices = %v", got)
	}
	if got := choices(t, TikTok, "mode"); !reflect.DeepEqual(got, []any{"inbox", "direct"}) {
		t.Errorf("tiktok mode choices = %v", got)
	}
	if got := StaticOptions(Instagram)["share_to_feed"].(map[string]any)["default"]; got != true {
		t.Errorf("instagram share_to_feed default = %v", got)
	}
	if got := choices(t, Pinterest, "board_id"); got == nil || len(got) != 0 {
		t.Errorf("pinterest boards = %v, want an empty list", got)
	}
	for _, key := range []string{"nsfw", "spoiler"} {
		if got := StaticOptions(Reddit)[key].(map[string]any)["default"]; got != false {
			t.Errorf("reddit %s default = %v", key, got)
		}
	}

	// Each call builds new maps: changing one result leaves the next intact.
	o := StaticOptions(YouTube)
	o["privacy_status"].(map[string]any)["choices"].([]any)[0] = "secret"
	delete(o, "made_for_kids")
	if got := choices(t, YouTube, "privacy_status"); got[0] != "public" {
		t.Error("mutating StaticOptions changed later results")
	}

	for _, name := range All {
		if _, err := json.Marshal(StaticOptions(name)); err != nil {
			t.Errorf("%s options do not marshal: %v", name, err)
		}
	}
}

func TestCapabilitiesJSON(t *testing.T) {
	c, _ := CapabilitiesOf(Telegram)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"max_video_bytes", "min_duration_seconds", "max_duration_seconds",
		"video_formats", "aspect_ratios", "min_aspect_ratio", "max_aspect_ratio", "max_width",
		"text", "thumbnail", "upload_method", "analytics", "comments", "replies", "connect",
		"credential_fields", "posts_per_day", "notes"} {
		if _, ok := m[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	// "None" is an empty list, not null, so API users need not special-case it.
	if !strings.Contains(string(b), `"analytics":[]`) || !strings.Contains(string(b), `"aspect_ratios":[]`) {
		t.Errorf("empty lists are not [] in %s", b)
	}
	if !strings.Contains(string(b), `"caption":{"max":1024,"unit":"utf16"}`) {
		t.Errorf("text limit JSON shape: %s", b)
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
