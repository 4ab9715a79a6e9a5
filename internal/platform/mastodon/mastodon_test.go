package mastodon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/mastodon"
	"github.com/reelay/reelay/internal/platform/mastodon/mastodonsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const (
	token     = "sbx-mastodon-token"
	accountID = "109876543210"
)

type env struct {
	*providertest.Env
	sim *mastodonsim.Sim
	p   *mastodon.Provider
}

func newEnv(t *testing.T, b sim.Behavior, opts mastodonsim.Options) *env {
	return newEnvRand(t, b, opts, nil, mastodon.Config{})
}

func newEnvRand(t *testing.T, b sim.Behavior, opts mastodonsim.Options, rnd func() float64, cfg mastodon.Config) *env {
	t.Helper()
	e := &env{}
	accounts := sim.StaticAccounts{token: {ID: accountID, Username: "reelay", Behavior: b}}
	e.Env = providertest.NewEnv(t, "mastodon", accounts, func(c sim.Config) http.Handler {
		e.sim = mastodonsim.NewSim(c, opts)
		return e.sim
	}, providertest.Options{Rand: rnd})
	cfg.HTTPClient, cfg.Now = e.Client, e.Clock.Now
	e.p = mastodon.New(cfg)
	return e
}

func (e *env) creds() map[string]string {
	return sandboxtoken.Credentials("mastodon", e.BaseURL, accountID, token)
}

func (e *env) dest(v *providertest.Video, options string) *provider.Destination {
	return e.Destination(accountID, e.creds(), v, options)
}

func (e *env) host() string {
	u, _ := url.Parse(e.BaseURL)
	return u.Host
}

func stateOf(t testing.TB, raw json.RawMessage) mastodon.State {
	t.Helper()
	var st mastodon.State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

func (e *env) wantPublishedOnce(v *providertest.Video, out provider.Outcome, text string) mastodonsim.Status {
	e.T.Helper()
	rec := e.Introspect()
	if len(rec.Published) != 1 {
		e.T.Fatalf("published %d times: %+v", len(rec.Published), rec.Published)
	}
	pub := rec.Published[0]
	if pub.SHA256 != v.SHA256() || pub.Text != text || pub.ID != out.ExternalID || pub.URL != out.URL || out.URL == "" {
		e.T.Fatalf("published %+v; outcome %+v; want video %s, text %q", pub, out, v.SHA256(), text)
	}
	sts := e.sim.Statuses(accountID)
	if len(sts) != 1 {
		e.T.Fatalf("%d statuses on the instance", len(sts))
	}
	return sts[0]
}

func TestPublish(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: -1}, mastodonsim.Options{})
	v := providertest.ShortVideo()
	d := e.dest(v, "")
	outs, err := e.Run(e.p, d, 20)
	if err != nil {
		t.Fatal(err)
	}
	out := outs[len(outs)-1]
	if out.Status != provider.StatusPublished || outs[0].Status != provider.StatusUploading {
		t.Fatalf("outcomes %+v", outs)
	}
	st := e.wantPublishedOnce(v, out, "A caption #reelay")
	if st.Visibility != "public" || st.Sensitive || len(st.MediaIDs) != 1 || st.IdempotencyKey != d.ID {
		t.Errorf("status %+v", st)
	}
	if !strings.HasPrefix(out.URL, e.BaseURL+"/@reelay/") {
		t.Errorf("url %s", out.URL)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != v.Size() {
		t.Fatalf("uploads %+v; want the video byte for byte", rec.Uploads)
	}
	for _, r := range e.Requests("", "/instance") {
		if r.Header.Get("Authorization") != "" {
			t.Error("the token was sent to the public instance endpoint")
		}
	}
	up := e.Requests(http.MethodPost, "/api/v2/media")
	if len(up) != 1 || up[0].Header.Get("Authorization") != "Bearer "+token || up[0].Header.Get("Content-Length") == "" {
		t.Errorf("upload requests %+v", up)
	}
	posts := e.Requests(http.MethodPost, "/api/v1/statuses")
	if len(posts) != 1 || posts[0].Header.Get("Idempotency-Key") != d.ID {
		t.Errorf("status requests %+v", posts)
	}
	fin := stateOf(t, out.State)
	if fin.MediaID != st.MediaIDs[0] || fin.StatusID != st.ID || fin.Uploads != 1 || strings.Contains(string(out.State), token) {
		t.Errorf("final state %s", out.State)
	}
	// A done destination stays done without calling the instance.
	n := len(e.Requests("", ""))
	if again, err := e.p.Step(context.Background(), d); err != nil || again.ExternalID != out.ExternalID {
		t.Errorf("step after done = %+v, %v", again, err)
	}
	if len(e.Requests("", "")) != n {
		t.Error("a done destination called the instance")
	}
}

