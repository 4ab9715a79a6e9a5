package mediatest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"testing"
)

// fill is the colour of generated images: any opaque colour would do; a recognisable one
// helps when a human looks at a thumbnail a test produced.
var fill = color.NRGBA{R: 0x2a, G: 0x7a, B: 0xe2, A: 0xff}

func solid(width, height int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = fill.R, fill.G, fill.B, fill.A
	}
	return img
}

// WriteJPEG writes a solid-colour baseline JPEG of width x height pixels.
func WriteJPEG(w io.Writer, width, height int) error {
	return jpeg.Encode(w, solid(width, height), &jpeg.Options{Quality: 80})
}

// WritePNG writes a solid-colour PNG of width x height pixels.
func WritePNG(w io.Writer, width, height int) error {
	return png.Encode(w, solid(width, height))
}

// WriteWebP writes a solid-colour lossless (VP8L) WebP of width x height pixels (each at most
// 16384). The bitstream uses single-symbol prefix codes, so every pixel costs zero bits and
// the file is 32 bytes whatever its dimensions.
func WriteWebP(w io.Writer, width, height int) error {
	if width < 1 || height < 1 || width > 16384 || height > 16384 {
		return fmt.Errorf("mediatest: WebP size %dx%d out of range", width, height)
	}
	var b lsbWriter
	b.bits(8, 0x2f) // VP8L signature
	b.bits(14, uint32(width-1))
	b.bits(14, uint32(height-1))
	b.bits(1, 0) // alpha_is_used: the image is opaque
	b.bits(3, 0) // version
	b.bits(1, 0) // no transform
	b.bits(1, 0) // no colour cache
	b.bits(1, 0) // no meta prefix codes
	// Five simple prefix codes of one symbol each: green, red, blue, alpha, distance.
	for _, sym := range []uint32{uint32(fill.G), uint32(fill.R), uint32(fill.B), uint32(fill.A)} {
		b.bits(1, 1) // simple code
		b.bits(1, 0) // one symbol
		b.bits(1, 1) // eight-bit symbol
		b.bits(8, sym)
	}
	b.bits(1, 1)
	b.bits(1, 0)
	b.bits(1, 0) // one-bit symbol
	b.bits(1, 0) // distance code 0 (never used)
	data := b.flush()

	chunk := append([]byte("VP8L"), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	chunk = append(chunk, data...)
	if len(data)%2 == 1 {
		chunk = append(chunk, 0) // RIFF chunks are padded to even sizes
	}
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(4+len(chunk)))...)
	out = append(out, "WEBP"...)
	out = append(out, chunk...)
	_, err := w.Write(out)
	return err
}

// lsbWriter packs bits least-significant first, as VP8L reads them.
type lsbWriter struct {
	buf  []byte
	acc  uint64
	nbit uint
}

func (b *lsbWriter) bits(n uint, v uint32) {
	b.acc |= uint64(v&(1<<n-1)) << b.nbit
	b.nbit += n
	for b.nbit >= 8 {
		b.buf = append(b.buf, byte(b.acc))
		b.acc >>= 8
		b.nbit -= 8
	}
}

func (b *lsbWriter) flush() []byte {
	if b.nbit > 0 {
		b.buf = append(b.buf, byte(b.acc))
		b.acc, b.nbit = 0, 0
	}
	return b.buf
}

// JPEG returns a JPEG of width x height pixels.
func JPEG(t testing.TB, width, height int) []byte {
	t.Helper()
	return imageBytes(t, width, height, WriteJPEG)
}

// PNG returns a PNG of width x height pixels.
func PNG(t testing.TB, width, height int) []byte {
	t.Helper()
	return imageBytes(t, width, height, WritePNG)
}

// WebP returns a lossless WebP of width x height pixels.
func WebP(t testing.TB, width, height int) []byte {
	t.Helper()
	return imageBytes(t, width, height, WriteWebP)
}

func imageBytes(t testing.TB, width, height int, enc func(io.Writer, int, int) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := enc(&b, width, height); err != nil {
		t.Fatalf("mediatest: %v", err)
	}
	return b.Bytes()
}

// ImageFile writes an image of the given format ("jpeg", "png" or "webp") into t.TempDir()
// and returns its path.
func ImageFile(t testing.TB, format string, width, height int) string {
	t.Helper()
	enc := map[string]func(io.Writer, int, int) error{"jpeg": WriteJPEG, "png": WritePNG, "webp": WriteWebP}[format]
	if enc == nil {
		t.Fatalf("mediatest: unknown image format %q", format)
	}
	return writeTemp(t, "image*."+format, func(w io.Writer) error { return enc(w, width, height) })
}
