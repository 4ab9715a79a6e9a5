package tiktoksim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
)

// ttVideo is a mediatest MP4 padded to size bytes, generated as it is read: the zero padding
// after the samples is replaced by a pattern, so that large uploads cost no memory and bytes
// out of place change the hash.
type ttVideo struct {
	header []byte
	size   int64
}

func newTTVideo(size int64, dur time.Duration, w, h int) *ttVideo {
	return newTTVideoOf(size, mediatest.Options{Duration: dur, Width: w, Height: h})
}

// newTTVideoOf is newTTVideo for any mediatest options (a frame rate, say).
func newTTVideoOf(size int64, o mediatest.Options) *ttVideo {
	var small bytes.Buffer
	if err := mediatest.WriteMP4(&small, o); err != nil {
		panic(err)
	}
	o.Size = size
	pw := &ttPrefix{max: small.Len()}
	if err := mediatest.WriteMP4(pw, o); err != nil || pw.n != size {
		panic(fmt.Sprint("mediatest: ", err, pw.n))
	}
	return &ttVideo{header: pw.b, size: size}
}

type ttPrefix struct {
	b   []byte
	max int
	n   int64
}

func (w *ttPrefix) Write(p []byte) (int, error) {
	if room := w.max - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	w.n += int64(len(p))
	return len(p), nil
}

var ttPattern = func() []byte {
	b := make([]byte, 65521)
	for i := range b {
		b[i] = byte(i*7 + i>>11)
	}
	return b
}()

func (v *ttVideo) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) && off < v.size {
		var m int
		if off < int64(len(v.header)) {
			m = copy(p[n:], v.header[off:])
		} else {
			m = copy(p[n:], ttPattern[off%int64(len(ttPattern)):])
		}
		m = int(min(int64(m), v.size-off))
		n, off = n+m, off+int64(m)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (v *ttVideo) section(first, last int64) *io.SectionReader {
	return io.NewSectionReader(v, first, last-first+1)
}

func (v *ttVideo) sha() string {
	h := sha256.New()
	_, _ = io.Copy(h, v.section(0, v.size-1))
	return hex.EncodeToString(h.Sum(nil))
}

type ttEnv struct {
	t     *testing.T
	clock *clocktest.Clock
	sim   *Sim
	srv   *httptest.Server
	base  string
}

func newTTEnv(t *testing.T, opts Options, accounts sim.StaticAccounts) *ttEnv {
	t.Helper()
	return newTTEnvRand(t, opts, accounts, func() float64 { return 0.99 })
}

func newTTEnvRand(t *testing.T, opts Options, accounts sim.StaticAccounts, rnd func() float64) *ttEnv {
	t.Helper()
	if accounts == nil {
		accounts = sim.StaticAccounts{
			"tok":   {ID: "open_1", Username: "creator1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, ProcessingMS: -1}},
			"other": {ID: "open_2", Username: "creator2", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, ProcessingMS: -1}},
		}
	}
	e := &ttEnv{t: t, clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	mux := http.NewServeMux()
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	e.base = e.srv.URL + "/sandbox/tiktok"
	e.sim = NewSim(sim.Config{BaseURL: e.base, Accounts: accounts, Now: e.clock.Now,
		Rand: rnd}, opts)
	mux.Handle("/sandbox/tiktok/", e.sim)
	return e
}

type ttAnswer struct {
	status int
	header http.Header
	data   map[string]any
	code   string
	msg    string
}

// api POSTs JSON to an API path with a bearer token ("" for none).
func (e *ttEnv) api(path, token string, body any) ttAnswer {
	e.t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, _ := json.Marshal(body)
		if s, ok := body.(string); ok {
			b = []byte(s)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(http.MethodPost, e.base+path, rd)
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data  map[string]any `json:"data"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			LogID   string `json:"log_id"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &env); err != nil {
		e.t.Fatalf("%s: answer %s is not TikTok's shape: %v", path, raw, err)
	}
	if env.Error.LogID == "" {
		e.t.Errorf("%s: no log_id in %s", path, raw)
	}
	return ttAnswer{resp.StatusCode, resp.Header, env.Data, env.Error.Code, env.Error.Message}
}

func (e *ttEnv) init(token, mode string, size, chunk, count int64, post map[string]any) ttAnswer {
	e.t.Helper()
	path := "/v2/post/publish/video/init/"
	if mode == "inbox" {
		path = "/v2/post/publish/inbox/video/init/"
	}
	body := map[string]any{"source_info": map[string]any{
		"source": "FILE_UPLOAD", "video_size": size, "chunk_size": chunk, "total_chunk_count": count,
	}}
	if post != nil {
		body["post_info"] = post
	}
	return e.api(path, token, body)
}

func (e *ttEnv) status(token, publishID string) ttAnswer {
	e.t.Helper()
	return e.api("/v2/post/publish/status/fetch/", token, map[string]string{"publish_id": publishID})
}

// put sends bytes first..last of v to the upload URL with the given headers' defaults.
func (e *ttEnv) put(uploadURL string, v *ttVideo, first, last int64, mutate func(*http.Request)) (int, string, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPut, uploadURL, v.section(first, last))
	req.ContentLength = last - first + 1
	req.Header.Set("Content-Type", "video/mp4")
	req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, v.size))
	if mutate != nil {
		mutate(req)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Range"), string(body)
}

