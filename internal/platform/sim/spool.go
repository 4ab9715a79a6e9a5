package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"gocloud.dev/blob"

	"github.com/reelay/reelay/internal/fileperm"
)

// ErrSpoolFile marks a failure to keep an upload's bytes (the spool's temporary file, or the
// bookkeeping around it): the simulator's fault, not the upload's.
var ErrSpoolFile = errors.New("spool file")

// errSpoolSkipped answers a read of media data a spool did not keep (see spool).
var errSpoolSkipped = errors.New("spool: media data not kept")

const (
	// spoolInMemory is the size up to which a spool keeps what it stores in memory. Creating
	// and removing a temporary file costs more than receiving a small video (a burst of short
	// clips spent 5% of its CPU in the simulators' openat and unlink); past this size the
	// bytes go to disk, so a simulator's memory stays bounded by its uploads in progress, not
	// their size.
	spoolInMemory = 256 << 10
	// An mdat box's payload is not kept past its first skipKeep bytes when that leaves at
	// least skipMin bytes out. The kept start covers media.Sniff's look at a file whose mdat
	// comes right after ftyp.
	skipKeep = 64 << 10
	skipMin  = 1 << 20
	// maxTopBoxes bounds the top-level boxes a spool follows: an MP4 has a handful (a
	// fragmented one a few per fragment), and a crafted upload of tiny boxes must not grow
	// the list, and every read's walk of it, without end. Past it the upload is kept whole.
	maxTopBoxes = 4096
)

// spool holds the bytes of one upload while it arrives and until it is checked with
// media.Sniff and media.Probe. Uploads arrive in order: a write at an offset before the end
// first drops everything from there on (a chunk sent again), one past the end fills the gap
// with zeros.
//
// An MP4 or MOV upload (one that starts with an ftyp box) keeps no media data: the payload of
// each top-level mdat box past its first skipKeep bytes is counted and hashed by the caller
// but not stored, because media.Probe reads box headers and the metadata boxes only (moov,
// wherever it is). Writing 100 MB of video to a temporary file was a seventh of the server's
// CPU in `reelay bench ingest`, the simulators' work and not reelay's; a real platform's
// storage is not on reelay's machine. A read of bytes not kept fails with errSpoolSkipped.
// Everything else (WebM, anything unrecognised) is kept whole.
//
// What is stored stays in memory up to spoolInMemory bytes and moves to a temporary file in
// dir after that. A spool is not safe for concurrent use; the simulators serialise each
// upload's requests.
//
// An upload whose requests may reach other processes, or one after a restart, keeps what it
// stored between them in blob storage: Save writes what the request stored (the tail, in
// memory or in the file) as one blob, a chunk, and answers the spool's state, which the
// simulator keeps in its record; ResumeSpool takes the upload up again from it, reading the
// chunks back where the bytes asked for are in them. A chunk sent again after a crash is a new
// blob: chunks are never appended to (S3 cannot) nor rewritten. Stored bytes that are in
// chunks cannot be truncated.
type Spool struct {
	Dir     string
	pattern string
	mem     []byte
	file    *os.File
	size    int64 // bytes written, skipped ones included
	stored  int64 // bytes stored: in chunks, then in mem or file
	boxes   boxScan

	// chunks hold stored bytes [0, base) in blobs of bucket, read with ctx; mem or file
	// hold [base, stored).
	bucket *blob.Bucket
	ctx    context.Context
	chunks []SpoolChunk
	base   int64
}

// spoolChunk is one blob of a spool's stored bytes, in order.
type SpoolChunk struct {
	Key string `json:"key"`
	Len int64  `json:"len"`
}

// SpoolState is what a spool keeps between requests (its bytes being in its chunks).
type SpoolState struct {
	Size   int64        `json:"size,omitempty"`
	Chunks []SpoolChunk `json:"chunks,omitempty"`
	// Boxes are the top-level boxes followed (start, data, end, skip); Header the bytes so far
	// of the next one's header; Whole, when set, where the upload is kept whole from.
	Boxes  [][4]int64 `json:"boxes,omitempty"`
	Header []byte     `json:"header,omitempty"`
	Whole  *int64     `json:"whole,omitempty"`
}

