package facebook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/facebook/facebooksim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	tok  = "fb-page-token"
	page = "104000000000001"
)

type fixture struct {
	e *providertest.Env
	p *facebook.Provider
}

func newFixture(t *testing.T, b sim.Behavior, o providertest.Options) fixture {
	t.Helper()
	accts := sim.StaticAccounts{tok: {ID: page, Username: "reelaytest", Behavior: b}}
	e := providertest.NewEnv(t, "facebook", accts, facebooksim.New, o)
	return fixture{e: e, p: facebook.New(facebook.Config{HTTPClient: e.Client, Now: e.Clock.Now})}
}

// dest is a destination of the test Page, with the sandbox base URL as the app builds it.
func (f fixture) dest(v *providertest.Video, options string) *provider.Destination {
	if v == nil {
		v = providertest.ShortVideo()
	}
	d := f.e.Destination(page, map[string]string{"access_token": tok}, v, options)
	d.BaseURL = f.e.BaseURL + "/" + facebook.APIVersion
	return d
}

func state(t *testing.T, raw json.RawMessage) facebook.State {
	t.Helper()
	var st facebook.State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

// videoFields reads a video node from the simulator.
func (f fixture) videoFields(t *testing.T, id, fields string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.e.BaseURL+"/v26.0/"+id+"?fields="+url.QueryEscape(fields), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := f.e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m
}

// uploadRequests are the requests to the upload host.
func (f fixture) uploadRequests() []providertest.Request {
	var out []providertest.Request
	for _, r := range f.e.Requests("POST", "") {
		if strings.Contains(r.Path, "/video-upload/") {
			out = append(out, r)
		}
	}
	return out
}

func TestPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options, caption, title, wantDesc, wantTitle string
	}{
		{name: "facebook object", options: `{"description":"From the object #reel","title":"Object title"}`, caption: "C", title: "T", wantDesc: "From the object #reel", wantTitle: "Object title"},
		{name: "common texts", caption: "Common caption", title: "Common title", wantDesc: "Common caption", wantTitle: "Common title"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
			v := providertest.ShortVideo()
			d := f.dest(v, c.options)
			d.Caption, d.Title = c.caption, c.title
			outs, err := f.e.Run(f.p, d, 50)
			if err != nil {
				t.Fatal(err)
			}
			last := outs[len(outs)-1]
			got := f.e.Introspect()
			if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || got.Uploads[0].Bytes != v.Size() || got.Uploads[0].Account != page {
				t.Fatalf("uploads %+v; want one of %d bytes, sha256 %s", got.Uploads, v.Size(), v.SHA256())
			}
			if len(got.Published) != 1 || got.Published[0].Text != c.wantDesc || got.Published[0].SHA256 != v.SHA256() {
				t.Fatalf("published %+v", got.Published)
			}
			st := state(t, last.State)
			if last.Status != provider.StatusPublished || last.ExternalID != st.VideoID || last.ExternalID != got.Published[0].ID ||
				last.URL != "https://www.facebook.com/reel/"+st.VideoID || last.URL != got.Published[0].URL {
				t.Fatalf("last outcome %+v, state %+v, published %+v", last, st, got.Published[0])
			}
			if m := f.videoFields(t, st.VideoID, "title,description"); m["title"] != c.wantTitle || m["description"] != c.wantDesc {
				t.Fatalf("video %v", m)
			}
			ups := f.uploadRequests()
			if len(ups) != 1 {
				t.Fatalf("%d upload requests", len(ups))
			}
			h := ups[0].Header
			if h.Get("Authorization") != "OAuth "+tok || h.Get("offset") != "0" || h.Get("file_size") != "2097152" || !strings.HasPrefix(ups[0].Path, "/sandbox/facebook/video-upload/v26.0/") {
				t.Fatalf("upload request %s %v", ups[0].Path, h)
			}
			for _, r := range f.e.Requests("", "") {
				if strings.Contains(r.Query, tok) {
					t.Fatalf("%s %s carries the token in its URL", r.Method, r.Path)
				}
				if !strings.Contains(r.Path, "/video-upload/") && r.Header.Get("Authorization") != "Bearer "+tok {
					t.Fatalf("%s %s: Authorization %q", r.Method, r.Path, r.Header.Get("Authorization"))
				}
			}
			if n := len(f.e.Requests("POST", "/"+page+"/video_reels")); n != 2 {
				t.Fatalf("%d video_reels calls; want start and finish", n)
			}
		})
	}
}

