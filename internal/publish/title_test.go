package publish

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/bluesky"
	"github.com/reelay/reelay/internal/platform/youtube"
	"github.com/reelay/reelay/internal/store"
)

func TestDerivedTitle(t *testing.T) {
	t.Parallel()
	words := strings.Repeat("sunrise ", 15) // 120 characters of 7-letter words
	cases := []struct {
		name                        string
		caption, fileName, videoURL string
		want, from                  string
	}{
		{"caption", "hi", "", "https://cdn.example/v.mp4", "hi", FromCaptionFirstLine},
		{"first line that is not blank, hashtags kept", "\n  \nMorning run #run #sunrise\nsecond line", "clip.mp4", "",
			"Morning run #run #sunrise", FromCaptionFirstLine},
		{"cut at the last space that fits", words, "", "", strings.TrimSpace(words[:96]), FromCaptionFirstLine},
		{"a word ending at 100 is kept whole", strings.Repeat("x", 100) + " more", "", "", strings.Repeat("x", 100), FromCaptionFirstLine},
		{"one word longer than 100 is cut at 100", strings.Repeat("é", 150), "", "", strings.Repeat("é", 100), FromCaptionFirstLine},
		{"characters YouTube refuses are dropped", "a <3 b > c", "", "", "a 3 b c", FromCaptionFirstLine},
		{"tabs and runs of spaces made single", "a\t\tb    c", "", "", "a b c", FromCaptionFirstLine},
		{"a caption of refused characters gives none", "<>", "clip.mp4", "", "clip", FromVideoFileName},
		{"file name without directory or extension", "", `C:\Users\me\My Clip.final.MP4`, "", "My Clip.final", FromVideoFileName},
		{"file name of only an extension gives none", "", ".mp4", "https://cdn.example/a/Sunrise%20%23run.mp4?sig=1#t",
			"Sunrise #run", FromVideoURL},
		{"video_url's last segment", "", "", "https://cdn.example/videos/launch-day.webm", "launch-day", FromVideoURL},
		{"video_url ending in /", "", "", "https://cdn.example/videos/", "", ""},
		{"nothing at all", "  \n ", "", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Request{Caption: c.caption, VideoFileName: c.fileName, VideoURL: c.videoURL}
			got, from := r.derivedTitle()
			if got != c.want || from != c.from {
				t.Errorf("derived %q from %q, want %q from %q", got, from, c.want, c.from)
			}
			if does, _, _ := youtube.Description.TextExcess("title", got); does != "" {
				t.Errorf("YouTube would refuse %q: %s", got, does)
			}
		})
	}
}

// TestDerivedTitleFits: whatever the caption, the derived title is one YouTube takes, a prefix
// of the caption's first line (once refused characters are dropped), never splitting a
// character.
func TestDerivedTitleFits(t *testing.T) {
	t.Parallel()
	for _, caption := range []string{
		strings.Repeat("👩‍👩‍👧 ", 40),
		strings.Repeat("a", 99) + "👩‍👩‍👧",
		strings.Repeat("<b>bold</b> ", 20),
		strings.Repeat("日本語のテキスト", 30),
		strings.Repeat("#tag ", 40),
		"ok\xffbad " + strings.Repeat("w ", 80),
	} {
		r := Request{Caption: caption}
		got, from := r.derivedTitle()
		if got == "" || from != FromCaptionFirstLine || !utf8.ValidString(got) {
			t.Errorf("caption %q: derived %q from %q", caption, got, from)
			continue
		}
		if does, _, _ := youtube.Description.TextExcess("title", got); does != "" {
			t.Errorf("caption %q: YouTube would refuse %q: %s", caption, got, does)
		}
		clean := strings.NewReplacer("<", "", ">", "", "\xff", "").Replace(caption)
		if !strings.HasPrefix(clean, got) {
			t.Errorf("caption %q: %q is not a prefix of it", caption, got)
		}
	}
}

