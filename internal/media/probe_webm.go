package media

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"
)

// Matroska element IDs the WebM probe reads.
const (
	mkvEBML          = 0x1A45DFA3
	mkvDocType       = 0x4282
	mkvSegment       = 0x18538067
	mkvSeekHead      = 0x114D9B74
	mkvSeek          = 0x4DBB
	mkvSeekID        = 0x53AB
	mkvSeekPosition  = 0x53AC
	mkvInfo          = 0x1549A966
	mkvTimecodeScale = 0x2AD7B1
	mkvDuration      = 0x4489
	mkvTracks        = 0x1654AE6B
	mkvTrackEntry    = 0xAE
	mkvTrackType     = 0x83
	mkvCodecID       = 0x86
	mkvVideo         = 0xE0
	mkvPixelWidth    = 0xB0
	mkvPixelHeight   = 0xBA
	mkvDefaultDur    = 0x23E383 // nanoseconds per frame
	mkvAudio         = 0xE1
	mkvSamplingFreq  = 0xB5
	mkvOutputFreq    = 0x78B5 // the rate that plays, when SBR doubles the coded one
	mkvChannels      = 0x9F
	mkvCluster       = 0x1F43B675
)

// maxMasterBytes bounds the Info, Tracks and SeekHead elements the probe reads into memory;
// real ones are a few hundred bytes (Tracks with codec private data a few kilobytes).
const maxMasterBytes = 1 << 20

type ebmlElement struct {
	id         uint32
	start      int64
	data       int64
	size       uint64 // unknownSize when not recorded
	headerSize int
}

// ebmlHeader reads the element header at off, which must end by end.
func ebmlHeader(r io.ReaderAt, off, end int64) (ebmlElement, error) {
	var h [12]byte
	n := int64(len(h))
	if end-off < n {
		n = end - off
	}
	if n < 2 {
		return ebmlElement{}, corrupt("element header at offset %d is cut off", off)
	}
	if err := readAt(r, h[:n], off); err != nil {
		return ebmlElement{}, err
	}
	id, il := readElementID(h[:n])
	if il == 0 {
		return ebmlElement{}, corrupt("bad element ID at offset %d", off)
	}
	size, sl := readVint(h[il:n])
	if sl == 0 {
		if n < int64(len(h)) {
			return ebmlElement{}, corrupt("element header at offset %d is cut off (file truncated?)", off)
		}
		return ebmlElement{}, corrupt("bad element size at offset %d", off)
	}
	e := ebmlElement{id: id, start: off, data: off + int64(il+sl), size: size, headerSize: il + sl}
	if size != unknownSize && (size > uint64(math.MaxInt64) || int64(size) > end-e.data) {
		return ebmlElement{}, corrupt("element %#x at offset %d needs %d bytes but only %d remain (file truncated?)", id, off, size, end-e.data)
	}
	return e, nil
}

// readElement reads a small element's payload into memory.
func readElement(r io.ReaderAt, e ebmlElement) ([]byte, error) {
	if e.size == unknownSize || e.size > maxMasterBytes {
		return nil, corrupt("element %#x at offset %d is too large to be what it claims", e.id, e.start)
	}
	p := make([]byte, e.size)
	return p, readAt(r, p, e.data)
}

// eachChild calls fn for each child element inside an in-memory payload.
func eachChild(p []byte, fn func(id uint32, data []byte) error) error {
	for len(p) > 0 {
		id, il := readElementID(p)
		if il == 0 {
			return corrupt("bad element ID")
		}
		size, sl := readVint(p[il:])
		if sl == 0 || size == unknownSize || size > uint64(len(p)-il-sl) {
			return corrupt("element %#x does not fit in its parent", id)
		}
		data := p[il+sl : il+sl+int(size)]
		if err := fn(id, data); err != nil {
			return err
		}
		p = p[il+sl+int(size):]
	}
	return nil
}

func ebmlUint(p []byte) (uint64, error) {
	if len(p) > 8 {
		return 0, corrupt("integer of %d bytes", len(p))
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

func ebmlFloat(p []byte) (float64, error) {
	switch len(p) {
	case 0:
		return 0, nil
	case 4:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(p))), nil
	case 8:
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	}
	return 0, corrupt("float of %d bytes", len(p))
}