func TestPublishFields(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, mastodonsim.Options{})
	v := providertest.ShortVideo()
	d := e.dest(v, `{"text":"Custom text https://example.com/a/very/long/link","visibility":"unlisted","spoiler_text":"cw","language":"de","description":"A cat"}`)
	d.BaseURL = "" // a real channel: the instance comes from the credentials
	thumb := mediatest.JPEG(t, 108, 192)
	d.Thumbnail = &provider.Media{Size: int64(len(thumb)), ContentType: "image/jpeg",
		Open: func(context.Context, int64) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(thumb)), nil }}
	outs, err := e.Run(e.p, d, 20)
	if err != nil {
		t.Fatal(err)
	}
	st := e.wantPublishedOnce(v, outs[len(outs)-1], "Custom text https://example.com/a/very/long/link")
	if st.Visibility != "unlisted" || st.SpoilerText != "cw" || !st.Sensitive || st.Language != "de" {
		t.Errorf("status %+v", st)
	}
	md, _ := e.sim.Media(st.MediaIDs[0])
	if md.Description != "A cat" || md.ThumbnailType != "image/jpeg" || md.ThumbnailBytes != int64(len(thumb)) || md.ContentType != "video/mp4" {
		t.Errorf("media %+v", md)
	}
}

func TestProcessingBackoff(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: 60_000}, mastodonsim.Options{})
	v := providertest.ShortVideo()
	start := e.Clock.Now()
	outs, err := e.Run(e.p, e.dest(v, ""), 40)
	if err != nil {
		t.Fatal(err)
	}
	var afters []time.Duration
	for _, o := range outs {
		if o.Status == provider.StatusProcessing && o.After > 0 {
			afters = append(afters, o.After)
		}
	}
	if len(afters) < 4 {
		t.Fatalf("polled %d times: %v", len(afters), afters)
	}
	for i := 1; i < len(afters); i++ {
		if afters[i] < afters[i-1] || afters[i] > 15*time.Second {
			t.Fatalf("poll waits %v: want non-decreasing, at most 15s", afters)
		}
	}
	if afters[len(afters)-1] <= afters[0] {
		t.Errorf("poll waits %v never grew", afters)
	}
	if got := e.Clock.Now().Sub(start); got < time.Minute {
		t.Errorf("published after %s of processing; the instance takes a minute", got)
	}
	if n := len(e.Requests(http.MethodGet, "/api/v1/media/"+e.sim.Statuses(accountID)[0].MediaIDs[0])); n != len(afters) {
		t.Errorf("%d media polls for %d waits", n, len(afters))
	}
	e.wantPublishedOnce(v, outs[len(outs)-1], "A caption #reelay")
}

