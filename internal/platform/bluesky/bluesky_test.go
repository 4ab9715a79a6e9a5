package bluesky

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/bluesky/blueskysim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const account = "sbx_0a1b2c3d"

type env struct {
	*providertest.Env
	sim   *blueskysim.Sim
	prov  *Provider
	creds map[string]string
}

func newEnv(t *testing.T, b sim.Behavior, o blueskysim.Options, po providertest.Options) *env {
	t.Helper()
	accounts := sim.StaticAccounts{"app-pw-1": {ID: account, Username: "Reelay Demo", Behavior: b}}
	e := &env{}
	e.Env = providertest.NewEnv(t, platform.Bluesky, accounts, func(cfg sim.Config) http.Handler {
		e.sim = blueskysim.NewSim(cfg, o)
		return e.sim
	}, po)
	// Retry-Afters of a second (the simulator's rate_limit) go back to the caller, as longer
	// ones would, instead of being waited out in every test.
	e.prov = New(Config{HTTPClient: e.Client, Now: e.Clock.Now, Repeat: provider.Repeat{Delay: time.Millisecond, MaxWait: 100 * time.Millisecond}})
	e.creds = sandboxtoken.Credentials(platform.Bluesky, e.BaseURL, account, "app-pw-1")
	return e
}

func okBehavior() sim.Behavior { return sim.Behavior{ProcessingMS: -1} }

func (e *env) dest(v *providertest.Video, options string) *provider.Destination {
	return e.Destination(account, e.creds, v, options)
}

func count(e *env, nsid string) int { return len(e.Requests("", "/xrpc/"+nsid)) }

func TestPublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	v := providertest.ShortVideo()
	text := "Café crème ☕ #reelay, see https://example.com/a?b=c. 👨‍👩‍👧 #été!"
	d := e.dest(v, `{"text":`+mustJSON(text)+`}`)
	outs, err := e.Run(e.prov, d, 50)
	if err != nil {
		t.Fatal(err)
	}
	last := outs[len(outs)-1]
	did := blueskysim.DID(account)
	if last.Status != provider.StatusPublished || !strings.HasPrefix(last.ExternalID, "at://"+did+"/app.bsky.feed.post/") {
		t.Fatalf("outcome = %+v", last)
	}
	rkey := last.ExternalID[strings.LastIndexByte(last.ExternalID, '/')+1:]
	if want := "https://bsky.app/profile/" + sandboxtoken.BlueskyHandle(account) + "/post/" + rkey; last.URL != want {
		t.Errorf("URL = %q, want %q", last.URL, want)
	}
	sawProcessing := false
	for _, o := range outs[:len(outs)-1] {
		if o.Status == provider.StatusProcessing && o.After > 0 {
			sawProcessing = true
		}
	}
	if !sawProcessing {
		t.Error("no processing poll with a delay")
	}

	in := e.Introspect()
	if len(in.Uploads) != 1 || in.Uploads[0].SHA256 != v.SHA256() || in.Uploads[0].Bytes != v.Size() || in.Uploads[0].Account != account {
		t.Errorf("uploads = %+v", in.Uploads)
	}
	if len(in.Published) != 1 || in.Published[0].Text != text || in.Published[0].SHA256 != v.SHA256() ||
		in.Published[0].ID != last.ExternalID || in.Published[0].URL != last.URL {
		t.Errorf("published = %+v", in.Published)
	}

	posts := e.sim.Posts(account)
	if len(posts) != 1 {
		t.Fatalf("posts = %+v", posts)
	}
	var rec struct {
		Type      string  `json:"$type"`
		Text      string  `json:"text"`
		CreatedAt string  `json:"createdAt"`
		Facets    []Facet `json:"facets"`
		Embed     struct {
			Type        string         `json:"$type"`
			Video       Blob           `json:"video"`
			AspectRatio map[string]int `json:"aspectRatio"`
		} `json:"embed"`
	}
	if err := json.Unmarshal(posts[0].Record, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Type != PostCollection || rec.Text != text || rec.Embed.Type != "app.bsky.embed.video" ||
		rec.Embed.Video.MimeType != "video/mp4" || rec.Embed.Video.Size != v.Size() ||
		rec.Embed.AspectRatio["width"] != 1080 || rec.Embed.AspectRatio["height"] != 1920 {
		t.Errorf("record = %+v", rec)
	}
	if _, err := time.Parse(time.RFC3339, rec.CreatedAt); err != nil {
		t.Errorf("createdAt %q: %v", rec.CreatedAt, err)
	}
	var got []string
	for _, f := range rec.Facets {
		got = append(got, text[f.Index.ByteStart:f.Index.ByteEnd])
	}
	if want := []string{"#reelay", "https://example.com/a?b=c", "#été"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("facet texts = %q, want %q", got, want)
	}

	for nsid, want := range map[string]int{
		"com.atproto.server.createSession": 1, "app.bsky.video.getUploadLimits": 1,
		"app.bsky.video.uploadVideo": 1, "com.atproto.repo.createRecord": 1, "com.atproto.repo.uploadBlob": 0,
	} {
		if n := count(e, nsid); n != want {
			t.Errorf("%s called %d times, want %d", nsid, n, want)
		}
	}
	// State never holds a secret.
	for _, secret := range []string{"app-pw-1", "eyJ"} {
		if strings.Contains(string(d.State), secret) {
			t.Errorf("state %s holds %q", d.State, secret)
		}
	}
	// Done is done: another Step changes nothing.
	again, err := e.prov.Step(context.Background(), d)
	if err != nil || again.ExternalID != last.ExternalID || len(e.Introspect().Published) != 1 {
		t.Errorf("step after done = %+v, %v", again, err)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestCaptionIsTheDefaultText(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	d := e.dest(providertest.ShortVideo(), "")
	if _, err := e.Run(e.prov, d, 50); err != nil {
		t.Fatal(err)
	}
	if p := e.Introspect().Published; len(p) != 1 || p[0].Text != "A caption #reelay" {
		t.Errorf("published = %+v", p)
	}
}

func TestProcessingIsPolledWithBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 90_000}, blueskysim.Options{}, providertest.Options{})
	outs, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 100)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for _, o := range outs {
		if o.Status == provider.StatusProcessing && o.After > 0 {
			waits = append(waits, o.After)
		}
	}
	if len(waits) < 5 {
		t.Fatalf("waits = %v", waits)
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] < waits[i-1] || waits[i] > 15*time.Second {
			t.Errorf("waits not a capped back-off: %v", waits)
			break
		}
	}
	if waits[len(waits)-1] != 15*time.Second {
		t.Errorf("waits never reached the cap: %v", waits)
	}
	if polls := count(e, "app.bsky.video.getJobStatus"); polls != len(waits) {
		t.Errorf("%d polls for %d waits", polls, len(waits))
	}
	if len(e.Introspect().Published) != 1 {
		t.Error("not published")
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
		text      string
	}{
		{sim.FailReject, provider.CategoryMediaRejected, false, "Failed to process video"},
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true, "Service Unavailable"},
		{sim.FailAuth, provider.CategoryAuthExpired, false, "Invalid identifier or password"},
		{sim.FailRateLimit, provider.CategoryRateLimited, true, "Rate Limit Exceeded"},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: -1, Fail: c.fail}, blueskysim.Options{}, providertest.Options{})
			_, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 50)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if c.fail == sim.FailRateLimit && (pe.RetryAfter < time.Second || pe.RetryAfter > 3*time.Second) {
				t.Errorf("RetryAfter = %s, want about the RateLimit-Reset second", pe.RetryAfter)
			}
			if n := len(e.Introspect().Published); n != 0 {
				t.Errorf("%d published", n)
			}
			if c.fail == sim.FailReject && len(e.Introspect().Uploads) != 1 {
				t.Errorf("uploads = %+v", e.Introspect().Uploads)
			}
		})
	}
}

