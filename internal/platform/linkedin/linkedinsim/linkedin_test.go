package linkedinsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

const liMember = "liMember1"

type liEnv struct {
	t     *testing.T
	srv   *httptest.Server
	sim   *Sim
	clock *clocktest.Clock
	rec   *sim.Recorder
}

func newLiEnv(t *testing.T, b sim.Behavior, opts Options) *liEnv {
	t.Helper()
	e := &liEnv{t: t, clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), rec: &sim.Recorder{}}
	mux := http.NewServeMux()
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	if b.ProcessingMS == 0 {
		b.ProcessingMS = 1000
	}
	e.sim = NewSim(sim.Config{
		BaseURL:  e.srv.URL + "/sandbox/linkedin",
		Accounts: sim.StaticAccounts{"tok": {ID: liMember, Username: "Grace Hopper", Behavior: b}, "other": {ID: "someoneElse"}},
		Recorder: e.rec, Now: e.clock.Now, Rand: func() float64 { return 0.99 },
	}, opts)
	mux.Handle("/sandbox/linkedin/", http.StripPrefix("/sandbox/linkedin", e.sim))
	return e
}

type liAnswer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// call sends a request with LinkedIn's headers; hdr overrides them ("" deletes).
func (e *liEnv) call(method, path string, body any, hdr map[string]string) liAnswer {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	u := path
	if !strings.HasPrefix(path, "http") {
		u = e.srv.URL + "/sandbox/linkedin" + path
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("LinkedIn-Version", "202601")
	req.Header.Set("X-Restli-Protocol-Version", "2.0.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
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
	raw, _ := io.ReadAll(resp.Body)
	a := liAnswer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (a liAnswer) want(t *testing.T, status int, fields map[string]any) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	for k, v := range fields {
		if got := fmt.Sprint(a.body[k]); got != fmt.Sprint(v) {
			t.Fatalf("%s = %q, want %q (%s)", k, got, fmt.Sprint(v), a.raw)
		}
	}
}

func liVideo(t *testing.T, size int64, dur time.Duration, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := mediatest.WriteMP4(&b, mediatest.Options{Duration: dur, Width: w, Height: h, Size: size}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type liUpload struct {
	Video, Token string
	Parts        []struct {
		URL         string `json:"uploadUrl"`
		First, Last int64
	}
	Thumbnail string
}

func (e *liEnv) initialize(size int64, thumb bool) liUpload {
	e.t.Helper()
	a := e.call(http.MethodPost, "/rest/videos?action=initializeUpload", map[string]any{"initializeUploadRequest": map[string]any{
		"owner": "urn:li:person:" + liMember, "fileSizeBytes": size, "uploadCaptions": false, "uploadThumbnail": thumb}}, nil)
	a.want(e.t, http.StatusOK, nil)
	var out struct {
		Value struct {
			Video, UploadToken, ThumbnailUploadURL string
			UploadInstructions                     []struct {
				UploadURL           string `json:"uploadUrl"`
				FirstByte, LastByte int64
			}
		}
	}
	_ = json.Unmarshal([]byte(a.raw), &out)
	u := liUpload{Video: out.Value.Video, Token: out.Value.UploadToken, Thumbnail: out.Value.ThumbnailUploadURL}
	for _, in := range out.Value.UploadInstructions {
		u.Parts = append(u.Parts, struct {
			URL         string `json:"uploadUrl"`
			First, Last int64
		}{in.UploadURL, in.FirstByte, in.LastByte})
	}
	return u
}

func (e *liEnv) put(u string, ctype string, body []byte) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("ETag")
}

// uploadAll uploads every part and returns the ETags.
func (e *liEnv) uploadAll(u liUpload, data []byte) []string {
	e.t.Helper()
	var etags []string
	for _, p := range u.Parts {
		st, etag := e.put(p.URL, "application/octet-stream", data[p.First:p.Last+1])
		if st != http.StatusCreated || etag == "" {
			e.t.Fatalf("part %d-%d: %d %q", p.First, p.Last, st, etag)
		}
		etags = append(etags, etag)
	}
	return etags
}

func (e *liEnv) finalize(u liUpload, etags []string) liAnswer {
	return e.call(http.MethodPost, "/rest/videos?action=finalizeUpload", map[string]any{"finalizeUploadRequest": map[string]any{
		"video": u.Video, "uploadToken": u.Token, "uploadedPartIds": etags}}, nil)
}

func videoPath(urn string) string { return "/rest/videos/" + url.QueryEscape(urn) }

func liPost(video, commentary string) map[string]any {
	return map[string]any{
		"author": "urn:li:person:" + liMember, "commentary": commentary, "visibility": "PUBLIC",
		"distribution":   map[string]any{"feedDistribution": "MAIN_FEED", "targetEntities": []string{}, "thirdPartyDistributionChannels": []string{}},
		"content":        map[string]any{"media": map[string]any{"title": "t", "id": video}},
		"lifecycleState": "PUBLISHED", "isReshareDisabledByAuthor": false,
	}
}

// ready uploads, finalizes and processes a video, and returns its URN.
func (e *liEnv) ready(data []byte) string {
	e.t.Helper()
	u := e.initialize(int64(len(data)), false)
	e.finalize(u, e.uploadAll(u, data)).want(e.t, http.StatusOK, nil)
	e.clock.Advance(2 * time.Second)
	e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(e.t, http.StatusOK, map[string]any{"status": Available})
	return u.Video
}

func TestLinkedInVersionsAndAuth(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	body := map[string]any{"initializeUploadRequest": map[string]any{"owner": "urn:li:person:" + liMember, "fileSizeBytes": 100000}}
	path := "/rest/videos?action=initializeUpload"
	for _, c := range []struct {
		name   string
		hdr    map[string]string
		status int
		fields map[string]any
	}{
		{"no version", map[string]string{"LinkedIn-Version": ""}, 400, map[string]any{"code": "VERSION_MISSING"}},
		{"sunset version", map[string]string{"LinkedIn-Version": "202501"}, 426, map[string]any{"code": "NONEXISTENT_VERSION", "message": "Requested version 20250101 is not active"}},
		{"future version", map[string]string{"LinkedIn-Version": "202603"}, 426, map[string]any{"code": "NONEXISTENT_VERSION"}},
		{"never released version", map[string]string{"LinkedIn-Version": "202512"}, 426, map[string]any{"code": "NONEXISTENT_VERSION", "message": "Requested version 20251201 is not active"}},
		{"malformed version", map[string]string{"LinkedIn-Version": "2026-01"}, 426, map[string]any{"code": "NONEXISTENT_VERSION"}},
		{"oldest active", map[string]string{"LinkedIn-Version": "202503"}, 200, nil},
		{"patch version", map[string]string{"LinkedIn-Version": "202602.01"}, 200, nil},
		{"no protocol", map[string]string{"X-Restli-Protocol-Version": ""}, 400, nil},
		{"no token", map[string]string{"Authorization": ""}, 401, map[string]any{"code": "INVALID_ACCESS_TOKEN", "serviceErrorCode": 65600}},
		{"bad token", map[string]string{"Authorization": "Bearer forged"}, 401, map[string]any{"code": "INVALID_ACCESS_TOKEN"}},
		{"form body", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 400, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.call(http.MethodPost, path, body, c.hdr).want(t, c.status, c.fields)
		})
	}
	// userinfo is unversioned.
	a := e.call(http.MethodGet, "/v2/userinfo", nil, map[string]string{"LinkedIn-Version": "", "X-Restli-Protocol-Version": ""})
	a.want(t, 200, map[string]any{"sub": liMember, "name": "Grace Hopper", "given_name": "Grace", "family_name": "Hopper"})
	e.call(http.MethodGet, "/v2/userinfo", nil, map[string]string{"Authorization": "Bearer x"}).want(t, 401, map[string]any{"serviceErrorCode": 65600})
}

func TestLinkedInFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		fields map[string]any
	}{
		{sim.FailUnavailable, 503, nil},
		{sim.FailAuth, 401, map[string]any{"code": "EXPIRED_ACCESS_TOKEN", "serviceErrorCode": 65602}},
		{sim.FailRateLimit, 429, map[string]any{"code": "TOO_MANY_REQUESTS", "serviceErrorCode": 101}},
	} {
		e := newLiEnv(t, sim.Behavior{Fail: c.fail}, Options{})
		e.call(http.MethodGet, "/v2/userinfo", nil, nil).want(t, c.status, c.fields)
		e.call(http.MethodGet, videoPath("urn:li:video:x"), nil, nil).want(t, c.status, c.fields)
	}
}

