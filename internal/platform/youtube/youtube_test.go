package youtube

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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/youtube/youtubesim"
	"github.com/reelay/reelay/internal/provider"
)

// countingTransport counts the requests the provider sends, and lets a test act before one.
type countingTransport struct {
	n      atomic.Int64
	failed atomic.Int64 // answers of 5xx
	before func(*http.Request)
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if c.before != nil {
		c.before(r)
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.StatusCode >= 500 {
		c.failed.Add(1)
	}
	return resp, err
}

type harness struct {
	t        *testing.T
	base     string
	rec      *sim.Recorder
	clock    *clocktest.Clock
	p        *Provider
	requests *countingTransport
}

type setup struct {
	behavior sim.Behavior
	sim      youtubesim.Options
	cfg      Config
	rand     func() float64
}

// newHarness serves the YouTube simulator below /sandbox/youtube, as the server mounts it,
// with one account whose token is "tok".
func newHarness(t *testing.T, s setup) *harness {
	t.Helper()
	c := clocktest.New(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
	rec := &sim.Recorder{}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/sandbox/youtube"
	s.sim.SpoolDir = t.TempDir()
	h := youtubesim.NewWith(sim.Config{
		BaseURL:  base,
		Accounts: sim.StaticAccounts{"tok": {ID: "acct", Username: "Channel", Behavior: s.behavior}},
		Recorder: rec, Now: c.Now, Rand: s.rand,
	}, s.sim)
	mux := http.NewServeMux()
	mux.Handle("/sandbox/youtube/", http.StripPrefix("/sandbox/youtube", h))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	ct := &countingTransport{}
	s.cfg.HTTPClient = &http.Client{Transport: ct}
	if s.cfg.Repeat.Delay == 0 {
		s.cfg.Repeat.Delay = time.Millisecond
	}
	return &harness{t: t, base: base, rec: rec, clock: c, p: New(s.cfg), requests: ct}
}

// testVideo is a valid MP4 of exactly n bytes (n ≥ 10,000): 1080×1920, 2 seconds, as the
// destination built by dest describes it.
func testVideo(t *testing.T, n int) []byte {
	t.Helper()
	return sizedMP4(t, mediatest.Options{Size: int64(n)})
}

func sizedMP4(t *testing.T, o mediatest.Options) []byte {
	t.Helper()
	b := mediatest.MP4Bytes(t, o)
	if o.Size > 0 && int64(len(b)) != o.Size {
		t.Fatalf("test video of %d bytes, want %d", len(b), o.Size)
	}
	return b
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func media(b []byte, ct string, w, h int, d time.Duration) provider.Media {
	return provider.Media{
		Size: int64(len(b)), SHA256: hexSHA(b), ContentType: ct, Width: w, Height: h, Duration: d,
		Open: func(_ context.Context, off int64) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b[off:])), nil
		},
	}
}

func (h *harness) dest(video []byte, opts string) *provider.Destination {
	return &provider.Destination{
		ID: "dest-1", Account: "acct", Credentials: map[string]string{"access_token": "tok"}, BaseURL: h.base,
		Title: "Post title", Caption: "Post caption #shorts", Options: json.RawMessage(opts),
		Video: media(video, "video/mp4", 1080, 1920, 2*time.Second),
	}
}

// drive steps d as the publisher does, storing each State and moving the simulator's clock by
// each Outcome.After, until the destination is done, a step fails, or max steps ran.
func (h *harness) drive(d *provider.Destination, max int) ([]provider.Outcome, error) {
	h.t.Helper()
	var outs []provider.Outcome
	for range max {
		out, err := h.p.Step(context.Background(), d)
		if err != nil {
			return outs, err
		}
		outs = append(outs, out)
		d.State, d.Continued = out.State, true
		if out.Done() {
			return outs, nil
		}
		h.clock.Advance(out.After)
	}
	h.t.Fatalf("not done after %d steps: %+v", max, outs)
	return outs, nil
}

// driveRetrying is drive, stepping again after transient errors as the publisher's retries do.
func (h *harness) driveRetrying(d *provider.Destination, max int) ([]provider.Outcome, error) {
	h.t.Helper()
	var outs []provider.Outcome
	for range max {
		out, err := h.p.Step(context.Background(), d)
		d.Continued = err == nil
		if err != nil {
			if pe := asError(h.t, err); pe.Transient {
				continue
			}
			return outs, err
		}
		outs = append(outs, out)
		d.State = out.State
		if out.Done() {
			return outs, nil
		}
		h.clock.Advance(out.After)
	}
	h.t.Fatalf("not done after %d steps: %+v", max, outs)
	return outs, nil
}

