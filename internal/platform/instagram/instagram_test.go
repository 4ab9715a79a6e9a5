package instagram_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"github.com/reelay/reelay/internal/platform/instagram"
	"github.com/reelay/reelay/internal/platform/instagram/instagramsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	token   = "ig-test-token"
	account = "17841400000000001"
)

// env is one simulator, one media server standing in for reelay's signed media links, and a
// provider, sharing a clock that the test moves.
type env struct {
	t        *testing.T
	clock    *clocktest.Clock
	rec      *sim.Recorder
	api      string // the simulator's Graph root, version included
	media    *httptest.Server
	videos   sync.Map // path → []byte
	p        *instagram.Provider
	leaks    atomic.Int32 // requests that carried the token in the URL, or not as a Bearer header
	behavior sim.Behavior
}

type envOption func(*sim.Config, *instagram.Config)

func newEnv(t *testing.T, b sim.Behavior, opts ...envOption) *env {
	t.Helper()
	return newEnvWith(t, b, instagramsim.Options{}, opts...)
}

// newEnvWith is newEnv with the simulator tuned by sopt.
func newEnvWith(t *testing.T, b sim.Behavior, sopt instagramsim.Options, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, clock: clocktest.New(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)), rec: &sim.Recorder{}, behavior: b}
	e.media = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := e.videos.Load(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "video.mp4", time.Time{}, bytes.NewReader(v.([]byte)))
	}))
	t.Cleanup(e.media.Close)

	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/sandbox/instagram"
	scfg := sim.Config{
		BaseURL:  base,
		Accounts: sim.StaticAccounts{token: {ID: account, Username: "reelay.test", Behavior: b}},
		Recorder: e.rec,
		Now:      e.clock.Now,
	}
	pcfg := instagram.Config{Now: e.clock.Now, HTTPClient: &http.Client{Timeout: 10 * time.Second}}
	for _, o := range opts {
		o(&scfg, &pcfg)
	}
	h := instagramsim.NewWith(scfg, sopt)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, token) || r.Header.Get("Authorization") != "Bearer "+token {
			e.leaks.Add(1)
		}
		h.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	e.api = base + "/" + instagram.APIVersion
	e.p = instagram.New(pcfg)
	return e
}

// serve publishes a video on the media server and answers its link.
func (e *env) serve(name string, b []byte) string {
	e.videos.Store("/media/"+name, b)
	return e.media.URL + "/media/" + name
}

func (e *env) dest(videoURL string) *provider.Destination {
	return &provider.Destination{
		ID:          "dst-1",
		Account:     account,
		Credentials: map[string]string{"access_token": token},
		BaseURL:     e.api,
		Title:       "A title",
		Caption:     "A caption #reelay",
		Video:       provider.Media{URL: videoURL, ContentType: "video/mp4"},
	}
}

// run steps d until it settles, as the publisher would (storing each State, waiting the
// asked time on the shared clock). Transient errors are retried when retry is set.
func (e *env) run(d *provider.Destination, retry bool) (provider.Outcome, []provider.Outcome, error) {
	e.t.Helper()
	var outs []provider.Outcome
	for range 1000 {
		out, err := e.p.Step(context.Background(), d)
		if err != nil {
			if retry && provider.AsError(err).Transient {
				e.clock.Advance(time.Second)
				continue
			}
			return out, outs, err
		}
		outs = append(outs, out)
		d.State = out.State
		if out.Done() {
			return out, outs, nil
		}
		e.clock.Advance(out.After)
		time.Sleep(200 * time.Microsecond) // lets the simulator's download finish
	}
	e.t.Fatal("the destination did not settle")
	return provider.Outcome{}, nil, nil
}

// reel is a valid Reel by default: mediatest's H.264 MP4, 5 seconds, 1080×1920.
func reel(t *testing.T, o mediatest.Options) []byte {
	t.Helper()
	if o.Duration == 0 {
		o.Duration = 5 * time.Second
	}
	return mediatest.MP4Bytes(t, o)
}