func TestProcessingIsPolledWithBackoff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: 120_000}, providertest.Options{})
	outs, err := f.e.Run(f.p, f.dest(nil, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for _, o := range outs {
		if o.After > 0 {
			waits = append(waits, o.After)
		}
	}
	if len(waits) < 4 || waits[len(waits)-1] <= waits[0] {
		t.Fatalf("waits %v: want several growing polls over 2 minutes of processing", waits)
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] < waits[i-1] || waits[i] > time.Minute {
			t.Fatalf("waits %v", waits)
		}
	}
	if got := f.e.Introspect(); len(got.Published) != 1 {
		t.Fatalf("published %+v", got.Published)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail, category string
		transient      bool
		text           string
		retry          time.Duration
	}{
		{sim.FailReject, provider.CategoryMediaRejected, false, "Request processing failed", 0},
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true, "unexpected error", 0},
		{sim.FailAuth, provider.CategoryAuthExpired, false, "Session has expired", 0},
		{sim.FailRateLimit, provider.CategoryRateLimited, true, "Page request limit reached", time.Minute},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sim.Behavior{ProcessingMS: -1, Fail: c.fail}, providertest.Options{})
			_, err := f.e.Run(f.p, f.dest(nil, ""), 50)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retry || strings.Contains(pe.Message, tok) {
				t.Fatalf("error %+v", pe)
			}
			if got := f.e.Introspect(); len(got.Published) != 0 {
				t.Fatalf("published %+v", got.Published)
			}
		})
	}
}

func TestFlakyPublishesOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(3, 5))
	rnd := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
	f := newFixture(t, sim.Behavior{ProcessingMS: -1, Fail: sim.FailFlaky, FailRate: 0.5}, providertest.Options{Rand: rnd})
	v := providertest.ShortVideo()
	if _, err := f.e.RunRetrying(f.p, f.dest(v, ""), 200); err != nil {
		t.Fatal(err)
	}
	got := f.e.Introspect()
	if len(got.Uploads) != 1 || len(got.Published) != 1 || got.Published[0].SHA256 != v.SHA256() {
		t.Fatalf("introspection %+v", got)
	}
	failed := 0
	for _, r := range f.e.Requests("", "") {
		if r.Status == http.StatusInternalServerError {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no call failed: the test proves nothing")
	}
}

// breakingReader fails after n bytes.
type breakingReader struct {
	r io.Reader
	n int64
}

func (b *breakingReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errors.New("disk unplugged")
	}
	p = p[:min(int64(len(p)), b.n)]
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

func (b *breakingReader) Close() error { return nil }

// An upload broken half-way resumes at the platform's count of the bytes it holds: one
// complete upload, its bytes right, the rest sent from an offset.
func TestBrokenUploadResumesAtThePlatformsOffset(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	v := providertest.NewVideo(6<<20, 10*time.Second, 1080, 1920)
	d := f.dest(v, "")
	open := d.Video.Open
	var mu sync.Mutex
	calls := 0
	d.Video.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := open(ctx, off)
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 1 {
			return &breakingReader{r: rc, n: 3 << 20}, err
		}
		return rc, err
	}
	if _, err := f.e.RunRetrying(f.p, d, 50); err != nil {
		t.Fatal(err)
	}
	got := f.e.Introspect()
	if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || len(got.Published) != 1 {
		t.Fatalf("introspection %+v", got)
	}
	// The first request starts at 0 and breaks; the one that completes the upload starts at
	// the platform's count. (A request sent while the server still reads the broken one is
	// refused with OffsetInvalidError, sending nothing twice, and tried again.) Requests are
	// logged as they end, so the broken one may end after a refused one.
	ups := f.uploadRequests()
	var broken, accepted int
	for _, r := range ups {
		off := r.Header.Get("offset")
		switch {
		case r.Status == http.StatusOK && (off == "0" || off == ""):
			t.Fatalf("upload accepted from offset %q: not resumed", off)
		case r.Status == http.StatusOK:
			accepted++
		case r.Status == http.StatusPreconditionFailed:
		case off == "0":
			broken++
		default:
			t.Fatalf("upload from %s answered %d", off, r.Status)
		}
	}
	if broken != 1 || accepted != 1 {
		t.Fatalf("%d broken uploads from 0 and %d accepted resumptions, want 1 and 1: %+v", broken, accepted, ups)
	}
}

// stepsUntil steps d until cond holds on the State and answers the State before that step.
func stepsUntil(t *testing.T, f fixture, d *provider.Destination, cond func(facebook.State) bool) json.RawMessage {
	t.Helper()
	for range 50 {
		prev := d.State
		out, err := providertest.Step(context.Background(), f.p, d)
		if err != nil {
			t.Fatal(err)
		}
		if cond(state(t, out.State)) {
			return prev
		}
		f.e.Clock.Advance(out.After)
	}
	t.Fatal("condition never held")
	return nil
}

