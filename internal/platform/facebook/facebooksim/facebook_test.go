package facebooksim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/facebook/facebooksim"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

const (
	fbTok  = "fb-sim-token"
	fbPage = "104000000000042"
)

func newFacebookEnv(t *testing.T, b sim.Behavior) *providertest.Env {
	t.Helper()
	return providertest.NewEnv(t, "facebook", sim.StaticAccounts{fbTok: {ID: fbPage, Username: "simpage", Behavior: b}}, facebooksim.New, providertest.Options{})
}

func fbGraph(t *testing.T, e *providertest.Env, method, path string, p url.Values) simtest.MetaAnswer {
	return simtest.MetaCall(t, e, method, "/v26.0"+path, p, "Bearer "+fbTok)
}

func fbStart(t *testing.T, e *providertest.Env) (id, uploadURL string) {
	t.Helper()
	a := fbGraph(t, e, http.MethodPost, "/"+fbPage+"/video_reels", url.Values{"upload_phase": {"start"}})
	id, uploadURL = a.Str("video_id"), a.Str("upload_url")
	if a.Status != 200 || id == "" || uploadURL != e.BaseURL+"/video-upload/v26.0/"+id {
		t.Fatalf("start: %d %v", a.Status, a.Body)
	}
	return id, uploadURL
}

type uploadAnswer struct {
	status int
	body   map[string]any
}

func (a uploadAnswer) debugType() string {
	di, _ := a.body["debug_info"].(map[string]any)
	s, _ := di["type"].(string)
	return s
}

// fbUpload posts body to the upload URL with the given headers (nil values are left out).
func fbUpload(t *testing.T, e *providertest.Env, u string, body io.Reader, length int64, h map[string]string) uploadAnswer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, body)
	req.ContentLength = length
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		return uploadAnswer{}
	}
	defer resp.Body.Close()
	a := uploadAnswer{status: resp.StatusCode}
	_ = json.NewDecoder(resp.Body).Decode(&a.body)
	return a
}

func fbHeaders(offset, size int64) map[string]string {
	return map[string]string{"Authorization": "OAuth " + fbTok, "offset": strconv.FormatInt(offset, 10), "file_size": strconv.FormatInt(size, 10)}
}

func fbStatus(t *testing.T, e *providertest.Env, id string) map[string]any {
	t.Helper()
	a := fbGraph(t, e, http.MethodGet, "/"+id, url.Values{"fields": {"status"}})
	st, ok := a.Body["status"].(map[string]any)
	if !ok {
		t.Fatalf("status of %s: %v", id, a.Body)
	}
	return st
}