func state(t *testing.T, raw json.RawMessage) instagram.State {
	t.Helper()
	var st instagram.State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// graphGet reads a node of the simulator directly.
func (e *env) graphGet(path string) map[string]any {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.api+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

func wantErr(t *testing.T, err error, category string, transient bool, contains string) {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *publish.Error", err)
	}
	if pe.Category != category || pe.Transient != transient {
		t.Fatalf("err = %v; want category %s, transient %v", pe, category, transient)
	}
	if !strings.Contains(pe.Message, contains) {
		t.Fatalf("message %q does not contain %q", pe.Message, contains)
	}
	if strings.Contains(pe.Message, token) {
		t.Fatalf("message %q carries the token", pe.Message)
	}
}

func TestPublishHappyPath(t *testing.T) {
	t.Parallel()
	f := false
	for _, c := range []struct {
		name     string
		opts     instagram.Options
		caption  string
		title    string
		brand    string
		wantText string
		wantFeed bool
	}{
		{name: "options caption", opts: instagram.Options{Caption: "From the instagram object"}, caption: "Common", title: "T", wantText: "From the instagram object", wantFeed: true},
		{name: "post caption", caption: "Common caption #one @two", title: "T", wantText: "Common caption #one @two", wantFeed: true},
		{name: "title as caption", title: "Only a title", wantText: "Only a title", wantFeed: true},
		{name: "not shared to feed, MOV", opts: instagram.Options{ShareToFeed: &f}, caption: "MOV", brand: "qt  ", wantText: "MOV", wantFeed: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: -1})
			video := reel(t, mediatest.Options{Duration: 12 * time.Second, Size: 256 << 10, Brand: c.brand})
			d := e.dest(e.serve("v.mp4", video))
			d.Caption, d.Title = c.caption, c.title
			d.Options, _ = json.Marshal(c.opts)
			d.Thumbnail = &provider.Media{URL: e.media.URL + "/media/cover.jpg", ContentType: "image/jpeg"}

			out, _, err := e.run(d, false)
			if err != nil {
				t.Fatal(err)
			}
			st := state(t, out.State)
			if out.Status != provider.StatusPublished || out.ExternalID == "" || out.ExternalID != st.MediaID {
				t.Fatalf("outcome = %+v, state %+v", out, st)
			}
			if !strings.HasPrefix(out.URL, "https://www.instagram.com/reel/") || !strings.HasSuffix(out.URL, "/") {
				t.Fatalf("permalink = %q", out.URL)
			}
			snap := e.rec.Snapshot(nil)
			if len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != sum(video) || snap.Uploads[0].Bytes != int64(len(video)) || snap.Uploads[0].Account != account {
				t.Fatalf("uploads = %+v", snap.Uploads)
			}
			if len(snap.Published) != 1 {
				t.Fatalf("published = %+v", snap.Published)
			}
			p := snap.Published[0]
			if p.ID != out.ExternalID || p.URL != out.URL || p.SHA256 != sum(video) || p.Text != c.wantText {
				t.Fatalf("published = %+v, outcome %+v", p, out)
			}
			m := e.graphGet("/" + out.ExternalID + "?fields=is_shared_to_feed,media_product_type")
			if m["is_shared_to_feed"] != c.wantFeed || m["media_product_type"] != "REELS" {
				t.Fatalf("media = %v", m)
			}
			if n := e.leaks.Load(); n != 0 {
				t.Fatalf("%d requests carried the token elsewhere than an Authorization: Bearer header", n)
			}
		})
	}
}

func TestProcessingDelayPollsWithBoundedBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 200_000}, func(_ *sim.Config, p *instagram.Config) {
		p.PollInitial, p.PollMax = 3*time.Second, 40*time.Second
	})
	d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
	out, outs, err := e.run(d, false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != provider.StatusPublished {
		t.Fatalf("outcome = %+v", out)
	}
	polls := state(t, out.State).Polls
	if polls < 4 {
		t.Fatalf("polls = %d, want several (processing takes 200 s)", polls)
	}
	var prev time.Duration
	for i, o := range outs {
		if o.Status != provider.StatusProcessing {
			continue
		}
		if o.After > 40*time.Second {
			t.Fatalf("step %d waits %s, above the cap", i, o.After)
		}
		if st := state(t, o.State); st.MediaID == "" && o.After < prev {
			t.Fatalf("step %d waits %s after %s: the back-off shrank", i, o.After, prev)
		}
		if st := state(t, o.State); st.MediaID == "" {
			prev = o.After
		}
	}
	if prev != 40*time.Second {
		t.Fatalf("last wait %s, want the 40 s cap", prev)
	}
}

