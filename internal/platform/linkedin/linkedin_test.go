package linkedin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/linkedin/linkedinsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const member = "mAbC123xyz"

func accounts(b sim.Behavior) sim.StaticAccounts {
	return sim.StaticAccounts{"tok": {ID: member, Username: "Ada Lovelace", Behavior: b}}
}

func creds() map[string]string { return sandboxtoken.Credentials("linkedin", "", member, "tok") }

// env starts the simulator (with opts) for one account of behavior b, and a provider on the
// test clock.
func env(t *testing.T, b sim.Behavior, opts linkedinsim.Options) (*providertest.Env, *linkedinsim.Sim, *Provider) {
	t.Helper()
	if b.ProcessingMS == 0 {
		b.ProcessingMS = 2000
	}
	var s *linkedinsim.Sim
	e := providertest.NewEnv(t, "linkedin", accounts(b), func(c sim.Config) http.Handler {
		s = linkedinsim.NewSim(c, opts)
		return s
	}, providertest.Options{})
	p := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, APIVersion: testVersion, Repeat: provider.Repeat{Delay: time.Millisecond}})
	return e, s, p
}

func state(t *testing.T, raw json.RawMessage) State {
	t.Helper()
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

var jpeg = append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0}, bytes.Repeat([]byte{7}, 500)...)

func thumbnail() *provider.Media {
	return &provider.Media{Size: int64(len(jpeg)), ContentType: "image/jpeg",
		Open: func(context.Context, int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(jpeg)), nil }}
}

func TestLittle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"Hello world", "Hello world"},
		{"", ""},
		{`a\b`, `a\\b`},
		{"(beta) [x] {y} <z>", `\(beta\) \[x\] \{y\} \<z\>`},
		{"a|b *c* _d_ ~e~", `a\|b \*c\* \_d\_ \~e\~`},
		{"mail me@example.com", `mail me\@example.com`},
		{"#reelay rocks", `{hashtag|\#|reelay} rocks`},
		{"new #video, #Go2026!", `new {hashtag|\#|video}, {hashtag|\#|Go2026}!`},
		{"#my_tag", `{hashtag|\#|my\_tag}`},
		{"#programação", `{hashtag|\#|programação}`},
		{"C# and F#", `C\# and F\#`},
		{"we're #1", `we're \#1`},
		{"# heading", `\# heading`},
		{"##double", `\#{hashtag|\#|double}`},
		{"issue#5", `issue\#5`},
		{"full-width ＃tag stays", "full-width ＃tag stays"},
		{"emoji 🎬 (ok)", `emoji 🎬 \(ok\)`},
	} {
		got := Little(c.in)
		if got != c.want {
			t.Errorf("Little(%q) = %q, want %q", c.in, got, c.want)
		}
		// What LinkedIn shows is the text itself, whole.
		if shown, cut := linkedinsim.RenderLittle(got); shown != c.in || cut {
			t.Errorf("LinkedIn would show %q (cut %v) for Little(%q)", shown, cut, c.in)
		}
	}
}