// upload sends v whole, in the chunks of the init, and returns the publish_id.
func (e *ttEnv) upload(token, mode string, v *ttVideo, post map[string]any) string {
	e.t.Helper()
	chunk, count := v.size, int64(1)
	if v.size > 64_000_000 {
		chunk, count = 10_000_000, v.size/10_000_000
	}
	a := e.init(token, mode, v.size, chunk, count, post)
	if a.code != "ok" {
		e.t.Fatalf("init: %d %s %s", a.status, a.code, a.msg)
	}
	url := a.data["upload_url"].(string)
	for i := range count {
		first, last := i*chunk, (i+1)*chunk-1
		if i == count-1 {
			last = v.size - 1
		}
		if st, _, body := e.put(url, v, first, last, nil); st != http.StatusPartialContent && st != http.StatusCreated {
			e.t.Fatalf("chunk %d: %d %s", i, st, body)
		}
	}
	return a.data["publish_id"].(string)
}

var direct = map[string]any{"privacy_level": "PUBLIC_TO_EVERYONE", "title": "hello"}

func TestTikTokAuthAndRouting(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{}, nil)
	for _, tok := range []string{"", "nope"} {
		if a := e.api("/v2/post/publish/creator_info/query/", tok, nil); a.status != 401 || a.code != "access_token_invalid" {
			t.Errorf("token %q: %d %s", tok, a.status, a.code)
		}
	}
	if a := e.api("/v2/post/publish/creator_info/query", "tok", nil); a.status != 404 {
		t.Errorf("path without the trailing slash: %d", a.status)
	}
	// Mounted with the prefix stripped, the same paths work.
	h := http.StripPrefix("/sandbox/tiktok", e.sim)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v2/post/publish/creator_info/query/", nil)
	req.Header.Set("Authorization", "Bearer tok")
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sandbox/tiktok/v2/post/publish/creator_info/query/", nil))
	if rec.Code != 401 {
		t.Errorf("stripped mount without token: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	e.sim.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("unprefixed path: %d %s", rec.Code, rec.Body)
	}
}

func TestTikTokCreatorInfo(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{PostsPerDay: 1}, nil)
	a := e.api("/v2/post/publish/creator_info/query/", "tok", nil)
	if a.status != 200 || a.code != "ok" || a.data["creator_username"] != "creator1" ||
		fmt.Sprint(a.data["privacy_level_options"]) != "[PUBLIC_TO_EVERYONE MUTUAL_FOLLOW_FRIENDS SELF_ONLY]" ||
		a.data["max_video_post_duration_sec"] != float64(600) || a.data["comment_disabled"] != false {
		t.Fatalf("%+v", a)
	}
	e.sim.SetCreator("open_2", Creator{PrivacyLevelOptions: []string{SelfOnly}, DuetDisabled: true})
	a = e.api("/v2/post/publish/creator_info/query/", "other", nil)
	if fmt.Sprint(a.data["privacy_level_options"]) != "[SELF_ONLY]" || a.data["duet_disabled"] != true {
		t.Fatalf("unaudited: %+v", a)
	}
	// At the daily cap creator_info answers HTTP 200 with the error code.
	if i := e.init("tok", "direct", 1_000_000, 1_000_000, 1, direct); i.code != "ok" {
		t.Fatal(i)
	}
	if a = e.api("/v2/post/publish/creator_info/query/", "tok", nil); a.status != 200 || a.code != "spam_risk_too_many_posts" {
		t.Fatalf("at cap: %+v", a)
	}
	if i := e.init("tok", "direct", 1_000_000, 1_000_000, 1, direct); i.status != 403 || i.code != "spam_risk_too_many_posts" {
		t.Fatalf("init at cap: %+v", i)
	}
	e.clock.Advance(24 * time.Hour)
	if i := e.init("tok", "direct", 1_000_000, 1_000_000, 1, direct); i.code != "ok" {
		t.Fatalf("next day: %+v", i)
	}
}