// snippet reads the video back from the simulator.
func (h *harness) snippet(id string) map[string]any {
	h.t.Helper()
	req, _ := http.NewRequest("GET", h.base+"/youtube/v3/videos?part=snippet,status&id="+id, nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct{ Items []map[string]any }
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Items) != 1 {
		h.t.Fatalf("videos.list: %v %+v", err, l)
	}
	return l.Items[0]
}

func asError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("not a *publish.Error: %v", err)
	}
	return pe
}

func TestPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name             string
		w, h             int
		dur              time.Duration
		opts             string
		title, caption   string
		wantURL          string
		wantTitle        string
		wantDesc         string
		wantPrivacy      string
		wantMadeForKids  bool
		wantCategory     string
		processingMS     int
		wantStatusesHead []string
	}{
		{
			name: "vertical short with defaults", w: 1080, h: 1920, dur: 30 * time.Second, opts: `{}`,
			title: "Post title", caption: "Post caption #shorts",
			wantURL: "https://www.youtube.com/shorts/", wantTitle: "Post title", wantDesc: "Post caption #shorts",
			wantPrivacy: "public", wantCategory: "22", processingMS: -1,
			wantStatusesHead: []string{"uploading", "processing", "processing"},
		},
		{
			name: "options override the post's texts", w: 1080, h: 1080, dur: 3 * time.Minute,
			opts:  `{"title":"YT title","description":"YT description","privacy_status":"unlisted","made_for_kids":true,"category_id":"27"}`,
			title: "Post title", caption: "Post caption",
			wantURL: "https://www.youtube.com/shorts/", wantTitle: "YT title", wantDesc: "YT description",
			wantPrivacy: "unlisted", wantMadeForKids: true, wantCategory: "27", processingMS: 0,
		},
		{
			name: "landscape is a watch URL", w: 1920, h: 1080, dur: 30 * time.Second, opts: `{"privacy_status":"private"}`,
			title: "Post title", wantURL: "https://www.youtube.com/watch?v=", wantTitle: "Post title", wantPrivacy: "private",
			wantCategory: "22", processingMS: 0,
		},
		{
			name: "vertical over 3 minutes is a watch URL", w: 720, h: 1280, dur: 3*time.Minute + time.Second, opts: `{}`,
			title: "Post title", wantURL: "https://www.youtube.com/watch?v=", wantTitle: "Post title", wantPrivacy: "public",
			wantCategory: "22", processingMS: 0,
		},
		{
			name: "no title falls back to the caption's first line", w: 1080, h: 1920, dur: time.Minute, opts: ``,
			caption: "First line of the caption\nsecond line", wantURL: "https://www.youtube.com/shorts/",
			wantTitle: "First line of the caption", wantDesc: "First line of the caption\nsecond line", wantPrivacy: "public",
			wantCategory: "22", processingMS: 0,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: c.processingMS}, cfg: Config{ChunkSize: 256 << 10}})
			video := sizedMP4(t, mediatest.Options{Size: 700_000, Width: c.w, Height: c.h, Duration: c.dur})
			d := h.dest(video, c.opts)
			d.Title, d.Caption = c.title, c.caption
			d.Video = media(video, "video/mp4", c.w, c.h, c.dur)
			outs, err := h.drive(d, 20)
			if err != nil {
				t.Fatal(err)
			}
			last := outs[len(outs)-1]
			if last.Status != provider.StatusPublished || len(last.ExternalID) != 11 || last.URL != c.wantURL+last.ExternalID || last.Message != "" {
				t.Fatalf("last outcome = %+v", last)
			}
			for i, s := range c.wantStatusesHead {
				if outs[i].Status != s {
					t.Errorf("outcome %d status %s, want %s", i, outs[i].Status, s)
				}
			}
			snap := h.rec.Snapshot(nil)
			if len(snap.Uploads) != 1 || snap.Uploads[0] != (sim.Upload{Account: "acct", Bytes: int64(len(video)), SHA256: hexSHA(video)}) {
				t.Fatalf("uploads = %+v", snap.Uploads)
			}
			if len(snap.Published) != 1 || snap.Published[0].ID != last.ExternalID || snap.Published[0].SHA256 != hexSHA(video) ||
				snap.Published[0].URL != last.URL {
				t.Fatalf("published = %+v", snap.Published)
			}
			v := h.snippet(last.ExternalID)
			sn, st := v["snippet"].(map[string]any), v["status"].(map[string]any)
			if sn["title"] != c.wantTitle || sn["description"] != c.wantDesc || sn["categoryId"] != c.wantCategory ||
				st["privacyStatus"] != c.wantPrivacy || st["selfDeclaredMadeForKids"] != c.wantMadeForKids {
				t.Fatalf("on YouTube: %+v", v)
			}
		})
	}
}

func TestProcessingIsPolledWithBoundedBackoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{
		behavior: sim.Behavior{ProcessingMS: 20_000},
		cfg:      Config{PollInitial: time.Second, PollMax: 5 * time.Second},
	})
	outs, err := h.drive(h.dest(testVideo(t, 10_000), `{}`), 30)
	if err != nil {
		t.Fatal(err)
	}
	var afters []time.Duration
	for _, o := range outs {
		if o.Status == provider.StatusProcessing {
			afters = append(afters, o.After)
		}
	}
	// The upload's outcome asks for the first poll at once; then 1, 2, 4, 5, 5, ... seconds.
	want := []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}
	if fmt.Sprint(afters) != fmt.Sprint(want) {
		t.Fatalf("waits = %v, want %v", afters, want)
	}
	if outs[len(outs)-1].Status != provider.StatusPublished {
		t.Fatalf("last = %+v", outs[len(outs)-1])
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		behavior   sim.Behavior
		video      []byte
		category   string
		transient  bool
		status     int
		retryAfter time.Duration
		message    string
	}{
		{"reject", sim.Behavior{Fail: sim.FailReject, ProcessingMS: 500}, nil, provider.CategoryMediaRejected, false, 0, 0, "termsOfUse"},
		{"not a video", sim.Behavior{ProcessingMS: 500}, bytes.Repeat([]byte("text, not video. "), 1000), provider.CategoryMediaRejected, false, 0, 0, "invalidFile"},
		{"over 15 minutes", sim.Behavior{ProcessingMS: 500}, sizedMP4(t, mediatest.Options{Duration: 16 * time.Minute}), provider.CategoryMediaRejected, false, 0, 0, "length (the video is too long)"},
		{"unavailable", sim.Behavior{Fail: sim.FailUnavailable}, nil, provider.CategoryUpstreamUnavailable, true, 503, 0, "Backend Error"},
		{"auth", sim.Behavior{Fail: sim.FailAuth}, nil, provider.CategoryAuthExpired, false, 401, 0, "invalid authentication credentials"},
		{"rate limit", sim.Behavior{Fail: sim.FailRateLimit}, nil, provider.CategoryRateLimited, true, 429, 10 * time.Second, "rateLimitExceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{behavior: c.behavior})
			video := c.video
			if video == nil {
				video = testVideo(t, 50_000)
			}
			_, err := h.drive(h.dest(video, `{}`), 10)
			if err == nil {
				t.Fatal("no error")
			}
			pe := asError(t, err)
			if pe.Category != c.category || pe.Transient != c.transient || pe.Status != c.status || pe.RetryAfter != c.retryAfter ||
				!strings.Contains(pe.Message, c.message) {
				t.Fatalf("error = %+v", pe)
			}
			if len(h.rec.Snapshot(nil).Published) != 0 {
				t.Fatal("published")
			}
		})
	}
}

// TestFlakyEventuallyPublishes keeps stepping through transient failures, as the publisher's
// retries do, and ends with one upload and one published video.
func TestFlakyEventuallyPublishes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(7, 11))
	h := newHarness(t, setup{
		behavior: sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.4, ProcessingMS: 3000},
		rand:     func() float64 { mu.Lock(); defer mu.Unlock(); return r.Float64() },
		cfg:      Config{ChunkSize: 256 << 10},
	})
	video := testVideo(t, 1_300_000)
	d := h.dest(video, `{}`)
	var last provider.Outcome
	failures := 0
	for i := 0; i < 200 && !last.Done(); i++ {
		out, err := h.p.Step(context.Background(), d)
		if err != nil {
			if pe := asError(t, err); !pe.Transient {
				t.Fatalf("permanent: %v", err)
			}
			failures++
			continue
		}
		last, d.State = out, out.State
		h.clock.Advance(out.After)
	}
	if last.Status != provider.StatusPublished {
		t.Fatalf("not published: %+v", last)
	}
	if h.requests.failed.Load() == 0 {
		t.Fatal("the flaky account never failed")
	}
	t.Logf("%d calls failed, %d steps", h.requests.failed.Load(), failures)
	snap := h.rec.Snapshot(nil)
	if len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != hexSHA(video) || len(snap.Published) != 1 {
		t.Fatalf("uploads %+v published %+v", snap.Uploads, snap.Published)
	}
}

