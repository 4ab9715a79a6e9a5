package pinterest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

const acct = "pin_acct1"

func accounts() sim.StaticAccounts {
	return sim.StaticAccounts{
		"tok":             {ID: acct, Username: "reelaydemo", Behavior: sim.Behavior{ProcessingMS: -1}},
		"tok-slow":        {ID: acct, Username: "reelaydemo", Behavior: sim.Behavior{ProcessingMS: 40_000}},
		"tok-reject":      {ID: acct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailReject}},
		"tok-unavailable": {ID: acct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailUnavailable}},
		"tok-auth":        {ID: acct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailAuth}},
		"tok-ratelimit":   {ID: acct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailRateLimit}},
		"tok-flaky":       {ID: acct, Username: "reelaydemo", Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailFlaky, FailRate: 0.5}},
		"tok-trial":       {ID: acct, Username: "reelaydemo", Behavior: sim.Behavior{ProcessingMS: -1, AppAccess: sim.AppAccessTrial}},
	}
}

type env struct {
	*providertest.Env
	sim  *pinterestsim.Sim
	prov *pinterest.Provider
}

func newEnv(t *testing.T, opts pinterestsim.Options, o providertest.Options) *env {
	t.Helper()
	e := &env{}
	e.Env = providertest.NewEnv(t, "pinterest", accounts(), func(c sim.Config) http.Handler {
		e.sim = pinterestsim.NewSim(c, opts)
		return e.sim
	}, o)
	e.prov = e.newProvider()
	return e
}

// newProvider is a provider as a restarted process has it: nothing in memory.
func (e *env) newProvider() *pinterest.Provider {
	return pinterest.New(pinterest.Config{HTTPClient: e.Client, Now: e.Clock.Now, Repeat: provider.Repeat{Delay: time.Millisecond}})
}

func board() string { return pinterestsim.DefaultBoards(acct)[0].ID }

func (e *env) dest(token string, v *providertest.Video, options string) *provider.Destination {
	if options == "" {
		options = fmt.Sprintf(`{"board_id":%q,"title":"Pin title","description":"Pin description #reelay","link":"https://example.com/recipe"}`, board())
	}
	return e.Destination(acct, map[string]string{"access_token": token}, v, options)
}

func stateOf(t *testing.T, raw json.RawMessage) pinterest.State {
	t.Helper()
	var st pinterest.State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}

func step(t *testing.T, p provider.Provider, d *provider.Destination) (provider.Outcome, error) {
	t.Helper()
	return providertest.Step(context.Background(), p, d)
}

func TestPublish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	v := providertest.ShortVideo()
	d := e.dest("tok", v, "")

	// The first step checks the board and registers the media: media_id is stored before a
	// byte is sent, and no credential of the upload form is.
	out, err := step(t, e.prov, d)
	if err != nil {
		t.Fatal(err)
	}
	st := stateOf(t, out.State)
	if out.Status != provider.StatusUploading || st.MediaID == "" || st.Phase != "uploading" {
		t.Fatalf("after register: %s %+v", out.Status, st)
	}
	for _, secret := range []string{"x-amz", "policy", "signature", "security", "upload_url", "tok"} {
		if strings.Contains(strings.ToLower(string(out.State)), secret) {
			t.Errorf("state %s holds %q", out.State, secret)
		}
	}
	if n := len(e.Requests(http.MethodPost, "/_upload/")); n != 0 {
		t.Fatalf("%d uploads in the register step", n)
	}

	outs, err := e.Run(e.prov, d, 30)
	if err != nil {
		t.Fatal(err)
	}
	last := outs[len(outs)-1]
	pins := e.sim.Pins(acct)
	if len(pins) != 1 {
		t.Fatalf("pins %+v", pins)
	}
	pin := pins[0]
	if last.Status != provider.StatusPublished || last.ExternalID != pin.ID || last.URL != "https://www.pinterest.com/pin/"+pin.ID+"/" {
		t.Errorf("outcome %+v, pin %s", last, pin.ID)
	}
	if pin.BoardID != board() || pin.Title != "Pin title" || pin.Description != "Pin description #reelay" ||
		pin.Link != "https://example.com/recipe" || pin.MediaID != st.MediaID || pin.CoverKeyFrame == nil || *pin.CoverKeyFrame != 1 ||
		pin.CoverImageURL != "" {
		t.Errorf("pin %+v", pin)
	}
	got := e.Introspect()
	if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || got.Uploads[0].Bytes != v.Size() || got.Uploads[0].Account != acct {
		t.Errorf("uploads %+v; want one of %d bytes, sha256 %s", got.Uploads, v.Size(), v.SHA256())
	}
	if len(got.Published) != 1 || got.Published[0].URL != last.URL || got.Published[0].SHA256 != v.SHA256() ||
		got.Published[0].Text != "Pin title\n\nPin description #reelay" {
		t.Errorf("published %+v", got.Published)
	}
	for _, r := range e.Requests(http.MethodPost, "/_upload/") {
		if r.Header.Get("Authorization") != "" {
			t.Error("the access token went to the upload URL")
		}
	}
	for path, want := range map[string]int{"/v5/media": 1, "/_upload/": 1, "/v5/pins": 1} {
		if n := len(e.Requests(http.MethodPost, path)); n != want {
			t.Errorf("POST %s: %d requests, want %d", path, n, want)
		}
	}
	// A done destination answers its outcome again without calling Pinterest.
	before := len(e.Requests("", ""))
	again, err := step(t, e.prov, d)
	if err != nil || again.ExternalID != pin.ID || len(e.Requests("", "")) != before {
		t.Errorf("step after done: %+v, %v", again, err)
	}
}

