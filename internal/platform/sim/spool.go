package sim

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// errSpoolFile marks a failure to keep an upload's bytes (the spool's temporary file, or the
// bookkeeping around it): the simulator's fault, not the upload's.
var errSpoolFile = errors.New("spool file")

// spoolInMemory is the size up to which a spool keeps an upload in memory. Creating and
// removing a temporary file costs more than receiving a small video (a burst of short clips
// spent 5% of its CPU in the simulators' openat and unlink); past this size an upload goes to
// disk, so a simulator's memory stays bounded by its uploads in progress, not their size.
const spoolInMemory = 256 << 10

// spool holds the bytes of one upload while it arrives and until it is checked: in memory
// while it is at most spoolInMemory bytes, in a temporary file in dir after that. It is not
// safe for concurrent use; the simulators serialise each upload's requests.
type spool struct {
	dir     string
	pattern string
	mem     []byte
	file    *os.File
}

func newSpool(dir, pattern string) *spool { return &spool{dir: dir, pattern: pattern} }

// WriteAt writes p at off, growing the spool as needed (a gap reads as zeros).
func (s *spool) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("spool: negative offset %d", off)
	}
	end := off + int64(len(p))
	if s.file == nil && end > spoolInMemory {
		if err := s.toFile(); err != nil {
			return 0, err
		}
	}
	if s.file != nil {
		n, err := s.file.WriteAt(p, off)
		if err != nil {
			err = fmt.Errorf("%w: %v", errSpoolFile, err)
		}
		return n, err
	}
	if end > int64(len(s.mem)) {
		if end > int64(cap(s.mem)) {
			grown := make([]byte, end, max(end, 2*int64(cap(s.mem))))
			copy(grown, s.mem)
			s.mem = grown
		} else {
			clear(s.mem[len(s.mem):end])
			s.mem = s.mem[:end]
		}
	}
	return copy(s.mem[off:], p), nil
}

// toFile moves the spool's bytes to a new temporary file.
func (s *spool) toFile() error {
	f, err := os.CreateTemp(s.dir, s.pattern)
	if err != nil {
		return fmt.Errorf("%w: %v", errSpoolFile, err)
	}
	if _, err := f.Write(s.mem); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("%w: %v", errSpoolFile, err)
	}
	s.file, s.mem = f, nil
	return nil
}

// ReadAt reads like os.File.ReadAt: io.EOF when p reaches past the end.
func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	if s.file != nil {
		return s.file.ReadAt(p, off)
	}
	if off < 0 {
		return 0, fmt.Errorf("spool: negative offset %d", off)
	}
	if off >= int64(len(s.mem)) {
		return 0, io.EOF
	}
	n := copy(p, s.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Truncate cuts the spool to size bytes.
func (s *spool) Truncate(size int64) error {
	if s.file != nil {
		return s.file.Truncate(size)
	}
	if size < int64(len(s.mem)) {
		s.mem = s.mem[:size]
		return nil
	}
	_, err := s.WriteAt(make([]byte, size-int64(len(s.mem))), int64(len(s.mem)))
	return err
}

// Close frees the spool: its memory, or its file, which it removes.
func (s *spool) Close() error {
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