func TestLinkedInUploadRules(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	data := liVideo(t, 9<<20, 10*time.Second, 1080, 1920)

	// initializeUpload.
	init := func(owner string, size int64) liAnswer {
		return e.call(http.MethodPost, "/rest/videos?action=initializeUpload", map[string]any{"initializeUploadRequest": map[string]any{
			"owner": owner, "fileSizeBytes": size}}, nil)
	}
	init("urn:li:person:someoneElse", 1<<20).want(t, 403, map[string]any{"code": "ACCESS_DENIED"})
	init("urn:li:person:"+liMember, 1000).want(t, 400, nil)
	init("urn:li:person:"+liMember, 300_000_000).want(t, 400, nil)
	e.call(http.MethodPost, "/rest/videos?action=initializeUpload", map[string]any{"owner": "x"}, nil).want(t, 400, nil)

	u := e.initialize(int64(len(data)), false)
	if len(u.Parts) != 3 || u.Parts[0].Last != 4194303 || u.Parts[1].First != 4194304 || u.Parts[2].Last != int64(len(data))-1 {
		t.Fatalf("parts %+v", u.Parts)
	}

	// Part uploads.
	p0 := u.Parts[0]
	if st, _ := e.put(p0.URL, "video/mp4", data[:p0.Last+1]); st != 400 {
		t.Errorf("wrong Content-Type: %d", st)
	}
	if st, _ := e.put(p0.URL, "application/octet-stream", data[:p0.Last]); st != 400 {
		t.Errorf("short part: %d", st)
	}
	if st, _ := e.put(strings.Replace(p0.URL, "sau=", "sau=x", 1), "application/octet-stream", data[:p0.Last+1]); st != 403 {
		t.Errorf("bad signature: %d", st)
	}
	etags := e.uploadAll(u, data)
	if _, again := e.put(p0.URL, "application/octet-stream", data[:p0.Last+1]); again != etags[0] {
		t.Errorf("the same part sent again has ETag %q, was %q", again, etags[0])
	}

	// GET needs the URN encoded, and the owner.
	e.call(http.MethodGet, "/rest/videos/"+u.Video, nil, nil).want(t, 400, nil)
	e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(t, 200, map[string]any{"status": WaitingUpload})
	e.call(http.MethodGet, videoPath(u.Video), nil, map[string]string{"Authorization": "Bearer other"}).want(t, 403, nil)

	// Finalize: token, all ETags in order, once.
	e.call(http.MethodPost, "/rest/videos?action=finalizeUpload", map[string]any{"finalizeUploadRequest": map[string]any{
		"video": u.Video, "uploadToken": "wrong", "uploadedPartIds": etags}}, nil).want(t, 400, nil)
	e.finalize(u, []string{etags[1], etags[0], etags[2]}).want(t, 400, nil)
	e.finalize(u, etags[:2]).want(t, 400, nil)
	if len(e.rec.Snapshot(nil).Uploads) != 0 {
		t.Fatal("an unfinalized upload was recorded")
	}
	e.finalize(u, etags).want(t, 200, nil)
	e.finalize(u, etags).want(t, 400, nil)
	if st, _ := e.put(p0.URL, "application/octet-stream", data[:p0.Last+1]); st != 400 {
		t.Errorf("part after finalize: %d", st)
	}
	ups := e.rec.Snapshot(nil).Uploads
	if len(ups) != 1 || ups[0].Bytes != int64(len(data)) {
		t.Fatalf("uploads %+v", ups)
	}

	// Processing, then AVAILABLE; posting before is refused.
	e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(t, 200, map[string]any{"status": Processing})
	e.call(http.MethodPost, "/rest/posts", liPost(u.Video, "early"), nil).want(t, 400, nil)
	e.clock.Advance(time.Second)
	e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(t, 200, map[string]any{"status": Available})

	// Expired upload URLs.
	u2 := e.initialize(int64(len(data)), false)
	e.clock.Advance(25 * time.Hour)
	if st, _ := e.put(u2.Parts[0].URL, "application/octet-stream", data[:u2.Parts[0].Last+1]); st != 403 {
		t.Errorf("expired URL: %d", st)
	}
}

