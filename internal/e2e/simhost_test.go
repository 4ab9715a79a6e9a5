package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/instagram/instagramsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simhost"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
	"github.com/reelay/reelay/internal/platform/youtube/youtubesim"
)

// platforms are the platforms with a simulator.
var platforms = []string{"youtube", "instagram", "tiktok"}

// slowUpload is the size from which a transfer to a simulator (a request body, or the media a
// simulator pulls) counts as an upload: it is throttled and signalled.
const slowUpload = 1 << 20

// simHost serves the platform simulators in the test process, at /sandbox/{platform}/ as the
// server mounts its own, so that they outlive the reelay processes the tests kill. Uploads
// (request bodies over 1 MB; the media Instagram pulls) are throttled to rate bytes per
// second, and the first bytes of each platform's first upload are signalled.
type simHost struct {
	t     *testing.T
	URL   string
	srv   *httptest.Server
	host  *simhost.Host
	rate  atomic.Int64 // bytes per second of each upload; 0 = unthrottled
	begun time.Time

	mu      sync.Mutex
	started map[string]chan struct{} // closed at the first upload bytes of each platform
	firstAt map[string]time.Time     // when they arrived
	log     []string                 // every request, for the test log
}

func newSimHost(t *testing.T, rate int64) *simHost {
	t.Helper()
	h := &simHost{t: t, started: map[string]chan struct{}{}, firstAt: map[string]time.Time{}, begun: time.Now()}
	h.rate.Store(rate)
	h.srv = httptest.NewUnstartedServer(nil)
	h.URL = "http://" + h.srv.Listener.Addr().String()
	for _, name := range platforms {
		h.started[name] = make(chan struct{})
	}
	var err error
	h.host, err = simhost.New(simhost.Config{
		// The host does not read the behaviour the server stores with each channel: its TikTok
		// app is an audited one here, as the tests publish direct with the default privacy.
		URL: h.URL, SecretKey: testSecretKey, Platforms: platforms, Behavior: sim.Behavior{ProcessingMS: 0, AppAccess: sim.AppAccessAudited},
		Simulators: map[string]func(sim.Config) http.Handler{
			"youtube": youtubesim.New, "instagram": instagramsim.New, "tiktok": tiktoksim.New,
		},
		Wrap: h.wrap,
		PullClient: func(name string) *http.Client {
			return &http.Client{Transport: &slowTransport{
				base: http.DefaultTransport.(*http.Transport).Clone(), host: h, platform: name}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.srv.Config.Handler = h.host
	h.srv.Start()
	t.Cleanup(func() {
		// Connections of killed servers are gone; what is left ends with the processes,
		// which cleanups registered later (so run earlier) have killed.
		h.srv.CloseClientConnections()
		h.srv.Close()
		if t.Failed() {
			h.mu.Lock()
			t.Logf("------ simulator requests ------\n%s\n------ end of simulator requests ------", strings.Join(h.log, "\n"))
			h.mu.Unlock()
		}
	})
	return h
}

// sawUpload signals the first upload bytes of platform.
func (h *simHost) sawUpload(platform string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.started[platform]:
	default:
		h.firstAt[platform] = time.Now()
		close(h.started[platform])
		h.log = append(h.log, fmt.Sprintf("%8.3fs %-9s first upload bytes", time.Since(h.begun).Seconds(), platform))
	}
}

// uploadStarted is closed when platform's simulator first receives upload bytes.
func (h *simHost) uploadStarted(platform string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started[platform]
}

// firstUpload is when platform's simulator first received upload bytes (zero: not yet).
func (h *simHost) firstUpload(platform string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.firstAt[platform]
}

// note adds a line to the request log.
func (h *simHost) note(format string, args ...any) {
	h.mu.Lock()
	h.log = append(h.log, fmt.Sprintf("%8.3fs ", time.Since(h.begun).Seconds())+fmt.Sprintf(format, args...))
	h.mu.Unlock()
}

// snapshot is what the simulator of platform recorded.
func (h *simHost) snapshot(platform string) sim.Introspection {
	got, err := h.host.Received(context.Background(), platform)
	if err != nil {
		h.t.Fatal(err)
	}
	return got
}

// statusRecorder notes the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// wrap throttles and signals the uploads of one simulator and logs its requests.
func (h *simHost) wrap(platform string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var body *slowReader
		if r.ContentLength > slowUpload {
			body = &slowReader{r: r.Body, host: h, platform: platform}
			r.Body = body
		}
		sr := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(sr, r)
		path := r.URL.Path
		if q := r.URL.Query(); q.Get("upload_id") != "" {
			path += "?upload_id=" + q.Get("upload_id")
		}
		line := fmt.Sprintf("%-9s %s %s -> %d (%s)", platform, r.Method, path, sr.code, time.Since(start).Round(time.Millisecond))
		if cr := r.Header.Get("Content-Range"); cr != "" {
			line += " Content-Range: " + cr
		}
		if body != nil {
			line += fmt.Sprintf(" body read %d of %d", body.n, r.ContentLength)
		}
		if cr := sr.Header().Get("Content-Range"); cr != "" {
			line += " answered Content-Range: " + cr
		}
		if rg := sr.Header().Get("Range"); rg != "" {
			line += " answered Range: " + rg
		}
		h.note("%s", line)
	})
}

// slowReader reads an upload at the host's rate, signalling its first bytes.
type slowReader struct {
	r        io.ReadCloser
	host     *simHost
	platform string
	start    time.Time
	n        int64
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, err := s.r.Read(p)
	if n > 0 {
		s.host.sawUpload(s.platform)
		if s.start.IsZero() {
			s.start = time.Now()
		}
		s.n += int64(n)
		if rate := s.host.rate.Load(); rate > 0 {
			due := s.start.Add(time.Duration(float64(s.n) / float64(rate) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
	}
	return n, err
}

func (s *slowReader) Close() error { return s.r.Close() }

// slowTransport throttles the media a simulator pulls (Instagram fetching reelay's link).
type slowTransport struct {
	base     http.RoundTripper
	host     *simHost
	platform string
}

func (s *slowTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err != nil {
		s.host.note("%-9s pull GET %s failed: %v", s.platform, r.URL.Path, err)
		return nil, err
	}
	s.host.note("%-9s pull GET %s -> %d (%d bytes)", s.platform, r.URL.Path, resp.StatusCode, resp.ContentLength)
	if resp.ContentLength > slowUpload {
		resp.Body = &pullBody{slowReader{r: resp.Body, host: s.host, platform: s.platform}, r.URL.Path}
	}
	return resp, nil
}

// pullBody logs how a pull ended.
type pullBody struct {
	slowReader
	path string
}

func (b *pullBody) Read(p []byte) (int, error) {
	n, err := b.slowReader.Read(p)
	if err != nil {
		b.host.note("%-9s pull GET %s ended after %d bytes: %v", b.platform, b.path, b.n, err)
	}
	return n, err
}