// TestLargeVideo streams a video of tens of megabytes through the S3 form: the Content-Length
// is exact and the bytes arrive whole.
func TestLargeVideo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("large upload")
	}
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	v := providertest.NewVideo(48<<20+13, 30*time.Second, 1080, 1920)
	if _, err := e.Run(e.prov, e.dest("tok", v, ""), 30); err != nil {
		t.Fatal(err)
	}
	if got := e.Introspect(); len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || got.Uploads[0].Bytes != v.Size() {
		t.Fatalf("uploads %+v", got.Uploads)
	}
	// The simulator refuses bodies without a Content-Length (411), as S3 does.
	if r := e.Requests(http.MethodPost, "/_upload/"); len(r) != 1 || r[0].Status != http.StatusNoContent {
		t.Errorf("upload requests %+v", r)
	}
}

func TestTextsDefaultToTheCommonOnes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	d := e.dest("tok", providertest.ShortVideo(), fmt.Sprintf(`{"board_id":%q}`, board()))
	if _, err := e.Run(e.prov, d, 30); err != nil {
		t.Fatal(err)
	}
	pins := e.sim.Pins(acct)
	if len(pins) != 1 || pins[0].Title != "A title" || pins[0].Description != "A caption #reelay" || pins[0].Link != "" {
		t.Fatalf("pins %+v", pins)
	}
}

// TestProcessingDelay: processing is polled with back-off, bounded, while the clock moves.
func TestProcessingDelay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	start := e.Clock.Now()
	outs, err := e.Run(e.prov, e.dest("tok-slow", providertest.ShortVideo(), ""), 60)
	if err != nil {
		t.Fatal(err)
	}
	if waited := e.Clock.Now().Sub(start); waited < 40*time.Second {
		t.Errorf("published after %s of processing time, want at least 40s", waited)
	}
	var waits []time.Duration
	for _, o := range outs {
		if o.Status == provider.StatusProcessing && o.After > 0 {
			waits = append(waits, o.After)
		}
	}
	if len(waits) < 4 {
		t.Fatalf("processing waits %v", waits)
	}
	for i := 1; i < len(waits); i++ {
		if waits[i] < waits[i-1] || waits[i] > 30*time.Second {
			t.Errorf("waits %v do not back off within 30s", waits)
		}
	}
	if waits[len(waits)-1] <= waits[0] {
		t.Errorf("waits %v never grow", waits)
	}
	if n := len(e.Introspect().Published); n != 1 {
		t.Errorf("%d published", n)
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		token, category, text string
		transient             bool
		retryAfter            time.Duration
	}{
		{"tok-reject", provider.CategoryMediaRejected, "could not process the video", false, 0},
		{"tok-unavailable", provider.CategoryUpstreamUnavailable, "HTTP 503", true, 0},
		{"tok-auth", provider.CategoryAuthExpired, "Authentication failed.", false, 0},
		{"tok-ratelimit", provider.CategoryRateLimited, "exceeded a rate limit", true, time.Second},
		{"nobody", provider.CategoryAuthExpired, "Authentication failed.", false, 0},
		// Not auth_expired: reconnecting cannot give reelay's app Standard access.
		{"tok-trial", provider.CategoryAppAccess, "REELAY_PINTEREST_API_URL=https://api-sandbox.pinterest.com", false, 0},
	} {
		t.Run(c.token, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
			_, err := e.Run(e.prov, e.dest(c.token, providertest.ShortVideo(), ""), 30)
			pe := providertest.WantError(t, err, c.category, c.transient, c.text)
			if pe.RetryAfter != c.retryAfter {
				t.Errorf("RetryAfter %s, want %s", pe.RetryAfter, c.retryAfter)
			}
			if n := len(e.Introspect().Published); n != 0 {
				t.Errorf("%d published", n)
			}
		})
	}
}