func TestTikTokInitValidation(t *testing.T) {
	t.Parallel()
	const (
		chunkInvalid = "The chunk size is invalid"
		countInvalid = "The total chunk count is invalid"
	)
	for _, c := range []struct {
		name               string
		size, chunk, count int64
		post               map[string]any
		status             int
		code, msg          string
	}{
		{"whole small video", 3_000_000, 3_000_000, 1, direct, 200, "ok", ""},
		{"TikTok's worked example", 50_000_123, 10_000_000, 5, direct, 200, "ok", ""},
		{"ceil instead of floor", 50_000_123, 10_000_000, 6, direct, 400, "invalid_params", countInvalid},
		{"whole 64 MB", 64_000_000, 64_000_000, 1, direct, 200, "ok", ""},
		{"two 10 MB chunks", 20_000_000, 10_000_000, 2, direct, 200, "ok", ""},
		{"one chunk declared smaller than the video", 15_000_000, 10_000_000, 1, direct, 400, "invalid_params", chunkInvalid},
		{"chunk larger than the video", 3_000_000, 5_242_880, 0, direct, 400, "invalid_params", chunkInvalid},
		{"small video cut in chunks", 4_000_000, 1_000_000, 4, direct, 400, "invalid_params", chunkInvalid},
		{"chunks under 5 MiB", 200_000_000, 5_000_000, 40, direct, 400, "invalid_params", chunkInvalid},
		{"chunks over 64 MB", 200_000_000, 65_000_000, 3, direct, 400, "invalid_params", chunkInvalid},
		{"over 64 MB in one chunk", 70_000_000, 70_000_000, 1, direct, 400, "invalid_params", chunkInvalid},
		{"over 4 GB", 4_000_000_001, 64_000_000, 62, direct, 400, "invalid_params", "The video size is invalid"},
		{"zero size", 0, 0, 0, direct, 400, "invalid_params", "The video size is invalid"},
		{"no privacy level", 1_000_000, 1_000_000, 1, map[string]any{"title": "x"}, 403, "privacy_level_option_mismatch", ""},
		{"privacy level not offered", 1_000_000, 1_000_000, 1, map[string]any{"privacy_level": "FOLLOWER_OF_CREATOR"}, 403, "privacy_level_option_mismatch", ""},
		{"no post_info", 1_000_000, 1_000_000, 1, nil, 403, "privacy_level_option_mismatch", ""},
		{"title of 2201 UTF-16 units", 1_000_000, 1_000_000, 1,
			map[string]any{"privacy_level": "SELF_ONLY", "title": strings.Repeat("😀", 1100) + "x"}, 400, "invalid_params", "2201"},
		{"title of 2200 UTF-16 units", 1_000_000, 1_000_000, 1,
			map[string]any{"privacy_level": "SELF_ONLY", "title": strings.Repeat("😀", 1100)}, 200, "ok", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newTTEnv(t, Options{}, nil)
			a := e.init("tok", "direct", c.size, c.chunk, c.count, c.post)
			if a.status != c.status || a.code != c.code || !strings.Contains(a.msg, c.msg) {
				t.Fatalf("got %d %s %q, want %d %s %q", a.status, a.code, a.msg, c.status, c.code, c.msg)
			}
			if c.code == "ok" && (!strings.HasPrefix(a.data["upload_url"].(string), e.base+"/video/?upload_id=") ||
				!strings.HasPrefix(a.data["publish_id"].(string), "v_pub_file~")) {
				t.Errorf("data %+v", a.data)
			}
		})
	}
	e := newTTEnv(t, Options{}, nil)
	for name, body := range map[string]any{
		"not JSON":       "{",
		"wrong type":     map[string]any{"source_info": map[string]any{"source": "FILE_UPLOAD", "video_size": "big"}},
		"no source_info": map[string]any{"post_info": direct},
		"unknown source": map[string]any{"source_info": map[string]any{"source": "S3"}},
	} {
		if a := e.api("/v2/post/publish/video/init/", "tok", body); a.status != 400 || a.code != "invalid_params" {
			t.Errorf("%s: %d %s", name, a.status, a.code)
		}
	}
	pull := map[string]any{"post_info": direct, "source_info": map[string]any{"source": "PULL_FROM_URL", "video_url": "https://example.com/v.mp4"}}
	if a := e.api("/v2/post/publish/video/init/", "tok", pull); a.status != 403 || a.code != "url_ownership_unverified" {
		t.Errorf("pull: %d %s", a.status, a.code)
	}
	// The inbox endpoint takes source_info only: no privacy level is needed.
	if a := e.init("tok", "inbox", 1_000_000, 1_000_000, 1, nil); a.code != "ok" || !strings.HasPrefix(a.data["publish_id"].(string), "v_inbox_file~") {
		t.Errorf("inbox: %+v", a)
	}
}