func TestFlakyPublishesOnce(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	e := newEnv(t, sim.Behavior{ProcessingMS: -1, Fail: sim.FailFlaky, FailRate: 0.5}, blueskysim.Options{},
		providertest.Options{Rand: r.Float64})
	outs, err := e.RunRetrying(e.prov, e.dest(providertest.ShortVideo(), ""), 200)
	if err != nil {
		t.Fatal(err)
	}
	if outs[len(outs)-1].Status != provider.StatusPublished {
		t.Fatalf("last = %+v", outs[len(outs)-1])
	}
	in := e.Introspect()
	if len(in.Published) != 1 || len(in.Uploads) != 1 {
		t.Errorf("published %d, uploads %d", len(in.Published), len(in.Uploads))
	}
	failed := 0
	for _, rq := range e.Requests("", "") {
		if rq.Status == http.StatusServiceUnavailable {
			failed++
		}
	}
	if failed == 0 {
		t.Error("the flaky account never failed a call")
	}
}

// stepUntil steps d until its State's phase is phase, and returns that State.
func stepUntil(t *testing.T, e *env, d *provider.Destination, phase string) json.RawMessage {
	t.Helper()
	for range 50 {
		var st State
		_ = json.Unmarshal(d.State, &st)
		if d.State != nil && st.Phase == phase {
			return d.State
		}
		out, err := providertest.Step(context.Background(), e.prov, d)
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(out.After)
	}
	t.Fatalf("phase %s never reached", phase)
	return nil
}

func TestCrashAfterUploadResumesWithTheSameJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	d := e.dest(providertest.ShortVideo(), "")
	beforeUpload := stepUntil(t, e, d, phaseUpload)
	afterUpload := stepUntil(t, e, d, phaseProcessing)
	// The process died before the upload's answer was stored: the Step runs again.
	d.State = beforeUpload
	if _, err := providertest.Step(context.Background(), e.prov, d); err != nil {
		t.Fatal(err)
	}
	var first, second State
	_ = json.Unmarshal(afterUpload, &first)
	_ = json.Unmarshal(d.State, &second)
	if second.Phase != phaseProcessing || second.JobID != first.JobID {
		t.Fatalf("resumed state %+v; first job %s", second, first.JobID)
	}
	ups := e.Requests(http.MethodPost, "/xrpc/app.bsky.video.uploadVideo")
	if len(ups) != 2 || ups[1].Status != http.StatusConflict {
		t.Errorf("uploadVideo requests = %+v", ups)
	}
	if _, err := e.Run(e.prov, d, 50); err != nil {
		t.Fatal(err)
	}
	in := e.Introspect()
	if len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Errorf("uploads %d, published %d", len(in.Uploads), len(in.Published))
	}
}

// failingVideo fails its reader after n bytes on the first open.
type failingVideo struct {
	io.Reader
	n int64
}

func TestVideoReaderFailingMidUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	v := providertest.ShortVideo()
	d := e.dest(v, "")
	stepUntil(t, e, d, phaseUpload)
	good := d.Video.Open
	d.Video.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := good(ctx, off)
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(io.LimitReader(rc, 700_000), errReader{}), rc}, nil
	}
	_, err := providertest.Step(context.Background(), e.prov, d)
	pe := providertest.AsError(t, err)
	if !pe.Transient {
		t.Fatalf("error %v is not transient", pe)
	}
	if n := len(e.Introspect().Uploads); n != 0 {
		t.Fatalf("a broken upload was recorded (%d)", n)
	}
	d.Video.Open = good
	if _, err := e.Run(e.prov, d, 50); err != nil {
		t.Fatal(err)
	}
	in := e.Introspect()
	if len(in.Uploads) != 1 || in.Uploads[0].SHA256 != v.SHA256() || len(in.Published) != 1 {
		t.Errorf("introspect = %+v", in)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("storage went away") }

func TestCrashAfterCreateDoesNotPostTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	d := e.dest(providertest.ShortVideo(), "")
	beforePost := stepUntil(t, e, d, phasePost)
	first, err := providertest.Step(context.Background(), e.prov, d)
	if err != nil || first.Status != provider.StatusPublished {
		t.Fatalf("post = %+v, %v", first, err)
	}
	// The create went through but its answer was never stored.
	d.State = beforePost
	again, err := providertest.Step(context.Background(), e.prov, d)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != provider.StatusPublished || again.ExternalID != first.ExternalID || again.URL != first.URL {
		t.Errorf("resumed = %+v, first = %+v", again, first)
	}
	creates := e.Requests(http.MethodPost, "/xrpc/com.atproto.repo.createRecord")
	if len(creates) != 2 || creates[1].Status != http.StatusInternalServerError {
		t.Errorf("createRecord requests = %+v", creates)
	}
	if n := count(e, "com.atproto.repo.getRecord"); n != 1 {
		t.Errorf("getRecord called %d times", n)
	}
	if in := e.Introspect(); len(in.Published) != 1 || len(in.Uploads) != 1 {
		t.Errorf("published %d, uploads %d", len(in.Published), len(in.Uploads))
	}

	// Another record under the key is never taken for this post.
	d.State = beforePost
	d.Caption = "a different text"
	_, err = providertest.Step(context.Background(), e.prov, d)
	providertest.WantError(t, err, provider.CategoryInternal, false, "another record already holds")
}

func TestLostJobUploadsAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	d := e.dest(providertest.ShortVideo(), "")
	stepUntil(t, e, d, phaseUpload)
	var st State
	_ = json.Unmarshal(d.State, &st)
	st.Phase, st.JobID = phaseProcessing, "forgotten-job"
	d.State, _ = json.Marshal(st)
	out, err := providertest.Step(context.Background(), e.prov, d)
	if err != nil || out.Status != provider.StatusUploading {
		t.Fatalf("poll of a lost job = %+v, %v", out, err)
	}
	if _, err := e.Run(e.prov, d, 50); err != nil {
		t.Fatal(err)
	}
	if in := e.Introspect(); len(in.Uploads) != 1 || len(in.Published) != 1 {
		t.Errorf("uploads %d, published %d", len(in.Uploads), len(in.Published))
	}
}

func TestSessionIsCachedRefreshedAndRecreated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	publishOne := func() {
		t.Helper()
		if _, err := e.Run(e.prov, e.dest(providertest.NewVideo(1<<20+int64(len(e.Introspect().Uploads)), 5*time.Second, 720, 1280), ""), 50); err != nil {
			t.Fatal(err)
		}
	}
	publishOne()
	publishOne()
	if n := count(e, "com.atproto.server.createSession"); n != 1 {
		t.Errorf("createSession called %d times for two posts", n)
	}
	// The access token (2 hours) expires: one refresh, no new sign-in.
	e.Clock.Advance(3 * time.Hour)
	publishOne()
	if c, r := count(e, "com.atproto.server.createSession"), count(e, "com.atproto.server.refreshSession"); c != 1 || r != 1 {
		t.Errorf("after expiry: createSession %d, refreshSession %d", c, r)
	}
	expired := 0
	for _, rq := range e.Requests("", "") {
		if rq.Status == http.StatusBadRequest {
			expired++
		}
	}
	if expired != 1 {
		t.Errorf("%d requests answered 400, want the one ExpiredToken", expired)
	}
	// The refresh token (60 days) expires too: a new sign-in.
	e.Clock.Advance(61 * 24 * time.Hour)
	publishOne()
	if c, r := count(e, "com.atproto.server.createSession"), count(e, "com.atproto.server.refreshSession"); c != 2 || r != 2 {
		t.Errorf("after the refresh token expired: createSession %d, refreshSession %d", c, r)
	}
	if n := len(e.Introspect().Published); n != 4 {
		t.Errorf("%d published", n)
	}
}

func TestCreateSessionRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	for i := range 30 {
		// A new provider has no cached session: each Identify signs in.
		p := New(Config{HTTPClient: e.Client, Now: e.Clock.Now})
		if _, err := p.Identify(context.Background(), e.BaseURL, e.creds); err != nil {
			t.Fatalf("sign-in %d: %v", i+1, err)
		}
		e.Clock.Advance(time.Second)
	}
	p := New(Config{HTTPClient: e.Client, Now: e.Clock.Now})
	_, err := p.Identify(context.Background(), e.BaseURL, e.creds)
	pe := providertest.WantError(t, err, provider.CategoryRateLimited, true, "Rate Limit Exceeded")
	if pe.RetryAfter < 4*time.Minute || pe.RetryAfter > 5*time.Minute+2*time.Second {
		t.Errorf("RetryAfter = %s, want the rest of the 5-minute window", pe.RetryAfter)
	}
	// A provider without a cached session is refused as well: the limit is per handle.
	first := count(e, "com.atproto.server.createSession")
	if _, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 50); err == nil {
		t.Error("e.prov had no session yet and should have been refused too")
	}
	if count(e, "com.atproto.server.createSession") != first+1 {
		t.Error("e.prov did not try to sign in")
	}
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{Profiles: map[string]blueskysim.Profile{
		account: {DisplayName: "Reelay on Bluesky", Avatar: "https://cdn.example/avatar.jpg"},
	}}, providertest.Options{})
	id, err := e.prov.Identify(context.Background(), e.BaseURL, e.creds)
	if err != nil {
		t.Fatal(err)
	}
	want := provider.Identity{ExternalID: blueskysim.DID(account), Name: "Reelay on Bluesky",
		Username: sandboxtoken.BlueskyHandle(account), AvatarURL: "https://cdn.example/avatar.jpg"}
	if id != want {
		t.Errorf("identity = %+v, want %+v", id, want)
	}
	for name, creds := range map[string]map[string]string{
		"wrong password": {"handle": e.creds["handle"], "app_password": "nope", "pds_url": e.BaseURL},
		"wrong handle":   {"handle": "someone.else.test", "app_password": "app-pw-1", "pds_url": e.BaseURL},
		"no password":    {"handle": e.creds["handle"]},
	} {
		_, err := e.prov.Identify(context.Background(), e.BaseURL, creds)
		providertest.WantError(t, err, provider.CategoryAuthExpired, false, "")
		_ = name
	}
}

func TestOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	opts, err := e.prov.Options(context.Background(), e.BaseURL, e.creds)
	if err != nil {
		t.Fatal(err)
	}
	if v := opts["remaining_daily_videos"].(map[string]any)["default"]; v != int64(25) {
		t.Errorf("remaining_daily_videos = %v", v)
	}
	if v := opts["can_upload_video"].(map[string]any)["default"]; v != true {
		t.Errorf("can_upload_video = %v", v)
	}
	if _, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 50); err != nil {
		t.Fatal(err)
	}
	opts, _ = e.prov.Options(context.Background(), e.BaseURL, e.creds)
	if v := opts["remaining_daily_videos"].(map[string]any)["default"]; v != int64(24) {
		t.Errorf("after one video: remaining_daily_videos = %v", v)
	}
	if a := opts["account"].(map[string]any); a["did"] != blueskysim.DID(account) {
		t.Errorf("account = %v", a)
	}
}

func TestUploadAllowance(t *testing.T) {
	t.Parallel()
	t.Run("daily cap", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, okBehavior(), blueskysim.Options{VideosPerDay: 1}, providertest.Options{})
		if _, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 50); err != nil {
			t.Fatal(err)
		}
		_, err := e.Run(e.prov, e.dest(providertest.NewVideo(3<<20, 10*time.Second, 1080, 1920), ""), 50)
		providertest.WantError(t, err, provider.CategoryQuotaExceeded, false, "daily video upload limit")
		if n := count(e, "app.bsky.video.uploadVideo"); n != 1 {
			t.Errorf("uploadVideo called %d times", n)
		}
	})
	t.Run("unverified e-mail", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, okBehavior(), blueskysim.Options{Profiles: map[string]blueskysim.Profile{account: {EmailUnconfirmed: true}}}, providertest.Options{})
		_, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 50)
		providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "verify your email")
	})
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	family := "👨‍👩‍👧‍👦" // one grapheme, 25 bytes
	for _, c := range []struct {
		name     string
		video    *providertest.Video
		ctype    string
		options  string
		category string
		text     string
	}{
		{"301 graphemes", nil, "", `{"text":` + mustJSON(strings.Repeat("é", 301)) + `}`, provider.CategoryInvalidOptions, "301 graphemes"},
		{"over 3000 bytes", nil, "", `{"text":` + mustJSON(strings.Repeat(family, 130)) + `}`, provider.CategoryInvalidOptions, "3250 bytes"},
		{"unknown option", nil, "", `{"txt":"hi"}`, provider.CategoryInvalidOptions, "unknown field"},
		{"over 3 minutes", providertest.NewVideo(2<<20, 181*time.Second, 1080, 1920), "", "", provider.CategoryMediaRejected, "3m0s"},
		{"webm", nil, "video/webm", "", provider.CategoryMediaRejected, "video/webm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := c.video
			if v == nil {
				v = providertest.ShortVideo()
			}
			d := e.dest(v, c.options)
			if c.ctype != "" {
				d.Video.ContentType = c.ctype
			}
			_, err := e.prov.Step(context.Background(), d)
			providertest.WantError(t, err, c.category, false, c.text)
		})
	}
	// 300 graphemes of 25 bytes each fit the grapheme limit but not the byte limit.
	if err := checkText(strings.Repeat(family, 120)); err != nil {
		t.Errorf("120 families (3000 bytes): %v", err)
	}
	if n := len(e.Introspect().Uploads); n != 0 {
		t.Errorf("%d uploads", n)
	}
}

