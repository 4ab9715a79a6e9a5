package reddit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/reddit/redditsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const token = "tok-reddit"

func accounts(b sim.Behavior) sim.StaticAccounts {
	return sim.StaticAccounts{token: {ID: "t2_abc123", Username: "reelay_tester", Behavior: b}}
}

// env is a Reddit simulator on a test server and a provider pointed at it.
type env struct {
	*providertest.Env
	sim  *redditsim.Sim
	prov *Provider
}

func newEnv(t *testing.T, b sim.Behavior, opts redditsim.Options, cfg Config) *env {
	t.Helper()
	return newEnvRand(t, b, opts, cfg, nil)
}

func newEnvRand(t *testing.T, b sim.Behavior, opts redditsim.Options, cfg Config, rnd func() float64) *env {
	t.Helper()
	e := &env{}
	e.Env = providertest.NewEnv(t, "reddit", accounts(b), func(c sim.Config) http.Handler {
		e.sim = redditsim.NewSim(c, opts)
		return e.sim
	}, providertest.Options{Rand: rnd})
	cfg.HTTPClient = e.Client
	cfg.Now = e.Clock.Now
	if cfg.ResultWait == 0 {
		cfg.ResultWait = 150 * time.Millisecond
	}
	if cfg.Repeat == (provider.Repeat{}) {
		// Retry-Afters of a second (the simulator's rate_limit) go back to the caller, as
		// longer ones would, instead of being waited out in every test.
		cfg.Repeat = provider.Repeat{Delay: time.Millisecond, MaxWait: 100 * time.Millisecond}
	}
	e.prov = New(cfg)
	t.Cleanup(e.prov.Close)
	return e
}

func (e *env) dest(v *providertest.Video, options string) *provider.Destination {
	return e.Destination("t2_abc123", map[string]string{"access_token": token}, v, options)
}