// TestTikTokUploadURL walks one upload through every answer of the upload URL.
func TestTikTokUploadURL(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{}, nil)
	v := newTTVideo(12_000_000, 10*time.Second, 1080, 1920)
	a := e.init("tok", "direct", v.size, 6_000_000, 2, direct)
	if a.code != "ok" {
		t.Fatal(a)
	}
	url, id := a.data["upload_url"].(string), a.data["publish_id"].(string)

	type putCase struct {
		name        string
		first, last int64
		mutate      func(*http.Request)
		status      int
		progress    string
	}
	run := func(cases []putCase) {
		t.Helper()
		for _, c := range cases {
			st, cr, body := e.put(url, v, c.first, c.last, c.mutate)
			if st != c.status || cr != c.progress {
				t.Errorf("%s: %d %q (%s), want %d %q", c.name, st, cr, body, c.status, c.progress)
			}
		}
	}
	run([]putCase{
		{"second chunk first", 6_000_000, 11_999_999, nil, 416, "bytes */12000000"},
		{"wrong content type", 0, 5_999_999, func(r *http.Request) { r.Header.Set("Content-Type", "application/octet-stream") }, 400, ""},
		{"wrong total", 0, 5_999_999, func(r *http.Request) { r.Header.Set("Content-Range", "bytes 0-5999999/12000001") }, 400, ""},
		{"no Content-Range", 0, 5_999_999, func(r *http.Request) { r.Header.Del("Content-Range") }, 400, ""},
		{"range not a chunk", 0, 4_999_999, nil, 400, "bytes */12000000"},
		{"Content-Length not the range", 0, 9, func(r *http.Request) { r.Header.Set("Content-Range", "bytes 0-5999999/12000000") }, 400, ""},
		{"wrong token", 0, 5_999_999, func(r *http.Request) {
			q := r.URL.Query()
			q.Set("upload_token", "x")
			r.URL.RawQuery = q.Encode()
		}, 404, ""},
		{"first chunk", 0, 5_999_999, nil, 206, "bytes 0-5999999/12000000"},
		{"first chunk again", 0, 5_999_999, nil, 416, "bytes 0-5999999/12000000"},
	})
	if s := e.status("tok", id); s.data["status"] != ProcessingUpload || s.data["uploaded_bytes"] != float64(6_000_000) {
		t.Errorf("status mid-upload: %+v", s.data)
	}
	run([]putCase{
		{"last chunk", 6_000_000, 11_999_999, nil, 201, "bytes 0-11999999/12000000"},
		{"last chunk again", 6_000_000, 11_999_999, nil, 416, "bytes 0-11999999/12000000"},
	})
	rec := e.sim.Recorder().Snapshot(nil)
	if len(rec.Uploads) != 1 || rec.Uploads[0] != (sim.Upload{Account: "open_1", Bytes: v.size, SHA256: v.sha()}) {
		t.Errorf("uploads %+v", rec.Uploads)
	}

	// Processing, then publishing; the public id only after moderation.
	if s := e.status("tok", id); s.data["status"] != ProcessingUpload {
		t.Errorf("during processing: %+v", s.data)
	}
	e.clock.Advance(2 * time.Second)
	s := e.status("tok", id)
	if s.data["status"] != PublishComplete || fmt.Sprint(s.data["publicaly_available_post_id"]) != "[]" {
		t.Errorf("published: %+v", s.data)
	}
	e.clock.Advance(3 * time.Second)
	s = e.status("tok", id)
	ids, _ := s.data["publicaly_available_post_id"].([]any)
	post, _ := e.sim.Post(id)
	if len(ids) != 1 || post.PostID == "" {
		t.Fatalf("after moderation: %+v", s.data)
	}
	rec = e.sim.Recorder().Snapshot(nil)
	if len(rec.Published) != 1 || rec.Published[0] != (sim.Published{Account: "open_1", ID: post.PostID,
		URL: "https://www.tiktok.com/@creator1/video/" + post.PostID, SHA256: v.sha(), Text: "hello"}) {
		t.Errorf("published %+v", rec.Published)
	}

	// Another account cannot read it; an unknown id is refused.
	if s := e.status("other", id); s.status != 400 || s.code != "token_not_authorized_for_specified_publish_id" {
		t.Errorf("other token: %+v", s)
	}
	if s := e.status("tok", "v_pub_file~v2-1.0"); s.status != 400 || s.code != "invalid_publish_id" {
		t.Errorf("unknown id: %+v", s)
	}

	// An upload URL is good for one hour.
	a = e.init("tok", "direct", v.size, 6_000_000, 2, direct)
	e.clock.Advance(time.Hour + time.Second)
	if st, _, _ := e.put(a.data["upload_url"].(string), v, 0, 5_999_999, nil); st != 403 {
		t.Errorf("expired URL: %d", st)
	}
	if st, _, _ := e.put(e.base+"/video/?upload_id=1&upload_token=x", v, 0, 5_999_999, nil); st != 404 {
		t.Errorf("unknown upload: %d", st)
	}
}

