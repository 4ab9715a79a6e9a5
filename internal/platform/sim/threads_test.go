package sim_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
)

const (
	thTok  = "th-sim-token"
	thUser = "27000000000000042"
)

// metaAnswer is a Graph answer: status, headers and decoded body.
type metaAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

func (a metaAnswer) code() int {
	ge, _ := a.body["error"].(map[string]any)
	n, _ := ge["code"].(float64)
	return int(n)
}

func (a metaAnswer) str(k string) string { s, _ := a.body[k].(string); return s }

// metaCall sends one request to a simulator on e: params in the query for GET, in a form body
// otherwise; auth is the Authorization header ("" for none).
func metaCall(t *testing.T, e *providertest.Env, method, path string, params url.Values, auth string) metaAnswer {
	t.Helper()
	u := e.BaseURL + path
	body := ""
	if method == http.MethodGet {
		if len(params) > 0 {
			u += "?" + params.Encode()
		}
	} else {
		body = params.Encode()
	}
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := e.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := metaAnswer{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if a.status != http.StatusOK {
		ge, ok := a.body["error"].(map[string]any)
		if !ok || ge["type"] != "OAuthException" || ge["message"] == "" || ge["fbtrace_id"] == "" {
			t.Fatalf("%s %s: error answer %d %v is not Graph's error shape", method, path, a.status, a.body)
		}
	}
	return a
}

func newThreadsEnv(t *testing.T, b sim.Behavior) *providertest.Env {
	t.Helper()
	return providertest.NewEnv(t, "threads", sim.StaticAccounts{thTok: {ID: thUser, Username: "sim.user", Behavior: b}}, sim.NewThreads, providertest.Options{})
}

func thGet(t *testing.T, e *providertest.Env, path string, q url.Values) metaAnswer {
	return metaCall(t, e, http.MethodGet, "/v1.0"+path, q, "Bearer "+thTok)
}

func thPost(t *testing.T, e *providertest.Env, path string, p url.Values) metaAnswer {
	return metaCall(t, e, http.MethodPost, "/v1.0"+path, p, "Bearer "+thTok)
}

func thVideoParams(link string) url.Values {
	return url.Values{"media_type": {"VIDEO"}, "video_url": {link}, "text": {"hello"}}
}

func TestThreadsAuth(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t, sim.Behavior{})
	for _, c := range []struct {
		name, auth string
		q          url.Values
		status     int
		code       int
	}{
		{"bearer", "Bearer " + thTok, nil, 200, 0},
		{"access_token parameter", "", url.Values{"access_token": {thTok}}, 200, 0},
		{"no token", "", nil, 400, 104},
		{"unknown token", "Bearer nope", nil, 400, 190},
	} {
		a := metaCall(t, e, http.MethodGet, "/v1.0/me", c.q, c.auth)
		if a.status != c.status || a.code() != c.code {
			t.Fatalf("%s: %d %v", c.name, a.status, a.body)
		}
		if c.code == 0 && (a.str("id") != thUser) {
			t.Fatalf("%s: %v", c.name, a.body)
		}
	}
}

func TestThreadsCallFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail   string
		status int
		code   int
		header string
	}{
		{sim.FailUnavailable, 500, 2, ""},
		{sim.FailAuth, 400, 190, "WWW-Authenticate"},
		{sim.FailRateLimit, 403, 17, "X-Business-Use-Case-Usage"},
	} {
		e := newThreadsEnv(t, sim.Behavior{Fail: c.fail})
		a := thPost(t, e, "/"+thUser+"/threads", thVideoParams("http://example.invalid/v.mp4"))
		if a.status != c.status || a.code() != c.code || (c.header != "" && a.header.Get(c.header) == "") {
			t.Fatalf("%s: %d %v %v", c.fail, a.status, a.body, a.header)
		}
	}
}

// Requests the platform refuses are refused with its error shape, and create nothing.
func TestThreadsContainerValidation(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t, sim.Behavior{})
	good := "http://example.invalid/v.mp4"
	with := func(k, v string) url.Values {
		p := thVideoParams(good)
		if v == "" {
			p.Del(k)
		} else {
			p.Set(k, v)
		}
		return p
	}
	for _, c := range []struct {
		name, user string
		p          url.Values
		code       int
	}{
		{"no media_type", thUser, with("media_type", ""), 100},
		{"unknown media_type", thUser, with("media_type", "REELS"), 100},
		{"text post", thUser, with("media_type", "TEXT"), 100},
		{"no video_url", thUser, with("video_url", ""), 100},
		{"relative video_url", thUser, with("video_url", "/v.mp4"), 100},
		{"bad reply_control", thUser, with("reply_control", "friends"), 100},
		{"text over 500 bytes", thUser, with("text", strings.Repeat("€", 167)), 100},
		{"another user", "27000000000000099", thVideoParams(good), 100},
	} {
		a := thPost(t, e, "/"+c.user+"/threads", c.p)
		if a.status != http.StatusBadRequest || a.code() != c.code {
			t.Fatalf("%s: %d %v", c.name, a.status, a.body)
		}
	}
	// 500 bytes exactly is accepted.
	if a := thPost(t, e, "/"+thUser+"/threads", with("text", strings.Repeat("a", 500))); a.status != 200 || a.str("id") == "" {
		t.Fatalf("500 bytes: %d %v", a.status, a.body)
	}
}

