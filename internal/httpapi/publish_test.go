package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media/mediatest"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPublishToDefaultPlatforms(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		channels := e.defaultChannels(e.a)
		mp4 := video(t, 5)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4",
			"title": "Morning run", "caption": "Five seconds of sunrise #run",
			"youtube": map[string]any{"privacy_status": "unlisted"},
			"tiktok":  map[string]any{"mode": "direct"},
		}})
		if r.Code != http.StatusOK {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		if r.JSON["status"] != "published" || r.JSON["success"] != true {
			t.Fatalf("status after the publish wait: %s", r.Body)
		}
		results := r.JSON["platforms"].([]any)
		if len(results) != 3 {
			t.Fatalf("want 3 destinations: %s", r.Body)
		}
		for _, x := range results {
			d := x.(map[string]any)
			if d["published"] != true || d["upload_status"] != "published" || d["id"] == nil {
				t.Errorf("destination not published with an id: %v", d)
			}
			// TikTok hands out a public link only after its moderation, later.
			if d["url"] == nil && d["platform"] != "tiktok" {
				t.Errorf("destination without a url: %v", d)
			}
			if d["channel_id"] != channels[d["platform"].(string)] {
				t.Errorf("destination on the wrong channel: %v", d)
			}
		}
		if ms.hits.Load() != 1 {
			t.Errorf("video_url fetched %d times, want once", ms.hits.Load())
		}
		// Every platform received exactly the bytes, once.
		for _, p := range []string{"youtube", "instagram", "tiktok"} {
			uploads, published := e.introspect(e.a, p)
			if len(uploads) != 1 || uploads[0]["sha256"] != sha(mp4) {
				t.Errorf("%s uploads: %v", p, uploads)
			}
			if len(published) != 1 {
				t.Errorf("%s published: %v", p, published)
			}
		}
		// The other tenant sees none of it.
		if up, _ := e.introspect(e.b, "youtube"); len(up) != 0 {
			t.Errorf("bob sees alice's uploads: %v", up)
		}
		id := r.JSON["post_id"].(string)
		got := e.do(req{Method: "GET", Path: "/api/v1/posts/" + id, Key: e.a.Key})
		if got.Code != http.StatusOK || got.JSON["status"] != "published" || got.JSON["published_at"] == nil {
			t.Fatalf("get post: %d %s", got.Code, got.Body)
		}
		if n := len(got.JSON["publish_results"].([]any)); n != 3 {
			t.Errorf("publish_results: %d", n)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/posts/" + id, Key: e.b.Key}); r.Code != http.StatusNotFound {
			t.Errorf("another tenant's post: %d", r.Code)
		}
		list := e.do(req{Method: "GET", Path: "/api/v1/posts?status=published", Key: e.a.Key})
		if posts := list.JSON["posts"].([]any); len(posts) != 1 || posts[0].(map[string]any)["id"] != id {
			t.Errorf("history: %s", list.Body)
		}
		usage := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key})
		if usage.JSON["posts_this_month"] != float64(1) {
			t.Errorf("usage: %s", usage.Body)
		}
	})
}

func TestPublishMultipart(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		yt, _ := e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 0})
		e.sandboxChannel(e.a, "tiktok", nil) // not listed in channel_ids: not published to
		mp4 := video(t, 4)
		thumb := mediatest.JPEG(t, 1280, 720)
		body, ct := multipartBody(t, map[string]string{
			"project_id":  e.a.ProjectID,
			"channel_ids": `["` + yt + `"]`,
			"title":       "Upload",
			"youtube":     `{"privacy_status":"private","made_for_kids":true}`,
		}, map[string][]byte{"video": mp4, "thumbnail": thumb})
		r := e.do(req{Method: "POST", Path: "/api/v1/posts/publish", Key: e.a.Key, Body: body,
			Header: map[string]string{"Content-Type": ct}})
		if r.Code != http.StatusOK || r.JSON["status"] != "published" {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		if n := len(r.JSON["platforms"].([]any)); n != 1 {
			t.Fatalf("destinations: %s", r.Body)
		}
		uploads, _ := e.introspect(e.a, "youtube")
		if len(uploads) != 1 || uploads[0]["sha256"] != sha(mp4) {
			t.Errorf("youtube uploads: %v", uploads)
		}
		if up, _ := e.introspect(e.a, "tiktok"); len(up) != 0 {
			t.Errorf("tiktok received an upload it was not asked for: %v", up)
		}
	})
}