func stateOf(t *testing.T, raw json.RawMessage) State {
	t.Helper()
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

// TestPublish publishes a video with each option and checks what reached the simulator: the
// video byte for byte (one upload), the post's fields, the outcome's id and URL.
func TestPublish(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options       string
		sub, title          string
		nsfw, spoiler       bool
		flairID, flairText  string
		thumbnail, ownImage bool
	}{
		{name: "defaults", options: `{"subreddit":"reelay_sandbox"}`, sub: "reelay_sandbox", title: "A title", ownImage: true},
		{name: "every option", options: `{"subreddit":"r/Reelay_Flair","title":"Look at this 🎬","nsfw":true,"spoiler":true,"flair_id":"7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b02","flair_text":"My meme"}`,
			sub: "reelay_flair", title: "Look at this 🎬", nsfw: true, spoiler: true, flairID: "7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b02", flairText: "My meme", ownImage: true},
		{name: "thumbnail as poster", options: `{"subreddit":"reelay_shorts","title":"With a poster"}`, sub: "reelay_shorts", title: "With a poster", thumbnail: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: 4000}, redditsim.Options{}, Config{})
			v := providertest.ShortVideo()
			d := e.dest(v, c.options)
			var thumb []byte
			if c.thumbnail {
				var b bytes.Buffer
				if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 72, 128)), nil); err != nil {
					t.Fatal(err)
				}
				thumb = b.Bytes()
				d.Thumbnail = &provider.Media{Size: int64(len(thumb)), ContentType: "image/jpeg",
					Open: func(context.Context, int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(thumb)), nil }}
			}
			outs, err := e.Run(e.prov, d, 30)
			if err != nil {
				t.Fatal(err)
			}
			out := outs[len(outs)-1]
			rec := e.Introspect()
			if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != v.Size() || rec.Uploads[0].Account != "t2_abc123" {
				t.Fatalf("uploads %+v, want the video %s once", rec.Uploads, v.SHA256())
			}
			if len(rec.Published) != 1 || rec.Published[0].ID != out.ExternalID || rec.Published[0].URL != out.URL ||
				rec.Published[0].Text != c.title || rec.Published[0].SHA256 != v.SHA256() {
				t.Fatalf("published %+v, outcome %+v", rec.Published, out)
			}
			if out.Status != provider.StatusPublished || !strings.HasPrefix(out.ExternalID, "t3_") ||
				!strings.HasPrefix(out.URL, "https://www.reddit.com/r/"+c.sub+"/comments/"+strings.TrimPrefix(out.ExternalID, "t3_")+"/") {
				t.Fatalf("outcome %+v", out)
			}
			if (out.Message != "") != c.ownImage {
				t.Errorf("message %q, own poster %v", out.Message, c.ownImage)
			}
			posts := e.sim.Posts("t2_abc123")
			if len(posts) != 1 {
				t.Fatalf("posts %+v", posts)
			}
			p := posts[0]
			if p.Subreddit != c.sub || p.Title != c.title || p.NSFW != c.nsfw || p.Spoiler != c.spoiler ||
				p.FlairID != c.flairID || (c.flairText != "" && p.FlairText != c.flairText) || !p.SendReplies || p.ID != out.ExternalID ||
				!p.Listened {
				t.Errorf("post %+v", p)
			}
			// The video went to the video bucket under the asset id, the poster to the media bucket.
			if !strings.HasPrefix(p.VideoURL, e.BaseURL+"/s3/reddit-uploaded-video/"+p.AssetID) ||
				!strings.HasPrefix(p.PosterURL, e.BaseURL+"/s3/reddit-uploaded-media/rte_images/") {
				t.Errorf("video %s poster %s", p.VideoURL, p.PosterURL)
			}
			// Every API call carried the User-Agent and the bearer token, and the websocket was
			// open when the post was submitted (Listened); the result came by websocket, not by a look
			// at the account's submissions.
			for _, r := range e.Requests("", "") {
				if !strings.Contains(r.Path, "/s3/") && (r.Header.Get("User-Agent") != DefaultUserAgent ||
					!strings.HasPrefix(r.Path, "/sandbox/reddit/ws/") && r.Header.Get("Authorization") != "bearer "+token) {
					t.Errorf("%s %s headers %v", r.Method, r.Path, r.Header)
				}
			}
			if n := len(e.Requests(http.MethodPost, "/api/submit")); n != 1 {
				t.Errorf("%d submits", n)
			}
			if n := len(e.Requests(http.MethodGet, "/submitted")); n != 0 {
				t.Errorf("%d looks at the submissions", n)
			}
			if c.thumbnail {
				if n := len(e.Requests(http.MethodPost, "/s3/reddit-uploaded-media")); n != 1 {
					t.Errorf("%d poster uploads", n)
				}
			}
		})
	}
}

// TestProcessingDelay polls a long processing with a bounded back-off on the moved clock.
func TestProcessingDelay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 120_000}, redditsim.Options{}, Config{})
	start := e.Clock.Now()
	outs, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`), 40)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	for _, o := range outs {
		if o.Status == provider.StatusProcessing && o.After > 0 {
			waits = append(waits, o.After)
		}
	}
	if len(waits) < 3 {
		t.Fatalf("processing waits %v", waits)
	}
	for i, w := range waits {
		if w > 30*time.Second || (i > 0 && w < waits[i-1]) {
			t.Errorf("waits %v are not a bounded back-off", waits)
		}
	}
	if e.Clock.Now().Sub(start) < 2*time.Minute || outs[len(outs)-1].Status != provider.StatusPublished {
		t.Errorf("published after %s: %+v", e.Clock.Now().Sub(start), outs[len(outs)-1])
	}
	if rec := e.Introspect(); len(rec.Published) != 1 || len(rec.Uploads) != 1 {
		t.Errorf("record %+v", rec)
	}
}

// TestFaults maps each misbehaviour of the account to its error.
func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		category  string
		transient bool
		text      string
		retry     time.Duration
	}{
		{sim.FailReject, provider.CategoryMediaRejected, false, "could not process the video", 0},
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true, "HTTP 503", 0},
		{sim.FailAuth, provider.CategoryAuthExpired, false, "HTTP 401", 0},
		{sim.FailRateLimit, provider.CategoryRateLimited, true, "HTTP 429", time.Second},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{Fail: c.fail, ProcessingMS: 1000}, redditsim.Options{}, Config{})
			_, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`), 30)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retry {
				t.Errorf("retry after %s, want %s", pe.RetryAfter, c.retry)
			}
			rec := e.Introspect()
			if len(rec.Published) != 0 {
				t.Errorf("published %+v", rec.Published)
			}
			if c.fail == sim.FailReject && len(rec.Uploads) != 1 {
				t.Errorf("uploads %+v", rec.Uploads)
			}
		})
	}
}

