package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/mcpserver"
)

// derivedOf is the derived object of the destination on platform in an answer's list of
// destinations (platforms or publish_results); nil when it has none.
func derivedOf(list any, platform string) map[string]any {
	ds, _ := list.([]any)
	for _, x := range ds {
		if d, _ := x.(map[string]any); d["platform"] == platform {
			m, _ := d["derived"].(map[string]any)
			return m
		}
	}
	return nil
}

// TestPublishMinimalRequest: the smallest request the contract allows, {"project_id",
// "video_url"}, publishes to the project's YouTube, Instagram and TikTok channels, YouTube's
// title derived from the caption's first line, else the uploaded file's name, else
// video_url's; the answers say so.
func TestPublishMinimalRequest(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		mp4 := video(t, 3)
		ms := newMediaServer(t, map[string][]byte{"/videos/Morning run.mp4": mp4, "/videos/": mp4})
		minimal := map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/videos/Morning%20run.mp4"}
		youtubeTitles := func() []any {
			_, pubs := e.introspect(e.a, "youtube")
			var out []any
			for _, p := range pubs {
				out = append(out, p["text"])
			}
			return out
		}

		dry := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key, Body: minimal})
		if dry.Code != http.StatusOK || len(dry.JSON["platforms"].([]any)) != 3 {
			t.Fatalf("dry run: %d %s", dry.Code, dry.Body)
		}
		for _, x := range dry.JSON["platforms"].([]any) {
			d := x.(map[string]any)
			switch d["platform"] {
			case "youtube":
				if d["payload"].(map[string]any)["title"] != "Morning run" || derivedOf(dry.JSON["platforms"], "youtube")["title"] != "video_url" {
					t.Errorf("youtube would receive %v", d)
				}
			default:
				if d["derived"] != nil {
					t.Errorf("%s: derived texts from a request without any: %v", d["platform"], d)
				}
			}
		}

		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: minimal})
		if r.Code != http.StatusOK || len(r.JSON["platforms"].([]any)) != 3 {
			t.Fatalf("minimal publish: %d %s", r.Code, r.Body)
		}
		if got := derivedOf(r.JSON["platforms"], "youtube"); len(got) != 1 || got["title"] != "video_url" {
			t.Errorf("the answer's youtube derived: %v", got)
		}
		id := r.JSON["post_id"].(string)
		p := e.waitPost(e.a, id, 30*time.Second, statusIs("published"))
		for _, x := range p["publish_results"].([]any) {
			if d := x.(map[string]any); d["success"] != true || d["upload_status"] == "failed" {
				t.Errorf("destination: %v", d)
			}
		}
		if got := derivedOf(p["publish_results"], "youtube"); got["title"] != "video_url" {
			t.Errorf("GET /posts/{id} youtube derived: %v", got)
		}
		if titles := youtubeTitles(); len(titles) != 1 || titles[0] != "Morning run" {
			t.Fatalf("YouTube received the titles %v", titles)
		}

		// With a caption, its first line.
		captioned := map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/videos/Morning%20run.mp4",
			"caption": "hi\nSecond line #run"}
		r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: captioned})
		if r.Code != http.StatusOK || derivedOf(r.JSON["platforms"], "youtube")["title"] != "caption_first_line" ||
			derivedOf(r.JSON["platforms"], "instagram")["caption"] != "caption" {
			t.Fatalf("publish with a caption: %d %s", r.Code, r.Body)
		}
		e.waitPost(e.a, r.JSON["post_id"].(string), 30*time.Second, statusIs("published"))
		if titles := youtubeTitles(); len(titles) != 2 || titles[1] != "hi" {
			t.Errorf("YouTube received the titles %v", titles)
		}

		// An upload: its file name, without directory or extension.
		upload := func(name string, seconds int, fields map[string]string, header ...string) *resp {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			mw.WriteField("project_id", e.a.ProjectID)
			mw.WriteField("platforms", "youtube")
			for k, v := range fields {
				mw.WriteField(k, v)
			}
			fw, _ := mw.CreateFormFile("video", name)
			fw.Write(video(t, seconds))
			mw.Close()
			h := map[string]string{"Content-Type": mw.FormDataContentType()}
			for i := 0; i+1 < len(header); i += 2 {
				h[header[i]] = header[i+1]
			}
			return e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: body.Bytes(), Header: h})
		}
		r = upload("Harbour at dawn.mp4", 2, nil, "Idempotency-Key", "harbour")
		if r.Code != http.StatusOK || derivedOf(r.JSON["platforms"], "youtube")["title"] != "video_file_name" {
			t.Fatalf("upload without a title: %d %s", r.Code, r.Body)
		}
		e.waitPost(e.a, r.JSON["post_id"].(string), 30*time.Second, statusIs("published"))
		if titles := youtubeTitles(); len(titles) != 3 || titles[2] != "Harbour at dawn" {
			t.Errorf("YouTube received the titles %v", titles)
		}
		// The file's name is part of the request: the same key with another name is another
		// request; and a name longer than any file system's is refused.
		if again := upload("Harbour at noon.mp4", 2, nil, "Idempotency-Key", "harbour"); again.Code != http.StatusConflict || again.errCode() != "idempotency_conflict" {
			t.Errorf("the same key with another file name: %d %s", again.Code, again.Body)
		}
		if long := upload(strings.Repeat("n", 1100)+".mp4", 2, nil); long.Code != http.StatusBadRequest || !strings.Contains(long.field("video"), "file name") {
			t.Errorf("a file name of 1104 bytes: %d %s", long.Code, long.Body)
		}

		// A scheduled upload moved by PATCH keeps its title from the file's name, which the post
		// keeps; then cancelled.
		r = upload("Quay at noon.mp4", 4, map[string]string{"scheduled_for": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		if r.Code != http.StatusOK || r.JSON["status"] != "scheduled" {
			t.Fatalf("scheduled upload: %d %s", r.Code, r.Body)
		}
		scheduled := r.JSON["post_id"].(string)
		moved := e.do(req{Method: "PATCH", Path: "/api/v1/posts/" + scheduled, Key: e.a.Key,
			Body: map[string]any{"scheduled_for": time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)}})
		if moved.Code != http.StatusOK || derivedOf(moved.JSON["publish_results"], "youtube")["title"] != "video_file_name" {
			t.Errorf("moved: %d %s", moved.Code, moved.Body)
		}
		if c := e.do(req{Method: "DELETE", Path: "/api/v1/posts/" + scheduled, Key: e.a.Key}); c.Code != http.StatusOK {
			t.Fatalf("cancel: %d %s", c.Code, c.Body)
		}

		// Nothing to derive it from: a 400 saying how to give one, and nothing fetched or kept.
		hits := ms.hits.Load()
		bad := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/videos/"}})
		if bad.Code != http.StatusBadRequest || !strings.Contains(bad.field("title"), "set title or youtube.title") {
			t.Errorf("nothing to derive a title from: %d %s", bad.Code, bad.Body)
		}
		if ms.hits.Load() != hits {
			t.Error("a refused request fetched its video")
		}
		if list := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key}); len(list.JSON["posts"].([]any)) != 4 {
			t.Errorf("posts after the refusal: %s", list.Body)
		}
	})
}

