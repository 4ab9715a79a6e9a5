package conform

import (
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/render"
)

// Platforms with the rules the cases below need, written here so that the cases read on their
// own (the real descriptions' figures are the platforms' and may change).
var (
	reels = platform.Description{ID: "reels", Name: "Reels", Capabilities: platform.Capabilities{
		VideoFormats: []string{"mp4", "mov"}, VideoCodecs: []string{"h264", "hevc"}, MaxVideoBytes: 300 * platform.MB,
		MinDurationSeconds: 3, MaxDurationSeconds: 900, MinFrameRate: 23, MaxFrameRate: 60, MoovFirst: true,
		NoEditLists: true, AudioCodecs: []string{"aac"}, MaxAudioSampleRate: 48000, MaxAudioChannels: 2,
		MinAspectRatio: 0.01, MaxAspectRatio: 10}}
	page = platform.Description{ID: "page", Name: "Page", Capabilities: platform.Capabilities{
		VideoFormats: []string{"mp4"}, VideoCodecs: []string{"h264"}, AspectRatios: []string{"9:16"},
		MinFrameRate: 24, MaxFrameRate: 60, MaxVideoBytes: 1 * platform.GB}}
	bot = platform.Description{ID: "bot", Name: "Bot", Capabilities: platform.Capabilities{
		VideoFormats: []string{"mp4"}, MaxVideoBytes: 50 * platform.MB}}
	small = platform.Description{ID: "small", Name: "Small", Capabilities: platform.Capabilities{
		MinWidth: 360, MinHeight: 360, MaxWidth: 4096, MaxHeight: 4096}}
	hook = platform.Description{ID: "hook", Name: "Hook", Capabilities: platform.Capabilities{
		MaxVideoBytes: 10 * platform.MiB}}
)