// boxScan follows the top-level boxes of an upload as its bytes arrive.
type boxScan struct {
	// boxes are the top-level boxes whose header has arrived, in order.
	boxes []topBox
	// header holds the bytes so far of the header of the box after the last one.
	header []byte
	// stopped is the offset from which the upload is kept whole (its start when it is not
	// an MP4; a header that makes no sense, or one box too many); -1 while the boxes are
	// followed.
	stopped int64
}

// topBox is a top-level box: [start, data) its header, [data, end) its payload, of which
// [skip, end) is not kept (skip = end when all of it is).
type topBox struct {
	start, data, end, skip int64
}

func NewSpool(dir, pattern string) *Spool {
	return &Spool{Dir: dir, pattern: pattern, boxes: boxScan{stopped: -1}}
}

// ResumeSpool takes up an upload from its state (the zero state: a new upload), its chunks in
// bucket, read with ctx; what it stores from now on is in memory or a temporary file until
// Save.
func ResumeSpool(ctx context.Context, bucket *blob.Bucket, st SpoolState, pattern string) *Spool {
	s := NewSpool("", pattern)
	s.bucket, s.ctx = bucket, ctx
	s.size, s.chunks = st.Size, st.Chunks
	for _, c := range st.Chunks {
		s.base += c.Len
	}
	s.stored = s.base
	for _, b := range st.Boxes {
		s.boxes.boxes = append(s.boxes.boxes, topBox{start: b[0], data: b[1], end: b[2], skip: b[3]})
	}
	s.boxes.header = st.Header
	if st.Whole != nil {
		s.boxes.stopped = *st.Whole
	}
	return s
}

// Save stores what the spool holds since it was resumed as a new chunk below prefix (none when
// it stored nothing) and answers its state. The spool goes on with an empty tail.
func (s *Spool) Save(ctx context.Context, prefix string) (SpoolState, error) {
	if tail := s.stored - s.base; tail > 0 {
		key := fmt.Sprintf("%s%016x-%s", prefix, s.base, RandomHex(6))
		var src io.Reader = bytes.NewReader(s.mem)
		if s.file != nil {
			src = io.NewSectionReader(s.file, 0, tail)
		}
		if err := s.bucket.Upload(ctx, key, src, &blob.WriterOptions{ContentType: "application/octet-stream", BeforeWrite: fileperm.BeforeWrite}); err != nil {
			return SpoolState{}, fmt.Errorf("%w: storing a chunk: %v", ErrSpoolFile, err)
		}
		s.chunks = append(s.chunks, SpoolChunk{Key: key, Len: tail})
		s.base = s.stored
		s.mem = s.mem[:0]
		if s.file != nil {
			if err := s.file.Truncate(0); err != nil {
				return SpoolState{}, fmt.Errorf("%w: %v", ErrSpoolFile, err)
			}
		}
	}
	st := SpoolState{Size: s.size, Chunks: slices.Clone(s.chunks), Header: slices.Clone(s.boxes.header)}
	for _, b := range s.boxes.boxes {
		st.Boxes = append(st.Boxes, [4]int64{b.start, b.data, b.end, b.skip})
	}
	if s.boxes.stopped >= 0 {
		whole := s.boxes.stopped
		st.Whole = &whole
	}
	return st, nil
}