// TestDerivedTexts: the answers name each text reelay filled in, and where it came from.
func TestDerivedTexts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		req      Request
		platform string
		want     Derived
	}{
		{"youtube without a title", Request{Caption: "hi\nmore"}, "youtube",
			Derived{"title": FromCaptionFirstLine, "description": FromCaption}},
		{"youtube with a title", Request{Title: "T", Caption: "C"}, "youtube", Derived{"title": FromTitle, "description": FromCaption}},
		{"youtube's own title", Request{Caption: "C", PlatformObjects: PlatformObjects{YouTube: &youtube.Options{Title: "Own"}}}, "youtube",
			Derived{"description": FromCaption}},
		{"youtube from the file name", Request{VideoFileName: "clip.mp4"}, "youtube", Derived{"title": FromVideoFileName}},
		{"instagram from the title", Request{Title: "T"}, "instagram", Derived{"caption": FromTitle}},
		{"mastodon from the caption", Request{Caption: "C"}, "mastodon", Derived{"text": FromCaption}},
		{"bluesky's own text", Request{Caption: "C", PlatformObjects: PlatformObjects{Bluesky: &bluesky.Options{Text: "own"}}}, "bluesky",
			Derived{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.ProjectID, c.req.VideoURL = projectID, "https://cdn.example/v.mp4"
			var f apierr.Fields
			_, got := c.req.EffectiveOptions(c.platform, &f)
			if len(f) != 0 {
				t.Fatalf("refused: %v", f)
			}
			if len(got) != len(c.want) {
				t.Fatalf("derived %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("derived %v, want %v", got, c.want)
				}
			}
		})
	}
}

// TestEditDerivesTheSameTitle: an edit of a scheduled post that gave no title derives
// YouTube's again from the same sources, the uploaded file's name included, which the post
// keeps with its request.
func TestEditDerivesTheSameTitle(t *testing.T) {
	t.Parallel()
	req := Request{ProjectID: projectID, VideoFileName: "Harbour at dawn.mov", ScheduledFor: "2026-11-22T09:00:00Z"}
	var f apierr.Fields
	opts, derived := req.EffectiveOptions("youtube", &f)
	raw, err := req.stored(map[string]Derived{"youtube": derived})
	if err != nil || len(f) != 0 {
		t.Fatal(err, f)
	}
	p := store.Post{Request: raw, Destinations: []store.Destination{{Platform: "youtube", Options: opts}}}
	title := func() string {
		var o youtube.Options
		json.Unmarshal(p.Destinations[0].Options, &o)
		return o.Title
	}
	if title() != "Harbour at dawn" || DerivedTexts(p)["youtube"]["title"] != FromVideoFileName {
		t.Fatalf("published: title %q, derived %v", title(), DerivedTexts(p))
	}

	// Moved to another time: the same title.
	edited, err := loadRequest(p.Request)
	if err != nil {
		t.Fatal(err)
	}
	edited.ScheduledFor = "2026-11-23T09:00:00Z"
	if err := Edit(&edited, &p, fittingVideo, testNow); err != nil {
		t.Fatal(err)
	}
	if title() != "Harbour at dawn" || DerivedTexts(p)["youtube"]["title"] != FromVideoFileName {
		t.Errorf("after moving it: title %q, derived %v", title(), DerivedTexts(p))
	}

	// Given a caption: the title follows it, as publishing would have made it.
	edited, _ = loadRequest(p.Request)
	edited.Caption = "Fog lifting over the harbour\n#dawn"
	if err := Edit(&edited, &p, fittingVideo, testNow); err != nil {
		t.Fatal(err)
	}
	if title() != "Fog lifting over the harbour" || DerivedTexts(p)["youtube"]["title"] != FromCaptionFirstLine {
		t.Errorf("after a caption: title %q, derived %v", title(), DerivedTexts(p))
	}
}

// fittingVideo is a stored video every platform takes as it is.
var fittingVideo = store.Media{Kind: "mp4", Size: 5 << 20, Width: 1080, Height: 1920, Duration: 20 * time.Second,
	VideoCodec: "h264", AudioCodec: "aac", AudioChannels: 2, AudioSampleRate: 44100, FrameRate: 30, MaxFrameRate: 30}
