package conform

import (
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/registry"
)

// TestCheckVideoMediaRules: each media rule of a description refuses the video that breaks it,
// naming the platform and the rule, and lets through what keeps it (issue 31, item 8).
func TestCheckVideoMediaRules(t *testing.T) {
	t.Parallel()
	// A Reel that every platform below accepts: 1080x1920 MP4, 10 s, H.264 at 30 fps, stereo
	// AAC at 48 kHz, moov first, no edit list.
	good := media.Info{Kind: media.KindMP4, Duration: 10 * time.Second, Width: 1080, Height: 1920,
		VideoCodec: "h264", AudioCodec: "aac", AudioChannels: 2, AudioSampleRate: 48000, FrameRate: 30, MaxFrameRate: 30}
	with := func(f func(i *media.Info)) media.Info { i := good; f(&i); return i }
	cases := []struct {
		name, platform string
		info           media.Info
		want           string // "" when the video passes
	}{
		{"a good Reel on Instagram", "instagram", good, ""},
		{"a good Reel on Facebook", "facebook", good, ""},
		{"a good Reel on TikTok", "tiktok", good, ""},
		{"a good Reel on Threads", "threads", good, ""},
		{"29.97 fps on Instagram", "instagram", with(func(i *media.Info) { i.FrameRate = 29.97 }), ""},
		{"23.976 fps on Instagram", "instagram", with(func(i *media.Info) { i.FrameRate = 23.976 }), ""},
		{"60 fps read a hair over on TikTok", "tiktok", with(func(i *media.Info) { i.FrameRate = 60.004 }), ""},
		{"120 fps on Instagram", "instagram", with(func(i *media.Info) { i.FrameRate = 120 }), "is 120 fps; Instagram accepts 23–60 fps"},
		{"23.976 fps on Facebook", "facebook", with(func(i *media.Info) { i.FrameRate = 23.976 }), "is 23.976 fps; Facebook accepts 24–60 fps"},
		{"15 fps on TikTok", "tiktok", with(func(i *media.Info) { i.FrameRate = 15 }), "is 15 fps; TikTok accepts 23–60 fps"},
		{"120 fps on Mastodon", "mastodon", with(func(i *media.Info) { i.FrameRate = 120 }), ""},
		{"240 fps on Mastodon", "mastodon", with(func(i *media.Info) { i.FrameRate = 240 }), "is 240 fps; Mastodon accepts at most 120 fps"},
		{"120 fps on YouTube, which sets no rule", "youtube", with(func(i *media.Info) { i.FrameRate = 120 }), ""},
		{"moov last on Instagram", "instagram", with(func(i *media.Info) { i.MoovAfterMdat = true }), "moov box (the metadata) after the media data; Instagram needs it at the front"},
		{"moov last on TikTok, which sets no rule", "tiktok", with(func(i *media.Info) { i.MoovAfterMdat = true }), ""},
		{"an edit list on Threads", "threads", with(func(i *media.Info) { i.EditList = true }), "carries an edit list; Threads accepts no edit lists"},
		{"Opus sound on Instagram", "instagram", with(func(i *media.Info) { i.AudioCodec = "opus" }), "has OPUS sound; Instagram accepts AAC sound only"},
		{"no sound on Instagram", "instagram", with(func(i *media.Info) { i.AudioCodec, i.AudioChannels, i.AudioSampleRate = "", 0, 0 }), ""},
		{"96 kHz on Instagram", "instagram", with(func(i *media.Info) { i.AudioSampleRate = 96000 }), "sampled at 96 kHz; Instagram accepts at most 48 kHz"},
		{"44.1 kHz on Instagram", "instagram", with(func(i *media.Info) { i.AudioSampleRate = 44100 }), ""},
		{"5.1 sound on Instagram", "instagram", with(func(i *media.Info) { i.AudioChannels = 6 }), "has 6 sound channels; Instagram accepts at most 2"},
		{"96 kHz on Facebook, which sets no rule", "facebook", with(func(i *media.Info) { i.AudioSampleRate = 96000 }), ""},
	}
	for _, c := range cases {
		d, _ := registry.Describe(c.platform)
		got := strings.Join(Check(d, 10<<20, c.info), "; ")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: refused: %s", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: %q, want it to say %q", c.name, got, c.want)
		}
	}
}