// TestFlaky drives an account that fails every other call to one published post.
func TestFlaky(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(1, 2))
	rnd := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
	e := newEnvRand(t, sim.Behavior{Fail: sim.FailFlaky, FailRate: 0.5, ProcessingMS: 3000}, redditsim.Options{}, Config{}, rnd)
	v := providertest.ShortVideo()
	outs, err := e.RunRetrying(e.prov, e.dest(v, `{"subreddit":"reelay_sandbox"}`), 200)
	if err != nil {
		t.Fatal(err)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 1 ||
		rec.Published[0].URL != outs[len(outs)-1].URL {
		t.Fatalf("record %+v, outcome %+v", rec, outs[len(outs)-1])
	}
	failed := 0
	for _, r := range e.Requests("", "") {
		if r.Status == http.StatusServiceUnavailable {
			failed++
		}
	}
	if failed == 0 {
		for _, r := range e.Requests("", "") {
			t.Log(r.Method, r.Path, r.Status)
		}
		t.Error("no call failed: the test proves nothing")
	}
}

// stepUntil steps d until its State is in phase (and, when asset is true, has a video asset).
func (e *env) stepUntil(t *testing.T, p *Provider, d *provider.Destination, phase string) State {
	t.Helper()
	for range 20 {
		if len(d.State) > 0 && stateOf(t, d.State).Phase == phase {
			return stateOf(t, d.State)
		}
		out, err := providertest.Step(context.Background(), p, d)
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(out.After)
	}
	t.Fatalf("never reached phase %q", phase)
	return State{}
}