func TestPublish(t *testing.T) {
	t.Parallel()
	e, s, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	v := providertest.NewVideo(10<<20, 10*time.Second, 1080, 1920) // three parts
	d := e.Destination(member, creds(), v, `{"title":"Launch video"}`)
	d.Caption = "Our launch (beta) is live: #reelay for C# fans, *really* [1] ~ {ok} @team"
	d.Thumbnail = thumbnail()

	outs, err := e.Run(p, d, 40)
	if err != nil {
		t.Fatal(err)
	}
	last := outs[len(outs)-1]
	if last.Status != provider.StatusPublished || !strings.HasPrefix(last.ExternalID, "urn:li:share:") ||
		last.URL != "https://www.linkedin.com/feed/update/"+last.ExternalID+"/" {
		t.Fatalf("outcome = %+v", last)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != v.Size() || rec.Uploads[0].Account != member {
		t.Fatalf("uploads = %+v; want the video once (%s)", rec.Uploads, v.SHA256())
	}
	if len(rec.Published) != 1 || rec.Published[0].ID != last.ExternalID || rec.Published[0].Text != d.Caption ||
		rec.Published[0].SHA256 != v.SHA256() || rec.Published[0].URL != last.URL {
		t.Fatalf("published = %+v", rec.Published)
	}
	posts := s.Posts()
	if len(posts) != 1 || posts[0].Truncated || posts[0].Title != "Launch video" || posts[0].Visibility != "PUBLIC" || posts[0].Lifecycle != "PUBLISHED" {
		t.Fatalf("posts = %+v", posts)
	}
	sv, _ := s.Video(posts[0].Video)
	if sv.Parts != 3 || sv.Finalizes != 1 || !sv.Thumbnail {
		t.Fatalf("video = %+v; want 3 parts, finalized once, with its thumbnail", sv)
	}
	if n := len(e.Requests(http.MethodPut, "/uploadedVideo")); n != 3 {
		t.Errorf("%d part uploads, want 3", n)
	}
	for _, r := range e.Requests("", "") {
		if strings.Contains(r.Path, "/rest/") &&
			(r.Header.Get("LinkedIn-Version") != p.cfg.APIVersion || r.Header.Get("X-Restli-Protocol-Version") != "2.0.0") {
			t.Errorf("%s %s without LinkedIn's version headers: %v", r.Method, r.Path, r.Header)
		}
	}
	// Stepping a done destination changes nothing.
	again, err := p.Step(context.Background(), d)
	if err != nil || again.ExternalID != last.ExternalID || len(e.Introspect().Published) != 1 {
		t.Fatalf("step after done: %+v, %v", again, err)
	}
}

func TestProcessingIsPolledWithBackoff(t *testing.T) {
	t.Parallel()
	e, _, p := env(t, sim.Behavior{ProcessingMS: 40_000}, linkedinsim.Options{})
	d := e.Destination(member, creds(), providertest.ShortVideo(), "")
	outs, err := e.Run(p, d, 40)
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
		t.Fatalf("polls waited %v; want several", waits)
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] < waits[i-1] || waits[i] > 30*time.Second {
			t.Fatalf("waits %v do not back off within 30 s", waits)
		}
	}
	if waits[len(waits)-1] <= waits[0] {
		t.Fatalf("waits %v never grow", waits)
	}
	reads := 0
	for _, r := range e.Requests(http.MethodGet, "") {
		if strings.Contains(r.Path, "/rest/videos/urn:li:video:") {
			reads++
		}
	}
	if n := reads; n != len(waits)+1 {
		t.Errorf("%d status reads for %d waits", n, len(waits))
	}
	if got := e.Introspect(); len(got.Published) != 1 {
		t.Fatalf("published %+v", got.Published)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		b         sim.Behavior
		category  string
		transient bool
		text      string
		wait      time.Duration
	}{
		{"reject", sim.Behavior{Fail: sim.FailReject}, provider.CategoryMediaRejected, false, "format is not supported", 0},
		{"unavailable", sim.Behavior{Fail: sim.FailUnavailable}, provider.CategoryUpstreamUnavailable, true, "Service Unavailable", 0},
		{"auth", sim.Behavior{Fail: sim.FailAuth}, provider.CategoryAuthExpired, false, "EXPIRED_ACCESS_TOKEN", 0},
		{"rate_limit", sim.Behavior{Fail: sim.FailRateLimit}, provider.CategoryRateLimited, true, "throttle", time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, _, p := env(t, c.b, linkedinsim.Options{})
			d := e.Destination(member, creds(), providertest.ShortVideo(), "")
			_, err := e.Run(p, d, 40)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.wait {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, c.wait)
			}
			if len(e.Introspect().Published) != 0 {
				t.Error("published despite the fault")
			}
		})
	}
	t.Run("unknown token", func(t *testing.T) {
		t.Parallel()
		e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
		d := e.Destination(member, map[string]string{"access_token": "nope"}, providertest.ShortVideo(), "")
		_, err := e.Run(p, d, 5)
		providertest.WantError(t, err, provider.CategoryAuthExpired, false, "INVALID_ACCESS_TOKEN")
	})
	t.Run("daily post cap", func(t *testing.T) {
		t.Parallel()
		e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{PostsPerDay: 1})
		if _, err := e.Run(p, e.Destination(member, creds(), providertest.ShortVideo(), ""), 40); err != nil {
			t.Fatal(err)
		}
		d := e.Destination(member, creds(), providertest.ShortVideo(), "")
		d.Caption = "another one"
		_, err := e.Run(p, d, 40)
		providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "DAY limit")
	})
	for name, c := range map[string]struct{ version, want string }{
		// Sunset a year after its month.
		"sunset version": {"202301", "Requested version 20230101 is not active"},
		// LinkedIn skipped December 2025: a version computed from the date was 202512 in
		// February 2026, and every call failed.
		"never released version": {"202512", "Requested version 20251201 is not active"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, _, _ := env(t, sim.Behavior{}, linkedinsim.Options{})
			p := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, APIVersion: c.version})
			_, err := e.Run(p, e.Destination(member, creds(), providertest.ShortVideo(), ""), 5)
			providertest.WantError(t, err, provider.CategoryAPIVersion, false, c.want)
			providertest.WantError(t, err, provider.CategoryAPIVersion, false, "REELAY_LINKEDIN_API_VERSION")
		})
	}
}

