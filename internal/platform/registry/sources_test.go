package registry

import (
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform"
)

// mediaRules are the JSON names of the Capabilities fields that say what video a platform
// accepts: the rules a Sources entry must back. Text limits, analytics and the like are left
// out because they are not media rules, and a new media rule is added here with its field.
var mediaRules = []string{
	"max_video_bytes", "min_video_bytes", "min_duration_seconds", "max_duration_seconds",
	"video_formats", "aspect_ratios", "min_aspect_ratio", "max_aspect_ratio",
	"max_width", "max_height", "min_width", "min_height", "video_codecs", "max_video_bitrate",
	"min_frame_rate", "max_frame_rate", "moov_first", "no_edit_lists",
	"audio_codecs", "max_audio_sample_rate", "max_audio_channels",
}

// unsourced lists, per platform, the media rules reelay keeps although no page of the
// platform's own documentation was found to state them (see the comments beside the values).
// They must stay set and without a source: once a page is found, the rule gets its source and
// leaves this list, and a rule dropped from a description must leave it too.
var unsourced = map[string][]string{
	platform.YouTube:  {"max_duration_seconds"},
	platform.TikTok:   {"min_duration_seconds"},
	platform.LinkedIn: {"min_aspect_ratio", "max_aspect_ratio"},
	platform.Facebook: {"max_video_bytes"},
	platform.Bluesky:  {"max_duration_seconds"},
	platform.Discord:  {"video_formats"},
	platform.Reddit:   {"max_video_bytes", "max_duration_seconds", "video_formats"},
}

// setMediaRules returns the JSON names of the media rules c sets (a non-zero value), found by
// reflection so that a rule cannot be set without the test seeing it.
func setMediaRules(t *testing.T, c platform.Capabilities) []string {
	t.Helper()
	v := reflect.ValueOf(c)
	known := map[string]bool{}
	var set []string
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		known[name] = true
		if !slices.Contains(mediaRules, name) {
			continue
		}
		f := v.Field(i)
		if f.Kind() == reflect.Slice && f.Len() == 0 || f.IsZero() {
			continue
		}
		set = append(set, name)
	}
	// A name in mediaRules that is no field would make the test pass for nothing.
	for _, r := range mediaRules {
		if !known[r] {
			t.Fatalf("mediaRules names %q, which is no Capabilities field", r)
		}
	}
	return set
}

// TestEveryMediaRuleHasASource: every media rule a platform sets names the page of the
// platform's documentation that states it, as an https URL, unless it is listed in unsourced;
// and no source is left for a rule that is not set (a stale one would point users at a limit
// reelay no longer checks).
func TestEveryMediaRuleHasASource(t *testing.T) {
	for _, d := range descriptions {
		t.Run(d.ID, func(t *testing.T) {
			c := d.Capabilities
			set := setMediaRules(t, c)
			if len(set) == 0 {
				t.Fatal("no media rule is set")
			}
			for _, rule := range unsourced[d.ID] {
				if !slices.Contains(set, rule) {
					t.Errorf("%s is listed as unsourced but is not set", rule)
				}
				if _, ok := c.Sources[rule]; ok {
					t.Errorf("%s is listed as unsourced but has a source: take it off the list", rule)
				}
			}
			for _, rule := range set {
				if slices.Contains(unsourced[d.ID], rule) {
					continue
				}
				src, ok := c.Sources[rule]
				if !ok {
					t.Errorf("%s is set but has no source", rule)
					continue
				}
				if u, err := url.Parse(src); err != nil || u.Scheme != "https" || u.Host == "" {
					t.Errorf("source of %s = %q, want an https URL", rule, src)
				}
			}
			for rule := range c.Sources {
				if !slices.Contains(set, rule) {
					t.Errorf("source for %q, which is not a media rule this platform sets", rule)
				}
			}
		})
	}
}

// TestSetMediaRules: the rules found set are the non-empty media rules only, so that the check
// above neither misses a set rule nor asks a source of an empty list or a text limit.
func TestSetMediaRules(t *testing.T) {
	c := platform.Capabilities{
		MaxVideoBytes: 1,
		VideoFormats:  []string{platform.FormatMP4},
		MoovFirst:     true,
		VideoCodecs:   []string{},
		Text:          map[string]platform.TextLimit{"title": {Max: 1}},
	}
	got := setMediaRules(t, c)
	want := []string{"max_video_bytes", "video_formats", "moov_first"}
	if !slices.Equal(got, want) {
		t.Fatalf("set rules = %v, want %v (an empty list and text limits are not rules)", got, want)
	}
}
