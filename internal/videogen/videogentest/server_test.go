package videogentest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media"
)

// do makes a raw call and decodes its JSON answer.
func do(t *testing.T, s *Server, method, target, key, contentType, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, target, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Key "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s answered %d and no JSON object: %v", method, target, resp.StatusCode, err)
	}
	return resp.StatusCode, out, resp.Header
}

func TestSubmitIsStrict(t *testing.T) {
	s := NewServer(t)
	const ok = `{"prompt":"a fox","aspect_ratio":"9:16","duration":"5"}`
	for _, tt := range []struct {
		name, target, key, contentType, body string
		status                               int
		detail                               any // the answer's detail
	}{
		{"no key", s.TextURL(), "", "application/json", ok, 401, "No valid key: send 'Authorization: Key <your key>'"},
		{"wrong key", s.TextURL(), "nope", "application/json", ok, 401, "No valid key: send 'Authorization: Key <your key>'"},
		{"not JSON content", s.TextURL(), s.Key, "text/plain", ok, 415, "Content-Type must be application/json"},
		{"GET on a model", s.TextURL(), s.Key, "", "", 405, "Method Not Allowed"},
		{"not an object", s.TextURL(), s.Key, "application/json", `["a fox"]`, 422,
			[]any{map[string]any{"loc": []any{"body"}, "msg": "Input should be a valid JSON object", "type": "model_attributes_type"}}},
		{"every fault", s.TextURL(), s.Key, "application/json; charset=utf-8",
			`{"prompt":"","aspect_ratio":"4:3","duration":5,"image_url":"cat.png"}`, 422, []any{
				map[string]any{"loc": []any{"body", "prompt"}, "msg": "String should have at least 1 character", "type": "string_too_short"},
				map[string]any{"loc": []any{"body", "aspect_ratio"}, "msg": "Input should be '16:9', '9:16' or '1:1'", "type": "literal_error"},
				map[string]any{"loc": []any{"body", "duration"}, "msg": "Input should be '5' or '10'", "type": "literal_error"},
				map[string]any{"loc": []any{"body", "image_url"}, "msg": "Input should be a valid URL with an http or https scheme and a host", "type": "url_parsing"},
			}},
		{"prompt missing, image model without an image", s.ImageURL(), s.Key, "application/json", `{"prompt":7}`, 422, []any{
			map[string]any{"loc": []any{"body", "prompt"}, "msg": "Input should be a valid string", "type": "string_type"},
			map[string]any{"loc": []any{"body", "image_url"}, "msg": "Field required", "type": "missing"},
		}},
		{"unknown request", s.URL + "/fal-ai/kling-video/requests/" + uuid.NewString() + "/status", s.Key, "", "", 404, "Request not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.body == "" {
				method = http.MethodGet
			}
			status, out, _ := do(t, s, method, tt.target, tt.key, tt.contentType, tt.body)
			if status != tt.status || !reflect.DeepEqual(out["detail"], tt.detail) {
				t.Errorf("%d %v, want %d %v", status, out["detail"], tt.status, tt.detail)
			}
		})
	}
	if n := len(s.Submits()); n != 6 {
		t.Errorf("%d submits recorded, want 6", n)
	}
}