func TestQuota(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		opt     youtubesim.Options
		status  int
		message string
	}{
		// Uploads are charged to videos.insert's own bucket, not to the daily units.
		{"upload bucket", youtubesim.Options{InsertQuota: 1}, 403, "YouTube's videos.insert quota bucket: 1 uploads a day"},
		{"uploads per day", youtubesim.Options{DailyUploads: 1}, 400, "The user has exceeded the number of videos they may upload. (uploadLimitExceeded)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}, sim: c.opt})
			if _, err := h.drive(h.dest(testVideo(t, 10_000), `{}`), 10); err != nil {
				t.Fatal(err)
			}
			_, err := h.drive(h.dest(testVideo(t, 10_000), `{}`), 10)
			pe := asError(t, err)
			if pe.Category != provider.CategoryQuotaExceeded || pe.Transient || pe.Status != c.status || !strings.Contains(pe.Message, c.message) {
				t.Fatalf("error = %+v", pe)
			}
			// The next day (Pacific Time) the quota is back.
			h.clock.Advance(24 * time.Hour)
			if _, err := h.drive(h.dest(testVideo(t, 10_000), `{}`), 10); err != nil {
				t.Fatal(err)
			}
			if n := len(h.rec.Snapshot(nil).Uploads); n != 2 {
				t.Fatalf("%d uploads", n)
			}
		})
	}
}

// failingOpen wraps a video so that the first Open's reader fails after limit bytes, as a
// process that dies mid-upload would; it notes every offset Open is called with.
type failingOpen struct {
	mu      sync.Mutex
	video   []byte
	limit   int
	offsets []int64
	read    int64
}

type failAfter struct {
	r    io.Reader
	left int
	f    *failingOpen
}

func (a *failAfter) Read(b []byte) (int, error) {
	if a.left == 0 {
		return 0, errors.New("process died")
	}
	if len(b) > a.left {
		b = b[:a.left]
	}
	n, err := a.r.Read(b)
	a.left -= n
	a.f.mu.Lock()
	a.f.read += int64(n)
	a.f.mu.Unlock()
	return n, err
}

func (f *failingOpen) Open(_ context.Context, off int64) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offsets = append(f.offsets, off)
	left := len(f.video) // never fails after the first Open
	if len(f.offsets) == 1 {
		left = f.limit
	}
	return io.NopCloser(&failAfter{r: bytes.NewReader(f.video[off:]), left: left, f: f}), nil
}

