package media

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
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
	entry         mp4Box // the first sample entry, read further for an audio track
	hasEntry      bool
	editList      bool // a non-trivial edit list (see Info.EditList)
	// From the time-to-sample table (stts): the number of samples and the media time they
	// span, both without the last sample, and the shortest sample duration before it.
	samples, span, minDelta uint64
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
	var mdatSeen, moovAfterMdat bool
	// Walk every top-level box, not only until moov: a box running past the end of the file
	// means the upload or download was cut short, whatever moov says.
	err := m.children(0, size, func(b mp4Box) error {
		if b.typ == "mdat" {
			mdatSeen = true
		}
		if b.typ != "moov" {
			return nil
		}
		moovAfterMdat = mdatSeen
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
	info.MoovAfterMdat = moovAfterMdat
	for _, t := range mov.tracks {
		info.EditList = info.EditList || t.editList
	}
	if video.timescale > 0 && video.samples > 0 && video.span > 0 {
		info.FrameRate = roundRate(float64(video.samples) * float64(video.timescale) / float64(video.span))
	}
	if video.timescale > 0 && video.minDelta > 0 {
		info.MaxFrameRate = roundRate(float64(video.timescale) / float64(video.minDelta))
	}
	if video.hasEntry {
		info.VideoProfile = m.videoProfile(video.entry)
	}
	if audio != nil {
		info.AudioCodec = codecName(audio.codec)
		if audio.hasEntry {
			if err := m.audioEntry(audio.entry, &info); err != nil {
				return Info{}, err
			}
		}
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
		case "edts":
			return m.children(b.data, b.end, func(c mp4Box) error {
				if c.typ != "elst" {
					return nil
				}
				return m.elst(c, t)
			})
		}
		return nil
	})
}

// elst marks t when its edit list does more than the one edit encoders write to skip codec
// delay: more than one edit, an empty edit (media time -1, which delays the start), or a
// rate other than 1.
func (m *mp4Reader) elst(b mp4Box, t *mp4Track) error {
	p, err := m.payload(b, 28)
	if err != nil {
		return err
	}
	if len(p) < 8 {
		return corrupt("elst box is malformed")
	}
	n := binary.BigEndian.Uint32(p[4:8])
	switch {
	case n == 0:
		return nil
	case n > 1:
		t.editList = true
		return nil
	}
	var mediaTime int64
	var rate int16
	switch {
	case p[0] == 0 && len(p) >= 20:
		mediaTime = int64(int32(binary.BigEndian.Uint32(p[12:16])))
		rate = int16(binary.BigEndian.Uint16(p[16:18]))
	case p[0] == 1 && len(p) >= 28:
		mediaTime = int64(binary.BigEndian.Uint64(p[16:24]))
		rate = int16(binary.BigEndian.Uint16(p[24:26]))
	default:
		return corrupt("elst box is malformed")
	}
	if mediaTime < 0 || rate != 1 {
		t.editList = true
	}
	return nil
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
					switch d.typ {
					case "stsd":
						return m.stsd(d, t)
					case "stts":
						return m.stts(d, t)
					}
					return nil
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
	if size := int64(binary.BigEndian.Uint32(p[8:12])); size >= 8 && b.data+8+size <= b.end {
		t.entry = mp4Box{typ: t.codec, start: b.data + 8, end: b.data + 8 + size, data: b.data + 16}
		t.hasEntry = true
	}
	if len(p) >= 44 {
		t.entryW = int(binary.BigEndian.Uint16(p[40:42]))
		t.entryH = int(binary.BigEndian.Uint16(p[42:44]))
	}
	return nil
}

// sttsChunk is how many bytes of a time-to-sample table are read at a time: the table of a
// long variable-rate video can be megabytes, and is read through without holding it.
const sttsChunk = 64 << 10

// stts reads the time-to-sample table: how many samples there are, the media time they
// span and the shortest sample duration, each without the last sample, which writers
// shorten or lengthen to end the track on time and which would skew both rates.
func (m *mp4Reader) stts(b mp4Box, t *mp4Track) error {
	hdr, err := m.payload(b, 8)
	if err != nil {
		return err
	}
	if len(hdr) < 8 {
		return corrupt("stts box is malformed")
	}
	n := int64(binary.BigEndian.Uint32(hdr[4:8]))
	if n*8 > b.end-b.data-8 {
		return corrupt("stts box lists %d entries but holds %d bytes", n, b.end-b.data-8)
	}
	var samples, span, minDelta uint64
	buf := make([]byte, min(n*8, sttsChunk))
	for i, off := int64(0), b.data+8; i < n; {
		chunk := buf[:min(int64(len(buf)), (n-i)*8)]
		if err := readAt(m.r, chunk, off); err != nil {
			return err
		}
		for e := 0; e+8 <= len(chunk); e, i = e+8, i+1 {
			count := uint64(binary.BigEndian.Uint32(chunk[e : e+4]))
			delta := uint64(binary.BigEndian.Uint32(chunk[e+4 : e+8]))
			if i == n-1 && count > 0 {
				count-- // the last sample
			}
			if count == 0 {
				continue
			}
			if count*delta > math.MaxInt64-span { // each product fits; their sum might not
				return corrupt("stts box spans an implausible time")
			}
			samples += count
			span += count * delta
			if delta > 0 && (minDelta == 0 || delta < minDelta) {
				minDelta = delta
			}
		}
		off += int64(len(chunk))
	}
	t.samples, t.span, t.minDelta = samples, span, minDelta
	return nil
}

