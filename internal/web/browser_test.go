package web_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
)

// The browser tests drive Debian's chromium through the DevTools protocol. Without a browser
// they skip, saying so, unless REELAY_TEST_REQUIRE_BROWSER=1 (CI), where they fail instead.
// REELAY_SCREENSHOTS=1 saves screenshots of each page at desktop and phone widths under
// docs/screenshots.

func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REELAY_TEST_REQUIRE_BROWSER") == "1" {
		t.Fatal("no browser found (chromium), and REELAY_TEST_REQUIRE_BROWSER=1: install it with apt-get install chromium")
	}
	t.Skip("SKIPPED: browser test: no chromium on this machine (apt-get install chromium runs it)")
	return ""
}

// newTab starts a headless chromium with a fresh profile and returns a tab's context.
func newTab(t *testing.T) context.Context {
	t.Helper()
	path := browserPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.NoSandbox, // chromium refuses to run as root with its sandbox
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("lang", "en-GB"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it is true, across page loads.
func waitFor(t *testing.T, ctx context.Context, what, js string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// A page still being parsed can already show the element waited for but not what
		// follows it in the document, so only a fully loaded page counts.
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !!(`+js+`)`))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText : "")`))
			t.Fatalf("%s: not after %s (%v)\npage:\n%s", what, timeout, err, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func path(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `location.pathname + location.search`)
}

// screenshots saves the current page at desktop and phone widths, when asked to.
func screenshots(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("REELAY_SCREENSHOTS") != "1" {
		return
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, size := range []struct {
		suffix        string
		width, height int64
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		do(t, ctx, "resize", chromedp.EmulateViewport(size.width, size.height), chromedp.Sleep(150*time.Millisecond))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.suffix+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	do(t, ctx, "resize", chromedp.EmulateViewport(1280, 900))
}

// TestBrowserPublishJourney is the README's promise in a real browser: sign in with the key,
// connect a sandbox channel, publish an uploaded video, and watch it reach "published".
func TestBrowserPublishJourney(t *testing.T) {
	e := newEnv(t, store.SQLite)
	ctx := newTab(t)
	clip := mediatest.MP4(t, mediatest.Options{Duration: 3 * time.Second, Width: 1080, Height: 1920})

	// Signing in: the start page sends the browser to the sign-in form.
	do(t, ctx, "open", chromedp.Navigate(e.url+"/"), chromedp.WaitVisible(chromedp.CSS("#api_key")))
	screenshots(t, ctx, "signin")
	do(t, ctx, "wrong key", chromedp.SendKeys(chromedp.CSS("#api_key"), "rly_live_nope"), chromedp.Click(chromedp.CSS("main button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("#signin-error")))
	if v := eval[string](t, ctx, `document.getElementById("api_key").value`); v != "" {
		t.Errorf("the refused key is written back into the form: %q", v)
	}
	do(t, ctx, "sign in", chromedp.SendKeys(chromedp.CSS("#api_key"), e.a.Key), chromedp.Click(chromedp.CSS("main button[type=submit]")))
	waitFor(t, ctx, "posts page after sign-in", `location.pathname === "/posts" && !!document.querySelector("h1")`, 10*time.Second)
	if html := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, e.a.Key) {
		t.Fatal("the API key is in the page")
	}

	// Connecting sandbox channels (TikTok that publishes, Bluesky for its way of counting).
	for _, p := range []string{"tiktok", "bluesky"} {
		do(t, ctx, "channels", chromedp.Navigate(e.url+"/channels"), chromedp.WaitVisible(chromedp.CSS("#sb-platform")),
			chromedp.SetValue(chromedp.CSS("#sb-platform"), p), chromedp.SetValue(chromedp.CSS("#sb-fail"), "none"),
			chromedp.SetValue(chromedp.CSS("#sb-ms"), "100"), chromedp.Click(chromedp.CSS("#sb-submit")))
		waitFor(t, ctx, "connected "+p, `document.querySelector(".notice") && document.querySelector(".notice").textContent.includes("connected")`, 10*time.Second)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("table.list tbody tr").length`); n != 2 {
		t.Fatalf("%d channels listed", n)
	}
	screenshots(t, ctx, "channels")

	// The publish form: sections and counters for the chosen channels' platforms.
	do(t, ctx, "publish page", chromedp.Navigate(e.url+"/publish"), chromedp.WaitVisible(chromedp.CSS("#title")))
	if !eval[bool](t, ctx, `!document.querySelector('[data-section="bluesky"]').hidden && !document.querySelector('[data-section="tiktok"]').hidden`) {
		t.Fatal("platform sections of the chosen channels are hidden")
	}
	// Bluesky counts graphemes: a family emoji is one; TikTok counts UTF-16 units: it is eight.
	// (Typed through an input event: key events cannot carry the zero-width joiners.)
	eval[bool](t, ctx, `(function () {
		for (const [id, v] of [["opt-bluesky-text", "👩‍👩‍👧ab"], ["opt-tiktok-title", "👩‍👩‍👧"]]) {
			const el = document.getElementById(id);
			el.value = v;
			el.dispatchEvent(new Event("input", { bubbles: true }));
		}
		return true;
	})()`)
	if got := eval[string](t, ctx, `document.getElementById("opt-bluesky-text-count").textContent`); !strings.HasPrefix(got, "3 / 300 ") {
		t.Errorf("bluesky counter: %q", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("opt-tiktok-title-count").textContent`); !strings.HasPrefix(got, "8 / 2200 ") {
		t.Errorf("tiktok counter: %q", got)
	}
	// Threads counts characters and each emoji as its UTF-8 bytes; the page counts as the
	// server does.
	for _, text := range []string{"日本語のテキスト", "hi 😀!", "🇫🇷 👩‍👩‍👧 ❤️ 👍🏽"} {
		lim := platform.TextLimit{Unit: platform.UnitEmojiBytes}
		if got := eval[int](t, ctx, fmt.Sprintf(`window.reelayCount(%q, "emoji_bytes")`, text)); got != lim.Count(text) {
			t.Errorf("the page counts %q as %d in emoji_bytes, the server %d", text, got, lim.Count(text))
		}
	}
	// Unchosen platforms' sections disappear with their channel.
	do(t, ctx, "untick bluesky", chromedp.Click(chromedp.CSS(`input[name=channel][data-platform=bluesky]`)))
	if !eval[bool](t, ctx, `document.querySelector('[data-section="bluesky"]').hidden`) {
		t.Error("the bluesky section stays after its channel is unticked")
	}

	do(t, ctx, "tick bluesky again", chromedp.Click(chromedp.CSS(`input[name=channel][data-platform=bluesky]`)))

	// The schedule picker sends the wall-clock time of the chosen zone with that zone's offset
	// on that date (summer and winter time differ).
	for in, want := range map[[2]string]string{
		{"2027-07-01T09:00", "Europe/Paris"}:     "2027-07-01T09:00:00+02:00",
		{"2027-01-15T09:00", "Europe/Paris"}:     "2027-01-15T09:00:00+01:00",
		{"2027-01-15T09:30", "America/New_York"}: "2027-01-15T09:30:00-05:00",
		{"2027-07-01T23:45", "Asia/Kolkata"}:     "2027-07-01T23:45:00+05:30",
		{"2027-07-01T09:00", "UTC"}:              "2027-07-01T09:00:00+00:00",
	} {
		if got := eval[string](t, ctx, `window.reelayRFC3339("`+in[0]+`", "`+in[1]+`")`); got != want {
			t.Errorf("schedule %s in %s: %s, want %s", in[0], in[1], got, want)
		}
	}

	// Bad input: the API's messages beside their fields, what was typed kept.
	long := strings.Repeat("x", 101)
	do(t, ctx, "bad title", chromedp.SendKeys(chromedp.CSS("#title"), long), chromedp.Click(chromedp.CSS("#submit")))
	waitFor(t, ctx, "field errors", `!document.getElementById("title-error").hidden && !document.getElementById("video_url-error").hidden`, 10*time.Second)
	if msg := eval[string](t, ctx, `document.getElementById("title-error").textContent`); !strings.Contains(msg, "at most 100") {
		t.Errorf("title message: %q", msg)
	}
	if v := eval[string](t, ctx, `document.getElementById("title").value`); v != long {
		t.Errorf("the typed title was lost: %q", v)
	}
	if eval[string](t, ctx, `document.getElementById("title").getAttribute("aria-invalid")`) != "true" {
		t.Error("the title is not marked invalid")
	}
	screenshots(t, ctx, "publish-errors")

	// Fixed, with the video file: the check passes, then the upload publishes.
	do(t, ctx, "fix", chromedp.SetValue(chromedp.CSS("#title"), "Launch day"),
		chromedp.SendKeys(chromedp.CSS("#caption"), "Shipped from the dashboard #launch"),
		chromedp.SetValue(chromedp.CSS("#opt-tiktok-mode"), "direct"), // published, not sent to the creator's inbox
		// The sandbox channel's app is unaudited, as a new TikTok app is: TikTok takes its
		// direct posts only as SELF_ONLY.
		chromedp.SetValue(chromedp.CSS("#opt-tiktok-privacy_level"), "SELF_ONLY"),
		chromedp.SetUploadFiles(chromedp.CSS("#video"), []string{clip}), chromedp.Click(chromedp.CSS("#check")))
	waitFor(t, ctx, "check result", `!document.getElementById("check-result").hidden`, 20*time.Second)
	if txt := eval[string](t, ctx, `document.getElementById("check-result").textContent`); !strings.Contains(txt, "TikTok") || !strings.Contains(txt, "Bluesky") || !strings.Contains(txt, "Check passed") {
		t.Errorf("check result: %q", txt)
	}
	if !eval[bool](t, ctx, `document.getElementById("form-errors").hidden && document.getElementById("title-error").hidden`) {
		t.Error("old errors still shown after a passing check")
	}
	screenshots(t, ctx, "publish")
	do(t, ctx, "publish", chromedp.Click(chromedp.CSS("#submit")))
	waitFor(t, ctx, "post page", `location.pathname.startsWith("/posts/")`, 20*time.Second)
	if eval[int](t, ctx, `document.getElementById("upload-progress") ? 0 : 1`) != 1 {
		t.Error("still on the publish form")
	}
	// The status follows the server's events until the destination is published.
	waitFor(t, ctx, "published", `!!document.querySelector('[data-post-status="published"]') && !!document.querySelector('[data-status="published"]')`, 30*time.Second)
	waitFor(t, ctx, "both destinations published", `document.querySelectorAll('[data-status="published"]').length === 2`, 30*time.Second)
	if links := eval[string](t, ctx, `Array.from(document.querySelectorAll("#post-status a[href]")).map(a => a.textContent).join("|")`); !strings.Contains(links, "View on Bluesky") {
		t.Errorf("platform links: %q", links)
	}
	screenshots(t, ctx, "post")

	// Analytics: the figures read from the platforms, drawn as SVG on the server.
	do(t, ctx, "analytics", chromedp.Navigate(e.url+"/analytics"), chromedp.WaitVisible(chromedp.CSS(`form[action="/analytics/sync"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/analytics/sync"] button`)))
	waitFor(t, ctx, "figures read", `document.querySelector(".notice") && document.querySelector(".notice").textContent.includes("updated")`, 30*time.Second)
	// The simulated Bluesky audience has commented already (its views are never reported).
	// Chosen and sent from the page's own script: right after the sync's redirect, chromedp's
	// copy of the DOM can still name the page before it, and an action on one of its nodes
	// fails with "No node with given id found" (seen once in CI).
	eval[bool](t, ctx, `(() => { document.getElementById("an-metric").value = "comments";
		document.querySelector('form[action="/analytics"] button').click(); return true })()`)
	// The address changes when the new page starts arriving, before its charts are parsed
	// (a count of none was seen in CI under -race); wait for the whole document.
	waitFor(t, ctx, "comments chart", `location.search.includes("metric=comments") && document.readyState === "complete"`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll("svg .chart-bar").length`); n < 2 {
		t.Errorf("%d bars drawn:\n%s", n, eval[string](t, ctx, `document.querySelector("main").innerText`))
	}
	screenshots(t, ctx, "analytics")

	// AI copy for the project's platforms.
	do(t, ctx, "ai", chromedp.Navigate(e.url+"/ai"), chromedp.WaitVisible(chromedp.CSS("#ai-prompt")),
		chromedp.SendKeys(chromedp.CSS("#ai-prompt"), "Cold brew is easier than you think. Use coarse beans and 16 hours in the fridge."),
		chromedp.Click(chromedp.CSS(`form[action="/ai/adapt"] button`)))
	waitFor(t, ctx, "copy written", `document.querySelectorAll("article.copy").length === 2`, 10*time.Second)
	screenshots(t, ctx, "ai")
	// A clip rendered by ffmpeg: its page reloads itself until the video is there.
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		if _, err := e.st.AddCredits(context.Background(), e.a.AccountID, 5, "test"); err != nil {
			t.Fatal(err)
		}
		do(t, ctx, "clip", chromedp.SendKeys(chromedp.CSS("#v-prompt"), "Cold brew in 16 hours"),
			chromedp.Click(chromedp.CSS(`form[action="/ai/video"] button`)))
		waitFor(t, ctx, "clip rendered", `!!document.querySelector('[data-job-status="succeeded"]') && !!document.querySelector("video.clip")`, 90*time.Second)
		waitFor(t, ctx, "clip playable", `document.querySelector("video.clip").readyState >= 1 && document.querySelector("video.clip").duration > 4`, 20*time.Second)
		screenshots(t, ctx, "ai-video")
	}

	// Replying to a comment: the simulated audiences comment as soon as a post is published.
	do(t, ctx, "inbox", chromedp.Navigate(e.url+"/inbox"), chromedp.WaitVisible(chromedp.CSS(`form[action="/inbox/refresh"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/inbox/refresh"] button`)))
	waitFor(t, ctx, "comments read", `document.querySelectorAll("form.reply textarea").length > 0`, 20*time.Second)
	do(t, ctx, "type a reply", chromedp.SendKeys(chromedp.CSS(`form.reply textarea`), "Thank you!"))
	if got := eval[string](t, ctx, `document.querySelector("form.reply output.counter").textContent`); !strings.HasPrefix(got, "10 / ") {
		t.Errorf("reply counter: %q", got)
	}
	screenshots(t, ctx, "inbox")
	answered := eval[string](t, ctx, `document.querySelector("form.reply").closest("li").id`)
	do(t, ctx, "reply", chromedp.Click(chromedp.CSS(`form.reply button[type=submit]`)))
	waitFor(t, ctx, "replied", `document.querySelector(".notice") && document.querySelector(".notice").textContent.includes("Reply posted")`, 20*time.Second)
	if !eval[bool](t, ctx, `Array.from(document.querySelectorAll(".comment.own .comment-text")).some(p => p.textContent === "Thank you!")`) {
		t.Error("the reply is not listed as this account's own")
	}
	// Those not replied to: neither the comment answered nor the reply.
	do(t, ctx, "not replied to", chromedp.Click(chromedp.CSS(`input[name=unanswered]`)), chromedp.Click(chromedp.CSS(`form[action="/inbox"] button[type=submit]`)))
	waitFor(t, ctx, "filtered inbox", `location.search.includes("unanswered=true") && document.querySelector("input[name=unanswered]").checked`, 10*time.Second)
	if eval[bool](t, ctx, `!!document.getElementById("`+answered+`") || !!document.querySelector(".comment.own")`) {
		t.Error("a comment replied to, or the reply, is listed as not replied to")
	}

	// The post list, filtered as a user would: TikTok posts made between yesterday and
	// tomorrow (whatever the browser's timezone, today is in there).
	yesterday, tomorrow := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02"), time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
	do(t, ctx, "posts", chromedp.Navigate(e.url+"/posts"), chromedp.WaitVisible(chromedp.CSS("table.list")),
		chromedp.SetValue(chromedp.CSS("#filter-platform"), "tiktok"), chromedp.SetValue(chromedp.CSS("#filter-from"), yesterday),
		chromedp.SetValue(chromedp.CSS("#filter-to"), tomorrow), chromedp.Click(chromedp.CSS(`form.post-filters button[type=submit]`)))
	waitFor(t, ctx, "filtered", `location.search.includes("platform=tiktok") && !!document.querySelector("table.list")`, 10*time.Second)
	if txt := eval[string](t, ctx, `document.querySelector("table.list tbody").innerText`); !strings.Contains(txt, "Launch day") || !strings.Contains(txt, "Published") {
		t.Errorf("post list: %q", txt)
	}
	if v := eval[string](t, ctx, `document.getElementById("filter-from").value + " " + document.getElementById("filter-platform").value`); v != yesterday+" tiktok" {
		t.Errorf("the filters shown after filtering: %q", v)
	}
	screenshots(t, ctx, "posts")

	// Scheduling with the picker, then moving the post on the calendar by dragging it.
	day := time.Now().UTC().AddDate(0, 0, 2)
	at := time.Date(day.Year(), day.Month(), day.Day(), 10, 0, 0, 0, time.UTC)
	do(t, ctx, "schedule", chromedp.Navigate(e.url+"/publish"), chromedp.WaitVisible(chromedp.CSS("#title")),
		chromedp.SendKeys(chromedp.CSS("#title"), "Next week's teaser"),
		chromedp.SetUploadFiles(chromedp.CSS("#video"), []string{clip}),
		chromedp.Click(chromedp.CSS(`input[name=when][value=later]`)),
		chromedp.SetValue(chromedp.CSS("#schedule_at"), at.Format("2006-01-02T15:04")),
		chromedp.SetValue(chromedp.CSS("#timezone"), "UTC"),
		chromedp.Click(chromedp.CSS("#submit")))
	waitFor(t, ctx, "scheduled post", `location.pathname.startsWith("/posts/") && !!document.querySelector('[data-post-status="scheduled"]')`, 20*time.Second)
	scheduledID := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/posts/")
	target := at.AddDate(0, 0, 1)
	if target.Weekday() == time.Monday { // the next day is in the next week: move back a day instead
		target = at.AddDate(0, 0, -1)
	}
	do(t, ctx, "calendar", chromedp.Navigate(e.url+"/calendar?view=week&date="+at.Format("2006-01-02")),
		chromedp.WaitVisible(chromedp.CSS(`a[data-post="`+scheduledID+`"]`)))
	screenshots(t, ctx, "calendar-week")
	do(t, ctx, "drag", chromedp.DragAndDrop(chromedp.CSS(`a[data-post="`+scheduledID+`"]`), chromedp.CSS(`li[data-date="`+target.Format("2006-01-02")+`"]`)))
	waitFor(t, ctx, "moved", `!document.getElementById("calendar-status").hidden && document.getElementById("calendar-status").textContent.startsWith("Moved")`, 10*time.Second)
	if !eval[bool](t, ctx, `!!document.querySelector('li[data-date="`+target.Format("2006-01-02")+`"] a[data-post="`+scheduledID+`"]')`) {
		t.Error("the dragged post is not in its new day")
	}
	moved, err := e.st.GetPost(context.Background(), e.a.AccountID, scheduledID)
	if err != nil || moved.ScheduledFor == nil || !moved.ScheduledFor.Equal(time.Date(target.Year(), target.Month(), target.Day(), 10, 0, 0, 0, time.UTC)) {
		t.Errorf("after the drag the post is scheduled for %v (%v), want %s 10:00 UTC", moved.ScheduledFor, err, target.Format("2006-01-02"))
	}
	do(t, ctx, "month", chromedp.Navigate(e.url+"/calendar"), chromedp.WaitVisible(chromedp.CSS("#calendar")))
	screenshots(t, ctx, "calendar")
	// A key made on the keys page is shown once, then revoked there; the API refuses it at once.
	do(t, ctx, "keys", chromedp.Navigate(e.url+"/keys"), chromedp.WaitVisible(chromedp.CSS("#key-name")),
		chromedp.SendKeys(chromedp.CSS("#key-name"), "ci"), chromedp.Click(chromedp.CSS(`form[action="/keys"] button[type=submit]`)))
	waitFor(t, ctx, "key created", `document.getElementById("new-key") && document.getElementById("new-key").value.startsWith("rly_live_")`, 10*time.Second)
	newKey := eval[string](t, ctx, `document.getElementById("new-key").value`)
	screenshots(t, ctx, "keys")
	if code := apiStatus(t, e, newKey); code != http.StatusOK {
		t.Fatalf("the new key: %d", code)
	}
	// The confirmation is the browser's own dialog; the test answers it yes.
	eval[bool](t, ctx, `(window.confirm = () => true, true)`)
	do(t, ctx, "revoke", chromedp.Click(chromedp.CSS(`tr[data-key-name="ci"] form button`)))
	waitFor(t, ctx, "revoked", `document.querySelector(".notice") && document.querySelector(".notice").textContent.includes("revoked")`, 10*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll("tbody tr").length`); n != 1 {
		t.Errorf("%d keys listed after revoking one of two", n)
	}
	if code := apiStatus(t, e, newKey); code != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d", code)
	}
	do(t, ctx, "webhooks", chromedp.Navigate(e.url+"/webhooks"), chromedp.WaitVisible(chromedp.CSS("#hook-url")),
		chromedp.SendKeys(chromedp.CSS("#hook-url"), "http://127.0.0.1:9/reelay"), chromedp.Click(chromedp.CSS(`form[action="/webhooks"] button[type=submit]`)))
	waitFor(t, ctx, "webhook registered", `document.getElementById("new-secret") && document.getElementById("new-secret").value.startsWith("whsec_")`, 10*time.Second)
	screenshots(t, ctx, "webhooks")

	// The theme toggle switches to dark and is remembered.
	do(t, ctx, "dark", chromedp.Click(chromedp.CSS("[data-theme-toggle]")))
	if eval[string](t, ctx, `document.documentElement.getAttribute("data-theme")`) != "dark" ||
		eval[string](t, ctx, `document.querySelector("[data-theme-toggle]").getAttribute("aria-pressed")`) != "true" {
		t.Error("theme toggle")
	}
	do(t, ctx, "reload", chromedp.Navigate(e.url+"/posts"), chromedp.WaitVisible(chromedp.CSS("table.list")))
	if eval[string](t, ctx, `document.documentElement.getAttribute("data-theme")`) != "dark" {
		t.Error("the dark theme is not remembered")
	}
	screenshots(t, ctx, "posts-dark")

	// Signing out ends the session: the pages send the browser to sign in again.
	do(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`form[action="/signout"] button`)))
	waitFor(t, ctx, "signed out", `location.pathname === "/signin" && document.body.innerText.includes("You are signed out")`, 10*time.Second)
	do(t, ctx, "after sign-out", chromedp.Navigate(e.url+"/channels"), chromedp.WaitVisible(chromedp.CSS("#api_key")))
	if p := path(t, ctx); p != "/signin?next=%2Fchannels" {
		t.Errorf("after sign-out: %s", p)
	}
}

// apiStatus is the status of GET /api/v1/projects with key.
func apiStatus(t *testing.T, e *env, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+"/api/v1/projects", nil)
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestBrowserStoryboardVideo: a storyboard of 10 seconds built on the AI page, a scene edited,
// rendered into one video, and its page reloading itself until the video plays for 10 seconds.
func TestBrowserStoryboardVideo(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	e := newEnv(t, store.SQLite)
	ctx := newTab(t)
	if _, err := e.st.AddCredits(context.Background(), e.a.AccountID, 3, "test"); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "sign in", chromedp.Navigate(e.url+"/signin"), chromedp.WaitVisible(chromedp.CSS("#api_key")),
		chromedp.SendKeys(chromedp.CSS("#api_key"), e.a.Key), chromedp.Click(chromedp.CSS("main button[type=submit]")))
	waitFor(t, ctx, "signed in", `location.pathname === "/posts"`, 10*time.Second)

	do(t, ctx, "storyboard", chromedp.Navigate(e.url+"/ai"), chromedp.WaitVisible(chromedp.CSS("#sb-topic")),
		chromedp.SendKeys(chromedp.CSS("#sb-topic"), "Cold brew at home. Coarse beans, sixteen hours in the fridge."),
		chromedp.SetValue(chromedp.CSS("#sb-duration"), "10"),
		chromedp.Click(chromedp.CSS(`form[action="/ai/storyboard"] button`)))
	waitFor(t, ctx, "scenes to edit", `document.querySelectorAll("#render-form textarea[name=scene_prompt]").length === 2`, 10*time.Second)
	// Each scene's fields are labelled, so that they can be found and read out.
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll("#render-form textarea, #render-form input:not([type=hidden])")).filter(el => !el.labels || el.labels.length === 0).length`); n != 0 {
		t.Errorf("%d fields of the render form without a label", n)
	}
	do(t, ctx, "edit a scene", chromedp.SetValue(chromedp.CSS("#sc-2-prompt"), "A tall glass of cold brew over ice, slow push-in"),
		chromedp.ScrollIntoView(chromedp.CSS("#scenes-heading")))
	screenshots(t, ctx, "ai-storyboard")
	// The form is sent once however often it is submitted: a second render would be charged
	// again. (Both submissions are held back here, after the page's own handler has seen them.)
	if got := eval[string](t, ctx, `(function () {
		var form = document.getElementById("render-form"), seen = [];
		function hold(ev) { seen.push(ev.defaultPrevented ? "held" : "sent"); ev.preventDefault(); }
		window.addEventListener("submit", hold);
		form.requestSubmit(); form.requestSubmit();
		window.removeEventListener("submit", hold);
		seen.push(document.getElementById("render-submit").disabled ? "disabled" : "enabled");
		delete form.dataset.sent;
		document.getElementById("render-submit").disabled = false;
		return seen.join(" ");
	})()`); got != "sent held disabled" {
		t.Errorf("submitting the render form twice: %s, want sent held disabled", got)
	}
	do(t, ctx, "render", chromedp.Click(chromedp.CSS("#render-submit")))
	waitFor(t, ctx, "job page", `location.pathname.startsWith("/ai/jobs/")`, 20*time.Second)
	waitFor(t, ctx, "video rendered", `!!document.querySelector('[data-job-status="succeeded"]') && !!document.querySelector("video.clip")`, 2*time.Minute)
	// It plays: muted, as browsers let a page start a video by itself, for about 10 seconds.
	eval[bool](t, ctx, `(function () { var v = document.querySelector("video.clip"); v.muted = true; v.play(); return true; })()`)
	waitFor(t, ctx, "video playing", `(function () { var v = document.querySelector("video.clip"); return !v.paused && v.currentTime > 0.5 && !v.error; })()`, 30*time.Second)
	if d := eval[float64](t, ctx, `document.querySelector("video.clip").duration`); math.Abs(d-10) > 0.3 {
		t.Errorf("the video lasts %.2f s, want 10", d)
	}
	if w, h := eval[int](t, ctx, `document.querySelector("video.clip").videoWidth`), eval[int](t, ctx, `document.querySelector("video.clip").videoHeight`); w != 1080 || h != 1920 {
		t.Errorf("the video is %dx%d, want 1080x1920", w, h)
	}
	// Stopped on the second scene, for the picture.
	eval[bool](t, ctx, `(document.querySelector("video.clip").pause(), document.querySelector("video.clip").currentTime = 7, true)`)
	waitFor(t, ctx, "seeked", `!document.querySelector("video.clip").seeking`, 10*time.Second)
	screenshots(t, ctx, "ai-storyboard-video")
	// Publish this video fills the video into the publish form.
	src := eval[string](t, ctx, `document.querySelector("video.clip").src`)
	req, _ := http.NewRequest(http.MethodPost, e.url+"/api/v1/channels", strings.NewReader(`{"project_id":"`+e.a.ProjectID+`","platform":"tiktok","sandbox":true}`))
	req.Header.Set("X-API-Key", e.a.Key)
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("connect a channel: %v %v", err, res)
	} else {
		res.Body.Close()
	}
	do(t, ctx, "publish it", chromedp.Click(chromedp.CSS(`a.button[href^="/publish"]`)))
	waitFor(t, ctx, "publish form", `location.pathname === "/publish" && !!document.getElementById("video_url")`, 10*time.Second)
	if got := eval[string](t, ctx, `document.getElementById("video_url").value`); got != src {
		t.Errorf("the publish form's video: %q, want the rendered one %q", got, src)
	}
}