// TestPublishAcceptsWhatTheSeedAllows: forms the contract's wording allows that a narrower parser
// would refuse: ISO 8601 date-times without seconds or with a +hhmm or +hh offset, a platform
// object given as null (as in JSON, also in multipart form), a YouTube category.
func TestPublishAcceptsWhatTheSeedAllows(t *testing.T) {
	e := newAppEnv(t, "sqlite")
	yt, _ := e.sandboxChannel(e.a, "youtube", nil)
	mp4 := video(t, 4)
	day := time.Now().Add(48 * time.Hour).UTC().Format("2006-01-02")
	for _, at := range []string{day + "T09:00Z", day + "T09:00:00+0100", day + "T09:00+01"} {
		body, ct := multipartBody(t, map[string]string{"project_id": e.a.ProjectID, "channel_ids": `["` + yt + `"]`,
			"title": "Later", "scheduled_for": at, "youtube": "null", "tiktok": " null "}, map[string][]byte{"video": mp4})
		r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key, Body: body,
			Header: map[string]string{"Content-Type": ct}})
		if r.Code != http.StatusOK || r.JSON["status"] != "scheduled" {
			t.Errorf("scheduled_for %s: %d %s", at, r.Code, r.Body)
		}
	}
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4})
	for _, category := range []any{"10", 22} {
		r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "channel_ids": []string{yt}, "video_url": ms.URL + "/clip.mp4", "title": "Music",
			"youtube": map[string]any{"category_id": category}}})
		if r.Code != http.StatusOK {
			t.Errorf("category_id %v: %d %s", category, r.Code, r.Body)
		}
	}
}

