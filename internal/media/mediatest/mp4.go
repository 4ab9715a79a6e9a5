package mediatest

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"time"
)

// box builds an ISO-BMFF box from its type and payload parts. Only the small metadata boxes
// are built in memory; mdat is streamed by WriteMP4.
func box(typ string, parts ...[]byte) []byte {
	n := 8
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 8, n)
	binary.BigEndian.PutUint32(out, uint32(n))
	copy(out[4:], typ)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fullBox is box with the version and flags word of a FullBox.
func fullBox(typ string, version byte, flags uint32, parts ...[]byte) []byte {
	vf := []byte{version, byte(flags >> 16), byte(flags >> 8), byte(flags)}
	return box(typ, append([][]byte{vf}, parts...)...)
}

func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// unityMatrix is the identity transformation matrix of mvhd and tkhd.
var unityMatrix = func() []byte {
	var m []byte
	for _, v := range []uint32{0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000} {
		m = append(m, u32(v)...)
	}
	return m
}()

// WriteMP4 writes an MP4 file (a QuickTime MOV file when o.Brand is "qt  ") with one H.264
// video track of o.Width x o.Height pixels lasting o.Duration, padded to about o.Size bytes.
func WriteMP4(w io.Writer, o Options) error {
	o = o.withDefaults()
	if len(o.Brand) != 4 {
		return fmt.Errorf("mediatest: brand %q is not four characters", o.Brand)
	}
	if o.Width > 0xFFFF || o.Height > 0xFFFF {
		return fmt.Errorf("mediatest: %dx%d is too large", o.Width, o.Height)
	}
	qt := o.Brand == "qt  "

	var ftyp []byte
	if qt {
		ftyp = box("ftyp", []byte("qt  "), u32(0x20050300), []byte("qt  "))
	} else {
		ftyp = box("ftyp", []byte(o.Brand), u32(0x200), []byte(o.Brand), []byte("iso2avc1mp41"))
	}

	enc := newH264(o.Width, o.Height)
	n := o.frameCount()
	sizes := make([]uint32, n)
	var samples int64
	for i := range sizes {
		if i < 2 { // every P frame has the size of frame 1
			sizes[i] = uint32(len(enc.frame(i)))
		} else {
			sizes[i] = sizes[1]
		}
		samples += int64(sizes[i])
	}

	// The padding goes into mdat after the samples: the sample table does not reference it,
	// which ISO-BMFF allows, and it keeps the stream decodable at any size.
	mdatHeader := int64(8)
	if o.LargeSize || samples+8 > 0xFFFFFFFF || o.Size > 0xFFFFFFF0 {
		mdatHeader = 16
	}
	moovLen := int64(len(moov(o, enc, sizes, 0)))
	fixed := int64(len(ftyp)) + moovLen + mdatHeader + samples
	var pad int64
	if o.Size > fixed {
		pad = o.Size - fixed
	}
	mdatLen := mdatHeader + samples + pad

	var chunkOffset int64
	if o.MoovAtEnd {
		chunkOffset = int64(len(ftyp)) + mdatHeader
	} else {
		chunkOffset = int64(len(ftyp)) + moovLen + mdatHeader
	}
	if chunkOffset > 0xFFFFFFFF {
		return fmt.Errorf("mediatest: chunk offset %d needs co64, not supported", chunkOffset)
	}
	mv := moov(o, enc, sizes, uint32(chunkOffset))

	if _, err := w.Write(ftyp); err != nil {
		return err
	}
	if !o.MoovAtEnd {
		if _, err := w.Write(mv); err != nil {
			return err
		}
	}
	var hdr []byte
	if mdatHeader == 16 {
		hdr = append(u32(1), "mdat"...)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(mdatLen))
	} else {
		hdr = append(u32(uint32(mdatLen)), "mdat"...)
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := w.Write(enc.frame(i)); err != nil {
			return err
		}
	}
	if err := writePadding(w, pad, o.NoisyPadding); err != nil {
		return err
	}
	if o.MoovAtEnd {
		if _, err := w.Write(mv); err != nil {
			return err
		}
	}
	return nil
}