// TestTikTokPartialChunk: a chunk whose body stops short leaves no trace.
func TestTikTokPartialChunk(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{}, nil)
	v := newTTVideo(12_000_000, 10*time.Second, 1080, 1920)
	a := e.init("tok", "direct", v.size, 6_000_000, 2, direct)
	url := a.data["upload_url"].(string)
	if st, _, _ := e.put(url, v, 0, 5_999_999, nil); st != 206 {
		t.Fatal(st)
	}
	// A body that breaks after 1 MB.
	req, _ := http.NewRequest(http.MethodPut, url, io.MultiReader(v.section(6_000_000, 6_999_999), failing{}))
	req.ContentLength = 6_000_000
	req.Header.Set("Content-Type", "video/mp4")
	req.Header.Set("Content-Range", "bytes 6000000-11999999/12000000")
	if resp, err := e.srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("broken body answered %d", resp.StatusCode)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, cr, body := e.put(url, v, 6_000_000, 11_999_999, nil)
		if st == 201 {
			break
		}
		// The handler of the broken request may still hold the upload for a moment.
		if time.Now().After(deadline) {
			t.Fatalf("last chunk after a broken one: %d %q %s", st, cr, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.sha() {
		t.Errorf("uploads %+v, want %s", rec.Uploads, v.sha())
	}
}

func newTTMOV(t *testing.T, size int64) *ttVideo {
	b := mediatest.MP4Bytes(t, mediatest.Options{Brand: "qt  ", Duration: 5 * time.Second, Size: size})
	return &ttVideo{header: b, size: int64(len(b))}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, fmt.Errorf("broken") }

func TestTikTokVideoChecks(t *testing.T) {
	t.Parallel()
	wb := mediatest.WebMBytes(t, mediatest.Options{Duration: 10 * time.Second, Width: 720, Height: 1280})
	webm := &ttVideo{header: wb, size: int64(len(wb))}
	junk := &ttVideo{header: []byte("this is not a video"), size: 2_000_000}
	for _, c := range []struct {
		name    string
		v       *ttVideo
		mode    string
		creator *Creator
		fail    string
		status  string
		reason  string
	}{
		{name: "mov", v: newTTMOV(t, 2_000_000), mode: "direct", status: PublishComplete},
		{name: "good", v: newTTVideo(2_000_000, 10*time.Second, 1080, 1920), mode: "direct", status: PublishComplete},
		{name: "webm", v: webm, mode: "direct", status: PublishComplete},
		{name: "not a video", v: junk, mode: "direct", status: Failed, reason: "file_format_check_failed"},
		{name: "too short", v: newTTVideo(2_000_000, 2*time.Second, 1080, 1920), mode: "direct", status: Failed, reason: "duration_check_failed"},
		{name: "longer than the creator may post", v: newTTVideo(2_000_000, 90*time.Second, 1080, 1920), mode: "direct",
			creator: &Creator{MaxVideoPostDurationSec: 60}, status: Failed, reason: "duration_check_failed"},
		{name: "inbox may exceed the creator's maximum", v: newTTVideo(2_000_000, 90*time.Second, 1080, 1920), mode: "inbox",
			creator: &Creator{MaxVideoPostDurationSec: 60}, status: SendToUserInbox},
		{name: "over ten minutes", v: newTTVideo(2_000_000, 601*time.Second, 1080, 1920), mode: "inbox", status: Failed, reason: "duration_check_failed"},
		{name: "too small", v: newTTVideo(2_000_000, 10*time.Second, 320, 568), mode: "direct", status: Failed, reason: "picture_size_check_failed"},
		{name: "too large", v: newTTVideo(2_000_000, 10*time.Second, 2160, 4100), mode: "direct", status: Failed, reason: "picture_size_check_failed"},
		{name: "reject", v: newTTVideo(2_000_000, 10*time.Second, 1080, 1920), mode: "direct", fail: sim.FailReject, status: Failed, reason: "file_format_check_failed"},
		// The media transfer guide's frame rate restriction, 23 to 60 fps (issue 31, item 8).
		{name: "60 fps", v: newTTVideoOf(2_000_000, mediatest.Options{Duration: 10 * time.Second, FPS: 60}), mode: "direct", status: PublishComplete},
		{name: "23 fps", v: newTTVideoOf(2_000_000, mediatest.Options{Duration: 10 * time.Second, FPS: 23}), mode: "direct", status: PublishComplete},
		{name: "120 fps", v: newTTVideoOf(2_000_000, mediatest.Options{Duration: 10 * time.Second, FPS: 120}), mode: "direct", status: Failed, reason: "frame_rate_check_failed"},
		{name: "15 fps", v: newTTVideoOf(2_000_000, mediatest.Options{Duration: 10 * time.Second, FPS: 15}), mode: "direct", status: Failed, reason: "frame_rate_check_failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newTTEnv(t, Options{}, sim.StaticAccounts{"tok": {ID: "open_1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: c.fail, ProcessingMS: -1}}})
			if c.creator != nil {
				e.sim.SetCreator("open_1", *c.creator)
			}
			post := direct
			if c.mode == "inbox" {
				post = nil
			}
			id := e.upload("tok", c.mode, c.v, post)
			e.clock.Advance(2 * time.Second)
			s := e.status("tok", id)
			if s.data["status"] != c.status || (c.reason != "" && s.data["fail_reason"] != c.reason) {
				t.Fatalf("%+v", s.data)
			}
			rec := e.sim.Recorder().Snapshot(nil)
			if len(rec.Uploads) != 1 || (c.status == PublishComplete) != (len(rec.Published) == 1) {
				t.Errorf("record %+v", rec)
			}
		})
	}
}

