package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A NUL or another control character (newline and tab aside) in a text bound for a platform is
// a 400 naming the field, on both databases: PostgreSQL cannot store a NUL (it answered 500),
// and SQLite stored it and sent it on. Nothing is left behind.
func TestControlCharactersInTexts(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		e.sandboxChannel(e.a, "mastodon", nil)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		publishCases := []struct {
			name  string
			extra map[string]any
			field string
		}{
			{"NUL in the title", map[string]any{"title": "Launch\x00day"}, "title"},
			{"NUL in the caption", map[string]any{"caption": "\x00"}, "caption"},
			{"escape in a platform text", map[string]any{"youtube": map[string]any{"description": "red \x1b[31m"}}, "youtube.description"},
			{"NUL in a content warning", map[string]any{"platforms": []string{"mastodon"}, "mastodon": map[string]any{"spoiler_text": "cw\x00"}}, "mastodon.spoiler_text"},
			{"carriage return in a caption", map[string]any{"caption": "one\r\ntwo"}, "caption"},
		}
		for _, c := range publishCases {
			for _, dry := range []string{"false", "true"} {
				r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=" + dry, Key: e.a.Key, Body: publishBody(e.a, ms, c.extra)})
				if r.Code != http.StatusBadRequest || !strings.Contains(r.field(c.field), "control characters") {
					t.Errorf("%s (dry run %s): %d %s", c.name, dry, r.Code, r.Body)
				}
			}
		}
		// Newlines and tabs are text.
		r := e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key,
			Body: publishBody(e.a, ms, map[string]any{"caption": "line one\n\tline two"})})
		if r.Code != http.StatusOK {
			t.Errorf("newline and tab: %d %s", r.Code, r.Body)
		}
		if list := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key}); len(list.JSON["posts"].([]any)) != 0 {
			t.Errorf("refused requests left posts: %s", list.Body)
		}

		// An edit of a scheduled post is checked the same way.
		later := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: publishBody(e.a, ms, map[string]any{"scheduled_for": later})})
		if r.Code != http.StatusOK {
			t.Fatalf("scheduled post: %d %s", r.Code, r.Body)
		}
		id := r.JSON["post_id"].(string)
		r = e.do(req{Method: "PATCH", Path: "/api/v1/posts/" + id, Key: e.a.Key, Body: map[string]any{"caption": "bad\x00"}})
		if r.Code != http.StatusBadRequest || !strings.Contains(r.field("caption"), "control characters") {
			t.Errorf("edit: %d %s", r.Code, r.Body)
		}
		if got := e.do(req{Method: "GET", Path: "/api/v1/posts/" + id, Key: e.a.Key}); got.JSON["caption"] != "" {
			t.Errorf("the refused edit changed the post: %s", got.Body)
		}

		// The other texts that reach a platform: a reply, and a script made into copy.
		others := []struct {
			path  string
			body  map[string]any
			field string
		}{
			{"/api/v1/inbox/reply", map[string]any{"commentId": "c1", "platform": "youtube", "replyText": "thanks\x00"}, "replyText"},
			{"/api/v1/ai/adapt", map[string]any{"prompt": "Cold brew.\x07 Sixteen hours."}, "prompt"},
			{"/api/v1/projects", map[string]any{"name": "Spring", "description": "a\x00b"}, "description"},
		}
		for _, c := range others {
			r := e.do(req{Method: "POST", Path: c.path, Key: e.a.Key, Body: c.body})
			if r.Code != http.StatusBadRequest || !strings.Contains(r.field(c.field), "control characters") {
				t.Errorf("%s: %d %s", c.path, r.Code, r.Body)
			}
		}
	})
}
