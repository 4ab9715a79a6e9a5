package mediatest

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"
)

// EBML element IDs used by WriteWebM (Matroska specification).
const (
	idEBML               = 0x1A45DFA3
	idEBMLVersion        = 0x4286
	idEBMLReadVersion    = 0x42F7
	idEBMLMaxIDLength    = 0x42F2
	idEBMLMaxSizeLength  = 0x42F3
	idDocType            = 0x4282
	idDocTypeVersion     = 0x4287
	idDocTypeReadVersion = 0x4285
	idSegment            = 0x18538067
	idInfo               = 0x1549A966
	idTimecodeScale      = 0x2AD7B1
	idDuration           = 0x4489
	idMuxingApp          = 0x4D80
	idWritingApp         = 0x5741
	idTracks             = 0x1654AE6B
	idTrackEntry         = 0xAE
	idTrackNumber        = 0xD7
	idTrackUID           = 0x73C5
	idTrackType          = 0x83
	idFlagLacing         = 0x9C
	idCodecID            = 0x86
	idVideo              = 0xE0
	idDefaultDuration    = 0x23E383
	idPixelWidth         = 0xB0
	idPixelHeight        = 0xBA
	idCluster            = 0x1F43B675
	idTimecode           = 0xE7
	idSimpleBlock        = 0xA3
	idVoid               = 0xEC
)

func ebmlID(id uint32) []byte {
	switch {
	case id >= 1<<24:
		return []byte{byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	case id >= 1<<16:
		return []byte{byte(id >> 16), byte(id >> 8), byte(id)}
	case id >= 1<<8:
		return []byte{byte(id >> 8), byte(id)}
	}
	return []byte{byte(id)}
}

// ebmlSize encodes a data size as the shortest EBML variable-length integer (the all-ones
// value of each length is reserved for "unknown").
func ebmlSize(n uint64) []byte {
	for l := 1; l <= 8; l++ {
		if n < 1<<(7*l)-1 {
			out := make([]byte, l)
			v := n | 1<<(7*l)
			for i := l - 1; i >= 0; i-- {
				out[i] = byte(v)
				v >>= 8
			}
			return out
		}
	}
	panic("mediatest: EBML size too large")
}

// ebmlSize8 encodes a size in eight bytes, for elements whose header is written before
// their (streamed) content.
func ebmlSize8(n uint64) []byte {
	out := binary.BigEndian.AppendUint64(nil, n)
	out[0] = 0x01
	return out
}

func el(id uint32, parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := append(ebmlID(id), ebmlSize(uint64(n))...)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func elUint(id uint32, v uint64) []byte {
	b := binary.BigEndian.AppendUint64(nil, v)
	i := 0
	for i < 7 && b[i] == 0 {
		i++
	}
	return el(id, b[i:])
}

func elFloat(id uint32, f float64) []byte {
	return el(id, binary.BigEndian.AppendUint64(nil, math.Float64bits(f)))
}

func elString(id uint32, s string) []byte { return el(id, []byte(s)) }

// vp8Frame is a VP8 key-frame header (frame tag, start code, dimensions) followed by a few
// bytes; enough for parsers that read frame dimensions, not for a decoder.
func vp8Frame(width, height int) []byte {
	const firstPartSize = 4
	tag := uint32(0) | 0<<1 | 1<<4 | firstPartSize<<5 // key frame, version 0, shown
	return []byte{
		byte(tag), byte(tag >> 8), byte(tag >> 16),
		0x9d, 0x01, 0x2a,
		byte(width), byte(width>>8) & 0x3F, byte(height), byte(height>>8) & 0x3F,
		0, 0, 0, 0,
	}
}

// WriteWebM writes a WebM file with one VP8 video track of o.Width x o.Height pixels lasting
// o.Duration, padded to about o.Size bytes with a Void element.
func WriteWebM(w io.Writer, o Options) error {
	o = o.withDefaults()
	if o.Width > 16383 || o.Height > 16383 {
		return fmt.Errorf("mediatest: %dx%d is too large for VP8", o.Width, o.Height)
	}
	header := el(idEBML,
		elUint(idEBMLVersion, 1), elUint(idEBMLReadVersion, 1),
		elUint(idEBMLMaxIDLength, 4), elUint(idEBMLMaxSizeLength, 8),
		elString(idDocType, "webm"), elUint(idDocTypeVersion, 4), elUint(idDocTypeReadVersion, 2))
	info := el(idInfo,
		elUint(idTimecodeScale, 1_000_000), // timestamps in milliseconds
		elFloat(idDuration, float64(o.Duration)/float64(time.Millisecond)),
		elString(idMuxingApp, "reelay mediatest"), elString(idWritingApp, "reelay mediatest"))
	tracks := el(idTracks, el(idTrackEntry,
		elUint(idTrackNumber, 1), elUint(idTrackUID, 1), elUint(idTrackType, 1),
		elUint(idFlagLacing, 0), elString(idCodecID, "V_VP8"),
		elUint(idDefaultDuration, uint64(time.Second)/uint64(o.FPS)),
		el(idVideo, elUint(idPixelWidth, uint64(o.Width)), elUint(idPixelHeight, uint64(o.Height)))))

	// One cluster per five seconds keeps block timestamps (signed 16-bit, relative to the
	// cluster) in range.
	frame := vp8Frame(o.Width, o.Height)
	n := o.frameCount()
	var clusters []byte
	const clusterMS = 5000
	for start := 0; start < n; {
		clusterTime := start * 1000 / o.FPS
		parts := [][]byte{elUint(idTimecode, uint64(clusterTime))}
		i := start
		for ; i < n && i*1000/o.FPS-clusterTime < clusterMS; i++ {
			rel := int16(i*1000/o.FPS - clusterTime)
			// Every frame carries a key-frame header, so every block is flagged as one.
			block := append([]byte{0x81, byte(uint16(rel) >> 8), byte(rel), 0x80}, frame...)
			parts = append(parts, el(idSimpleBlock, block))
		}
		clusters = append(clusters, el(idCluster, parts...)...)
		start = i
	}

	body := int64(len(info) + len(tracks) + len(clusters))
	fixed := int64(len(header)) + 4 + 8 + body
	var pad int64
	if o.Size > fixed+9 {
		pad = o.Size - fixed - 9
	}
	segSize := body
	if pad > 0 {
		segSize += 9 + pad
	}
	for _, p := range [][]byte{header, ebmlID(idSegment), ebmlSize8(uint64(segSize)), info, tracks, clusters} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	if pad > 0 {
		if _, err := w.Write(append(ebmlID(idVoid), ebmlSize8(uint64(pad))...)); err != nil {
			return err
		}
		return writePadding(w, pad, o.NoisyPadding)
	}
	return nil
}