// TestDefaultPollSchedule: with the defaults, the first two status reads come 100 ms apart
// from the container's creation (a small video is downloaded by then), and a container that
// takes 5 minutes costs a bounded number of reads.
func TestDefaultPollSchedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 300_000})
	d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
	out, outs, err := e.run(d, false)
	if err != nil || out.Status != provider.StatusPublished {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	ms := time.Millisecond
	if w := []time.Duration{outs[0].After, outs[1].After, outs[2].After}; !slices.Equal(w, []time.Duration{100 * ms, 100 * ms, 200 * ms}) {
		t.Fatalf("first waits %v, want 100 ms, 100 ms, 200 ms", w)
	}
	if polls := state(t, out.State).Polls; polls < 19 || polls > 22 {
		t.Fatalf("%d status reads found the container in progress over 5 minutes, want 19 to 22", polls)
	}
}

func TestCallFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		b         sim.Behavior
		token     string
		category  string
		transient bool
		contains  string
	}{
		{"unavailable", sim.Behavior{Fail: sim.FailUnavailable}, token, provider.CategoryUpstreamUnavailable, true, "code 2"},
		{"auth", sim.Behavior{Fail: sim.FailAuth}, token, provider.CategoryAuthExpired, false, "code 190, subcode 463"},
		{"rate limit", sim.Behavior{Fail: sim.FailRateLimit}, token, provider.CategoryRateLimited, true, "(#4) Application request limit reached"},
		{"unknown token", sim.Behavior{}, "not-a-token", provider.CategoryAuthExpired, false, "code 190"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.b)
			d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
			d.Credentials["access_token"] = c.token
			_, err := e.p.Step(context.Background(), d)
			wantErr(t, err, c.category, c.transient, c.contains)
			if snap := e.rec.Snapshot(nil); len(snap.Uploads)+len(snap.Published) != 0 {
				t.Fatalf("a failed call left %+v", snap)
			}
		})
	}
}

func TestFlakyPlatformPublishesOnceAfterRetries(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	e := newEnv(t, sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5, ProcessingMS: 5000}, func(s *sim.Config, _ *instagram.Config) {
		s.Rand = func() float64 { // every third call fails, so that no step fails forever
			if n.Add(1)%3 == 0 {
				return 0.1
			}
			return 0.9
		}
	})
	video := reel(t, mediatest.Options{})
	d := e.dest(e.serve("v.mp4", video))
	out, _, err := e.run(d, true)
	if err != nil || out.Status != provider.StatusPublished || out.URL == "" {
		t.Fatalf("outcome %+v, err %v", out, err)
	}
	if snap := e.rec.Snapshot(nil); len(snap.Uploads) != 1 || len(snap.Published) != 1 {
		t.Fatalf("snapshot = %+v", snap)
	}
}

