// Package media takes video and images into reelay: it recognises files by their bytes
// (Sniff), reads duration and dimensions without decoding (Probe), fetches remote files
// through a client that refuses internal addresses (Fetcher), keeps every file once per
// content hash in blob storage and hands out signed, expiring links to it (Store), and ties
// these together for the publish handler (IngestUpload, IngestURL).
//
// Everything here streams: no function holds a whole file in memory, so a 100 MB upload
// costs the same memory as a 1 MB one.
package media

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// Kind is a recognised media format.
type Kind struct {
	// Name is the short name used in configuration, errors and allow-lists:
	// "mp4", "mov", "webm", "jpeg", "png" or "webp".
	Name string
	// ContentType is the MIME type reelay stores and serves the file with.
	ContentType string
}

// IsVideo reports whether k is a video format.
func (k Kind) IsVideo() bool { return k == KindMP4 || k == KindMOV || k == KindWebM }

// IsImage reports whether k is an image format.
func (k Kind) IsImage() bool { return k == KindJPEG || k == KindPNG || k == KindWebP }

// String returns the kind's name.
func (k Kind) String() string { return k.Name }

// The formats reelay accepts (docs/CONTRACT.md, Publishing: MP4, MOV, WebM video;
// JPEG, PNG, WebP images).
var (
	KindMP4  = Kind{Name: "mp4", ContentType: "video/mp4"}
	KindMOV  = Kind{Name: "mov", ContentType: "video/quicktime"}
	KindWebM = Kind{Name: "webm", ContentType: "video/webm"}
	KindJPEG = Kind{Name: "jpeg", ContentType: "image/jpeg"}
	KindPNG  = Kind{Name: "png", ContentType: "image/png"}
	KindWebP = Kind{Name: "webp", ContentType: "image/webp"}
)

// VideoKinds and ImageKinds are the allow-lists of the publish request's video and thumbnail
// fields, for IngestUpload and IngestURL.
var (
	VideoKinds = []string{"mp4", "mov", "webm"}
	ImageKinds = []string{"jpeg", "png", "webp"}
)

// Size limits of the contract (docs/CONTRACT.md, Publishing): video up to 100MB, thumbnails up
// to 10MB, where a megabyte is 10^6 bytes. Every message states them in that unit
// (FormatBytes), so that the limit a client reads is the limit it meets; the decimal reading
// is also the one the platforms that cap a video at 100 MB use (Bluesky's 100,000,000 bytes).
const (
	MB                  = 1_000_000
	MaxVideoBytes int64 = 100 * MB
	MaxImageBytes int64 = 10 * MB
)