// moov builds the movie box: one video track whose single chunk starts at chunkOffset.
func moov(o Options, enc *h264Stream, sizes []uint32, chunkOffset uint32) []byte {
	qt := o.Brand == "qt  "
	n := len(sizes)
	movieMS := uint32(o.Duration / time.Millisecond)
	timescale := uint32(o.FPS * 1000) // one tick per frame is 1000 units: exact for whole milliseconds
	mediaDur := uint32(o.Duration.Milliseconds() * int64(o.FPS))
	lastDelta := mediaDur - uint32(n-1)*1000

	nextTrack := uint32(2)
	if o.AudioSampleRate > 0 {
		nextTrack = 3
	}
	mvhd := fullBox("mvhd", 0, 0,
		u32(0), u32(0), u32(1000), u32(movieMS),
		u32(0x00010000), u16(0x0100), make([]byte, 10), unityMatrix, make([]byte, 24), u32(nextTrack))
	tkhd := fullBox("tkhd", 0, 3, // enabled, in movie
		u32(0), u32(0), u32(1), u32(0), u32(movieMS), make([]byte, 8),
		u16(0), u16(0), u16(0), u16(0), unityMatrix,
		u32(uint32(o.Width)<<16), u32(uint32(o.Height)<<16))
	mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(timescale), u32(mediaDur), u16(0x55C4), u16(0)) // language "und"
	component := u32(0)
	if qt {
		component = []byte("mhlr")
	}
	hdlr := fullBox("hdlr", 0, 0, component, []byte("vide"), make([]byte, 12), []byte("VideoHandler\x00"))
	vmhd := fullBox("vmhd", 0, 1, make([]byte, 8))
	dinf := box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1)))

	compressor := make([]byte, 32)
	copy(compressor[1:], "reelay mediatest")
	compressor[0] = byte(len("reelay mediatest"))
	avc1 := box("avc1",
		make([]byte, 6), u16(1), // reserved, data_reference_index
		make([]byte, 16), // pre_defined, reserved, pre_defined
		u16(uint16(o.Width)), u16(uint16(o.Height)),
		u32(0x00480000), u32(0x00480000), u32(0), u16(1), compressor, u16(0x0018), u16(0xFFFF),
		box("avcC", enc.avcC()))
	stsd := fullBox("stsd", 0, 0, u32(1), avc1)

	var stts []byte
	if n > 1 {
		stts = fullBox("stts", 0, 0, u32(2), u32(uint32(n-1)), u32(1000), u32(1), u32(lastDelta))
	} else {
		stts = fullBox("stts", 0, 0, u32(1), u32(1), u32(lastDelta))
	}
	stss := fullBox("stss", 0, 0, u32(1), u32(1)) // only the IDR is a sync sample
	stsc := fullBox("stsc", 0, 0, u32(1), u32(1), u32(uint32(n)), u32(1))
	sz := make([]byte, 0, 4*n)
	for _, s := range sizes {
		sz = binary.BigEndian.AppendUint32(sz, s)
	}
	stsz := fullBox("stsz", 0, 0, u32(0), u32(uint32(n)), sz)
	stco := fullBox("stco", 0, 0, u32(1), u32(chunkOffset))

	stbl := box("stbl", stsd, stts, stss, stsc, stsz, stco)
	minf := box("minf", vmhd, dinf, stbl)
	mdia := box("mdia", mdhd, hdlr, minf)
	parts := [][]byte{tkhd}
	if o.EditList {
		// An empty edit of 100 ms (media time -1), then the whole media at rate 1.
		elst := fullBox("elst", 0, 0, u32(2),
			u32(100), u32(0xFFFFFFFF), u16(1), u16(0),
			u32(movieMS), u32(0), u16(1), u16(0))
		parts = append(parts, box("edts", elst))
	}
	trak := box("trak", append(parts, mdia)...)
	if o.AudioSampleRate > 0 {
		return box("moov", mvhd, trak, audioTrak(o, dinf))
	}
	return box("moov", mvhd, trak)
}

// audioTrak builds an AAC-LC track with no samples: a sample entry whose esds carries the
// AudioSpecificConfig for o.AudioSampleRate and o.AudioChannels, as encoders write it.
func audioTrak(o Options, dinf []byte) []byte {
	rate, ch := o.AudioSampleRate, o.AudioChannels
	tkhd := fullBox("tkhd", 0, 3,
		u32(0), u32(0), u32(2), u32(0), u32(0), make([]byte, 8),
		u16(0), u16(1), u16(0x0100), u16(0), unityMatrix, u32(0), u32(0))
	mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(uint32(rate)), u32(0), u16(0x55C4), u16(0))
	hdlr := fullBox("hdlr", 0, 0, u32(0), []byte("soun"), make([]byte, 12), []byte("SoundHandler\x00"))
	smhd := fullBox("smhd", 0, 0, u16(0), u16(0))

	// AudioSpecificConfig (ISO/IEC 14496-3): object type 2 (LC), the rate's index or 15
	// and the rate itself, the channel configuration, then three zero GASpecificConfig bits.
	rates := []int{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}
	var bits uint64
	var n int
	put := func(width int, v uint64) { bits, n = bits<<width|v, n+width }
	put(5, 2)
	if i := slices.Index(rates, rate); i >= 0 {
		put(4, uint64(i))
	} else {
		put(4, 15)
		put(24, uint64(rate))
	}
	put(4, uint64(ch))
	put(3, 0)
	for n%8 != 0 {
		put(1, 0)
	}
	asc := make([]byte, n/8)
	for i := range asc {
		asc[i] = byte(bits >> (n - 8*(i+1)))
	}
	desc := func(tag byte, body ...[]byte) []byte {
		var b []byte
		for _, p := range body {
			b = append(b, p...)
		}
		return append([]byte{tag, byte(len(b))}, b...)
	}
	decoderConfig := desc(0x04, []byte{0x40, 0x15, 0, 0, 0}, u32(128000), u32(128000), desc(0x05, asc))
	esds := fullBox("esds", 0, 0, desc(0x03, u16(2), []byte{0}, decoderConfig, desc(0x06, []byte{0x02})))
	field := uint32(rate) << 16 // 16.16; rates above 65535 Hz do not fit and are left to esds
	if rate > 0xFFFF {
		field = 0
	}
	mp4a := box("mp4a", make([]byte, 6), u16(1), make([]byte, 8), u16(uint16(ch)), u16(16), u16(0), u16(0), u32(field), esds)
	stbl := box("stbl", fullBox("stsd", 0, 0, u32(1), mp4a), fullBox("stts", 0, 0, u32(0)),
		fullBox("stsc", 0, 0, u32(0)), fullBox("stsz", 0, 0, u32(0), u32(0)), fullBox("stco", 0, 0, u32(0)))
	minf := box("minf", smhd, dinf, stbl)
	return box("trak", tkhd, box("mdia", mdhd, hdlr, minf))
}