func TestRejectedVideos(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		b        sim.Behavior
		video    func(t *testing.T) []byte
		missing  bool
		contains string
	}{
		{name: "reject behavior", b: sim.Behavior{Fail: sim.FailReject}, contains: "error code 2207026"},
		{name: "too short", video: func(t *testing.T) []byte { return reel(t, mediatest.Options{Duration: 2 * time.Second}) }, contains: "error code 2207026"},
		{name: "too long", video: func(t *testing.T) []byte {
			return reel(t, mediatest.Options{Duration: 15*time.Minute + time.Second, FPS: 24})
		}, contains: "error code 2207026"},
		{name: "too wide", video: func(t *testing.T) []byte { return reel(t, mediatest.Options{Width: 2160, Height: 3840}) }, contains: "error code 2207026"},
		{name: "WebM", video: func(t *testing.T) []byte { return mediatest.WebMBytes(t, mediatest.Options{Duration: 5 * time.Second}) }, contains: "error code 2207026"},
		{name: "not a video", video: func(*testing.T) []byte { return []byte("<html>this is not a video</html>") }, contains: "the video format is not supported"},
		{name: "link unreachable", missing: true, contains: "error code 2207052"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, c.b)
			var url string
			if c.missing {
				url = e.media.URL + "/media/gone.mp4"
			} else {
				v := reel(t, mediatest.Options{})
				if c.video != nil {
					v = c.video(t)
				}
				url = e.serve("v.mp4", v)
			}
			_, _, err := e.run(e.dest(url), false)
			wantErr(t, err, provider.CategoryMediaRejected, false, c.contains)
			if snap := e.rec.Snapshot(nil); len(snap.Published) != 0 {
				t.Fatalf("published = %+v", snap.Published)
			}
		})
	}
}

func TestExpiredContainer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{})
	d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
	out, err := e.p.Step(context.Background(), d)
	if err != nil || state(t, out.State).ContainerID == "" {
		t.Fatalf("create: %+v, %v", out, err)
	}
	d.State = out.State
	e.clock.Advance(24*time.Hour + time.Minute) // the publisher was down for a day
	_, err = e.p.Step(context.Background(), d)
	wantErr(t, err, provider.CategoryMediaRejected, false, "expired")
	if snap := e.rec.Snapshot(nil); len(snap.Published) != 0 {
		t.Fatalf("published = %+v", snap.Published)
	}
}

// stepUntilPublish runs d until the step whose outcome carries the media id (media_publish
// answered) and returns that outcome and the State stored before it.
func (e *env) stepUntilPublish(d *provider.Destination) (provider.Outcome, json.RawMessage) {
	e.t.Helper()
	for range 200 {
		before := d.State
		out, err := e.p.Step(context.Background(), d)
		if err != nil {
			e.t.Fatal(err)
		}
		if state(e.t, out.State).MediaID != "" {
			return out, before
		}
		d.State = out.State
		e.clock.Advance(out.After)
		time.Sleep(200 * time.Microsecond)
	}
	e.t.Fatal("media_publish never happened")
	return provider.Outcome{}, nil
}

func TestCrashAfterMediaPublishDoesNotPublishTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{})
	video := reel(t, mediatest.Options{})
	d := e.dest(e.serve("v.mp4", video))
	lost, before := e.stepUntilPublish(d)
	// The process dies here: the State with the media id is never stored, so the publisher
	// calls Step again with the State from before media_publish.
	d.State = before
	out, _, err := e.run(d, false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != provider.StatusPublished || out.ExternalID != lost.ExternalID || out.URL == "" {
		t.Fatalf("recovered %+v, lost outcome had media %s", out, lost.ExternalID)
	}
	if snap := e.rec.Snapshot(nil); len(snap.Published) != 1 || len(snap.Uploads) != 1 {
		t.Fatalf("snapshot = %+v", snap)
	}
}

func TestCrashRecoveryWithAmbiguousCaptionDoesNotGuess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, func(_ *sim.Config, p *instagram.Config) { p.FindAttempts = 2 })
	url := e.serve("v.mp4", reel(t, mediatest.Options{}))
	first, _, err := e.run(e.dest(url), false)
	if err != nil {
		t.Fatal(err)
	}
	d := e.dest(url) // the same caption, a moment later
	d.ID = "dst-2"
	lost, before := e.stepUntilPublish(d)
	d.State = before
	out, _, err := e.run(d, false)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != provider.StatusPublished || out.ExternalID != "" || out.URL != "" || !strings.Contains(out.Message, "could not be identified") {
		t.Fatalf("outcome %+v (first %s, lost %s)", out, first.ExternalID, lost.ExternalID)
	}
	if snap := e.rec.Snapshot(nil); len(snap.Published) != 2 {
		t.Fatalf("published = %+v", snap.Published)
	}
}

