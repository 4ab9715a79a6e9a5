package pinterestsim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

const pinAcct = "pin_sim_acct"

type pinEnv struct {
	*providertest.Env
	sim *pinterestsim.Sim
}

func newPinEnv(t *testing.T, opts pinterestsim.Options) *pinEnv {
	t.Helper()
	e := &pinEnv{}
	accts := sim.StaticAccounts{
		"tok":         {ID: pinAcct, Username: "simuser", Behavior: sim.Behavior{ProcessingMS: -1}},
		"tok-reject":  {ID: pinAcct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailReject}},
		"tok-down":    {ID: pinAcct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailUnavailable}},
		"tok-auth":    {ID: pinAcct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailAuth}},
		"tok-limited": {ID: pinAcct, Behavior: sim.Behavior{ProcessingMS: -1, Fail: sim.FailRateLimit}},
		"tok-other":   {ID: "someone_else", Behavior: sim.Behavior{ProcessingMS: -1}},
		"tok-trial":   {ID: pinAcct, Behavior: sim.Behavior{ProcessingMS: -1, AppAccess: sim.AppAccessTrial}},
	}
	e.Env = providertest.NewEnv(t, "pinterest", accts, func(c sim.Config) http.Handler {
		e.sim = pinterestsim.NewSim(c, opts)
		return e.sim
	}, providertest.Options{})
	return e
}

type pinAnswer struct {
	status int
	header http.Header
	body   []byte
}

func (a pinAnswer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("answer %d %s is not JSON: %v", a.status, a.body, err)
	}
	return m
}

// wantError checks Pinterest's error shape.
func (a pinAnswer) wantError(t *testing.T, status, code int, text string) {
	t.Helper()
	m := a.json(t)
	if a.status != status || m["code"] != float64(code) || m["status"] != "failure" || !strings.Contains(fmt.Sprint(m["message"]), text) {
		t.Errorf("answer %d %s; want %d code %d with %q", a.status, a.body, status, code, text)
	}
}

func (e *pinEnv) call(t *testing.T, method, path, token string, body any) pinAnswer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.BaseURL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return pinAnswer{resp.StatusCode, resp.Header, raw}
}

type registration struct {
	MediaID          string            `json:"media_id"`
	MediaType        string            `json:"media_type"`
	UploadURL        string            `json:"upload_url"`
	UploadParameters map[string]string `json:"upload_parameters"`
}

func (e *pinEnv) register(t *testing.T, token string) registration {
	t.Helper()
	a := e.call(t, http.MethodPost, "/v5/media", token, map[string]string{"media_type": "video"})
	var r registration
	if a.status != http.StatusCreated || json.Unmarshal(a.body, &r) != nil {
		t.Fatalf("register: %d %s", a.status, a.body)
	}
	return r
}

// form is an S3 browser POST under construction.
type form struct {
	fields    [][2]string
	fileFirst bool
	chunked   bool
}

func formOf(r registration) *form {
	f := &form{}
	keys := make([]string, 0, len(r.UploadParameters))
	for k := range r.UploadParameters {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f.fields = append(f.fields, [2]string{k, r.UploadParameters[k]})
	}
	return f
}

func (f *form) set(k, v string) *form {
	for i := range f.fields {
		if f.fields[i][0] == k {
			f.fields[i][1] = v
			return f
		}
	}
	f.fields = append(f.fields, [2]string{k, v})
	return f
}

func (f *form) drop(k string) *form {
	f.fields = slices.DeleteFunc(f.fields, func(kv [2]string) bool { return kv[0] == k })
	return f
}

