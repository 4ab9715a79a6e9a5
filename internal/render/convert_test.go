package render

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/render/rendertest"
)

// TestConvertCommands: the commands a benchmark runs by hand are Convert's, a pass each, with
// the options every ffmpeg command of reelay starts with.
func TestConvertCommands(t *testing.T) {
	info := media.Info{Duration: time.Minute, FrameRate: 25}
	for _, c := range []struct {
		name string
		c    Conversion
		want []string // a part of each pass's command, in order
	}{
		{"remux", Conversion{}, []string{"-c:v copy -c:a copy -movflags +faststart -use_editlist 0 -f mp4 -progress pipe:1 -nostats file:out.mp4"}},
		{"re-encode", Conversion{Video: true, Audio: true}, []string{"-c:v libx264 -preset veryfast -profile:v high -g 50 -crf 20 -c:a aac"}},
		{"two passes", Conversion{Video: true, VideoBitrate: 4_000_000}, []string{
			"-b:v 4000000 -pass 1 -passlogfile log -an -f null -progress pipe:1 -nostats " + os.DevNull,
			"-b:v 4000000 -pass 2 -passlogfile log -c:a copy -movflags +faststart",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmds := ConvertCommands(info, "out.mp4", "in.mp4", c.c, "log")
			if len(cmds) != len(c.want) {
				t.Fatalf("%d commands, want %d: %q", len(cmds), len(c.want), cmds)
			}
			for i, cmd := range cmds {
				if !slices.Equal(cmd[:len(commonArgs)], commonArgs) || !slices.Contains(cmd, "file:in.mp4") {
					t.Errorf("pass %d: %q, want it to start with %q and read file:in.mp4", i+1, cmd, commonArgs)
				}
				if line := strings.Join(cmd, " "); !strings.Contains(line, c.want[i]) {
					t.Errorf("pass %d: %s\nwant it to hold %s", i+1, line, c.want[i])
				}
			}
		})
	}
}

// TestConvert converts small files made by ffmpeg and reads the results back with reelay's
// own probe: each is an MP4 with its moov first and no edit list, with what the Conversion
// asked for and the rest as it was.
func TestConvert(t *testing.T) {
	r := requireFFmpeg(t)
	moovLast := rendertest.Make(t, "moov-last.mp4", "-f", "lavfi", "-i", "testsrc2=size=360x640:rate=30:duration=2",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
		"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest")
	fast := rendertest.Make(t, "fast.mp4", "-f", "lavfi", "-i", "testsrc2=size=360x640:rate=120:duration=2",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-ac", "2",
		"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", "-movflags", "+faststart")
	wide := rendertest.Make(t, "wide.webm", "-f", "lavfi", "-i", "testsrc2=size=642x362:rate=25:duration=2",
		"-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-an")

	for _, c := range []struct {
		name string
		src  string
		c    Conversion
		// want: the result's codec, size and frame rate (0: as the source).
		codec         string
		width, height int
		fps           float64
		audio         string
		channels      int
	}{
		{name: "remux", src: moovLast, codec: "h264", width: 360, height: 640, fps: 30, audio: "aac", channels: 1},
		{name: "frame rate and sound", src: fast, c: Conversion{Video: true, FrameRate: 60, Audio: true, AudioChannels: 1},
			codec: "h264", width: 360, height: 640, fps: 60, audio: "aac", channels: 1},
		{name: "pad an odd size", src: wide, c: Conversion{Video: true, Width: 642, Height: 1142, Fit: FitPad},
			codec: "h264", width: 642, height: 1142, fps: 25},
		{name: "crop", src: wide, c: Conversion{Video: true, Width: 202, Height: 360, Fit: FitCrop},
			codec: "h264", width: 202, height: 360, fps: 25},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "out.mp4")
			if err := r.Convert(context.Background(), dst, c.src, c.c, nil); err != nil {
				t.Fatal(err)
			}
			in, out := probeFile(t, c.src), probeFile(t, dst)
			if out.Kind != media.KindMP4 || out.MoovAfterMdat || out.EditList {
				t.Errorf("kind %s, moov after mdat %v, edit list %v; want an MP4 with its moov first and no edit list",
					out.Kind, out.MoovAfterMdat, out.EditList)
			}
			if out.VideoCodec != c.codec || out.Width != c.width || out.Height != c.height {
				t.Errorf("%s %d×%d, want %s %d×%d", out.VideoCodec, out.Width, out.Height, c.codec, c.width, c.height)
			}
			if math.Abs(out.FrameRate-c.fps) > 0.5 || math.Abs(out.MaxFrameRate-c.fps) > 0.5 {
				t.Errorf("%v fps (at most %v), want %v", out.FrameRate, out.MaxFrameRate, c.fps)
			}
			if out.AudioCodec != c.audio || out.AudioChannels != c.channels {
				t.Errorf("sound %q in %d channels, want %q in %d", out.AudioCodec, out.AudioChannels, c.audio, c.channels)
			}
			if d := out.Duration - in.Duration; d < -100*time.Millisecond || d > 100*time.Millisecond {
				t.Errorf("lasts %v, the source %v", out.Duration, in.Duration)
			}
			onlyFiles(t, filepath.Dir(dst), "out.mp4")
		})
	}
}

