package publish

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
)

// CheckVideo checks a probed video against one platform's capabilities: container, size,
// duration, aspect ratio and width. Problems are added to f under field ("video" or
// "video_url"), naming the platform, so that a user learns before anything is sent that,
// say, a 20-minute video is fine for YouTube and too long for TikTok.
func CheckVideo(f *apierr.Fields, field, name string, size int64, info media.Info) {
	caps, ok := registry.CapabilitiesOf(name)
	if !ok {
		return
	}
	display := registry.DisplayName(name)
	if len(caps.VideoFormats) > 0 && !slices.Contains(caps.VideoFormats, info.Kind.Name) {
		f.Addf(field, "%s accepts %s video, not %s", display, strings.ToUpper(strings.Join(caps.VideoFormats, "/")), strings.ToUpper(info.Kind.Name))
	}
	if caps.MinVideoBytes > 0 && size < caps.MinVideoBytes {
		f.Addf(field, "is %s; %s needs at least %s", humanBytes(size), display, humanBytes(caps.MinVideoBytes))
	}
	if caps.MaxVideoBytes > 0 && size > caps.MaxVideoBytes {
		f.Addf(field, "is %s; %s accepts at most %s", humanBytes(size), display, humanBytes(caps.MaxVideoBytes))
	}
	secs := info.Duration.Seconds()
	if info.Duration > 0 {
		if caps.MaxDurationSeconds > 0 && secs > caps.MaxDurationSeconds {
			f.Addf(field, "is %s long; %s accepts at most %s", seconds(secs), display, seconds(caps.MaxDurationSeconds))
		}
		if caps.MinDurationSeconds > 0 && secs < caps.MinDurationSeconds {
			f.Addf(field, "is %s long; %s needs at least %s", seconds(secs), display, seconds(caps.MinDurationSeconds))
		}
	}
	if info.Width > 0 && info.Height > 0 {
		ratio := float64(info.Width) / float64(info.Height)
		if len(caps.AspectRatios) > 0 && !matchesRatio(ratio, caps.AspectRatios) {
			f.Addf(field, "is %dx%d; %s accepts aspect ratios %s", info.Width, info.Height, display, strings.Join(caps.AspectRatios, ", "))
		}
		if caps.MinAspectRatio > 0 && ratio < caps.MinAspectRatio-0.01 {
			f.Addf(field, "is %dx%d (aspect %.2f); %s needs at least %.2f", info.Width, info.Height, ratio, display, caps.MinAspectRatio)
		}
		if caps.MaxAspectRatio > 0 && ratio > caps.MaxAspectRatio+0.01 {
			f.Addf(field, "is %dx%d (aspect %.2f); %s accepts at most %.2f", info.Width, info.Height, ratio, display, caps.MaxAspectRatio)
		}
		if caps.MaxWidth > 0 && info.Width > caps.MaxWidth {
			f.Addf(field, "is %d pixels wide; %s accepts at most %d", info.Width, display, caps.MaxWidth)
		}
	}
	checkMediaRules(f, field, display, caps, info)
}

// frameRateSlack absorbs rounding: a 60 fps video whose timing is stored in units that do
// not divide evenly must not read as over 60.
const frameRateSlack = 0.01

// checkMediaRules checks what the probe reads beyond size and shape: frame rate, the layout
// of an MP4/MOV (moov first, no edit list) and the sound track, each against the platform's
// documented rule, so that a video the platform would refuse after the upload is refused
// here, naming the rule.
func checkMediaRules(f *apierr.Fields, field, display string, caps platform.Capabilities, info media.Info) {
	if fps := info.FrameRate; fps > 0 {
		switch {
		case caps.MinFrameRate > 0 && caps.MaxFrameRate > 0 && (fps < caps.MinFrameRate-frameRateSlack || fps > caps.MaxFrameRate+frameRateSlack):
			f.Addf(field, "is %s fps; %s accepts %s–%s fps", rate(fps), display, rate(caps.MinFrameRate), rate(caps.MaxFrameRate))
		case caps.MinFrameRate > 0 && caps.MaxFrameRate == 0 && fps < caps.MinFrameRate-frameRateSlack:
			f.Addf(field, "is %s fps; %s needs at least %s fps", rate(fps), display, rate(caps.MinFrameRate))
		case caps.MaxFrameRate > 0 && caps.MinFrameRate == 0 && fps > caps.MaxFrameRate+frameRateSlack:
			f.Addf(field, "is %s fps; %s accepts at most %s fps", rate(fps), display, rate(caps.MaxFrameRate))
		}
	}
	if info.Kind == media.KindMP4 || info.Kind == media.KindMOV {
		if caps.MoovFirst && info.MoovAfterMdat {
			f.Addf(field, "has its moov box (the metadata) after the media data; %s needs it at the front of the file (a \"fast start\" file)", display)
		}
		if caps.NoEditLists && info.EditList {
			f.Addf(field, "carries an edit list; %s accepts no edit lists", display)
		}
	}
	if info.AudioCodec == "" {
		return
	}
	if len(caps.AudioCodecs) > 0 && !slices.Contains(caps.AudioCodecs, info.AudioCodec) {
		f.Addf(field, "has %s sound; %s accepts %s sound only", strings.ToUpper(info.AudioCodec), display, strings.ToUpper(strings.Join(caps.AudioCodecs, "/")))
	}
	if caps.MaxAudioSampleRate > 0 && info.AudioSampleRate > caps.MaxAudioSampleRate {
		f.Addf(field, "has sound sampled at %s kHz; %s accepts at most %s kHz", kHz(info.AudioSampleRate), display, kHz(caps.MaxAudioSampleRate))
	}
	if caps.MaxAudioChannels > 0 && info.AudioChannels > caps.MaxAudioChannels {
		f.Addf(field, "has %d sound channels; %s accepts at most %d", info.AudioChannels, display, caps.MaxAudioChannels)
	}
}

// rate formats a frame rate without trailing zeros: 30, 29.97, 23.976.
func rate(fps float64) string {
	return strconv.FormatFloat(math.Round(fps*1000)/1000, 'f', -1, 64)
}

func kHz(hz int) string {
	return strconv.FormatFloat(float64(hz)/1000, 'f', -1, 64)
}

// matchesRatio reports whether ratio is one of "W:H" within 1%.
func matchesRatio(ratio float64, allowed []string) bool {
	for _, a := range allowed {
		w, h, ok := strings.Cut(a, ":")
		if !ok {
			continue
		}
		wf, err1 := strconv.ParseFloat(w, 64)
		hf, err2 := strconv.ParseFloat(h, 64)
		if err1 == nil && err2 == nil && hf > 0 && math.Abs(ratio-wf/hf) <= 0.01*wf/hf {
			return true
		}
	}
	return false
}

func seconds(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.4g minutes", s/60)
	}
	return fmt.Sprintf("%.4g seconds", s)
}

func humanBytes(n int64) string {
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
