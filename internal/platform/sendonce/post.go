package sendonce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"sync/atomic"

	"github.com/reelay/reelay/internal/provider"
)

// Part is one part of a multipart/form-data body: a field (Value, with ContentType when it is
// set) or a file (Open != nil, Size bytes).
type Part struct {
	Name, Value string
	Filename    string
	ContentType string
	Size        int64
	Open        func(ctx context.Context, offset int64) (io.ReadCloser, error)
}

// Form is a multipart body written with a fixed boundary, so that its exact length is known
// before any file byte is read (the file parts are counted, not read) and it can be streamed.
type Form struct {
	Boundary string
	Parts    []Part
}

// NewForm is a form of parts with a random boundary.
func NewForm(parts ...Part) Form {
	return Form{Boundary: "reelay-" + randomHex(12), Parts: parts}
}

// ContentLength is the exact length of the body: the form written without the files' bytes,
// plus their sizes.
func (f Form) ContentLength() int64 {
	var cw countWriter
	_ = f.write(context.Background(), &cw, false)
	n := cw.n
	for _, p := range f.Parts {
		if p.Open != nil {
			n += p.Size
		}
	}
	return n
}

// write writes the body to w, streaming each file from its reader when withFiles is set. A
// file that cannot be read, or whose reader yields another byte count than its size, is a
// *SourceError; a failure to write to w is returned as w returned it (unwrapped from
// sinkError).
func (f Form) write(ctx context.Context, w io.Writer, withFiles bool) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(f.Boundary); err != nil {
		return err
	}
	for _, p := range f.Parts {
		h := make(textproto.MIMEHeader)
		if p.Open == nil {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, p.Name))
			if p.ContentType != "" {
				h.Set("Content-Type", p.ContentType)
			}
			pw, err := mw.CreatePart(h)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(pw, p.Value); err != nil {
				return err
			}
			continue
		}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, p.Name, p.Filename))
		h.Set("Content-Type", p.ContentType)
		pw, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		if !withFiles {
			continue
		}
		rc, err := p.Open(ctx, 0)
		if err != nil {
			return &SourceError{fmt.Errorf("opening %s: %w", p.Filename, err)}
		}
		n, err := io.Copy(pw, io.LimitReader(rc, p.Size+1))
		rc.Close()
		if err != nil {
			var se *sinkError
			if errors.As(err, &se) {
				return se.err
			}
			return &SourceError{fmt.Errorf("reading %s: %w", p.Filename, err)}
		}
		if n != p.Size {
			return &SourceError{fmt.Errorf("%s is %d bytes, not the %d stored", p.Filename, n, p.Size)}
		}
	}
	return mw.Close()
}

// SourceError is a failure to read the media: the request body was cut short, so the platform
// cannot have accepted it.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return e.Err.Error() }

// UnknownError is a send whose outcome is unknown: a connection was made, the body was not cut
// short, and no answer of the platform's came back (none at all, or one that is not the
// platform's: a proxy's, or a result cut short).
type UnknownError struct{ Err error }

func (e *UnknownError) Error() string { return e.Err.Error() }

// sinkError is a failure to write the body (the request side), told apart from the media's.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }

type sinkWriter struct{ w io.Writer }

func (s sinkWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		err = &sinkError{err}
	}
	return n, err
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// Post sends f as the body of the request newRequest builds (POST, with the body it is given;
// its error is returned as it is), streamed through a pipe: the media is never held in memory.
// name starts the text of the errors Post makes ("Telegram sendVideo", "Discord"); they never
// carry the URL, which may hold a token.
//
// It returns the answer, once the body is no longer written (a platform may answer before it
// has read the whole body), for the caller to decode and close. Or it fails with a
// *SourceError (the media failed mid-body: nothing was posted), a transient
// upstream_unavailable *provider.Error (no connection was made: nothing was posted), or an
// *UnknownError (a connection was made and no answer came).
func Post(ctx context.Context, hc *http.Client, name string, f Form, newRequest func(ctx context.Context, body io.Reader) (*http.Request, error)) (*http.Response, error) {
	length := f.ContentLength()
	pr, pw := io.Pipe()
	var srcErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := f.write(ctx, sinkWriter{pw}, true)
		var se *SourceError
		if errors.As(err, &se) {
			srcErr = se
		}
		pw.CloseWithError(err)
	}()
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	req, err := newRequest(httptrace.WithClientTrace(ctx, trace), pr)
	if err != nil {
		pr.Close()
		<-done
		return nil, err
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+f.Boundary)
	resp, err := hc.Do(req)
	if err != nil {
		pr.CloseWithError(err)
		<-done
		switch {
		case srcErr != nil:
			return nil, srcErr
		case !connected.Load():
			return nil, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "%s: %v", name, provider.WithoutURL(err))
		}
		return nil, &UnknownError{fmt.Errorf("%s: %v", name, provider.WithoutURL(err))}
	}
	pr.CloseWithError(errors.New("answered"))
	<-done
	return resp, nil
}