// TestMCPPublishesMinimalRequest: reelay_publish_post over /api/v1/mcp with a project and a
// video_url alone publishes to the project's YouTube, Instagram and TikTok channels, and says
// where YouTube's title came from.
func TestMCPPublishesMinimalRequest(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		ms := newMediaServer(t, map[string][]byte{"/launch-day.mp4": video(t, 3)})
		cs := mustConnect(t, e.h, e.a.Key)
		res := call(t, cs, mcpserver.ToolPublishPost, map[string]any{"project_id": e.a.ProjectID,
			"video_url": ms.URL + "/launch-day.mp4", "wait_seconds": 30})
		var pub mcpserver.PublishResult
		decodeStructured(t, res, &pub)
		if pub.Status != client.PostPublished || len(pub.Platforms) != 3 {
			t.Fatalf("publish: %s", text(res))
		}
		for _, d := range pub.Platforms {
			if d.Platform == client.YouTube && d.Derived["title"] != client.DerivedFromVideoURL {
				t.Errorf("youtube derived %v", d.Derived)
			}
		}
		if !strings.Contains(text(res), "Its title was made from the video link's file name") {
			t.Errorf("summary: %s", text(res))
		}
		if _, pubs := e.introspect(e.a, "youtube"); len(pubs) != 1 || pubs[0]["text"] != "launch-day" {
			t.Errorf("YouTube published %v", pubs)
		}
	})
}