func phaseOf(st map[string]any, name string) map[string]any {
	ph, _ := st[name].(map[string]any)
	return ph
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection lost") }

// The upload host is as strict as the guide: OAuth header, offset and file_size headers, the
// body from the offset to the end; a broken body keeps its bytes and resumes at the offset the
// status reports.
func TestFacebookUploadProtocol(t *testing.T) {
	t.Parallel()
	e := newFacebookEnv(t, sim.Behavior{ProcessingMS: 10_000})
	v := providertest.ShortVideo()
	data, size := v.Bytes(), v.Size()
	id, up := fbStart(t, e)

	refusals := []struct {
		name   string
		h      map[string]string
		body   []byte
		status int
		typ    string
	}{
		{"bearer scheme", map[string]string{"Authorization": "Bearer " + fbTok, "offset": "0", "file_size": strconv.FormatInt(size, 10)}, data, 400, ""},
		{"no offset", map[string]string{"Authorization": "OAuth " + fbTok, "file_size": strconv.FormatInt(size, 10)}, data, 400, "ParameterValidationError"},
		{"no file_size", map[string]string{"Authorization": "OAuth " + fbTok, "offset": "0"}, data, 400, "ParameterValidationError"},
		{"wrong offset", fbHeaders(100, size), data[100:], 412, "OffsetInvalidError"},
		{"short body", fbHeaders(0, size), data[:1000], 400, "PartialRequestError"},
		{"hosted file", map[string]string{"Authorization": "OAuth " + fbTok, "offset": "0", "file_size": strconv.FormatInt(size, 10), "file_url": "https://example.com/v.mp4"}, nil, 400, "ParameterValidationError"},
	}
	for _, c := range refusals {
		a := fbUpload(t, e, up, bytes.NewReader(c.body), int64(len(c.body)), c.h)
		if a.status != c.status || a.debugType() != c.typ {
			t.Fatalf("%s: %d %v", c.name, a.status, a.body)
		}
	}
	if ph := phaseOf(fbStatus(t, e, id), "uploading_phase"); ph["status"] != "not_started" || ph["bytes_transferred"] != 0.0 {
		t.Fatalf("after refusals: %v", ph)
	}

	// The connection breaks after 1 MiB: the bytes that arrived stay.
	half := int64(1 << 20)
	fbUpload(t, e, up, io.MultiReader(bytes.NewReader(data[:half]), failingReader{}), size, fbHeaders(0, size))
	// The client gives up on the request before the server has read what arrived (on a loaded
	// machine, before its handler has even run): the status shows the bytes once it has.
	var off int64
	for deadline := time.Now().Add(10 * time.Second); off == 0; time.Sleep(5 * time.Millisecond) {
		st := fbStatus(t, e, id)
		ph := phaseOf(st, "uploading_phase")
		n, _ := ph["bytes_transferred"].(float64)
		if off = int64(n); off > 0 && (st["video_status"] != "uploading" || ph["status"] != "in_progress" || off > half) {
			t.Fatalf("after a broken upload: %v; want the bytes that arrived, at most %d", st, half)
		}
		if off == 0 && time.Now().After(deadline) {
			t.Fatalf("no bytes of the broken upload kept: %v", st)
		}
	}
	if a := fbGraph(t, e, http.MethodPost, "/"+fbPage+"/video_reels", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}}); a.Code() != 6000 {
		t.Fatalf("finish before the upload completed: %v", a.Body)
	}
	// Resume at the reported offset.
	if a := fbUpload(t, e, up, bytes.NewReader(data[off:]), size-off, fbHeaders(off, size)); a.status != 200 || a.body["success"] != true {
		t.Fatalf("resume from %d: %d %v", off, a.status, a.body)
	}
	st := fbStatus(t, e, id)
	if phaseOf(st, "uploading_phase")["status"] != "complete" || st["video_status"] != "processing" || phaseOf(st, "processing_phase")["status"] != "in_progress" {
		t.Fatalf("after the upload: %v", st)
	}
	if a := fbUpload(t, e, up, bytes.NewReader(data), size, fbHeaders(0, size)); a.status != 412 {
		t.Fatalf("a second upload: %d %v", a.status, a.body)
	}
	rec := e.Introspect()
	if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.SHA256() || rec.Uploads[0].Bytes != size {
		t.Fatalf("uploads %+v", rec.Uploads)
	}
}

func fbUploadAll(t *testing.T, e *providertest.Env, up string, v *providertest.Video) {
	t.Helper()
	if a := fbUpload(t, e, up, bytes.NewReader(v.Bytes()), v.Size(), fbHeaders(0, v.Size())); a.status != 200 {
		t.Fatalf("upload: %d %v", a.status, a.body)
	}
}

