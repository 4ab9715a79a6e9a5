package mastodonsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
)

const mdToken = "mastodon-token"

type mdEnv struct {
	t     *testing.T
	clock *clocktest.Clock
	sim   *Sim
	base  string
}

func newMDEnv(t *testing.T, opts Options, b sim.Behavior) *mdEnv {
	t.Helper()
	e := &mdEnv{t: t, clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.base = srv.URL + "/sandbox/mastodon"
	e.sim = NewSim(sim.Config{BaseURL: e.base, Now: e.clock.Now, Rand: func() float64 { return 0.99 },
		Accounts: sim.StaticAccounts{
			mdToken: {ID: "109000000000000001", Username: "alice", Behavior: b},
			"other": {ID: "109000000000000002", Username: "bob", Behavior: sim.Behavior{ProcessingMS: -1}},
		}}, opts)
	mux.Handle("/sandbox/mastodon/", http.StripPrefix("/sandbox/mastodon", e.sim))
	return e
}

type mdAnswer struct {
	code   int
	header http.Header
	body   map[string]any
	list   []map[string]any
}

func (a mdAnswer) str(k string) string { s, _ := a.body[k].(string); return s }

func (e *mdEnv) do(method, path, token string, hdr http.Header, body io.Reader) mdAnswer {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.base+path, body)
	for k, v := range hdr {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := mdAnswer{code: resp.StatusCode, header: resp.Header}
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		_ = json.Unmarshal(raw, &a.list)
	} else {
		_ = json.Unmarshal(raw, &a.body)
	}
	return a
}

type mdPart struct {
	name, ctype string
	data        []byte
}