func TestCaptionLimits(t *testing.T) {
	t.Parallel()
	tags := func(mark string, n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(mark + "tag" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + " ")
		}
		return b.String()
	}
	for _, c := range []struct {
		name    string
		caption string
		ok      bool
	}{
		{"2200 characters", strings.Repeat("é", 2200), true},
		{"2201 characters", strings.Repeat("é", 2201), false},
		{"emoji count twice", strings.Repeat("🎬", 1101), false},
		{"30 hashtags", tags("#", 30), true},
		{"31 hashtags", tags("#", 31), false},
		{"20 mentions", tags("@", 20), true},
		{"21 mentions", tags("@", 21), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: 0})
			d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
			d.Caption = c.caption
			out, _, err := e.run(d, false)
			if c.ok {
				if err != nil || out.Status != provider.StatusPublished {
					t.Fatalf("outcome %+v, err %v", out, err)
				}
				return
			}
			wantErr(t, err, provider.CategoryInvalidOptions, false, "code 36004, subcode 2207010")
			if snap := e.rec.Snapshot(nil); len(snap.Uploads) != 0 {
				t.Fatalf("uploads = %+v", snap.Uploads)
			}
		})
	}
}

func TestPublishingLimit(t *testing.T) {
	t.Parallel()
	for _, skip := range []bool{false, true} {
		name := "checked before the container"
		if skip {
			name = "refused by media_publish"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: 0}, func(_ *sim.Config, p *instagram.Config) { p.SkipPublishingLimitCheck = skip })
			url := e.serve("v.mp4", reel(t, mediatest.Options{}))
			for i := range 100 {
				d := e.dest(url)
				d.Caption = "post " + string(rune('A'+i%26)) + string(rune('A'+i/26))
				if _, _, err := e.run(d, false); err != nil {
					t.Fatalf("post %d: %v", i, err)
				}
				e.clock.Advance(time.Minute)
			}
			uploads := len(e.rec.Snapshot(nil).Uploads)
			_, _, err := e.run(e.dest(url), false)
			wantErr(t, err, provider.CategoryQuotaExceeded, false, "")
			snap := e.rec.Snapshot(nil)
			if len(snap.Published) != 100 {
				t.Fatalf("published %d", len(snap.Published))
			}
			if !skip && len(snap.Uploads) != uploads {
				t.Fatalf("the limit check still created a container: %d uploads, had %d", len(snap.Uploads), uploads)
			}
			e.clock.Advance(24 * time.Hour) // the rolling window moves on
			if out, _, err := e.run(e.dest(url), false); err != nil || out.Status != provider.StatusPublished {
				t.Fatalf("after a day: %+v, %v", out, err)
			}
		})
	}
}

func TestStepInputErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{})
	for _, c := range []struct {
		name     string
		mod      func(d *provider.Destination)
		category string
	}{
		{"no token", func(d *provider.Destination) { d.Credentials = nil }, provider.CategoryAuthExpired},
		{"bad options", func(d *provider.Destination) { d.Options = json.RawMessage(`{"share_to_feed":"yes"}`) }, provider.CategoryInvalidOptions},
		{"bad state", func(d *provider.Destination) { d.State = json.RawMessage(`[1]`) }, provider.CategoryInternal},
		{"no media link", func(d *provider.Destination) { d.Video.URL = "" }, provider.CategoryInternal},
		{"other account", func(d *provider.Destination) { d.Account = "17841499999999999" }, provider.CategoryInvalidOptions},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
			c.mod(d)
			_, err := e.p.Step(context.Background(), d)
			wantErr(t, err, c.category, false, "")
		})
	}
}