func TestFlakyPublishesOnce(t *testing.T) {
	t.Parallel()
	var n atomic.Uint64
	rnd := func() float64 { return float64(n.Add(1)*7919%100) / 100 } // about 40% of calls fail
	e := providertest.NewEnv(t, "linkedin", accounts(sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.4, ProcessingMS: 3000}),
		linkedinsim.New, providertest.Options{Rand: rnd})
	p := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, APIVersion: testVersion, Repeat: provider.Repeat{Tries: 1}})
	v := providertest.NewVideo(9<<20, 10*time.Second, 1080, 1920)
	d := e.Destination(member, creds(), v, "")
	outs, err := e.RunRetrying(p, d, 200)
	if err != nil {
		t.Fatal(err)
	}
	if !outs[len(outs)-1].Done() {
		t.Fatal("not published")
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 1 {
		t.Fatalf("uploads %+v, published %+v; want one of each", rec.Uploads, rec.Published)
	}
	if failed := len(e.Requests("", "")) - len(okRequests(e)); failed == 0 {
		t.Fatal("the flaky account never failed a call")
	}
}

func okRequests(e *providertest.Env) []providertest.Request {
	var out []providertest.Request
	for _, r := range e.Requests("", "") {
		if r.Status < 500 {
			out = append(out, r)
		}
	}
	return out
}

// failingOpen returns an Open that breaks the first read stream starting at offset at after
// some bytes, as a storage outage mid-part would.
func failingOpen(m provider.Media, at int64) (func(context.Context, int64) (io.ReadCloser, error), *atomic.Bool) {
	var failed atomic.Bool
	return func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := m.Open(ctx, off)
		if err != nil || off != at || failed.Swap(true) {
			return rc, err
		}
		return io.NopCloser(io.MultiReader(io.LimitReader(rc, 1<<20), errReader{})), nil
	}, &failed
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("storage went away") }

