// Package conform decides what each destination's video needs for its platform to accept
// it. It compares what the probe read of the file (media.Info) with the platform's media rules
// (platform.Capabilities) and chooses the least change that makes the file fit: nothing, a
// remux (new packaging, same streams), or a re-encode of the picture, the sound or both. What
// no conversion mends (a video too long is never trimmed), and a change of aspect ratio the
// post did not allow, are refused, naming the rule.
//
// It only decides; render.Renderer.Convert carries a Plan's Conversion out.
package conform

import (
	"fmt"
	"math"
	"slices"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/render"
)

// Transcode choices: whether reelay may convert a video at all.
const (
	// TranscodeAuto converts what does not fit (the default).
	TranscodeAuto = "auto"
	// TranscodeOff never converts: a video that does not fit is refused, as it is.
	TranscodeOff = "off"
)

// TranscodeChoices are the values transcode takes.
var TranscodeChoices = []string{TranscodeAuto, TranscodeOff}

// Options are what a post says of conversion for one destination.
type Options struct {
	// Fit is one of platform.FitChoices ("" is platform.FitRefuse).
	Fit string
	// Transcode is one of TranscodeChoices ("" is TranscodeAuto).
	Transcode string
}

// Actions of a Plan, from the cheapest.
const (
	// ActionNone: the file goes as it is.
	ActionNone = "none"
	// ActionRemux: the streams are copied into a new MP4.
	ActionRemux = "remux"
	// ActionReencode: the picture or the sound (or both) are encoded again.
	ActionReencode = "reencode"
)

// Plan is what one destination's video needs.
type Plan struct {
	// Action is ActionNone, ActionRemux or ActionReencode.
	Action string `json:"action"`
	// Conversion makes the rendition (zero for ActionNone). Destinations whose plans have the
	// same Conversion of the same file share one rendition.
	Conversion render.Conversion `json:"conversion"`
	// Changes say, for people, what the conversion changes: "re-encoded the picture as
	// H.264 at 60 fps".
	Changes []string `json:"changes"`
	// Reasons are the platform's rules that the file breaks, each as "is 120 fps; Instagram
	// accepts 23–60 fps".
	Reasons []string `json:"reasons"`
}

// Converts reports whether the plan makes a rendition.
func (p Plan) Converts() bool { return p.Action != ActionNone }

// Encoding choices that decide the budget of a size limit. They match what render.Convert
// writes: 128 kbit/s AAC, and an MP4's own bytes, well under 2% of a short video's.
const (
	audioBitrate = 128_000
	// sizeMargin is the share of a size limit a re-encode aims at, leaving room for the
	// container and for the encoder missing its target by a little.
	sizeMargin = 0.92
	// minVideoBitrate is the least bitrate a re-encode to fit a size may take: under it a
	// short vertical video is a smear, and refusing says more than sending that.
	minVideoBitrate = 150_000
	// crfCeiling is a bitrate that H.264 at render's constant quality stays under for 1080p
	// video: a re-encode whose size budget leaves more than this needs no cap, so that
	// platforms with different (generous) limits share one rendition.
	crfCeiling = 12_000_000
	// maxSide is the longest side of a reframed picture: 1080x1920, the size vertical
	// platforms show.
	maxSide = 1920
)

// Decide plans one destination: the platform d, a video of size bytes as probed, and what the
// post says (o). refusals lists, as Check's messages do, what no plan mends; when it is not
// empty the plan is not to be carried out.
func Decide(d platform.Description, size int64, info media.Info, o Options) (plan Plan, refusals []string) {
	caps := d.Capabilities
	broken := check(d.Name, caps, size, info)
	plan = Plan{Action: ActionNone, Changes: []string{}, Reasons: []string{}}
	if o.Transcode == TranscodeOff {
		for _, v := range broken {
			refusals = append(refusals, v.msg)
		}
		return plan, refusals
	}
	fixes := map[fix]bool{}
	for _, v := range broken {
		switch {
		case v.fix == fixNone:
			refusals = append(refusals, v.msg)
		case v.fix == fixFrame && (o.Fit == "" || o.Fit == platform.FitRefuse):
			refusals = append(refusals, v.msg+`; set "fit" to "pad" or "crop" to have reelay reframe it`)
		default:
			fixes[v.fix] = true
			plan.Reasons = append(plan.Reasons, v.msg)
		}
	}
	if len(refusals) > 0 || len(fixes) == 0 {
		return plan, refusals
	}

	c := &plan.Conversion
	if fixes[fixFrame] || fixes[fixVideo] {
		c.Video = true
		frameRate(c, caps, info)
		if fixes[fixFrame] {
			reframe(c, caps, info, o.Fit)
		}
		resize(c, caps, info)
		if msg := budget(c, d.Name, caps, size, info); msg != "" {
			refusals = append(refusals, msg)
		}
	}
	if info.AudioCodec != "" && (fixes[fixAudio] || (c.Video && info.Kind == media.KindWebM)) {
		// WebM's sound (Opus, Vorbis) has no place in the MP4 a re-encode of its picture writes.
		c.Audio = true
		if m := caps.MaxAudioSampleRate; m > 0 && info.AudioSampleRate > m {
			c.AudioSampleRate = min(m, 48000)
		}
		if m := caps.MaxAudioChannels; m > 0 && info.AudioChannels > m {
			c.AudioChannels = m
		}
	}
	if c.Video || c.Audio {
		plan.Action = ActionReencode
	} else {
		plan.Action = ActionRemux
	}
	plan.Changes = changes(*c, broken, d.Name, caps)
	return plan, refusals
}

