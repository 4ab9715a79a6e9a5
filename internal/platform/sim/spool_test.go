package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
)

func TestSpool(t *testing.T) {
	chunk := func(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }
	type write struct {
		off  int64
		data []byte
	}
	tests := []struct {
		name     string
		writes   []write
		truncate int64 // applied after the writes when >= 0
		want     []byte
		onDisk   bool
	}{
		{name: "small, in order", truncate: -1,
			writes: []write{{0, []byte("hello ")}, {6, []byte("world")}}, want: []byte("hello world")},
		{name: "a chunk written again after it was cut short", truncate: -1,
			writes: []write{{0, []byte("abc")}, {3, []byte("d")}, {3, []byte("DEF")}}, want: []byte("abcDEF")},
		{name: "a gap reads as zeros", truncate: -1,
			writes: []write{{4, []byte("x")}}, want: []byte{0, 0, 0, 0, 'x'}},
		{name: "exactly the memory limit stays in memory", truncate: -1,
			writes: []write{{0, chunk(spoolInMemory, 1)}}, want: chunk(spoolInMemory, 1)},
		{name: "one byte past the limit moves to a file, keeping what was written", truncate: -1,
			writes: []write{{0, chunk(1000, 1)}, {1000, chunk(spoolInMemory-1000, 2)}, {spoolInMemory, []byte{3}}},
			want:   append(append(chunk(1000, 1), chunk(spoolInMemory-1000, 2)...), 3), onDisk: true},
		{name: "truncated in memory", truncate: 3,
			writes: []write{{0, []byte("abcdef")}}, want: []byte("abc")},
		{name: "truncated on disk", truncate: 5,
			writes: []write{{0, chunk(spoolInMemory+10, 7)}}, want: chunk(5, 7), onDisk: true},
		{name: "truncate longer than written", truncate: 4,
			writes: []write{{0, []byte("ab")}}, want: []byte{'a', 'b', 0, 0}},
		{name: "empty reads nothing", truncate: -1, want: []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := NewSpool(dir, "spool-*")
			for _, w := range tt.writes {
				if n, err := s.WriteAt(w.data, w.off); err != nil || n != len(w.data) {
					t.Fatalf("WriteAt(%d bytes, %d) = %d, %v", len(w.data), w.off, n, err)
				}
			}
			if tt.truncate >= 0 {
				if err := s.Truncate(tt.truncate); err != nil {
					t.Fatal(err)
				}
			}
			files, _ := filepath.Glob(filepath.Join(dir, "spool-*"))
			if got := len(files) == 1; got != tt.onDisk || len(files) > 1 {
				t.Errorf("files in the spool's folder: %v, want on disk %v", files, tt.onDisk)
			}
			got, err := io.ReadAll(io.NewSectionReader(s, 0, 1<<30))
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Errorf("read back %d bytes (%v), want %d", len(got), err, len(tt.want))
			}
			// Reading at or past the end answers io.EOF, as a file does.
			var one [1]byte
			if n, err := s.ReadAt(one[:], int64(len(tt.want))); n != 0 || !errors.Is(err, io.EOF) {
				t.Errorf("ReadAt the end = %d, %v", n, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("Close left %s: %v", f, err)
				}
			}
		})
	}
}

