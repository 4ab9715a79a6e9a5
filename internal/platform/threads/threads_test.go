package threads_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/reelay/reelay/internal/platform/threads/threadssim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	tok  = "th-test-token"
	user = "27000000000000001"
)

type fixture struct {
	e *providertest.Env
	p *threads.Provider
}

func newFixture(t *testing.T, b sim.Behavior, o providertest.Options) fixture {
	t.Helper()
	accts := sim.StaticAccounts{tok: {ID: user, Username: "reelay.test", Behavior: b}}
	e := providertest.NewEnv(t, "threads", accts, threadssim.New, o)
	p := threads.New(threads.Config{HTTPClient: e.Client, Now: e.Clock.Now})
	return fixture{e: e, p: p}
}

// dest is a destination of the test profile with a served video and the sandbox base URL as
// the app builds it (the simulator's mount point and the API version).
func (f fixture) dest(t *testing.T, v *providertest.Video, options string) *provider.Destination {
	t.Helper()
	if v == nil {
		v = providertest.ShortVideo()
	}
	v.Serve(t)
	d := f.e.Destination(user, map[string]string{"access_token": tok}, v, options)
	d.BaseURL = f.e.BaseURL + "/" + threads.APIVersion
	return d
}

func state(t *testing.T, raw json.RawMessage) threads.State {
	t.Helper()
	var st threads.State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

// noTokenInURLs fails when a request carried the token in its URL or not as a Bearer header.
func (f fixture) noTokenInURLs(t *testing.T) {
	t.Helper()
	for _, r := range f.e.Requests("", "") {
		if strings.Contains(r.Query, tok) || strings.Contains(r.Path, tok) {
			t.Fatalf("%s %s?%s carries the token in its URL", r.Method, r.Path, r.Query)
		}
		if r.Header.Get("Authorization") != "Bearer "+tok {
			t.Fatalf("%s %s: Authorization %q", r.Method, r.Path, r.Header.Get("Authorization"))
		}
	}
}

func TestPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options, caption, title, want string
	}{
		{name: "threads text", options: `{"text":"From the threads object 🧵"}`, caption: "Common", title: "T", want: "From the threads object 🧵"},
		{name: "caption", caption: "Common caption #one", title: "T", want: "Common caption #one"},
		{name: "title", title: "Only a title", want: "Only a title"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
			v := providertest.ShortVideo()
			d := f.dest(t, v, c.options)
			d.Caption, d.Title = c.caption, c.title
			outs, err := f.e.Run(f.p, d, 50)
			if err != nil {
				t.Fatal(err)
			}
			last := outs[len(outs)-1]
			got := f.e.Introspect()
			if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || got.Uploads[0].Bytes != v.Size() || got.Uploads[0].Account != user {
				t.Fatalf("uploads %+v; want one of %d bytes, sha256 %s", got.Uploads, v.Size(), v.SHA256())
			}
			if len(got.Published) != 1 {
				t.Fatalf("published %+v; want one", got.Published)
			}
			pub := got.Published[0]
			if pub.Text != c.want || pub.SHA256 != v.SHA256() {
				t.Fatalf("published %+v; want text %q", pub, c.want)
			}
			if last.Status != provider.StatusPublished || last.ExternalID != pub.ID || last.URL != pub.URL ||
				!strings.HasPrefix(last.URL, "https://www.threads.net/@reelay.test/post/") {
				t.Fatalf("last outcome %+v; published %+v", last, pub)
			}
			if st := state(t, last.State); st.MediaID != pub.ID || st.ContainerID == "" {
				t.Fatalf("state %+v", st)
			}
			if n := len(f.e.Requests("POST", "/threads_publish")); n != 1 {
				t.Fatalf("%d threads_publish calls", n)
			}
			if r := f.e.Requests("POST", "/"+user+"/threads"); len(r) != 1 || !strings.HasPrefix(r[0].Path, "/sandbox/threads/v1.0/") {
				t.Fatalf("container requests %+v", r)
			}
			f.noTokenInURLs(t)
		})
	}
}