// TestResumeUpload covers restarts around the video's upload: the lease lost before the
// upload (leased again), the upload done but its State lost (not uploaded again), and a
// video reader that breaks mid-upload (S3 keeps nothing; uploaded once in the end).
func TestResumeUpload(t *testing.T) {
	t.Parallel()
	t.Run("lease lost before the upload", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
		d := e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`)
		st := e.stepUntil(t, e.prov, d, phaseVideo)
		for st.Video.AssetID == "" {
			if _, err := providertest.Step(context.Background(), e.prov, d); err != nil {
				t.Fatal(err)
			}
			st = stateOf(t, d.State)
		}
		fresh := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, ResultWait: 150 * time.Millisecond})
		t.Cleanup(fresh.Close)
		if _, err := e.Run(fresh, d, 30); err != nil {
			t.Fatal(err)
		}
		posts := e.sim.Posts("t2_abc123")
		if rec := e.Introspect(); len(rec.Uploads) != 1 || len(rec.Published) != 1 || len(posts) != 1 || posts[0].AssetID == st.Video.AssetID {
			t.Fatalf("record %+v posts %+v (first asset %s)", rec, posts, st.Video.AssetID)
		}
		if n := len(e.Requests(http.MethodHead, "/"+st.Video.AssetID)); n != 1 {
			t.Errorf("%d HEADs of the first asset", n)
		}
	})
	t.Run("uploaded but State lost", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
		d := e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`)
		e.stepUntil(t, e.prov, d, phaseVideo)
		if _, err := providertest.Step(context.Background(), e.prov, d); err != nil { // lease
			t.Fatal(err)
		}
		leased := d.State
		if _, err := providertest.Step(context.Background(), e.prov, d); err != nil { // upload
			t.Fatal(err)
		}
		if st := stateOf(t, d.State); !st.Video.Uploaded || st.Phase != phasePoster {
			t.Fatalf("after the upload: %+v", st)
		}
		d.State = leased // the crash: the upload's State was never stored
		if _, err := e.Run(e.prov, d, 30); err != nil {
			t.Fatal(err)
		}
		if rec := e.Introspect(); len(rec.Uploads) != 1 || len(rec.Published) != 1 {
			t.Fatalf("record %+v", rec)
		}
		if n := len(e.Requests(http.MethodPost, "/s3/reddit-uploaded-video")); n != 1 {
			t.Errorf("%d video POSTs", n)
		}
	})
	t.Run("reader breaks mid-upload", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
		v := providertest.ShortVideo()
		d := e.dest(v, `{"subreddit":"reelay_sandbox"}`)
		var opens atomic.Int64
		open := d.Video.Open
		d.Video.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
			rc, err := open(ctx, off)
			if err != nil || opens.Add(1) > 1 {
				return rc, err
			}
			return struct {
				io.Reader
				io.Closer
			}{io.MultiReader(io.LimitReader(rc, v.Size()/2), errReader{}), rc}, nil
		}
		e.stepUntil(t, e.prov, d, phaseVideo)
		if _, err := providertest.Step(context.Background(), e.prov, d); err != nil { // lease
			t.Fatal(err)
		}
		// The step asks S3 (HEAD: the cut POST stored nothing) and sends the file again, with
		// the same lease.
		if _, err := providertest.Step(context.Background(), e.prov, d); err != nil {
			t.Fatal(err)
		}
		st := stateOf(t, d.State)
		if !st.Video.Uploaded || len(e.Requests(http.MethodHead, "/"+st.Video.AssetID)) != 1 {
			t.Fatalf("after the upload step: %+v, requests %+v", st, e.Requests("", ""))
		}
		if rec := e.Introspect(); len(rec.Uploads) != 1 {
			t.Fatalf("uploads %+v; want the whole one alone", rec.Uploads)
		}
		if _, err := e.RunRetrying(e.prov, d, 30); err != nil {
			t.Fatal(err)
		}
		if rec := e.Introspect(); len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || len(rec.Published) != 1 {
			t.Fatalf("record %+v", rec)
		}
		if n := len(e.Requests(http.MethodPost, "/api/media/asset.json")); n != 2 { // the video's lease was reused
			t.Errorf("%d leases", n)
		}
	})
	t.Run("lease expired before the upload", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
		d := e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`)
		e.stepUntil(t, e.prov, d, phaseVideo)
		if _, err := providertest.Step(context.Background(), e.prov, d); err != nil { // lease
			t.Fatal(err)
		}
		e.Clock.Advance(2 * time.Minute) // the policy lasts a minute
		if _, err := e.Run(e.prov, d, 30); err != nil {
			t.Fatal(err)
		}
		if rec := e.Introspect(); len(rec.Uploads) != 1 || len(rec.Published) != 1 {
			t.Fatalf("record %+v", rec)
		}
		if n := len(e.Requests(http.MethodPost, "/api/media/asset.json")); n != 3 {
			t.Errorf("%d leases, want the video's twice and the poster's", n)
		}
	})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk gone") }

// TestResumeAfterSubmit restarts after the submit: the new process never submits again; it
// finds the post in the account's submissions (the websocket's message went to a connection
// that is gone), or hears the result on a new connection when processing is still going on.
func TestResumeAfterSubmit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		advance time.Duration
		looked  bool
	}{
		{"processing over before the restart", time.Minute, true},
		{"processing still going on", 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Behavior{ProcessingMS: 30_000}, redditsim.Options{}, Config{})
			d := e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_shorts"}`)
			e.stepUntil(t, e.prov, d, phaseProcessing)
			e.prov.Close() // the process dies with its websocket
			e.Clock.Advance(c.advance)
			fresh := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, ResultWait: 150 * time.Millisecond})
			t.Cleanup(fresh.Close)
			outs, err := e.Run(fresh, d, 40)
			if err != nil {
				t.Fatal(err)
			}
			out := outs[len(outs)-1]
			rec := e.Introspect()
			if n := len(e.Requests(http.MethodPost, "/api/submit")); n != 1 {
				t.Errorf("%d submits", n)
			}
			if len(rec.Published) != 1 || rec.Published[0].URL != out.URL || rec.Published[0].ID != out.ExternalID || len(rec.Uploads) != 1 {
				t.Fatalf("record %+v, outcome %+v", rec, out)
			}
			if n := len(e.Requests(http.MethodGet, "/user/reelay_tester/submitted")); (n > 0) != c.looked {
				t.Errorf("%d looks at the submissions", n)
			}
			if st := stateOf(t, out.State); st.Reconnects == 0 {
				t.Errorf("no reconnect: %+v", st)
			}
		})
	}
}