// TestSpoolSkipsMediaData: an MP4 or MOV upload keeps its headers, the start of its media
// data and its metadata, enough for media.Sniff and media.Probe to answer as they do on the
// whole file, however the bytes arrive and are taken back; the rest of the media data is not
// stored.
func TestSpoolSkipsMediaData(t *testing.T) {
	moovHeader := func(data []byte) int64 { return int64(bytes.Index(data, []byte("moov"))) - 4 + 3 }
	intoSkipped := func(data []byte) int64 { return int64(bytes.Index(data, []byte("mdat"))) + 4 + skipKeep + 1000 }
	files := []struct {
		name string
		o    mediatest.Options
	}{
		{"moov first", mediatest.Options{Size: 3 << 20, NoisyPadding: true}},
		{"moov at the end", mediatest.Options{Size: 3 << 20, MoovAtEnd: true}},
		{"64-bit mdat size", mediatest.Options{Size: 3 << 20, LargeSize: true, MoovAtEnd: true}},
		{"QuickTime", mediatest.Options{Size: 3 << 20, Brand: "qt  "}},
	}
	resends := []struct {
		name string
		at   func(data []byte) int64
	}{
		{"in one write", nil},
		{"resent from the middle of the moov header", moovHeader},
		{"resent from inside the skipped data", intoSkipped},
	}
	for _, f := range files {
		data := mediatest.MP4Bytes(t, f.o)
		size := int64(len(data))
		want, err := media.Probe(bytes.NewReader(data), size)
		if err != nil {
			t.Fatal(err)
		}
		// 7-byte writes near every top-level box's start split its header every way; the
		// rest goes in large writes (all of it in 7-byte writes took 90 s under -race).
		starts := topBoxStarts(t, data)
		nearHeader := func(off int64) int64 {
			for _, st := range starts {
				if off >= st-64 && off < st+64 {
					return 7
				}
			}
			return 100 << 10
		}
		pieces := []struct {
			name string
			at   func(off int64) int64
		}{
			{"in one piece", func(int64) int64 { return size }},
			{"in 7-byte pieces around the headers", nearHeader},
			{"in 100 KiB pieces", func(int64) int64 { return 100 << 10 }},
		}
		for _, r := range resends {
			for _, piece := range pieces {
				t.Run(fmt.Sprintf("%s/%s/%s", f.name, r.name, piece.name), func(t *testing.T) {
					s := NewSpool(t.TempDir(), "spool-*")
					defer s.Close()
					write := func(from int64) {
						for off := from; off < size; {
							end := min(off+piece.at(off), size)
							if n, err := s.WriteAt(data[off:end], off); err != nil || n != int(end-off) {
								t.Fatalf("WriteAt(%d bytes, %d) = %d, %v", end-off, off, n, err)
							}
							off = end
						}
					}
					write(0)
					if r.at != nil {
						at := r.at(data)
						if err := s.Truncate(at); err != nil {
							t.Fatal(err)
						}
						write(at)
					}
					if s.size != size || s.file != nil || s.stored > 200<<10 {
						t.Fatalf("size %d (want %d), stored %d bytes, on disk %v: want the media data left out", s.size, size, s.stored, s.file != nil)
					}
					got, err := media.Probe(s, size)
					if err != nil || got != want {
						t.Fatalf("Probe = %+v, %v; on the whole file %+v", got, err, want)
					}
					head := make([]byte, media.SniffLen)
					if _, err := s.ReadAt(head, 0); err != nil {
						t.Fatal(err)
					}
					if k, ok := media.Sniff(head); !ok || !k.IsVideo() {
						t.Fatalf("Sniff = %v, %v", k, ok)
					}
					// Every byte reads back as written, or fails as not kept.
					var skipped int64
					buf := make([]byte, 4096)
					for off := int64(0); off < size; off += int64(len(buf)) {
						n, err := s.ReadAt(buf, off)
						switch {
						case errors.Is(err, errSpoolSkipped):
							skipped += min(int64(len(buf)), size-off)
						case err != nil && err != io.EOF:
							t.Fatalf("ReadAt %d: %v", off, err)
						case !bytes.Equal(buf[:n], data[off:min(off+int64(len(buf)), size)]):
							t.Fatalf("bytes at %d differ", off)
						}
					}
					if skipped < size-300<<10 {
						t.Fatalf("%d of %d bytes not kept, want nearly all of the media data", skipped, size)
					}
				})
			}
		}
	}
}

// topBoxStarts lists where data's top-level boxes start.
func topBoxStarts(t *testing.T, data []byte) []int64 {
	t.Helper()
	var starts []int64
	for off := int64(0); off+8 <= int64(len(data)); {
		starts = append(starts, off)
		n := int64(binary.BigEndian.Uint32(data[off:]))
		if n == 1 {
			n = int64(binary.BigEndian.Uint64(data[off+8:]))
		}
		if n < 8 {
			t.Fatalf("box at %d has size %d", off, n)
		}
		off += n
	}
	return starts
}

// TestSpoolBoxLimit: an upload of more top-level boxes than a spool follows is kept whole from
// the first one past the limit, its media data included, and reads back as written.
func TestSpoolBoxLimit(t *testing.T) {
	var data []byte
	box := func(typ string, payload int) {
		var h [8]byte
		binary.BigEndian.PutUint32(h[:4], uint32(8+payload))
		copy(h[4:], typ)
		data = append(data, h[:]...)
		data = append(data, bytes.Repeat([]byte{byte(len(data))}, payload)...)
	}
	box("ftyp", 16)
	for range maxTopBoxes {
		box("free", 0)
	}
	box("mdat", 2*skipMin)
	s := NewSpool(t.TempDir(), "spool-*")
	defer s.Close()
	for off := 0; off < len(data); off += 4096 {
		end := min(off+4096, len(data))
		if _, err := s.WriteAt(data[off:end], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.boxes.boxes) > maxTopBoxes || s.stored != int64(len(data)) {
		t.Fatalf("following %d boxes, %d of %d bytes stored; want at most %d boxes, everything stored",
			len(s.boxes.boxes), s.stored, len(data), maxTopBoxes)
	}
	got, err := io.ReadAll(io.NewSectionReader(s, 0, int64(len(data))))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, len(data))
	}
}

