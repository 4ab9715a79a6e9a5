package blueskysim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
)

type bskyHarness struct {
	t     *testing.T
	srv   *httptest.Server
	sim   *Sim
	clock *clocktest.Clock
	rec   *sim.Recorder
}

func newBskyHarness(t *testing.T, b sim.Behavior, o Options) *bskyHarness {
	t.Helper()
	return newBskyHarnessOf(t, sim.StaticAccounts{"pw": {ID: "sbx_aa", Username: "Demo", Behavior: b}}, o)
}

// newBskyHarnessOf is newBskyHarness with accounts of the test's own (whose behaviour may change).
func newBskyHarnessOf(t *testing.T, accounts sim.Accounts, o Options) *bskyHarness {
	t.Helper()
	h := &bskyHarness{t: t, clock: clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)), rec: &sim.Recorder{}}
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	h.sim = NewSim(sim.Config{BaseURL: h.srv.URL + "/sandbox/bluesky", Now: h.clock.Now, Recorder: h.rec,
		Rand: func() float64 { return 0.99 }, Accounts: accounts}, o)
	mux.Handle("/sandbox/bluesky/", http.StripPrefix("/sandbox/bluesky", h.sim))
	return h
}

type bskyAnswer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (h *bskyHarness) call(method, nsid, token string, q url.Values, ctype string, body []byte) bskyAnswer {
	h.t.Helper()
	u := h.srv.URL + "/sandbox/bluesky/xrpc/" + nsid
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, _ := http.NewRequest(method, u, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := bskyAnswer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (h *bskyHarness) post(nsid, token string, v any) bskyAnswer {
	h.t.Helper()
	b, _ := json.Marshal(v)
	return h.call(http.MethodPost, nsid, token, nil, "application/json", b)
}

func (a bskyAnswer) want(t *testing.T, status int, name, text string) {
	t.Helper()
	if a.status != status || (name != "" && a.body["error"] != name) || !strings.Contains(fmt.Sprint(a.body["message"]), text) {
		t.Errorf("answer %d %s; want %d %s with %q", a.status, a.raw, status, name, text)
	}
}

func (h *bskyHarness) login() (access, refresh string) {
	h.t.Helper()
	a := h.post("com.atproto.server.createSession", "", map[string]string{"identifier": sandboxtoken.BlueskyHandle("sbx_aa"), "password": "pw"})
	if a.status != 200 {
		h.t.Fatalf("createSession: %d %s", a.status, a.raw)
	}
	return a.body["accessJwt"].(string), a.body["refreshJwt"].(string)
}

func (h *bskyHarness) serviceToken(access, aud, lxm string) string {
	h.t.Helper()
	q := url.Values{"aud": {aud}, "lxm": {lxm}, "exp": {strconv.FormatInt(h.clock.Now().Add(30*time.Minute).Unix(), 10)}}
	a := h.call(http.MethodGet, "com.atproto.server.getServiceAuth", access, q, "", nil)
	if a.status != 200 {
		h.t.Fatalf("getServiceAuth: %d %s", a.status, a.raw)
	}
	return a.body["token"].(string)
}

func bskyVideo(t *testing.T, d time.Duration) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := mediatest.WriteMP4(&b, mediatest.Options{Duration: d, Width: 720, Height: 1280, Size: 200 << 10}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload sends a video to the video service and waits for its blob.
func (h *bskyHarness) upload(access string, video []byte) map[string]any {
	h.t.Helper()
	did := DID("sbx_aa")
	tok := h.serviceToken(access, h.sim.ServiceDID(), "com.atproto.repo.uploadBlob")
	a := h.call(http.MethodPost, "app.bsky.video.uploadVideo", tok, url.Values{"did": {did}, "name": {"v.mp4"}}, "video/mp4", video)
	if a.status != 200 || a.body["state"] != "JOB_STATE_CREATED" && a.body["state"] != "JOB_STATE_ENCODING" {
		h.t.Fatalf("uploadVideo: %d %s", a.status, a.raw)
	}
	h.clock.Advance(time.Minute)
	js := h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", url.Values{"jobId": {a.body["jobId"].(string)}}, "", nil)
	st, _ := js.body["jobStatus"].(map[string]any)
	if st["state"] != "JOB_STATE_COMPLETED" {
		h.t.Fatalf("job: %s", js.raw)
	}
	return st["blob"].(map[string]any)
}

func TestBlueskySessions(t *testing.T) {
	t.Parallel()
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: -1}, Options{SessionsPer5Min: 3})
	handle := sandboxtoken.BlueskyHandle("sbx_aa")
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": handle, "password": "wrong"}).
		want(t, 401, "AuthenticationRequired", "Invalid identifier or password")
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": "other.bsky.test", "password": "pw"}).
		want(t, 401, "AuthenticationRequired", "Invalid identifier or password")
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": handle}).
		want(t, 400, "InvalidRequest", "password")
	access, refresh := h.login()
	// The limit counts every call of the identifier, refused ones too: three in five minutes
	// (the wrong password, the login above, this one).
	if a := h.post("com.atproto.server.createSession", "", map[string]string{"identifier": handle, "password": "pw"}); a.status != 200 {
		t.Errorf("third sign-in = %d %s", a.status, a.raw)
	}
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": handle, "password": "pw"}).
		want(t, 429, "RateLimitExceeded", "Rate Limit Exceeded")
	a := h.post("com.atproto.server.createSession", "", map[string]string{"identifier": handle, "password": "pw"})
	reset, _ := strconv.ParseInt(a.header.Get("RateLimit-Reset"), 10, 64)
	if a.status != 429 || a.header.Get("RateLimit-Limit") != "3" || a.header.Get("RateLimit-Remaining") != "0" ||
		time.Unix(reset, 0).Sub(h.clock.Now()) != 5*time.Minute {
		t.Errorf("rate-limited answer %d %v", a.status, a.header)
	}

	prof := func(tok string) bskyAnswer {
		return h.call(http.MethodGet, "app.bsky.actor.getProfile", tok, url.Values{"actor": {DID("sbx_aa")}}, "", nil)
	}
	if a := prof(access); a.status != 200 || a.body["handle"] != handle || a.body["did"] != DID("sbx_aa") {
		t.Errorf("getProfile = %d %s", a.status, a.raw)
	}
	prof("").want(t, 401, "AuthenticationRequired", "")
	prof("garbage.token.here").want(t, 400, "InvalidToken", "")
	prof(refresh).want(t, 400, "InvalidToken", "scope")
	h.clock.Advance(2*time.Hour + time.Second)
	prof(access).want(t, 400, "ExpiredToken", "Token has expired")

	r1 := h.post("com.atproto.server.refreshSession", refresh, nil)
	if r1.status != 200 || r1.body["accessJwt"] == nil {
		t.Fatalf("refreshSession = %d %s", r1.status, r1.raw)
	}
	if a := prof(r1.body["accessJwt"].(string)); a.status != 200 {
		t.Errorf("getProfile with the refreshed token = %d %s", a.status, a.raw)
	}
	// A refresh token is good once.
	h.post("com.atproto.server.refreshSession", refresh, nil).want(t, 400, "ExpiredToken", "revoked")
}

func TestBlueskyServiceAuthAndVideoService(t *testing.T) {
	t.Parallel()
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: -1}, Options{MaxVideoBytes: 300 << 10})
	access, _ := h.login()
	did := DID("sbx_aa")
	q := func(aud, lxm string, exp time.Duration) url.Values {
		return url.Values{"aud": {aud}, "lxm": {lxm}, "exp": {strconv.FormatInt(h.clock.Now().Add(exp).Unix(), 10)}}
	}
	h.call(http.MethodGet, "com.atproto.server.getServiceAuth", access, q(h.sim.ServiceDID(), "com.atproto.repo.uploadBlob", 2*time.Hour), "", nil).
		want(t, 400, "BadExpiration", "hour")
	h.call(http.MethodGet, "com.atproto.server.getServiceAuth", access, q(h.sim.ServiceDID(), "", 10*time.Minute), "", nil).
		want(t, 400, "BadExpiration", "minute")
	h.call(http.MethodGet, "com.atproto.server.getServiceAuth", access, q("video.bsky.app", "x", time.Minute), "", nil).
		want(t, 400, "InvalidRequest", "aud")

	video := bskyVideo(t, 10*time.Second)
	params := url.Values{"did": {did}, "name": {"v.mp4"}}
	up := func(tok, ctype string, p url.Values, body []byte) bskyAnswer {
		return h.call(http.MethodPost, "app.bsky.video.uploadVideo", tok, p, ctype, body)
	}
	wrongAud := h.serviceToken(access, "did:web:video.bsky.app", "com.atproto.repo.uploadBlob")
	up(wrongAud, "video/mp4", params, video).want(t, 401, "", "audience")
	wrongLxm := h.serviceToken(access, h.sim.ServiceDID(), "app.bsky.video.uploadVideo")
	up(wrongLxm, "video/mp4", params, video).want(t, 401, "", "lxm")
	up(access, "video/mp4", params, video).want(t, 401, "", "invalid token")
	tok := h.serviceToken(access, h.sim.ServiceDID(), "com.atproto.repo.uploadBlob")
	up(tok, "video/mp4", url.Values{"did": {"did:plc:someoneelse"}}, video).want(t, 400, "InvalidRequest", "issuer")
	up(tok, "text/plain", params, video).want(t, 400, "InvalidRequest", "content type")
	up(tok, "video/mp4", params, make([]byte, 301<<10)).want(t, 413, "PayloadTooLarge", "")
	if n := len(h.rec.Snapshot(nil).Uploads); n != 0 {
		t.Fatalf("%d refused uploads recorded", n)
	}

	first := up(tok, "video/mp4", params, video)
	if first.status != 200 || first.body["state"] != "JOB_STATE_ENCODING" || first.body["did"] != did || first.body["jobId"] == "" {
		t.Fatalf("uploadVideo = %d %s", first.status, first.raw)
	}
	again := up(tok, "video/mp4", params, video)
	if again.status != 409 || again.body["error"] != "already_exists" || again.body["jobId"] != first.body["jobId"] {
		t.Errorf("the same video again = %d %s", again.status, again.raw)
	}
	if n := len(h.rec.Snapshot(nil).Uploads); n != 1 {
		t.Errorf("%d uploads recorded, want 1", n)
	}
	job := url.Values{"jobId": {first.body["jobId"].(string)}}
	js := h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", job, "", nil)
	if st := js.body["jobStatus"].(map[string]any); st["state"] != "JOB_STATE_ENCODING" || st["blob"] != nil {
		t.Errorf("job before processing = %s", js.raw)
	}
	h.clock.Advance(3 * time.Second)
	js = h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", job, "", nil)
	st := js.body["jobStatus"].(map[string]any)
	blob, _ := st["blob"].(map[string]any)
	if st["state"] != "JOB_STATE_COMPLETED" || blob["$type"] != "blob" || blob["mimeType"] != "video/mp4" ||
		!strings.HasPrefix(blob["ref"].(map[string]any)["$link"].(string), "bafkrei") {
		t.Errorf("job after processing = %s", js.raw)
	}
	h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", url.Values{"jobId": {"nope"}}, "", nil).want(t, 404, "", "not found")

	long := up(tok, "video/mp4", params, bskyVideo(t, 181*time.Second))
	h.clock.Advance(time.Minute)
	js = h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", url.Values{"jobId": {long.body["jobId"].(string)}}, "", nil)
	if st := js.body["jobStatus"].(map[string]any); st["state"] != "JOB_STATE_FAILED" || !strings.Contains(fmt.Sprint(st["message"]), "too long") {
		t.Errorf("a video over 3 minutes = %s", js.raw)
	}

	lt := h.serviceToken(access, h.sim.ServiceDID(), "app.bsky.video.getUploadLimits")
	lim := h.call(http.MethodGet, "app.bsky.video.getUploadLimits", lt, nil, "", nil)
	if lim.body["canUpload"] != true || lim.body["remainingDailyVideos"] != float64(23) {
		t.Errorf("getUploadLimits = %s", lim.raw)
	}
}

