package mediatest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/abema/go-mp4"
	"github.com/at-wat/ebml-go"
	"github.com/at-wat/ebml-go/webm"
)

// The generated files are checked with independent readers (abema/go-mp4, at-wat/ebml-go,
// the standard image decoders, and ffprobe when it is installed), so that a bug in the
// generator cannot hide behind the same bug in reelay's own prober.

func TestPadding(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	zeroPadded := MP4Bytes(t, Options{Size: size})
	noisy := MP4Bytes(t, Options{Size: size, NoisyPadding: true})
	if len(noisy) != len(zeroPadded) {
		t.Fatalf("noisy file %d bytes, zero-padded %d", len(noisy), len(zeroPadded))
	}
	// The padding is the run of bytes where the two files differ; outside it they agree.
	first := 0
	for first < len(noisy) && noisy[first] == zeroPadded[first] {
		first++
	}
	pad := zeroPadded[first : first+size/2]
	if !bytes.Equal(pad, make([]byte, len(pad))) {
		t.Errorf("zero padding holds other bytes")
	}
	// Noise: every byte value occurs, none much more than its share.
	var counts [256]int
	for _, b := range noisy[first : first+size/2] {
		counts[b]++
	}
	for v, n := range counts {
		if n == 0 || n > 2*size/2/256 {
			t.Fatalf("byte %#x occurs %d times in %d bytes of noisy padding", v, n, size/2)
		}
	}
	if again := MP4Bytes(t, Options{Size: size, NoisyPadding: true}); !bytes.Equal(again, noisy) {
		t.Errorf("noisy padding differs between two files of the same options")
	}
}

func TestMP4ReadByGoMP4(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		o    Options
	}{
		{"default", Options{}},
		{"mov", Options{Brand: "qt  ", Duration: 1500 * time.Millisecond, Width: 720, Height: 1280}},
		{"cropped size", Options{Duration: 333 * time.Millisecond, Width: 100, Height: 58}},
		{"moov at end 64-bit mdat", Options{Duration: 3 * time.Second, Width: 640, Height: 360, MoovAtEnd: true, LargeSize: true}},
		{"padded", Options{Duration: time.Second, Width: 320, Height: 568, Size: 3 << 20}},
		{"noisy padding, moov at end", Options{Duration: time.Second, Width: 320, Height: 568, Size: 3 << 20, NoisyPadding: true, MoovAtEnd: true}},
		{"single frame", Options{Duration: 10 * time.Millisecond, Width: 16, Height: 16}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := MP4Bytes(t, c.o)
			o := c.o.withDefaults()
			if c.o.Size > 0 && (int64(len(data)) < c.o.Size-64 || int64(len(data)) > c.o.Size+64) {
				t.Errorf("size %d, want about %d", len(data), c.o.Size)
			}
			info, err := mp4.Probe(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("go-mp4 probe: %v", err)
			}
			if string(info.MajorBrand[:]) != o.Brand {
				t.Errorf("brand %q, want %q", info.MajorBrand, o.Brand)
			}
			if got := time.Duration(info.Duration) * time.Second / time.Duration(info.Timescale); got != o.Duration.Truncate(time.Millisecond) {
				t.Errorf("movie duration %v, want %v", got, o.Duration)
			}
			if len(info.Tracks) != 1 {
				t.Fatalf("%d tracks", len(info.Tracks))
			}
			tr := info.Tracks[0]
			if tr.Codec != mp4.CodecAVC1 || tr.AVC == nil {
				t.Fatalf("codec %v", tr.Codec)
			}
			if int(tr.AVC.Width) != o.Width || int(tr.AVC.Height) != o.Height {
				t.Errorf("sample entry %dx%d, want %dx%d", tr.AVC.Width, tr.AVC.Height, o.Width, o.Height)
			}
			if got := time.Duration(tr.Duration) * time.Second / time.Duration(tr.Timescale); got != o.Duration.Truncate(time.Millisecond) {
				t.Errorf("track duration %v, want %v", got, o.Duration)
			}
			var sum uint64
			for _, s := range tr.Samples {
				sum += uint64(s.TimeDelta)
			}
			if sum != tr.Duration {
				t.Errorf("stts sums to %d, mdhd says %d", sum, tr.Duration)
			}
			// Every sample the table points at must be one complete AVCC NAL unit in mdat.
			if len(tr.Chunks) != 1 {
				t.Fatalf("%d chunks", len(tr.Chunks))
			}
			off := tr.Chunks[0].DataOffset
			for i, s := range tr.Samples {
				if off+uint64(s.Size) > uint64(len(data)) {
					t.Fatalf("sample %d past end of file", i)
				}
				sample := data[off : off+uint64(s.Size)]
				if n := binary.BigEndian.Uint32(sample); n != s.Size-4 {
					t.Fatalf("sample %d: NAL length %d in a %d-byte sample", i, n, s.Size)
				}
				typ := sample[4] & 0x1F
				if (i == 0) != (typ == 5) || (i > 0 && typ != 1) {
					t.Fatalf("sample %d: NAL type %d", i, typ)
				}
				off += uint64(s.Size)
			}
			w, h := spsSize(t, tr.AVC, data)
			if w != o.Width || h != o.Height {
				t.Errorf("SPS says %dx%d, want %dx%d", w, h, o.Width, o.Height)
			}
			// The tkhd box carries the presentation size in 16.16 fixed point.
			boxes, err := mp4.ExtractBoxWithPayload(bytes.NewReader(data), nil, mp4.BoxPath{mp4.BoxTypeMoov(), mp4.BoxTypeTrak(), mp4.BoxTypeTkhd()})
			if err != nil || len(boxes) != 1 {
				t.Fatalf("tkhd: %v (%d boxes)", err, len(boxes))
			}
			tkhd := boxes[0].Payload.(*mp4.Tkhd)
			if int(tkhd.Width>>16) != o.Width || int(tkhd.Height>>16) != o.Height {
				t.Errorf("tkhd %dx%d", tkhd.Width>>16, tkhd.Height>>16)
			}
		})
	}
}

