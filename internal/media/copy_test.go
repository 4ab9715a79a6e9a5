package media_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/reelay/reelay/internal/media"
)

func TestCopyHashed(t *testing.T) {
	t.Parallel()
	data := make([]byte, 3<<20+12345)
	rand.NewChaCha8([32]byte{7}).Read(data)
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		size int
		src  func(b []byte) io.Reader
	}{
		{"empty", 0, func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"one byte", 1, func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"one buffer", 256 << 10, func(b []byte) io.Reader { return bytes.NewReader(b) }},
		{"buffers and a tail", len(data), func(b []byte) io.Reader { return bytes.NewReader(b) }},
		// mime/multipart's parts hand out at most 4 KiB a read.
		{"4 KiB reads", len(data), func(b []byte) io.Reader { return &chunkedReader{b: b, n: 4096} }},
		{"one byte a read", 300 << 10, func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
		{"data with EOF", 700 << 10, func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := data[:c.size]
			var dst bytes.Buffer
			h := sha256.New()
			n, err := media.CopyHashed(&dst, c.src(want), h)
			if err != nil || n != int64(c.size) || !bytes.Equal(dst.Bytes(), want) {
				t.Fatalf("copied %d bytes (%d match: %v), err %v", n, dst.Len(), bytes.Equal(dst.Bytes(), want), err)
			}
			if sum := sha256.Sum256(want); !bytes.Equal(h.Sum(nil), sum[:]) {
				t.Fatal("hash differs from the bytes' SHA-256")
			}
		})
	}

	t.Run("source fails", func(t *testing.T) {
		t.Parallel()
		var dst bytes.Buffer
		src := io.MultiReader(bytes.NewReader(data[:1<<20]), iotest.ErrReader(boom))
		n, err := media.CopyHashed(&dst, src, sha256.New())
		if !errors.Is(err, boom) || n != 1<<20 || !bytes.Equal(dst.Bytes(), data[:1<<20]) {
			t.Fatalf("n %d, err %v", n, err)
		}
	})
	t.Run("source fails within the first buffer", func(t *testing.T) {
		t.Parallel()
		var dst bytes.Buffer
		src := io.MultiReader(bytes.NewReader(data[:100<<10]), iotest.ErrReader(boom))
		n, err := media.CopyHashed(&dst, src, sha256.New())
		if !errors.Is(err, boom) || n != 100<<10 || !bytes.Equal(dst.Bytes(), data[:100<<10]) {
			t.Fatalf("n %d, err %v", n, err)
		}
	})
	t.Run("destination fails", func(t *testing.T) {
		t.Parallel()
		dst := &failingWriter{left: 600 << 10, err: boom}
		n, err := media.CopyHashed(dst, bytes.NewReader(data), sha256.New())
		if !errors.Is(err, boom) || n != int64(dst.took) || n == 0 {
			t.Fatalf("n %d, err %v; the writer took %d bytes before failing", n, err, dst.took)
		}
	})
	t.Run("destination fails on a short source", func(t *testing.T) {
		t.Parallel()
		dst := &failingWriter{left: 10, err: boom}
		n, err := media.CopyHashed(dst, bytes.NewReader(data[:20<<10]), sha256.New())
		if !errors.Is(err, boom) || n != 0 {
			t.Fatalf("n %d, err %v", n, err)
		}
	})
}

// BenchmarkCopyHashed copies a short source (one read of the first buffer) and a long one
// (the buffers overlapped) to io.Discard while hashing them with SHA-256.
func BenchmarkCopyHashed(b *testing.B) {
	for _, size := range []int{8 << 10, 200 << 10, 8 << 20} {
		data := make([]byte, size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := media.CopyHashed(io.Discard, bytes.NewReader(data), sha256.New()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// chunkedReader hands out at most n bytes a read.
type chunkedReader struct {
	b []byte
	n int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[k:]
	return k, nil
}

// failingWriter takes writes while they fit in left bytes, then fails.
type failingWriter struct {
	left, took int
	err        error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		return 0, w.err
	}
	w.left -= len(p)
	w.took += len(p)
	return len(p), nil
}