// aacRates are the sampling frequencies of an AAC AudioSpecificConfig by index (ISO/IEC
// 14496-3); index 15 means the rate follows explicitly.
var aacRates = [...]int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}

// audioEntry reads the channel count and sample rate of an audio sample entry: the fields
// of the entry itself (ISO-BMFF, QuickTime sound description versions 0 to 2), then, for
// MPEG-4 audio, the decoder configuration in esds, which is what a decoder uses and the only
// place a rate above 65,535 Hz fits in a version 0 entry. It also tells MP3 from AAC, since
// both are "mp4a" entries.
func (m *mp4Reader) audioEntry(e mp4Box, info *Info) error {
	p, err := m.payload(e, 64)
	if err != nil {
		return err
	}
	if len(p) < 28 {
		return nil // not an audio sample entry; nothing more to learn
	}
	children := int64(28)
	info.AudioChannels = int(binary.BigEndian.Uint16(p[16:18]))
	info.AudioSampleRate = int(binary.BigEndian.Uint32(p[24:28]) >> 16)
	switch binary.BigEndian.Uint16(p[8:10]) { // QuickTime sound description version
	case 1:
		children = 44
	case 2:
		if len(p) < 64 {
			return corrupt("version 2 sound description is cut off")
		}
		children = 64
		rate := math.Float64frombits(binary.BigEndian.Uint64(p[32:40]))
		if rate > 0 && rate < 1e7 {
			info.AudioSampleRate = int(math.Round(rate))
		}
		info.AudioChannels = int(binary.BigEndian.Uint32(p[40:44]))
	}
	if e.typ != "mp4a" || e.data+children > e.end {
		return nil
	}
	esds, ok, err := m.find(e.data+children, e.end, "esds", "wave")
	if errors.Is(err, ErrCorrupt) {
		return nil // odd extensions after the entry's fields: its own fields are what we know
	}
	if err != nil || !ok {
		return err
	}
	d, err := m.payload(esds, 512)
	if err != nil {
		return err
	}
	oti, asc := decoderConfig(d)
	switch oti {
	case 0x69, 0x6B: // MPEG-2 and MPEG-1 audio layers: MP3 in an mp4a entry
		info.AudioCodec = "mp3"
	case 0x40, 0x66, 0x67, 0x68: // MPEG-4 audio, MPEG-2 AAC profiles
		if rate, ch := audioSpecificConfig(asc); rate > 0 {
			info.AudioSampleRate = rate
			if ch > 0 {
				info.AudioChannels = ch
			}
		}
	}
	return nil
}

// visualEntryFields is the size of a visual sample entry's own fields, after which its boxes
// (the decoder configuration) begin.
const visualEntryFields = 78

// videoProfile reads the profile from a visual sample entry's decoder configuration: avcC
// (H.264), hvcC (HEVC) or vpcC (VP9). "" when there is none or it cannot be read.
func (m *mp4Reader) videoProfile(e mp4Box) string {
	if e.data+visualEntryFields >= e.end {
		return ""
	}
	for _, typ := range []string{"avcC", "hvcC", "vpcC"} {
		b, ok, err := m.find(e.data+visualEntryFields, e.end, typ)
		if err != nil || !ok {
			continue
		}
		p, err := m.payload(b, 8)
		if err != nil {
			return ""
		}
		return profileName(typ, p)
	}
	return ""
}

// h264Profiles names AVCProfileIndication values (ISO/IEC 14496-10, Annex A).
var h264Profiles = map[byte]string{66: "Baseline", 77: "Main", 88: "Extended", 100: "High", 110: "High 10",
	122: "High 4:2:2", 244: "High 4:4:4 Predictive"}

// hevcProfiles names general_profile_idc values (ITU-T H.265, Annex A).
var hevcProfiles = map[byte]string{1: "Main", 2: "Main 10", 3: "Main Still Picture", 4: "Rext"}