func TestCrashResume(t *testing.T) {
	t.Parallel()
	const chunk = 512 << 10
	for _, c := range []struct {
		name     string
		failAt   int
		resumeAt []int64 // where YouTube may stand after the crash
		wantErr  bool    // the crashed step confirmed nothing and reports the failure
	}{
		// Two chunks went through and the third was cut after 450 KiB: YouTube keeps what
		// arrived of it rounded down to 256 KiB (the HTTP client may not have flushed the
		// last few KiB it read before the failure, hence two possible offsets).
		{"after two chunks and part of the third", 2*chunk + 450<<10, []int64{2*chunk + 256<<10, 2 * chunk}, false},
		// The first chunk was cut after 100 KiB: nothing is kept, the step reports the error.
		{"inside the first chunk", 100 << 10, []int64{0}, true},
		// Cut after 450 KiB of the first chunk: 256 KiB are kept even though the step failed.
		{"after part of the first chunk", 450 << 10, []int64{256 << 10, 0}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// A process that dies repeats nothing: the failing read stands for the crash.
			h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}, cfg: Config{ChunkSize: chunk, Repeat: provider.Repeat{Tries: 1}}})
			video := testVideo(t, 4*chunk+1000)
			f := &failingOpen{video: video, limit: c.failAt}
			d := h.dest(video, `{}`)
			d.Video.Open = f.Open

			out, err := h.p.Step(context.Background(), d) // start the session
			if err != nil || out.Status != provider.StatusUploading {
				t.Fatalf("start: %+v %v", out, err)
			}
			d.State = out.State
			out, err = h.p.Step(context.Background(), d) // the upload that dies
			if c.wantErr {
				if pe := asError(t, err); !pe.Transient || !strings.Contains(pe.Message, "process died") {
					t.Fatalf("crashed step: %+v", pe)
				}
				// The publisher keeps the State it had: the session URI.
			} else {
				if err != nil || out.Status != provider.StatusUploading || !strings.Contains(out.Message, "process died") {
					t.Fatalf("crashed step: %+v %v", out, err)
				}
				d.State = out.State
			}
			if n := len(h.rec.Snapshot(nil).Uploads); n != 0 {
				t.Fatalf("%d uploads after the crash", n)
			}
			// Resume as the publisher does, retrying transient errors: the server may still be
			// taking in the dead request's last bytes when the next step asks where it stands.
			outs, err := h.driveRetrying(d, 10)
			if err != nil {
				t.Fatal(err)
			}
			if last := outs[len(outs)-1]; last.Status != provider.StatusPublished {
				t.Fatalf("last = %+v", last)
			}
			if len(f.offsets) < 2 || f.offsets[0] != 0 {
				t.Fatalf("Open offsets = %v", f.offsets)
			}
			for _, off := range f.offsets[1:] {
				if !slices.Contains(c.resumeAt, off) {
					t.Fatalf("Open offsets = %v, want resumes from one of %v", f.offsets, c.resumeAt)
				}
			}
			// What was read twice is at most the part of the dead request past YouTube's
			// offset, and one chunk refused if it raced with the dead request's last bytes.
			if max := int64(len(video)) + int64(c.failAt)%chunk + chunk; f.read > max {
				t.Fatalf("read %d bytes for a %d-byte video", f.read, len(video))
			}
			snap := h.rec.Snapshot(nil)
			if len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != hexSHA(video) || snap.Uploads[0].Bytes != int64(len(video)) {
				t.Fatalf("uploads = %+v", snap.Uploads)
			}
		})
	}
}

// TestOffsetMovedUnderTheUpload moves the session forward between the provider's status query
// and its chunk, as the late bytes of a dead request do: the chunk is refused (400), the
// provider asks again and goes on from the new offset in the same step.
func TestOffsetMovedUnderTheUpload(t *testing.T) {
	t.Parallel()
	const chunk = 256 << 10
	h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}, cfg: Config{ChunkSize: chunk}})
	video := testVideo(t, 3*chunk+500)
	var once sync.Once
	h.requests.before = func(r *http.Request) {
		if r.Method != http.MethodPut || r.ContentLength == 0 {
			return
		}
		once.Do(func() { // someone else's chunk lands first
			req, _ := http.NewRequest("PUT", r.URL.String(), bytes.NewReader(video[:chunk]))
			req.Header.Set("Authorization", "Bearer tok")
			req.Header.Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", chunk-1, len(video)))
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil || resp.StatusCode != http.StatusPermanentRedirect {
				t.Errorf("moving the session: %v %v", resp, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
		})
	}
	d := h.dest(video, `{}`)
	outs, err := h.drive(d, 10)
	if err != nil {
		t.Fatal(err)
	}
	if outs[1].Status != provider.StatusProcessing {
		t.Fatalf("the upload step did not complete: %+v", outs[1])
	}
	if up := h.rec.Snapshot(nil).Uploads; len(up) != 1 || up[0].SHA256 != hexSHA(video) {
		t.Fatalf("uploads = %+v", up)
	}
}

// TestSessionQueriedUnlessJustOpened: the upload step asks the session where it stands
// (an empty PUT with "bytes */SIZE") except right after the step of the same run that opened
// it, when the session holds nothing; a session resumed from the store is always asked.
func TestSessionQueriedUnlessJustOpened(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		continued   bool
		wantQueries int64
	}{
		{"opened by the previous step of this run", true, 0},
		{"loaded from the store", false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}, cfg: Config{ChunkSize: 256 << 10}})
			var queries atomic.Int64
			h.requests.before = func(r *http.Request) {
				if r.Method == http.MethodPut && strings.HasPrefix(r.Header.Get("Content-Range"), "bytes */") {
					queries.Add(1)
				}
			}
			video := testVideo(t, 600_000)
			d := h.dest(video, `{}`)
			out, err := h.p.Step(context.Background(), d)
			if err != nil || out.Status != provider.StatusUploading {
				t.Fatalf("start: %+v %v", out, err)
			}
			d.State, d.Continued = out.State, c.continued
			out, err = h.p.Step(context.Background(), d)
			if err != nil || out.Status != provider.StatusProcessing {
				t.Fatalf("upload: %+v %v", out, err)
			}
			if n := queries.Load(); n != c.wantQueries {
				t.Errorf("%d status queries, want %d", n, c.wantQueries)
			}
			if up := h.rec.Snapshot(nil).Uploads; len(up) != 1 || up[0].SHA256 != hexSHA(video) {
				t.Fatalf("uploads = %+v", up)
			}
		})
	}
}

