package redditsim

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform/sim"
)

const redditTok = "tok-r"

type redditEnv struct {
	t     *testing.T
	srv   *httptest.Server
	base  string
	clock *clocktest.Clock
	sim   *Sim
}

func newRedditEnv(t *testing.T, b sim.Behavior) *redditEnv {
	t.Helper()
	e := &redditEnv{t: t, clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	mux := http.NewServeMux()
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	e.base = e.srv.URL + "/sandbox/reddit"
	e.sim = NewSim(sim.Config{BaseURL: e.base, Now: e.clock.Now, Rand: func() float64 { return 0.99 },
		Accounts: sim.StaticAccounts{redditTok: {ID: "t2_u1", Username: "someone", Behavior: b}}}, Options{})
	mux.Handle("/sandbox/reddit/", http.StripPrefix("/sandbox/reddit", e.sim))
	return e
}

// call makes an API request with the account's token and a User-Agent; form nil is a GET.
func (e *redditEnv) call(method, path string, form url.Values, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, e.base+path, body)
	req.Header.Set("Authorization", "bearer "+redditTok)
	req.Header.Set("User-Agent", "test:reelay:1 (by /u/someone)")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

type redditTestLease struct {
	Args struct {
		Action string `json:"action"`
		Fields []struct{ Name, Value string }
	}
	Asset struct {
		AssetID      string `json:"asset_id"`
		WebsocketURL string `json:"websocket_url"`
	}
}

func (e *redditEnv) lease(mimetype string) redditTestLease {
	e.t.Helper()
	resp, b := e.call(http.MethodPost, "/api/media/asset.json", url.Values{"filepath": {"f"}, "mimetype": {mimetype}}, nil)
	var l redditTestLease
	if resp.StatusCode != 200 || json.Unmarshal(b, &l) != nil || l.Asset.AssetID == "" {
		e.t.Fatalf("lease: %d %s", resp.StatusCode, b)
	}
	return l
}

// upload POSTs content to a lease, with fields changed by edit (a value "" drops the field).
func (e *redditEnv) upload(l redditTestLease, content []byte, edit map[string]string) (int, string) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range l.Args.Fields {
		v := f.Value
		if nv, ok := edit[f.Name]; ok {
			if nv == "" {
				continue
			}
			v = nv
		}
		_ = mw.WriteField(f.Name, v)
	}
	if extra, ok := edit["+extra"]; ok {
		_ = mw.WriteField("x-amz-meta-extra", extra)
	}
	fw, _ := mw.CreateFormFile("file", "f")
	_, _ = fw.Write(content)
	_ = mw.Close()
	resp, err := e.srv.Client().Post("http:"+l.Args.Action, mw.FormDataContentType(), &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *redditEnv) key(l redditTestLease) string {
	for _, f := range l.Args.Fields {
		if f.Name == "key" {
			return f.Value
		}
	}
	return ""
}

func redditTestPNG() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 9, 16)))
	return b.Bytes()
}

