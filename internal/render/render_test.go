package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/render/rendertest"
)

// requireFFmpeg returns a renderer for the ffmpeg on PATH, skipping the test without one
// (failing it where CI requires ffmpeg).
func requireFFmpeg(tb testing.TB) *Renderer {
	tb.Helper()
	rendertest.RequireFFmpeg(tb)
	r := New("")
	if err := r.Check(context.Background()); err != nil {
		tb.Fatalf("ffmpeg is on PATH but cannot render: %v", err)
	}
	return r
}

func probeFile(tb testing.TB, path string) media.Info {
	tb.Helper()
	info, err := probe(path)
	if err != nil {
		tb.Fatalf("probing %s: %v", path, err)
	}
	return info
}

// checkOutput asserts what every output promises: an MP4 with H.264 and AAC at the given
// size, lasting want (within tol).
func checkOutput(tb testing.TB, path string, width, height int, want, tol time.Duration) {
	tb.Helper()
	info := probeFile(tb, path)
	if info.Kind != media.KindMP4 || info.VideoCodec != "h264" || info.AudioCodec != "aac" {
		tb.Errorf("%s: kind %s, codecs %q/%q; want mp4 with h264/aac", filepath.Base(path), info.Kind, info.VideoCodec, info.AudioCodec)
	}
	if info.Width != width || info.Height != height {
		tb.Errorf("%s: %d×%d, want %d×%d", filepath.Base(path), info.Width, info.Height, width, height)
	}
	if d := info.Duration - want; d < -tol || d > tol {
		tb.Errorf("%s: duration %v, want %v ± %v", filepath.Base(path), info.Duration, want, tol)
	}
	if a := audioDuration(tb, path); a-want < -tol || a-want > tol {
		tb.Errorf("%s: audio lasts %v, want %v ± %v", filepath.Base(path), a, want, tol)
	}
}

// audioDuration decodes the audio track and counts its samples: the container's
// duration is that of the longest track and would hide an audio track that ends early.
func audioDuration(tb testing.TB, path string) time.Duration {
	tb.Helper()
	pcm := ffmpegVideo(tb, tb.TempDir(), "audio.raw", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "48000")
	st, err := os.Stat(pcm)
	if err != nil {
		tb.Fatal(err)
	}
	return time.Duration(st.Size()/2) * time.Second / 48000
}

// onlyFiles asserts that dir holds exactly the named files: no temporary file is left.
func onlyFiles(tb testing.TB, dir string, names ...string) {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		tb.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// ffmpegVideo makes a test input with ffmpeg's own generators: args are inputs and output
// options, written to name in dir.
func ffmpegVideo(tb testing.TB, dir, name string, args ...string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	args = append(append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...), path)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		tb.Fatalf("making %s: %v\n%s", name, err, out)
	}
	return path
}

func longUnicodePrompt() string {
	var b strings.Builder
	for b.Len() < 3000 {
		b.WriteString("Crème brûlée, ελληνικά, кириллица, 漢字とかな, 한국어, עברית 🎬🍞👩‍👩‍👧 — the quick brown fox jumps over the lazy dog. ")
	}
	return b.String()
}

func TestTextClip(t *testing.T) {
	r := requireFFmpeg(t)
	for _, tc := range []struct {
		name, prompt, aspect string
	}{
		{"vertical", "Five things nobody tells you about sourdough", "9:16"},
		{"horizontal", "Five things nobody tells you about sourdough", "16:9"},
		{"long unicode", longUnicodePrompt(), "9:16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "clip.mp4")
			if err := r.TextClip(context.Background(), dst, tc.prompt, tc.aspect); err != nil {
				t.Fatal(err)
			}
			w, h, _ := Dimensions(tc.aspect)
			checkOutput(t, dst, w, h, ClipDuration, 100*time.Millisecond)
			onlyFiles(t, dir, "clip.mp4")
		})
	}
}