// TestResumeAfterCompletion replays the upload step with the State stored before it, as after
// a crash between YouTube's final answer and storing the video id: the status query returns
// the video, and nothing is uploaded again.
func TestResumeAfterCompletion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}})
	d := h.dest(testVideo(t, 20_000), `{}`)
	out, err := h.p.Step(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	d.State = out.State
	first, err := h.p.Step(context.Background(), d)
	if err != nil || first.Status != provider.StatusProcessing {
		t.Fatalf("upload: %+v %v", first, err)
	}
	again, err := h.p.Step(context.Background(), d) // same State: the session URI
	if err != nil || again.Status != provider.StatusProcessing || again.ExternalID != first.ExternalID {
		t.Fatalf("replayed upload: %+v %v", again, err)
	}
	if n := len(h.rec.Snapshot(nil).Uploads); n != 1 {
		t.Fatalf("%d uploads", n)
	}
}

func TestExpiredSessionRestarts(t *testing.T) {
	t.Parallel()
	for _, midUpload := range []bool{false, true} {
		t.Run(fmt.Sprintf("mid-upload=%v", midUpload), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}, cfg: Config{ChunkSize: 256 << 10, Repeat: provider.Repeat{Tries: 1}}})
			video := testVideo(t, 1_000_000)
			f := &failingOpen{video: video, limit: 300 << 10}
			d := h.dest(video, `{}`)
			if midUpload {
				d.Video.Open = f.Open
			}
			out, err := h.p.Step(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			d.State = out.State
			if midUpload {
				out, err := h.p.Step(context.Background(), d)
				if err != nil || out.Status != provider.StatusUploading {
					t.Fatalf("crashed step: %+v %v", out, err)
				}
				d.State = out.State
			}
			h.clock.Advance(7*24*time.Hour + time.Second)

			out, err = h.p.Step(context.Background(), d)
			var st State
			json.Unmarshal(out.State, &st)
			if err != nil || out.Status != provider.StatusUploading || st.SessionURI != "" || st.Restarts != 1 || !strings.Contains(out.Message, "expired") {
				t.Fatalf("expired session: %+v %v", out, err)
			}
			d.State = out.State
			outs, err := h.drive(d, 10)
			if err != nil || outs[len(outs)-1].Status != provider.StatusPublished {
				t.Fatalf("after restart: %+v %v", outs, err)
			}
			snap := h.rec.Snapshot(nil)
			if len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != hexSHA(video) {
				t.Fatalf("uploads = %+v", snap.Uploads)
			}
		})
	}
}

func TestThumbnail(t *testing.T) {
	t.Parallel()
	jpeg := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 500)...)
	for _, c := range []struct {
		name, ctype, wantState, wantMessage string
		img                                 []byte
	}{
		{"a JPEG is set", "image/jpeg", thumbSet, "", jpeg},
		{"YouTube refuses the image", "image/png", thumbFailed, "thumbnail not set: The provided image content is invalid. (invalidImage)", []byte("not a png")},
		{"WebP is not sent", "image/webp", thumbFailed, "thumbnail not set: YouTube takes JPEG or PNG thumbnails, not image/webp", []byte("RIFF....WEBP")},
		{"over 2 MB is not sent", "image/jpeg", thumbFailed, "thumbnail not set: YouTube takes thumbnails of at most 2 MB; this one has 2097153 bytes", append(jpeg, make([]byte, 2<<20-len(jpeg)+1)...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 1000}})
			d := h.dest(testVideo(t, 30_000), `{}`)
			thumb := media(c.img, c.ctype, 0, 0, 0)
			d.Thumbnail = &thumb
			outs, err := h.drive(d, 10)
			if err != nil {
				t.Fatal(err)
			}
			last := outs[len(outs)-1]
			var st State
			json.Unmarshal(last.State, &st)
			if last.Status != provider.StatusPublished || st.Thumbnail != c.wantState || last.Message != c.wantMessage {
				t.Fatalf("last = %+v, state %+v", last, st)
			}
		})
	}
}

func TestRefusedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, opts, title string
		creds             map[string]string
		category          string
		message           string
	}{
		{"title too long", `{"title":"` + strings.Repeat("x", 101) + `"}`, "t", nil, provider.CategoryInvalidOptions, "at most 100 characters"},
		{"title with <", `{}`, "a <b>", nil, provider.CategoryInvalidOptions, "must not contain < or >"},
		{"description too long", `{"description":"` + strings.Repeat("é", 2501) + `"}`, "t", nil, provider.CategoryInvalidOptions, "at most 5000 bytes"},
		{"unknown privacy", `{"privacy_status":"friends"}`, "t", nil, provider.CategoryInvalidOptions, "public, unlisted or private"},
		{"options not an object", `[1]`, "t", nil, provider.CategoryInvalidOptions, "youtube options"},
		{"no title at all", `{}`, "", nil, provider.CategoryInvalidOptions, "requires a title"},
		{"no token", `{}`, "t", map[string]string{}, provider.CategoryAuthExpired, "reconnect"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, setup{})
			d := h.dest(testVideo(t, 12000), c.opts)
			d.Title, d.Caption = c.title, ""
			if c.creds != nil {
				d.Credentials = c.creds
			}
			_, err := h.p.Step(context.Background(), d)
			pe := asError(t, err)
			if pe.Category != c.category || pe.Transient || !strings.Contains(pe.Message, c.message) {
				t.Fatalf("error = %+v", pe)
			}
			if n := h.requests.n.Load(); n != 0 {
				t.Fatalf("%d requests sent", n)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	opts, err := h.p.Options(context.Background(), h.base, map[string]string{"access_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	cat := opts["category_id"].(map[string]any)
	ids := map[string]bool{}
	for _, c := range cat["choices"].([]any) {
		ids[c.(map[string]any)["id"].(string)] = true
	}
	if !ids["22"] || !ids["27"] || ids["42"] || cat["default"] != "22" || opts["privacy_status"] == nil || opts["made_for_kids"] == nil {
		t.Fatalf("options = %+v", opts)
	}
	_, err = h.p.Options(context.Background(), h.base, map[string]string{"access_token": "wrong"})
	if pe := asError(t, err); pe.Category != provider.CategoryAuthExpired {
		t.Fatalf("wrong token: %+v", pe)
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status    int
		reason    string
		category  string
		transient bool
	}{
		{401, "authError", provider.CategoryAuthExpired, false},
		{403, "quotaExceeded", provider.CategoryQuotaExceeded, false},
		{403, "dailyLimitExceeded", provider.CategoryQuotaExceeded, false},
		{400, "uploadLimitExceeded", provider.CategoryQuotaExceeded, false},
		{403, "rateLimitExceeded", provider.CategoryRateLimited, true},
		{403, "userRateLimitExceeded", provider.CategoryRateLimited, true},
		{429, "rateLimitExceeded", provider.CategoryRateLimited, true},
		{429, "uploadRateLimitExceeded", provider.CategoryRateLimited, true},
		{429, "", provider.CategoryRateLimited, true},
		{403, "forbidden", provider.CategoryAuthExpired, false},
		{403, "insufficientPermissions", provider.CategoryAuthExpired, false},
		{403, "forbiddenPrivacySetting", provider.CategoryInvalidOptions, false},
		{400, "invalidTitle", provider.CategoryInvalidOptions, false},
		{400, "invalidCategoryId", provider.CategoryInvalidOptions, false},
		{413, "uploadTooLarge", provider.CategoryMediaRejected, false},
		{500, "internalError", provider.CategoryUpstreamUnavailable, true},
		{503, "backendError", provider.CategoryUpstreamUnavailable, true},
		{408, "", provider.CategoryUpstreamUnavailable, true},
		{404, "notFound", provider.CategoryInternal, false},
	} {
		e := classify(c.status, c.reason, "message", 3*time.Second)
		if e.Category != c.category || e.Transient != c.transient || e.Status != c.status {
			t.Errorf("%d %s: %+v", c.status, c.reason, e)
		}
		if e.Transient && e.RetryAfter != 3*time.Second {
			t.Errorf("%d %s: RetryAfter %v", c.status, c.reason, e.RetryAfter)
		}
	}
	if got := plain(`you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.`); got != "you have exceeded your quota." {
		t.Errorf("plain = %q", got)
	}
	h := http.Header{}
	h.Set("Retry-After", "120")
	if retryAfter(h) != 2*time.Minute {
		t.Errorf("Retry-After seconds")
	}
	h.Set("Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	if d := retryAfter(h); d < 59*time.Minute || d > time.Hour {
		t.Errorf("Retry-After date: %v", d)
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	h := newHarness(t, setup{})
	id, err := h.p.Identify(context.Background(), h.base, map[string]string{"access_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id.ExternalID, "UC") || id.Name != "Channel" || id.Username != "@channel" ||
		!strings.HasPrefix(id.AvatarURL, "https://yt3.ggpht.com/") || !strings.Contains(id.AvatarURL, "=s88-") {
		t.Fatalf("identity = %+v", id)
	}
	// ExternalID is the channel that the videos it uploads belong to.
	outs, err := h.drive(h.dest(testVideo(t, 20_000), `{}`), 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.snippet(outs[len(outs)-1].ExternalID)["snippet"].(map[string]any)["channelId"]; got != id.ExternalID {
		t.Fatalf("video of channel %v, identity %s", got, id.ExternalID)
	}

	for _, c := range []struct {
		name     string
		s        setup
		token    string
		category string
		message  string
	}{
		{"rejected token", setup{}, "wrong", provider.CategoryAuthExpired, "invalid authentication credentials"},
		{"token revoked", setup{behavior: sim.Behavior{Fail: sim.FailAuth}}, "tok", provider.CategoryAuthExpired, "authError"},
		{"no token", setup{}, "", provider.CategoryAuthExpired, "no YouTube access token"},
		{"no channel", setup{sim: youtubesim.Options{NoChannel: map[string]bool{"acct": true}}}, "tok",
			provider.CategoryInvalidOptions, "this Google account has no YouTube channel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, c.s)
			_, err := h.p.Identify(context.Background(), h.base, map[string]string{"access_token": c.token})
			pe := asError(t, err)
			if pe.Category != c.category || pe.Transient || !strings.Contains(pe.Message, c.message) {
				t.Fatalf("error = %+v", pe)
			}
		})
	}
	// An outage is transient.
	h = newHarness(t, setup{behavior: sim.Behavior{Fail: sim.FailUnavailable}})
	_, err = h.p.Identify(context.Background(), h.base, map[string]string{"access_token": "tok"})
	if pe := asError(t, err); pe.Category != provider.CategoryUpstreamUnavailable || !pe.Transient {
		t.Fatalf("unavailable: %+v", pe)
	}
}

// TestChunkResumedWithinStep: a chunk cut off mid-read is not sent again blindly. The step
// asks the session what it holds and goes on from there, without an error and without
// sending again a byte the session confirmed.
func TestChunkResumedWithinStep(t *testing.T) {
	t.Parallel()
	const chunk = 512 << 10
	h := newHarness(t, setup{behavior: sim.Behavior{ProcessingMS: 0}, cfg: Config{ChunkSize: chunk}})
	video := testVideo(t, 4*chunk+1000)
	f := &failingOpen{video: video, limit: 2*chunk + 450<<10}
	d := h.dest(video, `{}`)
	d.Video.Open = f.Open
	out, err := h.p.Step(context.Background(), d) // start the session
	if err != nil {
		t.Fatal(err)
	}
	d.State = out.State
	out, err = h.p.Step(context.Background(), d)
	if err != nil || out.Status != provider.StatusProcessing {
		t.Fatalf("upload step: %+v %v; want the upload complete", out, err)
	}
	// YouTube keeps what arrived of the cut chunk rounded down to 256 KiB; the client may not
	// have flushed the last KiB it read. The cut request's last bytes may also reach the session
	// after the step asked it where it stands: the next chunk is then refused, the step asks
	// again and resumes from further on. Either way each resume is from what the session held,
	// and never goes back.
	held := []int64{2 * chunk, 2*chunk + 256<<10}
	if len(f.offsets) < 2 {
		t.Fatalf("Open offsets = %v; want a resume from what the session held", f.offsets)
	}
	for i, off := range f.offsets[1:] {
		if !slices.Contains(held, off) || i > 0 && off <= f.offsets[i] {
			t.Fatalf("Open offsets = %v; want a resume from what the session held", f.offsets)
		}
	}
	if snap := h.rec.Snapshot(nil); len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != hexSHA(video) {
		t.Fatalf("uploads %+v", snap.Uploads)
	}
}