// profileName names the profile a decoder configuration record p of box type typ declares.
func profileName(typ string, p []byte) string {
	switch {
	case typ == "avcC" && len(p) >= 3:
		if p[1] == 66 && p[2]&0x40 != 0 { // constraint_set1_flag
			return "Constrained Baseline"
		}
		return h264Profiles[p[1]]
	case typ == "hvcC" && len(p) >= 2:
		return hevcProfiles[p[1]&0x1f]
	case typ == "vpcC" && len(p) >= 5 && p[4] <= 3: // a full box: version and flags first
		return "Profile " + strconv.Itoa(int(p[4]))
	}
	return ""
}

// find looks for a box of type typ between start and end, descending into the container
// types given by into (QuickTime puts esds inside a wave box).
func (m *mp4Reader) find(start, end int64, typ string, into ...string) (mp4Box, bool, error) {
	var found mp4Box
	var ok bool
	errFound := errors.New("found")
	err := m.children(start, end, func(b mp4Box) error {
		if b.typ == typ {
			found, ok = b, true
			return errFound
		}
		for _, c := range into {
			if b.typ == c {
				if f, o, err := m.find(b.data, b.end, typ); err != nil || o {
					found, ok = f, o
					if err == nil {
						err = errFound
					}
					return err
				}
			}
		}
		return nil
	})
	if err == errFound {
		err = nil
	}
	return found, ok, err
}

// descriptor splits an MPEG-4 descriptor (ISO/IEC 14496-1) off p: its tag, its body, and
// what follows it.
func descriptor(p []byte) (tag byte, body, rest []byte, ok bool) {
	if len(p) < 2 {
		return 0, nil, nil, false
	}
	tag = p[0]
	var n, i int
	for i = 1; i < len(p) && i <= 4; i++ {
		n = n<<7 | int(p[i]&0x7f)
		if p[i]&0x80 == 0 {
			break
		}
	}
	if i >= len(p) || i > 4 || n > len(p)-i-1 {
		return 0, nil, nil, false
	}
	return tag, p[i+1 : i+1+n], p[i+1+n:], true
}

// decoderConfig reads an esds payload (version and flags, then an ES descriptor) and returns
// the object type indication and the decoder-specific information (for AAC, the
// AudioSpecificConfig). Anything malformed gives zero values: the details are a bonus.
func decoderConfig(d []byte) (oti byte, asc []byte) {
	if len(d) < 4 {
		return 0, nil
	}
	tag, es, _, ok := descriptor(d[4:])
	if !ok || tag != 0x03 || len(es) < 3 {
		return 0, nil
	}
	flags := es[2]
	es = es[3:]
	if flags&0x80 != 0 { // dependsOn_ES_ID
		es = es[min(2, len(es)):]
	}
	if flags&0x40 != 0 && len(es) > 0 { // URL
		es = es[min(1+int(es[0]), len(es)):]
	}
	if flags&0x20 != 0 { // OCR_ES_Id
		es = es[min(2, len(es)):]
	}
	for len(es) > 0 {
		tag, body, rest, ok := descriptor(es)
		if !ok {
			return 0, nil
		}
		if tag == 0x04 && len(body) >= 13 {
			oti = body[0]
			for sub := body[13:]; len(sub) > 0; {
				t, b, r, ok := descriptor(sub)
				if !ok {
					break
				}
				if t == 0x05 {
					return oti, b
				}
				sub = r
			}
			return oti, nil
		}
		es = rest
	}
	return 0, nil
}

// audioSpecificConfig reads the output sample rate and channel count of an AAC
// AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1); for HE-AAC signalled explicitly, the rate
// is the extension's, which is what plays. Zero when it cannot be read.
func audioSpecificConfig(asc []byte) (rate, channels int) {
	var pos int
	bits := func(n int) int {
		v := 0
		for range n {
			if pos >= len(asc)*8 {
				pos = -1 << 30 // poison: every later read fails too
				return 0
			}
			if pos < 0 {
				return 0
			}
			v = v<<1 | int(asc[pos/8]>>(7-pos%8)&1)
			pos++
		}
		return v
	}
	freq := func() int {
		if i := bits(4); i == 15 {
			return bits(24)
		} else if i < len(aacRates) {
			return aacRates[i]
		}
		return 0
	}
	aot := bits(5)
	if aot == 31 {
		aot = 32 + bits(6)
	}
	rate = freq()
	cfg := bits(4)
	if aot == 5 || aot == 29 { // SBR or PS: the extension rate is the output rate
		if ext := freq(); ext > 0 {
			rate = ext
		}
	}
	if pos < 0 {
		return 0, 0
	}
	switch {
	case cfg >= 1 && cfg <= 6:
		channels = cfg
	case cfg == 7:
		channels = 8
	}
	return rate, channels
}
