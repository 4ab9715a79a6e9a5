package registry

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform"
)

// TestDescriptionsAreAll: the registry holds one description of each platform, in the order of
// platform.All.
func TestDescriptionsAreAll(t *testing.T) {
	var ids []string
	for _, d := range descriptions {
		ids = append(ids, d.ID)
		if d.Name == "" {
			t.Errorf("%s has no name", d.ID)
		}
	}
	if !slices.Equal(ids, platform.All) {
		t.Fatalf("descriptions are of %v, want platform.All %v", ids, platform.All)
	}
	if got := DisplayName(platform.TikTok); got != "TikTok" {
		t.Errorf("DisplayName(tiktok) = %q", got)
	}
	if got := DisplayName("myspace"); got != "myspace" {
		t.Errorf("DisplayName of an unknown platform = %q, want it as it is", got)
	}
}

func TestEveryPlatformHasCapabilities(t *testing.T) {
	uploads := []string{platform.UploadResumable, platform.UploadChunked, platform.UploadPull, platform.UploadMultipart, platform.UploadDirect}
	formats := []string{platform.FormatMP4, platform.FormatMOV, platform.FormatWebM}
	metrics := []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricShares,
		platform.MetricImpressions, platform.MetricReach, platform.MetricSaves, platform.MetricWatchTime}
	units := []string{platform.UnitCharacters, platform.UnitGraphemes, platform.UnitUTF16, platform.UnitBytes, platform.UnitEmojiBytes}
	for _, name := range platform.All {
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
			case platform.ConnectOAuth:
				if !slices.Equal(c.CredentialFields, []string{"access_token", "refresh_token"}) {
					t.Errorf("oauth credential_fields = %v", c.CredentialFields)
				}
			case platform.ConnectToken:
			default:
				t.Errorf("connect = %q", c.Connect)
			}
			req := RequiredCredentials(name)
			// platform.Discord alone connects with one of two sets (a webhook, or a bot and channel),
			// which the API checks together.
			if len(req) == 0 && name != platform.Discord {
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
		want            platform.TextLimit
	}{
		{"youtube", "title", platform.TextLimit{Max: 100, Unit: platform.UnitCharacters, Forbidden: "<>"}},
		{"youtube", "description", platform.TextLimit{Max: 5000, Unit: platform.UnitBytes, Forbidden: "<>"}},
		{"instagram", "caption", platform.TextLimit{Max: 2200, Unit: platform.UnitUTF16, MaxHashtags: 30, MaxMentions: 20}},
		{"tiktok", "title", platform.TextLimit{Max: 2200, Unit: platform.UnitUTF16}},
		{"bluesky", "text", platform.TextLimit{Max: 300, Unit: platform.UnitGraphemes, MaxBytes: 3000}},
		{"mastodon", "text", platform.TextLimit{Max: 500, Unit: platform.UnitGraphemes}},
		{"threads", "text", platform.TextLimit{Max: 500, Unit: platform.UnitEmojiBytes, MaxLinks: 5}},
		{"pinterest", "link", platform.TextLimit{Max: 2048, Unit: platform.UnitUTF16}},
	}
	for _, tt := range tests {
		c, _ := CapabilitiesOf(tt.platform)
		if got := c.Text[tt.field]; got != tt.want {
			t.Errorf("%s.%s = %+v, want %+v", tt.platform, tt.field, got, tt.want)
		}
	}
}