// dropSubmitAnswer loses the answer of /api/submit once, after Reddit has it.
type dropSubmitAnswer struct {
	rt      http.RoundTripper
	dropped atomic.Bool
}

func (d *dropSubmitAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.rt.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/api/submit") && d.dropped.CompareAndSwap(false, true) {
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

// TestSubmitAnswerLost: the submit reached Reddit but its answer did not come back. The post
// is not submitted again; the websocket opened before tells the result.
func TestSubmitAnswerLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 5000}, redditsim.Options{}, Config{})
	hc := *e.Client
	hc.Transport = &dropSubmitAnswer{rt: e.Client.Transport}
	p := New(Config{HTTPClient: &hc, Now: e.Clock.Now, ResultWait: 150 * time.Millisecond})
	t.Cleanup(p.Close)
	outs, err := e.Run(p, e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`), 30)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Requests(http.MethodPost, "/api/submit")); n != 1 {
		t.Errorf("%d submits", n)
	}
	if rec := e.Introspect(); len(rec.Published) != 1 || rec.Published[0].URL != outs[len(outs)-1].URL {
		t.Fatalf("record %+v", rec)
	}
	if st := stateOf(t, outs[len(outs)-1].State); !st.Uncertain {
		t.Errorf("state %+v", st)
	}
}

// TestResultTimeout gives up, without submitting again, when no result comes and no post
// appears.
func TestResultTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: int((3 * time.Hour).Milliseconds())}, redditsim.Options{}, Config{ResultTimeout: 10 * time.Minute})
	_, err := e.Run(e.prov, e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`), 60)
	providertest.WantError(t, err, provider.CategoryInternal, false, "it is not submitted again")
	if n := len(e.Requests(http.MethodPost, "/api/submit")); n != 1 {
		t.Errorf("%d submits", n)
	}
}