func (e *pinEnv) post(t *testing.T, url string, f *form, video []byte) pinAnswer {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	file := func() {
		w, _ := mw.CreateFormFile("file", "video.mp4")
		_, _ = w.Write(video)
	}
	if f.fileFirst {
		file()
	}
	for _, kv := range f.fields {
		_ = mw.WriteField(kv[0], kv[1])
	}
	if !f.fileFirst {
		file()
	}
	_ = mw.Close()
	var body io.Reader = bytes.NewReader(b.Bytes())
	if f.chunked {
		body = io.MultiReader(body) // hides the length
	}
	req, _ := http.NewRequest(http.MethodPost, url, body)
	if f.chunked {
		req.ContentLength = -1
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return pinAnswer{resp.StatusCode, resp.Header, raw}
}

// upload registers a media and uploads v to it.
func (e *pinEnv) upload(t *testing.T, token string, v *providertest.Video) registration {
	t.Helper()
	r := e.register(t, token)
	if a := e.post(t, r.UploadURL, formOf(r), v.Bytes()); a.status != http.StatusNoContent {
		t.Fatalf("upload: %d %s", a.status, a.body)
	}
	return r
}

func (e *pinEnv) status(t *testing.T, token, id string) string {
	t.Helper()
	a := e.call(t, http.MethodGet, "/v5/media/"+id, token, nil)
	if a.status != http.StatusOK {
		t.Fatalf("media %s: %d %s", id, a.status, a.body)
	}
	return fmt.Sprint(a.json(t)["status"])
}

func TestPinterestSimAuthAndShapes(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	e.call(t, http.MethodGet, "/v5/user_account", "", nil).wantError(t, 401, 2, "Authentication failed.")
	e.call(t, http.MethodGet, "/v5/user_account", "nope", nil).wantError(t, 401, 2, "Authentication failed.")
	e.call(t, http.MethodGet, "/v5/user_account", "tok-auth", nil).wantError(t, 401, 2, "Authentication failed.")
	e.call(t, http.MethodGet, "/v5/user_account", "tok-down", nil).wantError(t, 503, 503, "unavailable")
	a := e.call(t, http.MethodGet, "/v5/user_account", "tok-limited", nil)
	a.wantError(t, 429, 8, "rate limit")
	if a.header.Get("X-RateLimit-Reset") != "1" || a.header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("rate limit headers %v", a.header)
	}
	u := e.call(t, http.MethodGet, "/v5/user_account", "tok", nil).json(t)
	if u["id"] != pinAcct || u["username"] != "simuser" || !strings.HasPrefix(fmt.Sprint(u["profile_image"]), e.BaseURL) || u["account_type"] == nil {
		t.Errorf("user_account %v", u)
	}
	e.call(t, http.MethodGet, "/v5/nothing", "tok", nil).wantError(t, 404, 404, "Not found")
}