func TestFaults(t *testing.T) {
	cases := []struct {
		fail      string
		category  string
		transient bool
		text      string
		uploads   int
	}{
		{sim.FailReject, provider.CategoryMediaRejected, false, "Error processing thumbnail for uploaded media", 1},
		{sim.FailUnavailable, provider.CategoryUpstreamUnavailable, true, "Bad Gateway (HTTP 502)", 0},
		{sim.FailAuth, provider.CategoryAuthExpired, false, "The access token is invalid (HTTP 401)", 0},
		{sim.FailRateLimit, provider.CategoryRateLimited, true, "Too many requests (HTTP 429)", 0},
	}
	for _, c := range cases {
		t.Run(c.fail, func(t *testing.T) {
			e := newEnv(t, sim.Behavior{ProcessingMS: 1000, Fail: c.fail}, mastodonsim.Options{})
			_, err := e.Run(e.p, e.dest(providertest.ShortVideo(), ""), 20)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if c.fail == sim.FailRateLimit {
				// X-RateLimit-Reset is the end of the 5-minute window (12:05), a second added.
				if pe.RetryAfter != 5*time.Minute+time.Second {
					t.Errorf("RetryAfter = %s; want 5m1s", pe.RetryAfter)
				}
			}
			rec := e.Introspect()
			if len(rec.Uploads) != c.uploads || len(rec.Published) != 0 {
				t.Errorf("uploads %d, published %d; want %d and 0", len(rec.Uploads), len(rec.Published), c.uploads)
			}
		})
	}
}

func TestFlakyPublishesOnce(t *testing.T) {
	var n atomic.Int64
	alternate := func() float64 { // every other call fails
		if n.Add(1)%2 == 0 {
			return 0.1
		}
		return 0.9
	}
	e := newEnvRand(t, sim.Behavior{ProcessingMS: 2000, Fail: sim.FailFlaky, FailRate: 0.5}, mastodonsim.Options{}, alternate, mastodon.Config{})
	v := providertest.ShortVideo()
	outs, err := e.RunRetrying(e.p, e.dest(v, ""), 60)
	if err != nil {
		t.Fatal(err)
	}
	e.wantPublishedOnce(v, outs[len(outs)-1], "A caption #reelay")
	if u := e.Introspect().Uploads; len(u) != 1 {
		t.Errorf("%d uploads; want 1", len(u))
	}
	failed := 0
	for _, r := range e.Requests("", "") {
		if r.Status == http.StatusBadGateway {
			failed++
		}
	}
	if failed == 0 {
		t.Error("the flaky account never failed")
	}
}

// brokenVideo fails after n bytes, as a stored video whose reader breaks mid-upload.
func brokenVideo(v *providertest.Video, n int64) provider.Media {
	m := v.Media()
	open := m.Open
	m.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := open(ctx, off)
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(io.LimitReader(rc, n), errReader{}), rc}, nil
	}
	return m
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("storage read failed") }

func TestCrashDuringUpload(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: 1000}, mastodonsim.Options{})
	v := providertest.ShortVideo()
	d := e.dest(v, "")
	if _, err := providertest.Step(context.Background(), e.p, d); err != nil {
		t.Fatal(err)
	}
	before := d.State
	if st := stateOf(t, before); st.Phase != "upload" || st.UploadStartedAt.IsZero() {
		t.Fatalf("state before the upload %s: want the upload phase, its start recorded", before)
	}

	// The video's reader breaks mid-upload: the instance gets an incomplete body and keeps nothing.
	good := d.Video
	d.Video = brokenVideo(v, 1<<20)
	_, err := providertest.Step(context.Background(), e.p, d)
	providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, true, "")
	if string(d.State) != string(before) {
		t.Fatal("a failed step changed the state")
	}
	if n := len(e.Introspect().Uploads); n != 0 {
		t.Fatalf("%d uploads recorded from a broken body", n)
	}

	// The upload goes through but the process dies before its state is stored: the next run
	// uploads again (Mastodon cannot list unattached media), leaving one orphan media.
	d.Video = good
	if _, err := e.p.Step(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	outs, err := e.Run(e.p, d, 20)
	if err != nil {
		t.Fatal(err)
	}
	st := e.wantPublishedOnce(v, outs[len(outs)-1], "A caption #reelay")
	media := e.sim.MediaOf(accountID)
	if len(media) != 2 || len(e.Introspect().Uploads) != 2 {
		t.Fatalf("media %+v; want the orphan and the posted one", media)
	}
	if media[0].StatusID != "" || media[1].StatusID != st.ID {
		t.Errorf("media %+v: want the first unattached, the second on status %s", media, st.ID)
	}
}

