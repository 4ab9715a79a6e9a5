package media

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// maxBoxes bounds how many box headers one probe reads, so that a file made of millions of
// tiny boxes costs a bounded number of reads.
const maxBoxes = 100_000

// mp4Reader walks ISO-BMFF box headers over a ReaderAt. It reads box headers and the few
// small payloads it needs, and skips everything else by offset: mdat is never read.
type mp4Reader struct {
	r     io.ReaderAt
	size  int64
	boxes int
}

type mp4Box struct {
	typ        string
	start, end int64 // whole box, header included
	data       int64 // payload start
}

// children calls fn for each box between start and end, stopping at the first error.
func (m *mp4Reader) children(start, end int64, fn func(b mp4Box) error) error {
	for off := start; off < end; {
		if end-off < 8 {
			// QuickTime allows a 4-byte zero terminator at the end of some atoms.
			if end-off == 4 {
				return nil
			}
			return corrupt("%d stray bytes at offset %d", end-off, off)
		}
		m.boxes++
		if m.boxes > maxBoxes {
			return corrupt("more than %d boxes", maxBoxes)
		}
		var h [16]byte
		hl := int64(8)
		if err := readAt(m.r, h[:8], off); err != nil {
			return err
		}
		size := int64(binary.BigEndian.Uint32(h[:4]))
		typ := string(h[4:8])
		switch size {
		case 0: // box extends to the end of its container (only legal for the last one)
			size = end - off
		case 1: // 64-bit size follows the type
			if end-off < 16 {
				return corrupt("box %q at offset %d is cut off", printable(typ), off)
			}
			if err := readAt(m.r, h[8:16], off+8); err != nil {
				return err
			}
			large := binary.BigEndian.Uint64(h[8:16])
			if large > math.MaxInt64 {
				return corrupt("box %q at offset %d has an impossible size", printable(typ), off)
			}
			size, hl = int64(large), 16
		}
		if size < hl {
			return corrupt("box %q at offset %d has size %d, smaller than its header", printable(typ), off, size)
		}
		if size > end-off {
			return corrupt("box %q at offset %d needs %d bytes but only %d remain (file truncated?)", printable(typ), off, size, end-off)
		}
		if err := fn(mp4Box{typ: typ, start: off, end: off + size, data: off + hl}); err != nil {
			return err
		}
		off += size
	}
	return nil
}

// payload reads up to n bytes of b's payload (fewer when the box is shorter).
func (m *mp4Reader) payload(b mp4Box, n int) ([]byte, error) {
	if avail := b.end - b.data; int64(n) > avail {
		n = int(avail)
	}
	p := make([]byte, n)
	return p, readAt(m.r, p, b.data)
}

type mp4Track struct {
	handler       string
	width, height int // tkhd, 16.16 fixed point truncated
	rotation      int
	timescale     uint64
	duration      uint64
	codec         string
	entryW        int // sample entry size, when tkhd has none
	entryH        int
}

type mp4Movie struct {
	found       bool
	timescale   uint64
	duration    uint64
	fragmentDur uint64
	tracks      []mp4Track
}

func probeMP4(r io.ReaderAt, size int64) (Info, error) {
	m := &mp4Reader{r: r, size: size}
	var mov mp4Movie
	// Walk every top-level box, not only until moov: a box running past the end of the file
	// means the upload or download was cut short, whatever moov says.
	err := m.children(0, size, func(b mp4Box) error {
		if b.typ != "moov" {
			return nil
		}
		if mov.found {
			return corrupt("two moov boxes")
		}
		mov.found = true
		return m.moov(b, &mov)
	})
	if err != nil {
		return Info{}, err
	}
	if !mov.found {
		return Info{}, corrupt("no moov box (the file holds no movie metadata)")
	}

	var video, audio *mp4Track
	for i := range mov.tracks {
		t := &mov.tracks[i]
		switch {
		case t.handler == "vide" && video == nil:
			video = t
		case t.handler == "soun" && audio == nil:
			audio = t
		}
	}
	if video == nil {
		return Info{}, fmt.Errorf("%w: the file has no video track", ErrUnsupportedFormat)
	}

	info := Info{Width: video.width, Height: video.height, Rotation: video.rotation, VideoCodec: codecName(video.codec)}
	if info.Width == 0 || info.Height == 0 {
		info.Width, info.Height = video.entryW, video.entryH
	}
	if info.Width <= 0 || info.Height <= 0 {
		return Info{}, corrupt("video track has no picture size")
	}
	if info.Rotation == 90 || info.Rotation == 270 {
		info.Width, info.Height = info.Height, info.Width
	}
	if audio != nil {
		info.AudioCodec = codecName(audio.codec)
	}

	// The movie header's duration covers every track; fragmented files record theirs in
	// mehd instead; as a last resort the video track's own duration.
	const unknown = math.MaxUint32
	switch {
	case mov.duration != 0 && mov.duration != unknown && mov.duration != math.MaxUint64:
		info.Duration, err = ticks(mov.duration, mov.timescale)
	case mov.fragmentDur != 0:
		info.Duration, err = ticks(mov.fragmentDur, mov.timescale)
	case video.duration != 0 && video.duration != unknown && video.duration != math.MaxUint64:
		info.Duration, err = ticks(video.duration, video.timescale)
	}
	if err != nil {
		return Info{}, err
	}
	return info, nil
}