// KindByName returns the kind with the given name.
func KindByName(name string) (Kind, bool) {
	for _, k := range []Kind{KindMP4, KindMOV, KindWebM, KindJPEG, KindPNG, KindWebP} {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// SniffLen is how many leading bytes Sniff wants: enough for an ftyp box with a long brand
// list and for a WebM EBML header. Fewer work when the file is shorter.
const SniffLen = 512

// Sniff recognises a file from its first bytes (up to SniffLen of them). It looks at magic
// numbers only, never at names or declared content types, which clients get wrong.
//
// MP4 and MOV share the ISO-BMFF container and are told apart by the ftyp brands: a major
// or compatible brand "qt  " (without an MP4 major brand) means QuickTime. Still-image and
// audio-only ISO files (HEIF, AVIF, M4A) are refused. WebM is an EBML file whose DocType is
// "webm"; other Matroska files are refused, since platforms that take WebM do not take MKV.
func Sniff(head []byte) (Kind, bool) {
	switch {
	case len(head) >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF:
		return KindJPEG, true
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return KindPNG, true
	case len(head) >= 16 && string(head[0:4]) == "RIFF" && string(head[8:12]) == "WEBP" &&
		(string(head[12:16]) == "VP8 " || string(head[12:16]) == "VP8L" || string(head[12:16]) == "VP8X"):
		return KindWebP, true
	case len(head) >= 4 && binary.BigEndian.Uint32(head) == 0x1A45DFA3:
		if ebmlDocType(head) == "webm" {
			return KindWebM, true
		}
		return Kind{}, false
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		return sniffFtyp(head)
	case len(head) >= 8 && isLegacyQuickTimeAtom(string(head[4:8])) && binary.BigEndian.Uint32(head) >= 8:
		// QuickTime files written before ftyp existed start straight with their atoms.
		return KindMOV, true
	}
	return Kind{}, false
}

func isLegacyQuickTimeAtom(t string) bool {
	return t == "moov" || t == "mdat" || t == "wide" || t == "free" || t == "skip" || t == "pnot"
}

// mp4Brands are ftyp brands of ISO/MP4 video files. Brands are listed rather than guessed
// so that an image or audio file in the same container is not taken for a video.
var mp4Brands = []string{
	"isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9", "avc1", "mp41",
	"mp42", "mp71", "dash", "cmfc", "M4V ", "M4VH", "M4VP", "MSNV", "3gp4", "3gp5", "3gp6",
	"3gp7", "3g2a", "3g2b", "3g2c", "f4v ", "mmp4", "NDAS", "NDSC", "NDSH", "NDSM", "NDSP",
	"NDSS", "NDXC", "NDXH", "NDXM", "NDXP", "NDXS", "XAVC", "av01", "hvc1", "hev1",
}

// nonVideoBrands are major brands of ISO files that are not videos, even when their
// compatible brands include isom or mp42.
var nonVideoBrands = []string{"M4A ", "M4B ", "M4P ", "heic", "heix", "heim", "heis", "hevc", "mif1", "msf1", "avif", "avis", "crx "}

func sniffFtyp(head []byte) (Kind, bool) {
	size := int64(binary.BigEndian.Uint32(head))
	if size < 16 { // header, major brand and minor version at least
		return Kind{}, false
	}
	end := len(head)
	if size < int64(end) {
		end = int(size)
	}
	major := string(head[8:12])
	if slices.Contains(nonVideoBrands, major) {
		return Kind{}, false
	}
	if major == "qt  " {
		return KindMOV, true
	}
	var compat []string
	for i := 16; i+4 <= end; i += 4 {
		compat = append(compat, string(head[i:i+4]))
	}
	if slices.Contains(mp4Brands, major) {
		return KindMP4, true
	}
	if slices.Contains(compat, "qt  ") {
		return KindMOV, true
	}
	for _, b := range compat {
		if slices.Contains(mp4Brands, b) {
			return KindMP4, true
		}
	}
	return Kind{}, false
}

// ebmlDocType returns the DocType of the EBML header at the start of head, or "" when the
// header is malformed or cut off.
func ebmlDocType(head []byte) string {
	p := 4
	size, n := readVint(head[p:])
	if n == 0 {
		return ""
	}
	p += n
	end := len(head)
	if size < uint64(end-p) {
		end = p + int(size)
	}
	for p < end {
		id, n := readElementID(head[p:end])
		if n == 0 {
			return ""
		}
		p += n
		sz, n := readVint(head[p:end])
		if n == 0 || sz > uint64(end-p-n) {
			return ""
		}
		p += n
		if id == 0x4282 {
			return string(bytes.TrimRight(head[p:p+int(sz)], "\x00"))
		}
		p += int(sz)
	}
	return ""
}

// readVint decodes an EBML data size at the start of b, returning the value and its length
// (0 when b does not hold a whole one). The reserved all-ones value is returned as
// unknownSize.
func readVint(b []byte) (uint64, int) {
	if len(b) == 0 || b[0] == 0 {
		return 0, 0
	}
	l := 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		l++
	}
	if len(b) < l {
		return 0, 0
	}
	v := uint64(b[0] & (0xFF >> l))
	allOnes := v == uint64(0xFF>>l)
	for i := 1; i < l; i++ {
		v = v<<8 | uint64(b[i])
		allOnes = allOnes && b[i] == 0xFF
	}
	if allOnes {
		return unknownSize, l
	}
	return v, l
}

// unknownSize marks an EBML element whose size was not known when it was written (live
// recordings, such as a browser's MediaRecorder, leave Segment and Cluster sizes unknown).
const unknownSize = ^uint64(0)

// readElementID decodes an EBML element ID (marker bits kept, as IDs are written in specs).
func readElementID(b []byte) (uint32, int) {
	if len(b) == 0 || b[0] == 0 || b[0]&0xF0 == 0 {
		return 0, 0 // IDs are 1 to 4 bytes long
	}
	l := 1
	for mask := byte(0x80); b[0]&mask == 0; mask >>= 1 {
		l++
	}
	if len(b) < l {
		return 0, 0
	}
	var id uint32
	for i := 0; i < l; i++ {
		id = id<<8 | uint32(b[i])
	}
	return id, l
}