func TestBlueskyCreateRecord(t *testing.T) {
	t.Parallel()
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: -1}, Options{})
	access, _ := h.login()
	did := DID("sbx_aa")
	blob := h.upload(access, bskyVideo(t, 5*time.Second))
	embed := map[string]any{"$type": "app.bsky.embed.video", "video": blob, "aspectRatio": map[string]int{"width": 9, "height": 16}}
	rec := func(mod func(map[string]any)) map[string]any {
		r := map[string]any{"$type": "app.bsky.feed.post", "text": "hi #x", "createdAt": "2026-03-01T12:00:00.000Z", "embed": embed,
			"facets": []any{map[string]any{"index": map[string]int{"byteStart": 3, "byteEnd": 5},
				"features": []any{map[string]string{"$type": "app.bsky.richtext.facet#tag", "tag": "x"}}}}}
		if mod != nil {
			mod(r)
		}
		return r
	}
	create := func(rkey string, r map[string]any) bskyAnswer {
		in := map[string]any{"repo": did, "collection": "app.bsky.feed.post", "record": r}
		if rkey != "" {
			in["rkey"] = rkey
		}
		return h.post("com.atproto.repo.createRecord", access, in)
	}
	for _, c := range []struct {
		name   string
		rkey   string
		mod    func(map[string]any)
		status int
		text   string
	}{
		{"301 graphemes", "", func(r map[string]any) { r["text"] = strings.Repeat("é", 301) }, 400, "longer than 300 graphemes"},
		{"3001 bytes", "", func(r map[string]any) {
			r["text"] = strings.Repeat("👨‍👩‍👧‍👦", 121)
			delete(r, "facets")
		}, 400, "3000"},
		{"no createdAt", "", func(r map[string]any) { delete(r, "createdAt") }, 400, "createdAt"},
		{"bad createdAt", "", func(r map[string]any) { r["createdAt"] = "yesterday" }, 400, "datetime"},
		{"wrong $type", "", func(r map[string]any) { r["$type"] = "app.bsky.feed.like" }, 400, "$type"},
		{"facet outside the text", "", func(r map[string]any) {
			r["facets"] = []any{map[string]any{"index": map[string]int{"byteStart": 3, "byteEnd": 9},
				"features": []any{map[string]string{"$type": "app.bsky.richtext.facet#tag", "tag": "x"}}}}
		}, 400, "facets/0"},
		{"facet inside a character", "", func(r map[string]any) {
			r["text"] = "é #x"
			r["facets"] = []any{map[string]any{"index": map[string]int{"byteStart": 1, "byteEnd": 6},
				"features": []any{map[string]string{"$type": "app.bsky.richtext.facet#tag", "tag": "x"}}}}
		}, 400, "whole characters"},
		{"tag too long", "", func(r map[string]any) {
			r["facets"] = []any{map[string]any{"index": map[string]int{"byteStart": 3, "byteEnd": 5},
				"features": []any{map[string]string{"$type": "app.bsky.richtext.facet#tag", "tag": strings.Repeat("t", 65)}}}}
		}, 400, "64 graphemes"},
		{"four langs", "", func(r map[string]any) { r["langs"] = []string{"en", "fr", "de", "es"} }, 400, "langs"},
		{"no embed", "", func(r map[string]any) { delete(r, "embed") }, 400, "video"},
		{"unknown blob", "", func(r map[string]any) {
			r["embed"] = map[string]any{"$type": "app.bsky.embed.video", "video": map[string]any{"$type": "blob",
				"ref": map[string]string{"$link": "bafkreiunknown"}, "mimeType": "video/mp4", "size": 10}}
		}, 400, "Could not find blob"},
		{"quicktime blob", "", func(r map[string]any) {
			b := map[string]any{}
			for k, v := range blob {
				b[k] = v
			}
			b["mimeType"] = "video/quicktime"
			r["embed"] = map[string]any{"$type": "app.bsky.embed.video", "video": b}
		}, 400, "video/mp4"},
		{"zero aspect ratio", "", func(r map[string]any) {
			r["embed"] = map[string]any{"$type": "app.bsky.embed.video", "video": blob, "aspectRatio": map[string]int{"width": 0, "height": 16}}
		}, 400, "aspectRatio"},
		{"rkey not a TID", "self", nil, 400, "TID"},
	} {
		create(c.rkey, rec(c.mod)).want(t, c.status, "InvalidRequest", c.text)
		_ = c.name
	}
	if n := len(h.rec.Snapshot(nil).Published); n != 0 {
		t.Fatalf("%d refused records published", n)
	}

	rkey := bskyNewTID(h.clock.Now())
	ok := create(rkey, rec(nil))
	uri := "at://" + did + "/app.bsky.feed.post/" + rkey
	if ok.status != 200 || ok.body["uri"] != uri || !strings.HasPrefix(fmt.Sprint(ok.body["cid"]), "bafyrei") {
		t.Fatalf("createRecord = %d %s", ok.status, ok.raw)
	}
	create(rkey, rec(nil)).want(t, 500, "InternalServerError", "")
	pub := h.rec.Snapshot(nil).Published
	if len(pub) != 1 || pub[0].ID != uri || pub[0].Text != "hi #x" ||
		pub[0].URL != "https://bsky.app/profile/"+sandboxtoken.BlueskyHandle("sbx_aa")+"/post/"+rkey {
		t.Errorf("published = %+v", pub)
	}
	get := func(rk string) bskyAnswer {
		return h.call(http.MethodGet, "com.atproto.repo.getRecord", "", url.Values{"repo": {did}, "collection": {"app.bsky.feed.post"}, "rkey": {rk}}, "", nil)
	}
	if g := get(rkey); g.status != 200 || g.body["uri"] != uri || g.body["value"].(map[string]any)["text"] != "hi #x" {
		t.Errorf("getRecord = %d %s", g.status, g.raw)
	}
	get(bskyNewTID(h.clock.Now().Add(time.Second))).want(t, 400, "RecordNotFound", "Could not locate record")
	h.call(http.MethodGet, "com.atproto.repo.createRecord", access, nil, "", nil).want(t, 400, "InvalidRequest", "HTTP method")
	h.call(http.MethodGet, "com.atproto.repo.listRecords", access, nil, "", nil).want(t, 501, "MethodNotImplemented", "")
	h.call(http.MethodPost, "com.atproto.repo.createRecord", access, nil, "text/plain", []byte("{}")).want(t, 400, "InvalidRequest", "Content-Type")
}

func TestBlueskyFaultShapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		name   string
	}{
		{sim.FailUnavailable, 503, "NotEnoughResources"},
		{sim.FailRateLimit, 429, "RateLimitExceeded"},
		{sim.FailAuth, 401, "AuthenticationRequired"},
	} {
		h := newBskyHarness(t, sim.Behavior{Fail: c.fail}, Options{})
		a := h.post("com.atproto.server.createSession", "", map[string]string{"identifier": sandboxtoken.BlueskyHandle("sbx_aa"), "password": "pw"})
		a.want(t, c.status, c.name, "")
		if c.fail == sim.FailRateLimit && a.header.Get("RateLimit-Reset") == "" {
			t.Errorf("429 without RateLimit-Reset: %v", a.header)
		}
	}
	// Reject: the video service fails the job with its message.
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: 0, Fail: sim.FailReject}, Options{})
	access, _ := h.login()
	tok := h.serviceToken(access, h.sim.ServiceDID(), "com.atproto.repo.uploadBlob")
	a := h.call(http.MethodPost, "app.bsky.video.uploadVideo", tok, url.Values{"did": {DID("sbx_aa")}}, "video/mp4", bskyVideo(t, 5*time.Second))
	js := h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", url.Values{"jobId": {fmt.Sprint(a.body["jobId"])}}, "", nil)
	st, _ := js.body["jobStatus"].(map[string]any)
	if st["state"] != "JOB_STATE_FAILED" || st["message"] != "Failed to process video" || !strings.HasPrefix(fmt.Sprint(st["error"]), "video processing error for job: ") {
		t.Errorf("rejected job = %s", js.raw)
	}
}