// readChunks reads stored bytes [at, at+len(p)) from the chunks.
func (s *Spool) readChunks(p []byte, at int64) error {
	var start int64
	for _, c := range s.chunks {
		if len(p) == 0 {
			return nil
		}
		if end := start + c.Len; at < end {
			k := min(int64(len(p)), end-at)
			r, err := s.bucket.NewRangeReader(s.ctx, c.Key, at-start, k, nil)
			if err != nil {
				return fmt.Errorf("%w: reading a chunk: %v", ErrSpoolFile, err)
			}
			_, err = io.ReadFull(r, p[:k])
			r.Close()
			if err != nil {
				return fmt.Errorf("%w: reading a chunk: %v", ErrSpoolFile, err)
			}
			p, at = p[k:], at+k
		}
		start += c.Len
	}
	if len(p) > 0 {
		return fmt.Errorf("%w: the chunks end before byte %d", ErrSpoolFile, at)
	}
	return nil
}

// WriteAt writes p at off (see spool for what that means before or past the end).
func (s *Spool) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("spool: negative offset %d", off)
	}
	if err := s.Truncate(off); err != nil {
		return 0, err
	}
	if err := s.append(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// append adds p at the end, storing what is kept.
func (s *Spool) append(p []byte) error {
	b := &s.boxes
	for len(p) > 0 {
		if b.stopped >= 0 {
			return s.store(p)
		}
		if last := b.last(); last != nil && s.size < last.end {
			// Inside the last box's payload.
			k := min(int64(len(p)), last.end-s.size)
			if s.size < last.skip {
				k = min(k, last.skip-s.size)
				if err := s.store(p[:k]); err != nil {
					return err
				}
			} else {
				s.size += k
			}
			p = p[k:]
			continue
		}
		// The header of the next box: stored, and read.
		k := min(len(p), b.headerLen()-len(b.header))
		b.header = append(b.header, p[:k]...)
		if err := s.store(p[:k]); err != nil {
			return err
		}
		p = p[k:]
		b.read()
	}
	return nil
}

func (b *boxScan) last() *topBox {
	if len(b.boxes) == 0 {
		return nil
	}
	return &b.boxes[len(b.boxes)-1]
}

// next is where the header after the last box starts.
func (b *boxScan) next() int64 {
	if last := b.last(); last != nil {
		return last.end
	}
	return 0
}

// headerLen is how many bytes the header being read has: 8, or 16 with a 64-bit size.
func (b *boxScan) headerLen() int {
	if len(b.header) >= 4 && binary.BigEndian.Uint32(b.header) == 1 {
		return 16
	}
	return 8
}

// read takes the header in b.header once it is whole: the box joins the list, or the upload
// is kept whole from the header's start on.
func (b *boxScan) read() {
	if len(b.header) < b.headerLen() {
		return
	}
	start, hl := b.next(), int64(b.headerLen())
	typ := string(b.header[4:8])
	end := int64(binary.BigEndian.Uint32(b.header))
	switch {
	case start == 0 && typ != "ftyp":
		end = -1
	case end == 0: // the box runs to the end of the file
		end = math.MaxInt64
	case end == 1:
		large := binary.BigEndian.Uint64(b.header[8:16])
		end = -1
		if large >= uint64(hl) && large <= uint64(math.MaxInt64-start) {
			end = start + int64(large)
		}
	case end < hl:
		end = -1
	default:
		end += start
	}
	b.header = b.header[:0]
	if end < 0 || len(b.boxes) >= maxTopBoxes {
		b.stopped = start
		return
	}
	box := topBox{start: start, data: start + hl, end: end, skip: end}
	if typ == "mdat" && end-(box.data+skipKeep) >= skipMin {
		box.skip = box.data + skipKeep
	}
	b.boxes = append(b.boxes, box)
}

// skipped is how many bytes of [0, off) were not kept.
func (s *Spool) skipped(off int64) int64 {
	var n int64
	for _, b := range s.boxes.boxes {
		if hi := min(b.end, off, s.size); hi > b.skip {
			n += hi - b.skip
		}
	}
	return n
}

// store appends p to what is stored.
func (s *Spool) store(p []byte) error {
	end := s.stored + int64(len(p))
	if s.file == nil && end-s.base > spoolInMemory {
		if err := s.toFile(); err != nil {
			return err
		}
	}
	if s.file != nil {
		if _, err := s.file.WriteAt(p, s.stored-s.base); err != nil {
			return fmt.Errorf("%w: %v", ErrSpoolFile, err)
		}
	} else {
		s.mem = append(s.mem, p...)
	}
	s.stored, s.size = end, s.size+int64(len(p))
	return nil
}

// toFile moves the stored bytes to a new temporary file.
func (s *Spool) toFile() error {
	f, err := os.CreateTemp(s.Dir, s.pattern)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSpoolFile, err)
	}
	if _, err := f.Write(s.mem); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("%w: %v", ErrSpoolFile, err)
	}
	s.file, s.mem = f, nil
	return nil
}