func TestRetryAfterFromUsageHeaders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		header map[string]string
		code   int
		status int
		want   time.Duration
		cat    string
	}{
		{"business use case", map[string]string{"X-Business-Use-Case-Usage": `{"17841400000000001":[{"type":"instagram","call_count":100,"total_cputime":3,"total_time":4,"estimated_time_to_regain_access":7}]}`}, 80002, 400, 7 * time.Minute, provider.CategoryRateLimited},
		{"retry-after", map[string]string{"Retry-After": "30"}, 17, 400, 30 * time.Second, provider.CategoryRateLimited},
		{"app usage only", map[string]string{"X-App-Usage": `{"call_count":100}`}, 4, 403, 0, provider.CategoryRateLimited},
		{"server error", nil, 1, 500, 0, provider.CategoryUpstreamUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(c.status)
				_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "throttled", "type": "OAuthException", "code": c.code, "fbtrace_id": "x"}})
			}))
			defer srv.Close()
			p := instagram.New(instagram.Config{BaseURL: srv.URL})
			d := &provider.Destination{Account: account, Credentials: map[string]string{"access_token": token}, Video: provider.Media{URL: "https://example.com/v.mp4"}}
			_, err := p.Step(context.Background(), d)
			var pe *provider.Error
			if !errors.As(err, &pe) || !pe.Transient || pe.Category != c.cat || pe.RetryAfter != c.want {
				t.Fatalf("err = %#v, want transient %s with RetryAfter %s", err, c.cat, c.want)
			}
		})
	}
}

func TestAccountInfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0})
	if _, _, err := e.run(e.dest(e.serve("v.mp4", reel(t, mediatest.Options{}))), false); err != nil {
		t.Fatal(err)
	}
	info, err := e.p.AccountInfo(context.Background(), e.api, token, account)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != account || info.Username != "reelay.test" || info.QuotaUsage != 1 || info.QuotaTotal != 100 || info.QuotaWindow != 24*time.Hour {
		t.Fatalf("info = %+v", info)
	}
	_, err = e.p.AccountInfo(context.Background(), e.api, "wrong", account)
	wantErr(t, err, provider.CategoryAuthExpired, false, "code 190")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0})
	if _, _, err := e.run(e.dest(e.serve("v.mp4", reel(t, mediatest.Options{}))), false); err != nil {
		t.Fatal(err)
	}
	creds := map[string]string{"access_token": token, "ig_user_id": account}
	opts, err := e.p.Options(context.Background(), e.api, creds)
	if err != nil {
		t.Fatal(err)
	}
	share, _ := opts["share_to_feed"].(map[string]any)
	if share["type"] != "boolean" || share["default"] != true {
		t.Fatalf("share_to_feed = %+v", opts["share_to_feed"])
	}
	acc, _ := opts["account"].(map[string]any)
	lim, _ := acc["publishing_limit"].(map[string]any)
	if acc["id"] != account || acc["username"] != "reelay.test" || acc["name"] != "reelay.test" ||
		lim["quota_usage"] != 1 || lim["quota_total"] != 100 || lim["quota_duration_sec"] != 86400 {
		t.Fatalf("account = %+v", opts["account"])
	}
	if _, ok := acc["avatar_url"]; ok {
		t.Fatalf("avatar_url present though Graph has no profile picture: %+v", acc)
	}

	// An empty baseURL is the configured one.
	p := instagram.New(instagram.Config{BaseURL: e.api, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if opts, err := p.Options(context.Background(), "", creds); err != nil || opts["account"].(map[string]any)["username"] != "reelay.test" {
		t.Fatalf("configured base: %+v, %v", opts, err)
	}

	_, err = e.p.Options(context.Background(), e.api, map[string]string{"access_token": "wrong", "ig_user_id": account})
	wantErr(t, err, provider.CategoryAuthExpired, false, "code 190")
	_, err = e.p.Options(context.Background(), e.api, map[string]string{"ig_user_id": account})
	wantErr(t, err, provider.CategoryAuthExpired, false, "no access token")
	_, err = e.p.Options(context.Background(), e.api, map[string]string{"access_token": token})
	wantErr(t, err, provider.CategoryInvalidOptions, false, "ig_user_id")
}

// A download that fails because reelay's link was down (a restart) is not the video's fault:
// the provider makes a new container, and the Reel is published once.
func TestRefetchAfterFailedDownload(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{})
	v := reel(t, mediatest.Options{})
	d := e.dest(e.media.URL + "/media/later.mp4") // not served yet: the first download fails
	out, err := e.p.Step(context.Background(), d)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	d.State = out.State
	// Let the simulator's download fail, then bring the link up.
	var st instagram.State
	for range 200 {
		e.clock.Advance(out.After)
		time.Sleep(time.Millisecond)
		if out, err = e.p.Step(context.Background(), d); err != nil {
			t.Fatalf("step: %v", err)
		}
		d.State = out.State
		if st = state(t, out.State); st.Refetches == 1 {
			break
		}
	}
	if st.Refetches != 1 || st.ContainerID != "" {
		t.Fatalf("after the failed download: %+v", st)
	}
	e.serve("later.mp4", v)
	if _, _, err := e.run(d, false); err != nil {
		t.Fatalf("publish after the refetch: %v", err)
	}
	snap := e.rec.Snapshot(nil)
	if len(snap.Published) != 1 || len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != sum(v) {
		t.Fatalf("published %d, uploads %+v", len(snap.Published), snap.Uploads)
	}
}

