package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/render/rendertest"
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

func TestAIVideo(t *testing.T) {
	t.Parallel()
	rendertest.RequireFFmpeg(t)
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)

	// Without credits: refused on the form, nothing started.
	r := b.post("/ai/video", url.Values{"prompt": {"Cold brew in 16 hours"}, "aspect": {"9:16"}}, nil)
	if r.Code != http.StatusPaymentRequired || !strings.Contains(r.Body, "AI credits") || !strings.Contains(r.Body, "Cold brew in 16 hours") {
		t.Fatalf("no credits: %d\n%s", r.Code, r.Body)
	}
	if r := b.post("/ai/video", url.Values{"prompt": {"x"}, "aspect": {"1:1"}}, nil); r.Code != 400 || !strings.Contains(r.Body, "must be 9:16 or 16:9") {
		t.Errorf("bad aspect: %d", r.Code)
	}
	if _, err := e.st.AddCredits(context.Background(), e.a.AccountID, 3, "test"); err != nil {
		t.Fatal(err)
	}
	r = b.post("/ai/video", url.Values{"prompt": {"Cold brew in 16 hours"}, "aspect": {"9:16"}}, nil)
	if r.Code != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/ai/jobs/") {
		t.Fatalf("start: %d %q\n%s", r.Code, r.location(), r.Body)
	}
	job := r.location()
	var page answer
	deadline := time.Now().Add(2 * time.Minute)
	for {
		page = b.get(job)
		if strings.Contains(page.Body, `data-job-status="succeeded"`) {
			break
		}
		if !strings.Contains(page.Body, `data-job-status="running"`) || !strings.Contains(page.Body, `http-equiv="refresh"`) || time.Now().After(deadline) {
			t.Fatalf("job page:\n%s", page.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	m := regexp.MustCompile(`<video class="clip" controls preload="metadata" src="([^"]+)">`).FindStringSubmatch(page.Body)
	if m == nil || strings.Contains(page.Body, `http-equiv="refresh"`) {
		t.Fatalf("finished job:\n%s", page.Body)
	}
	link := html.UnescapeString(m[1])
	// The clip is served by its signed link; "Publish this video" fills it into the form.
	res, err := http.Get(link)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the clip's link: %v %v", err, res)
	}
	res.Body.Close()
	b.sandboxChannel("tiktok")
	pub := b.get("/publish?video_url=" + url.QueryEscape(link))
	if !strings.Contains(pub.Body, `value="`+m[1]+`"`) {
		t.Errorf("the publish form is not filled in with the clip")
	}
	other := e.browser()
	other.signIn(e.b.Key)
	if r := other.get(job); r.Code != 404 {
		t.Errorf("another account's job: %d", r.Code)
	}
}