func TestRedditAuthAndHeaders(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	resp, b := e.call(http.MethodGet, "/api/v1/me", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"someone"`) || !strings.Contains(string(b), `"id":"u1"`) ||
		resp.Header.Get("X-Ratelimit-Used") != "1" || resp.Header.Get("X-Ratelimit-Remaining") != "999.0" || resp.Header.Get("X-Ratelimit-Reset") != "600" {
		t.Errorf("me: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", map[string]string{"Authorization": ""}, 401},
		{"unknown token", map[string]string{"Authorization": "bearer nope"}, 401},
		{"basic auth", map[string]string{"Authorization": "Basic " + redditTok}, 401},
		{"no user agent", map[string]string{"User-Agent": ""}, 403},
		{"default user agent", map[string]string{"User-Agent": "Go-http-client/1.1"}, 403},
	} {
		resp, b := e.call(http.MethodGet, "/api/v1/me", nil, c.hdr)
		if resp.StatusCode != c.want || !strings.Contains(string(b), `"error":`+resp.Status[:3]) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
		}
	}
	if resp, _ := e.call(http.MethodGet, "/api/v1/me", nil, map[string]string{"Authorization": ""}); resp.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
}

func TestRedditFaults(t *testing.T) {
	t.Parallel()
	for fail, want := range map[string]int{sim.FailUnavailable: 503, sim.FailAuth: 401, sim.FailRateLimit: 429} {
		e := newRedditEnv(t, sim.Behavior{Fail: fail})
		resp, b := e.call(http.MethodGet, "/api/v1/me", nil, nil)
		if resp.StatusCode != want || !strings.Contains(string(b), `"message"`) {
			t.Errorf("%s: %d %s", fail, resp.StatusCode, b)
		}
		if fail == sim.FailRateLimit && (resp.Header.Get("X-Ratelimit-Remaining") != "0.0" || resp.Header.Get("X-Ratelimit-Reset") != "1") {
			t.Errorf("rate limit headers %v", resp.Header)
		}
	}
}

func TestRedditRateWindow(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	e.sim.opts.RequestsPerWindow = 2
	for i, want := range []int{200, 200, 429} {
		if resp, _ := e.call(http.MethodGet, "/api/v1/me", nil, nil); resp.StatusCode != want {
			t.Errorf("call %d: %d", i, resp.StatusCode)
		}
	}
	e.clock.Advance(10 * time.Minute)
	if resp, _ := e.call(http.MethodGet, "/api/v1/me", nil, nil); resp.StatusCode != 200 {
		t.Errorf("after the window: %d", resp.StatusCode)
	}
}

// TestRedditS3Policy: the upload must carry the lease's fields unchanged, before expiry, with
// nothing extra and within the size range; a refused POST stores nothing.
func TestRedditS3Policy(t *testing.T) {
	t.Parallel()
	img := redditTestPNG()
	for _, c := range []struct {
		name    string
		edit    map[string]string
		advance time.Duration
		status  int
		code    string
	}{
		{"accepted", nil, 0, 201, "<PostResponse>"},
		{"expired", nil, 61 * time.Second, 403, "Policy expired"},
		{"changed key", map[string]string{"key": "rte_images/other"}, 0, 403, "Policy Condition failed"},
		{"changed content type", map[string]string{"content-type": "image/gif"}, 0, 403, "Policy Condition failed"},
		{"missing field", map[string]string{"x-amz-security-token": ""}, 0, 403, "Policy Condition failed"},
		{"extra field", map[string]string{"+extra": "1"}, 0, 403, "Extra input fields"},
		{"bad signature", map[string]string{"X-Amz-Signature": strings.Repeat("0", 64)}, 0, 403, "SignatureDoesNotMatch"},
		{"no policy", map[string]string{"policy": ""}, 0, 403, "AccessDenied"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newRedditEnv(t, sim.Behavior{})
			l := e.lease("image/png")
			e.clock.Advance(c.advance)
			status, body := e.upload(l, img, c.edit)
			if status != c.status || !strings.Contains(body, c.code) {
				t.Fatalf("%d %s", status, body)
			}
			head, _ := http.NewRequest(http.MethodHead, "http:"+l.Args.Action+"/"+e.key(l), nil)
			resp, err := e.srv.Client().Do(head)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if (resp.StatusCode == 200) != (c.status == 201) {
				t.Errorf("HEAD after %d: %d", c.status, resp.StatusCode)
			}
		})
	}
	t.Run("too large", func(t *testing.T) {
		e := newRedditEnv(t, sim.Behavior{})
		l := e.lease("image/png")
		status, body := e.upload(l, make([]byte, redditMaxImageBytes+1), nil)
		if status != 400 || !strings.Contains(body, "<Code>EntityTooLarge</Code>") || !strings.Contains(body, "<MaxSizeAllowed>20971520</MaxSizeAllowed>") {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("no content length", func(t *testing.T) {
		e := newRedditEnv(t, sim.Behavior{})
		l := e.lease("image/png")
		pr, pw := io.Pipe()
		go func() { _, _ = pw.Write([]byte("--x\r\n")); _ = pw.Close() }()
		req, _ := http.NewRequest(http.MethodPost, "http:"+l.Args.Action, pr)
		req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 411 || !strings.Contains(string(b), "MissingContentLength") {
			t.Errorf("%d %s", resp.StatusCode, b)
		}
	})
}

// TestRedditSubmitRefusals: json.errors for what Reddit refuses, with HTTP 200.
func TestRedditSubmitRefusals(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	vl, pl := e.lease("video/mp4"), e.lease("image/png")
	video := "http:" + vl.Args.Action + "/" + e.key(vl)
	poster := "http:" + pl.Args.Action + "/" + e.key(pl)
	base := func(kv ...string) url.Values {
		v := url.Values{"api_type": {"json"}, "kind": {"video"}, "sr": {"reelay_sandbox"}, "title": {"t"},
			"url": {video}, "video_poster_url": {poster}}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				v.Del(kv[i])
			} else {
				v.Set(kv[i], kv[i+1])
			}
		}
		return v
	}
	for _, c := range []struct {
		form url.Values
		code string
	}{
		{base("sr", ""), "SUBREDDIT_REQUIRED"},
		{base("sr", "no-such-name"), "SUBREDDIT_NOEXIST"},
		{base("sr", "reelay_textonly"), "NO_VIDEOS"},
		{base("sr", "reelay_flair"), "SUBMIT_VALIDATION_FLAIR_REQUIRED"},
		{base("sr", "reelay_flair", "flair_id", "7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b03"), "BAD_FLAIR_TEMPLATE_ID"},
		{base("title", ""), "NO_TEXT"},
		{base("title", strings.Repeat("a", 301)), "TOO_LONG"},
		{base("url", "https://example.com/v.mp4"), "BAD_URL"},
		{base("video_poster_url", ""), "BAD_URL"},
		{base("url", poster), "BAD_URL"},
		{base("kind", "link"), "INVALID_OPTION"},
	} {
		resp, b := e.call(http.MethodPost, "/api/submit", c.form, nil)
		var out struct {
			JSON struct{ Errors [][]string }
		}
		_ = json.Unmarshal(b, &out)
		if resp.StatusCode != 200 || len(out.JSON.Errors) == 0 || out.JSON.Errors[0][0] != c.code || len(out.JSON.Errors[0]) != 3 {
			t.Errorf("%v: %d %s, want %s", c.form, resp.StatusCode, b, c.code)
		}
	}
	if resp, _ := e.call(http.MethodPost, "/api/submit", base("api_type", ""), nil); resp.StatusCode != 400 {
		t.Errorf("without api_type=json: %d", resp.StatusCode)
	}
	if len(e.sim.Posts("t2_u1")) != 0 {
		t.Error("a refused submit made a post")
	}
}

// TestRedditProcessing: a submitted video whose bytes are not a video fails in processing; a
// leased but never uploaded one too; posts never appear for them.
func TestRedditProcessing(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{ProcessingMS: 1000})
	vl, pl := e.lease("video/mp4"), e.lease("image/png")
	if status, body := e.upload(vl, []byte("not a video at all"), nil); status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	if status, body := e.upload(pl, redditTestPNG(), nil); status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	form := url.Values{"api_type": {"json"}, "kind": {"video"}, "sr": {"reelay_sandbox"}, "title": {"t"},
		"url": {"http:" + vl.Args.Action + "/" + e.key(vl)}, "video_poster_url": {"http:" + pl.Args.Action + "/" + e.key(pl)}}
	resp, b := e.call(http.MethodPost, "/api/submit", form, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"websocket_url":"ws://`) || !strings.Contains(string(b), "/user/someone/submitted/") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if p := e.sim.Posts("t2_u1"); len(p) != 1 || p[0].Status != "processing" {
		t.Fatalf("posts %+v", p)
	}
	e.clock.Advance(time.Second)
	if p := e.sim.Posts("t2_u1"); len(p) != 1 || p[0].Status != "failed" || p[0].ID != "" {
		t.Fatalf("posts %+v", p)
	}
	_, b = e.call(http.MethodGet, "/user/someone/submitted", nil, nil)
	if !strings.Contains(string(b), `"children":[]`) {
		t.Errorf("listing %s", b)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Uploads) != 1 || len(rec.Published) != 0 {
		t.Errorf("record %+v", rec)
	}
}

