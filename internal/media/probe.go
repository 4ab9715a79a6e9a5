package media

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"os"
	"time"
)

// Info is what Probe learns about a file.
type Info struct {
	Kind Kind
	// Duration of a video. Zero for images, and for the rare videos whose container does not
	// record it (fragmented MP4 without a movie-extends header, live WebM recordings).
	Duration time.Duration
	// Width and Height of the picture as it is shown: for a video track stored sideways with
	// a rotation matrix (phones do this for portrait video), they are swapped back, so that
	// a vertical video reads as taller than wide whatever its storage.
	Width, Height int
	// Rotation is the clockwise rotation in degrees (0, 90, 180 or 270) a player applies to
	// the stored picture (MP4/MOV track matrix).
	Rotation int
	// VideoCodec names the video codec: "h264", "hevc", "vp8", "vp9", "av1", "mpeg4",
	// "prores", ..., or the container's own code (sample-entry fourcc, Matroska CodecID)
	// when reelay has no name for it. Empty for images.
	VideoCodec string
	// VideoProfile is the video codec's profile as ffprobe names it ("High", "Main 10",
	// "Profile 0"), read from the MP4/MOV decoder configuration (avcC, hvcC, vpcC); empty
	// when the file does not say or reelay has no name for it.
	VideoProfile string
	// Bitrate is the whole file's average bitrate in bits per second (its size over its
	// duration); 0 when the duration is unknown.
	Bitrate int64
	// AudioCodec names the first audio track's codec the same way ("aac", "opus", ...);
	// empty when there is no audio track.
	AudioCodec string
	// AudioChannels and AudioSampleRate (in Hz) of the first audio track; zero when there is
	// no audio track or the container does not say. For AAC in MP4/MOV they come from the
	// decoder configuration (esds), which holds rates the sample entry's 16-bit field cannot.
	AudioChannels, AudioSampleRate int
	// FrameRate is the video track's average frame rate (frames over the track's media
	// duration) and MaxFrameRate the highest rate any stretch of it runs at (the shortest
	// frame duration in the MP4 sample table, the last frame aside, which writers cut short
	// to end the track on time). WebM gives one rate (the track's default frame duration), so
	// both are that. Zero when the container does not say.
	FrameRate, MaxFrameRate float64
	// MoovAfterMdat: an MP4/MOV whose metadata (moov) comes after the media data (mdat), as
	// cameras write it, so that a player reading from the start must seek to its end first.
	MoovAfterMdat bool
	// EditList: an MP4/MOV track carries an edit list that does more than play its media
	// once from one starting point (more than one edit, an empty edit delaying the start, or
	// a rate other than 1). The single edit that encoders write to skip codec delay is
	// not counted.
	EditList bool
}

// Errors of Probe and Sniff. Errors returned wrap one of these with details of what was
// wrong and where; errors.Is tells them apart.
var (
	// ErrUnsupportedFormat: the bytes are not one of the accepted formats (or not the ones
	// a field allows); an API answers 415.
	ErrUnsupportedFormat = errors.New("unsupported media format")
	// ErrCorrupt: the format is recognised but the file is malformed or truncated; an API
	// answers 400.
	ErrCorrupt = errors.New("malformed or truncated media file")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// ProbeFile probes the local file at path, answering its size too.
func ProbeFile(path string) (Info, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Info{}, 0, err
	}
	info, err := Probe(f, st.Size())
	return info, st.Size(), err
}

// Probe reads the format, duration, picture size and codecs of the file of the given size
// behind r. It reads only the headers it needs (for MP4/MOV the moov box wherever it is,
// never the media data; for WebM the EBML header, Info and Tracks), so it is cheap over a
// remote blob. Malformed input gives an error wrapping ErrCorrupt or ErrUnsupportedFormat,
// never a panic and never an allocation larger than a few megabytes.
func Probe(r io.ReaderAt, size int64) (Info, error) {
	if size <= 0 {
		return Info{}, fmt.Errorf("%w: empty file", ErrUnsupportedFormat)
	}
	head := make([]byte, min(size, SniffLen))
	if err := readAt(r, head, 0); err != nil {
		return Info{}, err
	}
	kind, ok := Sniff(head)
	if !ok && len(head) >= 4 && binary.BigEndian.Uint32(head) == mkvEBML {
		return Info{}, fmt.Errorf("%w: a Matroska file that is not WebM (document type %q)", ErrUnsupportedFormat, printable(ebmlDocType(head)))
	}
	if !ok {
		return Info{}, fmt.Errorf("%w: the file is not MP4, MOV, WebM, JPEG, PNG or WebP", ErrUnsupportedFormat)
	}
	var info Info
	var err error
	switch kind {
	case KindMP4, KindMOV:
		info, err = probeMP4(r, size)
	case KindWebM:
		info, err = probeWebM(r, size)
	case KindJPEG, KindPNG:
		info, err = probeStdImage(r, size, kind)
	case KindWebP:
		info, err = probeWebP(r, size)
	}
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", kind.Name, err)
	}
	info.Kind = kind
	if info.Duration > 0 {
		info.Bitrate = int64(float64(size) * 8 / info.Duration.Seconds())
	}
	return info, nil
}

// readAt fills p from offset off, treating a short read as a truncated file.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("file ends at offset %d, inside data that should be %d bytes long", off+int64(n), len(p))
	}
	return fmt.Errorf("reading media at offset %d: %w", off, err)
}