func TestBlobUpload(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  Config
		o    blueskysim.Options
	}{
		{"configured", Config{Upload: UploadBlob}, blueskysim.Options{}},
		{"no video service", Config{}, blueskysim.Options{NoVideoService: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, okBehavior(), c.o, providertest.Options{})
			c.cfg.HTTPClient, c.cfg.Now = e.Client, e.Clock.Now
			p := New(c.cfg)
			v := providertest.ShortVideo()
			outs, err := e.Run(p, e.dest(v, ""), 50)
			if err != nil {
				t.Fatal(err)
			}
			in := e.Introspect()
			if outs[len(outs)-1].Status != provider.StatusPublished || len(in.Uploads) != 1 || in.Uploads[0].SHA256 != v.SHA256() ||
				len(in.Published) != 1 || in.Published[0].SHA256 != v.SHA256() {
				t.Errorf("introspect = %+v", in)
			}
			if n := count(e, "com.atproto.repo.uploadBlob"); n != 1 {
				t.Errorf("uploadBlob called %d times", n)
			}
		})
	}
}

func TestFacets(t *testing.T) {
	t.Parallel()
	type span struct{ text, tag, uri string }
	for _, c := range []struct {
		in   string
		want []span
	}{
		{"#hello world", []span{{"#hello", "hello", ""}}},
		{"Ça va? #crème-brûlée!", []span{{"#crème-brûlée", "crème-brûlée", ""}}},
		{"🎉🎉 #party 🎉", []span{{"#party", "party", ""}}},
		{"👨‍👩‍👧 family #famille.", []span{{"#famille", "famille", ""}}},
		{"full width ＃タグ ok", []span{{"＃タグ", "タグ", ""}}},
		{"#123 is not a tag, #1a is", []span{{"#1a", "1a", ""}}},
		{"a#b c#d", nil},
		{"#️⃣ keycap", nil},
		{"#" + strings.Repeat("a", 65), nil},
		{"see https://example.com/path?q=1.", []span{{"https://example.com/path?q=1", "", "https://example.com/path?q=1"}}},
		{"(https://en.wikipedia.org/wiki/Foo_(bar)) and (http://x.org/a)", []span{
			{"https://en.wikipedia.org/wiki/Foo_(bar)", "", "https://en.wikipedia.org/wiki/Foo_(bar)"},
			{"http://x.org/a", "", "http://x.org/a"}}},
		{"émoji 😀 https://bsky.app #bsky", []span{{"https://bsky.app", "", "https://bsky.app"}, {"#bsky", "bsky", ""}}},
		{"https://x.com/#frag not a tag", []span{{"https://x.com/#frag", "", "https://x.com/#frag"}}},
		{"no facets here", nil},
	} {
		got := Facets(c.in)
		if len(got) != len(c.want) {
			t.Errorf("Facets(%q) = %+v, want %d", c.in, got, len(c.want))
			continue
		}
		for i, f := range got {
			w := c.want[i]
			if s := c.in[f.Index.ByteStart:f.Index.ByteEnd]; s != w.text || f.Index.ByteStart != strings.Index(c.in, w.text) {
				t.Errorf("Facets(%q)[%d] covers %q at %d, want %q at %d", c.in, i, s, f.Index.ByteStart, w.text, strings.Index(c.in, w.text))
			}
			ft := f.Features[0]
			if ft.Tag != w.tag || ft.URI != w.uri || (w.tag != "" && ft.Type != FeatureTag) || (w.uri != "" && ft.Type != FeatureLink) {
				t.Errorf("Facets(%q)[%d] = %+v, want %+v", c.in, i, ft, w)
			}
		}
	}
}