// spsSize decodes the frame size from the SPS in the avcC box.
func spsSize(t *testing.T, _ *mp4.AVCDecConfigInfo, data []byte) (int, int) {
	t.Helper()
	boxes, err := mp4.ExtractBoxWithPayload(bytes.NewReader(data), nil, mp4.BoxPath{
		mp4.BoxTypeMoov(), mp4.BoxTypeTrak(), mp4.BoxTypeMdia(), mp4.BoxTypeMinf(), mp4.BoxTypeStbl(),
		mp4.BoxTypeStsd(), mp4.StrToBoxType("avc1"), mp4.StrToBoxType("avcC")})
	if err != nil || len(boxes) != 1 {
		t.Fatalf("avcC: %v", err)
	}
	avcC := boxes[0].Payload.(*mp4.AVCDecoderConfiguration)
	sps := avcC.SequenceParameterSets[0].NALUnit
	// Drop the NAL header and emulation-prevention bytes.
	var rbsp []byte
	zeros := 0
	for _, c := range sps[1:] {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		rbsp = append(rbsp, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	r := &bitReader{b: rbsp}
	r.u(8)
	r.u(8)
	r.u(8)
	r.ue()
	r.ue()
	if r.ue() != 2 {
		t.Fatal("poc type")
	}
	r.ue()
	r.u(1)
	mbw, mbh := r.ue()+1, r.ue()+1
	if r.u(1) != 1 {
		t.Fatal("frame_mbs_only")
	}
	r.u(1)
	var cl, cr, ct, cb int
	if r.u(1) == 1 {
		cl, cr, ct, cb = r.ue(), r.ue(), r.ue(), r.ue()
	}
	if r.u(1) != 0 {
		t.Fatal("vui")
	}
	if r.u(1) != 1 {
		t.Fatal("no stop bit where expected")
	}
	return mbw*16 - 2*(cl+cr), mbh*16 - 2*(ct+cb)
}

type bitReader struct {
	b   []byte
	pos int
}

func (r *bitReader) u(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		v = v<<1 | int(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bitReader) ue() int {
	z := 0
	for r.u(1) == 0 {
		z++
	}
	return 1<<z - 1 + r.u(z)
}

func TestWebMReadByEBMLGo(t *testing.T) {
	t.Parallel()
	cases := []Options{
		{},
		{Duration: 12345 * time.Millisecond, Width: 720, Height: 1280},
		{Duration: time.Second, Width: 64, Height: 64, Size: 2 << 20},
	}
	for _, o := range cases {
		t.Run(strconv.Itoa(o.Width), func(t *testing.T) {
			t.Parallel()
			data := WebMBytes(t, o)
			o := o.withDefaults()
			var doc struct {
				Header  webm.EBMLHeader `ebml:"EBML"`
				Segment webm.Segment    `ebml:"Segment"`
			}
			if err := ebml.Unmarshal(bytes.NewReader(data), &doc, ebml.WithIgnoreUnknown(true)); err != nil {
				t.Fatalf("ebml-go: %v", err)
			}
			if doc.Header.DocType != "webm" {
				t.Errorf("doctype %q", doc.Header.DocType)
			}
			info := doc.Segment.Info
			if got := time.Duration(info.Duration * float64(info.TimecodeScale)); got != o.Duration {
				t.Errorf("duration %v, want %v", got, o.Duration)
			}
			tr := doc.Segment.Tracks.TrackEntry
			if len(tr) != 1 || tr[0].Video == nil || tr[0].CodecID != "V_VP8" {
				t.Fatalf("tracks %+v", tr)
			}
			if int(tr[0].Video.PixelWidth) != o.Width || int(tr[0].Video.PixelHeight) != o.Height {
				t.Errorf("size %dx%d", tr[0].Video.PixelWidth, tr[0].Video.PixelHeight)
			}
			frames := 0
			for _, c := range doc.Segment.Cluster {
				frames += len(c.SimpleBlock)
			}
			if frames != o.frameCount() {
				t.Errorf("%d frames, want %d", frames, o.frameCount())
			}
			if o.Size > 0 && (int64(len(data)) < o.Size-16 || int64(len(data)) > o.Size+16) {
				t.Errorf("size %d, want about %d", len(data), o.Size)
			}
		})
	}
}

func TestImagesDecode(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"jpeg", "png"} {
		cfg, got, err := image.DecodeConfig(bytes.NewReader(imageBytes(t, 33, 17, map[string]func(io.Writer, int, int) error{"jpeg": WriteJPEG, "png": WritePNG}[format])))
		if err != nil || got != format || cfg.Width != 33 || cfg.Height != 17 {
			t.Errorf("%s: %v %s %dx%d", format, err, got, cfg.Width, cfg.Height)
		}
	}
	// A lossless WebP is 12 bytes of VP8L whatever its size; this is the 37x5 file, checked
	// once against golang.org/x/image/webp (which decodes it as 37x5 of the fill colour).
	want := []byte("RIFF\x18\x00\x00\x00WEBPVP8L\x0c\x00\x00\x00\x2f\x24\x00\x01\x00\xa8\x5e\x55\x2a\xde\xff\x00")
	if got := WebP(t, 37, 5); !bytes.Equal(got, want) {
		t.Errorf("webp bytes changed:\n%x\n%x", got, want)
	}
}

func TestStreamingReaderMatchesWriter(t *testing.T) {
	t.Parallel()
	o := Options{Duration: time.Second, Width: 128, Height: 256, Size: 1 << 20}
	rc := MP4Reader(o)
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, MP4Bytes(t, o)) {
		t.Error("MP4Reader differs from WriteMP4")
	}
	rc = WebMReader(o)
	got, _ = io.ReadAll(rc)
	if !bytes.Equal(got, WebMBytes(t, o)) {
		t.Error("WebMReader differs from WriteWebM")
	}
}

// TestFFprobe checks the files with ffprobe when it is installed.
func TestFFprobe(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("ffprobe not installed")
	}
	o := Options{Duration: 2500 * time.Millisecond, Width: 360, Height: 640}
	for _, path := range []string{MP4(t, o), MP4(t, Options{Duration: o.Duration, Width: 360, Height: 640, Brand: "qt  ", MoovAtEnd: true}), WebM(t, o)} {
		out, err := exec.Command("ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams", path).Output()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var res struct {
			Format  struct{ Duration string }
			Streams []struct{ Width, Height int }
		}
		if err := json.Unmarshal(out, &res); err != nil || len(res.Streams) != 1 {
			t.Fatalf("%s: %v %s", path, err, out)
		}
		d, _ := strconv.ParseFloat(res.Format.Duration, 64)
		if time.Duration(d*float64(time.Second)).Round(10*time.Millisecond) != o.Duration || res.Streams[0].Width != 360 || res.Streams[0].Height != 640 {
			t.Errorf("%s: ffprobe says %s", path, out)
		}
	}
}

func TestFilesLandInTempDir(t *testing.T) {
	t.Parallel()
	for _, p := range []string{MP4(t, Options{}), MP4(t, Options{Brand: "qt  "}), WebM(t, Options{}), ImageFile(t, "webp", 2, 2)} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}
