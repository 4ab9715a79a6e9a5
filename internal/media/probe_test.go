package media_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/render/rendertest"
)

// countingReaderAt counts bytes read, to prove the prober skips media data.
type countingReaderAt struct {
	r     *bytes.Reader
	bytes atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	return n, err
}

func probeBytes(data []byte) (media.Info, error) {
	return media.Probe(bytes.NewReader(data), int64(len(data)))
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// patch returns a copy of data with the first occurrence of old replaced.
func patch(t *testing.T, data []byte, old, new []byte) []byte {
	t.Helper()
	i := bytes.Index(data, old)
	if i < 0 {
		t.Fatalf("%q not found", old)
	}
	out := bytes.Clone(data)
	copy(out[i:], new)
	return out
}

// rotate90 sets the tkhd matrix of a mediatest MP4 to a 90° rotation, as phones write
// portrait video.
func rotate90(t *testing.T, data []byte) []byte {
	t.Helper()
	i := bytes.Index(data, []byte("tkhd"))
	if i < 0 {
		t.Fatal("no tkhd")
	}
	m := i + 4 + 4 + 20 + 8 + 8 // type, version/flags, v0 fields, reserved, layer..reserved
	out := bytes.Clone(data)
	copy(out[m:], []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0})
	return out
}

func TestProbe(t *testing.T) {
	t.Parallel()
	vertical := mediatest.Options{Duration: 2500 * time.Millisecond, Width: 720, Height: 1280}
	mp4 := mediatest.MP4Bytes(t, vertical)
	webm := mediatest.WebMBytes(t, vertical)
	// A 1920x1080 stored picture that plays rotated: a vertical phone video.
	rotated := rotate90(t, mediatest.MP4Bytes(t, mediatest.Options{Duration: time.Second, Width: 1920, Height: 1080, Brand: "qt  "}))

	cases := []struct {
		name     string
		data     []byte
		kind     media.Kind
		duration time.Duration
		w, h     int
		codec    string
		rotation int
	}{
		{"mp4", mp4, media.KindMP4, 2500 * time.Millisecond, 720, 1280, "h264", 0},
		{"mov", mediatest.MP4Bytes(t, mediatest.Options{Brand: "qt  ", Duration: 61 * time.Second, Width: 1080, Height: 1920}), media.KindMOV, 61 * time.Second, 1080, 1920, "h264", 0},
		{"moov after mdat, 64-bit mdat size", mediatest.MP4Bytes(t, mediatest.Options{Duration: 4 * time.Second, Width: 540, Height: 960, MoovAtEnd: true, LargeSize: true, Size: 1 << 20}), media.KindMP4, 4 * time.Second, 540, 960, "h264", 0},
		{"rotated mov", rotated, media.KindMOV, time.Second, 1080, 1920, "h264", 90},
		{"webm", webm, media.KindWebM, 2500 * time.Millisecond, 720, 1280, "vp8", 0},
		{"webm padded", mediatest.WebMBytes(t, mediatest.Options{Duration: 90 * time.Second, Width: 1080, Height: 1920, Size: 1 << 20}), media.KindWebM, 90 * time.Second, 1080, 1920, "vp8", 0},
		{"jpeg", mediatest.JPEG(t, 1280, 720), media.KindJPEG, 0, 1280, 720, "", 0},
		{"png", mediatest.PNG(t, 64, 48), media.KindPNG, 0, 64, 48, "", 0},
		{"webp lossless", mediatest.WebP(t, 1080, 1920), media.KindWebP, 0, 1080, 1920, "", 0},
		{"webp lossy", fixture(t, "lossy-1x1.webp"), media.KindWebP, 0, 1, 1, "", 0},
		{"webp extended", fixture(t, "alpha-1x1.webp"), media.KindWebP, 0, 1, 1, "", 0},
		{"webp animated", fixture(t, "animated-1x1.webp"), media.KindWebP, 0, 1, 1, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			info, err := probeBytes(c.data)
			if err != nil {
				t.Fatal(err)
			}
			want := media.Info{Kind: c.kind, Duration: c.duration, Width: c.w, Height: c.h, VideoCodec: c.codec, Rotation: c.rotation}
			// What media rules look at has its own tests (TestProbeMediaRules,
			// TestProbeProfileAndBitrate).
			want.FrameRate, want.MaxFrameRate, want.MoovAfterMdat = info.FrameRate, info.MaxFrameRate, info.MoovAfterMdat
			want.VideoProfile, want.Bitrate = info.VideoProfile, info.Bitrate
			if info != want {
				t.Errorf("got  %+v\nwant %+v", info, want)
			}
		})
	}
}