// upload POSTs a multipart form to /api/v2/media.
func (e *mdEnv) upload(token string, parts ...mdPart) mdAnswer {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		if p.ctype == "" {
			_ = mw.WriteField(p.name, string(p.data))
			continue
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="f"`, p.name))
		h.Set("Content-Type", p.ctype)
		w, _ := mw.CreatePart(h)
		_, _ = w.Write(p.data)
	}
	_ = mw.Close()
	return e.do(http.MethodPost, "/api/v2/media", token, http.Header{"Content-Type": {mw.FormDataContentType()}}, &buf)
}

func (e *mdEnv) post(token, key string, body map[string]any) mdAnswer {
	e.t.Helper()
	b, _ := json.Marshal(body)
	hdr := http.Header{"Content-Type": {"application/json"}}
	if key != "" {
		hdr.Set("Idempotency-Key", key)
	}
	return e.do(http.MethodPost, "/api/v1/statuses", token, hdr, bytes.NewReader(b))
}

func mdVideo(t *testing.T, w, h int) []byte {
	return mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: w, Height: h})
}

// uploaded uploads a video and waits for it to be processed; it returns the media id.
func (e *mdEnv) uploaded(token string) string {
	e.t.Helper()
	a := e.upload(token, mdPart{"file", "video/mp4", mdVideo(e.t, 720, 1280)})
	if a.code != http.StatusAccepted {
		e.t.Fatalf("upload = %d %v", a.code, a.body)
	}
	e.clock.Advance(time.Hour)
	return a.str("id")
}

func wantMDError(t *testing.T, a mdAnswer, code int, text string) {
	t.Helper()
	msg, _ := a.body["error"].(string)
	if a.code != code || !strings.Contains(msg, text) {
		t.Fatalf("answer %d %v; want %d with error containing %q", a.code, a.body, code, text)
	}
}

func TestMastodonInstance(t *testing.T) {
	e := newMDEnv(t, Options{MaxCharacters: 1000, VideoSizeLimit: 99 << 20}, sim.Behavior{ProcessingMS: -1})
	a := e.do(http.MethodGet, "/api/v2/instance", "", nil, nil)
	if a.code != 200 {
		t.Fatalf("instance = %d", a.code)
	}
	conf := a.body["configuration"].(map[string]any)
	st := conf["statuses"].(map[string]any)
	ma := conf["media_attachments"].(map[string]any)
	if st["max_characters"] != 1000.0 || st["characters_reserved_per_url"] != 23.0 || st["max_media_attachments"] != 4.0 {
		t.Errorf("statuses = %v", st)
	}
	if ma["video_size_limit"] != float64(99<<20) || ma["image_size_limit"] != float64(10<<20) || ma["video_matrix_limit"] != 2304000.0 {
		t.Errorf("media_attachments = %v", ma)
	}
	types := fmt.Sprint(ma["supported_mime_types"])
	for _, want := range []string{"video/mp4", "video/quicktime", "video/webm", "image/jpeg"} {
		if !strings.Contains(types, want) {
			t.Errorf("supported_mime_types %s lacks %s", types, want)
		}
	}
	if !strings.HasPrefix(e.base, "http://"+a.str("domain")) {
		t.Errorf("domain = %q, base %s", a.str("domain"), e.base)
	}

	legacy := newMDEnv(t, Options{LegacyInstance: true}, sim.Behavior{})
	if a := legacy.do(http.MethodGet, "/api/v2/instance", "", nil, nil); a.code != 404 {
		t.Errorf("legacy v2 instance = %d; want 404", a.code)
	}
	a = legacy.do(http.MethodGet, "/api/v1/instance", "", nil, nil)
	if a.code != 200 || a.body["configuration"].(map[string]any)["statuses"].(map[string]any)["max_characters"] != 500.0 {
		t.Errorf("legacy v1 instance = %d %v", a.code, a.body)
	}
}

func TestMastodonAuth(t *testing.T) {
	e := newMDEnv(t, Options{}, sim.Behavior{ProcessingMS: -1})
	for _, tok := range []string{"", "nope"} {
		wantMDError(t, e.do(http.MethodGet, "/api/v1/accounts/verify_credentials", tok, nil, nil), 401, "The access token is invalid")
		wantMDError(t, e.upload(tok, mdPart{"file", "video/mp4", mdVideo(t, 720, 1280)}), 401, "The access token is invalid")
		wantMDError(t, e.post(tok, "", map[string]any{"status": "hi"}), 401, "The access token is invalid")
	}
	a := e.do(http.MethodGet, "/api/v1/accounts/verify_credentials", mdToken, nil, nil)
	if a.code != 200 || a.str("id") != "109000000000000001" || a.str("username") != "alice" || a.str("avatar") == "" {
		t.Fatalf("verify_credentials = %d %v", a.code, a.body)
	}
	wantMDError(t, e.do(http.MethodGet, "/api/v1/nothing", mdToken, nil, nil), 404, "Record not found")
}

func TestMastodonUploadAndProcessing(t *testing.T) {
	e := newMDEnv(t, Options{}, sim.Behavior{ProcessingMS: 5000})
	video := mdVideo(t, 720, 1280)
	a := e.upload(mdToken, mdPart{"description", "", []byte("alt text")}, mdPart{"file", "video/mp4", video},
		mdPart{"thumbnail", "image/jpeg", mediatest.JPEG(t, 72, 128)})
	if a.code != http.StatusAccepted || a.body["url"] != nil || a.str("type") != "video" || a.str("description") != "alt text" {
		t.Fatalf("upload = %d %v", a.code, a.body)
	}
	id := a.str("id")
	sum := sha256.Sum256(video)
	rec := e.sim.Recorder().Snapshot(nil)
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != hex.EncodeToString(sum[:]) || rec.Uploads[0].Bytes != int64(len(video)) {
		t.Fatalf("recorded uploads %+v", rec.Uploads)
	}
	if md, _ := e.sim.Media(id); md.ThumbnailType != "image/jpeg" || md.ThumbnailBytes == 0 {
		t.Errorf("thumbnail not kept: %+v", md)
	}
	if a := e.do(http.MethodGet, "/api/v1/media/"+id, mdToken, nil, nil); a.code != http.StatusPartialContent {
		t.Fatalf("media while processing = %d", a.code)
	}
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": "x", "media_ids": []string{id}}), 422, "not finished processing")
	wantMDError(t, e.do(http.MethodGet, "/api/v1/media/"+id, "other", nil, nil), 404, "Record not found")
	e.clock.Advance(5 * time.Second)
	a = e.do(http.MethodGet, "/api/v1/media/"+id, mdToken, nil, nil)
	if a.code != 200 || a.str("url") == "" {
		t.Fatalf("processed media = %d %v", a.code, a.body)
	}
	p := e.post(mdToken, "", map[string]any{"status": "hello", "media_ids": []string{id}})
	if p.code != 200 || !strings.HasPrefix(p.str("url"), e.base+"/@alice/") {
		t.Fatalf("post = %d %v", p.code, p.body)
	}
	// Attached media is no longer the media API's.
	wantMDError(t, e.do(http.MethodGet, "/api/v1/media/"+id, mdToken, nil, nil), 404, "Record not found")
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": "again", "media_ids": []string{id}}), 422,
		"Media "+id+" not found or already attached to another post")
}

func TestMastodonUploadValidation(t *testing.T) {
	e := newMDEnv(t, Options{VideoSizeLimit: 64 << 10, ImageSizeLimit: 1 << 10,
		SupportedMimeTypes: []string{"video/mp4", "image/jpeg"}}, sim.Behavior{ProcessingMS: -1})
	small := mdVideo(t, 320, 568)
	big := mediatest.MP4Bytes(t, mediatest.Options{Size: 100 << 10})
	cases := []struct {
		name  string
		parts []mdPart
		code  int
		want  string
	}{
		{"no file", []mdPart{{"description", "", []byte("x")}}, 422, "File can't be blank"},
		{"unsupported type", []mdPart{{"file", "video/webm", mediatest.WebMBytes(t, mediatest.Options{})}}, 422, "File content type is invalid"},
		{"octet-stream", []mdPart{{"file", "application/octet-stream", small}}, 422, "File content type is invalid"},
		{"too large", []mdPart{{"file", "video/mp4", big}}, 422, "File file size must be less than 64 KB"},
		{"not a video", []mdPart{{"file", "video/mp4", bytes.Repeat([]byte("x"), 1000)}}, 422, "not what they are reported to be"},
		{"thumbnail not an image", []mdPart{{"file", "video/mp4", small}, {"thumbnail", "video/mp4", small}}, 422, "Thumbnail content type is invalid"},
		{"description too long", []mdPart{{"file", "video/mp4", small}, {"description", "", bytes.Repeat([]byte("é"), 1501)}}, 422, "Description is too long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantMDError(t, e.upload(mdToken, c.parts...), c.code, c.want)
		})
	}
	if n := len(e.sim.Recorder().Snapshot(nil).Uploads); n != 0 {
		t.Errorf("%d refused uploads were recorded", n)
	}
	wantMDError(t, e.do(http.MethodPost, "/api/v2/media", mdToken, http.Header{"Content-Type": {"application/json"}},
		strings.NewReader(`{}`)), 422, "File can't be blank")
}

// A video faster than the instance's video_frame_rate_limit is refused at upload with
// Mastodon's own message, not a record validation error; one at the limit passes (issue 31,
// item 8).
func TestMastodonFrameRateLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit int
		fps   int
		want  string
	}{
		{"stock server, 150 fps", 0, 150, "150fps videos are not supported"},
		{"stock server, 120 fps", 0, 120, ""},
		{"a 60 fps server, 90 fps", 60, 90, "90fps videos are not supported"},
		{"a 60 fps server, 60 fps", 60, 60, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newMDEnv(t, Options{VideoFrameRateLimit: c.limit}, sim.Behavior{ProcessingMS: -1})
			v := mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 720, Height: 1280, FPS: c.fps})
			a := e.upload(mdToken, mdPart{"file", "video/mp4", v})
			if c.want == "" {
				if a.code != 202 {
					t.Fatalf("upload = %d %v", a.code, a.body)
				}
				return
			}
			if msg, _ := a.body["error"].(string); a.code != 422 || msg != c.want {
				t.Fatalf("upload = %d %v, want 422 %q", a.code, a.body, c.want)
			}
			if n := len(e.sim.Recorder().Snapshot(nil).Uploads); n != 0 {
				t.Errorf("%d refused uploads were recorded", n)
			}
		})
	}
	if a := newMDEnv(t, Options{}, sim.Behavior{}).do(http.MethodGet, "/api/v2/instance", "", nil, nil); a.code != 200 ||
		!strings.Contains(fmt.Sprint(a.body["configuration"]), "video_frame_rate_limit:120") {
		t.Errorf("a stock server announces 120 fps: %v", a.body["configuration"])
	}
}

func TestMastodonProcessingFailures(t *testing.T) {
	// The reject behavior, and a frame over the matrix limit, fail processing.
	for _, c := range []struct {
		name string
		b    sim.Behavior
		w, h int
	}{
		{"reject", sim.Behavior{ProcessingMS: 1000, Fail: sim.FailReject}, 720, 1280},
		{"matrix", sim.Behavior{ProcessingMS: 1000}, 1440, 2560},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newMDEnv(t, Options{}, c.b)
			a := e.upload(mdToken, mdPart{"file", "video/mp4", mdVideo(t, c.w, c.h)})
			if a.code != 202 {
				t.Fatalf("upload = %d %v", a.code, a.body)
			}
			e.clock.Advance(time.Second)
			wantMDError(t, e.do(http.MethodGet, "/api/v1/media/"+a.str("id"), mdToken, nil, nil), 422, "Error processing thumbnail")
			wantMDError(t, e.post(mdToken, "", map[string]any{"media_ids": []string{a.str("id")}}), 422, "not finished processing")
		})
	}
}

func TestMastodonStatusValidation(t *testing.T) {
	e := newMDEnv(t, Options{MaxCharacters: 50}, sim.Behavior{ProcessingMS: 0})
	id := e.uploaded(mdToken)
	long := strings.Repeat("a", 30) + " https://example.com/" + strings.Repeat("p", 100) + "."
	cases := []struct {
		name string
		body map[string]any
		code int
		want string
	}{
		{"blank", map[string]any{"status": "  "}, 422, "Text can't be blank"},
		{"too long", map[string]any{"status": strings.Repeat("é", 51), "media_ids": []string{id}}, 422, "Text character limit of 50 exceeded"},
		{"warning counts", map[string]any{"status": strings.Repeat("a", 30), "spoiler_text": strings.Repeat("b", 21)}, 422, "character limit of 50"},
		{"bad visibility", map[string]any{"status": "x", "visibility": "everyone"}, 422, "Visibility is not included in the list"},
		{"unknown media", map[string]any{"status": "x", "media_ids": []string{"123"}}, 422, "Media 123 not found"},
		{"other's media", map[string]any{"status": "x", "media_ids": []string{e.uploadedBy("other")}}, 422, "not found or already attached"},
		{"too many", map[string]any{"status": "x", "media_ids": []string{"1", "2", "3", "4", "5"}}, 422, "Cannot attach more than 4 files"},
		{"reply to nothing", map[string]any{"status": "x", "in_reply_to_id": "42"}, 404, "does not appear to exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantMDError(t, e.post(mdToken, "", c.body), c.code, c.want) })
	}
	// URLs count as 23 and mentions without their domain: 30 + 1 + 23 = 54 > 50 fails, less passes.
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": long}), 422, "character limit")
	ok := e.post(mdToken, "", map[string]any{"status": strings.Repeat("a", 20) + " https://example.com/" + strings.Repeat("p", 100) + " @bob@very.long.example.org"})
	if ok.code != 200 {
		t.Fatalf("a text of 20 + 1 + 23 + 1 + 4 counted characters = %d %v", ok.code, ok.body)
	}
	// Form encoding is accepted as Rails accepts it.
	form := "status=from+a+form&visibility=unlisted&media_ids%5B%5D=" + id
	a := e.do(http.MethodPost, "/api/v1/statuses", mdToken, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, strings.NewReader(form))
	if a.code != 200 || a.str("visibility") != "unlisted" || len(a.body["media_attachments"].([]any)) != 1 {
		t.Fatalf("form post = %d %v", a.code, a.body)
	}
}

func (e *mdEnv) uploadedBy(token string) string {
	a := e.upload(token, mdPart{"file", "video/mp4", mdVideo(e.t, 320, 568)})
	return a.str("id")
}

func TestMastodonIdempotency(t *testing.T) {
	e := newMDEnv(t, Options{}, sim.Behavior{ProcessingMS: 0})
	id := e.uploaded(mdToken)
	first := e.post(mdToken, "dst_1", map[string]any{"status": "one", "media_ids": []string{id}})
	if first.code != 200 {
		t.Fatalf("post = %d %v", first.code, first.body)
	}
	// The same key answers the same status whatever the body, and creates nothing.
	again := e.post(mdToken, "dst_1", map[string]any{"status": "two", "media_ids": []string{id}})
	if again.code != 200 || again.str("id") != first.str("id") {
		t.Fatalf("repeated post = %d %v; want status %s", again.code, again.body, first.str("id"))
	}
	// Another account's key space is its own.
	if a := e.post("other", "dst_1", map[string]any{"status": "bob"}); a.code != 200 || a.str("id") == first.str("id") {
		t.Fatalf("other account's post = %d %v", a.code, a.body)
	}
	// After an hour the key is forgotten: the body is checked again (the media is attached now).
	e.clock.Advance(time.Hour)
	wantMDError(t, e.post(mdToken, "dst_1", map[string]any{"status": "one", "media_ids": []string{id}}), 422, "already attached")
	if n := len(e.sim.Statuses("109000000000000001")); n != 1 {
		t.Fatalf("%d statuses; want 1", n)
	}
	if n := len(e.sim.Recorder().Snapshot(nil).Published); n != 2 {
		t.Fatalf("%d published; want 2 (alice's and bob's)", n)
	}
	// The account's statuses list finds it by media.
	l := e.do(http.MethodGet, "/api/v1/accounts/109000000000000001/statuses?only_media=true&limit=40", mdToken, nil, nil)
	if l.code != 200 || len(l.list) != 1 || l.list[0]["id"] != first.str("id") {
		t.Fatalf("account statuses = %d %v", l.code, l.list)
	}
	if a := e.do(http.MethodGet, "/api/v1/statuses/"+first.str("id"), "", nil, nil); a.code != 200 || a.str("content") != "<p>one</p>" {
		t.Fatalf("status = %d %v", a.code, a.body)
	}
}

func TestMastodonUnattachedCleanup(t *testing.T) {
	e := newMDEnv(t, Options{}, sim.Behavior{ProcessingMS: 0})
	id := e.uploaded(mdToken)
	e.clock.Advance(24 * time.Hour)
	wantMDError(t, e.do(http.MethodGet, "/api/v1/media/"+id, mdToken, nil, nil), 404, "Record not found")
	wantMDError(t, e.post(mdToken, "", map[string]any{"media_ids": []string{id}}), 422, "not found")
}

func TestMastodonRateLimits(t *testing.T) {
	e := newMDEnv(t, Options{MediaUploadsPerWindow: 2, StatusesPerWindow: 1}, sim.Behavior{ProcessingMS: 0})
	video := mdVideo(t, 320, 568)
	for i := range 2 {
		if a := e.upload(mdToken, mdPart{"file", "video/mp4", video}); a.code != 202 {
			t.Fatalf("upload %d = %d", i, a.code)
		}
	}
	a := e.upload(mdToken, mdPart{"file", "video/mp4", video})
	wantMDError(t, a, 429, "Too many requests")
	reset, err := time.Parse(time.RFC3339Nano, a.header.Get("X-RateLimit-Reset"))
	if err != nil || !reset.Equal(time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)) || a.header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers %v (%v)", a.header, err)
	}
	if a.header.Get("Retry-After") != "" {
		t.Error("Mastodon sends no Retry-After")
	}
	e.clock.Advance(30 * time.Minute)
	if a := e.upload(mdToken, mdPart{"file", "video/mp4", video}); a.code != 202 {
		t.Fatalf("upload in the next window = %d", a.code)
	}
	if a := e.post(mdToken, "", map[string]any{"status": "one"}); a.code != 200 {
		t.Fatalf("first status = %d", a.code)
	}
	wantMDError(t, e.post(mdToken, "", map[string]any{"status": "two"}), 429, "Too many requests")

	calls := newMDEnv(t, Options{CallsPerWindow: 3}, sim.Behavior{})
	for range 3 {
		calls.do(http.MethodGet, "/api/v1/accounts/verify_credentials", mdToken, nil, nil)
	}
	wantMDError(t, calls.do(http.MethodGet, "/api/v1/accounts/verify_credentials", mdToken, nil, nil), 429, "Too many requests")
}

func TestMastodonFaults(t *testing.T) {
	for _, c := range []struct {
		fail string
		code int
	}{{sim.FailUnavailable, 502}, {sim.FailAuth, 401}, {sim.FailRateLimit, 429}} {
		t.Run(c.fail, func(t *testing.T) {
			e := newMDEnv(t, Options{}, sim.Behavior{Fail: c.fail})
			a := e.upload(mdToken, mdPart{"file", "video/mp4", mdVideo(t, 320, 568)})
			if a.code != c.code {
				t.Fatalf("upload = %d; want %d", a.code, c.code)
			}
			if c.fail == sim.FailRateLimit && a.header.Get("X-RateLimit-Reset") == "" {
				t.Error("429 without X-RateLimit-Reset")
			}
			if n := len(e.sim.Recorder().Snapshot(nil).Uploads); n != 0 {
				t.Errorf("%d uploads recorded", n)
			}
			// The instance endpoint is public and keeps answering.
			if a := e.do(http.MethodGet, "/api/v2/instance", "", nil, nil); a.code != 200 {
				t.Errorf("instance = %d", a.code)
			}
		})
	}
}