func TestNewTID(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a, b := NewTID(t0), NewTID(t0.Add(time.Millisecond))
	for _, s := range []string{a, b} {
		if len(s) != 13 || !strings.ContainsRune("234567abcdefghij", rune(s[0])) || strings.Trim(s, "234567abcdefghijklmnopqrstuvwxyz") != "" {
			t.Errorf("TID %q is malformed", s)
		}
	}
	if a >= b {
		t.Errorf("TIDs do not sort by time: %s >= %s", a, b)
	}
}

func TestRetryAfterFromRateLimitReset(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 0)
	h := http.Header{}
	h.Set("RateLimit-Reset", "1700000030")
	if d := retryAfter(h, now); d < 30*time.Second || d > 31*time.Second {
		t.Errorf("retryAfter = %s", d)
	}
	h.Set("Retry-After", "7")
	if d := retryAfter(h, now); d != 7*time.Second {
		t.Errorf("retryAfter with Retry-After = %s", d)
	}
}

// closedURL is the URL of a loopback port that nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String()
	ln.Close()
	return u
}

// TestSelfHostedPDS publishes from a channel whose PDS is self-hosted and bare (no AppView, no
// video service), as the reference PDS runs without PDS_BSKY_APP_VIEW_URL: the channel is
// named from its session, and the video goes to uploadBlob, whether the video service setting
// is the PDS itself (which answers "No service configured"), none, or a host nobody answers on.
func TestSelfHostedPDS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		video func(e *env) string
		// asked is whether the video service setting was asked (and answered that it is not one).
		asked bool
	}{
		{"the PDS as video service", func(e *env) string { return e.BaseURL }, true},
		{"none", func(*env) string { return NoVideoService }, false},
		{"unreachable", func(*env) string { return closedURL(t) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: -1, BarePDS: true}, blueskysim.Options{}, providertest.Options{})
			e.prov = New(Config{HTTPClient: e.Client, Now: e.Clock.Now, VideoServiceURL: c.video(e),
				Repeat: provider.Repeat{Delay: time.Millisecond, MaxWait: 100 * time.Millisecond}})
			// A channel of its own PDS (pds_url), not a sandbox destination.
			id, err := e.prov.Identify(context.Background(), "", e.creds)
			if err != nil {
				t.Fatalf("Identify: %v", err)
			}
			handle := sandboxtoken.BlueskyHandle(account)
			if want := (provider.Identity{ExternalID: blueskysim.DID(account), Name: handle, Username: handle}); id != want {
				t.Errorf("identity = %+v, want %+v", id, want)
			}
			if r := e.Requests(http.MethodGet, "/xrpc/app.bsky.actor.getProfile"); len(r) != 1 || r[0].Status != http.StatusBadRequest {
				t.Errorf("getProfile requests = %+v, want one answered 400 (no AppView)", r)
			}

			v := providertest.ShortVideo()
			d := e.dest(v, "")
			d.BaseURL = ""
			beforePost := stepUntil(t, e, d, phasePost)
			outs, err := e.Run(e.prov, d, 50)
			if err != nil {
				t.Fatal(err)
			}
			last := outs[len(outs)-1]
			if last.Status != provider.StatusPublished {
				t.Fatalf("outcome = %+v", last)
			}
			// A restart after the blob was stored (here, after the create too) neither uploads nor
			// posts again.
			d.State = beforePost
			again, err := providertest.Step(context.Background(), e.prov, d)
			if err != nil || again.ExternalID != last.ExternalID {
				t.Errorf("after a restart: %+v, %v; first %+v", again, err, last)
			}
			if n := count(e, "com.atproto.repo.uploadBlob"); n != 1 {
				t.Errorf("uploadBlob called %d times", n)
			}
			if n := count(e, "app.bsky.video.uploadVideo"); n != 0 {
				t.Errorf("uploadVideo called %d times", n)
			}
			limits := e.Requests(http.MethodGet, "/xrpc/app.bsky.video.getUploadLimits")
			if c.asked != (len(limits) > 0) {
				t.Errorf("getUploadLimits requests = %+v", limits)
			}
			for _, r := range limits {
				if r.Status != http.StatusBadRequest {
					t.Errorf("getUploadLimits answered %d, want 400 (No service configured)", r.Status)
				}
			}
			in := e.Introspect()
			if len(in.Uploads) != 1 || in.Uploads[0].SHA256 != v.SHA256() || len(in.Published) != 1 || in.Published[0].SHA256 != v.SHA256() {
				t.Errorf("introspect = %+v", in)
			}
			if opts, err := e.prov.Options(context.Background(), "", e.creds); err != nil || opts["can_upload_video"] != nil {
				t.Errorf("options = %v, %v", opts, err)
			}
		})
	}
}