// TestRedditAnyOtherCommunity: the channel options say any other subreddit name works, so a
// well-formed name the simulator does not list is an open community that takes video, while
// the listed ones keep their rules.
func TestRedditAnyOtherCommunity(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	for _, c := range []struct {
		path, want string
		status     int
	}{
		{"/r/test/about", `"allow_videos":true`, 200},
		{"/r/Some_Community/about", `"display_name":"Some_Community"`, 200},
		{"/api/v1/test/post_requirements", `"is_flair_required":false`, 200},
		{"/r/test/api/link_flair_v2", "", 403},
		{"/r/reelay_textonly/about", `"allow_videos":false`, 200},
		{"/r/reelay_flair/api/link_flair_v2", "Original content", 200},
		{"/r/x-y/about", "", 404},
	} {
		resp, b := e.call(http.MethodGet, c.path, nil, nil)
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d %s; want %d with %s", c.path, resp.StatusCode, b, c.status, c.want)
		}
	}
	vl, pl := e.lease("video/mp4"), e.lease("image/png")
	if status, body := e.upload(vl, []byte("video bytes"), nil); status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	if status, body := e.upload(pl, redditTestPNG(), nil); status != 201 {
		t.Fatalf("%d %s", status, body)
	}
	form := url.Values{"api_type": {"json"}, "kind": {"video"}, "sr": {"test"}, "title": {"t"},
		"url": {"http:" + vl.Args.Action + "/" + e.key(vl)}, "video_poster_url": {"http:" + pl.Args.Action + "/" + e.key(pl)}}
	if resp, b := e.call(http.MethodPost, "/api/submit", form, nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"errors":[]`) {
		t.Fatalf("submit to r/test: %d %s", resp.StatusCode, b)
	}
	if p := e.sim.Posts("t2_u1"); len(p) != 1 || p[0].Subreddit != "test" {
		t.Fatalf("posts %+v", p)
	}
}

func TestRedditListings(t *testing.T) {
	t.Parallel()
	e := newRedditEnv(t, sim.Behavior{})
	resp, b := e.call(http.MethodGet, "/subreddits/mine/subscriber?limit=2", nil, nil)
	var l struct {
		Data struct {
			After    string
			Children []struct {
				Kind string
				Data map[string]any
			}
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &l) != nil || len(l.Data.Children) != 2 || l.Data.After == "" || l.Data.Children[0].Kind != "t5" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	_, b = e.call(http.MethodGet, "/subreddits/mine/subscriber?limit=2&after="+l.Data.After, nil, nil)
	l.Data.After = ""
	if json.Unmarshal(b, &l) != nil || len(l.Data.Children) != 2 || l.Data.After != "" || l.Data.Children[1].Data["allow_videos"] != false {
		t.Fatalf("second page %s", b)
	}
	for path, want := range map[string]int{
		"/r/reelay_flair/about": 200, "/r/no-such-name/about": 404, "/api/v1/reelay_flair/post_requirements": 200,
		"/r/reelay_flair/api/link_flair_v2": 200, "/r/reelay_shorts/api/link_flair_v2": 403, "/nowhere": 404,
	} {
		if resp, b := e.call(http.MethodGet, path, nil, nil); resp.StatusCode != want {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	if resp, _ := e.call(http.MethodPost, "/api/v1/me", url.Values{}, nil); resp.StatusCode != 405 {
		t.Errorf("POST me: %d", resp.StatusCode)
	}
}