// runUntil steps d until its state reaches phase.
func (e *env) runUntil(d *provider.Destination, phase string) {
	e.T.Helper()
	for range 30 {
		if d.State != nil && stateOf(e.T, d.State).Phase == phase {
			return
		}
		out, err := providertest.Step(context.Background(), e.p, d)
		if err != nil {
			e.T.Fatal(err)
		}
		e.Clock.Advance(out.After)
	}
	e.T.Fatalf("never reached phase %s", phase)
}

func TestCrashAfterPost(t *testing.T) {
	for _, c := range []struct {
		name  string
		delay time.Duration
		// posts is how many POST /api/v1/statuses the instance gets; lookups whether the
		// account's statuses are searched.
		posts   int
		lookups bool
	}{
		{"within the idempotency window", time.Minute, 2, false}, // the key answers
		{"after the key expired", 3 * time.Hour, 1, true},        // the media is attached: found
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, sim.Behavior{ProcessingMS: 1000}, mastodonsim.Options{})
			v := providertest.ShortVideo()
			d := e.dest(v, "")
			e.runUntil(d, "post")
			// The status is created but the process dies before the outcome is stored.
			first, err := e.p.Step(context.Background(), d)
			if err != nil || first.Status != provider.StatusPublished {
				t.Fatalf("post = %+v, %v", first, err)
			}
			e.Clock.Advance(c.delay)
			again, err := providertest.Step(context.Background(), e.p, d)
			if err != nil {
				t.Fatal(err)
			}
			if again.Status != provider.StatusPublished || again.ExternalID != first.ExternalID || again.URL != first.URL {
				t.Fatalf("resumed post %+v; want the first status %+v", again, first)
			}
			e.wantPublishedOnce(v, again, "A caption #reelay")
			if n := len(e.Introspect().Uploads); n != 1 {
				t.Errorf("%d uploads", n)
			}
			if n := len(e.Requests(http.MethodPost, "/api/v1/statuses")); n != c.posts {
				t.Errorf("%d status posts; want %d", n, c.posts)
			}
			if looked := len(e.Requests(http.MethodGet, "/statuses")) > 0; looked != c.lookups {
				t.Errorf("account statuses searched: %v; want %v", looked, c.lookups)
			}
		})
	}
}

func TestMediaLostBeforePost(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: 1000}, mastodonsim.Options{})
	v := providertest.ShortVideo()
	d := e.dest(v, "")
	e.runUntil(d, "processing")
	// Resumed a day later: the instance has deleted the unattached media.
	e.Clock.Advance(25 * time.Hour)
	outs, err := e.Run(e.p, d, 20)
	if err != nil {
		t.Fatal(err)
	}
	out := outs[len(outs)-1]
	e.wantPublishedOnce(v, out, "A caption #reelay")
	if st := stateOf(t, out.State); st.Uploads != 2 || !strings.Contains(out.Message, "uploaded again") {
		t.Errorf("outcome %+v, state %s", out, out.State)
	}
}