func TestResumeMidPart(t *testing.T) {
	t.Parallel()
	e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	v := providertest.NewVideo(10<<20, 10*time.Second, 1080, 1920)
	d := e.Destination(member, creds(), v, "")
	open, failed := failingOpen(d.Video, 4<<20) // the second part
	d.Video.Open = open
	p.cfg.Repeat.Tries = 1

	var sawErr bool
	for range 40 {
		out, err := providertest.Step(context.Background(), p, d)
		if err != nil {
			pe := providertest.AsError(t, err)
			if !pe.Transient {
				t.Fatal(err)
			}
			sawErr = true
			continue // the publisher retries with the state it had
		}
		if out.Done() {
			break
		}
		e.Clock.Advance(out.After)
	}
	if !sawErr || !failed.Load() {
		t.Fatal("the video never failed mid-part")
	}
	partPuts := func() map[string]int {
		puts := map[string]int{}
		for _, r := range e.Requests(http.MethodPut, "/uploadedVideo") {
			puts[r.Query[:strings.Index(r.Query, "&")]]++
		}
		return puts
	}
	// A request is logged once the simulator has answered it, and the simulator answers the
	// cut PUT only when it notices the connection the provider dropped, which under load can be
	// after the provider went on to publish.
	puts := partPuts()
	for deadline := time.Now().Add(5 * time.Second); puts["part=1"] < 2 && time.Now().Before(deadline); puts = partPuts() {
		time.Sleep(time.Millisecond)
	}
	if puts["part=0"] != 1 || puts["part=1"] != 2 || puts["part=2"] != 1 {
		t.Fatalf("part uploads %v; want only the broken part twice", puts)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 1 {
		t.Fatalf("uploads %+v, published %+v", rec.Uploads, rec.Published)
	}
}

// runTo steps d until its State reaches phase, and returns that State (not yet stepped).
func runTo(t *testing.T, e *providertest.Env, p *Provider, d *provider.Destination, phase string) json.RawMessage {
	t.Helper()
	for range 60 {
		if len(d.State) > 0 && state(t, d.State).Phase == phase {
			return append(json.RawMessage(nil), d.State...)
		}
		out, err := providertest.Step(context.Background(), p, d)
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(out.After)
	}
	t.Fatalf("never reached phase %q", phase)
	return nil
}

func TestCrashAfterFinalizeDoesNotFinalizeAgain(t *testing.T) {
	t.Parallel()
	e, s, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	v := providertest.ShortVideo()
	d := e.Destination(member, creds(), v, "")
	before := runTo(t, e, p, d, phaseFinalizing)
	if _, err := providertest.Step(context.Background(), p, d); err != nil { // finalizes
		t.Fatal(err)
	}
	d.State = before // the process died before the new state was stored
	if _, err := e.Run(p, d, 40); err != nil {
		t.Fatal(err)
	}
	if n := len(e.Requests(http.MethodPost, "/rest/videos")); n != 2 { // initialize + one finalize
		t.Errorf("%d video actions, want initializeUpload and one finalizeUpload", n)
	}
	vids := s.Videos(member)
	if len(vids) != 1 || vids[0].Finalizes != 1 {
		t.Fatalf("videos %+v", vids)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || len(rec.Published) != 1 {
		t.Fatalf("uploads %+v, published %+v", rec.Uploads, rec.Published)
	}
}

func TestCrashAfterPostDoesNotPostAgain(t *testing.T) {
	t.Parallel()
	e, s, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	d := e.Destination(member, creds(), providertest.ShortVideo(), "")
	before := runTo(t, e, p, d, phasePosting)
	first, err := providertest.Step(context.Background(), p, d)
	if err != nil || !first.Done() {
		t.Fatalf("%+v, %v", first, err)
	}
	d.State = before // the answer to the post call was lost
	again, err := providertest.Step(context.Background(), p, d)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Done() || again.ExternalID != first.ExternalID || again.URL != first.URL || !strings.Contains(again.Message, "did not post it again") {
		t.Fatalf("after the lost answer: %s %s %q; first %s", again.Status, again.ExternalID, again.Message, first.ExternalID)
	}
	if n := len(s.Posts()); n != 1 {
		t.Fatalf("%d posts", n)
	}
	if rec := e.Introspect(); len(rec.Published) != 1 || len(rec.Uploads) != 1 {
		t.Fatalf("uploads %+v, published %+v", rec.Uploads, rec.Published)
	}
}

func TestExpiredUploadURLsStartOver(t *testing.T) {
	t.Parallel()
	e, s, p := env(t, sim.Behavior{}, linkedinsim.Options{UploadURLTTL: time.Hour})
	v := providertest.NewVideo(10<<20, 10*time.Second, 1080, 1920)
	d := e.Destination(member, creds(), v, "")
	if _, err := providertest.Step(context.Background(), p, d); err != nil { // initialize
		t.Fatal(err)
	}
	if _, err := providertest.Step(context.Background(), p, d); err != nil { // part 1
		t.Fatal(err)
	}
	e.Clock.Advance(2 * time.Hour)
	if _, err := e.Run(p, d, 60); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Videos(member)); n != 2 {
		t.Fatalf("%d videos; want the expired one and a new one", n)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 1 {
		t.Fatalf("uploads %+v, published %+v", rec.Uploads, rec.Published)
	}
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, options, text string }{
		{"commentary", `{"commentary":"` + strings.Repeat("a", 3001) + `"}`, "commentary is 3001"},
		{"title", `{"title":"` + strings.Repeat("t", 201) + `"}`, "title is 201"},
		{"json", `{"title":7}`, "linkedin options"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
			_, err := e.Run(p, e.Destination(member, creds(), providertest.ShortVideo(), c.options), 3)
			providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.text)
			if n := len(e.Requests("", "")); n != 0 {
				t.Errorf("%d requests reached LinkedIn", n)
			}
		})
	}
	t.Run("video", func(t *testing.T) {
		t.Parallel()
		e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
		v := providertest.NewVideo(2<<20, 2*time.Second, 1080, 1920)
		_, err := e.Run(p, e.Destination(member, creds(), v, ""), 3)
		providertest.WantError(t, err, provider.CategoryMediaRejected, false, "LinkedIn takes 3s")
	})
}

