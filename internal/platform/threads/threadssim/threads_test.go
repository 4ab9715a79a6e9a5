package threadssim_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/platform/threads/threadssim"
)

const (
	thTok  = "th-sim-token"
	thUser = "27000000000000042"
)

func newThreadsEnv(t *testing.T, b sim.Behavior) *providertest.Env {
	t.Helper()
	return providertest.NewEnv(t, "threads", sim.StaticAccounts{thTok: {ID: thUser, Username: "sim.user", Behavior: b}}, threadssim.New, providertest.Options{})
}

func thGet(t *testing.T, e *providertest.Env, path string, q url.Values) simtest.MetaAnswer {
	return simtest.MetaCall(t, e, http.MethodGet, "/v1.0"+path, q, "Bearer "+thTok)
}

func thPost(t *testing.T, e *providertest.Env, path string, p url.Values) simtest.MetaAnswer {
	return simtest.MetaCall(t, e, http.MethodPost, "/v1.0"+path, p, "Bearer "+thTok)
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
		a := simtest.MetaCall(t, e, http.MethodGet, "/v1.0/me", c.q, c.auth)
		if a.Status != c.status || a.Code() != c.code {
			t.Fatalf("%s: %d %v", c.name, a.Status, a.Body)
		}
		if c.code == 0 && (a.Str("id") != thUser) {
			t.Fatalf("%s: %v", c.name, a.Body)
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
		if a.Status != c.status || a.Code() != c.code || (c.header != "" && a.Header.Get(c.header) == "") {
			t.Fatalf("%s: %d %v %v", c.fail, a.Status, a.Body, a.Header)
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
		{"text over 500 characters", thUser, with("text", strings.Repeat("€", 501)), 100},
		{"emoji count their bytes", thUser, with("text", strings.Repeat("\U0001F600", 126)), 100}, // 504
		{"six links", thUser, with("text", "https://1.example https://2.example https://3.example https://4.example https://5.example https://6.example"), 100},
		{"another user", "27000000000000099", thVideoParams(good), 100},
	} {
		a := thPost(t, e, "/"+c.user+"/threads", c.p)
		if a.Status != http.StatusBadRequest || a.Code() != c.code {
			t.Fatalf("%s: %d %v", c.name, a.Status, a.Body)
		}
	}
	links := with("text", "https://1.example https://2.example https://3.example https://4.example https://5.example https://6.example")
	if a := thPost(t, e, "/"+thUser+"/threads", links); a.Status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(a.Body), "THREADS_API__LINK_LIMIT_EXCEEDED") {
		t.Fatalf("six links: %d %v, want THREADS_API__LINK_LIMIT_EXCEEDED", a.Status, a.Body)
	}
	// 500 characters are accepted, Latin or not (Threads counts characters, only emoji as their
	// UTF-8 bytes), and so are five links.
	for _, text := range []string{strings.Repeat("a", 500), strings.Repeat("€", 500), strings.Repeat("日本語", 166),
		"https://1.example https://2.example https://3.example https://4.example https://5.example https://1.example"} {
		if a := thPost(t, e, "/"+thUser+"/threads", with("text", text)); a.Status != 200 || a.Str("id") == "" {
			t.Fatalf("%.40q: %d %v", text, a.Status, a.Body)
		}
	}
}

