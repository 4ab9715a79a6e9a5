package media_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
)

// FuzzProbe feeds arbitrary bytes to Sniff and Probe: they must never panic, never hang, and
// fail only with the package's two error kinds. Seeds are small valid files of every format,
// with cut-off and bit-flipped variants; run with
//
//	go test -run '^$' -fuzz FuzzProbe -fuzztime 30s -fuzzminimizetime 5s ./internal/media
//
// (Without -fuzzminimizetime, minimising each new input can take a minute during which the
// exec counter stands still.)
func FuzzProbe(f *testing.F) {
	small := mediatest.Options{Duration: 100 * time.Millisecond, Width: 32, Height: 48, FPS: 10}
	seeds := [][]byte{
		mediatest.MP4Bytes(f, small),
		mediatest.MP4Bytes(f, mediatest.Options{Duration: 100 * time.Millisecond, Width: 32, Height: 48, FPS: 10, Brand: "qt  ", MoovAtEnd: true, LargeSize: true}),
		// An edit list and an AAC track, for the elst, esds and AudioSpecificConfig readers.
		mediatest.MP4Bytes(f, mediatest.Options{Duration: 100 * time.Millisecond, Width: 32, Height: 48, FPS: 10, EditList: true, AudioSampleRate: 96000}),
		mediatest.MP4Bytes(f, mediatest.Options{Duration: 100 * time.Millisecond, Width: 32, Height: 48, FPS: 10, Brand: "qt  ", AudioSampleRate: 50000, AudioChannels: 1}),
		mediatest.WebMBytes(f, small),
		mediatest.JPEG(f, 2, 2),
		mediatest.PNG(f, 2, 2),
		mediatest.WebP(f, 3, 3),
		matroskaHeader,
	}
	files, _ := filepath.Glob("testdata/*.webp")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range seeds {
		f.Add(s)
		f.Add(s[:len(s)/2])
		flipped := bytes.Clone(s)
		flipped[len(flipped)/3] ^= 0x40
		f.Add(flipped)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		media.Sniff(data)
		info, err := media.Probe(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, media.ErrCorrupt) && !errors.Is(err, media.ErrUnsupportedFormat) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if info.Width <= 0 || info.Height <= 0 || info.Duration < 0 {
			t.Fatalf("implausible info %+v", info)
		}
	})
}