// TestFlakyPublishesOnce drives a platform that fails every other call to the end.
func TestFlakyPublishesOnce(t *testing.T) {
	t.Parallel()
	// Seeded dice: half the calls fail (a strict alternation would starve steps that make
	// two calls).
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(7, 11))
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{Rand: func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return rnd.Float64()
	}})
	v := providertest.ShortVideo()
	outs, err := e.RunRetrying(e.prov, e.dest("tok-flaky", v, ""), 100)
	if err != nil {
		t.Fatal(err)
	}
	got := e.Introspect()
	if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || len(got.Published) != 1 {
		t.Fatalf("record %+v", got)
	}
	if last := outs[len(outs)-1]; last.ExternalID != got.Published[0].ID {
		t.Errorf("outcome %+v, published %+v", last, got.Published)
	}
	if failed := 0; true {
		for _, r := range e.Requests("", "") {
			if r.Status == http.StatusServiceUnavailable {
				failed++
			}
		}
		if failed == 0 {
			t.Error("the flaky account never failed a call")
		}
	}
}

// failingVideo fails its first read after failAfter bytes.
func failingVideo(v *providertest.Video, failAfter int64) provider.Media {
	m := v.Media()
	open := m.Open
	var failed atomic.Bool
	m.Open = func(ctx context.Context, off int64) (io.ReadCloser, error) {
		rc, err := open(ctx, off)
		if err != nil || failed.Swap(true) {
			return rc, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.MultiReader(io.LimitReader(rc, failAfter), errReader{}), rc}, nil
	}
	return m
}

// lossyTransport loses the answer of the first request to a path that ends with path: the
// request reaches the server, the client sees a broken connection.
type lossyTransport struct {
	next http.RoundTripper
	path string
	lost atomic.Bool
}