// Processing is polled with a growing, capped wait, moving the clock only.
func TestProcessingIsPolledWithBackoff(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: 90_000}, providertest.Options{})
	d := f.dest(t, nil, "")
	outs, err := f.e.Run(f.p, d, 50)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for _, o := range outs {
		if o.Status == provider.StatusProcessing && o.After > 0 {
			waits = append(waits, o.After)
		}
	}
	if len(waits) < 4 {
		t.Fatalf("waits %v: want several polls over 90 s of processing", waits)
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] < waits[i-1] || waits[i] > time.Minute {
			t.Fatalf("waits %v: want non-decreasing, at most a minute", waits)
		}
	}
	if waits[len(waits)-1] <= waits[0] {
		t.Fatalf("waits %v do not grow", waits)
	}
	if got := f.e.Introspect(); len(got.Published) != 1 {
		t.Fatalf("published %+v", got.Published)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
		text      string
		retry     time.Duration
	}{
		{fail: sim.FailReject, category: provider.CategoryMediaRejected, text: "FAILED_PROCESSING_VIDEO"},
		{fail: sim.FailUnavailable, category: provider.CategoryUpstreamUnavailable, transient: true, text: "unexpected error"},
		{fail: sim.FailAuth, category: provider.CategoryAuthExpired, text: "Session has expired"},
		{fail: sim.FailRateLimit, category: provider.CategoryRateLimited, transient: true, text: "User request limit reached", retry: time.Minute},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, sim.Behavior{ProcessingMS: -1, Fail: c.fail}, providertest.Options{})
			_, err := f.e.Run(f.p, f.dest(t, nil, ""), 50)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retry {
				t.Fatalf("RetryAfter %s; want %s", pe.RetryAfter, c.retry)
			}
			if strings.Contains(pe.Message, tok) {
				t.Fatalf("message %q carries the token", pe.Message)
			}
			if got := f.e.Introspect(); len(got.Published) != 0 {
				t.Fatalf("published %+v", got.Published)
			}
		})
	}
}

// A flaky platform fails a share of calls; retried as the publisher does, the post is
// published exactly once from one download.
func TestFlakyPublishesOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(7, 11))
	rnd := func() float64 { // a fixed sequence: the same calls fail on every run
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
	f := newFixture(t, sim.Behavior{ProcessingMS: -1, Fail: sim.FailFlaky, FailRate: 0.5}, providertest.Options{Rand: rnd})
	v := providertest.ShortVideo()
	if _, err := f.e.RunRetrying(f.p, f.dest(t, v, ""), 200); err != nil {
		t.Fatal(err)
	}
	got := f.e.Introspect()
	if len(got.Uploads) != 1 || len(got.Published) != 1 || got.Published[0].SHA256 != v.SHA256() {
		t.Fatalf("introspection %+v; want one upload and one post", got)
	}
	if failed := countStatus(f.e.Requests("", ""), http.StatusInternalServerError); failed == 0 {
		t.Fatal("no call failed: the test proves nothing")
	}
}

func countStatus(rs []providertest.Request, status int) int {
	n := 0
	for _, r := range rs {
		if r.Status == status {
			n++
		}
	}
	return n
}

// A crash after threads_publish answered but before its media id was stored: the next Step
// reads the container (PUBLISHED), finds the post among the profile's threads and does not
// publish again.
func TestCrashAfterPublishDoesNotPublishTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	d := f.dest(t, nil, `{"text":"Once only"}`)
	var before json.RawMessage // the last State without a media id
	for i := 0; ; i++ {
		if i > 50 {
			t.Fatal("no media id after 50 steps")
		}
		prev := d.State
		out, err := providertest.Step(context.Background(), f.p, d)
		if err != nil {
			t.Fatal(err)
		}
		if state(t, out.State).MediaID != "" {
			before = prev
			break
		}
		f.e.Clock.Advance(out.After)
	}
	if state(t, before).ContainerID == "" {
		t.Fatalf("state before publishing %s has no container", before)
	}
	d.State = before // the crash: the stored State is the one before threads_publish
	outs, err := f.e.Run(f.p, d, 20)
	if err != nil {
		t.Fatal(err)
	}
	last := outs[len(outs)-1]
	got := f.e.Introspect()
	if len(got.Published) != 1 || len(got.Uploads) != 1 {
		t.Fatalf("introspection %+v; want one upload, one post", got)
	}
	if last.ExternalID != got.Published[0].ID || last.URL != got.Published[0].URL || !strings.Contains(last.Message, "did not publish it again") {
		t.Fatalf("last outcome %+v; published %+v", last, got.Published[0])
	}
	if n := len(f.e.Requests("POST", "/threads_publish")); n != 1 {
		t.Fatalf("%d threads_publish calls; want 1", n)
	}
}

// Re-running a Step with the container's State (a crash while polling) neither creates a
// container nor downloads the video again.
func TestCrashWhilePollingResumesTheContainer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: 30_000}, providertest.Options{})
	d := f.dest(t, nil, "")
	out, err := providertest.Step(context.Background(), f.p, d)
	if err != nil {
		t.Fatal(err)
	}
	created := out.State
	for range 3 { // three crashes, each resuming from the container's State
		d.State = created
		if _, err := providertest.Step(context.Background(), f.p, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.e.Run(f.p, d, 50); err != nil {
		t.Fatal(err)
	}
	got := f.e.Introspect()
	if len(got.Uploads) != 1 || len(got.Published) != 1 {
		t.Fatalf("introspection %+v", got)
	}
	if n := len(f.e.Requests("POST", "/"+user+"/threads")); n != 1 {
		t.Fatalf("%d containers created", n)
	}
}

// A container left unpublished for 24 hours expires; the provider says so.
func TestExpiredContainer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	d := f.dest(t, nil, "")
	if _, err := providertest.Step(context.Background(), f.p, d); err != nil {
		t.Fatal(err)
	}
	f.e.Clock.Advance(25 * time.Hour)
	_, err := f.e.Run(f.p, d, 10)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "expired")
}