func TestIdentifyAndOptions(t *testing.T) {
	t.Parallel()
	e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	id, err := p.Identify(context.Background(), e.BaseURL, creds())
	if err != nil {
		t.Fatal(err)
	}
	if id.ExternalID != member || id.Name != "Ada Lovelace" || !strings.HasPrefix(id.AvatarURL, e.BaseURL) {
		t.Fatalf("identity %+v", id)
	}
	_, err = p.Identify(context.Background(), e.BaseURL, map[string]string{"access_token": "nope"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Invalid access token")
	_, err = p.Identify(context.Background(), e.BaseURL, map[string]string{})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "no access token")

	opts, err := p.Options(context.Background(), e.BaseURL, creds())
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := opts["account"].(map[string]any)
	if acct["author"] != "urn:li:person:"+member || acct["name"] != "Ada Lovelace" {
		t.Fatalf("options %v", opts)
	}
	for _, r := range e.Requests(http.MethodGet, "/v2/userinfo") {
		if r.Header.Get("Authorization") == "" {
			t.Error("userinfo without a token")
		}
	}
}

func TestStateHoldsNoToken(t *testing.T) {
	t.Parallel()
	e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	d := e.Destination(member, creds(), providertest.ShortVideo(), "")
	outs, err := e.Run(p, d, 40)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if bytes.Contains(o.State, []byte(`"tok"`)) || bytes.Contains(o.State, []byte("Bearer")) {
			t.Fatalf("state carries the access token: %s", o.State)
		}
	}
}

// testVersion is the LinkedIn-Version the tests speak: the simulator's clock starts in March
// 2026, when LinkedIn served 202503 to 202602.
const testVersion = "202601"

func TestVersionIsPinned(t *testing.T) {
	t.Parallel()
	// The same version whatever the date: a month LinkedIn released, not one computed.
	for _, now := range []time.Time{time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)} {
		p := New(Config{Now: func() time.Time { return now }})
		if got := p.cfg.APIVersion; got != Description.API.Version {
			t.Errorf("version at %v = %s, want the description's %s", now, got, Description.API.Version)
		}
	}
	if got := New(Config{APIVersion: "202509"}).cfg.APIVersion; got != "202509" {
		t.Errorf("configured version = %s", got)
	}
}
