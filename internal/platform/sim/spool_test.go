package sim

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
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
			s := newSpool(dir, "spool-*")
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