// ReadAt reads like os.File.ReadAt (io.EOF when p reaches past the end); bytes that were not
// kept fail with errSpoolSkipped.
func (s *Spool) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("spool: negative offset %d", off)
	}
	if off >= s.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), s.size-off)
	for _, b := range s.boxes.boxes {
		if b.skip < b.end && off < b.end && off+n > b.skip {
			return 0, fmt.Errorf("%w: reading bytes %d-%d, of which %d-%d are mdat payload", errSpoolSkipped,
				off, off+n-1, max(off, b.skip), min(off+n, b.end)-1)
		}
	}
	at := off - s.skipped(off)
	var k int
	var err error
	if at < s.base {
		k = int(min(n, s.base-at))
		if err := s.readChunks(p[:k], at); err != nil {
			return 0, err
		}
	}
	if int64(k) < n {
		var m int
		if s.file != nil {
			m, err = s.file.ReadAt(p[k:n], at+int64(k)-s.base)
		} else {
			m = copy(p[k:n], s.mem[at+int64(k)-s.base:])
		}
		k += m
	}
	if err == nil && int64(len(p)) > n {
		err = io.EOF
	}
	return k, err
}

// spoolZeros fills a gap (read only). A block declared in Truncate was cleared on every
// WriteAt, which calls it, and grew the stack of each goroutine that wrote.
var spoolZeros [32 << 10]byte

// Truncate cuts the spool to size bytes, or fills it with zeros up to size.
func (s *Spool) Truncate(size int64) error {
	if size >= s.size {
		for s.size < size {
			if err := s.append(spoolZeros[:min(size-s.size, int64(len(spoolZeros)))]); err != nil {
				return err
			}
		}
		return nil
	}
	b := &s.boxes
	if b.stopped >= size {
		b.stopped = -1
	}
	// Drop the boxes whose header is cut; the bytes of the header being read are stored
	// (headers always are) and are read back below.
	for len(b.boxes) > 0 && b.last().data > size {
		b.boxes = b.boxes[:len(b.boxes)-1]
	}
	stored := size - s.skipped(size)
	if stored < s.base {
		return fmt.Errorf("%w: cannot cut bytes kept in chunks", ErrSpoolFile)
	}
	s.size = size
	if s.file != nil {
		if err := s.file.Truncate(stored - s.base); err != nil {
			return fmt.Errorf("%w: %v", ErrSpoolFile, err)
		}
	} else {
		s.mem = s.mem[:stored-s.base]
	}
	s.stored = stored
	b.header = b.header[:0]
	if next := b.next(); b.stopped < 0 && next < size {
		// In the middle of the next box's header: take its bytes back.
		b.header = append(b.header, make([]byte, size-next)...)
		if _, err := s.ReadAt(b.header, next); err != nil {
			return fmt.Errorf("%w: %v", ErrSpoolFile, err)
		}
	}
	return nil
}

// Close frees the spool: its memory, or its file, which it removes.
func (s *Spool) Close() error {
	s.mem = nil
	if s.file == nil {
		return nil
	}
	err := s.file.Close()
	if rerr := os.Remove(s.file.Name()); err == nil {
		err = rerr
	}
	s.file = nil
	return err
}