func TestTikTokInbox(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{}, sim.StaticAccounts{"tok": {ID: "open_1", Username: "c", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, ProcessingMS: 0}}})
	v := newTTVideo(1_000_000, 5*time.Second, 720, 1280)
	id := e.upload("tok", "inbox", v, nil)
	if s := e.status("tok", id); s.data["status"] != SendToUserInbox {
		t.Fatalf("%+v", s.data)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Published) != 0 {
		t.Fatalf("an inbox upload was published: %+v", rec.Published)
	}
	if !e.sim.CompleteInbox(id) {
		t.Fatal("CompleteInbox")
	}
	s := e.status("tok", id)
	if s.data["status"] != PublishComplete || len(s.data["publicaly_available_post_id"].([]any)) != 0 {
		t.Fatalf("after the creator posted: %+v", s.data)
	}
	if rec := e.sim.Recorder().Snapshot(nil); len(rec.Published) != 1 {
		t.Fatalf("published %+v", rec.Published)
	}
	// At most five pending inbox uploads per day.
	for i := range 5 {
		if a := e.init("tok", "inbox", 1_000_000, 1_000_000, 1, nil); a.code != "ok" {
			t.Fatalf("pending share %d: %+v", i, a)
		}
	}
	e.clock.Advance(time.Minute) // out of the init rate limit's window
	if a := e.init("tok", "inbox", 1_000_000, 1_000_000, 1, nil); a.status != 403 || a.code != "spam_risk_too_many_pending_share" {
		t.Fatalf("sixth pending share: %+v", a)
	}
}

func TestTikTokRateLimits(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{}, nil)
	for _, c := range []struct {
		path  string
		limit int
	}{
		{"/v2/post/publish/creator_info/query/", 20},
		{"/v2/post/publish/status/fetch/", 30},
	} {
		for i := range c.limit {
			if a := e.api(c.path, "tok", map[string]string{"publish_id": "x"}); a.status == 429 {
				t.Fatalf("%s: limited at call %d", c.path, i+1)
			}
		}
		e.clock.Advance(10 * time.Second)
		a := e.api(c.path, "tok", map[string]string{"publish_id": "x"})
		if a.status != 429 || a.code != "rate_limit_exceeded" || a.header.Get("Retry-After") != "50" {
			t.Fatalf("%s: %d %s Retry-After %q", c.path, a.status, a.code, a.header.Get("Retry-After"))
		}
		// The limit is per token.
		if a := e.api(c.path, "other", map[string]string{"publish_id": "x"}); a.status == 429 {
			t.Fatalf("%s: another token is limited", c.path)
		}
		e.clock.Advance(50 * time.Second)
		if a := e.api(c.path, "tok", map[string]string{"publish_id": "x"}); a.status == 429 {
			t.Fatalf("%s: still limited after the window", c.path)
		}
	}
	for i := range 7 {
		a := e.init("other", "inbox", 1_000_000, 1_000_000, 1, nil)
		if want := i < 6; (a.status != 429) != want {
			t.Fatalf("inbox init %d: %d %s", i+1, a.status, a.code)
		}
	}
}

func TestTikTokFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		code   string
	}{
		{sim.FailUnavailable, 503, "internal_error"},
		{sim.FailAuth, 401, "access_token_invalid"},
		{sim.FailRateLimit, 429, "rate_limit_exceeded"},
	} {
		e := newTTEnv(t, Options{}, sim.StaticAccounts{"tok": {ID: "open_1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: c.fail}}})
		for _, path := range []string{"/v2/post/publish/creator_info/query/", "/v2/post/publish/video/init/", "/v2/post/publish/status/fetch/"} {
			a := e.api(path, "tok", map[string]any{})
			if a.status != c.status || a.code != c.code {
				t.Errorf("%s %s: %d %s", c.fail, path, a.status, a.code)
			}
			if c.fail == sim.FailRateLimit && a.header.Get("Retry-After") == "" {
				t.Errorf("%s: no Retry-After", path)
			}
		}
	}
	// Server faults reach the upload URL too.
	var failNext atomic.Bool
	e := newTTEnvRand(t, Options{}, sim.StaticAccounts{"tok": {ID: "open_1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailFlaky, FailRate: 0.5}}},
		func() float64 {
			if failNext.Load() {
				return 0
			}
			return 0.99
		})
	v := newTTVideo(1_000_000, 5*time.Second, 1080, 1920)
	a := e.init("tok", "direct", v.size, v.size, 1, direct)
	failNext.Store(true)
	if st, _, _ := e.put(a.data["upload_url"].(string), v, 0, v.size-1, nil); st != 503 {
		t.Errorf("flaky upload: %d", st)
	}
	failNext.Store(false)
	if st, _, _ := e.put(a.data["upload_url"].(string), v, 0, v.size-1, nil); st != 201 {
		t.Errorf("upload after a fault: %d", st)
	}
}

func TestTikTokChunkRules(t *testing.T) {
	t.Parallel()
	// Every valid plan covers the file with chunks in the documented bounds.
	for _, size := range []int64{1, 4_999_999, 5_242_880, 20_000_000, 64_000_000, 64_000_001, 73_000_000, 4_000_000_000} {
		for _, chunk := range []int64{5_242_880, 10_000_000, 32_000_001, 64_000_000, size} {
			count := size / max(chunk, 1)
			if tiktokCheckChunks(size, chunk, count) != "" {
				continue
			}
			last := size - (count-1)*chunk
			if count == 1 && (chunk != size || size > 64_000_000) ||
				count > 1 && (chunk < 5_242_880 || chunk > 64_000_000 || last > 128_000_000 || last < chunk) {
				t.Errorf("accepted %d in %d×%d (last %d)", size, count, chunk, last)
			}
		}
	}
}

// userInfo sends a request to /v2/user/info/ with the query and a bearer token.
func (e *ttEnv) userInfo(method, query, token string) ttAnswer {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.base+"/v2/user/info/?"+query, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data  map[string]any `json:"data"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			LogID   string `json:"log_id"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &env); err != nil || env.Error.Code == "" || env.Error.LogID == "" {
		e.t.Fatalf("user info: answer %s is not TikTok's shape: %v", raw, err)
	}
	return ttAnswer{resp.StatusCode, resp.Header, env.Data, env.Error.Code, env.Error.Message}
}

func TestTikTokUserInfo(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{
		Creators: map[string]Creator{"open_1": {Nickname: "Creator One"}},
		Scopes:   map[string][]string{"open_2": {"user.info.basic", "video.upload"}},
	}, nil)
	a := e.userInfo("GET", "fields=open_id,union_id,avatar_url,display_name,username", "tok")
	user, _ := a.data["user"].(map[string]any)
	if a.status != 200 || a.code != "ok" || user["open_id"] != "open_1" || user["display_name"] != "Creator One" ||
		user["username"] != "creator1" || user["avatar_url"] != e.base+"/avatar/open_1.jpeg" || len(user["union_id"].(string)) != 32 || len(user) != 5 {
		t.Fatalf("user info: %d %s %+v", a.status, a.code, a.data)
	}
	// Only what is asked for; the union_id is stable.
	b := e.userInfo("GET", "fields=union_id", "tok")
	if u := b.data["user"].(map[string]any); len(u) != 1 || u["union_id"] != user["union_id"] {
		t.Fatalf("union_id only: %+v", b.data)
	}

	for _, c := range []struct {
		name, method, query, token string
		status                     int
		code                       string
	}{
		{"no fields", "GET", "", "tok", 400, "invalid_params"},
		{"empty fields", "GET", "fields=", "tok", 400, "invalid_params"},
		{"unknown field", "GET", "fields=open_id,email", "tok", 400, "invalid_params"},
		{"wrong method", "POST", "fields=open_id", "tok", 405, "invalid_params"},
		{"no token", "GET", "fields=open_id", "", 401, "access_token_invalid"},
		{"unknown token", "GET", "fields=open_id", "nope", 401, "access_token_invalid"},
		// open_2 granted user.info.basic only: username (user.info.profile) fails the request.
		{"field outside the scopes", "GET", "fields=open_id,username", "other", 401, "scope_not_authorized"},
		{"stats outside the scopes", "GET", "fields=open_id,follower_count", "other", 401, "scope_not_authorized"},
	} {
		a := e.userInfo(c.method, c.query, c.token)
		if a.status != c.status || a.code != c.code {
			t.Errorf("%s: %d %s %s", c.name, a.status, a.code, a.msg)
		}
	}
	if a := e.userInfo("GET", "fields=open_id,display_name,avatar_url", "other"); a.status != 200 || a.data["user"].(map[string]any)["open_id"] != "open_2" {
		t.Fatalf("basic fields with user.info.basic: %d %s %+v", a.status, a.code, a.data)
	}
	// The scopes bind the publishing endpoints too: no video.publish, no creator_info nor
	// direct post; video.upload allows the inbox.
	if a := e.api("/v2/post/publish/creator_info/query/", "other", nil); a.status != 401 || a.code != "scope_not_authorized" {
		t.Errorf("creator_info without video.publish: %d %s", a.status, a.code)
	}
	if a := e.init("other", "direct", 1000, 1000, 1, nil); a.status != 401 || a.code != "scope_not_authorized" {
		t.Errorf("direct init without video.publish: %d %s", a.status, a.code)
	}
	if a := e.init("other", "inbox", 1000, 1000, 1, nil); a.status != 200 || a.code != "ok" {
		t.Errorf("inbox init with video.upload: %d %s %s", a.status, a.code, a.msg)
	}
}

func TestTikTokUserInfoFaults(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{UserInfoPerMinute: 2}, sim.StaticAccounts{
		"tok":   {ID: "open_1"},
		"down":  {ID: "d", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailUnavailable}},
		"authx": {ID: "a", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailAuth}},
		"slow":  {ID: "s", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, Fail: sim.FailRateLimit}},
	})
	for tok, want := range map[string]struct {
		status int
		code   string
	}{"down": {503, "internal_error"}, "authx": {401, "access_token_invalid"}, "slow": {429, "rate_limit_exceeded"}} {
		if a := e.userInfo("GET", "fields=open_id", tok); a.status != want.status || a.code != want.code {
			t.Errorf("%s: %d %s", tok, a.status, a.code)
		}
	}
	// The per-minute limit; it frees up as the window slides.
	for range 2 {
		if a := e.userInfo("GET", "fields=open_id", "tok"); a.status != 200 {
			t.Fatalf("under the limit: %d %s", a.status, a.code)
		}
	}
	if a := e.userInfo("GET", "fields=open_id", "tok"); a.status != 429 || a.code != "rate_limit_exceeded" || a.header.Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %s", a.status, a.code)
	}
	e.clock.Advance(time.Minute)
	if a := e.userInfo("GET", "fields=open_id", "tok"); a.status != 200 {
		t.Fatalf("a minute later: %d %s", a.status, a.code)
	}
}