// TestBadOptions refuses, before anything is uploaded, what Reddit would refuse.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, options, ctype string
		category             string
		text                 string
	}{
		{"no subreddit", `{}`, "", provider.CategoryInvalidOptions, "reddit.subreddit is required"},
		{"unknown subreddit", `{"subreddit":"nope_nope"}`, "", provider.CategoryInvalidOptions, "r/nope_nope does not exist"},
		{"no videos", `{"subreddit":"reelay_textonly"}`, "", provider.CategoryInvalidOptions, "r/reelay_textonly does not allow video"},
		{"flair required", `{"subreddit":"reelay_flair"}`, "", provider.CategoryInvalidOptions, "r/reelay_flair requires post flair: set reddit.flair_id to one of 7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b01 (Original content)"},
		{"unknown flair", `{"subreddit":"reelay_flair","flair_id":"x"}`, "", provider.CategoryInvalidOptions, "reddit.flair_id x is not a flair template of r/reelay_flair"},
		{"mod-only flair", `{"subreddit":"reelay_flair","flair_id":"7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b03"}`, "", provider.CategoryInvalidOptions, "is not a flair template of r/reelay_flair that posters may use"},
		{"flair text not editable", `{"subreddit":"reelay_flair","flair_id":"7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b01","flair_text":"x"}`, "", provider.CategoryInvalidOptions, "does not take custom text"},
		{"title too long", `{"subreddit":"reelay_sandbox","title":"` + strings.Repeat("é", 301) + `"}`, "", provider.CategoryInvalidOptions, "at most 300"},
		{"short title for the community", `{"subreddit":"reelay_strict","title":"Hi"}`, "", provider.CategoryInvalidOptions, "r/reelay_strict takes titles of at least 10"},
		{"webm", `{"subreddit":"reelay_sandbox"}`, "video/webm", provider.CategoryMediaRejected, "MP4 or MOV"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			subs := append(redditsim.DefaultSubreddits(), redditsim.Subreddit{Name: "reelay_strict", AllowVideos: true, TitleMinLength: 10})
			e := newEnv(t, sim.Behavior{}, redditsim.Options{Subreddits: subs, OnlyListed: true}, Config{})
			d := e.dest(providertest.ShortVideo(), c.options)
			if c.ctype != "" {
				d.Video.ContentType = c.ctype
			}
			_, err := e.Run(e.prov, d, 10)
			providertest.WantError(t, err, c.category, false, c.text)
			if n := len(e.Requests(http.MethodPost, "/api/media/asset.json")); n != 0 {
				t.Errorf("%d leases before refusing", n)
			}
		})
	}
}

// TestSubmitRefusals classifies what /api/submit answers in json.errors.
func TestSubmitRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		errs     submitErrors
		category string
		retry    time.Duration
	}{
		{submitErrors{{"SUBREDDIT_NOEXIST", "that community doesn't exist", "sr"}}, provider.CategoryInvalidOptions, 0},
		{submitErrors{{"NO_VIDEOS", "This community doesn't allow videos", "sr"}}, provider.CategoryInvalidOptions, 0},
		{submitErrors{{"SUBMIT_VALIDATION_FLAIR_REQUIRED", "Your post must contain post flair.", "flair"}}, provider.CategoryInvalidOptions, 0},
		{submitErrors{{"RATELIMIT", "you are doing that too much. try again in 7 minutes.", "ratelimit"}}, provider.CategoryRateLimited, 7 * time.Minute},
		{submitErrors{{"USER_REQUIRED", "Please log in to do that.", ""}}, provider.CategoryAuthExpired, 0},
		{submitErrors{{"BAD_URL", "you should check that url", "url"}}, provider.CategoryInternal, 0},
	} {
		pe := classifySubmit(c.errs, "pics")
		if pe.Category != c.category || pe.RetryAfter != c.retry || !strings.Contains(pe.Message, "r/pics") || !strings.Contains(pe.Message, c.errs[0].Code) {
			t.Errorf("%v: %+v", c.errs, pe)
		}
	}
}