func TestCapabilitiesOfReturnsCopy(t *testing.T) {
	for _, name := range platform.All {
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
			first.Text[k] = platform.TextLimit{Max: 1, Unit: platform.UnitBytes}
		}
		first.Text["extra"] = platform.TextLimit{Max: 1}

		again, _ := CapabilitiesOf(name)
		if !reflect.DeepEqual(again, snapshot) {
			t.Errorf("%s: mutating a result changed the registry:\n got %+v\nwant %+v", name, again, snapshot)
		}
	}

	req := RequiredCredentials(platform.Bluesky)
	req[0] = "password"
	if got := RequiredCredentials(platform.Bluesky); got[0] != "handle" {
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
	c, _ := CapabilitiesOf(platform.Bluesky)
	if !slices.Contains(c.CredentialFields, "pds_url") {
		t.Errorf("bluesky credential_fields %v lack the optional pds_url", c.CredentialFields)
	}
	for _, name := range []string{platform.Bluesky, platform.Telegram, platform.Discord, platform.Mastodon} {
		if c, _ := CapabilitiesOf(name); c.Connect != platform.ConnectToken {
			t.Errorf("%s connect = %q, want token", name, c.Connect)
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

	if got := choices(t, platform.YouTube, "privacy_status"); !reflect.DeepEqual(got, []any{"public", "unlisted", "private"}) {
		t.Errorf("youtube privacy_status choices = %v", got)
	}
	cats := choices(t, platform.YouTube, "category_id")
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
	if _, ok := StaticOptions(platform.YouTube)["made_for_kids"]; !ok {
		t.Error("youtube lacks made_for_kids")
	}
	if got := choices(t, platform.TikTok, "privacy_level"); !reflect.DeepEqual(got,
		[]any{"PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"}) {
		t.Errorf("tiktok privacy_level choices = %v", got)
	}
	if got := choices(t, platform.TikTok, "mode"); !reflect.DeepEqual(got, []any{"inbox", "direct"}) {
		t.Errorf("tiktok mode choices = %v", got)
	}
	if got := StaticOptions(platform.Instagram)["share_to_feed"].(map[string]any)["default"]; got != true {
		t.Errorf("instagram share_to_feed default = %v", got)
	}
	if got := choices(t, platform.Pinterest, "board_id"); got == nil || len(got) != 0 {
		t.Errorf("pinterest boards = %v, want an empty list", got)
	}
	for _, key := range []string{"nsfw", "spoiler"} {
		if got := StaticOptions(platform.Reddit)[key].(map[string]any)["default"]; got != false {
			t.Errorf("reddit %s default = %v", key, got)
		}
	}

	// Each call builds new maps: changing one result leaves the next intact.
	o := StaticOptions(platform.YouTube)
	o["privacy_status"].(map[string]any)["choices"].([]any)[0] = "secret"
	delete(o, "made_for_kids")
	if got := choices(t, platform.YouTube, "privacy_status"); got[0] != "public" {
		t.Error("mutating StaticOptions changed later results")
	}

	for _, name := range platform.All {
		if _, err := json.Marshal(StaticOptions(name)); err != nil {
			t.Errorf("%s options do not marshal: %v", name, err)
		}
	}
}

func TestCapabilitiesJSON(t *testing.T) {
	c, _ := CapabilitiesOf(platform.Telegram)
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

// TestTextsAreFieldsOfTheOptions: each text a description limits is a string field of its
// options type, each fallback is of such a text, and each text the type handles itself is
// one, so that no limit or fallback names a field the request cannot give.
func TestTextsAreFieldsOfTheOptions(t *testing.T) {
	for _, d := range descriptions {
		typ := reflect.TypeOf(d.NewOptions()).Elem()
		fields := map[string]reflect.Kind{}
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			fields[name] = typ.Field(i).Type.Kind()
		}
		for key := range d.Capabilities.Text {
			if fields[key] != reflect.String {
				t.Errorf("%s limits the text %q, which is no string field of %s", d.ID, key, typ)
			}
		}
		for key, from := range d.TextFallbacks {
			if _, ok := d.Capabilities.Text[key]; !ok {
				t.Errorf("%s has a fallback for %q, which is not one of its texts", d.ID, key)
			}
			if !slices.Contains([]string{platform.FromTitle, platform.FromCaption, platform.FromCaptionOrTitle, platform.FromTitleOrDerived}, from) {
				t.Errorf("%s.%s falls back on %q", d.ID, key, from)
			}
		}
		for _, key := range d.OwnTexts {
			if _, ok := d.Capabilities.Text[key]; !ok {
				t.Errorf("%s handles the text %q itself, which is not one of its texts", d.ID, key)
			}
		}
	}
}