// TestSpoolResumed: an upload whose every piece arrives at another process (a spool resumed
// from the state the last one saved, its bytes in blobs) keeps what one spool keeps: the probe
// answers as on the whole file, every kept byte reads back, and the blobs hold the headers
// and metadata of an MP4, not its media data; anything else whole.
func TestSpoolResumed(t *testing.T) {
	ctx := context.Background()
	noise := make([]byte, 3<<20)
	for i := range noise {
		noise[i] = byte(i*7 + i/251)
	}
	files := []struct {
		name string
		data []byte
		// maxBlobs bounds the bytes the blobs hold.
		maxBlobs int64
	}{
		{"MP4, moov first", mediatest.MP4Bytes(t, mediatest.Options{Size: 3 << 20, NoisyPadding: true}), 200 << 10},
		{"MP4, moov at the end", mediatest.MP4Bytes(t, mediatest.Options{Size: 3 << 20, MoovAtEnd: true}), 200 << 10},
		{"MP4, 64-bit mdat size", mediatest.MP4Bytes(t, mediatest.Options{Size: 3 << 20, LargeSize: true, MoovAtEnd: true}), 200 << 10},
		{"not an MP4", noise, 3 << 20},
	}
	for _, f := range files {
		data, size := f.data, int64(len(f.data))
		want, wantErr := media.Probe(bytes.NewReader(data), size)
		starts := []int64{0}
		if f.name != "not an MP4" {
			starts = topBoxStarts(t, data)
		}
		pieces := []struct {
			name string
			at   func(off int64) int64
		}{
			{"in one piece", func(int64) int64 { return size }},
			{"in 1 MiB pieces", func(int64) int64 { return 1 << 20 }},
			{"in 7-byte pieces around the headers", func(off int64) int64 {
				for _, st := range starts {
					if off >= st-32 && off < st+32 {
						return 7
					}
				}
				return 512 << 10
			}},
		}
		for _, piece := range pieces {
			t.Run(f.name+"/"+piece.name, func(t *testing.T) {
				bucket := memblob.OpenBucket(nil)
				defer bucket.Close()
				var st SpoolState
				var s *Spool
				for off := int64(0); off < size; {
					end := min(off+piece.at(off), size)
					// Another process: the state went through the record's JSON.
					b, err := json.Marshal(st)
					if err != nil {
						t.Fatal(err)
					}
					st = SpoolState{}
					if err := json.Unmarshal(b, &st); err != nil {
						t.Fatal(err)
					}
					s = ResumeSpool(ctx, bucket, st, "spool-*")
					if n, err := s.WriteAt(data[off:end], off); err != nil || n != int(end-off) {
						t.Fatalf("WriteAt(%d bytes, %d) = %d, %v", end-off, off, n, err)
					}
					if end < size {
						if st, err = s.Save(ctx, "up/"); err != nil {
							t.Fatal(err)
						}
						s.Close()
					}
					off = end
				}
				defer s.Close()
				got, err := media.Probe(s, size)
				if got != want || (err == nil) != (wantErr == nil) {
					t.Fatalf("Probe = %+v, %v; on the whole file %+v, %v", got, err, want, wantErr)
				}
				buf := make([]byte, 4096)
				for off := int64(0); off < size; off += int64(len(buf)) {
					n, err := s.ReadAt(buf, off)
					switch {
					case errors.Is(err, errSpoolSkipped):
					case err != nil && err != io.EOF:
						t.Fatalf("ReadAt %d: %v", off, err)
					case !bytes.Equal(buf[:n], data[off:min(off+int64(len(buf)), size)]):
						t.Fatalf("bytes at %d differ", off)
					}
				}
				var inBlobs int64
				it := bucket.List(&blob.ListOptions{Prefix: "up/"})
				for {
					obj, err := it.Next(ctx)
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					inBlobs += obj.Size
				}
				if inBlobs > f.maxBlobs {
					t.Errorf("the blobs hold %d bytes, want at most %d", inBlobs, f.maxBlobs)
				}
			})
		}
	}
}
