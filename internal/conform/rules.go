package conform

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
)

// A fix is the least change of the file that mends a broken rule.
type fix int

const (
	// fixNone: no conversion mends it (a video too long is never trimmed); the publish is
	// refused.
	fixNone fix = iota
	// fixRemux: the streams are fine, their packaging is not (MOV, moov last, an edit list).
	fixRemux
	// fixAudio: the sound is re-encoded.
	fixAudio
	// fixVideo: the picture is re-encoded (codec, frame rate, size, bitrate).
	fixVideo
	// fixFrame: the picture must take another aspect ratio, which only the post may allow
	// (fit: pad or crop).
	fixFrame
)

// violation is a rule of a platform that a video breaks.
type violation struct {
	// rule is the rule's JSON name in Capabilities ("max_frame_rate").
	rule string
	// msg says what the video is and what the platform accepts, without the field's name:
	// "is 120 fps; Instagram accepts 23–60 fps".
	msg string
	fix fix
}

// frameRateSlack absorbs rounding: a 60 fps video whose timing is stored in units that do
// not divide evenly must not read as over 60.
const frameRateSlack = 0.01

// check lists the rules of caps that a video of size bytes, as probed, breaks. display is the
// platform's name as people write it.
func check(display string, caps platform.Capabilities, size int64, info media.Info) []violation {
	var out []violation
	add := func(rule string, f fix, format string, args ...any) {
		out = append(out, violation{rule: rule, fix: f, msg: fmt.Sprintf(format, args...)})
	}
	if len(caps.VideoFormats) > 0 && !slices.Contains(caps.VideoFormats, info.Kind.Name) {
		f := fixRemux
		if info.Kind == media.KindWebM || !slices.Contains(caps.VideoFormats, platform.FormatMP4) {
			// WebM's codecs (VP8, VP9, AV1, Opus, Vorbis) are not what platforms taking MP4
			// accept in it: the streams themselves change.
			f = fixVideo
		}
		add("video_formats", f, "%s accepts %s video, not %s", display, strings.ToUpper(strings.Join(caps.VideoFormats, "/")), strings.ToUpper(info.Kind.Name))
	}
	if len(caps.VideoCodecs) > 0 && info.VideoCodec != "" && !slices.Contains(caps.VideoCodecs, info.VideoCodec) {
		add("video_codecs", fixVideo, "is %s video; %s accepts %s only", codecName(info.VideoCodec), display, strings.Join(mapStrings(caps.VideoCodecs, codecName), "/"))
	}
	if caps.MinVideoBytes > 0 && size < caps.MinVideoBytes {
		add("min_video_bytes", fixNone, "is %s; %s needs at least %s", HumanBytes(size), display, HumanBytes(caps.MinVideoBytes))
	}
	if caps.MaxVideoBytes > 0 && size > caps.MaxVideoBytes {
		add("max_video_bytes", fixVideo, "is %s; %s accepts at most %s", HumanBytes(size), display, HumanBytes(caps.MaxVideoBytes))
	}
	if secs := info.Duration.Seconds(); info.Duration > 0 {
		if caps.MaxDurationSeconds > 0 && secs > caps.MaxDurationSeconds {
			add("max_duration_seconds", fixNone, "is %s long; %s accepts at most %s", seconds(secs), display, seconds(caps.MaxDurationSeconds))
		}
		if caps.MinDurationSeconds > 0 && secs < caps.MinDurationSeconds {
			add("min_duration_seconds", fixNone, "is %s long; %s needs at least %s", seconds(secs), display, seconds(caps.MinDurationSeconds))
		}
		if caps.MaxVideoBitrate > 0 && float64(size)*8/secs > float64(caps.MaxVideoBitrate)*1.01 {
			add("max_video_bitrate", fixVideo, "runs at %s; %s accepts at most %s", bitrate(float64(size)*8/secs), display, bitrate(float64(caps.MaxVideoBitrate)))
		}
	}
	if info.Width > 0 && info.Height > 0 {
		ratio := float64(info.Width) / float64(info.Height)
		if len(caps.AspectRatios) > 0 && !matchesRatio(ratio, caps.AspectRatios) {
			add("aspect_ratios", fixFrame, "is %dx%d; %s accepts aspect ratios %s", info.Width, info.Height, display, strings.Join(caps.AspectRatios, ", "))
		}
		if caps.MinAspectRatio > 0 && ratio < caps.MinAspectRatio-0.01 {
			add("min_aspect_ratio", fixFrame, "is %dx%d (aspect %.2f); %s needs at least %.2f", info.Width, info.Height, ratio, display, caps.MinAspectRatio)
		}
		if caps.MaxAspectRatio > 0 && ratio > caps.MaxAspectRatio+0.01 {
			add("max_aspect_ratio", fixFrame, "is %dx%d (aspect %.2f); %s accepts at most %.2f", info.Width, info.Height, ratio, display, caps.MaxAspectRatio)
		}
		if caps.MaxWidth > 0 && info.Width > caps.MaxWidth {
			add("max_width", fixVideo, "is %d pixels wide; %s accepts at most %d", info.Width, display, caps.MaxWidth)
		}
		if caps.MaxHeight > 0 && info.Height > caps.MaxHeight {
			add("max_height", fixVideo, "is %d pixels high; %s accepts at most %d", info.Height, display, caps.MaxHeight)
		}
		if caps.MinWidth > 0 && info.Width < caps.MinWidth {
			add("min_width", fixVideo, "is %d pixels wide; %s needs at least %d", info.Width, display, caps.MinWidth)
		}
		if caps.MinHeight > 0 && info.Height < caps.MinHeight {
			add("min_height", fixVideo, "is %d pixels high; %s needs at least %d", info.Height, display, caps.MinHeight)
		}
	}
	if fps := info.FrameRate; fps > 0 {
		switch {
		case caps.MinFrameRate > 0 && caps.MaxFrameRate > 0 && fps < caps.MinFrameRate-frameRateSlack:
			add("min_frame_rate", fixVideo, "is %s fps; %s accepts %s–%s fps", rate(fps), display, rate(caps.MinFrameRate), rate(caps.MaxFrameRate))
		case caps.MinFrameRate > 0 && caps.MaxFrameRate > 0 && fps > caps.MaxFrameRate+frameRateSlack:
			add("max_frame_rate", fixVideo, "is %s fps; %s accepts %s–%s fps", rate(fps), display, rate(caps.MinFrameRate), rate(caps.MaxFrameRate))
		case caps.MinFrameRate > 0 && caps.MaxFrameRate == 0 && fps < caps.MinFrameRate-frameRateSlack:
			add("min_frame_rate", fixVideo, "is %s fps; %s needs at least %s fps", rate(fps), display, rate(caps.MinFrameRate))
		case caps.MaxFrameRate > 0 && caps.MinFrameRate == 0 && fps > caps.MaxFrameRate+frameRateSlack:
			add("max_frame_rate", fixVideo, "is %s fps; %s accepts at most %s fps", rate(fps), display, rate(caps.MaxFrameRate))
		}
	}
	if info.Kind == media.KindMP4 || info.Kind == media.KindMOV {
		if caps.MoovFirst && info.MoovAfterMdat {
			add("moov_first", fixRemux, "has its moov box (the metadata) after the media data; %s needs it at the front of the file (a \"fast start\" file)", display)
		}
		if caps.NoEditLists && info.EditList {
			add("no_edit_lists", fixRemux, "carries an edit list; %s accepts no edit lists", display)
		}
	}
	if info.AudioCodec == "" {
		return out
	}
	if len(caps.AudioCodecs) > 0 && !slices.Contains(caps.AudioCodecs, info.AudioCodec) {
		add("audio_codecs", fixAudio, "has %s sound; %s accepts %s sound only", strings.ToUpper(info.AudioCodec), display, strings.ToUpper(strings.Join(caps.AudioCodecs, "/")))
	}
	if caps.MaxAudioSampleRate > 0 && info.AudioSampleRate > caps.MaxAudioSampleRate {
		add("max_audio_sample_rate", fixAudio, "has sound sampled at %s kHz; %s accepts at most %s kHz", kHz(info.AudioSampleRate), display, kHz(caps.MaxAudioSampleRate))
	}
	if caps.MaxAudioChannels > 0 && info.AudioChannels > caps.MaxAudioChannels {
		add("max_audio_channels", fixAudio, "has %d sound channels; %s accepts at most %d", info.AudioChannels, display, caps.MaxAudioChannels)
	}
	return out
}

