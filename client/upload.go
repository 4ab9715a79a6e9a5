package client

import (
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"sync/atomic"
)

// Upload is a file sent with a request, read while the request goes out: it is never held in
// memory whole.
type Upload struct {
	// Reader yields the file's bytes. An io.Seeker (an *os.File of a regular file, a
	// *bytes.Reader) can be rewound, so a failed upload can be sent again; any other reader
	// (a pipe, standard input) is read once.
	Reader io.Reader
	// Name is the file name sent with the bytes; the server goes by the content.
	Name string
	// Size is the length in bytes when known. 0 lets the client find it out (a Len method,
	// or seeking to the end and back); when it stays unknown the body is sent without a
	// Content-Length and Progress reports a total of -1.
	Size int64
}

// formField is a text field of a multipart form.
type formField struct{ name, value string }

// formFile is a file part of a multipart form.
type formFile struct {
	field  string
	up     *Upload
	size   int64 // -1: unknown
	seeker io.Seeker
	start  int64 // where to rewind to
}

// form is a multipart body written on the fly, once per attempt, into a pipe the transport
// reads from: memory use does not depend on the files' size.
type form struct {
	fields   []formField
	files    []formFile
	boundary string
	total    int64 // bytes of the files, -1 when one's size is unknown
	length   int64 // bytes of the whole body, -1 when unknown
	progress func(sent, total int64)
	// rewindable: every file can be sought back to its start.
	rewindable bool
	// read counts the file bytes the latest attempt took from the readers.
	read atomic.Int64
}

// newForm measures the files and, when every size is known, the body, so that the request
// carries a Content-Length (some proxies refuse chunked uploads) and Progress a total.
func newForm(fields []formField, files []formFile, progress func(sent, total int64)) (*form, error) {
	f := &form{fields: fields, boundary: multipart.NewWriter(io.Discard).Boundary(), progress: progress,
		rewindable: true}
	for _, ff := range files {
		if ff.up == nil || ff.up.Reader == nil {
			continue
		}
		if err := measure(&ff); err != nil {
			return nil, err
		}
		if ff.seeker == nil {
			f.rewindable = false
		}
		f.files = append(f.files, ff)
	}
	f.total = 0
	for _, ff := range f.files {
		if ff.size < 0 {
			f.total = -1
			break
		}
		f.total += ff.size
	}
	f.length = -1
	if f.total >= 0 {
		var cw countingWriter
		// The same writer logic as the real body, with each file's bytes counted, not read.
		if err := f.write(&cw, func(w io.Writer, ff formFile) error { cw.n += ff.size; return nil }); err != nil {
			return nil, err
		}
		f.length = cw.n
	}
	return f, nil
}

// measure finds a file's size and whether it can be rewound.
func measure(ff *formFile) error {
	up := ff.up
	ff.size = up.Size
	known := up.Size > 0
	if up.Size < 0 {
		ff.size, known = -1, false
	}
	if s, ok := up.Reader.(io.Seeker); ok {
		if start, err := s.Seek(0, io.SeekCurrent); err == nil {
			ff.seeker, ff.start = s, start
			if !known {
				end, err := s.Seek(0, io.SeekEnd)
				if err != nil {
					return fmt.Errorf("reelay: %s: find its size: %w", ff.field, err)
				}
				if _, err := s.Seek(start, io.SeekStart); err != nil {
					return fmt.Errorf("reelay: %s: rewind: %w", ff.field, err)
				}
				ff.size, known = end-start, true
			}
		}
	}
	if l, ok := up.Reader.(interface{ Len() int }); ok && !known {
		ff.size, known = int64(l.Len()), true
	}
	if !known {
		ff.size = -1
	}
	return nil
}

// write writes the whole form to w; copy writes one file's bytes into its part.
func (f *form) write(w io.Writer, copy func(io.Writer, formFile) error) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(f.boundary); err != nil {
		return err
	}
	for _, fd := range f.fields {
		if err := mw.WriteField(fd.name, fd.value); err != nil {
			return err
		}
	}
	for _, ff := range f.files {
		name := ff.up.Name
		if name == "" {
			name = ff.field
		}
		part, err := mw.CreateFormFile(ff.field, name)
		if err != nil {
			return err
		}
		if err := copy(part, ff); err != nil {
			return err
		}
	}
	return mw.Close()
}

// replayable tells whether the form can be sent again: its files can be rewound, or the
// failed attempt read none of their bytes.
func (f *form) replayable() bool { return f.rewindable || f.read.Load() == 0 }

// formAttempt is one sending of a form.
type formAttempt struct {
	body          *io.PipeReader
	contentType   string
	contentLength int64
	done          chan error // the writer's outcome: nil, or a *sourceError
}

// errAttemptOver stops a writer whose request has been answered.
var errAttemptOver = errors.New("reelay: the upload's request is over")

// start begins writing the form for attempt (0 for the first), rewinding the files first on
// a retry.
func (f *form) start(attempt int) (*formAttempt, error) {
	if attempt > 0 {
		for _, ff := range f.files {
			if ff.seeker == nil {
				continue
			}
			if _, err := ff.seeker.Seek(ff.start, io.SeekStart); err != nil {
				return nil, fmt.Errorf("reelay: %s: rewind for a retry: %w", ff.field, err)
			}
		}
	}
	f.read.Store(0)
	pr, pw := io.Pipe()
	a := &formAttempt{body: pr, contentType: "multipart/form-data; boundary=" + f.boundary,
		contentLength: f.length, done: make(chan error, 1)}
	go func() {
		var sent int64
		err := f.write(pw, func(w io.Writer, ff formFile) error { return f.copyFile(w, ff, &sent) })
		pw.CloseWithError(err) // nil: the reader sees EOF
		var se *sourceError
		if errors.As(err, &se) {
			a.done <- se
			return
		}
		a.done <- nil
	}()
	return a, nil
}

// finish ends the attempt's writer (a no-op when it is done) and returns the error of reading
// a file, if that is what broke the request.
func (a *formAttempt) finish() error {
	a.body.CloseWithError(errAttemptOver)
	return <-a.done
}

// copyFile streams one file into its part, reporting progress; a declared size must match.
func (f *form) copyFile(w io.Writer, ff formFile, sent *int64) error {
	src := &progressReader{r: ff.up.Reader, field: ff.field, form: f, sent: sent}
	if ff.size < 0 {
		_, err := io.Copy(w, src)
		return err
	}
	n, err := io.CopyN(w, src, ff.size)
	if errors.Is(err, io.EOF) {
		return &sourceError{field: ff.field, err: fmt.Errorf("ended after %d of its %d bytes", n, ff.size)}
	}
	if err != nil {
		return err
	}
	var extra [1]byte
	if k, _ := ff.up.Reader.Read(extra[:]); k > 0 {
		return &sourceError{field: ff.field, err: fmt.Errorf("is longer than its Size, %d bytes", ff.size)}
	}
	return nil
}

// sourceError is a failure to read a file, told apart from the pipe closing under the writer.
type sourceError struct {
	field string
	err   error
}

func (e *sourceError) Error() string { return "read " + e.field + ": " + e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// progressReader counts what is read from a file and reports it.
type progressReader struct {
	r     io.Reader
	field string
	form  *form
	sent  *int64
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		*p.sent += int64(n)
		p.form.read.Add(int64(n))
		if p.form.progress != nil {
			p.form.progress(*p.sent, p.form.total)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = &sourceError{field: p.field, err: err}
	}
	return n, err
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return len(b), nil
}