// TestSubmitRefusedBySubreddit: the community stops taking video between the checks and the
// submit; Reddit's NO_VIDEOS is an invalid option naming it.
func TestSubmitRefusedBySubreddit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, redditsim.Options{}, Config{})
	d := e.dest(providertest.ShortVideo(), `{"subreddit":"reelay_sandbox"}`)
	e.stepUntil(t, e.prov, d, phaseSubmit)
	st := stateOf(t, d.State)
	st.Subreddit = "reelay_textonly"
	d.State, _ = json.Marshal(st)
	_, err := providertest.Step(context.Background(), e.prov, d)
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "Reddit refused the post to r/reelay_textonly: NO_VIDEOS")
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{}, redditsim.Options{}, Config{})
	id, err := e.prov.Identify(context.Background(), e.BaseURL, map[string]string{"access_token": token})
	if err != nil {
		t.Fatal(err)
	}
	if id.ExternalID != "t2_abc123" || id.Username != "reelay_tester" || id.Name != "reelay_tester" || !strings.HasPrefix(id.AvatarURL, "https://") {
		t.Errorf("identity %+v", id)
	}
	_, err = e.prov.Identify(context.Background(), e.BaseURL, map[string]string{"access_token": "wrong"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "HTTP 401")
	_, err = e.prov.Identify(context.Background(), e.BaseURL, map[string]string{})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "no access token")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	subs := redditsim.DefaultSubreddits()
	for i := range 140 {
		subs = append(subs, redditsim.Subreddit{Name: "extra_" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + string(rune('a'+i/26)), AllowVideos: i%2 == 0})
	}
	e := newEnv(t, sim.Behavior{}, redditsim.Options{Subreddits: subs}, Config{})
	opts, err := e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": token})
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := opts["subreddit"].(map[string]any)
	choices, _ := sub["choices"].([]any)
	if len(choices) != len(subs) || sub["required"] != true {
		t.Fatalf("subreddit option %v choices, want %d", len(choices), len(subs))
	}
	first, _ := choices[0].(map[string]any)
	if first["id"] != "reelay_sandbox" || first["allow_videos"] != true {
		t.Errorf("first choice %v", first)
	}
	if _, ok := opts["nsfw"]; !ok {
		t.Errorf("static options missing: %v", opts)
	}
	if n := len(e.Requests(http.MethodGet, "/subreddits/mine/subscriber")); n != 2 {
		t.Errorf("%d pages", n)
	}
	_, err = e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": "wrong"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "HTTP 401")
}

func TestSubredditOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Behavior{}, redditsim.Options{OnlyListed: true}, Config{})
	creds := map[string]string{"access_token": token}
	opts, err := e.prov.SubredditOptions(context.Background(), e.BaseURL, creds, "r/REELAY_FLAIR")
	if err != nil {
		t.Fatal(err)
	}
	flair := opts["flair_id"].(map[string]any)
	choices := flair["choices"].([]any)
	if flair["required"] != true || len(choices) != 2 || choices[1].(map[string]any)["text_editable"] != true {
		t.Errorf("flair %v", flair)
	}
	if s := opts["subreddit"].(map[string]any); s["name"] != "reelay_flair" || s["allow_videos"] != true {
		t.Errorf("subreddit %v", s)
	}
	if r := opts["post_requirements"].(map[string]any); r["is_flair_required"] != true {
		t.Errorf("requirements %v", r)
	}

	opts, err = e.prov.SubredditOptions(context.Background(), e.BaseURL, creds, "reelay_textonly")
	if err != nil {
		t.Fatal(err)
	}
	if s := opts["subreddit"].(map[string]any); s["allow_videos"] != false {
		t.Errorf("subreddit %v", s)
	}
	if f := opts["flair_id"].(map[string]any); len(f["choices"].([]any)) != 0 || f["required"] != false {
		t.Errorf("flair %v", f)
	}
	_, err = e.prov.SubredditOptions(context.Background(), e.BaseURL, creds, "nope_nope")
	providertest.WantError(t, err, provider.CategoryInvalidOptions, false, "r/nope_nope does not exist")
}

func TestDefaultPoster(t *testing.T) {
	t.Parallel()
	img, err := png.Decode(bytes.NewReader(defaultPosterPNG()))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx()*16 != b.Dy()*9 {
		t.Errorf("poster %v is not 9:16", b)
	}
}