type webmTrack struct {
	typ           uint64
	codec         string
	width         uint64
	height        uint64
	frameNS       uint64 // DefaultDuration
	rate, outRate float64
	channels      uint64
}

type webmState struct {
	haveInfo, haveTracks bool
	scale                uint64
	duration             float64
	tracks               []webmTrack
	seeks                map[uint32]int64 // element ID -> position relative to segment data
}

func probeWebM(r io.ReaderAt, size int64) (Info, error) {
	hdr, err := ebmlHeader(r, 0, size)
	if err != nil {
		return Info{}, err
	}
	if hdr.id != mkvEBML || hdr.size == unknownSize {
		return Info{}, corrupt("no EBML header")
	}
	p, err := readElement(r, hdr)
	if err != nil {
		return Info{}, err
	}
	docType := ""
	if err := eachChild(p, func(id uint32, data []byte) error {
		if id == mkvDocType {
			docType = string(data)
		}
		return nil
	}); err != nil {
		return Info{}, err
	}
	if docType != "webm" && docType != "webm\x00" {
		return Info{}, fmt.Errorf("%w: Matroska document type %q is not WebM", ErrUnsupportedFormat, printable(docType))
	}

	// The Segment follows the header (possibly after Void elements).
	off := hdr.data + int64(hdr.size)
	var seg ebmlElement
	for {
		if off >= size {
			return Info{}, corrupt("no Segment element")
		}
		e, err := ebmlHeader(r, off, size)
		if err != nil {
			return Info{}, err
		}
		if e.id == mkvSegment {
			seg = e
			break
		}
		if e.size == unknownSize {
			return Info{}, corrupt("element %#x of unknown size before the Segment", e.id)
		}
		off = e.data + int64(e.size)
	}
	segEnd := size // a live recording leaves the Segment size unknown: it runs to the end
	if seg.size != unknownSize {
		segEnd = seg.data + int64(seg.size)
	}

	st := &webmState{scale: 1_000_000}
	if err := st.scan(r, seg.data, segEnd); err != nil {
		return Info{}, err
	}
	// Info or Tracks after the first Cluster (rare, but legal): follow the SeekHead.
	for _, id := range []uint32{mkvInfo, mkvTracks} {
		have := st.haveInfo
		if id == mkvTracks {
			have = st.haveTracks
		}
		pos, ok := st.seeks[id]
		if have || !ok {
			continue
		}
		at := seg.data + pos
		if pos < 0 || at >= segEnd {
			return Info{}, corrupt("SeekHead points outside the Segment")
		}
		e, err := ebmlHeader(r, at, segEnd)
		if err != nil {
			return Info{}, err
		}
		if e.id != id {
			return Info{}, corrupt("SeekHead points at element %#x, not %#x", e.id, id)
		}
		if err := st.element(r, e); err != nil {
			return Info{}, err
		}
	}
	if !st.haveTracks {
		return Info{}, corrupt("no Tracks element before the media data")
	}

	var info Info
	var video, audio *webmTrack
	for i := range st.tracks {
		t := &st.tracks[i]
		switch {
		case t.typ == 1 && video == nil:
			video = t
		case t.typ == 2 && audio == nil:
			audio = t
		}
	}
	if video == nil {
		return Info{}, fmt.Errorf("%w: the file has no video track", ErrUnsupportedFormat)
	}
	if video.width == 0 || video.height == 0 || video.width > 1<<20 || video.height > 1<<20 {
		return Info{}, corrupt("video track size %dx%d", video.width, video.height)
	}
	info.Width, info.Height = int(video.width), int(video.height)
	info.VideoCodec = codecName(video.codec)
	if video.frameNS > 0 {
		info.FrameRate = roundRate(1e9 / float64(video.frameNS))
		info.MaxFrameRate = info.FrameRate
	}
	if audio != nil {
		info.AudioCodec = codecName(audio.codec)
		rate := audio.rate
		if audio.outRate > 0 {
			rate = audio.outRate
		}
		if rate > 0 && rate < 1e7 {
			info.AudioSampleRate = int(math.Round(rate))
		}
		if audio.channels < 256 {
			info.AudioChannels = int(audio.channels)
		}
	}
	if st.duration != 0 {
		ns := st.duration * float64(st.scale)
		if math.IsNaN(ns) || ns < 0 || ns > float64(math.MaxInt64/2) {
			return Info{}, corrupt("duration %v is implausible", st.duration)
		}
		info.Duration = time.Duration(math.Round(ns))
	}
	return info, nil
}