// TestConvertBitrate: two passes at a set bitrate land near it, well under the source's,
// and progress runs once from 0 to 1 over both passes, never going back.
func TestConvertBitrate(t *testing.T) {
	r := requireFFmpeg(t)
	src := rendertest.Make(t, "busy.mp4", "-f", "lavfi", "-i", "testsrc2=size=720x1280:rate=30:duration=4",
		"-f", "lavfi", "-i", "anoisesrc=duration=4", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "10", "-c:a", "aac", "-shortest")
	in := probeFile(t, src)
	const target = 400_000
	if in.Bitrate < 5*target {
		t.Fatalf("the source's %d bit/s is too low for the test", in.Bitrate)
	}
	var reports []float64
	dst := filepath.Join(t.TempDir(), "out.mp4")
	if err := r.Convert(context.Background(), dst, src, Conversion{Video: true, VideoBitrate: target}, func(f float64) {
		reports = append(reports, f)
	}); err != nil {
		t.Fatal(err)
	}
	out, size, err := media.ProbeFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	// The sound is copied: the picture's share is the file's size less the sound's, which the
	// source's audio bitrate bounds loosely; the total stays within 1.5× of the budget plus it.
	budget := float64(target)*out.Duration.Seconds()/8 + 200_000
	if float64(size) > 1.5*budget {
		t.Errorf("%d bytes for %v, want about %.0f", size, out.Duration, budget)
	}
	if len(reports) < 2 || reports[len(reports)-1] < 0.9 {
		t.Fatalf("progress reports %v, want them to reach about 1", reports)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i] < reports[i-1] || reports[i] > 1 {
			t.Fatalf("progress went %v → %v (reports %v)", reports[i-1], reports[i], reports)
		}
	}
	// Both passes report: some progress falls in each half.
	if !slices.ContainsFunc(reports, func(f float64) bool { return f > 0 && f <= 0.5 }) {
		t.Errorf("no progress during the first pass: %v", reports)
	}
}

// TestConvertStops: a cancelled conversion returns at once and leaves no file behind, nor
// does one of a file ffmpeg cannot decode, which fails with ErrInput; dst is untouched.
func TestConvertStops(t *testing.T) {
	r := requireFFmpeg(t)
	src := rendertest.Make(t, "long.mp4", "-f", "lavfi", "-i", "testsrc2=size=1080x1920:rate=30:duration=30",
		"-c:v", "libx264", "-preset", "ultrafast")
	garbage := filepath.Join(t.TempDir(), "garbage.mp4")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The headers are whole (the probe passes, as the upload's did); the frames are zeros,
	// which hold no picture: ffmpeg exits 0 having written none.
	mdat := bytes.Index(b, []byte("mdat"))
	if mdat < 0 {
		t.Fatal("no mdat box")
	}
	size := int(binary.BigEndian.Uint32(b[mdat-4:]))
	clear(b[mdat+4 : mdat-4+size])
	if err := os.WriteFile(garbage, b, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("cancelled", func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := r.Convert(ctx, filepath.Join(dir, "out.mp4"), src, Conversion{Video: true, FrameRate: 24}, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want the context's", err)
		}
		// A re-encode of 30 s at 1080×1920 takes far longer than this here: ffmpeg was killed.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("returned after %v", d)
		}
		onlyFiles(t, dir)
	})
	t.Run("undecodable", func(t *testing.T) {
		dir := t.TempDir()
		dst := filepath.Join(dir, "out.mp4")
		if err := os.WriteFile(dst, []byte("before"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := r.Convert(context.Background(), dst, garbage, Conversion{Video: true}, nil)
		if !errors.Is(err, ErrInput) {
			t.Errorf("error %v, want ErrInput", err)
		}
		if got, _ := os.ReadFile(dst); string(got) != "before" {
			t.Errorf("dst holds %d bytes, want it untouched", len(got))
		}
		onlyFiles(t, dir, "out.mp4")
	})
}