// roundRate keeps a frame rate to a thousandth of a frame a second: containers store frame
// durations in integer units (nanoseconds in WebM), so 30 fps reads as 30.0000003.
func roundRate(fps float64) float64 {
	return math.Round(fps*1000) / 1000
}

// ticks converts a duration in timescale units to a time.Duration, refusing values that do
// not fit (a garbage header must not wrap around into a plausible duration).
func ticks(d, timescale uint64) (time.Duration, error) {
	if timescale == 0 {
		return 0, corrupt("timescale is zero")
	}
	sec, rem := d/timescale, d%timescale
	if sec > uint64(math.MaxInt64/int64(time.Second))-1 {
		return 0, corrupt("duration of %d seconds is implausible", sec)
	}
	frac := uint64(float64(rem) * float64(time.Second) / float64(timescale))
	return time.Duration(sec)*time.Second + time.Duration(frac), nil
}

func probeStdImage(r io.ReaderAt, size int64, kind Kind) (Info, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 16<<10)
	var w, h int
	if kind == KindJPEG {
		cfg, err := jpeg.DecodeConfig(br)
		if err != nil {
			return Info{}, corrupt("%v", err)
		}
		w, h = cfg.Width, cfg.Height
	} else {
		cfg, err := png.DecodeConfig(br)
		if err != nil {
			return Info{}, corrupt("%v", err)
		}
		w, h = cfg.Width, cfg.Height
	}
	if w <= 0 || h <= 0 {
		return Info{}, corrupt("image has no pixels (%dx%d)", w, h)
	}
	return Info{Width: w, Height: h}, nil
}

// probeWebP reads the canvas size from the first chunk: VP8 (lossy), VP8L (lossless) or
// VP8X (extended, which carries the canvas size itself).
func probeWebP(r io.ReaderAt, size int64) (Info, error) {
	var hdr [30]byte
	if size < 30 {
		return Info{}, corrupt("file is only %d bytes", size)
	}
	if err := readAt(r, hdr[:], 0); err != nil {
		return Info{}, err
	}
	if riff := int64(binary.LittleEndian.Uint32(hdr[4:8])) + 8; riff > size {
		return Info{}, corrupt("RIFF header says %d bytes, file has %d", riff, size)
	}
	chunk := string(hdr[12:16])
	if n := int64(binary.LittleEndian.Uint32(hdr[16:20])); n+20 > size {
		return Info{}, corrupt("%s chunk of %d bytes does not fit in the file", chunk, n)
	}
	p := hdr[20:]
	var w, h int
	switch chunk {
	case "VP8 ":
		if p[0]&1 != 0 || p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a {
			return Info{}, corrupt("VP8 chunk does not start with a key frame")
		}
		w = int(binary.LittleEndian.Uint16(p[6:8]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(p[8:10]) & 0x3fff)
	case "VP8L":
		if p[0] != 0x2f || p[4]>>5 != 0 {
			return Info{}, corrupt("bad VP8L signature or version")
		}
		bits := binary.LittleEndian.Uint32(p[1:5])
		w = int(bits&0x3fff) + 1
		h = int(bits>>14&0x3fff) + 1
	case "VP8X":
		w = int(uint32(p[4])|uint32(p[5])<<8|uint32(p[6])<<16) + 1
		h = int(uint32(p[7])|uint32(p[8])<<8|uint32(p[9])<<16) + 1
	}
	if w <= 0 || h <= 0 {
		return Info{}, corrupt("image has no pixels (%dx%d)", w, h)
	}
	return Info{Width: w, Height: h}, nil
}

// codecNames maps container codec codes to the names Info uses.
var codecNames = map[string]string{
	// ISO-BMFF / QuickTime sample entries
	"avc1": "h264", "avc3": "h264", "hvc1": "hevc", "hev1": "hevc", "vp08": "vp8", "vp09": "vp9",
	"av01": "av1", "mp4v": "mpeg4", "apch": "prores", "apcn": "prores", "apcs": "prores",
	"apco": "prores", "ap4h": "prores", "ap4x": "prores", "jpeg": "mjpeg", "mjpa": "mjpeg",
	"mjpb": "mjpeg", "s263": "h263", "h263": "h263", "dvh1": "hevc", "dvhe": "hevc",
	"mp4a": "aac", "Opus": "opus", "ac-3": "ac3", "ec-3": "eac3", "fLaC": "flac", "alac": "alac",
	".mp3": "mp3", "lpcm": "pcm", "sowt": "pcm", "twos": "pcm", "ipcm": "pcm", "fpcm": "pcm",
	// Matroska CodecIDs
	"V_VP8": "vp8", "V_VP9": "vp9", "V_AV1": "av1", "V_MPEG4/ISO/AVC": "h264",
	"V_MPEGH/ISO/HEVC": "hevc", "A_OPUS": "opus", "A_VORBIS": "vorbis", "A_AAC": "aac",
}

func codecName(code string) string {
	if n, ok := codecNames[code]; ok {
		return n
	}
	return printable(code)
}

// printable makes a code read from a file safe to quote in logs and API answers.
func printable(code string) string {
	b := []byte(code)
	for i, c := range b {
		if c < 0x20 || c > 0x7e { // keep garbage out of logs and API answers
			b[i] = '?'
		}
	}
	return string(b)
}