// TestDecide: each file gets the least change that makes it fit, what cannot be mended is
// refused naming the rule, and a ratio changes only when the post allows it.
func TestDecide(t *testing.T) {
	t.Parallel()
	// A Reel every platform above takes: 1080x1920 H.264 MP4 at 30 fps, 10 s, stereo AAC at
	// 48 kHz, moov first.
	good := media.Info{Kind: media.KindMP4, Duration: 10 * time.Second, Width: 1080, Height: 1920,
		VideoCodec: "h264", AudioCodec: "aac", AudioChannels: 2, AudioSampleRate: 48000, FrameRate: 30, MaxFrameRate: 30}
	with := func(f func(i *media.Info)) media.Info { i := good; f(&i); return i }
	webm := with(func(i *media.Info) { i.Kind, i.VideoCodec, i.AudioCodec = media.KindWebM, "vp9", "opus" })
	wide := with(func(i *media.Info) { i.Width, i.Height = 1920, 1080 })

	cases := []struct {
		name    string
		d       platform.Description
		size    int64
		info    media.Info
		opts    Options
		action  string
		conv    render.Conversion
		refused string // part of a refusal; "" when none
		change  string // part of a change
	}{
		{name: "a good Reel", d: reels, info: good, action: ActionNone},
		{name: "120 fps", d: reels, info: with(func(i *media.Info) { i.FrameRate = 120 }), action: ActionReencode,
			conv: render.Conversion{Video: true, FrameRate: 60}, change: "H.264 at 60 fps"},
		{name: "15 fps", d: page, info: with(func(i *media.Info) { i.FrameRate = 15 }), action: ActionReencode,
			conv: render.Conversion{Video: true, FrameRate: 24}},
		{name: "moov last", d: reels, info: with(func(i *media.Info) { i.MoovAfterMdat = true }), action: ActionRemux,
			change: "moov box to the front"},
		{name: "an edit list", d: reels, info: with(func(i *media.Info) { i.EditList = true }), action: ActionRemux},
		{name: "MOV where only MP4 goes", d: bot, info: with(func(i *media.Info) { i.Kind = media.KindMOV }), action: ActionRemux,
			change: "rewrapped the video as MP4"},
		{name: "WebM", d: reels, info: webm, action: ActionReencode, conv: render.Conversion{Video: true, Audio: true}},
		{name: "WebM without sound", d: bot, info: with(func(i *media.Info) { i.Kind, i.VideoCodec, i.AudioCodec = media.KindWebM, "vp9", "" }),
			action: ActionReencode, conv: render.Conversion{Video: true}},
		{name: "HEVC where H.264 is wanted", d: page, info: with(func(i *media.Info) { i.VideoCodec = "hevc" }), action: ActionReencode,
			conv: render.Conversion{Video: true}},
		{name: "96 kHz 5.1 sound", d: reels, info: with(func(i *media.Info) { i.AudioSampleRate, i.AudioChannels = 96000, 6 }),
			action: ActionReencode, conv: render.Conversion{Audio: true, AudioSampleRate: 48000, AudioChannels: 2}, change: "AAC at 48 kHz in 2 channels"},
		{name: "30 MB to 10 MiB", d: hook, size: 30 * platform.MB, info: good, action: ActionReencode,
			conv: render.Conversion{Video: true, VideoBitrate: 7_589_000}, change: "to fit Hook's 10 MB"},
		{name: "a re-encode near a size limit is capped", d: bot, info: with(func(i *media.Info) { i.Kind = media.KindWebM; i.VideoCodec = "vp9"; i.Duration = 100 * time.Second }),
			action: ActionReencode, conv: render.Conversion{Video: true, Audio: true, MaxVideoBitrate: 3_552_000}},
		{name: "too long to fit at a watchable bitrate", d: hook, size: 300 * platform.MB, info: with(func(i *media.Info) { i.Duration = 10 * time.Minute }),
			refused: "too little to watch"},
		{name: "16:9 refused by default", d: page, info: wide, refused: `is 1920x1080; Page accepts aspect ratios 9:16; set "fit" to "pad" or "crop"`},
		{name: "16:9 padded", d: page, info: wide, opts: Options{Fit: platform.FitPad}, action: ActionReencode,
			conv: render.Conversion{Video: true, Width: 1080, Height: 1920, Fit: render.FitPad}, change: "black bars"},
		{name: "16:9 cropped", d: page, info: wide, opts: Options{Fit: platform.FitCrop}, action: ActionReencode,
			conv: render.Conversion{Video: true, Width: 608, Height: 1080, Fit: render.FitCrop}, change: "cropped"},
		{name: "a picture under the smallest size is scaled up", d: small, info: with(func(i *media.Info) { i.Width, i.Height = 270, 480 }),
			action: ActionReencode, conv: render.Conversion{Video: true, Width: 360, Height: 640}, change: "360x640"},
		{name: "a picture over the largest size is scaled down", d: small, info: with(func(i *media.Info) { i.Width, i.Height = 2160, 8192 }),
			action: ActionReencode, conv: render.Conversion{Video: true, Width: 1080, Height: 4096}},
		{name: "too long is never trimmed", d: reels, info: with(func(i *media.Info) { i.Duration = 20 * time.Minute }),
			refused: "Reels accepts at most 15 minutes"},
		{name: "too short", d: reels, info: with(func(i *media.Info) { i.Duration = time.Second }), refused: "needs at least 3 seconds"},
		{name: "transcode off refuses what a conversion would mend", d: reels, info: with(func(i *media.Info) { i.FrameRate = 120 }),
			opts: Options{Transcode: TranscodeOff}, refused: "is 120 fps; Reels accepts 23–60 fps"},
		{name: "transcode off lets through what fits", d: reels, info: good, opts: Options{Transcode: TranscodeOff}, action: ActionNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			size := c.size
			if size == 0 {
				size = 10 * platform.MB
			}
			plan, refusals := Decide(c.d, size, c.info, c.opts)
			if c.refused != "" {
				if !strings.Contains(strings.Join(refusals, "; "), c.refused) {
					t.Fatalf("refusals %q, want one saying %q", refusals, c.refused)
				}
				return
			}
			if len(refusals) > 0 {
				t.Fatalf("refused: %q", refusals)
			}
			if plan.Action != c.action || plan.Conversion != c.conv {
				t.Errorf("plan %s %+v, want %s %+v", plan.Action, plan.Conversion, c.action, c.conv)
			}
			if plan.Converts() != (len(plan.Reasons) > 0) {
				t.Errorf("a plan that converts must say why, and one that does not must not: %+v", plan)
			}
			if c.change != "" && !strings.Contains(strings.Join(plan.Changes, "; "), c.change) {
				t.Errorf("changes %q, want one saying %q", plan.Changes, c.change)
			}
		})
	}
}

// TestDecideShares: platforms whose different rules a file breaks the same way get the same
// Conversion, so that one rendition serves them all.
func TestDecideShares(t *testing.T) {
	t.Parallel()
	webm := media.Info{Kind: media.KindWebM, Duration: 10 * time.Second, Width: 1080, Height: 1920,
		VideoCodec: "vp9", AudioCodec: "opus", AudioChannels: 2, AudioSampleRate: 48000, FrameRate: 30}
	var first render.Conversion
	for i, d := range []platform.Description{reels, page, bot} {
		plan, refusals := Decide(d, 5*platform.MB, webm, Options{})
		if len(refusals) > 0 || !plan.Converts() {
			t.Fatalf("%s: plan %+v, refusals %q", d.Name, plan, refusals)
		}
		if i == 0 {
			first = plan.Conversion
		} else if plan.Conversion != first {
			t.Errorf("%s converts with %+v, %s with %+v: two renditions of one file", d.Name, plan.Conversion, reels.Name, first)
		}
	}
}