func TestPinterestSimRegisterStrict(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	e.call(t, http.MethodPost, "/v5/media", "tok", map[string]string{}).wantError(t, 400, 1, "'media_type' is a required property")
	e.call(t, http.MethodPost, "/v5/media", "tok", map[string]string{"media_type": "image"}).wantError(t, 400, 1, "not one of ['video']")
	req, _ := http.NewRequest(http.MethodPost, e.BaseURL+"/v5/media", strings.NewReader("media_type=video"))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := e.Client.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("form body: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	r := e.register(t, "tok")
	want := []string{"Content-Type", "key", "policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-security-token", "x-amz-signature"}
	var got []string
	for k := range r.UploadParameters {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || r.MediaType != "video" || r.UploadURL != e.BaseURL+"/_upload/" ||
		strings.Trim(r.MediaID, "0123456789") != "" || r.UploadParameters["Content-Type"] != "multipart/form-data" {
		t.Errorf("registration %+v", r)
	}
	if s := e.status(t, "tok", r.MediaID); s != pinterestsim.Registered {
		t.Errorf("status %s", s)
	}
	e.call(t, http.MethodGet, "/v5/media/"+r.MediaID, "tok-other", nil).wantError(t, 404, 404, "Media upload not found")
}

func TestPinterestSimUploadStrict(t *testing.T) {
	t.Parallel()
	v := providertest.ShortVideo()
	for _, c := range []struct {
		name   string
		mutate func(*form)
		status int
		code   string
		text   string
	}{
		{"file first", func(f *form) { f.fileFirst = true }, 400, "InvalidArgument", "must contain a field named"},
		{"changed key", func(f *form) { f.set("key", "uploads/other") }, 403, "AccessDenied", "Policy Condition failed"},
		{"changed content type", func(f *form) { f.set("Content-Type", "video/mp4") }, 403, "AccessDenied", "Policy Condition failed"},
		{"no security token", func(f *form) { f.drop("x-amz-security-token") }, 403, "AccessDenied", "x-amz-security-token"},
		{"bad signature", func(f *form) { f.set("x-amz-signature", strings.Repeat("0", 64)) }, 403, "SignatureDoesNotMatch", "signature"},
		{"no policy", func(f *form) { f.drop("policy") }, 403, "AccessDenied", "Access Denied"},
		{"extra field", func(f *form) { f.set("acl", "public-read") }, 403, "AccessDenied", "Extra input fields: acl"},
		{"chunked", func(f *form) { f.chunked = true }, 411, "MissingContentLength", "Content-Length"},
		{"fields over 20 KB", func(f *form) { f.set("x-ignore-padding", strings.Repeat("p", 20<<10)) }, 400, "MaxPostPreDataLengthExceeded", "too large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newPinEnv(t, pinterestsim.Options{})
			r := e.register(t, "tok")
			f := formOf(r)
			c.mutate(f)
			a := e.post(t, r.UploadURL, f, v.Bytes())
			if a.status != c.status || !bytes.Contains(a.body, []byte("<Code>"+c.code+"</Code>")) || !bytes.Contains(a.body, []byte(c.text)) {
				t.Errorf("answer %d %s; want %d %s with %q", a.status, a.body, c.status, c.code, c.text)
			}
			if n := len(e.Introspect().Uploads); n != 0 || e.status(t, "tok", r.MediaID) != pinterestsim.Registered {
				t.Errorf("a refused upload counted (%d uploads)", n)
			}
			// The untouched form still works.
			if a := e.post(t, r.UploadURL, formOf(r), v.Bytes()); a.status != http.StatusNoContent {
				t.Errorf("good upload: %d %s", a.status, a.body)
			}
			if got := e.Introspect().Uploads; len(got) != 1 || got[0].SHA256 != v.SHA256() || got[0].Bytes != v.Size() {
				t.Errorf("uploads %+v", got)
			}
		})
	}

	t.Run("expired policy", func(t *testing.T) {
		t.Parallel()
		e := newPinEnv(t, pinterestsim.Options{UploadTTL: 10 * time.Minute})
		r := e.register(t, "tok")
		e.Clock.Advance(11 * time.Minute)
		a := e.post(t, r.UploadURL, formOf(r), v.Bytes())
		if a.status != 403 || !bytes.Contains(a.body, []byte("Policy expired")) {
			t.Errorf("answer %d %s", a.status, a.body)
		}
	})

	t.Run("too large", func(t *testing.T) {
		t.Parallel()
		e := newPinEnv(t, pinterestsim.Options{MaxVideoBytes: v.Size() - 1})
		r := e.register(t, "tok")
		a := e.post(t, r.UploadURL, formOf(r), v.Bytes())
		if a.status != 400 || !bytes.Contains(a.body, []byte("<Code>EntityTooLarge</Code>")) || len(e.Introspect().Uploads) != 0 {
			t.Errorf("answer %d %s", a.status, a.body)
		}
	})

	t.Run("GET", func(t *testing.T) {
		t.Parallel()
		e := newPinEnv(t, pinterestsim.Options{})
		if a := e.call(t, http.MethodGet, "/_upload/", "", nil); a.status != http.StatusMethodNotAllowed {
			t.Errorf("GET upload URL: %d", a.status)
		}
	})
}

func TestPinterestSimMediaLifecycle(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	r := e.upload(t, "tok", providertest.ShortVideo())
	if s := e.status(t, "tok", r.MediaID); s != pinterestsim.Processing {
		t.Errorf("after upload: %s", s)
	}
	e.Clock.Advance(3 * time.Second)
	if s := e.status(t, "tok", r.MediaID); s != pinterestsim.Succeeded {
		t.Errorf("after processing: %s", s)
	}

	rej := e.upload(t, "tok-reject", providertest.ShortVideo())
	short := e.upload(t, "tok", providertest.NewVideo(1<<20, 3*time.Second, 1080, 1920))
	e.Clock.Advance(3 * time.Second)
	for _, id := range []string{rej.MediaID, short.MediaID} {
		if s := e.status(t, "tok", id); s != pinterestsim.Failed {
			t.Errorf("media %s: %s, want failed", id, s)
		}
	}
}

func TestPinterestSimPinStrict(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	v := providertest.ShortVideo() // 10 s
	ready := e.upload(t, "tok", v)
	e.Clock.Advance(3 * time.Second)
	fresh := e.register(t, "tok")
	board := pinterestsim.DefaultBoards(pinAcct)[0].ID
	pin := func(mut func(m map[string]any, src map[string]any)) map[string]any {
		src := map[string]any{"source_type": "video_id", "media_id": ready.MediaID, "cover_image_key_frame_time": 2}
		m := map[string]any{"board_id": board, "title": "T", "description": "D", "link": "https://example.com/", "media_source": src}
		mut(m, src)
		return m
	}
	for _, c := range []struct {
		name         string
		mut          func(m, src map[string]any)
		status, code int
		text         string
	}{
		{"no board", func(m, _ map[string]any) { delete(m, "board_id") }, 400, 1, "'board_id' is a required property"},
		{"board not digits", func(m, _ map[string]any) { m["board_id"] = "recipes" }, 400, 1, "does not match"},
		{"unknown board", func(m, _ map[string]any) { m["board_id"] = "12345" }, 404, 40, "Board not found."},
		{"another's board", func(m, _ map[string]any) { m["board_id"] = pinterestsim.DefaultBoards("x")[0].ID }, 404, 40, "Board not found."},
		{"title 101", func(m, _ map[string]any) { m["title"] = strings.Repeat("t", 101) }, 400, 1, "'title' is too long"},
		{"description 801", func(m, _ map[string]any) { m["description"] = strings.Repeat("d", 801) }, 400, 1, "'description' is too long"},
		{"link 2049", func(m, _ map[string]any) { m["link"] = "https://e.com/" + strings.Repeat("l", 2035) }, 400, 1, "'link' is too long"},
		{"bad link", func(m, _ map[string]any) { m["link"] = "example.com" }, 400, 1, "invalid URL"},
		{"no media source", func(m, _ map[string]any) { delete(m, "media_source") }, 400, 1, "'media_source' is a required property"},
		{"no cover", func(_, src map[string]any) { delete(src, "cover_image_key_frame_time") }, 400, 1, "exactly one cover"},
		{"two covers", func(_, src map[string]any) { src["cover_image_url"] = "https://example.com/c.jpg" }, 400, 1, "exactly one cover"},
		{"frame after the end", func(_, src map[string]any) { src["cover_image_key_frame_time"] = 11 }, 400, 1, "outside the video"},
		{"media not ready", func(_, src map[string]any) { src["media_id"] = fresh.MediaID }, 400, 1, "not ready (status registered)"},
		{"unknown media", func(_, src map[string]any) { src["media_id"] = "42" }, 404, 404, "Media upload not found"},
		{"image source", func(_, src map[string]any) { src["source_type"] = "image_url" }, 400, 1, "video_id only"},
		{"unreachable cover", func(_, src map[string]any) {
			delete(src, "cover_image_key_frame_time")
			src["cover_image_url"] = e.BaseURL + "/no-such-image.jpg"
		}, 403, 235, "this image is broken"},
	} {
		e.call(t, http.MethodPost, "/v5/pins", "tok", pin(c.mut)).wantError(t, c.status, c.code, c.text)
	}
	// A valid Pin from a Trial app: production refuses it.
	e.call(t, http.MethodPost, "/v5/pins", "tok-trial", pin(func(_, _ map[string]any) {})).
		wantError(t, 403, 29, "Apps with Trial access may not create Pins in production")
	if n := len(e.sim.Pins(pinAcct)); n != 0 {
		t.Fatalf("%d pins from refused requests", n)
	}

	a := e.call(t, http.MethodPost, "/v5/pins", "tok", pin(func(_, _ map[string]any) {}))
	p := a.json(t)
	media, _ := p["media"].(map[string]any)
	if a.status != http.StatusCreated || p["board_id"] != board || p["title"] != "T" || p["description"] != "D" ||
		media["media_type"] != "video" || strings.Trim(fmt.Sprint(p["id"]), "0123456789") != "" {
		t.Fatalf("pin %d %s", a.status, a.body)
	}
	got := e.Introspect().Published
	if len(got) != 1 || got[0].ID != p["id"] || got[0].URL != "https://www.pinterest.com/pin/"+got[0].ID+"/" || got[0].SHA256 != v.SHA256() || got[0].Text != "T\n\nD" {
		t.Errorf("published %+v", got)
	}
	if g := e.call(t, http.MethodGet, "/v5/pins/"+got[0].ID, "tok", nil); g.status != 200 {
		t.Errorf("get pin %d", g.status)
	}
	e.call(t, http.MethodGet, "/v5/pins/"+got[0].ID, "tok-other", nil).wantError(t, 404, 50, "Pin not found.")
}

func TestPinterestSimBoards(t *testing.T) {
	t.Parallel()
	boards := make([]pinterestsim.Board, 30)
	for i := range boards {
		boards[i] = pinterestsim.Board{ID: fmt.Sprint(100 + i), Name: fmt.Sprint("B", i), Privacy: "PUBLIC"}
	}
	boards[3].Privacy = "SECRET"
	e := newPinEnv(t, pinterestsim.Options{Boards: map[string][]pinterestsim.Board{pinAcct: boards}})
	first := e.call(t, http.MethodGet, "/v5/boards", "tok", nil).json(t)
	items := first["items"].([]any)
	bm, _ := first["bookmark"].(string)
	if len(items) != 25 || bm == "" {
		t.Fatalf("first page: %d items, bookmark %v", len(items), first["bookmark"])
	}
	second := e.call(t, http.MethodGet, "/v5/boards?bookmark="+bm, "tok", nil).json(t)
	if items := second["items"].([]any); len(items) != 5 || second["bookmark"] != nil || items[4].(map[string]any)["id"] != "129" {
		t.Errorf("second page %v", second)
	}
	secret := e.call(t, http.MethodGet, "/v5/boards?privacy=SECRET", "tok", nil).json(t)
	if items := secret["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != "103" {
		t.Errorf("secret boards %v", secret)
	}
	e.call(t, http.MethodGet, "/v5/boards?page_size=251", "tok", nil).wantError(t, 400, 1, "page_size")
	e.call(t, http.MethodGet, "/v5/boards?bookmark=garbage", "tok", nil).wantError(t, 400, 1, "bookmark")
	e.call(t, http.MethodGet, "/v5/boards?privacy=FRIENDS", "tok", nil).wantError(t, 400, 1, "privacy")
	e.call(t, http.MethodGet, "/v5/boards/999", "tok", nil).wantError(t, 404, 40, "Board not found.")
	if b := e.call(t, http.MethodGet, "/v5/boards/105", "tok", nil).json(t); b["name"] != "B5" {
		t.Errorf("board %v", b)
	}

	// The default boards of an account, and its Pins newest first.
	e = newPinEnv(t, pinterestsim.Options{})
	def := pinterestsim.DefaultBoards(pinAcct)
	if len(def) != 2 || def[0].ID == def[1].ID || !slices.Equal(def, pinterestsim.DefaultBoards(pinAcct)) {
		t.Fatalf("default boards %+v", def)
	}
	r := e.upload(t, "tok", providertest.ShortVideo())
	e.Clock.Advance(3 * time.Second)
	for _, title := range []string{"old", "new"} {
		body := map[string]any{"board_id": def[0].ID, "title": title,
			"media_source": map[string]any{"source_type": "video_id", "media_id": r.MediaID, "cover_image_key_frame_time": 0}}
		if a := e.call(t, http.MethodPost, "/v5/pins", "tok", body); a.status != http.StatusCreated {
			t.Fatalf("pin: %d %s", a.status, a.body)
		}
		e.Clock.Advance(time.Second)
	}
	list := e.call(t, http.MethodGet, "/v5/boards/"+def[0].ID+"/pins?page_size=1", "tok", nil).json(t)
	items = list["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["title"] != "new" || list["bookmark"] == nil {
		t.Errorf("board pins %v", list)
	}
	e.call(t, http.MethodGet, "/v5/boards/"+def[0].ID+"/pins", "tok-other", nil).wantError(t, 404, 40, "Board not found.")
}

func TestPinterestSimRateLimit(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{WritesPerMinute: 2})
	e.register(t, "tok")
	e.Clock.Advance(10 * time.Second)
	e.register(t, "tok")
	a := e.call(t, http.MethodPost, "/v5/media", "tok", map[string]string{"media_type": "video"})
	a.wantError(t, 429, 8, "exceeded a rate limit")
	if a.header.Get("X-RateLimit-Reset") != "50" || a.header.Get("X-RateLimit-Limit") != "2" {
		t.Errorf("headers %v", a.header)
	}
	// Reads are another category.
	if a := e.call(t, http.MethodGet, "/v5/boards", "tok", nil); a.status != 200 {
		t.Errorf("read: %d", a.status)
	}
	e.Clock.Advance(51 * time.Second)
	e.register(t, "tok")
}

