// Package providertest is what every provider's tests share: a platform simulator on a test
// server, mounted below /sandbox/{platform} as the server mounts it, with a clock the test moves
// and a log of the requests it received; videos of any size that cost no memory; and a driver
// that steps a destination the way the publisher does (storing State between steps).
package providertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// Request is one request the simulator received.
type Request struct {
	Method string
	Path   string // below the mount point's host: /sandbox/{platform}/...
	Query  string
	Header http.Header
	Status int
}

// Env is a simulator on an httptest server.
type Env struct {
	T     testing.TB
	Clock *clocktest.Clock
	// BaseURL is the simulator's base (what a sandbox Destination gets as BaseURL).
	BaseURL string
	// Client talks to the test server; give it to the provider.
	Client *http.Client
	// Recorder is what the simulator recorded (its _introspect).
	Recorder *sim.Recorder

	mu   sync.Mutex
	reqs []Request
}

// Options tune NewEnv.
type Options struct {
	// Rand draws the simulator's flaky failures; nil never fails (0.99).
	Rand func() float64
}

// NewEnv starts the simulator that build returns for cfg, mounted at /sandbox/{platformName}.
// The clock starts at a fixed date; the simulator uses it as its Now.
func NewEnv(t testing.TB, platformName string, accounts sim.Accounts, build func(sim.Config) http.Handler, o Options) *Env {
	t.Helper()
	e := &Env{T: t, Clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), Recorder: &sim.Recorder{}}
	if o.Rand == nil {
		o.Rand = func() float64 { return 0.99 }
	}
	mux := http.NewServeMux()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rw, r)
		e.mu.Lock()
		e.reqs = append(e.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Status: rw.status})
		e.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	prefix := "/sandbox/" + platformName
	e.BaseURL = srv.URL + prefix
	e.Client = srv.Client()
	h := build(sim.Config{BaseURL: e.BaseURL, Accounts: accounts, Recorder: e.Recorder, Now: e.Clock.Now, Rand: o.Rand, PullClient: srv.Client()})
	mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	return e
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

// Flush lets streaming handlers flush through the recorder.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (websocket hijacks).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Requests returns the requests with method (any when "") whose path ends with suffix.
func (e *Env) Requests(method, suffix string) []Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Request
	for _, r := range e.reqs {
		if (method == "" || r.Method == method) && strings.HasSuffix(r.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

// Introspect is what the simulator recorded for every account.
func (e *Env) Introspect() sim.Introspection { return e.Recorder.Snapshot(nil) }

// Step runs one Step and stores its State in d, as the publisher does.
func Step(ctx context.Context, p provider.Provider, d *provider.Destination) (provider.Outcome, error) {
	out, err := p.Step(ctx, d)
	if err == nil {
		d.State = out.State
	}
	return out, err
}

// Run steps d until it is done or fails, moving the clock by each outcome's After, and returns
// every outcome. It fails the test after maxSteps.
func (e *Env) Run(p provider.Provider, d *provider.Destination, maxSteps int) ([]provider.Outcome, error) {
	e.T.Helper()
	var outs []provider.Outcome
	for range maxSteps {
		out, err := Step(context.Background(), p, d)
		if err != nil {
			return outs, err
		}
		outs = append(outs, out)
		if out.Done() {
			return outs, nil
		}
		e.Clock.Advance(out.After)
	}
	e.T.Fatalf("not done after %d steps", maxSteps)
	return outs, nil
}

// RunRetrying is Run that also retries transient errors, as the publisher does (moving the
// clock by the error's Retry-After, or a second), so flaky platforms can be driven to the end.
// A permanent error ends it.
func (e *Env) RunRetrying(p provider.Provider, d *provider.Destination, maxSteps int) ([]provider.Outcome, error) {
	e.T.Helper()
	var outs []provider.Outcome
	for range maxSteps {
		out, err := Step(context.Background(), p, d)
		if err != nil {
			pe := provider.AsError(err)
			if !pe.Transient {
				return outs, err
			}
			e.Clock.Advance(max(pe.RetryAfter, time.Second))
			continue
		}
		outs = append(outs, out)
		if out.Done() {
			return outs, nil
		}
		e.Clock.Advance(out.After)
	}
	e.T.Fatalf("not done after %d steps", maxSteps)
	return outs, nil
}

// AsError asserts err is a *provider.Error and returns it.
func AsError(t testing.TB, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *publish.Error", err, err)
	}
	return pe
}

// WantError asserts err is a *provider.Error of category, transient or not, whose message
// contains text.
func WantError(t testing.TB, err error, category string, transient bool, text string) *provider.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", category)
	}
	pe := AsError(t, err)
	if pe.Category != category || pe.Transient != transient || !strings.Contains(pe.Message, text) {
		t.Fatalf("error = %v; want category %s, transient %v, message containing %q", pe, category, transient, text)
	}
	return pe
}