func TestPostBeforeProcessingEnds(t *testing.T) {
	// A post step that finds the media not yet processed goes back to polling.
	e := newEnv(t, sim.Behavior{ProcessingMS: 30_000}, mastodonsim.Options{})
	v := providertest.ShortVideo()
	d := e.dest(v, "")
	e.runUntil(d, "processing")
	st := stateOf(t, d.State)
	st.Phase, st.PostStartedAt = "post", e.Clock.Now()
	d.State, _ = json.Marshal(st)
	out, err := providertest.Step(context.Background(), e.p, d)
	if err != nil || out.Status != provider.StatusProcessing || stateOf(t, out.State).Phase != "processing" || out.After <= 0 {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	outs, err := e.Run(e.p, d, 40)
	if err != nil {
		t.Fatal(err)
	}
	e.wantPublishedOnce(v, outs[len(outs)-1], "A caption #reelay")
}

func TestInstanceLimits(t *testing.T) {
	strict := mastodonsim.Options{MaxCharacters: 100, VideoSizeLimit: 1 << 20, VideoMatrixLimit: 1280 * 720,
		SupportedMimeTypes: []string{"image/jpeg", "video/mp4"}, ImageSizeLimit: 1000}
	long := strings.Repeat("a", 70) + " https://example.com/" + strings.Repeat("x", 300)
	cases := []struct {
		name     string
		video    *providertest.Video
		ctype    string
		options  string
		thumb    int
		category string
		text     string
	}{
		{"text over the instance's limit", providertest.NewVideo(512<<10, 5*time.Second, 720, 1280), "", `{"text":"` + strings.Repeat("é", 101) + `"}`, 0,
			provider.CategoryInvalidOptions, "text is 101 characters as HOST counts them (each link as 23); HOST allows at most 100"},
		{"warning counts", providertest.NewVideo(512<<10, 5*time.Second, 720, 1280), "", `{"text":"` + strings.Repeat("a", 90) + `","spoiler_text":"` + strings.Repeat("b", 11) + `"}`, 0,
			provider.CategoryInvalidOptions, "text with its content warning is 101 characters"},
		{"video over video_size_limit", providertest.NewVideo(2<<20, 5*time.Second, 720, 1280), "", "", 0,
			provider.CategoryMediaRejected, "HOST accepts videos up to 1048576 bytes (video_size_limit)"},
		{"type not supported", providertest.NewVideo(512<<10, 5*time.Second, 720, 1280), "video/webm", "", 0,
			provider.CategoryMediaRejected, "HOST does not accept video/webm media (it accepts video/mp4)"},
		{"frame over video_matrix_limit", providertest.NewVideo(512<<10, 5*time.Second, 1080, 1920), "", "", 0,
			provider.CategoryMediaRejected, "1080x1920 (2073600 pixels); HOST accepts at most 921600 pixels"},
		{"thumbnail over image_size_limit", providertest.NewVideo(512<<10, 5*time.Second, 720, 1280), "", "", 2000,
			provider.CategoryMediaRejected, "HOST accepts images up to 1000 bytes (image_size_limit)"},
		{"bad visibility", providertest.NewVideo(512<<10, 5*time.Second, 720, 1280), "", `{"visibility":"friends"}`, 0,
			provider.CategoryInvalidOptions, `mastodon.visibility "friends"`},
		{"bad language", providertest.NewVideo(512<<10, 5*time.Second, 720, 1280), "", `{"language":"english"}`, 0,
			provider.CategoryInvalidOptions, `mastodon.language "english"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, sim.Behavior{ProcessingMS: 0}, strict)
			d := e.dest(c.video, c.options)
			if c.ctype != "" {
				d.Video.ContentType = c.ctype
			}
			if c.thumb > 0 {
				d.Thumbnail = &provider.Media{Size: int64(c.thumb), ContentType: "image/jpeg",
					Open: func(context.Context, int64) (io.ReadCloser, error) { return nil, errors.New("not to be read") }}
			}
			_, err := e.Run(e.p, d, 10)
			providertest.WantError(t, err, c.category, false, strings.ReplaceAll(c.text, "HOST", e.host()))
			if n := len(e.Requests(http.MethodPost, "")); n != 0 {
				t.Errorf("%d POST requests reached the instance", n)
			}
		})
	}
	t.Run("a long link counts as 23", func(t *testing.T) {
		e := newEnv(t, sim.Behavior{ProcessingMS: 0}, strict)
		v := providertest.NewVideo(512<<10, 5*time.Second, 720, 1280)
		outs, err := e.Run(e.p, e.dest(v, `{"text":"`+long+`"}`), 10)
		if err != nil {
			t.Fatal(err)
		}
		e.wantPublishedOnce(v, outs[len(outs)-1], long)
	})
}

func TestInstanceCacheAndLegacy(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, mastodonsim.Options{LegacyInstance: true})
	for range 2 {
		d := e.dest(providertest.ShortVideo(), "")
		if _, err := providertest.Step(context.Background(), e.p, d); err != nil {
			t.Fatal(err)
		}
	}
	if v2, v1 := len(e.Requests(http.MethodGet, "/api/v2/instance")), len(e.Requests(http.MethodGet, "/api/v1/instance")); v2 != 1 || v1 != 1 {
		t.Errorf("instance fetched v2 %d, v1 %d times; want once each (a 3.x instance, cached)", v2, v1)
	}
	e.Clock.Advance(11 * time.Minute)
	v := providertest.ShortVideo()
	outs, err := e.Run(e.p, e.dest(v, ""), 20)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.Requests(http.MethodGet, "/api/v1/instance")); n != 2 {
		t.Errorf("instance fetched %d times after the TTL; want 2", n)
	}
	e.wantPublishedOnce(v, outs[len(outs)-1], "A caption #reelay")
}

func TestUploadRateLimitRetries(t *testing.T) {
	e := newEnv(t, sim.Behavior{ProcessingMS: 0}, mastodonsim.Options{MediaUploadsPerWindow: 1})
	v1, v2 := providertest.ShortVideo(), providertest.NewVideo(1<<20, 5*time.Second, 720, 1280)
	if _, err := e.Run(e.p, e.dest(v1, ""), 20); err != nil {
		t.Fatal(err)
	}
	d := e.dest(v2, "")
	d.ID = "dst_second"
	_, err := e.Run(e.p, d, 20)
	pe := providertest.WantError(t, err, provider.CategoryRateLimited, true, "Too many requests")
	if pe.RetryAfter < 29*time.Minute || pe.RetryAfter > 31*time.Minute {
		t.Errorf("RetryAfter = %s; want the rest of the 30-minute window", pe.RetryAfter)
	}
	if _, err := e.RunRetrying(e.p, d, 20); err != nil {
		t.Fatal(err)
	}
	if rec := e.Introspect(); len(rec.Uploads) != 2 || len(rec.Published) != 2 {
		t.Errorf("uploads %d, published %d", len(rec.Uploads), len(rec.Published))
	}
}

func TestIdentify(t *testing.T) {
	e := newEnv(t, sim.Behavior{}, mastodonsim.Options{})
	id, err := e.p.Identify(context.Background(), "", e.creds())
	if err != nil {
		t.Fatal(err)
	}
	if id.ExternalID != e.host()+":"+accountID || id.Username != "reelay@"+e.host() || id.Name != "reelay" || id.AvatarURL == "" {
		t.Errorf("identity %+v", id)
	}
	bad := e.creds()
	bad["access_token"] = "revoked"
	_, err = e.p.Identify(context.Background(), e.BaseURL, bad)
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "The access token is invalid")
	_, err = e.p.Identify(context.Background(), "", map[string]string{"instance_url": "ftp://x", "access_token": "t"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "not an http(s) URL")
	_, err = e.p.Identify(context.Background(), "", map[string]string{"instance_url": "mastodon.social"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "no access token")
}

func TestOptions(t *testing.T) {
	e := newEnv(t, sim.Behavior{}, mastodonsim.Options{MaxCharacters: 1000, VideoSizeLimit: 99 << 20})
	opts, err := e.p.Options(context.Background(), e.BaseURL, e.creds())
	if err != nil {
		t.Fatal(err)
	}
	text := opts["text"].(map[string]any)
	inst := opts["instance"].(map[string]any)
	acct := opts["account"].(map[string]any)
	if text["max_length"] != 1000 || text["unit"] != "graphemes" {
		t.Errorf("text %v", text)
	}
	if inst["video_size_limit"] != int64(99<<20) || inst["max_characters"] != 1000 || inst["characters_reserved_per_url"] != 23 ||
		inst["video_matrix_limit"] != int64(2_304_000) || inst["max_media_attachments"] != int64(4) {
		t.Errorf("instance %v", inst)
	}
	if types := inst["supported_video_types"].([]string); strings.Join(types, ",") != "video/mp4,video/ogg,video/quicktime,video/webm,video/x-ms-asf" {
		t.Errorf("video types %v", types)
	}
	if acct["id"] != accountID || acct["username"] != "reelay@"+e.host() {
		t.Errorf("account %v", acct)
	}
	bad := e.creds()
	bad["access_token"] = "revoked"
	_, err = e.p.Options(context.Background(), e.BaseURL, bad)
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "The access token is invalid")
}