func TestTextClipRefusals(t *testing.T) {
	r := requireFFmpeg(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "clip.mp4")
	for _, tc := range []struct{ name, prompt, aspect string }{
		{"empty prompt", " \n\t\u200d ", "9:16"},
		{"unknown aspect", "hello", "4:3"},
	} {
		if err := r.TextClip(context.Background(), dst, tc.prompt, tc.aspect); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	onlyFiles(t, dir)
}

func TestImageClip(t *testing.T) {
	r := requireFFmpeg(t)
	for _, tc := range []struct {
		format        string
		width, height int
		aspect        string
	}{
		{"jpeg", 1600, 900, "9:16"}, // landscape picture into a vertical frame
		{"png", 900, 1600, "16:9"},  // portrait picture into a horizontal frame
		{"webp", 333, 251, "9:16"},  // small, odd-sized picture scaled up
	} {
		t.Run(tc.format, func(t *testing.T) {
			img := mediatest.ImageFile(t, tc.format, tc.width, tc.height)
			dir := t.TempDir()
			dst := filepath.Join(dir, "clip.mp4")
			if err := r.ImageClip(context.Background(), dst, img, tc.aspect); err != nil {
				t.Fatal(err)
			}
			w, h, _ := Dimensions(tc.aspect)
			checkOutput(t, dst, w, h, ClipDuration, 100*time.Millisecond)
			onlyFiles(t, dir, "clip.mp4")
		})
	}
}

func TestImageClipBadInput(t *testing.T) {
	r := requireFFmpeg(t)
	src := t.TempDir()
	text := filepath.Join(src, "notes.jpg")
	if err := os.WriteFile(text, []byte("this is not a picture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"text file": text,
		"video":     mediatest.MP4(t, mediatest.Options{Width: 320, Height: 240}),
	} {
		dir := t.TempDir()
		err := r.ImageClip(context.Background(), filepath.Join(dir, "clip.mp4"), path, "9:16")
		if !errors.Is(err, ErrInput) {
			t.Errorf("%s: error %v, want ErrInput", name, err)
		}
		onlyFiles(t, dir)
	}
}

func TestJoin(t *testing.T) {
	r := requireFFmpeg(t)
	src := t.TempDir()
	// Inputs that differ in everything Join normalises, each a solid colour so that a
	// frame of the output shows whether it was fitted, padded and rotated.
	red := ffmpegVideo(t, src, "red.mp4", // landscape, 25 fps, no audio
		"-f", "lavfi", "-i", "color=c=red:size=640x360:rate=25", "-t", "2", "-an", "-c:v", "libx264", "-preset", "ultrafast")
	stored := ffmpegVideo(t, src, "stored.mov", // landscape as stored, 24 fps, 4:4:4, mono 44.1 kHz
		"-f", "lavfi", "-i", "color=c=blue:size=1280x720:rate=24", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
		"-t", "1.5", "-ac", "1", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv444p", "-c:a", "aac")
	// Stored sideways with a rotation, as phones record portrait video: shown 720×1280.
	// (ffmpeg 5.1 writes the rotate tag only when copying.)
	blue := ffmpegVideo(t, src, "blue.mov", "-i", stored, "-c", "copy", "-metadata:s:v:0", "rotate=90")
	green := ffmpegVideo(t, src, "green.webm", // square, VP8 and Opus
		"-f", "lavfi", "-i", "color=c=lime:size=480x480:rate=30", "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000",
		"-t", "1", "-c:v", "libvpx", "-deadline", "realtime", "-c:a", "libopus")
	grey := mediatest.MP4(t, mediatest.Options{Width: 1080, Height: 1920, Duration: time.Second})
	// Fragmented, so that the container does not record its duration, and without audio.
	fragmented := ffmpegVideo(t, src, "fragmented.mp4",
		"-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-t", "2", "-an", "-c:v", "libx264", "-preset", "ultrafast",
		"-movflags", "frag_keyframe+empty_moov")
	if d := probeFile(t, fragmented).Duration; d != 0 {
		t.Fatalf("the fragmented input records a duration of %v", d)
	}
	if info := probeFile(t, blue); info.Width != 720 || info.Height != 1280 {
		t.Fatalf("the rotated input is shown %d×%d, want 720×1280", info.Width, info.Height)
	}

	// A sample is a point of the output, at a time in seconds and a position as a fraction
	// of the frame, and the colour expected there.
	type sample struct {
		at     float64
		x, y   float64
		colour string
	}
	for _, tc := range []struct {
		name    string
		inputs  []string
		aspect  string
		extra   time.Duration // of inputs whose duration Probe cannot tell
		batch   int           // joinBatch, when not the default
		samples []sample
	}{
		{"vertical", []string{red, blue, green}, "9:16", 0, 0, []sample{
			{1, 0.5, 0.05, "black"}, {1, 0.5, 0.5, "red"}, // letterboxed
			{2.75, 0.5, 0.05, "blue"}, {2.75, 0.05, 0.5, "blue"}, // upright, filling the frame
			{4, 0.5, 0.05, "black"}, {4, 0.5, 0.5, "green"},
		}},
		{"horizontal", []string{blue, grey}, "16:9", 0, 0, []sample{
			{0.75, 0.05, 0.5, "black"}, {0.75, 0.5, 0.5, "blue"}, // pillarboxed
		}},
		{"one silent input", []string{red}, "16:9", 0, 0, []sample{{1, 0.05, 0.05, "red"}}},
		{"silent input of unknown duration last", []string{blue, fragmented}, "9:16", 2 * time.Second, 0, nil},
		// Batches of two: three intermediate files, concatenated.
		{"in batches", []string{red, blue, green, grey, red}, "9:16", 0, 2, []sample{
			{1, 0.5, 0.5, "red"}, {2.75, 0.5, 0.05, "blue"}, {4, 0.5, 0.5, "green"}, {6, 0.5, 0.05, "black"}, {6, 0.5, 0.5, "red"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := tc.extra
			for _, in := range tc.inputs {
				sum += probeFile(t, in).Duration
			}
			if tc.batch > 0 {
				defer func(n int) { joinBatch = n }(joinBatch)
				joinBatch = tc.batch
			}
			dir := t.TempDir()
			dst := filepath.Join(dir, "joined.mp4")
			if err := r.Join(context.Background(), dst, tc.inputs, tc.aspect); err != nil {
				t.Fatal(err)
			}
			w, h, _ := Dimensions(tc.aspect)
			checkOutput(t, dst, w, h, sum, 150*time.Millisecond)
			onlyFiles(t, dir, "joined.mp4")
			for _, s := range tc.samples {
				img := frameAt(t, dst, s.at)
				c := img.At(int(s.x*float64(w)), int(s.y*float64(h)))
				if got := colourName(c); got != s.colour {
					t.Errorf("at %gs (%g, %g): %v is %s, want %s", s.at, s.x, s.y, c, got, s.colour)
				}
			}
		})
	}
}

// frameAt decodes the frame of a video shown at the given second, using ffmpeg.
func frameAt(tb testing.TB, path string, seconds float64) image.Image {
	tb.Helper()
	out := ffmpegVideo(tb, tb.TempDir(), "frame.png", "-ss", strconv.FormatFloat(seconds, 'f', 3, 64), "-i", path, "-frames:v", "1")
	f, err := os.Open(out)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// colourName names the test sources' colours, allowing for compression.
func colourName(c color.Color) string {
	r, g, b, _ := c.RGBA()
	hi := func(v uint32) bool { return v>>8 > 180 }
	lo := func(v uint32) bool { return v>>8 < 60 }
	switch {
	case lo(r) && lo(g) && lo(b):
		return "black"
	case hi(r) && lo(g) && lo(b):
		return "red"
	case lo(r) && hi(g) && lo(b):
		return "green"
	case lo(r) && lo(g) && hi(b):
		return "blue"
	}
	return "other"
}

func TestJoinBadInput(t *testing.T) {
	r := requireFFmpeg(t)
	src := t.TempDir()
	video := mediatest.MP4(t, mediatest.Options{Width: 320, Height: 240})
	text := filepath.Join(src, "clip.mp4")
	if err := os.WriteFile(text, []byte("not a video"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A video whose headers are sound and whose frames are garbage: it probes, and
	// only ffmpeg finds out.
	garbled := ffmpegVideo(t, src, "garbled.mp4",
		"-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "1", "-c:v", "libx264", "-preset", "ultrafast", "-movflags", "+faststart")
	b, err := os.ReadFile(garbled)
	if err != nil {
		t.Fatal(err)
	}
	for i := bytes.Index(b, []byte("mdat")) + 4; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(garbled, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		inputs []string
		input  bool // the error wraps ErrInput
	}{
		{"text file", []string{video, text}, true},
		{"garbled frames", []string{video, garbled}, true},
		{"picture", []string{mediatest.ImageFile(t, "png", 64, 64)}, true},
		{"no inputs", nil, false},
	} {
		dir := t.TempDir()
		err := r.Join(context.Background(), filepath.Join(dir, "joined.mp4"), tc.inputs, "9:16")
		if err == nil || errors.Is(err, ErrInput) != tc.input {
			t.Errorf("%s: error %v, want one wrapping ErrInput: %v", tc.name, err, tc.input)
		}
		onlyFiles(t, dir)
	}
}

func TestUnavailable(t *testing.T) {
	r := New("/nonexistent/ffmpeg")
	err := r.Check(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/ffmpeg") {
		t.Fatalf("Check: %v, want ErrUnavailable naming the path", err)
	}
	t.Log(err)
	dir := t.TempDir()
	err = r.TextClip(context.Background(), filepath.Join(dir, "clip.mp4"), "hello", "9:16")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ffmpeg") {
		t.Errorf("TextClip: %v, want ErrUnavailable", err)
	}
	onlyFiles(t, dir)

	// Not on PATH at all: the message names the program looked up.
	t.Setenv("PATH", t.TempDir())
	err = New("").Check(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"ffmpeg"`) {
		t.Errorf("Check with no ffmpeg on PATH: %v", err)
	}
}

// TestCheckRunsFFmpeg checks with stand-in programs: one that fails, one built without
// libx264, and that a verdict is cached rather than asked again on every call.
func TestCheckRunsFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run stand-in programs")
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	count := filepath.Join(dir, "count")
	for _, tc := range []struct{ name, body, want string }{
		{"broken", "echo 'error while loading shared libraries: libavdevice.so.59' >&2; exit 127", "libavdevice.so.59"},
		{"nogpl", "echo x >> " + count + "; echo 'ffmpeg version 5.1 configuration: --disable-gpl'", "without libx264"},
	} {
		r := New(script(tc.name, tc.body))
		for range 3 {
			err := r.Check(context.Background())
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Check: %v, want ErrUnavailable saying %q", tc.name, err, tc.want)
			}
		}
	}
	if b, err := os.ReadFile(count); err != nil || string(b) != "x\n" {
		t.Errorf("ffmpeg -version ran %d times (%v), want once", strings.Count(string(b), "x"), err)
	}
}

func TestCancel(t *testing.T) {
	r := requireFFmpeg(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	soon, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	for name, ctx := range map[string]context.Context{"already cancelled": cancelled, "cancelled while rendering": soon} {
		dir := t.TempDir()
		start := time.Now()
		err := r.TextClip(ctx, filepath.Join(dir, "clip.mp4"), "Stopped halfway", "9:16")
		if err == nil || !errors.Is(err, ctx.Err()) {
			t.Errorf("%s: error %v, want %v", name, err, ctx.Err())
		}
		// ffmpeg is killed, not waited for: a render takes seconds.
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: returned after %v", name, d)
		}
		onlyFiles(t, dir)
	}
}

func TestDimensions(t *testing.T) {
	for _, tc := range []struct {
		aspect string
		w, h   int
		ok     bool
	}{{"9:16", 1080, 1920, true}, {"16:9", 1920, 1080, true}, {"1:1", 0, 0, false}, {"", 0, 0, false}} {
		if w, h, ok := Dimensions(tc.aspect); w != tc.w || h != tc.h || ok != tc.ok {
			t.Errorf("Dimensions(%q) = %d, %d, %v", tc.aspect, w, h, ok)
		}
	}
}

func TestBackgroundIsDeterministic(t *testing.T) {
	a, b := background("same prompt"), background("same prompt")
	if a != b {
		t.Errorf("same prompt, different backgrounds: %v %v", a, b)
	}
	if c := background("another prompt"); c == a {
		t.Errorf("different prompts, same background: %v", c)
	}
	for _, c := range a.colors {
		if len(c) != len("0xRRGGBB") || !strings.HasPrefix(c, "0x") {
			t.Errorf("colour %q is not 0xRRGGBB", c)
		}
	}
}

func TestTail(t *testing.T) {
	var tl tail
	fmt.Fprintf(&tl, "%s\n", strings.Repeat("x", 3*tailSize))
	fmt.Fprintf(&tl, "[mjpeg @ 0x55d0] No JPEG data found in image\nError while decoding stream #0:0: Invalid data found when processing input\nConversion failed!\n\n")
	if len(tl.buf) > tailSize {
		t.Errorf("kept %d bytes", len(tl.buf))
	}
	if got, want := tl.reason(": "), ": Error while decoding stream #0:0: Invalid data found when processing input"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
}

func BenchmarkTextClip(b *testing.B) {
	r := requireFFmpeg(b)
	dst := filepath.Join(b.TempDir(), "clip.mp4")
	for b.Loop() {
		if err := r.TextClip(context.Background(), dst, "Five things nobody tells you about sourdough", "9:16"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJoin30s joins six 5-second clips into 30 seconds of vertical video: three
// already at the target's shape (as TextClip and ImageClip make them) and three that need
// normalising (landscape, 25 fps, no audio).
func BenchmarkJoin30s(b *testing.B) {
	r := requireFFmpeg(b)
	src := b.TempDir()
	var inputs []string
	for i := range 6 {
		if i%2 == 0 {
			inputs = append(inputs, ffmpegVideo(b, src, fmt.Sprintf("in%d.mp4", i),
				"-f", "lavfi", "-i", "testsrc2=size=1080x1920:rate=30", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo",
				"-t", "5", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"))
		} else {
			inputs = append(inputs, ffmpegVideo(b, src, fmt.Sprintf("in%d.mp4", i),
				"-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-t", "5", "-an", "-c:v", "libx264", "-preset", "ultrafast"))
		}
	}
	dst := filepath.Join(b.TempDir(), "joined.mp4")
	for b.Loop() {
		if err := r.Join(context.Background(), dst, inputs, "9:16"); err != nil {
			b.Fatal(err)
		}
	}
}