// TestBlobTooLarge: a PDS refuses a blob over its upload limit (the reference PDS: 413
// PayloadTooLarge, 5 MiB by default); that is final, and the message names the limit.
func TestBlobTooLarge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: -1, BarePDS: true}, blueskysim.Options{}, providertest.Options{})
	e.prov = New(Config{HTTPClient: e.Client, Now: e.Clock.Now, VideoServiceURL: NoVideoService})
	d := e.dest(providertest.NewVideo(6<<20, 10*time.Second, 1080, 1920), "")
	d.BaseURL = ""
	_, err := e.Run(e.prov, d, 50)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "PDS_BLOB_UPLOAD_LIMIT, 5242880 bytes")
	if n := len(e.Introspect().Published); n != 0 {
		t.Errorf("%d posts", n)
	}
}

// TestNoVideoServiceSettingKeepsSandboxes: "none" is about the platform's video service; a
// sandbox channel's simulator is its video service still.
func TestNoVideoServiceSettingKeepsSandboxes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
	e.prov = New(Config{HTTPClient: e.Client, Now: e.Clock.Now, VideoServiceURL: NoVideoService})
	if _, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), ""), 50); err != nil {
		t.Fatal(err)
	}
	if n, m := count(e, "app.bsky.video.uploadVideo"), count(e, "com.atproto.repo.uploadBlob"); n != 1 || m != 0 {
		t.Errorf("uploadVideo called %d times, uploadBlob %d", n, m)
	}
}

func TestCheckVideoService(t *testing.T) {
	t.Parallel()
	for s, ok := range map[string]bool{
		"": true, "none": true, "None": true, "https://video.bsky.app": true, "http://10.0.0.5:8080": true,
		"video.bsky.app": false, "ftp://video.example": false, "https://": false,
	} {
		if err := CheckVideoService(s); (err == nil) != ok {
			t.Errorf("CheckVideoService(%q) = %v", s, err)
		}
	}
}

// TestVideoServiceSettingChangedMidway: a destination begun with a video service goes on
// through uploadBlob once the setting says "none" (a restart with the new setting), whether
// its video had not been sent yet or its job was being processed.
func TestVideoServiceSettingChangedMidway(t *testing.T) {
	t.Parallel()
	for _, phase := range []string{phaseUpload, phaseProcessing} {
		t.Run(phase, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, okBehavior(), blueskysim.Options{}, providertest.Options{})
			e.prov = New(Config{HTTPClient: e.Client, Now: e.Clock.Now, VideoServiceURL: e.BaseURL})
			d := e.dest(providertest.ShortVideo(), "")
			d.BaseURL = ""
			stepUntil(t, e, d, phase)
			e.prov = New(Config{HTTPClient: e.Client, Now: e.Clock.Now, VideoServiceURL: NoVideoService})
			outs, err := e.Run(e.prov, d, 50)
			if err != nil {
				t.Fatal(err)
			}
			if last := outs[len(outs)-1]; last.Status != provider.StatusPublished {
				t.Fatalf("outcome = %+v", last)
			}
			if n := count(e, "com.atproto.repo.uploadBlob"); n != 1 {
				t.Errorf("uploadBlob called %d times", n)
			}
			if in := e.Introspect(); len(in.Published) != 1 {
				t.Errorf("published %d", len(in.Published))
			}
		})
	}
}