// A PUT cut short that the simulator finishes reading only after the client sent the part
// again whole (the order a retry on a new connection can take) leaves that copy's bytes and
// ETag alone.
func TestLinkedInCutPartAfterRetry(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	data := liVideo(t, 9<<20, 10*time.Second, 1080, 1920)
	u := e.initialize(int64(len(data)), false)
	etags := e.uploadAll(u, data)

	p1 := u.Parts[1]
	cut := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte{0xAA}, 1<<20)), iotest.ErrReader(errors.New("connection reset")))
	req := httptest.NewRequest(http.MethodPut, p1.URL, cut)
	req.ContentLength = p1.Last - p1.First + 1
	req.Header.Set("Content-Type", "application/octet-stream")
	w := httptest.NewRecorder()
	e.sim.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("cut part: %d %s", w.Code, w.Body)
	}

	e.finalize(u, etags).want(t, http.StatusOK, nil)
	sum := sha256.Sum256(data)
	if ups := e.rec.Snapshot(nil).Uploads; len(ups) != 1 || ups[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("uploads %+v; want the video as sent whole", ups)
	}
}

func TestLinkedInProcessingFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		b      sim.Behavior
		data   func(t *testing.T) []byte
		reason string
	}{
		{"reject", sim.Behavior{Fail: sim.FailReject}, func(t *testing.T) []byte { return liVideo(t, 1<<20, 10*time.Second, 1080, 1920) }, "not supported"},
		{"too short", sim.Behavior{}, func(t *testing.T) []byte { return liVideo(t, 1<<20, 2*time.Second, 1080, 1920) }, "3 seconds"},
		{"too tall", sim.Behavior{}, func(t *testing.T) []byte { return liVideo(t, 1<<20, 10*time.Second, 400, 1080) }, "aspect ratio"},
		{"not a video", sim.Behavior{}, func(*testing.T) []byte { return bytes.Repeat([]byte("x"), 100_000) }, "MP4"},
		// HEVC is no codec LinkedIn takes (H.264 or VP8); the file is made with ffmpeg.
		{"HEVC", sim.Behavior{}, func(t *testing.T) []byte { return simtest.HEVCMP4(t, 360, 640, 4*time.Second) }, "H.264 or VP8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newLiEnv(t, c.b, Options{})
			data := c.data(t)
			u := e.initialize(int64(len(data)), false)
			e.finalize(u, e.uploadAll(u, data)).want(t, 200, nil)
			e.clock.Advance(2 * time.Second)
			a := e.call(http.MethodGet, videoPath(u.Video), nil, nil)
			a.want(t, 200, map[string]any{"status": ProcessingFailed})
			if !strings.Contains(fmt.Sprint(a.body["processingFailureReason"]), c.reason) {
				t.Fatalf("reason %v, want %q", a.body["processingFailureReason"], c.reason)
			}
			e.call(http.MethodPost, "/rest/posts", liPost(u.Video, "x"), nil).want(t, 400, nil)
		})
	}
}