// TestUnauditedApp: an app TikTok has not audited (a sandbox account's default) may direct-post
// SELF_ONLY only; any other privacy level is refused with TikTok's code, while creator_info
// still offers the account's levels and inbox uploads are not restricted. An audited app may
// use every level the creator has.
func TestUnauditedApp(t *testing.T) {
	t.Parallel()
	e := newTTEnv(t, Options{}, sim.StaticAccounts{
		"new":     {ID: "open_1", Username: "fresh", Behavior: sim.Behavior{ProcessingMS: -1}},
		"audited": {ID: "open_2", Username: "known", Behavior: sim.Behavior{ProcessingMS: -1, AppAccess: sim.AppAccessAudited}},
	})
	if a := e.api("/v2/post/publish/creator_info/query/", "new", nil); a.status != 200 ||
		fmt.Sprint(a.data["privacy_level_options"]) != "[PUBLIC_TO_EVERYONE MUTUAL_FOLLOW_FRIENDS SELF_ONLY]" {
		t.Fatalf("creator_info of an unaudited app's creator: %+v", a)
	}
	for _, c := range []struct {
		token, mode, privacy string
		status               int
		code                 string
	}{
		{"new", "direct", Public, 403, "unaudited_client_can_only_post_to_private_accounts"},
		{"new", "direct", Friends, 403, "unaudited_client_can_only_post_to_private_accounts"},
		{"new", "direct", SelfOnly, 200, "ok"},
		{"new", "inbox", "", 200, "ok"},
		{"audited", "direct", Public, 200, "ok"},
		{"audited", "direct", Friends, 200, "ok"},
	} {
		var post map[string]any
		if c.privacy != "" {
			post = map[string]any{"privacy_level": c.privacy, "title": "t"}
		}
		a := e.init(c.token, c.mode, 1_000_000, 1_000_000, 1, post)
		if a.status != c.status || a.code != c.code {
			t.Errorf("%s %s %s: %d %s %q, want %d %s", c.token, c.mode, c.privacy, a.status, a.code, a.msg, c.status, c.code)
		}
	}
}

// TestUnauditedAppPosters: an unaudited app lets at most five creators direct-post in 24 hours.
// A sixth is refused with reached_active_user_cap while the five post on; a creator counts
// from their first post to a day after their last, and neither inbox uploads, an audited
// app's creators nor another app's count.
func TestUnauditedAppPosters(t *testing.T) {
	t.Parallel()
	accounts := sim.StaticAccounts{}
	for i := 1; i <= 7; i++ {
		accounts[fmt.Sprintf("c%d", i)] = sim.Account{ID: fmt.Sprintf("open_%d", i), Behavior: sim.Behavior{ProcessingMS: -1}}
	}
	accounts["audited"] = sim.Account{ID: "open_a", Behavior: sim.Behavior{ProcessingMS: -1, AppAccess: sim.AppAccessAudited}}
	accounts["other-app"] = sim.Account{ID: "open_o", Behavior: sim.Behavior{ProcessingMS: -1}, App: "other"}
	e := newTTEnv(t, Options{InitPerMinute: 100}, accounts)
	direct := func(token string) ttAnswer {
		return e.init(token, "direct", 1_000_000, 1_000_000, 1, map[string]any{"privacy_level": SelfOnly, "title": "t"})
	}
	want := func(what string, a ttAnswer, status int, code string) {
		t.Helper()
		if a.status != status || a.code != code {
			t.Fatalf("%s: %d %s %q, want %d %s", what, a.status, a.code, a.msg, status, code)
		}
	}

	for _, tok := range []string{"c1", "c2", "c3", "c4", "c5"} {
		want(tok, direct(tok), 200, "ok")
	}
	e.clock.Advance(time.Hour)
	want("a sixth creator", direct("c6"), 403, "reached_active_user_cap")
	want("a sixth creator's inbox upload", e.init("c6", "inbox", 1_000_000, 1_000_000, 1, nil), 200, "ok")
	want("a counted creator", direct("c1"), 200, "ok")
	want("an audited app's creator", direct("audited"), 200, "ok")
	want("another app's creator", direct("other-app"), 200, "ok")

	// A day after c2..c5's posts, their places are free; c1, who posted an hour later, holds
	// one until a day after that post.
	e.clock.Advance(23*time.Hour + time.Second)
	for _, tok := range []string{"c6", "c7", "c2", "c3"} {
		want(tok+" the next day", direct(tok), 200, "ok")
	}
	want("c4 after c2, c3, c6, c7 and c1 took the places", direct("c4"), 403, "reached_active_user_cap")
}
