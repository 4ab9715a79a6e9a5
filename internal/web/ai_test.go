package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

func TestAIPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	b.sandboxChannel("bluesky")

	// The project's platforms are chosen at first.
	page := b.get("/ai")
	if page.Code != 200 || !strings.Contains(page.Body, `value="bluesky" checked`) || strings.Contains(page.Body, `value="youtube" checked`) {
		t.Fatalf("AI page:\n%s", page.Body)
	}
	script := "Cold brew is easier than you think. Use coarse beans and 16 hours in the fridge. What is your ratio?"
	r := b.post("/ai/adapt", url.Values{"prompt": {script}, "platforms": {"bluesky", "youtube"}, "tone": {"educational"}, "jev": {"on"}}, nil)
	if r.Code != 200 || !strings.Contains(r.Body, "<h3>Bluesky</h3>") || !strings.Contains(r.Body, "<h3>YouTube</h3>") ||
		!strings.Contains(r.Body, "/ 300 characters") || !strings.Contains(r.Body, "/ 5000 bytes") || !strings.Contains(r.Body, "On-screen lines") ||
		!strings.Contains(r.Body, "reelay-builtin") {
		t.Fatalf("adapt:\n%s", r.Body)
	}
	// Refusals beside their fields, with what was typed kept.
	r = b.post("/ai/adapt", url.Values{"prompt": {"   "}, "platforms": {"bluesky"}, "tone": {"shouty"}}, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="ai-prompt-error"`) || !strings.Contains(r.Body, "must be one of") {
		t.Errorf("bad adapt: %d\n%s", r.Code, r.Body)
	}
	if r := b.post("/ai/adapt", url.Values{"prompt": {script}}, nil); r.Code != 400 || !strings.Contains(r.Body, "choose at least one platform") {
		t.Errorf("no platform: %d", r.Code)
	}
	r = b.post("/ai/storyboard", url.Values{"topic": {"How to make cold brew at home"}, "duration": {"30"}, "style": {"cinematic"}}, nil)
	if r.Code != 200 || !strings.Contains(r.Body, "Storyboard: 6 scenes") || !strings.Contains(r.Body, "00:25-00:30") {
		t.Errorf("storyboard:\n%s", r.Body)
	}
	r = b.post("/ai/storyboard", url.Values{"topic": {"Cold brew"}, "duration": {"3000"}, "camera": {"slow\ndolly"}}, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="sb-duration-error"`) || !strings.Contains(r.Body, `value="3000"`) || !strings.Contains(r.Body, "one line") {
		t.Errorf("bad storyboard: %d\n%s", r.Code, r.Body)
	}
	if r := b.post("/ai/adapt", url.Values{"prompt": {script}, "platforms": {"bluesky"}}, map[string]string{"Origin": "https://evil.example"}); r.Code != http.StatusForbidden {
		t.Errorf("adapt from another site: %d", r.Code)
	}
}