// Every refusal is a 4xx naming the field, and leaves nothing behind: no post, no allowance
// spent, no stored media.
func TestPublishRefusals(t *testing.T) {
	e := newAppEnv(t, "sqlite")
	e.defaultChannels(e.a)
	mp4 := video(t, 5)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4, "/long.mp4": video(t, 700),
		"/text.txt": []byte(strings.Repeat("not a video ", 100))})
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "title": "t"}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		name   string
		body   map[string]any
		status int
		field  string
	}{
		{"no project", base(map[string]any{"project_id": nil}), 400, "project_id"},
		{"bad project id", base(map[string]any{"project_id": "x"}), 400, "project_id"},
		{"other tenant's project", base(map[string]any{"project_id": e.b.ProjectID}), 404, ""},
		{"no video", base(map[string]any{"video_url": nil}), 400, "video_url"},
		{"ftp url", base(map[string]any{"video_url": "ftp://example.com/v.mp4"}), 400, "video_url"},
		{"title too long", base(map[string]any{"title": strings.Repeat("a", 101)}), 400, "title"},
		{"caption too long", base(map[string]any{"caption": strings.Repeat("é", 5001)}), 400, "caption"},
		{"unknown platform", base(map[string]any{"platforms": []string{"myspace"}}), 400, "platforms[0]"},
		{"platform without channel", base(map[string]any{"platforms": []string{"bluesky"}}), 400, "platforms"},
		{"schedule in the past", base(map[string]any{"scheduled_for": "2020-01-01T00:00:00Z"}), 400, "scheduled_for"},
		{"schedule without offset", base(map[string]any{"scheduled_for": strings.TrimSuffix(future, "Z")}), 400, "scheduled_for"},
		{"bad privacy", base(map[string]any{"youtube": map[string]any{"privacy_status": "friends"}}), 400, "youtube.privacy_status"},
		{"bad tiktok mode", base(map[string]any{"tiktok": map[string]any{"mode": "later"}}), 400, "tiktok.mode"},
		{"threads text over 500 characters, an emoji as its bytes", base(map[string]any{"threads": map[string]any{"text": strings.Repeat("\U0001F600", 126)}}), 400, "threads.text"},
		{"threads text with six links", base(map[string]any{"threads": map[string]any{"text": "https://1.example https://2.example https://3.example https://4.example https://5.example https://6.example"}}), 400, "threads.text"},
		{"bluesky over 300 graphemes", base(map[string]any{"bluesky": map[string]any{"text": strings.Repeat("a", 301)}}), 400, "bluesky.text"},
		{"bluesky over 3000 bytes", base(map[string]any{"bluesky": map[string]any{"text": strings.Repeat("👩‍👩‍👧‍👦", 200)}}), 400, "bluesky.text"},
		{"title with < for YouTube", base(map[string]any{"title": "a <b> title"}), 400, "title"},
		{"youtube.description with >", base(map[string]any{"youtube": map[string]any{"description": "1 > 0"}}), 400, "youtube.description"},
		{"instagram caption of 31 hashtags", base(map[string]any{"caption": strings.Repeat("#tag ", 31)}), 400, "caption"},
		{"youtube.category_id not an id", base(map[string]any{"youtube": map[string]any{"category_id": "music"}}), 400, "youtube.category_id"},
		{"unknown field", base(map[string]any{"colour": "red"}), 400, "colour"},
		{"unknown fit", base(map[string]any{"fit": "stretch"}), 400, "fit"},
		{"unknown fit of a platform", base(map[string]any{"instagram": map[string]any{"fit": "stretch"}}), 400, "instagram.fit"},
		{"unknown transcode", base(map[string]any{"transcode": "maybe"}), 400, "transcode"},
		{"unknown field of a platform", base(map[string]any{"youtube": map[string]any{"colour": "red"}}), 400, "youtube.colour"},
		{"wrong type in a platform object", base(map[string]any{"youtube": map[string]any{"made_for_kids": "no"}}), 400, "youtube.made_for_kids"},
		{"platform object not an object", base(map[string]any{"tiktok": "direct"}), 400, "tiktok"},
		{"foreign channel id", base(map[string]any{"channel_ids": []string{"00000000-0000-4000-8000-000000000000"}}), 400, "channel_ids[0]"},
		{"not a video", base(map[string]any{"video_url": ms.URL + "/text.txt"}), 415, "video_url"},
		{"missing file", base(map[string]any{"video_url": ms.URL + "/gone.mp4"}), 400, "video_url"},
		{"too long for TikTok and Instagram", base(map[string]any{"video_url": ms.URL + "/long.mp4"}), 400, "video_url"},
	}
	for _, c := range cases {
		r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=false", Key: e.a.Key, Body: c.body})
		if r.Code != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.Code, c.status, r.Body)
			continue
		}
		if c.field != "" && r.field(c.field) == "" {
			t.Errorf("%s: no message for field %s: %s", c.name, c.field, r.Body)
		}
	}

	// Media rules the probe reads, each refused up front for the platform whose documentation
	// sets it, with the rule in the message (issue 31, item 8), when the request forbids
	// converting the video (TestConversionCases converts them).
	e.sandboxChannel(e.a, "facebook", map[string]any{"processing_ms": 0})
	e.sandboxChannel(e.a, "mastodon", map[string]any{"processing_ms": 0})
	e.sandboxChannel(e.a, "threads", map[string]any{"processing_ms": 0})
	clip := func(f func(o *mediatest.Options)) []byte {
		o := mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920}
		f(&o)
		return mediatest.MP4Bytes(t, o)
	}
	ruled := newMediaServer(t, map[string][]byte{
		"/120fps.mp4":    clip(func(o *mediatest.Options) { o.FPS = 120 }),
		"/150fps.mp4":    clip(func(o *mediatest.Options) { o.FPS = 150 }),
		"/20fps.mp4":     clip(func(o *mediatest.Options) { o.FPS = 20 }),
		"/moov-last.mp4": clip(func(o *mediatest.Options) { o.MoovAtEnd = true }),
		"/edits.mp4":     clip(func(o *mediatest.Options) { o.EditList = true }),
		"/96khz.mp4":     clip(func(o *mediatest.Options) { o.AudioSampleRate = 96000 }),
		"/6ch.mp4":       clip(func(o *mediatest.Options) { o.AudioSampleRate, o.AudioChannels = 48000, 6 }),
	})
	for _, c := range []struct {
		name, file, platform string
		want                 []string
	}{
		{"instagram at 120 fps", "/120fps.mp4", "instagram", []string{"is 120 fps", "Instagram accepts 23–60 fps"}},
		{"instagram at 20 fps", "/20fps.mp4", "instagram", []string{"is 20 fps", "Instagram accepts 23–60 fps"}},
		{"tiktok at 120 fps", "/120fps.mp4", "tiktok", []string{"is 120 fps", "TikTok accepts 23–60 fps"}},
		{"facebook at 20 fps", "/20fps.mp4", "facebook", []string{"is 20 fps", "Facebook accepts 24–60 fps"}},
		{"mastodon at 150 fps", "/150fps.mp4", "mastodon", []string{"is 150 fps", "Mastodon accepts at most 120 fps"}},
		{"instagram with moov after mdat", "/moov-last.mp4", "instagram", []string{"moov", "Instagram needs it at the front"}},
		{"instagram with an edit list", "/edits.mp4", "instagram", []string{"edit list", "Instagram accepts no edit lists"}},
		{"instagram with 96 kHz sound", "/96khz.mp4", "instagram", []string{"96 kHz", "Instagram accepts at most 48 kHz"}},
		{"instagram with 6 channels", "/6ch.mp4", "instagram", []string{"6 sound channels", "Instagram accepts at most 2"}},
		{"threads at 120 fps", "/120fps.mp4", "threads", []string{"is 120 fps", "Threads accepts 23–60 fps"}},
		{"threads with an edit list", "/edits.mp4", "threads", []string{"edit list", "Threads accepts no edit lists"}},
	} {
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: base(map[string]any{
			"video_url": ruled.URL + c.file, "platforms": []string{c.platform}, "transcode": "off"})})
		msg := r.field("video_url")
		if r.Code != http.StatusBadRequest || r.JSON["error"].(map[string]any)["code"] != "validation_failed" {
			t.Errorf("%s: status %d, want 400 validation_failed: %s", c.name, r.Code, r.Body)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: the message %q does not say %q", c.name, msg, w)
			}
		}
	}

	list := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key})
	if n := len(list.JSON["posts"].([]any)); n != 0 {
		t.Errorf("refused requests left %d posts", n)
	}
	usage := e.do(req{Method: "GET", Path: "/api/v1/account/usage", Key: e.a.Key})
	if usage.JSON["posts_this_month"] != float64(0) {
		t.Errorf("refused requests spent allowance: %s", usage.Body)
	}
	if n := e.blobCount(); n != 0 {
		t.Errorf("refused requests left %d stored files", n)
	}
}