// Threads failing to download reelay's link is reelay's problem, not the video's: a new
// container is made, twice, then the destination fails with the reason.
func TestDownloadFailureMakesNewContainers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	d := f.dest(t, nil, "")
	d.Video.URL = f.e.BaseURL + "/missing.mp4" // answers an error, not a video
	_, err := f.e.Run(f.p, d, 50)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "FAILED_DOWNLOADING_VIDEO")
	if n := len(f.e.Requests("POST", "/"+user+"/threads")); n != 3 {
		t.Fatalf("%d containers; want 3 (one and two refetches)", n)
	}
}

func TestVideoRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	v := providertest.NewVideo(1<<20, 6*time.Minute, 1080, 1920) // over 5 minutes
	_, err := f.e.Run(f.p, f.dest(t, v, ""), 50)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "INVALID_DURATION")
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	d := f.dest(t, nil, `{"text":`)
	_, err := f.e.Run(f.p, d, 5)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "options")

	long, _ := json.Marshal(map[string]string{"text": strings.Repeat("\U0001F600", 126)}) // 126 emoji of 4 UTF-8 bytes: 504
	d = f.dest(t, nil, string(long))
	_, err = f.e.Run(f.p, d, 5)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "too long")
	if got := f.e.Introspect(); len(got.Uploads) != 0 {
		t.Fatalf("uploads %+v", got.Uploads)
	}
}

// A spent publishing quota fails before any container is made; with the check skipped,
// threads_publish refuses with the platform's answer.
func TestQuotaExceeded(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: 0}, providertest.Options{})
	v := providertest.NewVideo(64<<10, 5*time.Second, 720, 1280)
	link := v.Serve(t)
	for i := range 250 {
		id := graphPost(t, f.e, "/"+user+"/threads", url.Values{"media_type": {"VIDEO"}, "video_url": {link}, "text": {"post"}})
		if graphPost(t, f.e, "/"+user+"/threads_publish", url.Values{"creation_id": {id}}) == "" {
			t.Fatalf("post %d not published", i)
		}
	}
	d := f.dest(t, v, "")
	_, err := f.e.Run(f.p, d, 5)
	providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "250 of the 250")

	skip := threads.New(threads.Config{HTTPClient: f.e.Client, Now: f.e.Clock.Now, SkipPublishingLimitCheck: true})
	d = f.dest(t, v, "")
	_, err = f.e.Run(skip, d, 20)
	providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "Maximum number of posts")
}

// graphPost calls the simulator directly and answers the id of the result.
func graphPost(t *testing.T, e *providertest.Env, path string, form url.Values) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.BaseURL+"/v1.0"+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST %s: HTTP %d, %v", path, resp.StatusCode, err)
	}
	return out.ID
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	base := f.e.BaseURL + "/v1.0"
	id, err := f.p.Identify(context.Background(), base, map[string]string{"access_token": tok})
	if err != nil {
		t.Fatal(err)
	}
	if id.ExternalID != user || id.Username != "reelay.test" || id.Name != "reelay.test" {
		t.Fatalf("identity %+v", id)
	}
	_, err = f.p.Identify(context.Background(), base, map[string]string{"access_token": "not-a-token"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Invalid OAuth access token")
	_, err = f.p.Identify(context.Background(), base, map[string]string{})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "no access token")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, sim.Behavior{ProcessingMS: -1}, providertest.Options{})
	if _, err := f.e.Run(f.p, f.dest(t, nil, ""), 50); err != nil {
		t.Fatal(err)
	}
	base := f.e.BaseURL + "/v1.0"
	opts, err := f.p.Options(context.Background(), base, map[string]string{"access_token": tok})
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := opts["account"].(map[string]any)
	lim, _ := acct["publishing_limit"].(map[string]any)
	if acct["id"] != user || lim["quota_usage"] != 1 || lim["quota_total"] != 250 || lim["quota_duration_sec"] != 86400 || lim["remaining"] != 249 {
		t.Fatalf("options %+v", opts)
	}
	if _, ok := opts["text"]; !ok {
		t.Fatalf("options %+v lack text", opts)
	}
	_, err = f.p.Options(context.Background(), base, map[string]string{"access_token": "nope"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Invalid OAuth")
}