// frameRate brings a re-encode's frame rate into the platform's range.
func frameRate(c *render.Conversion, caps platform.Capabilities, info media.Info) {
	switch fps := info.FrameRate; {
	case fps <= 0:
	case caps.MaxFrameRate > 0 && fps > caps.MaxFrameRate+frameRateSlack:
		c.FrameRate = caps.MaxFrameRate
	case caps.MinFrameRate > 0 && fps < caps.MinFrameRate-frameRateSlack:
		c.FrameRate = caps.MinFrameRate
	}
}

// reframe gives a re-encode the platform's nearest aspect ratio, padding or cropping (fit).
func reframe(c *render.Conversion, caps platform.Capabilities, info media.Info, fit string) {
	src := float64(info.Width) / float64(info.Height)
	target := src
	if len(caps.AspectRatios) > 0 {
		best := math.Inf(1)
		for _, a := range caps.AspectRatios {
			if r, ok := parseRatio(a); ok && math.Abs(math.Log(r/src)) < best {
				best, target = math.Abs(math.Log(r/src)), r
			}
		}
	}
	if caps.MinAspectRatio > 0 && target < caps.MinAspectRatio {
		target = caps.MinAspectRatio
	}
	if caps.MaxAspectRatio > 0 && target > caps.MaxAspectRatio {
		target = caps.MaxAspectRatio
	}
	// The frame holds the whole picture (pad) or lies inside it (crop), at the picture's scale.
	w, h := float64(info.Width), float64(info.Height)
	if (fit == platform.FitPad) == (target < src) {
		h = w / target
	} else {
		w = h * target
	}
	side := float64(maxSide)
	if caps.MaxWidth > 0 && target >= 1 {
		side = min(side, float64(caps.MaxWidth))
	}
	if scale := side / max(w, h); scale < 1 {
		w, h = w*scale, h*scale
	}
	if caps.MaxWidth > 0 && w > float64(caps.MaxWidth) {
		w, h = float64(caps.MaxWidth), h*float64(caps.MaxWidth)/w
	}
	c.Width, c.Height, c.Fit = even(w), even(h), fit
}

// resize scales a re-encode's frame, keeping its ratio, into the platform's smallest and
// largest sizes: up when it is too small (the platform would refuse it), down when too large.
func resize(c *render.Conversion, caps platform.Capabilities, info media.Info) {
	w, h := float64(c.Width), float64(c.Height)
	if w == 0 || h == 0 {
		w, h = float64(info.Width), float64(info.Height)
	}
	if w <= 0 || h <= 0 {
		return
	}
	scale := 1.0
	for _, r := range []struct {
		limit int
		side  float64
	}{{caps.MinWidth, w}, {caps.MinHeight, h}} {
		if r.limit > 0 && r.side < float64(r.limit) {
			scale = max(scale, float64(r.limit)/r.side)
		}
	}
	for _, r := range []struct {
		limit int
		side  float64
	}{{caps.MaxWidth, w}, {caps.MaxHeight, h}} {
		if r.limit > 0 && r.side*scale > float64(r.limit) {
			scale = float64(r.limit) / r.side
		}
	}
	if scale != 1 || c.Width > 0 {
		// Rounding up to even keeps a frame scaled up to a minimum at the minimum at least.
		c.Width, c.Height = evenUp(w*scale), evenUp(h*scale)
		if caps.MaxWidth > 0 && c.Width > caps.MaxWidth {
			c.Width = caps.MaxWidth &^ 1
		}
		if caps.MaxHeight > 0 && c.Height > caps.MaxHeight {
			c.Height = caps.MaxHeight &^ 1
		}
	}
}

