package httpapi

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/config"
)

// answerGrace is how long past a request's time limit its answer may still take to write, so
// that a client cut off at the limit is told why (a 408) rather than finding the connection
// closed.
const answerGrace = 10 * time.Second

// pace is what limits a request in time: its body must arrive at minRate bytes a second or
// faster, over each window of time spent waiting for it, and the whole request must be over
// within limit.
type pace struct {
	minRate int64
	window  time.Duration
	limit   time.Duration
}

func newPace(minRate int64, window, limit time.Duration) pace {
	if minRate <= 0 {
		minRate = config.DefaultMinBodyRate
	}
	if window <= 0 {
		window = config.DefaultBodyRateWindow
	}
	if limit <= 0 {
		limit = config.DefaultRequestTimeout
	}
	return pace{minRate: minRate, window: window, limit: limit}
}

// limitTime bounds every request: the connection's read and write deadlines and the request's
// context end at the time limit (writes a little later, to send the refusal), and a body is
// read through a pacedBody. Without it, a client sending one byte every few seconds would hold
// a connection, a goroutine and a half-written temporary file for as long as it liked.
func (s *Server) limitTime(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(s.pace.limit)
		rc := http.NewResponseController(w)
		// Recorders in tests and HTTP/2 streams without deadlines answer ErrNotSupported: the
		// context's deadline and the byte counts still apply there.
		canDeadline := rc.SetReadDeadline(deadline) == nil
		_ = rc.SetWriteDeadline(deadline.Add(answerGrace))
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		r = r.WithContext(ctx)
		var body *pacedBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &pacedBody{body: r.Body, rc: rc, deadlines: canDeadline, pace: s.pace, deadline: deadline}
			r.Body = body
		}
		next.ServeHTTP(w, r)
		if body != nil && body.unread() && canDeadline {
			// net/http reads what a handler left of a body (up to 256 KB, to keep the connection)
			// before it sends the answer, at the client's pace and outside pacedBody: one window
			// for that, after which it closes the connection instead.
			_ = rc.SetReadDeadline(earlier(time.Now().Add(s.pace.window), deadline))
		}
	})
}

// pacedBody is a request body that fails when the client sends it too slowly: in every window
// of time spent waiting for it, at least minRate × window bytes must arrive. Only the time
// spent inside Read counts, so a handler that pauses between reads (storing what it has to a
// slow S3) does not make its client look slow; the bytes the client sent meanwhile wait in
// the socket and arrive at once on the next read. A read that would wait past the point where
// the window can no longer be met is cut there by the connection's read deadline, so a client
// that sends nothing at all is caught too.
type pacedBody struct {
	body      io.ReadCloser
	rc        *http.ResponseController
	deadlines bool
	pace      pace
	// deadline is the request's time limit, the read deadline outside reads.
	deadline time.Time

	waited time.Duration // time waited for the body in the current window
	got    int64         // bytes received in the current window
	err    error         // the refusal, once made: every later read answers it
	ended  bool          // a read answered an error (io.EOF at the end)
}

// unread reports whether the handler left part of the body unread.
func (b *pacedBody) unread() bool { return !b.ended && b.err == nil }

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (b *pacedBody) need() int64 {
	return b.pace.minRate * int64(b.pace.window) / int64(time.Second)
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// The longest this read may wait: the rest of the window while the window still lacks
	// bytes; once it has them, the next window too, which starts empty.
	allowed := b.pace.window - b.waited
	if b.got >= b.need() {
		allowed += b.pace.window
	}
	start := time.Now()
	if b.deadlines {
		_ = b.rc.SetReadDeadline(earlier(start.Add(allowed), b.deadline))
	}
	n, err := b.body.Read(p)
	end := time.Now()
	b.ended = b.ended || err != nil
	if b.deadlines {
		// Back to the request's limit: net/http reads the connection in the background once
		// the body is done, and an earlier deadline there would cancel the request's context
		// while its handler is still at work.
		_ = b.rc.SetReadDeadline(b.deadline)
	}
	b.waited += end.Sub(start)
	// The bytes came at the end of the wait: windows that closed during it got none of them.
	for b.waited >= b.pace.window {
		if b.got < b.need() {
			return n, b.refuse(b.tooSlow())
		}
		b.waited -= b.pace.window
		b.got = 0
	}
	b.got += int64(n)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() {
		if !end.Before(b.deadline) {
			return n, b.refuse(apierr.Newf(http.StatusRequestTimeout, apierr.CodeRequestTimeout,
				"the request took longer than %s, the longest a request may take", b.pace.limit).Wrap(err))
		}
		return n, b.refuse(b.tooSlow().Wrap(err))
	}
	return n, err
}

func (b *pacedBody) tooSlow() *apierr.Error {
	return apierr.Newf(http.StatusRequestTimeout, apierr.CodeRequestTimeout,
		"the request body arrived slower than %d bytes a second over %s; send it faster, or from a faster connection",
		b.pace.minRate, b.pace.window)
}

// refuse records err as the body's answer from now on and makes sure nothing more is read
// from the client: net/http would otherwise read on, at the client's pace, to discard what is
// left of the body before answering. The answer says to close the connection, whose remaining
// bytes are not worth reading.
func (b *pacedBody) refuse(err *apierr.Error) error {
	b.err = err
	if b.deadlines {
		_ = b.rc.SetReadDeadline(time.Unix(1, 0))
	}
	return err
}

func (b *pacedBody) Close() error { return b.body.Close() }
