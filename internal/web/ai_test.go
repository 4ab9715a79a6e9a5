package web_test

import (
	"bytes"
	"context"
	"html"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/videogen/videogentest"
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

// storyboard builds a storyboard of seconds on the AI page and answers the render form's fields
// as the page fills them in.
func (b *browser) storyboard(topic string, seconds int) (answer, url.Values) {
	b.e.t.Helper()
	page := b.post("/ai/storyboard", url.Values{"topic": {topic}, "duration": {strconv.Itoa(seconds)}}, nil)
	if page.Code != 200 {
		b.e.t.Fatalf("storyboard: %d\n%s", page.Code, page.Body)
	}
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<(?:input|textarea)[^>]* name="(scene_[a-z]+|sb_[a-z]+)"(?: value="([^"]*)")?[^>]*>([^<]*)`).FindAllStringSubmatch(page.Body, -1) {
		v := m[2]
		if m[1] == "scene_prompt" {
			v = m[3]
		}
		form.Add(m[1], html.UnescapeString(v))
	}
	return page, form
}

// TestAIRender: a storyboard's scenes, edited on the page, rendered into one video whose page
// reloads itself until it plays; refused without credits and for bad scenes, with what was
// typed kept; another account cannot see the job.
func TestAIRender(t *testing.T) {
	t.Parallel()
	rendertest.RequireFFmpeg(t)
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)

	page, form := b.storyboard("Cold brew at home. Coarse beans, sixteen hours.", 10)
	if !strings.Contains(page.Body, "Storyboard: 2 scenes") || !strings.Contains(page.Body, `id="sc-2-prompt"`) ||
		!strings.Contains(page.Body, "It costs 3 AI credits, refunded if it fails; you have 0.") || len(form["scene_prompt"]) != 2 ||
		len(form["scene_title"]) != 2 || form.Get("sb_topic") == "" {
		t.Fatalf("storyboard with its render form (%v):\n%s", form, page.Body)
	}
	// The local renderer needs no key: the page asks for none.
	if strings.Contains(page.Body, `name="api_key"`) {
		t.Error("a key field without a hosted video model")
	}
	form["scene_prompt"][1] = "A glass of cold brew over ice, edited on the page"
	form.Set("aspect", "16:9")

	// Without credits: 402 above the scenes, which keep what was typed; nothing is charged.
	r := b.post("/ai/render", cloneValues(form), nil)
	if r.Code != http.StatusPaymentRequired || !strings.Contains(r.Body, `id="render-error"`) || !strings.Contains(r.Body, "needs 3 AI credits and the account has 0") ||
		!strings.Contains(r.Body, "edited on the page") || !strings.Contains(r.Body, `<option value="16:9" selected>`) {
		t.Fatalf("no credits: %d\n%s", r.Code, r.Body)
	}
	// A scene without a prompt, or a title on two lines: refused beside the field.
	bad := cloneValues(form)
	bad["scene_prompt"][0] = "  "
	bad["scene_title"][1] = "two\nlines"
	r = b.post("/ai/render", bad, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="sc-1-prompt-error"`) || !strings.Contains(r.Body, `id="sc-2-title-error"`) ||
		!strings.Contains(r.Body, `aria-describedby="sc-1-prompt-error"`) || strings.Contains(r.Body, `id="sc-2-prompt-error"`) {
		t.Errorf("bad scenes: %d\n%s", r.Code, r.Body)
	}
	bad = cloneValues(form)
	bad.Set("aspect", "1:1")
	if r := b.post("/ai/render", bad, nil); r.Code != 400 || !strings.Contains(r.Body, `id="r-aspect-error"`) {
		t.Errorf("bad aspect: %d", r.Code)
	}
	bad = cloneValues(form)
	delete(bad, "scene_prompt")
	if r := b.post("/ai/render", bad, nil); r.Code != 400 || !strings.Contains(r.Body, "at least one scene") {
		t.Errorf("no scenes: %d", r.Code)
	}
	if r := b.post("/ai/render", cloneValues(form), map[string]string{"Origin": "https://evil.example"}); r.Code != http.StatusForbidden {
		t.Errorf("render from another site: %d", r.Code)
	}
	if jobs := countAIJobs(t, e); jobs != 0 {
		t.Fatalf("%d jobs started by refused renders", jobs)
	}

	if _, err := e.st.AddCredits(context.Background(), e.a.AccountID, 3, "test"); err != nil {
		t.Fatal(err)
	}
	r = b.post("/ai/render", cloneValues(form), nil)
	if r.Code != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/ai/jobs/") {
		t.Fatalf("render: %d %q\n%s", r.Code, r.location(), r.Body)
	}
	job := r.location()
	// The scenes rendered are the ones edited on the page.
	j, err := e.st.GetAIJob(context.Background(), e.a.AccountID, strings.TrimPrefix(job, "/ai/jobs/"))
	if err != nil || j.Kind != store.AIJobStoryboardStitch || j.Credits != 3 || !strings.Contains(string(j.Input), "edited on the page") ||
		!strings.Contains(string(j.Input), `"aspectRatio":"16:9"`) {
		t.Fatalf("job %v: %+v %s", err, j, j.Input)
	}
	var done answer
	deadline := time.Now().Add(3 * time.Minute)
	for {
		done = b.get(job)
		if strings.Contains(done.Body, `data-job-status="succeeded"`) {
			break
		}
		if !strings.Contains(done.Body, `data-job-status="running"`) || !strings.Contains(done.Body, `http-equiv="refresh"`) || time.Now().After(deadline) {
			t.Fatalf("job page:\n%s", done.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	m := regexp.MustCompile(`<video class="clip" controls preload="metadata" src="([^"]+)">`).FindStringSubmatch(done.Body)
	if m == nil || !strings.Contains(done.Body, "<h1>Storyboard video</h1>") || !strings.Contains(done.Body, "Publish this video") ||
		!strings.Contains(done.Body, `data-duration="10`) {
		t.Fatalf("finished job:\n%s", done.Body)
	}
	res, err := http.Get(html.UnescapeString(m[1]))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the video's link: %v %v", err, res)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	info, err := media.Probe(bytes.NewReader(raw), int64(len(raw)))
	if err != nil || info.Width != 1920 || info.Height != 1080 || math.Abs(info.Duration.Seconds()-10) > 0.2 {
		t.Errorf("the video: %+v %v; want 1920x1080, 10 s", info, err)
	}
	if acct, _ := e.st.GetAccount(context.Background(), e.a.AccountID); acct.AICredits != 0 {
		t.Errorf("credits after the render: %d, want 0", acct.AICredits)
	}
	other := e.browser()
	other.signIn(e.b.Key)
	if r := other.get(job); r.Code != 404 {
		t.Errorf("another account's job: %d", r.Code)
	}
}