// withPages is a simulator where the test account's user manages these Facebook Pages.
func withPages(pages ...instagramsim.Page) instagramsim.Options {
	return instagramsim.Options{Pages: map[string][]instagramsim.Page{account: pages}}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		sim  instagramsim.Options
	}{
		{"default page", instagramsim.Options{}},
		// The first Page with a linked account names the channel, past Pages without one and
		// past a page of results (100 Pages each).
		{"after unlinked pages", withPages(append(make([]instagramsim.Page, 120), instagramsim.Page{Name: "Linked", Linked: true})...)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, sim.Behavior{}, c.sim)
			id, err := e.p.Identify(context.Background(), e.api, map[string]string{"access_token": token})
			if err != nil {
				t.Fatal(err)
			}
			want := provider.Identity{ExternalID: account, Name: "reelay.test", Username: "reelay.test"}
			if id != want {
				t.Fatalf("identity = %+v, want %+v", id, want)
			}
			if e.leaks.Load() != 0 {
				t.Fatalf("%d requests carried the token outside the Authorization header", e.leaks.Load())
			}
		})
	}

	// The identity is the account Step publishes to: a channel named by it publishes.
	e := newEnv(t, sim.Behavior{ProcessingMS: 0})
	id, err := e.p.Identify(context.Background(), e.api, map[string]string{"access_token": token})
	if err != nil {
		t.Fatal(err)
	}
	d := e.dest(e.serve("v.mp4", reel(t, mediatest.Options{})))
	d.Account = id.ExternalID
	if _, _, err := e.run(d, false); err != nil {
		t.Fatalf("publish to the identified account: %v", err)
	}

	for _, c := range []struct {
		name      string
		behavior  sim.Behavior
		sim       instagramsim.Options
		token     string
		category  string
		transient bool
		contains  string
	}{
		{"rejected token", sim.Behavior{}, instagramsim.Options{}, "wrong", provider.CategoryAuthExpired, false, "code 190"},
		{"expired session", sim.Behavior{Fail: sim.FailAuth}, instagramsim.Options{}, token, provider.CategoryAuthExpired, false, "code 190, subcode 463"},
		{"no token", sim.Behavior{}, instagramsim.Options{}, "", provider.CategoryAuthExpired, false, "no access token"},
		{"unlinked page", sim.Behavior{}, withPages(instagramsim.Page{Name: "Shop"}), token,
			provider.CategoryInvalidOptions, false, "no Instagram professional account is linked to a Facebook Page of this user"},
		{"no page", sim.Behavior{}, withPages(), token,
			provider.CategoryInvalidOptions, false, "no Instagram professional account is linked to a Facebook Page of this user"},
		{"unavailable", sim.Behavior{Fail: sim.FailUnavailable}, instagramsim.Options{}, token, provider.CategoryUpstreamUnavailable, true, "code 2"},
		{"throttled", sim.Behavior{Fail: sim.FailRateLimit}, instagramsim.Options{}, token, provider.CategoryRateLimited, true, "code 4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, c.behavior, c.sim)
			_, err := e.p.Identify(context.Background(), e.api, map[string]string{"access_token": c.token})
			wantErr(t, err, c.category, c.transient, c.contains)
		})
	}
}