// evenUp rounds a pixel count up to an even number.
func evenUp(x float64) int {
	return max(2, 2*int(math.Ceil(x/2-1e-9)))
}

// even rounds a pixel count to an even number (H.264's 4:2:0 needs it), at least 2.
func even(x float64) int {
	return max(2, 2*int(math.Round(x/2)))
}

// budget makes a re-encode fit the platform's size and bitrate limits: two passes at a set
// bitrate when the file is over them, a cap on constant quality when a re-encode for another
// reason could grow past them. It refuses a video too long to fit at a watchable bitrate.
func budget(c *render.Conversion, display string, caps platform.Capabilities, size int64, info media.Info) string {
	secs := info.Duration.Seconds()
	limit := math.Inf(1)
	if caps.MaxVideoBytes > 0 && secs > 0 {
		limit = float64(caps.MaxVideoBytes) * 8 * sizeMargin / secs
	}
	if caps.MaxVideoBitrate > 0 {
		limit = min(limit, float64(caps.MaxVideoBitrate)*sizeMargin)
	}
	if math.IsInf(limit, 1) {
		return ""
	}
	if info.AudioCodec != "" {
		limit -= audioBitrate
	}
	over := (caps.MaxVideoBytes > 0 && size > caps.MaxVideoBytes) ||
		(caps.MaxVideoBitrate > 0 && secs > 0 && float64(size)*8/secs > float64(caps.MaxVideoBitrate))
	switch {
	case over && secs <= 0:
		return fmt.Sprintf("is %s and its length is unknown, so reelay cannot choose a bitrate that fits %s's %s", HumanBytes(size), display, HumanBytes(caps.MaxVideoBytes))
	case limit < minVideoBitrate:
		return fmt.Sprintf("is %s long: to fit %s's %s it would have to drop under %s, too little to watch", seconds(secs), display, HumanBytes(caps.MaxVideoBytes), bitrate(minVideoBitrate))
	case over:
		c.VideoBitrate = roundBitrate(limit)
	case limit < crfCeiling:
		c.MaxVideoBitrate = roundBitrate(limit)
	}
	return ""
}

// roundBitrate rounds down to whole kbit/s, so that equal limits give equal Conversions.
func roundBitrate(bps float64) int64 { return int64(bps/1000) * 1000 }

// changes says, for people, what c changes and why it was needed.
func changes(c render.Conversion, broken []violation, display string, caps platform.Capabilities) []string {
	var out []string
	rules := map[string]bool{}
	for _, v := range broken {
		rules[v.rule] = true
	}
	if c.Video {
		s := "re-encoded the picture as H.264"
		if c.FrameRate > 0 {
			s += " at " + rate(c.FrameRate) + " fps"
		}
		if c.Width > 0 {
			s += fmt.Sprintf(", %dx%d", c.Width, c.Height)
		}
		switch c.Fit {
		case render.FitPad:
			s += " with black bars to fit " + display + "'s frame"
		case render.FitCrop:
			s += " cropped to " + display + "'s frame"
		}
		if c.VideoBitrate > 0 {
			s += " at " + bitrate(float64(c.VideoBitrate))
			if caps.MaxVideoBytes > 0 && rules["max_video_bytes"] {
				s += " to fit " + display + "'s " + HumanBytes(caps.MaxVideoBytes)
			}
		}
		out = append(out, s)
	} else if rules["video_formats"] {
		out = append(out, "rewrapped the video as MP4")
	}
	if c.Audio {
		s := "re-encoded the sound as AAC"
		if c.AudioSampleRate > 0 {
			s += " at " + kHz(c.AudioSampleRate) + " kHz"
		}
		if c.AudioChannels > 0 {
			s += fmt.Sprintf(" in %d channels", c.AudioChannels)
		}
		out = append(out, s)
	}
	if rules["moov_first"] {
		out = append(out, "moved the moov box to the front of the file")
	}
	if rules["no_edit_lists"] {
		out = append(out, "removed the edit list")
	}
	return slices.Clip(out)
}

// Check lists, as messages naming the platform, every rule of d that a video of size bytes
// breaks: what a publish with transcode off refuses.
func Check(d platform.Description, size int64, info media.Info) []string {
	var out []string
	for _, v := range check(d.Name, d.Capabilities, size, info) {
		out = append(out, v.msg)
	}
	return out
}