// TestAIRenderWithoutFFmpeg: a server without ffmpeg says so on the page, and charges nothing.
func TestAIRenderWithoutFFmpeg(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite, func(c *config.Config) { c.FFmpeg = "/nonexistent/ffmpeg" })
	b := e.browser()
	b.signIn(e.a.Key)
	if _, err := e.st.AddCredits(context.Background(), e.a.AccountID, 5, "test"); err != nil {
		t.Fatal(err)
	}
	_, form := b.storyboard("Cold brew at home", 10)
	r := b.post("/ai/render", form, nil)
	if r.Code != http.StatusServiceUnavailable || !strings.Contains(r.Body, `id="render-error"`) || !strings.Contains(r.Body, "needs ffmpeg") ||
		!strings.Contains(r.Body, "Storyboard: 2 scenes") {
		t.Fatalf("without ffmpeg: %d\n%s", r.Code, r.Body)
	}
	if acct, _ := e.st.GetAccount(context.Background(), e.a.AccountID); acct.AICredits != 5 || countAIJobs(t, e) != 0 {
		t.Errorf("without ffmpeg: credits %d, jobs %d; want 5 and none", acct.AICredits, countAIJobs(t, e))
	}
}

// TestAIRenderWithKey: with a hosted video model, the page offers a key of the user's own for one
// render. The key reaches the model, and never a page, a log line or the database in plain.
func TestAIRenderWithKey(t *testing.T) {
	t.Parallel()
	rendertest.RequireFFmpeg(t) // the scenes are joined by ffmpeg
	model := videogentest.NewServer(t)
	// The server has no key of its own for the model: only the page's is accepted there.
	e := newEnv(t, store.SQLite, func(c *config.Config) { c.VideoURL = model.TextURL() })
	b := e.browser()
	b.signIn(e.a.Key)
	if _, err := e.st.AddCredits(context.Background(), e.a.AccountID, 20, "test"); err != nil {
		t.Fatal(err)
	}
	page, form := b.storyboard("Cold brew at home", 10)
	if !strings.Contains(page.Body, `name="api_key" type="password" autocomplete="off"`) || !strings.Contains(page.Body, "It costs 11 AI credits") {
		t.Fatalf("render form with a hosted model:\n%s", page.Body)
	}
	key := model.Key
	// A key the API would refuse is refused beside its field and not written back.
	bad := cloneValues(form)
	bad.Set("api_key", "Key "+key)
	r := b.post("/ai/render", bad, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="r-key-error"`) || strings.Contains(r.Body, key) {
		t.Errorf("bad key: %d\n%s", r.Code, r.Body)
	}
	form.Set("api_key", key)
	r = b.post("/ai/render", form, nil)
	if r.Code != http.StatusSeeOther || strings.Contains(r.location(), key) {
		t.Fatalf("render: %d %q\n%s", r.Code, r.location(), r.Body)
	}
	var done answer
	deadline := time.Now().Add(3 * time.Minute)
	for {
		done = b.get(r.location())
		if !strings.Contains(done.Body, `data-job-status="running"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !strings.Contains(done.Body, `data-job-status="succeeded"`) || !strings.Contains(done.Body, `data-duration="10`) {
		t.Fatalf("job page:\n%s", done.Body)
	}
	if n := len(model.Submits()); n != 2 {
		t.Errorf("the model received %d submits, want one per scene", n)
	}
	for where, text := range map[string]string{"the job page": done.Body, "the AI page": b.get("/ai").Body, "the log": e.logs.String()} {
		if strings.Contains(text, key) {
			t.Errorf("the key is in %s", where)
		}
	}
	var input, sealed []byte
	if err := e.st.JobsDB().QueryRow(`SELECT input, provider_key FROM ai_jobs`).Scan(&input, &sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(input), key) || strings.Contains(string(sealed), key) {
		t.Error("the key is in the database in plain")
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func countAIJobs(t *testing.T, e *env) int {
	t.Helper()
	var n int
	if err := e.st.JobsDB().QueryRow(`SELECT COUNT(*) FROM ai_jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
