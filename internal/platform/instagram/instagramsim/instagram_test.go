package instagramsim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

const (
	igTestToken   = "tok-ig"
	igTestAccount = "17841400000000042"
)

type igTestEnv struct {
	t     *testing.T
	sim   *igSim
	srv   *httptest.Server
	clock *clocktest.Clock
	rec   *sim.Recorder
	video []byte
	media *httptest.Server
}

// newIGTestEnv serves the simulator under /sandbox/instagram with one account, and a media
// server answering /v.mp4 with a valid 5-second MP4 (anything else: 404).
func newIGTestEnv(t *testing.T, b sim.Behavior) *igTestEnv {
	t.Helper()
	return newIGTestEnvWith(t, b, Options{})
}

// newIGTestEnvWith is newIGTestEnv with the simulator tuned by opt.
func newIGTestEnvWith(t *testing.T, b sim.Behavior, opt Options) *igTestEnv {
	t.Helper()
	e := &igTestEnv{t: t, clock: clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)), rec: &sim.Recorder{}}
	e.video = igReel(t, mediatest.Options{Size: 64 << 10})
	e.media = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v.mp4" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "v.mp4", time.Time{}, bytes.NewReader(e.video))
	}))
	t.Cleanup(e.media.Close)
	e.srv = httptest.NewUnstartedServer(nil)
	h := NewWith(sim.Config{
		BaseURL:  "http://" + e.srv.Listener.Addr().String() + "/sandbox/instagram/",
		Accounts: sim.StaticAccounts{igTestToken: {ID: igTestAccount, Username: "sim.user", Behavior: b}},
		Recorder: e.rec,
		Now:      e.clock.Now,
	}, opt)
	e.sim = h.(*igSim)
	e.srv.Config.Handler = h
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

type igAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a igAnswer) code() int {
	e, _ := a.body["error"].(map[string]any)
	n, _ := e["code"].(float64)
	return int(n)
}

func (a igAnswer) subcode() int {
	e, _ := a.body["error"].(map[string]any)
	n, _ := e["error_subcode"].(float64)
	return int(n)
}

// call sends one Graph request: params go in the query string for GET, in a form body for POST.
func (e *igTestEnv) call(method, path string, params url.Values, auth string) igAnswer {
	e.t.Helper()
	u := e.srv.URL + "/sandbox/instagram/v26.0" + path
	var body *strings.Reader
	if method == http.MethodGet {
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
		body = strings.NewReader("")
	} else {
		body = strings.NewReader(params.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := igAnswer{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

func (e *igTestEnv) get(path string, params url.Values) igAnswer {
	return e.call(http.MethodGet, path, params, "Bearer "+igTestToken)
}

func (e *igTestEnv) post(path string, params url.Values) igAnswer {
	return e.call(http.MethodPost, path, params, "Bearer "+igTestToken)
}

func (e *igTestEnv) reel(videoURL, caption string) url.Values {
	return url.Values{"media_type": {"REELS"}, "video_url": {videoURL}, "caption": {caption}, "share_to_feed": {"true"}}
}

// create makes a container and waits for its download to end.
// create makes a Reels container and waits for its fetch; params are further name, value
// pairs (an empty value is left out).
func (e *igTestEnv) create(videoURL, caption string, params ...string) string {
	e.t.Helper()
	form := e.reel(videoURL, caption)
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] != "" {
			form.Set(params[i], params[i+1])
		}
	}
	a := e.post("/"+igTestAccount+"/media", form)
	id, _ := a.body["id"].(string)
	if a.status != http.StatusOK || id == "" {
		e.t.Fatalf("create: %d %v", a.status, a.body)
	}
	for range 2000 {
		if e.sim.containerFetched(id) {
			return id
		}
		time.Sleep(time.Millisecond)
	}
	e.t.Fatal("the download never ended")
	return ""
}

func (e *igTestEnv) statusCode(id string) (string, string) {
	e.t.Helper()
	a := e.get("/"+id, url.Values{"fields": {"status_code,status"}})
	code, _ := a.body["status_code"].(string)
	status, _ := a.body["status"].(string)
	return code, status
}

func TestInstagramTokens(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{})
	path := "/" + igTestAccount
	for _, c := range []struct {
		name   string
		auth   string
		params url.Values
		status int
		code   int
	}{
		{"bearer header", "Bearer " + igTestToken, nil, 200, 0},
		{"oauth header", "OAuth " + igTestToken, nil, 200, 0},
		{"access_token parameter", "", url.Values{"access_token": {igTestToken}}, 200, 0},
		{"no token", "", nil, 400, 104},
		{"unknown token", "Bearer nope", nil, 400, 190},
		{"basic scheme", "Basic " + igTestToken, nil, 400, 104},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := e.call(http.MethodGet, path, c.params, c.auth)
			if a.status != c.status || a.code() != c.code {
				t.Fatalf("answer %d %v", a.status, a.body)
			}
			if c.code == 190 && !strings.Contains(a.header.Get("WWW-Authenticate"), "invalid_token") {
				t.Fatalf("WWW-Authenticate = %q", a.header.Get("WWW-Authenticate"))
			}
			if c.code != 0 {
				ge := a.body["error"].(map[string]any)
				if ge["type"] != "OAuthException" || ge["fbtrace_id"] == "" || ge["message"] == "" {
					t.Fatalf("error shape %v", ge)
				}
			}
		})
	}
}

func TestInstagramCallFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail      string
		status    int
		code      int
		subcode   int
		transient bool
		header    string
	}{
		{sim.FailUnavailable, 500, 2, 0, true, ""},
		{sim.FailAuth, 400, 190, 463, false, "WWW-Authenticate"},
		{sim.FailRateLimit, 403, 4, 0, true, "X-App-Usage"},
	} {
		t.Run(c.fail, func(t *testing.T) {
			t.Parallel()
			e := newIGTestEnv(t, sim.Behavior{Fail: c.fail})
			a := e.post("/"+igTestAccount+"/media", e.reel(e.media.URL+"/v.mp4", "x"))
			ge := a.body["error"].(map[string]any)
			if a.status != c.status || a.code() != c.code || a.subcode() != c.subcode || ge["is_transient"] != c.transient {
				t.Fatalf("answer %d %v", a.status, a.body)
			}
			if c.header != "" && a.header.Get(c.header) == "" {
				t.Fatalf("no %s header", c.header)
			}
			if e.sim.containerCount() != 0 {
				t.Fatal("a failed call created a container")
			}
		})
	}
}

func TestInstagramContainerValidation(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{})
	good := e.media.URL + "/v.mp4"
	with := func(k, v string) url.Values {
		p := e.reel(good, "caption")
		if v == "" {
			p.Del(k)
		} else {
			p.Set(k, v)
		}
		return p
	}
	for _, c := range []struct {
		name    string
		account string
		params  url.Values
		code    int
		subcode int
	}{
		{"no media_type", igTestAccount, with("media_type", ""), 100, 2207023},
		{"VIDEO media_type", igTestAccount, with("media_type", "VIDEO"), 100, 2207023},
		{"IMAGE media_type", igTestAccount, with("media_type", "IMAGE"), 100, 2207023},
		{"no video_url", igTestAccount, with("video_url", ""), 100, 0},
		{"ftp video_url", igTestAccount, with("video_url", "ftp://example.com/v.mp4"), 100, 0},
		{"relative video_url", igTestAccount, with("video_url", "/v.mp4"), 100, 0},
		{"share_to_feed not boolean", igTestAccount, with("share_to_feed", "yes"), 100, 0},
		{"cover_url not a URL", igTestAccount, with("cover_url", "cover.jpg"), 100, 0},
		{"negative thumb_offset", igTestAccount, with("thumb_offset", "-1"), 1, 2207057},
		{"thumb_offset not a number", igTestAccount, with("thumb_offset", "1.5s"), 100, 0},
		{"caption too long", igTestAccount, with("caption", strings.Repeat("a", 2201)), 36004, 2207010},
		{"31 hashtags", igTestAccount, with("caption", strings.Repeat("#x ", 31)), 36004, 2207010},
		{"21 mentions", igTestAccount, with("caption", strings.Repeat("@a.b ", 21)), 36004, 2207010},
		{"another account", "17841400000000099", e.reel(good, "x"), 100, 33},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := e.post("/"+c.account+"/media", c.params)
			if a.status != http.StatusBadRequest || a.code() != c.code || a.subcode() != c.subcode {
				t.Fatalf("answer %d %v", a.status, a.body)
			}
		})
	}
	if n := e.sim.containerCount(); n != 0 {
		t.Fatalf("%d containers created by refused requests", n)
	}
}