func TestLinkedInThumbnail(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{})
	data := liVideo(t, 1<<20, 10*time.Second, 1080, 1080)
	u := e.initialize(int64(len(data)), true)
	if u.Thumbnail == "" {
		t.Fatal("no thumbnailUploadUrl")
	}
	if st, _ := e.put(u.Thumbnail, "image/jpeg", []byte("GIF89a not a jpeg")); st != 400 {
		t.Errorf("non-image thumbnail: %d", st)
	}
	if st, _ := e.put(u.Thumbnail, "image/png", []byte("\x89PNG\r\n\x1a\nrest")); st != 201 {
		t.Errorf("png thumbnail: %d", st)
	}
	if v, _ := e.sim.Video(u.Video); !v.Thumbnail {
		t.Error("thumbnail not kept")
	}
	plain := e.initialize(int64(len(data)), false)
	if plain.Thumbnail != "" {
		t.Error("thumbnail URL without uploadThumbnail")
	}
}

func TestLinkedInPosts(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{PostsPerDay: 3})
	data := liVideo(t, 1<<20, 10*time.Second, 1080, 1920)
	video := e.ready(data)

	bad := func(mut func(map[string]any)) map[string]any { b := liPost(video, "x"); mut(b); return b }
	for _, c := range []struct {
		name   string
		body   map[string]any
		status int
	}{
		{"no author", bad(func(b map[string]any) { delete(b, "author") }), 422},
		{"other author", bad(func(b map[string]any) { b["author"] = "urn:li:person:someoneElse" }), 403},
		{"visibility", bad(func(b map[string]any) { b["visibility"] = "EVERYONE" }), 422},
		{"distribution", bad(func(b map[string]any) { b["distribution"] = map[string]any{"feedDistribution": "EVERYWHERE"} }), 422},
		{"lifecycle", bad(func(b map[string]any) { b["lifecycleState"] = "LIVE" }), 422},
		{"unknown video", bad(func(b map[string]any) {
			b["content"] = map[string]any{"media": map[string]any{"id": "urn:li:video:nope"}}
		}), 400},
		{"long title", bad(func(b map[string]any) {
			b["content"] = map[string]any{"media": map[string]any{"id": video, "title": strings.Repeat("t", 201)}}
		}), 400},
	} {
		t.Run(c.name, func(t *testing.T) { e.call(http.MethodPost, "/rest/posts", c.body, nil).want(t, c.status, nil) })
	}

	// Length is counted on the text shown, in UTF-16 units: 3000 escaped characters pass.
	long := e.call(http.MethodPost, "/rest/posts", liPost(video, strings.Repeat("😀", 1501)), nil)
	long.want(t, 400, nil)
	if !strings.Contains(long.raw, "ShareCommentary text length (3002 characters) exceeded the maximum allowed (3000 characters)") ||
		!strings.Contains(long.raw, "FIELD_ARRAY_SIZE_TOO_HIGH") {
		t.Fatalf("long commentary answer %s", long.raw)
	}

	// An unescaped reserved character cuts the text, silently.
	a := e.call(http.MethodPost, "/rest/posts", liPost(video, "Launch day (beta) is here"), nil)
	a.want(t, 201, nil)
	urn := a.header.Get("X-RestLi-Id")
	if !strings.HasPrefix(urn, "urn:li:share:") {
		t.Fatalf("x-restli-id %q", urn)
	}
	pub := e.rec.Snapshot(nil).Published
	if len(pub) != 1 || pub[0].Text != "Launch day " || pub[0].ID != urn || pub[0].URL != "https://www.linkedin.com/feed/update/"+urn+"/" {
		t.Fatalf("published %+v", pub)
	}

	// The same content again is a duplicate naming the first post.
	dup := e.call(http.MethodPost, "/rest/posts", liPost(video, "Launch day (beta) is here"), nil)
	dup.want(t, 422, nil)
	if !strings.Contains(dup.raw, "Content is a duplicate of "+urn) || !strings.Contains(dup.raw, "DUPLICATE_POST") {
		t.Fatalf("duplicate answer %s", dup.raw)
	}

	// Escaped text is shown whole.
	e.call(http.MethodPost, "/rest/posts", liPost(video, `Launch day \(beta\) {hashtag|\#|reelay} @[Ada](urn:li:person:abc)`), nil).want(t, 201, nil)
	if pub := e.rec.Snapshot(nil).Published; pub[1].Text != "Launch day (beta) #reelay Ada" {
		t.Fatalf("shown %q", pub[1].Text)
	}

	// The member's daily cap.
	e.call(http.MethodPost, "/rest/posts", liPost(video, "third"), nil).want(t, 201, nil)
	capped := e.call(http.MethodPost, "/rest/posts", liPost(video, "fourth"), nil)
	capped.want(t, 429, nil)
	if !strings.Contains(capped.raw, "DAY limit") {
		t.Fatalf("cap answer %s", capped.raw)
	}
	e.clock.Advance(25 * time.Hour)
	e.call(http.MethodPost, "/rest/posts", liPost(video, "fourth"), nil).want(t, 201, nil)
}

func TestRenderLittle(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, shown string
		cut       bool
	}{
		{"plain text", "plain text", false},
		{`a \(b\) \\ \_`, `a (b) \ _`, false},
		{"a (b) c", "a ", true},
		{"#tag and #Tag2", "#tag and #Tag2", false},
		{"# alone", "", true},
		{`{hashtag|\#|reelay}`, "#reelay", false},
		{"{hashtag|#|reelay} x", "#reelay x", false},
		{`{hashtag|\#|}`, "", true},
		{`{hashtag|\#|a b`, "", true},
		{"@[Ada](urn:li:person:123) hi", "Ada hi", false},
		{"@[Acme](urn:li:organization:9)", "Acme", false},
		{"@[Ada](https://x) hi", "", true},
		{"me@example.com", "me", true},
		{`ends with \`, "ends with ", true},
		{`\q`, "", true},
		{"x * y", "x ", true},
		{"x ~ y | z", "x ", true},
		{"emoji 🎉 fine", "emoji 🎉 fine", false},
	} {
		shown, cut := RenderLittle(c.in)
		if shown != c.shown || cut != c.cut {
			t.Errorf("RenderLittle(%q) = %q, %v; want %q, %v", c.in, shown, cut, c.shown, c.cut)
		}
	}
}
