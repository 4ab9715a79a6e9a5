package httpapi_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
)

// formPart is one part of a multipart form, in the order it is sent.
type formPart struct{ name, value string }

// orderedForm builds a multipart publish form with its parts in the given order; a part named
// "video" carries the bytes of video.
func orderedForm(t *testing.T, parts []formPart, video []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		if p.name == "video" {
			w, err := mw.CreateFormFile("video", "clip.mp4")
			if err != nil {
				t.Fatal(err)
			}
			w.Write(video)
			continue
		}
		mw.WriteField(p.name, p.value)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// When a form's fields come before its file, what they already refuse is answered before the
// file is read: an unknown platform, a platform with no channel, a text over its limit, a
// channel or project that is not the caller's, a spent allowance. Nothing is stored, and the
// body is read no further than the file's first block. Fields sent after the file cannot be
// refused early for what they might still change; with the file first, the checks run after it
// as they always did.
func TestPublishFormChecksFieldsBeforeTheFile(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	yt, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
	bobs, _ := e.sandboxChannel(e.b, "youtube", nil)
	// The video is a real MP4 padded to 16 MB, so that a body read whole is told apart from
	// one refused at the file's start.
	clip := video(t, 4)
	big := append(append([]byte{}, clip...), make([]byte, 16<<20)...)
	const earlyRead = 1 << 20

	send := func(parts []formPart, query string) (*httptest.ResponseRecorder, int64) {
		body, ct := orderedForm(t, parts, big)
		cr := &mediatest.CountingReader{R: bytes.NewReader(body)}
		hr := httptest.NewRequest("POST", "http://reelay.test/api/v1/publish"+query, cr)
		hr.Header.Set("Content-Type", ct)
		hr.Header.Set("X-API-Key", e.a.Key)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, hr)
		return rec, cr.N()
	}
	project := formPart{"project_id", e.a.ProjectID}
	file := formPart{"video", ""}
	cases := []struct {
		name   string
		parts  []formPart
		status int
		field  string
	}{
		{"unknown platform", []formPart{project, {"platforms", `["myspace"]`}, {"title", "t"}, file}, 400, "platforms[0]"},
		{"platform with no channel", []formPart{project, {"platforms", "youtube,bluesky"}, {"title", "t"}, file}, 400, "platforms"},
		{"title over 100 characters", []formPart{project, {"title", strings.Repeat("t", 101)}, file}, 400, "title"},
		{"platform text over its limit", []formPart{project, {"title", "t"}, {"youtube", `{"description":"` + strings.Repeat("d", 5001) + `"}`}, file}, 400, "youtube.description"},
		{"control character", []formPart{project, {"caption", "a\x00b"}, file}, 400, "caption"},
		{"another tenant's channel", []formPart{project, {"channel_ids", `["` + bobs + `"]`}, {"title", "t"}, file}, 400, "channel_ids[0]"},
		{"another tenant's project", []formPart{{"project_id", e.b.ProjectID}, {"title", "t"}, file}, 404, ""},
		{"unknown field", []formPart{project, {"colour", "red"}, file}, 400, "colour"},
	}
	for _, c := range cases {
		rec, read := send(c.parts, "")
		var answer struct {
			Error struct{ Fields map[string]string }
		}
		json.Unmarshal(rec.Body.Bytes(), &answer)
		if rec.Code != c.status || (c.field != "" && answer.Error.Fields[c.field] == "") {
			t.Errorf("%s: %d %s", c.name, rec.Code, rec.Body)
		}
		if read > earlyRead {
			t.Errorf("%s: %d bytes of the body read before the refusal, want at most %d", c.name, read, earlyRead)
		}
	}

	// The file first: the same refusal, after the file (as before).
	rec, read := send([]formPart{file, project, {"platforms", `["myspace"]`}, {"title", "t"}}, "")
	if rec.Code != 400 || read < int64(len(big)) {
		t.Errorf("file first: %d after %d bytes: %s", rec.Code, read, rec.Body)
	}
	// What the fields before the file leave open is not refused early: the title YouTube needs
	// and the channel come after the file here.
	rec, _ = send([]formPart{project, {"platforms", `["youtube"]`}, file, {"title", "Later"}, {"channel_ids", `["` + yt + `"]`}}, "?dry_run=true")
	if rec.Code != 200 {
		t.Errorf("fields around the file: %d %s", rec.Code, rec.Body)
	}
	if n := e.blobCount(); n != 0 {
		t.Errorf("%d files left in storage", n)
	}

	// A platform with no channel is refused with channel_ids too, as it is without: so a form
	// whose channel_ids come after the file is not refused early for what it would be
	// accepted for.
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": clip})
	r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key, Body: map[string]any{
		"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "title": "t",
		"platforms": []string{"youtube", "bluesky"}, "channel_ids": []string{yt}}})
	if r.Code != 400 || !strings.Contains(r.field("platforms"), "no Bluesky channel") {
		t.Errorf("a platform with no channel, with channel_ids: %d %s", r.Code, r.Body)
	}

	// A spent allowance is answered before the file too, but a replay of the post that spent
	// it under the same Idempotency-Key is not refused.
	one := 1
	limit := &one
	if _, err := e.st.UpdateAccount(t.Context(), e.a.AccountID, store.AccountUpdate{MonthlyPostLimit: &limit}); err != nil {
		t.Fatal(err)
	}
	withKey := func(key string) (*httptest.ResponseRecorder, int64) {
		body, ct := orderedForm(t, []formPart{project, {"platforms", "youtube"}, {"title", "t"}, file}, big)
		cr := &mediatest.CountingReader{R: bytes.NewReader(body)}
		hr := httptest.NewRequest("POST", "http://reelay.test/api/v1/publish", cr)
		hr.Header.Set("Content-Type", ct)
		hr.Header.Set("X-API-Key", e.a.Key)
		hr.Header.Set("Idempotency-Key", key)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, hr)
		return rec, cr.N()
	}
	if rec, _ := withKey("order-1"); rec.Code != http.StatusOK {
		t.Fatalf("the post that spends the allowance: %d %s", rec.Code, rec.Body)
	}
	if rec, _ := withKey("order-1"); rec.Code != http.StatusOK || rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("its replay at the limit: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	rec, read = withKey("order-2")
	if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "monthly_limit_reached") || read > earlyRead {
		t.Errorf("at the limit: %d after %d bytes: %s", rec.Code, read, rec.Body)
	}
}
