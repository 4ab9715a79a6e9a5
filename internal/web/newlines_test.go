package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// Browsers send a textarea's lines ending in CRLF. The dashboard takes them as line ends, in
// its multipart publish form and in its URL-encoded forms, where the API refuses a carriage
// return as a control character; a NUL typed into a form is refused as the API refuses it.
func TestFormsTakeCRLFAsLineEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	ids := `["` + b.sandboxChannel("bluesky") + `"]`
	video := fileField{"video", "clip.mp4", smallVideo(t)}

	r, out := b.publish("?dry_run=true", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids},
		{"title", "Hello"}, {"caption", "line one\r\nline two"}}, "", video)
	if r.Code != 200 {
		t.Fatalf("dry run with CRLF: %d %v", r.Code, out)
	}
	payload := out["platforms"].([]any)[0].(map[string]any)["payload"].(map[string]any)
	if payload["text"] != "line one\nline two" {
		t.Errorf("bluesky text %q, want the lines joined by LF", payload["text"])
	}
	r, out = b.publish("?dry_run=true", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids},
		{"title", "Hello"}, {"caption", "nul\x00"}}, "", video)
	if fields, _ := out["error"].(map[string]any)["fields"].(map[string]any); r.Code != 400 || fields["caption"] == nil {
		t.Errorf("NUL in the caption: %d %v", r.Code, out)
	}

	script := "Cold brew is easier than you think.\r\nUse coarse beans and 16 hours in the fridge."
	if r := b.post("/ai/adapt", url.Values{"prompt": {script}, "platforms": {"bluesky"}}, nil); r.Code != 200 || !strings.Contains(r.Body, "coarse beans") {
		t.Errorf("adapt with CRLF: %d\n%s", r.Code, r.Body)
	}
}