// The container's life: IN_PROGRESS during processing (publishing refused), FINISHED, then
// PUBLISHED once; the post is listed and its permalink read.
func TestThreadsLifecycle(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t, sim.Behavior{ProcessingMS: 10_000})
	v := providertest.ShortVideo()
	id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(v.Serve(t))).Str("id")
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status,error_message"}}); st.Str("status") != "IN_PROGRESS" {
		t.Fatalf("status %v", st.Body)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}); a.Code() != 9007 {
		t.Fatalf("publish before ready: %d %v", a.Status, a.Body)
	}
	e.Clock.Advance(10 * time.Second)
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status"}}); st.Str("status") != "FINISHED" {
		t.Fatalf("status %v", st.Body)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", nil); a.Code() != 100 {
		t.Fatalf("publish without creation_id: %v", a.Body)
	}
	mid := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}).Str("id")
	if mid == "" || mid == id {
		t.Fatalf("media id %q", mid)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}); a.Status != 400 {
		t.Fatalf("second publish: %d %v", a.Status, a.Body)
	}
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status"}}); st.Str("status") != "PUBLISHED" {
		t.Fatalf("status %v", st.Body)
	}
	m := thGet(t, e, "/"+mid, url.Values{"fields": {"permalink,text,media_type,timestamp"}})
	if !strings.HasPrefix(m.Str("permalink"), "https://www.threads.net/@sim.user/post/") || m.Str("text") != "hello" || m.Str("media_type") != "VIDEO" || m.Str("timestamp") != "2026-03-01T12:00:10+0000" {
		t.Fatalf("media %v", m.Body)
	}
	if a := thGet(t, e, "/"+mid, url.Values{"fields": {"plays"}}); a.Code() != 100 {
		t.Fatalf("unknown field: %v", a.Body)
	}
	list := thGet(t, e, "/"+thUser+"/threads", url.Values{"fields": {"id,text"}, "since": {"1772366400"}})
	data, _ := list.Body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != mid {
		t.Fatalf("list %v", list.Body)
	}
	got := e.Introspect()
	if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256() || len(got.Published) != 1 || got.Published[0].ID != mid {
		t.Fatalf("introspection %+v", got)
	}
	lim := thGet(t, e, "/me/threads_publishing_limit", url.Values{"fields": {"quota_usage,config"}})
	row := lim.Body["data"].([]any)[0].(map[string]any)
	if row["quota_usage"] != 1.0 || row["config"].(map[string]any)["quota_total"] != 250.0 {
		t.Fatalf("limit %v", lim.Body)
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
		// The video specifications' container, frame rate and audio rules (issue 31, item 8).
		{"120 fps", thVideoOf(mediatest.Options{FPS: 120}), false, "INVALID_FRAME_RATE"},
		{"20 fps", thVideoOf(mediatest.Options{FPS: 20}), false, "INVALID_FRAME_RATE"},
		{"edit list", thVideoOf(mediatest.Options{EditList: true}), false, "FAILED_PROCESSING_VIDEO"},
		{"96 kHz sound", thVideoOf(mediatest.Options{AudioSampleRate: 96000}), false, "FAILED_PROCESSING_AUDIO"},
		{"six sound channels", thVideoOf(mediatest.Options{AudioSampleRate: 48000, AudioChannels: 6}), false, "INVALID_AUDIO_CHANNELS"},
		{"60 fps, stereo AAC at 48 kHz", thVideoOf(mediatest.Options{FPS: 60, AudioSampleRate: 48000}), false, ""},
	} {
		b := sim.Behavior{}
		if c.reject {
			b.Fail = sim.FailReject
		}
		e := newThreadsEnv(t, b)
		id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(c.v.Serve(t))).Str("id")
		st := thGet(t, e, "/"+id, url.Values{"fields": {"status,error_message"}})
		wantStatus := "ERROR"
		if c.want == "" {
			wantStatus = "FINISHED"
		}
		if st.Str("status") != wantStatus || st.Str("error_message") != c.want {
			t.Fatalf("%s: %v", c.name, st.Body)
		}
	}
}

// thVideoOf is a 5-second 1080x1920 test video with the given frame rate, edit list or sound.
func thVideoOf(o mediatest.Options) *providertest.Video {
	o.Duration, o.Width, o.Height = 5*time.Second, 1080, 1920
	return providertest.NewVideoOf(1<<20, o)
}

// A video whose moov atom follows its media data fails processing: the specifications want
// it at the front of the file.
func TestThreadsMoovFirst(t *testing.T) {
	t.Parallel()
	b := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, MoovAtEnd: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(w, r, "video.mp4", time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	e := newThreadsEnv(t, sim.Behavior{})
	id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(srv.URL+"/video.mp4")).Str("id")
	st := thGet(t, e, "/"+id, url.Values{"fields": {"status,error_message"}})
	if st.Str("status") != "ERROR" || st.Str("error_message") != "FAILED_PROCESSING_VIDEO" {
		t.Fatalf("moov after mdat: %v", st.Body)
	}
}

func TestThreadsExpiry(t *testing.T) {
	t.Parallel()
	e := newThreadsEnv(t, sim.Behavior{})
	id := thPost(t, e, "/"+thUser+"/threads", thVideoParams(providertest.ShortVideo().Serve(t))).Str("id")
	e.Clock.Advance(24 * time.Hour)
	if st := thGet(t, e, "/"+id, url.Values{"fields": {"status"}}); st.Str("status") != "EXPIRED" {
		t.Fatalf("status %v", st.Body)
	}
	if a := thPost(t, e, "/"+thUser+"/threads_publish", url.Values{"creation_id": {id}}); a.Status != 400 {
		t.Fatalf("publish expired: %v", a.Body)
	}
	if got := e.Introspect(); len(got.Published) != 0 {
		t.Fatalf("published %+v", got.Published)
	}
}
