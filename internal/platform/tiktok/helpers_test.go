package tiktok

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
	"github.com/reelay/reelay/internal/publish"
)

// testVideo is a real MP4 from mediatest (one H.264 track of the given duration and frame
// size) padded to size bytes, generated as it is read: the padding that mediatest writes as
// zeros after the samples is replaced by a position-dependent pattern, so that a chunk sent at
// the wrong offset changes the hash, and a 73 MB video costs no 73 MB of memory or disk.
type testVideo struct {
	header []byte // the file up to the end of its samples, with the mdat size of the padded file
	size   int64
}

var pattern = func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 65521) // a prime period
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

func newTestVideo(size int64, dur time.Duration, w, h int) *testVideo {
	o := mediatest.Options{Duration: dur, Width: w, Height: h}
	var small bytes.Buffer
	if err := mediatest.WriteMP4(&small, o); err != nil {
		panic(err)
	}
	if size <= int64(small.Len()) {
		panic("test video too small")
	}
	o.Size = size
	pw := &prefixWriter{max: small.Len()}
	if err := mediatest.WriteMP4(pw, o); err != nil {
		panic(err)
	}
	if pw.n != size {
		panic(fmt.Sprintf("mediatest wrote %d bytes, want %d", pw.n, size))
	}
	return &testVideo{header: pw.b, size: size}
}

// prefixWriter keeps the first max bytes written and counts the rest.
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
func (v *testVideo) ReadAt(p []byte, off int64) (int, error) {
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

func (v *testVideo) open(_ context.Context, off int64) (io.ReadCloser, error) {
	return io.NopCloser(io.NewSectionReader(v, off, v.size-off)), nil
}

func (v *testVideo) sha256() string {
	h := sha256.New()
	_, _ = io.Copy(h, io.NewSectionReader(v, 0, v.size))
	return hex.EncodeToString(h.Sum(nil))
}

func (v *testVideo) media(dur time.Duration, w, h int) publish.Media {
	return publish.Media{Size: v.size, ContentType: "video/mp4", Width: w, Height: h, Duration: dur, Open: v.open}
}

func newClock() *clocktest.Clock { return clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) }

// request is one request the simulator received.
type request struct {
	Method, Path, ContentRange string
	Status                     int
}

// env is a TikTok simulator on an httptest server, mounted below /sandbox/tiktok as the server
// mounts it, and a provider pointed at it.
type env struct {
	t     *testing.T
	clock *clocktest.Clock
	sim   *sim.TikTok
	base  string
	prov  *Provider

	mu   sync.Mutex
	reqs []request
}

func newEnv(t *testing.T, accounts sim.StaticAccounts, opts sim.TikTokOptions, cfg Config) *env {
	t.Helper()
	return newEnvRand(t, accounts, opts, cfg, func() float64 { return 0.99 })
}

// newEnvRand is newEnv with the simulator's dice for flaky accounts.
func newEnvRand(t *testing.T, accounts sim.StaticAccounts, opts sim.TikTokOptions, cfg Config, rnd func() float64) *env {
	t.Helper()
	e := &env{t: t, clock: newClock()}
	mux := http.NewServeMux()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rw, r)
		e.mu.Lock()
		e.reqs = append(e.reqs, request{r.Method, r.URL.Path, r.Header.Get("Content-Range"), rw.status})
		e.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	e.base = srv.URL + "/sandbox/tiktok"
	e.sim = sim.NewTikTokSim(sim.Config{BaseURL: e.base, Accounts: accounts, Now: e.clock.Now,
		Rand: rnd}, opts)
	mux.Handle("/sandbox/tiktok/", e.sim)
	cfg.Now = e.clock.Now
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = time.Millisecond
	}
	cfg.HTTPClient = srv.Client()
	e.prov = New(cfg)
	return e
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(s int) { w.status = s; w.ResponseWriter.WriteHeader(s) }

func (e *env) requests(method, pathSuffix string) []request {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []request
	for _, r := range e.reqs {
		if r.Method == method && strings.HasSuffix(r.Path, pathSuffix) {
			out = append(out, r)
		}
	}
	return out
}

func (e *env) dest(token string, v publish.Media, options string) *publish.Destination {
	return &publish.Destination{
		ID:          "dst_1",
		Account:     "acct",
		Credentials: map[string]string{"access_token": token},
		BaseURL:     e.base,
		Title:       "A title",
		Caption:     "A caption #reelay",
		Options:     json.RawMessage(options),
		Video:       v,
	}
}

// step runs one Step and stores its State in d, as the publisher does.
func (e *env) step(d *publish.Destination) (publish.Outcome, error) {
	e.t.Helper()
	out, err := e.prov.Step(context.Background(), d)
	if err == nil {
		d.State = out.State
	}
	return out, err
}

// run steps d until it is done or fails, moving the clock by each outcome's After.
func (e *env) run(d *publish.Destination, maxSteps int) (publish.Outcome, error) {
	e.t.Helper()
	for range maxSteps {
		out, err := e.step(d)
		if err != nil || out.Done() {
			return out, err
		}
		e.clock.Advance(out.After)
	}
	return publish.Outcome{}, fmt.Errorf("not done after %d steps", maxSteps)
}

func asPublishError(t *testing.T, err error) *publish.Error {
	t.Helper()
	var pe *publish.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *publish.Error", err, err)
	}
	return pe
}

func stateOf(t *testing.T, raw json.RawMessage) State {
	t.Helper()
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}