// A video_url on a private address is refused before a byte is stored, unless the server
// allows private URLs (tests, closed networks).
func TestPublishRefusesPrivateAddresses(t *testing.T) {
	e := newAppEnv(t, "sqlite", func(c *config.Config) { c.AllowPrivateURLs = false })
	e.defaultChannels(e.a)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	for _, u := range []string{ms.URL + "/clip.mp4", "http://169.254.169.254/latest/meta-data", "http://[::1]:9/x.mp4", "http://10.0.0.1/x.mp4"} {
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "video_url": u, "title": "t"}})
		if r.Code != http.StatusBadRequest || r.field("video_url") == "" {
			t.Errorf("%s: %d %s", u, r.Code, r.Body)
		}
	}
	if ms.hits.Load() != 0 {
		t.Errorf("a private address was fetched %d times", ms.hits.Load())
	}
	if n := e.blobCount(); n != 0 {
		t.Errorf("%d files stored", n)
	}
	// The refusal names the setting that would open the host, not the address it resolves to.
	port := ms.URL[strings.LastIndex(ms.URL, ":"):]
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
		"project_id": e.a.ProjectID, "video_url": "http://localhost" + port + "/clip.mp4", "title": "t"}})
	if msg := r.field("video_url"); r.Code != http.StatusBadRequest || !strings.Contains(msg, "the host localhost resolves to a loopback address") ||
		!strings.Contains(msg, "REELAY_ALLOW_HOSTS") || strings.Contains(msg, "127.0.0.1") {
		t.Errorf("refusal: %d %s", r.Code, r.Body)
	}
}

// REELAY_ALLOW_HOSTS opens the hosts of the operator's own network it lists, for media URLs
// and webhooks, and nothing else.
func TestAllowHosts(t *testing.T) {
	e := newAppEnv(t, "sqlite", func(c *config.Config) { c.AllowPrivateURLs, c.AllowHosts = false, "localhost,10.20.30.0/24" })
	e.defaultChannels(e.a)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	port := ms.URL[strings.LastIndex(ms.URL, ":"):]
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
		"project_id": e.a.ProjectID, "video_url": "http://localhost" + port + "/clip.mp4", "title": "t", "platforms": []string{"youtube"}}})
	if r.Code != http.StatusOK || ms.hits.Load() == 0 {
		t.Fatalf("a listed host: %d %s (fetched %d times)", r.Code, r.Body, ms.hits.Load())
	}
	for _, u := range []string{"http://127.0.0.2" + port + "/clip.mp4", "http://10.0.0.1/x.mp4"} {
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "video_url": u, "title": "t", "platforms": []string{"youtube"}}})
		if r.Code != http.StatusBadRequest || !strings.Contains(r.field("video_url"), "REELAY_ALLOW_HOSTS") {
			t.Errorf("%s, not listed: %d %s", u, r.Code, r.Body)
		}
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer hook.Close()
	hookPort := hook.URL[strings.LastIndex(hook.URL, ":"):]
	for u, want := range map[string]int{"http://localhost" + hookPort + "/n8n": http.StatusCreated, "http://127.0.0.2" + hookPort + "/n8n": http.StatusBadRequest} {
		r := e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key, Body: map[string]any{"url": u, "events": []string{"post.published"}}})
		if r.Code != want {
			t.Errorf("webhook at %s: %d %s, want %d", u, r.Code, r.Body, want)
		}
	}
}