// codecNames are how people write the codecs media.Info names.
var codecNames = map[string]string{"h264": "H.264", "hevc": "HEVC (H.265)", "vp8": "VP8", "vp9": "VP9", "av1": "AV1",
	"mpeg4": "MPEG-4 Part 2", "prores": "ProRes", "mjpeg": "Motion JPEG", "h263": "H.263"}

func codecName(c string) string {
	if n, ok := codecNames[c]; ok {
		return n
	}
	return strings.ToUpper(c)
}

func mapStrings(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// matchesRatio reports whether ratio is one of "W:H" within 1%.
func matchesRatio(ratio float64, allowed []string) bool {
	for _, a := range allowed {
		if r, ok := parseRatio(a); ok && math.Abs(ratio-r) <= 0.01*r {
			return true
		}
	}
	return false
}

// parseRatio reads "W:H" as W/H.
func parseRatio(s string) (float64, bool) {
	w, h, ok := strings.Cut(s, ":")
	if !ok {
		return 0, false
	}
	wf, err1 := strconv.ParseFloat(w, 64)
	hf, err2 := strconv.ParseFloat(h, 64)
	if err1 != nil || err2 != nil || wf <= 0 || hf <= 0 {
		return 0, false
	}
	return wf / hf, true
}

// rate formats a frame rate without trailing zeros: 30, 29.97, 23.976.
func rate(fps float64) string {
	return strconv.FormatFloat(math.Round(fps*1000)/1000, 'f', -1, 64)
}

func kHz(hz int) string {
	return strconv.FormatFloat(float64(hz)/1000, 'f', -1, 64)
}

func bitrate(bps float64) string {
	if bps >= 1e6 {
		return strconv.FormatFloat(math.Round(bps/1e5)/10, 'f', -1, 64) + " Mbit/s"
	}
	return strconv.FormatFloat(math.Round(bps/1e3), 'f', -1, 64) + " kbit/s"
}

func seconds(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.4g minutes", s/60)
	}
	return fmt.Sprintf("%.4g seconds", s)
}

// HumanBytes writes a size in binary units, as people read file sizes: "9.5 MB".
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.4g GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.4g MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.4g KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