// The container's life: IN_PROGRESS during processing (publishing refused), FINISHED, then
// PUBLISHED once; the post is listed and its permalink read.
func TestThreadsLifecycle(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t, sim.Behavior{ProcessingMS: 10_000})
	v := providertest.ShortVideo()
	id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(v.Serve(t))).str("id")
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status,error_message"}}); st.str("status") != "IN_PROGRESS" {
		t.Fatalf("status %v", st.body)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}); a.code() != 9007 {
		t.Fatalf("publish before ready: %d %v", a.status, a.body)
	}
	e.Clock.Advance(10 * time.Second)
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status"}}); st.str("status") != "FINISHED" {
		t.Fatalf("status %v", st.body)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", nil); a.code() != 100 {
		t.Fatalf("publish without creation_id: %v", a.body)
	}
	mid := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}).str("id")
	if mid == "" || mid == id {
		t.Fatalf("media id %q", mid)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}); a.status != 400 {
		t.Fatalf("second publish: %d %v", a.status, a.body)
	}
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status"}}); st.str("status") != "PUBLISHED" {
		t.Fatalf("status %v", st.body)
	}
	m := thGet(t, e, "/"+mid, url.Values{"fields": {"permalink,text,media_type,timestamp"}})
	if !strings.HasPrefix(m.str("permalink"), "https://www.threads.net/@sim.user/post/") || m.str("text") != "hello" || m.str("media_type") != "VIDEO" || m.str("timestamp") != "2026-03-01T12:00:10+0000" {
		t.Fatalf("media %v", m.body)
	}
	if a := thGet(t, e, "/"+mid, url.Values{"fields": {"plays"}}); a.code() != 100 {
		t.Fatalf("unknown field: %v", a.body)
	}
	list := thGet(t, e, "/"+thUser+"/threads", url.Values{"fields": {"id,text"}, "since": {"1772366400"}})
	data, _ := list.body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != mid {
		t.Fatalf("list %v", list.body)
	}
	got := e.Introspect()
	if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || len(got.Published) != 1 || got.Published[0].ID != mid {
		t.Fatalf("introspection %+v", got)
	}
	lim := thGet(t, e, "/me/threads_publishing_limit", url.Values{"fields": {"quota_usage,config"}})
	row := lim.body["data"].([]any)[0].(map[string]any)
	if row["quota_usage"] != 1.0 || row["config"].(map[string]any)["quota_total"] != 250.0 {
		t.Fatalf("limit %v", lim.body)
	}
}

func TestThreadsVideoChecks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		v      *providertest.Video
		reject bool
		want   string
	}{
		{"too long", providertest.NewVideo(1<<20, 301*time.Second, 1080, 1920), false, "INVALID_DURATION"},
		{"too wide", providertest.NewVideo(1<<20, 5*time.Second, 2560, 1440), false, "FAILED_PROCESSING_VIDEO"},
		{"aspect ratio", providertest.NewVideo(1<<20, 5*time.Second, 1800, 160), false, "INVALID_ASPEC_RATIO"},
		{"reject behavior", providertest.ShortVideo(), true, "FAILED_PROCESSING_VIDEO"},
		{"accepted", providertest.ShortVideo(), false, ""},
	} {
		b := sim.Behavior{}
		if c.reject {
			b.Fail = sim.FailReject
		}
		e := newThreadsEnv(t, b)
		id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(c.v.Serve(t))).str("id")
		st := thGet(t, e, "/"+id, url.Values{"fields": {"status,error_message"}})
		wantStatus := "ERROR"
		if c.want == "" {
			wantStatus = "FINISHED"
		}
		if st.str("status") != wantStatus || st.str("error_message") != c.want {
			t.Fatalf("%s: %v", c.name, st.body)
		}
	}
}

func TestThreadsExpiry(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t, sim.Behavior{})
	id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(providertest.ShortVideo().Serve(t))).str("id")
	e.Clock.Advance(24 * time.Hour)
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status"}}); st.str("status") != "EXPIRED" {
		t.Fatalf("status %v", st.body)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}); a.status != 400 {
		t.Fatalf("publish expired: %v", a.body)
	}
	if got := e.Introspect(); len(got.Published) != 0 {
		t.Fatalf("published %+v", got.Published)
	}
}