// The simulator reads the picture's width and height and codec from the uploaded bytes and
// fails a video outside Pinterest's product specs (standard width video Pins: aspect ratio from
// 1:2 to 1.91:1, H.264 or H.265), as Pinterest's processing does.
func TestPinterestSimVideoSpecs(t *testing.T) {
	t.Parallel()
	e := newPinEnv(t, pinterestsim.Options{})
	of := func(w, h int) []byte { return providertest.NewVideo(1<<20, 5*time.Second, w, h).Bytes() }
	cases := []struct {
		name  string
		video []byte
		want  string
	}{
		{"9:16", of(1080, 1920), pinterestsim.Succeeded},
		{"1:2", of(540, 1080), pinterestsim.Succeeded},
		{"16:9", of(1920, 1080), pinterestsim.Succeeded},
		{"1:3", of(360, 1080), pinterestsim.Failed},
		{"2:1", of(1080, 540), pinterestsim.Failed},
		{"VP9 WebM", simtest.VP9WebM(t, 360, 640, 5*time.Second), pinterestsim.Failed},
		{"HEVC MP4", simtest.HEVCMP4(t, 360, 640, 5*time.Second), pinterestsim.Succeeded},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		r := e.register(t, "tok")
		if a := e.post(t, r.UploadURL, formOf(r), c.video); a.status != http.StatusNoContent {
			t.Fatalf("%s: upload %d %s", c.name, a.status, a.body)
		}
		ids[i] = r.MediaID
	}
	e.Clock.Advance(3 * time.Second)
	for i, c := range cases {
		if s := e.status(t, "tok", ids[i]); s != c.want {
			t.Errorf("%s: %s, want %s", c.name, s, c.want)
		}
	}
}