// A crash after the upload completed, before the State said so: the status says every byte
// is there, and nothing is sent again.
func TestCrashAfterUploadDoesNotUploadAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	d := f.dest(nil, "")
	d.State = stepsUntil(t, f, d, func(s facebook.State) bool { return s.Uploaded })
	if _, err := f.e.Run(f.p, d, 50); err != nil {
		t.Fatal(err)
	}
	if got := f.e.Introspect(); len(got.Uploads) != 1 || len(got.Published) != 1 {
		t.Fatalf("introspection %+v", got)
	}
	if n := len(f.uploadRequests()); n != 1 {
		t.Fatalf("%d upload requests", n)
	}
}

// A crash after the finish went through, before the State said so: the publishing phase is
// under way, and the finish is not sent again.
func TestCrashAfterFinishDoesNotFinishTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: 30_000}, providertest.Options{})
	d := f.dest(nil, "")
	d.State = stepsUntil(t, f, d, func(s facebook.State) bool { return s.Finished })
	outs, err := f.e.Run(f.p, d, 50)
	if err != nil {
		t.Fatal(err)
	}
	if last := outs[len(outs)-1]; last.Status != provider.StatusPublished {
		t.Fatalf("last %+v", last)
	}
	if got := f.e.Introspect(); len(got.Uploads) != 1 || len(got.Published) != 1 {
		t.Fatalf("introspection %+v", got)
	}
	if n := len(f.e.Requests("POST", "/"+page+"/video_reels")); n != 2 {
		t.Fatalf("%d video_reels calls; want start and one finish", n)
	}
}

func TestVideoRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		v    *providertest.Video
		text string
	}{
		{"too short", providertest.NewVideo(1<<20, 2*time.Second, 1080, 1920), "duration that isn't supported"},
		{"too long", providertest.NewVideo(1<<20, 91*time.Second, 1080, 1920), "duration that isn't supported"},
		{"landscape", providertest.NewVideo(1<<20, 10*time.Second, 1920, 1080), "aspect ratio"},
		{"too small", providertest.NewVideo(1<<20, 10*time.Second, 360, 640), "resolution"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, ms := range []int{0, 60_000} { // refused before the finish, and after it
				f := newFixture(t, sim.Behavior{ProcessingMS: ms}, providertest.Options{})
				_, err := f.e.Run(f.p, f.dest(c.v, ""), 50)
				providertest.WantError(t, err, provider.CategoryMediaRejected, false, c.text)
				if got := f.e.Introspect(); len(got.Published) != 0 {
					t.Fatalf("published %+v", got.Published)
				}
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	_, err := f.e.Run(f.p, f.dest(nil, `{"title":`), 5)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "options")
	long, _ := json.Marshal(map[string]string{"title": strings.Repeat("t", 201)})
	_, err = f.e.Run(f.p, f.dest(nil, string(long)), 20)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "title")
	if got := f.e.Introspect(); len(got.Published) != 0 {
		t.Fatalf("published %+v", got.Published)
	}
}

// The Page's 31st reel in 24 hours is refused as a spent quota.
func TestDailyLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: 0}, providertest.Options{})
	v := providertest.NewVideo(64<<10, 5*time.Second, 720, 1280)
	for i := range 30 {
		if _, err := f.e.Run(f.p, f.dest(v, ""), 20); err != nil {
			t.Fatalf("reel %d: %v", i, err)
		}
	}
	_, err := f.e.Run(f.p, f.dest(v, ""), 20)
	providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "30 reels")
	f.e.Clock.Advance(24 * time.Hour)
	if _, err := f.e.Run(f.p, f.dest(v, ""), 20); err != nil {
		t.Fatalf("a day later: %v", err)
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{}, providertest.Options{})
	base := f.e.BaseURL + "/v26.0"
	id, err := f.p.Identify(context.Background(), base, map[string]string{"access_token": tok})
	if err != nil {
		t.Fatal(err)
	}
	if id.ExternalID != page || id.Name != "reelaytest" || id.Username != "reelaytest" || !strings.HasPrefix(id.AvatarURL, f.e.BaseURL+"/") {
		t.Fatalf("identity %+v", id)
	}
	resp, err := f.e.Client.Get(id.AvatarURL)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("avatar: %v %v", resp, err)
	}
	resp.Body.Close()
	_, err = f.p.Identify(context.Background(), base, map[string]string{"access_token": "nope"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Invalid OAuth access token")
	_, err = f.p.Identify(context.Background(), base, nil)
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "no Page access token")
}