// Video is a real MP4 (one H.264 track from mediatest) padded to any size with a
// position-dependent pattern, generated as it is read: a chunk sent at the wrong offset changes
// its hash, and a 200 MB video costs no 200 MB of memory.
type Video struct {
	header                []byte
	size                  int64
	duration              time.Duration
	width, height         int
	contentType, checksum string
	url                   string
}

var pattern = func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 65521) // a prime period
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

// NewVideo returns a w×h MP4 of duration dur, size bytes long (at least a few KB).
func NewVideo(size int64, dur time.Duration, w, h int) *Video {
	return NewVideoOf(size, mediatest.Options{Duration: dur, Width: w, Height: h})
}

// NewVideoOf is NewVideo for any mediatest options with the moov box first (a frame rate, a
// sound track): the bytes after the metadata are a pattern, not the file's media data.
func NewVideoOf(size int64, o mediatest.Options) *Video {
	if o.MoovAtEnd {
		panic("providertest: a video's metadata must come first")
	}
	if o.Duration <= 0 || o.Width <= 0 || o.Height <= 0 {
		panic("providertest: NewVideoOf needs the duration, width and height")
	}
	var small bytes.Buffer
	if err := mediatest.WriteMP4(&small, o); err != nil {
		panic(err)
	}
	if size <= int64(small.Len()) {
		panic(fmt.Sprintf("test video of %d bytes is too small: the MP4 alone is %d", size, small.Len()))
	}
	o.Size = size
	pw := &prefixWriter{max: small.Len()}
	if err := mediatest.WriteMP4(pw, o); err != nil {
		panic(err)
	}
	if pw.n != size {
		panic(fmt.Sprintf("mediatest wrote %d bytes, want %d", pw.n, size))
	}
	v := &Video{header: pw.b, size: size, duration: o.Duration, width: o.Width, height: o.Height, contentType: "video/mp4"}
	h256 := sha256.New()
	_, _ = io.Copy(h256, io.NewSectionReader(v, 0, v.size))
	v.checksum = hex.EncodeToString(h256.Sum(nil))
	return v
}

// ShortVideo is a 1080×1920, 10-second, 2 MB video: what most tests need.
func ShortVideo() *Video { return NewVideo(2<<20, 10*time.Second, 1080, 1920) }

type prefixWriter struct {
	b   []byte
	max int
	n   int64
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// ReadAt implements io.ReaderAt.
func (v *Video) ReadAt(p []byte, off int64) (int, error) {
	if off >= v.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off < v.size {
		var m int
		if off < int64(len(v.header)) {
			m = copy(p[n:], v.header[off:])
		} else {
			i := off % int64(len(pattern))
			m = copy(p[n:], pattern[i:])
		}
		if rest := v.size - off; int64(m) > rest {
			m = int(rest)
		}
		n += m
		off += int64(m)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Size is the video's length in bytes; SHA256 its hex digest (what _introspect reports).
func (v *Video) Size() int64    { return v.size }
func (v *Video) SHA256() string { return v.checksum }

// Bytes returns the whole video; for small videos only.
func (v *Video) Bytes() []byte {
	b := make([]byte, v.size)
	_, _ = v.ReadAt(b, 0)
	return b
}

// WithURL sets the link Media().URL carries, for pull-based platforms (see Serve).
func (v *Video) WithURL(u string) *Video { v.url = u; return v }

// Media is the video as a provider receives it.
func (v *Video) Media() provider.Media {
	return provider.Media{
		Size: v.size, SHA256: v.checksum, ContentType: v.contentType, Width: v.width, Height: v.height,
		Duration: v.duration, URL: v.url,
		Open: func(_ context.Context, off int64) (io.ReadCloser, error) {
			if off < 0 || off > v.size {
				return nil, fmt.Errorf("offset %d outside 0..%d", off, v.size)
			}
			return io.NopCloser(io.NewSectionReader(v, off, v.size-off)), nil
		},
	}
}

// Serve serves v on its own test server (as reelay's signed media links do) and returns its
// URL, for pull-based platforms; the video remembers it for Media().URL.
func (v *Video) Serve(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", v.contentType)
		http.ServeContent(w, r, "video.mp4", time.Time{}, io.NewSectionReader(v, 0, v.size))
	}))
	t.Cleanup(srv.Close)
	v.url = srv.URL + "/video.mp4"
	return v.url
}

// Destination is a destination of account on the simulator, with credentials creds, the
// common texts and per-platform options (a JSON object, "" for none).
func (e *Env) Destination(account string, creds map[string]string, v *Video, options string) *provider.Destination {
	if options == "" {
		options = "{}"
	}
	return &provider.Destination{
		ID: "dst_" + account, Account: account, Credentials: creds, BaseURL: e.BaseURL,
		Title: "A title", Caption: "A caption #reelay", Options: json.RawMessage(options), Video: v.Media(),
	}
}