// scan walks the Segment's top-level elements from off, reading SeekHead, Info and Tracks,
// and stops at the first Cluster once it has Info and Tracks (everything after is media).
func (st *webmState) scan(r io.ReaderAt, off, end int64) error {
	for n := 0; off < end; n++ {
		if n > maxBoxes {
			return corrupt("more than %d elements", maxBoxes)
		}
		if end-off < 2 {
			return nil // trailing padding
		}
		e, err := ebmlHeader(r, off, end)
		if err != nil {
			return err
		}
		if e.id == mkvCluster {
			return nil
		}
		if err := st.element(r, e); err != nil {
			return err
		}
		if st.haveInfo && st.haveTracks {
			return nil
		}
		if e.size == unknownSize {
			return corrupt("element %#x at offset %d has unknown size", e.id, e.start)
		}
		off = e.data + int64(e.size)
	}
	return nil
}

// element reads one Segment child that matters to the probe.
func (st *webmState) element(r io.ReaderAt, e ebmlElement) error {
	switch e.id {
	case mkvSeekHead:
		p, err := readElement(r, e)
		if err != nil {
			return err
		}
		if st.seeks == nil {
			st.seeks = map[uint32]int64{}
		}
		return eachChild(p, func(id uint32, data []byte) error {
			if id != mkvSeek {
				return nil
			}
			var sid uint32
			var pos uint64
			if err := eachChild(data, func(id uint32, v []byte) error {
				var err error
				switch id {
				case mkvSeekID:
					if len(v) <= 4 {
						for _, c := range v {
							sid = sid<<8 | uint32(c)
						}
					}
				case mkvSeekPosition:
					pos, err = ebmlUint(v)
				}
				return err
			}); err != nil {
				return err
			}
			if pos < math.MaxInt64/2 {
				st.seeks[sid] = int64(pos)
			}
			return nil
		})
	case mkvInfo:
		p, err := readElement(r, e)
		if err != nil {
			return err
		}
		st.haveInfo = true
		return eachChild(p, func(id uint32, data []byte) error {
			var err error
			switch id {
			case mkvTimecodeScale:
				st.scale, err = ebmlUint(data)
				if err == nil && st.scale == 0 {
					err = corrupt("TimecodeScale is zero")
				}
			case mkvDuration:
				st.duration, err = ebmlFloat(data)
			}
			return err
		})
	case mkvTracks:
		p, err := readElement(r, e)
		if err != nil {
			return err
		}
		st.haveTracks = true
		return eachChild(p, func(id uint32, data []byte) error {
			if id != mkvTrackEntry {
				return nil
			}
			var t webmTrack
			err := eachChild(data, func(id uint32, v []byte) error {
				var err error
				switch id {
				case mkvTrackType:
					t.typ, err = ebmlUint(v)
				case mkvCodecID:
					t.codec = string(v)
				case mkvDefaultDur:
					t.frameNS, err = ebmlUint(v)
				case mkvAudio:
					err = eachChild(v, func(id uint32, v []byte) error {
						var err error
						switch id {
						case mkvSamplingFreq:
							t.rate, err = ebmlFloat(v)
						case mkvOutputFreq:
							t.outRate, err = ebmlFloat(v)
						case mkvChannels:
							t.channels, err = ebmlUint(v)
						}
						return err
					})
				case mkvVideo:
					err = eachChild(v, func(id uint32, v []byte) error {
						var err error
						switch id {
						case mkvPixelWidth:
							t.width, err = ebmlUint(v)
						case mkvPixelHeight:
							t.height, err = ebmlUint(v)
						}
						return err
					})
				}
				return err
			})
			if err != nil {
				return err
			}
			if len(st.tracks) >= 64 {
				return corrupt("more than 64 tracks")
			}
			st.tracks = append(st.tracks, t)
			return nil
		})
	}
	return nil
}