func (l *lossyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err == nil && strings.HasSuffix(req.URL.Path, l.path) && !l.lost.Swap(true) {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset by peer")
	}
	return resp, err
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk read failed") }

func TestCrashResume(t *testing.T) {
	t.Parallel()
	type run struct {
		e *env
		v *providertest.Video
		d *provider.Destination
	}
	setup := func(t *testing.T) run {
		e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
		v := providertest.ShortVideo()
		return run{e, v, e.dest("tok", v, "")}
	}
	finish := func(t *testing.T, r run, p provider.Provider, uploads, registrations, pins int) {
		t.Helper()
		if _, err := r.e.Run(p, r.d, 30); err != nil {
			t.Fatal(err)
		}
		got := r.e.Introspect()
		if len(got.Uploads) != uploads || got.Uploads[0].SHA256 != r.v.SHA256() || len(got.Published) != pins || len(r.e.sim.Pins(acct)) != pins {
			t.Fatalf("record %+v; want %d upload(s) of the video and %d Pin(s)", got, uploads, pins)
		}
		if n := len(r.e.Requests(http.MethodPost, "/v5/media")); n != registrations {
			t.Errorf("%d registrations, want %d", n, registrations)
		}
		if n := len(r.e.Requests(http.MethodPost, "/v5/pins")); n != pins {
			t.Errorf("%d Pin creations", n)
		}
	}

	t.Run("restart after registering", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		if _, err := step(t, r.e.prov, r.d); err != nil {
			t.Fatal(err)
		}
		// A new process has no upload parameters: it asks the media (registered) and
		// registers again; the first media never gets a file.
		finish(t, r, r.e.newProvider(), 1, 2, 1)
	})

	t.Run("crash after the upload, before its state was stored", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		if _, err := step(t, r.e.prov, r.d); err != nil {
			t.Fatal(err)
		}
		registered := r.d.State
		if out, err := step(t, r.e.prov, r.d); err != nil || out.Status != provider.StatusProcessing {
			t.Fatalf("upload step: %+v %v", out, err)
		}
		r.d.State = registered // the upload's State was lost
		for _, p := range []*pinterest.Provider{r.e.prov, r.e.newProvider()} {
			out, err := step(t, p, r.d)
			if err != nil || out.Status != provider.StatusProcessing {
				t.Fatalf("resumed upload step: %+v %v", out, err)
			}
			r.d.State = registered
		}
		finish(t, r, r.e.prov, 1, 1, 1)
		if n := len(r.e.Requests(http.MethodPost, "/_upload/")); n != 1 {
			t.Errorf("%d upload requests", n)
		}
	})

	t.Run("video read fails mid-upload", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		r.d.Video = failingVideo(r.v, 1<<20)
		if _, err := step(t, r.e.prov, r.d); err != nil {
			t.Fatal(err)
		}
		// The upload step asks the media (registered: the cut body was not stored) and sends
		// the file again with the same upload parameters.
		if out, err := step(t, r.e.prov, r.d); err != nil || out.Status != provider.StatusProcessing {
			t.Fatalf("upload step: %+v %v", out, err)
		}
		finish(t, r, r.e.prov, 1, 1, 1)
		if n := len(r.e.Requests(http.MethodPost, "/_upload/")); n != 2 {
			t.Errorf("%d upload requests, want 2", n)
		}
	})

	t.Run("upload parameters expired", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		if _, err := step(t, r.e.prov, r.d); err != nil {
			t.Fatal(err)
		}
		r.e.Clock.Advance(2 * time.Hour) // the S3 policy lasts an hour
		// S3 refuses the form (403 Policy expired); the provider asks the media
		// (registered) and registers again.
		finish(t, r, r.e.prov, 1, 2, 1)
		if n := len(r.e.Requests(http.MethodPost, "/_upload/")); n != 2 {
			t.Errorf("%d upload requests, want 2", n)
		}
	})

	t.Run("the upload's answer is lost", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		lossy := &lossyTransport{next: r.e.Client.Transport, path: "/_upload/"}
		p := pinterest.New(pinterest.Config{HTTPClient: &http.Client{Transport: lossy}, Now: r.e.Clock.Now, Repeat: provider.Repeat{Tries: 1}})
		if _, err := step(t, p, r.d); err != nil {
			t.Fatal(err)
		}
		_, err := step(t, p, r.d)
		providertest.WantError(t, err, provider.CategoryUpstreamUnavailable, true, "connection reset")
		// Pinterest has the file: the next step asks and goes on without sending it again.
		finish(t, r, p, 1, 1, 1)
		if n := len(r.e.Requests(http.MethodPost, "/_upload/")); n != 1 {
			t.Errorf("%d upload requests, want 1", n)
		}
	})

	t.Run("the upload's answer is lost, asked within the step", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		lossy := &lossyTransport{next: r.e.Client.Transport, path: "/_upload/"}
		p := pinterest.New(pinterest.Config{HTTPClient: &http.Client{Transport: lossy}, Now: r.e.Clock.Now, Repeat: provider.Repeat{Delay: time.Millisecond}})
		if _, err := step(t, p, r.d); err != nil {
			t.Fatal(err)
		}
		// Before the file is sent again, the media is asked: Pinterest has it.
		if out, err := step(t, p, r.d); err != nil || out.Status != provider.StatusProcessing {
			t.Fatalf("upload step: %+v %v", out, err)
		}
		finish(t, r, p, 1, 1, 1)
		if n := len(r.e.Requests(http.MethodPost, "/_upload/")); n != 1 {
			t.Errorf("%d upload requests, want 1", n)
		}
	})

	t.Run("crash around the Pin creation", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		var creating json.RawMessage
		for range 30 {
			out, err := step(t, r.e.prov, r.d)
			if err != nil {
				t.Fatal(err)
			}
			if st := stateOf(t, out.State); st.Phase == "creating" && creating == nil {
				creating = out.State
			}
			if out.Done() {
				break
			}
			r.e.Clock.Advance(out.After)
		}
		first := r.e.sim.Pins(acct)
		if creating == nil || len(first) != 1 {
			t.Fatalf("no creating state (%s) or pins %+v", creating, first)
		}
		// The create's answer was lost: the State before it comes back, to this process and
		// to a new one.
		for _, p := range []*pinterest.Provider{r.e.prov, r.e.newProvider()} {
			r.d.State = creating
			out, err := step(t, p, r.d)
			if err != nil || !out.Done() || out.ExternalID != first[0].ID {
				t.Fatalf("resumed create: %+v %v; want Pin %s", out, err, first[0].ID)
			}
			if !stateOf(t, out.State).Found {
				t.Error("the Pin was not found on the board")
			}
		}
		if n := len(r.e.Requests(http.MethodPost, "/v5/pins")); n != 1 {
			t.Errorf("%d Pin creations", n)
		}
		if got := r.e.Introspect(); len(got.Published) != 1 || len(got.Uploads) != 1 {
			t.Errorf("record %+v", got)
		}
	})

	t.Run("an older Pin with the same texts is not taken for this one", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		earlier := r.e.dest("tok", r.v, "")
		if _, err := r.e.Run(r.e.prov, earlier, 30); err != nil {
			t.Fatal(err)
		}
		r.e.Clock.Advance(2 * time.Hour)
		finish(t, r, r.e.prov, 2, 2, 2)
	})

	t.Run("another Pin with other texts is not taken for this one", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		other := r.e.dest("tok", r.v, fmt.Sprintf(`{"board_id":%q,"title":"Another"}`, board()))
		if _, err := r.e.Run(r.e.prov, other, 30); err != nil {
			t.Fatal(err)
		}
		finish(t, r, r.e.prov, 2, 2, 2)
		if n := len(r.e.sim.Pins(acct)); n != 2 {
			t.Errorf("%d pins", n)
		}
	})
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("é", n) }
	for name, c := range map[string]struct {
		options, text string
	}{
		"unknown board":   {`{"board_id":"123456789"}`, "board 123456789 is not one of this account's boards"},
		"no board":        {`{"title":"x"}`, "board_id is required"},
		"board not a num": {`{"board_id":"my-board"}`, "not a Pinterest board id"},
		"long title":      {fmt.Sprintf(`{"board_id":%q,"title":%q}`, board(), long(101)), "title is 101 characters"},
		"long desc":       {fmt.Sprintf(`{"board_id":%q,"description":%q}`, board(), long(801)), "description is 801 characters"},
		"bad link":        {fmt.Sprintf(`{"board_id":%q,"link":"ftp://x"}`, board()), "not an http or https URL"},
		"another's board": {fmt.Sprintf(`{"board_id":%q}`, pinterestsim.DefaultBoards("someone_else")[0].ID), "Board not found."},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
			_, err := e.Run(e.prov, e.dest("tok", providertest.ShortVideo(), c.options), 30)
			providertest.WantError(t, err, provider.CategoryInvalidOptions, false, c.text)
			if n := len(e.Requests(http.MethodPost, "")); n != 0 {
				t.Errorf("%d POSTs for a refused destination", n)
			}
		})
	}
}

func TestVideoRefusedBeforeUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	short := providertest.NewVideo(1<<20, 3*time.Second, 1080, 1920)
	_, err := e.Run(e.prov, e.dest("tok", short, ""), 10)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "Pinterest takes videos of 4s to 15m0s")
	webm := e.dest("tok", providertest.ShortVideo(), "")
	webm.Video.ContentType = "video/webm"
	_, err = e.Run(e.prov, webm, 10)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "MP4 or MOV")
	if n := len(e.Requests(http.MethodPost, "")); n != 0 {
		t.Errorf("%d POSTs", n)
	}
}

// TestSimulatorRefusesTooShortVideo: a video the provider cannot judge (no duration known)
// is refused by Pinterest's processing, with the provider's explanation.
func TestSimulatorRefusesTooShortVideo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	d := e.dest("tok", providertest.NewVideo(1<<20, 3*time.Second, 1080, 1920), "")
	d.Video.Duration = 0
	_, err := e.Run(e.prov, d, 30)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "status failed")
	if got := e.Introspect(); len(got.Uploads) != 1 || len(got.Published) != 0 {
		t.Errorf("record %+v", got)
	}
}

func TestThumbnailCover(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cover.png" {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(png)
			return
		}
		_, _ = io.WriteString(w, "not an image")
	}))
	t.Cleanup(srv.Close)

	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	d := e.dest("tok", providertest.ShortVideo(), "")
	d.Thumbnail = &provider.Media{ContentType: "image/png", URL: srv.URL + "/cover.png"}
	if _, err := e.Run(e.prov, d, 30); err != nil {
		t.Fatal(err)
	}
	pins := e.sim.Pins(acct)
	if len(pins) != 1 || pins[0].CoverImageURL != srv.URL+"/cover.png" || pins[0].CoverKeyFrame != nil {
		t.Fatalf("pins %+v", pins)
	}

	e = newEnv(t, pinterestsim.Options{}, providertest.Options{})
	d = e.dest("tok", providertest.ShortVideo(), "")
	d.Thumbnail = &provider.Media{ContentType: "image/png", URL: srv.URL + "/broken.png"}
	_, err := e.Run(e.prov, d, 30)
	providertest.WantError(t, err, provider.CategoryMediaRejected, false, "this image is broken")
}