func TestProbeSkipsMediaData(t *testing.T) {
	t.Parallel()
	for _, o := range []mediatest.Options{
		{Size: 20 << 20},
		{Size: 20 << 20, MoovAtEnd: true},
		{Size: 20 << 20, MoovAtEnd: true, LargeSize: true},
	} {
		data := mediatest.MP4Bytes(t, o)
		r := &countingReaderAt{r: bytes.NewReader(data)}
		if _, err := media.Probe(r, int64(len(data))); err != nil {
			t.Fatal(err)
		}
		if n := r.bytes.Load(); n > 16<<10 {
			t.Errorf("%+v: read %d bytes of a %d-byte file", o, n, len(data))
		}
	}
	data := mediatest.WebMBytes(t, mediatest.Options{Size: 20 << 20})
	r := &countingReaderAt{r: bytes.NewReader(data)}
	if _, err := media.Probe(r, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	if n := r.bytes.Load(); n > 4<<10 {
		t.Errorf("webm: read %d bytes", n)
	}
}

// matroskaHeader is an EBML header with DocType "matroska" followed by an empty Segment.
var matroskaHeader = []byte("\x1a\x45\xdf\xa3\x8b\x42\x82\x88matroska\x18\x53\x80\x67\x80")

func TestProbeRefuses(t *testing.T) {
	t.Parallel()
	mp4 := mediatest.MP4Bytes(t, mediatest.Options{Size: 64 << 10})
	moovLast := mediatest.MP4Bytes(t, mediatest.Options{MoovAtEnd: true})
	webm := mediatest.WebMBytes(t, mediatest.Options{})
	jpeg := mediatest.JPEG(t, 16, 16)
	ftyp := func(major, compat string) []byte {
		b := append([]byte("\x00\x00\x00\x14ftyp"), major...)
		b = append(b, 0, 0, 0, 0)
		b = append(b, compat...)
		return append(b, "\x00\x00\x00\x08free"...)
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, media.ErrUnsupportedFormat},
		{"text", []byte("hello, this is not a video at all"), media.ErrUnsupportedFormat},
		{"html", []byte("<!doctype html><html><body>404</body></html>"), media.ErrUnsupportedFormat},
		{"gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), media.ErrUnsupportedFormat},
		{"matroska", matroskaHeader, media.ErrUnsupportedFormat},
		{"heic", ftyp("heic", "mif1"), media.ErrUnsupportedFormat},
		{"m4a", ftyp("M4A ", "isom"), media.ErrUnsupportedFormat},
		{"audio-only mp4", patch(t, mp4, []byte("vide"), []byte("soun")), media.ErrUnsupportedFormat},
		{"ftyp only", ftyp("isom", "mp41"), media.ErrCorrupt},
		{"mp4 cut in mdat", mp4[:len(mp4)-100], media.ErrCorrupt},
		{"mp4 cut in moov", moovLast[:len(moovLast)-10], media.ErrCorrupt},
		{"mp4 cut after ftyp", mp4[:40], media.ErrCorrupt},
		{"webm cut", webm[:len(webm)-5], media.ErrCorrupt},
		{"webm header only", webm[:40], media.ErrCorrupt},
		{"jpeg cut", jpeg[:20], media.ErrCorrupt},
		{"png cut", mediatest.PNG(t, 4, 4)[:20], media.ErrCorrupt},
		{"webp cut", mediatest.WebP(t, 4, 4)[:24], media.ErrCorrupt},
		{"webp bad riff size", patch(t, mediatest.WebP(t, 4, 4), []byte("RIFF\x18"), []byte("RIFF\xff")), media.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			info, err := probeBytes(c.data)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %+v, %v; want %v", info, err, c.want)
			}
			t.Logf("%v", err)
		})
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	ftyp := func(major string, compat ...string) []byte {
		b := []byte{0, 0, 0, byte(16 + 4*len(compat))}
		b = append(b, "ftyp"+major+"\x00\x00\x02\x00"...)
		for _, c := range compat {
			b = append(b, c...)
		}
		return b
	}
	cases := []struct {
		name string
		head []byte
		want string
	}{
		{"isom", ftyp("isom", "isom", "iso2", "avc1", "mp41"), "mp4"},
		{"mp42", ftyp("mp42", "mp42", "isom"), "mp4"},
		{"qt major", ftyp("qt  ", "qt  "), "mov"},
		{"qt compatible", ftyp("XYZW", "qt  "), "mov"},
		{"unknown major, iso compatible", ftyp("XYZW", "isom"), "mp4"},
		{"unknown brands", ftyp("XYZW", "ABCD"), ""},
		{"avif", ftyp("avif", "avif", "mif1", "miaf"), ""},
		{"ftyp too short", []byte("\x00\x00\x00\x0cftypisom"), ""},
		{"legacy quicktime", []byte("\x00\x00\x00\x08wide\x00\x01\x00\x00mdat"), "mov"},
		{"webm", mediatest.WebMBytes(t, mediatest.Options{})[:64], "webm"},
		{"webm header cut", mediatest.WebMBytes(t, mediatest.Options{})[:12], ""},
		{"matroska", matroskaHeader, ""},
		{"jpeg", []byte{0xFF, 0xD8, 0xFF, 0xE0}, "jpeg"},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00"), "png"},
		{"webp", mediatest.WebP(t, 1, 1), "webp"},
		{"riff avi", []byte("RIFF\x00\x00\x00\x00AVI LIST"), ""},
		{"empty", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			k, ok := media.Sniff(c.head)
			if ok != (c.want != "") || k.Name != c.want {
				t.Fatalf("Sniff = %+v, %v; want %q", k, ok, c.want)
			}
			if ok {
				if k2, _ := media.KindByName(k.Name); k2 != k || k.ContentType == "" {
					t.Errorf("KindByName(%q) = %+v", k.Name, k2)
				}
			}
		})
	}
}