// TikTok's default mode sends the video to the creator's inbox: a success that is not a
// publication (rule 2 of docs/CONTRACT.md, Publishing), said so per destination.
func TestTikTokInbox(t *testing.T) {
	e := newAppEnv(t, "sqlite")
	tt, _ := e.sandboxChannel(e.a, "tiktok", nil)
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
		"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "caption": "inbox", "channel_ids": []string{tt}}})
	if r.Code != http.StatusOK {
		t.Fatalf("publish: %d %s", r.Code, r.Body)
	}
	p := e.waitPost(e.a, r.JSON["post_id"].(string), 10*time.Second, statusIs("published"))
	d := p["publish_results"].([]any)[0].(map[string]any)
	if d["upload_status"] != "sent_to_inbox" || d["published"] != false || d["success"] != true || d["message"] == nil {
		t.Errorf("inbox destination: %v", d)
	}
}

// Prefer: wait=0 answers at once, before the destinations settle: 202 with the post's
// Location. Any other wait that runs out answers 200 with what is known, as does a wait=0
// whose post has already settled (a replay).
func TestPreferWaitZero(t *testing.T) {
	e := newAppEnv(t, "sqlite")
	e.sandboxChannel(e.a, "youtube", map[string]any{"processing_ms": 2000})
	ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
	publish := func(title, prefer, key string, extra map[string]any) *resp {
		body := map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "title": title, "platforms": []string{"youtube"}}
		for k, v := range extra {
			body[k] = v
		}
		return e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": prefer, "Idempotency-Key": key}, Body: body})
	}
	r := publish("t", "wait=0", "k1", nil)
	id, _ := r.JSON["post_id"].(string)
	if r.Code != http.StatusAccepted || r.JSON["status"] != "processing" || r.Header.Get("Preference-Applied") != "wait=0" ||
		r.Header.Get("Location") != "/api/v1/posts/"+id {
		t.Fatalf("wait=0: %d %v %s", r.Code, r.Header, r.Body)
	}
	if got := e.do(req{Method: "GET", Path: r.Header.Get("Location"), Key: e.a.Key}); got.Code != http.StatusOK || got.JSON["id"] != id {
		t.Errorf("the Location: %d %s", got.Code, got.Body)
	}
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if r := publish("later", "wait=0", "", map[string]any{"scheduled_for": later}); r.Code != http.StatusAccepted || r.JSON["status"] != "scheduled" {
		t.Errorf("wait=0, scheduled: %d %s", r.Code, r.Body)
	}
	for _, prefer := range []string{"", "wait=1"} {
		r := publish("other "+prefer, prefer, "", map[string]any{"scheduled_for": later})
		if r.Code != http.StatusOK || r.Header.Get("Location") != "" {
			t.Errorf("Prefer %q, scheduled: %d %v", prefer, r.Code, r.Header)
		}
	}
	if r := publish("short wait", "wait=1", "", nil); r.Code != http.StatusOK || r.JSON["status"] != "processing" {
		t.Errorf("wait=1 running out: %d %s", r.Code, r.Body)
	}
	e.waitPost(e.a, id, 15*time.Second, statusIs("published"))
	if r := publish("t", "wait=0", "k1", nil); r.Code != http.StatusOK || r.Header.Get("Idempotent-Replayed") != "true" || r.JSON["status"] != "published" {
		t.Errorf("wait=0 replaying a settled post: %d %v %s", r.Code, r.Header, r.Body)
	}
}

// The channels of the three default platforms answer live options from their platform.
func TestLiveChannelOptions(t *testing.T) {
	e := newAppEnv(t, "sqlite")
	for platform, id := range e.defaultChannels(e.a) {
		r := e.do(req{Method: "GET", Path: "/api/v1/channels/" + id + "/options", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["source"] != "platform" {
			t.Errorf("%s options: %d %s", platform, r.Code, r.Body)
		}
	}
	expired, _ := e.sandboxChannel(e.a, "tiktok", map[string]any{"fail": "auth"})
	if r := e.do(req{Method: "GET", Path: "/api/v1/channels/" + expired + "/options", Key: e.a.Key}); r.Code != http.StatusBadGateway {
		t.Errorf("options with an expired token: %d %s", r.Code, r.Body)
	}
}