func (m *mp4Reader) moov(moov mp4Box, mov *mp4Movie) error {
	return m.children(moov.data, moov.end, func(b mp4Box) error {
		switch b.typ {
		case "mvhd":
			p, err := m.payload(b, 32)
			if err != nil {
				return err
			}
			switch {
			case len(p) >= 20 && p[0] == 0:
				mov.timescale = uint64(binary.BigEndian.Uint32(p[12:16]))
				mov.duration = uint64(binary.BigEndian.Uint32(p[16:20]))
			case len(p) >= 32 && p[0] == 1:
				mov.timescale = uint64(binary.BigEndian.Uint32(p[20:24]))
				mov.duration = binary.BigEndian.Uint64(p[24:32])
			default:
				return corrupt("mvhd box is malformed")
			}
		case "trak":
			if len(mov.tracks) >= 64 {
				return corrupt("more than 64 tracks")
			}
			var t mp4Track
			if err := m.trak(b, &t); err != nil {
				return err
			}
			mov.tracks = append(mov.tracks, t)
		case "mvex":
			return m.children(b.data, b.end, func(c mp4Box) error {
				if c.typ != "mehd" {
					return nil
				}
				p, err := m.payload(c, 12)
				if err != nil {
					return err
				}
				switch {
				case len(p) >= 8 && p[0] == 0:
					mov.fragmentDur = uint64(binary.BigEndian.Uint32(p[4:8]))
				case len(p) >= 12 && p[0] == 1:
					mov.fragmentDur = binary.BigEndian.Uint64(p[4:12])
				}
				return nil
			})
		}
		return nil
	})
}

func (m *mp4Reader) trak(trak mp4Box, t *mp4Track) error {
	return m.children(trak.data, trak.end, func(b mp4Box) error {
		switch b.typ {
		case "tkhd":
			p, err := m.payload(b, 92)
			if err != nil {
				return err
			}
			var rest []byte // from the reserved field after duration
			switch {
			case len(p) >= 84 && p[0] == 0:
				rest = p[24:]
			case len(p) >= 92 && p[0] == 1:
				rest = p[36:]
			default:
				return corrupt("tkhd box is malformed")
			}
			matrix := rest[16:52]
			t.width = int(binary.BigEndian.Uint32(rest[52:56]) >> 16)
			t.height = int(binary.BigEndian.Uint32(rest[56:60]) >> 16)
			t.rotation = matrixRotation(matrix)
		case "mdia":
			return m.mdia(b, t)
		}
		return nil
	})
}

// matrixRotation reads the rotation from a track matrix {a b u / c d v / x y w}: a and b
// are the cosine and sine of the angle in 16.16 fixed point.
func matrixRotation(mx []byte) int {
	a := float64(int32(binary.BigEndian.Uint32(mx[0:4])))
	b := float64(int32(binary.BigEndian.Uint32(mx[4:8])))
	if a == 0 && b == 0 {
		return 0
	}
	deg := math.Atan2(b, a) * 180 / math.Pi
	rot := int(math.Round(deg/90)) * 90
	return (rot%360 + 360) % 360
}

func (m *mp4Reader) mdia(mdia mp4Box, t *mp4Track) error {
	return m.children(mdia.data, mdia.end, func(b mp4Box) error {
		switch b.typ {
		case "mdhd":
			p, err := m.payload(b, 32)
			if err != nil {
				return err
			}
			switch {
			case len(p) >= 20 && p[0] == 0:
				t.timescale = uint64(binary.BigEndian.Uint32(p[12:16]))
				t.duration = uint64(binary.BigEndian.Uint32(p[16:20]))
			case len(p) >= 32 && p[0] == 1:
				t.timescale = uint64(binary.BigEndian.Uint32(p[20:24]))
				t.duration = binary.BigEndian.Uint64(p[24:32])
			default:
				return corrupt("mdhd box is malformed")
			}
		case "hdlr":
			p, err := m.payload(b, 12)
			if err != nil {
				return err
			}
			if len(p) < 12 {
				return corrupt("hdlr box is malformed")
			}
			t.handler = string(p[8:12])
		case "minf":
			return m.children(b.data, b.end, func(c mp4Box) error {
				if c.typ != "stbl" {
					return nil
				}
				return m.children(c.data, c.end, func(d mp4Box) error {
					if d.typ != "stsd" {
						return nil
					}
					return m.stsd(d, t)
				})
			})
		}
		return nil
	})
}

// stsd reads the first sample entry's format code and, for visual entries, its size.
func (m *mp4Reader) stsd(b mp4Box, t *mp4Track) error {
	p, err := m.payload(b, 44)
	if err != nil {
		return err
	}
	if len(p) < 16 || binary.BigEndian.Uint32(p[4:8]) == 0 {
		return corrupt("stsd box has no sample entry")
	}
	t.codec = string(p[12:16])
	if len(p) >= 44 {
		t.entryW = int(binary.BigEndian.Uint16(p[40:42]))
		t.entryH = int(binary.BigEndian.Uint16(p[42:44]))
	}
	return nil
}