// Finish: its required parameters, once only, then published when processed.
func TestFacebookFinish(t *testing.T) {
	t.Parallel()
	e := newFacebookEnv(t, sim.Behavior{ProcessingMS: 10_000})
	v := providertest.ShortVideo()
	id, up := fbStart(t, e)
	fbUploadAll(t, e, up, v)
	finish := func(p url.Values) simtest.MetaAnswer {
		return fbGraph(t, e, http.MethodPost, "/"+fbPage+"/video_reels", p)
	}
	for _, c := range []struct {
		name string
		p    url.Values
	}{
		{"no upload_phase", url.Values{"video_id": {id}, "video_state": {"PUBLISHED"}}},
		{"no video_id", url.Values{"upload_phase": {"finish"}, "video_state": {"PUBLISHED"}}},
		{"no video_state", url.Values{"upload_phase": {"finish"}, "video_id": {id}}},
		{"bad video_state", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"LIVE"}}},
		{"scheduled without a time", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"SCHEDULED"}}},
		{"title too long", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}, "title": {strings.Repeat("t", 201)}}},
		{"unknown video", url.Values{"upload_phase": {"finish"}, "video_id": {"999"}, "video_state": {"PUBLISHED"}}},
	} {
		if a := finish(c.p); a.Status != 400 || a.Code() != 100 {
			t.Fatalf("%s: %d %v", c.name, a.Status, a.Body)
		}
	}
	ok := url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}, "description": {"Hello #reel"}, "title": {"Hi"}}
	if a := finish(ok); a.Status != 200 || a.Body["success"] != true {
		t.Fatalf("finish: %v", a.Body)
	}
	if a := finish(ok); a.Status != 400 {
		t.Fatalf("second finish: %v", a.Body)
	}
	if pub := phaseOf(fbStatus(t, e, id), "publishing_phase"); pub["status"] != "in_progress" {
		t.Fatalf("publishing while processing: %v", pub)
	}
	if n := len(e.Introspect().Published); n != 0 {
		t.Fatalf("published before processing: %d", n)
	}
	e.Clock.Advance(10 * time.Second)
	st := fbStatus(t, e, id)
	if pub := phaseOf(st, "publishing_phase"); st["video_status"] != "ready" || pub["status"] != "complete" || pub["publish_status"] != "published" {
		t.Fatalf("after processing: %v", st)
	}
	rec := e.Introspect()
	if len(rec.Published) != 1 || rec.Published[0].ID != id || rec.Published[0].URL != "https://www.facebook.com/reel/"+id || rec.Published[0].Text != "Hello #reel" {
		t.Fatalf("published %+v", rec.Published)
	}
	list := fbGraph(t, e, http.MethodGet, "/me/video_reels", nil)
	if data, _ := list.Body["data"].([]any); len(data) != 1 || data[0].(map[string]any)["description"] != "Hello #reel" {
		t.Fatalf("list %v", list.Body)
	}
	if a := fbGraph(t, e, http.MethodGet, "/"+id, url.Values{"fields": {"plays"}}); a.Code() != 100 {
		t.Fatalf("unknown field: %v", a.Body)
	}
}

// A refused video shows Meta's message in the processing phase, and a finish after it answers
// code 6000 with the reels subcode.
func TestFacebookRefusal(t *testing.T) {
	t.Parallel()
	e := newFacebookEnv(t, sim.Behavior{ProcessingMS: 0})
	id, up := fbStart(t, e)
	fbUploadAll(t, e, up, providertest.NewVideo(1<<20, 2*time.Second, 1080, 1920))
	st := fbStatus(t, e, id)
	proc := phaseOf(st, "processing_phase")
	perr, _ := proc["error"].(map[string]any)
	if st["video_status"] != "error" || proc["status"] != "error" || !strings.Contains(perr["message"].(string), "duration that isn't supported") {
		t.Fatalf("status %v", st)
	}
	a := fbGraph(t, e, http.MethodPost, "/"+fbPage+"/video_reels", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}})
	ge, _ := a.Body["error"].(map[string]any)
	if a.Code() != 6000 || ge["error_subcode"] != 1363128.0 {
		t.Fatalf("finish: %v", a.Body)
	}
}

// A reel outside 24-60 fps is refused with the frame-rate subcode, 1363129 (issue 31, item 8);
// 24 and 60 fps pass.
func TestFacebookFrameRate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fps     int
		subcode int
	}{{20, 1363129}, {120, 1363129}, {24, 0}, {60, 0}} {
		e := newFacebookEnv(t, sim.Behavior{ProcessingMS: 0})
		id, up := fbStart(t, e)
		fbUploadAll(t, e, up, providertest.NewVideoOf(1<<20, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920, FPS: c.fps}))
		a := fbGraph(t, e, http.MethodPost, "/"+fbPage+"/video_reels", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}})
		ge, _ := a.Body["error"].(map[string]any)
		switch {
		case c.subcode == 0 && ge != nil:
			t.Errorf("%d fps: finish %v", c.fps, a.Body)
		case c.subcode != 0 && (a.Code() != 6000 || ge["error_subcode"] != float64(c.subcode)):
			t.Errorf("%d fps: finish %v, want 6000/%d", c.fps, a.Body, c.subcode)
		}
		if c.subcode != 0 {
			proc := phaseOf(fbStatus(t, e, id), "processing_phase")
			if perr, _ := proc["error"].(map[string]any); perr == nil || !strings.Contains(perr["message"].(string), "frame rate") {
				t.Errorf("%d fps: processing phase %v", c.fps, proc)
			}
		}
	}
}

func TestFacebookUploadHostFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail string
		code int
	}{{sim.FailAuth, 190}, {sim.FailUnavailable, 2}, {sim.FailRateLimit, 32}} {
		e := newFacebookEnv(t, sim.Behavior{Fail: c.fail})
		a := fbUpload(t, e, e.BaseURL+"/video-upload/v26.0/1200000000000001", bytes.NewReader([]byte("x")), 1, fbHeaders(0, 1))
		ge, _ := a.body["error"].(map[string]any)
		if n, _ := ge["code"].(float64); int(n) != c.code {
			t.Fatalf("%s: %d %v", c.fail, a.status, a.body)
		}
	}
}

func TestFacebookSessionExpiry(t *testing.T) {
	t.Parallel()
	e := newFacebookEnv(t, sim.Behavior{})
	id, up := fbStart(t, e)
	e.Clock.Advance(24 * time.Hour)
	if st := fbStatus(t, e, id); st["video_status"] != "expired" {
		t.Fatalf("status %v", st)
	}
	v := providertest.ShortVideo()
	if a := fbUpload(t, e, up, bytes.NewReader(v.Bytes()), v.Size(), fbHeaders(0, v.Size())); a.status != 400 {
		t.Fatalf("upload to an expired session: %d %v", a.status, a.body)
	}
}

func TestFacebookPageNode(t *testing.T) {
	t.Parallel()
	e := newFacebookEnv(t, sim.Behavior{})
	a := fbGraph(t, e, http.MethodGet, "/me", url.Values{"fields": {"id,name,username,category,picture"}})
	pic, _ := a.Body["picture"].(map[string]any)
	if a.Str("id") != fbPage || a.Str("name") != "simpage" || a.Str("category") == "" || pic["data"] == nil {
		t.Fatalf("page %v", a.Body)
	}
	if a := fbGraph(t, e, http.MethodPost, "/104000000000099/video_reels", url.Values{"upload_phase": {"start"}}); a.Code() != 100 {
		t.Fatalf("another Page: %v", a.Body)
	}
}

// What the Reels specifications refuse is refused from the uploaded bytes: a 16:9 picture with
// the aspect subcode 1363040, a VP9 picture in WebM (not MP4) as a failed processing; an HEVC
// 9:16 MP4 ("H.264, H.265") passes.
func TestFacebookRefusesOutsideReelsSpecs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		video   []byte
		ok      bool
		subcode float64
		msg     string
	}{
		{"16:9", mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1920, Height: 1080}), false, 1363040, "aspect ratio"},
		{"VP9 WebM", simtest.VP9WebM(t, 540, 960, 5*time.Second), false, 0, "Request processing failed"},
		{"HEVC 9:16", simtest.HEVCMP4(t, 540, 960, 5*time.Second), true, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFacebookEnv(t, sim.Behavior{ProcessingMS: 0})
			id, up := fbStart(t, e)
			size := int64(len(c.video))
			if a := fbUpload(t, e, up, bytes.NewReader(c.video), size, fbHeaders(0, size)); a.status != 200 {
				t.Fatalf("upload: %d %v", a.status, a.body)
			}
			a := fbGraph(t, e, http.MethodPost, "/"+fbPage+"/video_reels", url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}})
			ge, _ := a.Body["error"].(map[string]any)
			if c.ok {
				if ge != nil {
					t.Fatalf("finish: %v", a.Body)
				}
				return
			}
			if a.Code() != 6000 || (c.subcode != 0 && ge["error_subcode"] != c.subcode) || !strings.Contains(ge["message"].(string), c.msg) {
				t.Fatalf("finish: %v, want 6000/%v %q", a.Body, c.subcode, c.msg)
			}
		})
	}
}