func TestInstagramLifecycle(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{ProcessingMS: 10_000})
	// JSON bodies are accepted as Graph accepts them.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/sandbox/instagram/v26.0/"+igTestAccount+"/media",
		strings.NewReader(`{"media_type":"REELS","video_url":"`+e.media.URL+`/v.mp4","caption":"Hello #reels","share_to_feed":false}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+igTestToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	id := created["id"]
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("create: %d %v", resp.StatusCode, created)
	}

	for range 2000 { // the download runs in the background
		if e.sim.containerFetched(id) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if code, status := e.statusCode(id); code != "IN_PROGRESS" || !strings.HasPrefix(status, "In Progress") {
		t.Fatalf("status %s %q before the processing time", code, status)
	}
	a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}})
	if a.code() != 9007 || a.subcode() != 2207027 {
		t.Fatalf("publishing an unfinished container: %d %v", a.status, a.body)
	}

	e.clock.Advance(10 * time.Second)
	if code, _ := e.statusCode(id); code != "FINISHED" {
		t.Fatalf("status %s after the processing time", code)
	}
	a = e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}})
	mediaID, _ := a.body["id"].(string)
	if a.status != 200 || mediaID == "" {
		t.Fatalf("publish: %d %v", a.status, a.body)
	}
	a = e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}})
	if a.status != 400 || a.code() != 100 {
		t.Fatalf("second publish: %d %v", a.status, a.body)
	}
	if code, _ := e.statusCode(id); code != "PUBLISHED" {
		t.Fatalf("status %s after publishing", code)
	}

	m := e.get("/"+mediaID, url.Values{"fields": {"permalink,shortcode,caption,media_product_type,is_shared_to_feed,timestamp,username"}}).body
	sc, _ := m["shortcode"].(string)
	if m["permalink"] != "https://www.instagram.com/reel/"+sc+"/" || sc == "" || m["caption"] != "Hello #reels" ||
		m["media_product_type"] != "REELS" || m["is_shared_to_feed"] != false || m["username"] != "sim.user" ||
		m["timestamp"] != "2026-09-01T08:00:10+0000" || m["id"] != mediaID {
		t.Fatalf("media = %v", m)
	}
	if a := e.get("/"+mediaID, url.Values{"fields": {"likes_of_cats"}}); a.code() != 100 {
		t.Fatalf("unknown field: %v", a.body)
	}
	list := e.get("/"+igTestAccount+"/media", url.Values{"fields": {"id,caption"}, "since": {fmt.Sprint(e.clock.Now().Add(-time.Minute).Unix())}}).body
	if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["id"] != mediaID {
		t.Fatalf("media list = %v", list)
	}
	if list := e.get("/"+igTestAccount+"/media", url.Values{"since": {fmt.Sprint(e.clock.Now().Add(time.Minute).Unix())}}).body; len(list["data"].([]any)) != 0 {
		t.Fatalf("since filter: %v", list)
	}

	sum := sha256.Sum256(e.video)
	snap := e.rec.Snapshot(nil)
	if len(snap.Uploads) != 1 || snap.Uploads[0].SHA256 != hex.EncodeToString(sum[:]) || snap.Uploads[0].Bytes != int64(len(e.video)) {
		t.Fatalf("uploads = %+v", snap.Uploads)
	}
	if len(snap.Published) != 1 || snap.Published[0].ID != mediaID || snap.Published[0].Text != "Hello #reels" ||
		snap.Published[0].SHA256 != hex.EncodeToString(sum[:]) || snap.Published[0].Account != igTestAccount {
		t.Fatalf("published = %+v", snap.Published)
	}
}

func (s *igSim) containerFetched(id string) bool {
	c, _, _, err := sim.Load[igContainer](context.Background(), s.cfg.State, igKey(igContainerKind, id))
	if err != nil {
		panic(err)
	}
	return c.Pull.Done
}

// containerCount counts the containers of every account.
func (s *igSim) containerCount() int {
	n, err := s.cfg.State.Count(context.Background(), platform.Instagram, igContainerKind, "")
	if err != nil {
		panic(err)
	}
	return n
}

func TestInstagramContainerErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		b           sim.Behavior
		path        string
		video       []byte
		thumbOffset string
		subcode     int
	}{
		{"fetch fails", sim.Behavior{}, "/missing.mp4", nil, "", 2207052},
		{"reject", sim.Behavior{Fail: sim.FailReject}, "/v.mp4", nil, "", 2207026},
		{"not a video", sim.Behavior{}, "/v.mp4", []byte("GIF89a not a movie"), "", 2207026},
		{"too short", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 2900 * time.Millisecond}), "", 2207026},
		{"cover past the end", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second}), "5000", 2207057},
		// The Reels specifications' container, frame rate and audio rules (issue 31, item 8).
		{"120 fps", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, FPS: 120}), "", 2207026},
		{"20 fps", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, FPS: 20}), "", 2207026},
		{"moov after mdat", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, MoovAtEnd: true}), "", 2207026},
		{"edit list", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, EditList: true}), "", 2207026},
		{"96 kHz sound", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, AudioSampleRate: 96000}), "", 2207026},
		// Over 25 Mbps on average (20 MB in 5 s is 32 Mbps); the aspect ratio past 10:1.
		{"32 Mbps", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, Size: 20_000_000}), "", 2207026},
		{"11:1", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, Width: 1100, Height: 100}), "", 2207026},
		{"six sound channels", sim.Behavior{}, "/v.mp4", igReel(t, mediatest.Options{Duration: 5 * time.Second, AudioSampleRate: 48000, AudioChannels: 6}), "", 2207026},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newIGTestEnv(t, c.b)
			if c.video != nil {
				e.video = c.video
			}
			id := e.create(e.media.URL+c.path, "x", "thumb_offset", c.thumbOffset)
			e.clock.Advance(3 * time.Second) // the default processing time
			code, status := e.statusCode(id)
			if code != "ERROR" || status != fmt.Sprintf("Error: Media upload has failed with error code %d", c.subcode) {
				t.Fatalf("status %s %q", code, status)
			}
			if a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}}); a.code() != 9007 {
				t.Fatalf("publishing an ERROR container: %v", a.body)
			}
			if n := len(e.rec.Snapshot(nil).Published); n != 0 {
				t.Fatalf("%d published", n)
			}
		})
	}
}

// A Reel inside every rule passes: 24 and 60 fps, stereo AAC at 48 kHz, mono at 44.1 kHz, 16 Mbps.
func TestInstagramAcceptsWithinReelsSpecs(t *testing.T) {
	t.Parallel()
	for _, o := range []mediatest.Options{
		{Duration: 5 * time.Second, FPS: 60, AudioSampleRate: 48000},
		{Duration: 5 * time.Second, FPS: 24, AudioSampleRate: 44100, AudioChannels: 1},
		{Duration: 5 * time.Second, Size: 10_000_000}, // 16 Mbps
	} {
		e := newIGTestEnv(t, sim.Behavior{})
		e.video = igReel(t, o)
		id := e.create(e.media.URL+"/v.mp4", "x")
		e.clock.Advance(3 * time.Second)
		if code, status := e.statusCode(id); code != "FINISHED" {
			t.Fatalf("%+v: status %s %q", o, code, status)
		}
	}
}

// A cover taken from inside the video is fine; the last millisecond is still inside.
func TestInstagramThumbOffset(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{})
	e.video = igReel(t, mediatest.Options{Duration: 5 * time.Second})
	id := e.create(e.media.URL+"/v.mp4", "x", "thumb_offset", "4999")
	e.clock.Advance(3 * time.Second)
	if code, status := e.statusCode(id); code != "FINISHED" {
		t.Fatalf("status %s %q", code, status)
	}
}

func TestInstagramExpiry(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{ProcessingMS: 0})
	id := e.create(e.media.URL+"/v.mp4", "x")
	if code, _ := e.statusCode(id); code != "FINISHED" {
		t.Fatalf("status %s", code)
	}
	e.clock.Advance(24 * time.Hour)
	if code, _ := e.statusCode(id); code != "EXPIRED" {
		t.Fatalf("status %s after 24 hours", code)
	}
	a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}})
	if a.code() != -2 || a.subcode() != 2207020 {
		t.Fatalf("publishing an expired container: %v", a.body)
	}
	if a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {"123"}}); a.code() != 24 || a.subcode() != 2207006 {
		t.Fatalf("publishing an unknown container: %v", a.body)
	}
}

func TestInstagramPublishingLimits(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{ProcessingMS: 0})
	limit := func() map[string]any {
		a := e.get("/"+igTestAccount+"/content_publishing_limit", url.Values{"fields": {"quota_usage,config"}})
		return a.body["data"].([]any)[0].(map[string]any)
	}
	if l := limit(); l["quota_usage"] != 0.0 || l["config"].(map[string]any)["quota_total"] != 100.0 || l["config"].(map[string]any)["quota_duration"] != 86400.0 {
		t.Fatalf("limit = %v", l)
	}
	if d := e.get("/"+igTestAccount+"/content_publishing_limit", nil).body["data"].([]any)[0].(map[string]any); len(d) != 1 || d["quota_usage"] != 0.0 {
		t.Fatalf("default fields = %v", d)
	}
	for i := range 100 {
		id := e.create(e.media.URL+"/v.mp4", fmt.Sprint("post ", i))
		if a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}}); a.status != 200 {
			t.Fatalf("publish %d: %v", i, a.body)
		}
	}
	if l := limit(); l["quota_usage"] != 100.0 {
		t.Fatalf("limit = %v", l)
	}
	id := e.create(e.media.URL+"/v.mp4", "one too many")
	a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}})
	if a.code() != 9 || a.subcode() != 2207042 {
		t.Fatalf("101st publish: %v", a.body)
	}
	e.clock.Advance(23 * time.Hour)
	if a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}}); a.code() != 9 {
		t.Fatalf("within the window: %v", a.body)
	}
	e.clock.Advance(time.Hour)
	if l := limit(); l["quota_usage"] != 0.0 {
		t.Fatalf("limit after the window = %v", l)
	}
	id = e.create(e.media.URL+"/v.mp4", "next day")
	if a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}}); a.status != 200 {
		t.Fatalf("after the window: %v", a.body)
	}
}

func TestInstagramContainerCap(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{})
	gone := e.media.URL + "/gone.mp4" // quick downloads: they fail
	for i := range 400 {
		if a := e.post("/"+igTestAccount+"/media", e.reel(gone, "x")); a.status != 200 {
			t.Fatalf("container %d: %v", i, a.body)
		}
	}
	if a := e.post("/"+igTestAccount+"/media", e.reel(gone, "x")); a.status != 400 || a.code() != 9 {
		t.Fatalf("container 401: %v", a.body)
	}
	e.clock.Advance(24 * time.Hour)
	if a := e.post("/"+igTestAccount+"/media", e.reel(gone, "x")); a.status != 200 {
		t.Fatalf("after the window: %v", a.body)
	}
}

func TestInstagramUserNode(t *testing.T) {
	t.Parallel()
	e := newIGTestEnv(t, sim.Behavior{})
	for _, path := range []string{"/" + igTestAccount, "/me"} {
		u := e.get(path, url.Values{"fields": {"id,username,name,profile_picture_url"}}).body
		if u["id"] != igTestAccount || u["username"] != "sim.user" || u["name"] != "sim.user" || len(u) != 3 {
			t.Fatalf("%s = %v", path, u)
		}
	}
	// profile_picture_url is a real field: the simulated account has no picture, and Graph
	// leaves out fields without a value. Asking for an unknown field is an error.
	if a := e.get("/"+igTestAccount, url.Values{"fields": {"id,favourite_colour"}}); a.code() != 100 {
		t.Fatalf("unknown field: %v", a.body)
	}
	if a := e.get("/17841400000000099", nil); a.code() != 100 || a.subcode() != 33 {
		t.Fatalf("another account: %v", a.body)
	}
	// The version segment is optional, as on Graph.
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/sandbox/instagram/"+igTestAccount+"?fields=username", nil)
	req.Header.Set("Authorization", "Bearer "+igTestToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("unversioned path: %v %v", resp, err)
	}
	resp.Body.Close()
}

// igReel is a valid Reel by default: mediatest's H.264 MP4, 5 seconds, 1080×1920.
func igReel(t *testing.T, o mediatest.Options) []byte {
	t.Helper()
	if o.Duration == 0 {
		o.Duration = 5 * time.Second
	}
	return mediatest.MP4Bytes(t, o)
}

func TestInstagramVideoChecks(t *testing.T) {
	t.Parallel()
	s := New(sim.Config{}).(*igSim)
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"mp4", igReel(t, mediatest.Options{}), true},
		{"mov", igReel(t, mediatest.Options{Brand: "qt  "}), true},
		// The Reels specifications want the moov atom at the front of the file.
		{"moov at the end", igReel(t, mediatest.Options{MoovAtEnd: true}), false},
		{"3 seconds", igReel(t, mediatest.Options{Duration: 3 * time.Second}), true},
		{"15 minutes", igReel(t, mediatest.Options{Duration: 15 * time.Minute, FPS: 24}), true},
		{"1920 wide", igReel(t, mediatest.Options{Width: 1920, Height: 1080}), true},
		{"webm", mediatest.WebMBytes(t, mediatest.Options{Duration: 5 * time.Second}), false},
		{"too short", igReel(t, mediatest.Options{Duration: 2999 * time.Millisecond}), false},
		{"too long", igReel(t, mediatest.Options{Duration: 15*time.Minute + time.Second, FPS: 24}), false},
		{"too wide", igReel(t, mediatest.Options{Width: 2160, Height: 3840}), false},
		{"jpeg", mediatest.JPEG(t, 1080, 1920), false},
		{"text", []byte("hello, this is text and not a video at all"), false},
		{"truncated", igReel(t, mediatest.Options{})[:200], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, got := s.acceptable(bytes.NewReader(c.b), int64(len(c.b))); got != c.ok {
				t.Fatalf("acceptable = %v", got)
			}
		})
	}
}

func TestInstagramPages(t *testing.T) {
	t.Parallel()
	const expand = "instagram_business_account{id,username,name,profile_picture_url}"
	data := func(a igAnswer) []map[string]any {
		t.Helper()
		if a.status != 200 {
			t.Fatalf("answer %d: %v", a.status, a.body)
		}
		var out []map[string]any
		for _, row := range a.body["data"].([]any) {
			out = append(out, row.(map[string]any))
		}
		return out
	}

	e := newIGTestEnv(t, sim.Behavior{})
	// By default the user manages one Page, linked to the account itself.
	rows := data(e.get("/me/accounts", url.Values{"fields": {expand}}))
	if len(rows) != 1 || rows[0]["id"] == "" || len(rows[0]) != 2 {
		t.Fatalf("pages = %+v", rows)
	}
	ig, _ := rows[0]["instagram_business_account"].(map[string]any)
	if ig["id"] != igTestAccount || ig["username"] != "sim.user" || ig["name"] != "sim.user" || len(ig) != 3 {
		t.Fatalf("linked account = %+v (no profile picture: left out)", ig)
	}
	// Without an expansion the linked account is its id; without fields, a Page has its
	// default fields and no linked account.
	rows = data(e.get("/me/accounts", url.Values{"fields": {"instagram_business_account,name"}}))
	if ig, _ := rows[0]["instagram_business_account"].(map[string]any); len(ig) != 1 || ig["id"] != igTestAccount || rows[0]["name"] != "sim.user" {
		t.Fatalf("unexpanded = %+v", rows)
	}
	rows = data(e.get("/me/accounts", nil))
	if _, ok := rows[0]["instagram_business_account"]; ok || rows[0]["name"] == nil || rows[0]["category"] == nil || rows[0]["tasks"] == nil {
		t.Fatalf("default fields = %+v", rows)
	}
	// The account found is the one that publishes.
	if id := e.create(e.media.URL+"/v.mp4", "x"); id == "" {
		t.Fatal("no container")
	}

	for _, c := range []struct {
		name    string
		method  string
		fields  string
		auth    string
		status  int
		code    int
		subcode int
		message string
	}{
		{"unknown page field", "GET", "instagram_business_account,followers", "Bearer " + igTestToken, 400, 100, 0, "nonexisting field (followers) on node type (Page)"},
		{"unknown account field", "GET", "instagram_business_account{id,bio}", "Bearer " + igTestToken, 400, 100, 0, "nonexisting field (bio) on node type (IGUser)"},
		{"expanded scalar", "GET", "name{id}", "Bearer " + igTestToken, 400, 100, 0, "has no subfields"},
		{"unclosed brace", "GET", "instagram_business_account{id,username", "Bearer " + igTestToken, 400, 100, 0, "Syntax error"},
		{"empty field", "GET", "id,,name", "Bearer " + igTestToken, 400, 100, 0, "Syntax error"},
		{"wrong method", "POST", expand, "Bearer " + igTestToken, 400, 100, 33, "Unsupported post request"},
		{"no token", "GET", expand, "", 400, 104, 0, "access token is required"},
		{"unknown token", "GET", expand, "Bearer nope", 400, 190, 0, "Invalid OAuth access token"},
	} {
		a := e.call(c.method, "/me/accounts", url.Values{"fields": {c.fields}}, c.auth)
		msg, _ := a.body["error"].(map[string]any)["message"].(string)
		if a.status != c.status || a.code() != c.code || a.subcode() != c.subcode || !strings.Contains(msg, c.message) {
			t.Errorf("%s: %d %v", c.name, a.status, a.body)
		}
	}

	// Pages without a linked account have no instagram_business_account; paging by cursor.
	e = newIGTestEnvWith(t, sim.Behavior{}, Options{Pages: map[string][]Page{igTestAccount: {
		{ID: "101", Name: "Shop"}, {ID: "102", Name: "Blog"}, {ID: "103", Name: "Reels", Linked: true},
	}}})
	a := e.get("/me/accounts", url.Values{"fields": {"name," + expand}, "limit": {"2"}})
	rows = data(a)
	if len(rows) != 2 || rows[0]["id"] != "101" || rows[1]["name"] != "Blog" || rows[0]["instagram_business_account"] != nil || rows[1]["instagram_business_account"] != nil {
		t.Fatalf("first page = %+v", rows)
	}
	paging, _ := a.body["paging"].(map[string]any)
	next, _ := paging["next"].(string)
	after, _ := paging["cursors"].(map[string]any)["after"].(string)
	if !strings.Contains(next, "/me/accounts?") || after == "" {
		t.Fatalf("paging = %+v", paging)
	}
	a = e.get("/me/accounts", url.Values{"fields": {"name," + expand}, "limit": {"2"}, "after": {after}})
	rows = data(a)
	if len(rows) != 1 || rows[0]["id"] != "103" || rows[0]["instagram_business_account"].(map[string]any)["id"] != igTestAccount {
		t.Fatalf("second page = %+v", rows)
	}
	if _, more := a.body["paging"].(map[string]any)["next"]; more {
		t.Fatalf("a next link after the last page: %+v", a.body["paging"])
	}

	// A user who manages no Page: an empty list.
	e = newIGTestEnvWith(t, sim.Behavior{}, Options{Pages: map[string][]Page{igTestAccount: {}}})
	if rows := data(e.get("/me/accounts", url.Values{"fields": {expand}})); len(rows) != 0 {
		t.Fatalf("no pages = %+v", rows)
	}
}

// A VP9 picture in WebM is outside the Reels specifications twice (container and codec), and
// an HEVC one in MP4 inside them: the simulator reads both from the bytes, as Meta does.
func TestInstagramRefusesVP9WebM(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		video []byte
		ok    bool
	}{
		{"VP9 WebM", simtest.VP9WebM(t, 360, 640, 4*time.Second), false},
		{"HEVC MP4", simtest.HEVCMP4(t, 360, 640, 4*time.Second), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newIGTestEnv(t, sim.Behavior{})
			e.video = c.video
			id := e.create(e.media.URL+"/v.mp4", "x")
			e.clock.Advance(3 * time.Second)
			code, status := e.statusCode(id)
			if c.ok != (code == "FINISHED") {
				t.Fatalf("status %s %q", code, status)
			}
			if !c.ok && status != "Error: Media upload has failed with error code 2207026" {
				t.Fatalf("status %q, want subcode 2207026", status)
			}
		})
	}
}