// TestProbeMediaRules: the probe reports what platforms' media rules look at (frame rate,
// where moov lies, edit lists, the audio track's codec, channels and sample rate), from files
// built box by box.
func TestProbeMediaRules(t *testing.T) {
	t.Parallel()
	base := mediatest.Options{Duration: 2 * time.Second, Width: 720, Height: 1280}
	with := func(f func(o *mediatest.Options)) mediatest.Options { o := base; f(&o); return o }
	cases := []struct {
		name          string
		data          []byte
		fps, maxFPS   float64
		moovAfterMdat bool
		editList      bool
		audio         string
		channels      int
		rate          int
	}{
		{name: "30 fps, moov first", data: mediatest.MP4Bytes(t, base), fps: 30, maxFPS: 30},
		{name: "120 fps", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) { o.FPS = 120 })), fps: 120, maxFPS: 120},
		{name: "24 fps over 2.5 s (the last frame cut short)", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) {
			o.FPS, o.Duration = 24, 2510*time.Millisecond
		})), fps: 24, maxFPS: 24},
		{name: "moov after mdat", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) { o.MoovAtEnd = true })), fps: 30, maxFPS: 30, moovAfterMdat: true},
		{name: "edit list", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) { o.EditList = true })), fps: 30, maxFPS: 30, editList: true},
		{name: "AAC 96 kHz stereo", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) { o.AudioSampleRate = 96000 })),
			fps: 30, maxFPS: 30, audio: "aac", channels: 2, rate: 96000},
		{name: "AAC 48 kHz mono in MOV", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) {
			o.AudioSampleRate, o.AudioChannels, o.Brand = 48000, 1, "qt  "
		})), fps: 30, maxFPS: 30, audio: "aac", channels: 1, rate: 48000},
		{name: "AAC at an explicit rate", data: mediatest.MP4Bytes(t, with(func(o *mediatest.Options) { o.AudioSampleRate = 50000 })),
			fps: 30, maxFPS: 30, audio: "aac", channels: 2, rate: 50000},
		{name: "WebM 25 fps", data: mediatest.WebMBytes(t, with(func(o *mediatest.Options) { o.FPS = 25 })), fps: 25, maxFPS: 25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := probeBytes(c.data)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(info.FrameRate-c.fps) > 0.001 || math.Abs(info.MaxFrameRate-c.maxFPS) > 0.001 {
				t.Errorf("frame rate %v, max %v; want %v, %v", info.FrameRate, info.MaxFrameRate, c.fps, c.maxFPS)
			}
			if info.MoovAfterMdat != c.moovAfterMdat || info.EditList != c.editList {
				t.Errorf("moov after mdat %v, edit list %v; want %v, %v", info.MoovAfterMdat, info.EditList, c.moovAfterMdat, c.editList)
			}
			if info.AudioCodec != c.audio || info.AudioChannels != c.channels || info.AudioSampleRate != c.rate {
				t.Errorf("audio %q %d ch %d Hz; want %q %d ch %d Hz", info.AudioCodec, info.AudioChannels, info.AudioSampleRate, c.audio, c.channels, c.rate)
			}
		})
	}
}

// TestProbeMediaRulesFFmpeg checks the same against what ffmpeg writes: moov at the end (its
// default) or first (+faststart), the one edit it writes to skip the AAC encoder's delay (not
// an edit list in the sense of Info.EditList), and a 96 kHz AAC track whose rate does not fit
// the sample entry's 16-bit field.
func TestProbeMediaRulesFFmpeg(t *testing.T) {
	t.Parallel()
	rendertest.RequireFFmpeg(t) // TestProbeMediaRules covers the same with files built box by box
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal(err)
	}
	for _, faststart := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "clip.mp4")
		args := []string{"-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=120:duration=1",
			"-f", "lavfi", "-i", "sine=sample_rate=96000:duration=1", "-c:v", "libx264", "-c:a", "aac", "-shortest"}
		if faststart {
			args = append(args, "-movflags", "+faststart")
		}
		cmd := exec.Command(ffmpeg, append(args, out)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		info, err := probeBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(info.FrameRate-120) > 0.5 || info.MoovAfterMdat == faststart || info.EditList ||
			info.AudioCodec != "aac" || info.AudioSampleRate != 96000 || info.AudioChannels != 1 {
			t.Errorf("faststart %v: %+v", faststart, info)
		}
	}
}