// TestLifecycle walks a request through the queue by polls, checking each answer's status code
// and body, the refused early result, the video and what the server recorded.
func TestLifecycle(t *testing.T) {
	s := NewServer(t)
	status, sub, _ := do(t, s, http.MethodPost, s.TextURL(), s.Key, "application/json", `{"prompt":"a fox","aspect_ratio":"16:9","duration":"10"}`)
	id, _ := sub["request_id"].(string)
	if _, err := uuid.Parse(id); status != http.StatusOK || err != nil || sub["status"] != "IN_QUEUE" {
		t.Fatalf("submit: %d %v", status, sub)
	}
	base := s.URL + "/fal-ai/kling-video/requests/" + id
	if sub["status_url"] != base+"/status" || sub["response_url"] != base || sub["cancel_url"] != base+"/cancel" {
		t.Errorf("submit URLs %v, want under %s", sub, base)
	}
	if code, out, _ := do(t, s, http.MethodGet, base, s.Key, "", ""); code != 400 || out["detail"] != "Request is still in progress" {
		t.Errorf("early result: %d %v", code, out)
	}
	for _, want := range []struct {
		code   int
		status string
	}{{202, "IN_QUEUE"}, {202, "IN_PROGRESS"}, {200, "COMPLETED"}, {200, "COMPLETED"}} {
		if code, out, _ := do(t, s, http.MethodGet, base+"/status?logs=1", s.Key, "", ""); code != want.code || out["status"] != want.status {
			t.Errorf("status %d %v, want %d %s", code, out, want.code, want.status)
		}
	}
	if code, out, _ := do(t, s, http.MethodGet, s.URL+"/fal-ai/other-app/requests/"+id, s.Key, "", ""); code != 404 {
		t.Errorf("another app's request: %d %v", code, out)
	}
	code, out, _ := do(t, s, http.MethodGet, base, s.Key, "", "")
	video, _ := out["video"].(map[string]any)
	if code != 200 || video["content_type"] != "video/mp4" {
		t.Fatalf("result %d %v", code, out)
	}
	resp, err := http.Get(video["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	info, err := media.Probe(bytes.NewReader(data), int64(len(data)))
	if err != nil || info.Width != 1920 || info.Height != 1080 || info.Duration != 10*time.Second || video["file_size"] != float64(len(data)) {
		t.Errorf("video %+v (%v), %d bytes, result %v", info, err, len(data), video)
	}
	if code, out, _ := do(t, s, http.MethodPut, base+"/cancel", s.Key, "", ""); code != 400 || out["status"] != "ALREADY_COMPLETED" {
		t.Errorf("cancel after completion: %d %v", code, out)
	}
	if s.StatusPolls() != 4 || len(s.Submits()) != 1 || s.Submits()[0].Input["duration"] != "10" {
		t.Errorf("recorded %+v", s.Calls())
	}
}

func TestDurationsAndCancel(t *testing.T) {
	clock := clocktest.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	s := NewServer(t, WithPolls(0, 0), WithDurations(time.Minute, 2*time.Minute), WithClock(clock.Now))
	submit := func() string {
		_, sub, _ := do(t, s, http.MethodPost, s.TextURL(), s.Key, "application/json", `{"prompt":"a fox"}`)
		return sub["status_url"].(string)
	}
	first, second := submit(), submit()
	poll := func(u string) any { _, out, _ := do(t, s, http.MethodGet, u, s.Key, "", ""); return out["status"] }
	if _, out, _ := do(t, s, http.MethodGet, second, s.Key, "", ""); out["queue_position"] != float64(1) {
		t.Errorf("second request's queue position %v, want 1", out["queue_position"])
	}
	for _, step := range []struct {
		advance time.Duration
		want    string
	}{{0, "IN_QUEUE"}, {time.Minute, "IN_PROGRESS"}, {time.Minute, "IN_PROGRESS"}, {time.Minute, "COMPLETED"}} {
		clock.Advance(step.advance)
		if got := poll(first); got != step.want {
			t.Errorf("after %s more: %v, want %s", step.advance, got, step.want)
		}
	}
	// A running request is only signalled (this model ignores it); a queued one is forgotten.
	third := submit()
	for _, u := range []string{second, third} {
		cancel := strings.TrimSuffix(u, "/status") + "/cancel"
		if code, out, _ := do(t, s, http.MethodPut, cancel, s.Key, "", ""); code != 202 || out["status"] != "CANCELLATION_REQUESTED" {
			t.Errorf("cancel: %d %v", code, out)
		}
	}
	if got := poll(second); got != "IN_PROGRESS" {
		t.Errorf("the running request is %v after a cancel", got)
	}
	if code, _, _ := do(t, s, http.MethodGet, third, s.Key, "", ""); code != 404 {
		t.Errorf("a request cancelled in the queue is forgotten, but its status answered %d", code)
	}
}

func TestFaults(t *testing.T) {
	s := NewServer(t, WithPolls(0, 0), FailModel(500, "GPU ran out of memory"), RateLimit(2, 1500*time.Millisecond),
		ForeignURLs("https://elsewhere.example"))
	_, sub, _ := do(t, s, http.MethodPost, s.TextURL(), s.Key, "application/json", `{"prompt":"a fox"}`)
	if !strings.HasPrefix(sub["status_url"].(string), "https://elsewhere.example/fal-ai/kling-video/requests/") {
		t.Errorf("status_url %v", sub["status_url"])
	}
	local := s.URL + "/fal-ai/kling-video/requests/" + sub["request_id"].(string)
	if code, _, h := do(t, s, http.MethodGet, local+"/status", s.Key, "", ""); code != 429 || h.Get("Retry-After") != "2" {
		t.Errorf("second call: %d, Retry-After %q", code, h.Get("Retry-After"))
	}
	if code, out, _ := do(t, s, http.MethodGet, local+"/status", s.Key, "", ""); code != 200 || out["status"] != "COMPLETED" || out["error"] != "GPU ran out of memory" {
		t.Errorf("status %d %v", code, out)
	}
	if code, out, _ := do(t, s, http.MethodGet, local, s.Key, "", ""); code != 500 || out["detail"] != "GPU ran out of memory" {
		t.Errorf("result %d %v", code, out)
	}

	f := NewServer(t, FailSubmit(), OmitURLs())
	if code, out, _ := do(t, f, http.MethodPost, f.TextURL(), f.Key, "application/json", `{"prompt":"a fox"}`); code != 500 || out["detail"] != "Internal Server Error" {
		t.Errorf("failed submit %d %v", code, out)
	}
}
