// Package mediatest generates small, structurally valid media files for tests across reelay:
// MP4 and MOV (ISO-BMFF with one H.264 video track), WebM (Matroska with one VP8 track), and
// JPEG, PNG and WebP images. Files can be padded to any size while streaming, so a test can
// push a 100 MB upload without holding 100 MB in memory.
//
// The files exist so that sniffers, probers, size caps and upload paths see real container
// structure; they carry no interesting picture. The H.264 stream is a real, decodable
// constrained-baseline stream (a flat grey IDR frame followed by all-skip P frames); the VP8
// frames in WebM carry valid frame headers but are not meant to be decoded.
package mediatest

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Options describes a generated video. Zero fields take the defaults noted on each.
type Options struct {
	// Duration of the video; default 2s. Durations are exact to the millisecond.
	Duration time.Duration
	// Width and Height in pixels; default 1080x1920 (vertical short video). Containers
	// record them as given; the H.264 stream codes odd sizes one pixel larger, since 4:2:0
	// video can only be cropped in steps of two.
	Width, Height int
	// Size pads the file with filler bytes (inside mdat for MP4/MOV, a Void element for
	// WebM) until it is about this many bytes long. Zero means as small as possible. The
	// padding is streamed in small chunks, never buffered.
	Size int64
	// NoisyPadding fills the padding with pseudo-random bytes (the same for every file)
	// instead of zeros: compressed video looks like noise, and long runs of one byte are a
	// worst case for some scanners (mime/multipart looks for a boundary's first byte, '\r',
	// from the end of each buffer, one byte at a time, through every run that lacks one).
	NoisyPadding bool
	// Brand is the ftyp major brand of an MP4 file: "isom" (default) or "qt  " for a
	// QuickTime MOV. Ignored for WebM.
	Brand string
	// FPS is the frame rate; default 30.
	FPS int
	// MoovAtEnd writes the moov box after mdat, as cameras do, so that readers must look
	// past the media data to find the metadata. MP4/MOV only.
	MoovAtEnd bool
	// EditList gives the video track an edit list that starts it with a 100 ms empty edit
	// (a delay) before playing the media: an edit list beyond the single edit encoders
	// write, which Instagram refuses. MP4/MOV only.
	EditList bool
	// AudioSampleRate, when not zero, adds an AAC (LC) audio track at this rate in Hz with
	// AudioChannels channels (default 2). The track holds no samples: it exists for the
	// metadata that probes and platforms check. MP4/MOV only.
	AudioSampleRate int
	AudioChannels   int
	// LargeSize writes the mdat header with a 64-bit size, which readers must handle for
	// files over 4 GiB. MP4/MOV only. It is implied when the mdat would exceed 4 GiB.
	LargeSize bool
}

func (o Options) withDefaults() Options {
	if o.Duration <= 0 {
		o.Duration = 2 * time.Second
	}
	if o.Width <= 0 {
		o.Width = 1080
	}
	if o.Height <= 0 {
		o.Height = 1920
	}
	if o.FPS <= 0 {
		o.FPS = 30
	}
	if o.Brand == "" {
		o.Brand = "isom"
	}
	if o.AudioSampleRate > 0 && o.AudioChannels <= 0 {
		o.AudioChannels = 2
	}
	return o
}

// frameCount is the number of frames for o's duration: at least one, and the last frame
// absorbs any remainder so that the track's duration is exact.
func (o Options) frameCount() int {
	n := int(o.Duration * time.Duration(o.FPS) / time.Second)
	if n < 1 {
		n = 1
	}
	return n
}

// MP4 writes an MP4 (or MOV when o.Brand is "qt  ") file into t.TempDir() and returns its path.
func MP4(t testing.TB, o Options) string {
	t.Helper()
	ext := ".mp4"
	if o.Brand == "qt  " {
		ext = ".mov"
	}
	return writeTemp(t, "video*"+ext, func(w io.Writer) error { return WriteMP4(w, o) })
}

// WebM writes a WebM file into t.TempDir() and returns its path.
func WebM(t testing.TB, o Options) string {
	t.Helper()
	return writeTemp(t, "video*.webm", func(w io.Writer) error { return WriteWebM(w, o) })
}

// MP4Bytes returns a small MP4/MOV file in memory; meant for files of a few megabytes at
// most (use MP4 or WriteMP4 for big ones).
func MP4Bytes(t testing.TB, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteMP4(&b, o); err != nil {
		t.Fatalf("mediatest: %v", err)
	}
	return b.Bytes()
}

// WebMBytes returns a small WebM file in memory.
func WebMBytes(t testing.TB, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteWebM(&b, o); err != nil {
		t.Fatalf("mediatest: %v", err)
	}
	return b.Bytes()
}

// MP4Reader streams a generated MP4/MOV file through a pipe, so that an upload test can send
// a file of any size without writing it to disk or memory first. Close the reader to stop
// the generator early.
func MP4Reader(o Options) io.ReadCloser {
	return pipe(func(w io.Writer) error { return WriteMP4(w, o) })
}

// WebMReader is MP4Reader for WebM.
func WebMReader(o Options) io.ReadCloser {
	return pipe(func(w io.Writer) error { return WriteWebM(w, o) })
}

func pipe(gen func(io.Writer) error) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(gen(pw)) }()
	return pr
}

func writeTemp(t testing.TB, pattern string, gen func(io.Writer) error) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), pattern)
	if err != nil {
		t.Fatalf("mediatest: %v", err)
	}
	if err := gen(f); err != nil {
		f.Close()
		t.Fatalf("mediatest: writing %s: %v", filepath.Base(f.Name()), err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("mediatest: %v", err)
	}
	return f.Name()
}

// zeros is the filler source: padding is written from this one block, so generating a
// 100 MB file costs 32 KiB of memory.
var zeros [32 << 10]byte

// writePadding writes n filler bytes: zeros, or with noisy a pseudo-random stream from a
// fixed seed, so that the same options always give the same file.
func writePadding(w io.Writer, n int64, noisy bool) error {
	block := zeros[:]
	var rng *rand.ChaCha8
	if noisy {
		block = make([]byte, len(zeros))
		rng = rand.NewChaCha8([32]byte{'r', 'e', 'e', 'l', 'a', 'y'})
	}
	for n > 0 {
		k := min(int64(len(block)), n)
		if rng != nil {
			rng.Read(block[:k])
		}
		if _, err := w.Write(block[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
