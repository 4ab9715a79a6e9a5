package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// youtubeTitle is the title a post's YouTube destination was sent.
func youtubeTitle(t *testing.T, p store.Post) string {
	t.Helper()
	for _, d := range p.Destinations {
		if d.Platform == "youtube" {
			var o struct {
				Title string `json:"title"`
			}
			if err := json.Unmarshal(d.Options, &o); err != nil {
				t.Fatal(err)
			}
			return o.Title
		}
	}
	t.Fatal("no youtube destination")
	return ""
}

// TestPublishFormWithoutTitle: the dashboard's publish form sent without a title publishes to
// YouTube, Instagram and TikTok channels, YouTube's title made from the caption's first line,
// else the uploaded file's name; the check says so.
func TestPublishFormWithoutTitle(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, d)
			b := e.browser()
			b.signIn(e.a.Key)
			ids := `["` + b.sandboxChannel("youtube") + `","` + b.sandboxChannel("instagram") + `","` + b.sandboxChannel("tiktok") + `"]`
			clip := smallVideo(t)

			r, out := b.publish("?dry_run=true", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids}, {"caption", "hi\nmore"}}, "",
				fileField{"video", "clip.mp4", clip})
			if r.Code != 200 || len(out["platforms"].([]any)) != 3 {
				t.Fatalf("check without a title: %d %v", r.Code, out)
			}
			for _, x := range out["platforms"].([]any) {
				if d := x.(map[string]any); d["platform"] == "youtube" {
					derived, _ := d["derived"].(map[string]any)
					if d["payload"].(map[string]any)["title"] != "hi" || derived["title"] != "caption_first_line" {
						t.Errorf("youtube would receive %v", d)
					}
				}
			}

			for i, c := range []struct {
				fields      [][2]string
				file, title string
			}{
				{[][2]string{{"caption", "hi\nmore"}}, "clip.mp4", "hi"},
				{nil, "Harbour at dawn.mp4", "Harbour at dawn"},
			} {
				fields := append([][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", ids}}, c.fields...)
				r, out := b.publish("", fields, "form-key-title-"+strings.Repeat("x", i+8), fileField{"video", c.file, clip})
				if r.Code != 200 || out["success"] != true {
					t.Fatalf("publish %v: %d %v", c.fields, r.Code, out)
				}
				p := e.waitStatus(out["post_id"].(string), store.PostPublished)
				if len(p.Destinations) != 3 || youtubeTitle(t, p) != c.title {
					t.Errorf("publish %v: %d destinations, YouTube's title %q, want %q", c.fields, len(p.Destinations), youtubeTitle(t, p), c.title)
				}
			}
		})
	}
}

// TestBrowserPublishWithoutTitle: the form lets a title be left empty, says what YouTube gets
// then, and its check shows the title reelay made.
func TestBrowserPublishWithoutTitle(t *testing.T) {
	e := newEnv(t, store.SQLite)
	ctx := newTab(t)
	clip := mediatest.MP4(t, mediatest.Options{Duration: 3 * time.Second, Width: 1080, Height: 1920})
	do(t, ctx, "sign in", chromedp.Navigate(e.url+"/signin"), chromedp.WaitVisible(chromedp.CSS("#api_key")),
		chromedp.SendKeys(chromedp.CSS("#api_key"), e.a.Key), chromedp.Click(chromedp.CSS("main button[type=submit]")))
	waitFor(t, ctx, "signed in", `location.pathname === "/posts"`, 10*time.Second)
	do(t, ctx, "connect youtube", chromedp.Navigate(e.url+"/channels"), chromedp.WaitVisible(chromedp.CSS("#sb-platform")),
		chromedp.SetValue(chromedp.CSS("#sb-platform"), "youtube"), chromedp.SetValue(chromedp.CSS("#sb-fail"), "none"),
		chromedp.SetValue(chromedp.CSS("#sb-ms"), "100"), chromedp.Click(chromedp.CSS("#sb-submit")))
	waitFor(t, ctx, "connected", `document.querySelector(".notice") && document.querySelector(".notice").textContent.includes("connected")`, 10*time.Second)

	do(t, ctx, "publish page", chromedp.Navigate(e.url+"/publish"), chromedp.WaitVisible(chromedp.CSS("#title")),
		chromedp.SendKeys(chromedp.CSS("#caption"), "Fog over the harbour"))
	if got := eval[string](t, ctx, `document.getElementById("opt-youtube-title-count").textContent`); !strings.Contains(got, "made from the caption's first line") {
		t.Errorf("youtube title counter with the title empty: %q", got)
	}
	do(t, ctx, "check", chromedp.SetUploadFiles(chromedp.CSS("#video"), []string{clip}), chromedp.Click(chromedp.CSS("#check")))
	waitFor(t, ctx, "check result", `!document.getElementById("check-result").hidden`, 20*time.Second)
	if txt := eval[string](t, ctx, `document.getElementById("check-result").textContent`); !strings.Contains(txt, `"title": "Fog over the harbour"`) ||
		!strings.Contains(txt, "Filled in by reelay: description from the caption; title from the caption's first line.") {
		t.Errorf("check result: %q", txt)
	}
	do(t, ctx, "publish", chromedp.Click(chromedp.CSS("#submit")))
	waitFor(t, ctx, "published", `location.pathname.startsWith("/posts/") && !!document.querySelector('[data-post-status="published"]')`, 30*time.Second)
}