func TestIdentify(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	id, err := e.prov.Identify(context.Background(), e.BaseURL, sandboxtoken.Credentials("pinterest", e.BaseURL, acct, "tok"))
	if err != nil {
		t.Fatal(err)
	}
	if id.ExternalID != acct || id.Username != "reelaydemo" || id.Name != "reelaydemo" || !strings.HasPrefix(id.AvatarURL, e.BaseURL) {
		t.Errorf("identity %+v", id)
	}
	_, err = e.prov.Identify(context.Background(), e.BaseURL, map[string]string{"access_token": "wrong"})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "Authentication failed.")
	_, err = e.prov.Identify(context.Background(), e.BaseURL, map[string]string{})
	providertest.WantError(t, err, provider.CategoryAuthExpired, false, "no access token")
}

func TestOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, pinterestsim.Options{}, providertest.Options{})
	opts, err := e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	want := pinterestsim.DefaultBoards(acct)
	b := opts["board_id"].(map[string]any)
	choices := b["choices"].([]any)
	list := opts["boards"].([]any)
	if len(choices) != 2 || choices[0] != want[0].ID || choices[1] != want[1].ID || b["required"] != true || len(list) != 2 ||
		list[1].(map[string]any)["name"] != want[1].Name || list[1].(map[string]any)["privacy"] != "SECRET" {
		t.Errorf("options %+v", opts)
	}

	// Many boards come in pages.
	many := make([]pinterestsim.Board, 130)
	for i := range many {
		many[i] = pinterestsim.Board{ID: fmt.Sprint(9000 + i), Name: fmt.Sprint("Board ", i), Privacy: "PUBLIC"}
	}
	e = newEnv(t, pinterestsim.Options{Boards: map[string][]pinterestsim.Board{acct: many}}, providertest.Options{})
	opts, err = e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if choices := opts["board_id"].(map[string]any)["choices"].([]any); len(choices) != 130 || choices[129] != "9129" {
		t.Errorf("%d choices", len(choices))
	}
	if n := len(e.Requests(http.MethodGet, "/v5/boards")); n != 2 {
		t.Errorf("%d board pages fetched, want 2", n)
	}

	_, err = e.prov.Options(context.Background(), e.BaseURL, map[string]string{"access_token": "tok-ratelimit"})
	providertest.WantError(t, err, provider.CategoryRateLimited, true, "rate limit")
}
