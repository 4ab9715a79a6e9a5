package httpapi_test

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
	"github.com/reelay/reelay/internal/videogen/videogentest"
)

// waitForAI lets video calls answer their result rather than 202.
func waitForAI(c *config.Config) { c.AIWait = 2 * time.Minute }

func (e *env) grant(tn tenant, credits int64) {
	e.t.Helper()
	if _, err := e.st.AddCredits(context.Background(), tn.AccountID, credits, "test"); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) credits(tn tenant) int64 {
	e.t.Helper()
	a, err := e.st.GetAccount(context.Background(), tn.AccountID)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.AICredits
}

// ledger is the tenant's credit ledger, oldest first.
func (e *env) ledger(tn tenant) []store.LedgerEntry {
	e.t.Helper()
	es, err := e.st.CreditLedger(context.Background(), tn.AccountID, store.LedgerFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Reverse(es)
	return es
}

// fetchVideo downloads a media link of this server and probes it.
func (e *env) fetchVideo(link string) (media.Info, []byte) {
	e.t.Helper()
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, e.cfg.PublicURL+"/api/v1/media/") {
		e.t.Fatalf("videoUrl %q is not a media link of this server (%s)", link, e.cfg.PublicURL)
	}
	r := e.do(req{Method: "GET", Path: u.RequestURI()})
	if r.Code != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", link, r.Code, r.Body)
	}
	info, err := media.Probe(bytes.NewReader(r.Body), int64(len(r.Body)))
	if err != nil {
		e.t.Fatalf("probing %s: %v", link, err)
	}
	return info, r.Body
}

func checkClip(t *testing.T, info media.Info, width, height int, seconds float64) {
	t.Helper()
	if info.Kind != media.KindMP4 || info.VideoCodec != "h264" || info.AudioCodec != "aac" ||
		info.Width != width || info.Height != height || math.Abs(info.Duration.Seconds()-seconds) > 0.15 {
		t.Errorf("video is %s %s/%s %dx%d %.3fs; want mp4 h264/aac %dx%d %.1fs", info.Kind, info.VideoCodec, info.AudioCodec,
			info.Width, info.Height, info.Duration.Seconds(), width, height, seconds)
	}
}

func TestGenerateVideoLocally(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	eachApp(t, func(t *testing.T, e *env) {
		e.grant(e.a, 5)
		r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
			Body: map[string]any{"prompt": "Cold brew in 16 hours: coarse beans, cold water, patience"}})
		if r.Code != http.StatusOK {
			t.Fatalf("generate: %d %s", r.Code, r.Body)
		}
		if r.JSON["aspectRatio"] != "9:16" || !store.ValidID(r.JSON["requestId"].(string)) {
			t.Errorf("answer: %s", r.Body)
		}
		info, _ := e.fetchVideo(r.JSON["videoUrl"].(string))
		checkClip(t, info, 1080, 1920, 5)
		if got := e.credits(e.a); got != 4 {
			t.Errorf("credits after a local clip: %d, want 4", got)
		}
		kinds := []string{}
		for _, le := range e.ledger(e.a) {
			kinds = append(kinds, le.Kind)
		}
		if strings.Join(kinds, ",") != "grant,reserve,settle" {
			t.Errorf("ledger kinds %v, want grant, reserve, settle", kinds)
		}

		// The job reads back with a fresh link; another account cannot see it.
		job := e.do(req{Method: "GET", Path: "/api/v1/ai/jobs/" + r.JSON["requestId"].(string), Key: e.a.Key})
		if job.Code != http.StatusOK || job.JSON["status"] != "succeeded" || job.JSON["kind"] != "generate_video" || job.JSON["videoUrl"] == nil {
			t.Errorf("job: %d %s", job.Code, job.Body)
		}
		if other := e.do(req{Method: "GET", Path: "/api/v1/ai/jobs/" + r.JSON["requestId"].(string), Key: e.b.Key}); other.Code != http.StatusNotFound {
			t.Errorf("another account's job: %d", other.Code)
		}

		// Published from the link, the video is taken from storage: the link's host is
		// unreachable, so a download would fail the request.
		e.defaultChannels(e.a)
		link, _ := url.Parse(r.JSON["videoUrl"].(string))
		link.Host = "reelay.invalid"
		p := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "video_url": link.String(), "title": "Cold brew", "platforms": []string{"youtube"}}})
		if p.Code != http.StatusOK || p.JSON["status"] != "published" {
			t.Errorf("publishing the generated video: %d %s", p.Code, p.Body)
		}
	}, waitForAI)
}

func TestGenerateVideoFromImage(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	e := newAppEnv(t, store.SQLite, waitForAI)
	e.grant(e.a, 3)
	ms := newMediaServer(t, map[string][]byte{"/photo.png": mediatest.PNG(t, 800, 600), "/notes.txt": []byte("not a picture at all")})
	r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
		Body: map[string]any{"prompt": "Sunrise over the roastery", "imageUrl": ms.URL + "/photo.png", "aspectRatio": "16:9"}})
	if r.Code != http.StatusOK {
		t.Fatalf("generate from an image: %d %s", r.Code, r.Body)
	}
	info, _ := e.fetchVideo(r.JSON["videoUrl"].(string))
	checkClip(t, info, 1920, 1080, 5)

	// A URL that serves no picture is refused before anything is charged or kept.
	blobs := e.blobCount()
	r = e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
		Body: map[string]any{"prompt": "p", "imageUrl": ms.URL + "/notes.txt"}})
	if r.Code != http.StatusUnsupportedMediaType || r.field("imageUrl") == "" {
		t.Errorf("text file as imageUrl: %d %s", r.Code, r.Body)
	}
	if e.credits(e.a) != 2 || e.blobCount() != blobs {
		t.Errorf("a refused image left credits %d (want 2) and %d blobs (want %d)", e.credits(e.a), e.blobCount(), blobs)
	}
}

func TestGenerateVideoRefusals(t *testing.T) {
	e := newAppEnv(t, store.SQLite, waitForAI)
	for _, c := range []struct {
		name  string
		body  map[string]any
		code  int
		field string
	}{
		{"no prompt", map[string]any{"prompt": " "}, 400, "prompt"},
		{"bad aspect", map[string]any{"prompt": "p", "aspectRatio": "1:1"}, 400, "aspectRatio"},
		{"bad image url", map[string]any{"prompt": "p", "imageUrl": "ftp://example.com/a.png"}, 400, "imageUrl"},
		{"key with spaces", map[string]any{"prompt": "p", "apiKey": "Key abc"}, 400, "apiKey"},
		{"no credits", map[string]any{"prompt": "p"}, 402, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: c.body})
			if r.Code != c.code || (c.field != "" && r.field(c.field) == "") {
				t.Errorf("%d %s; want %d naming %q", r.Code, r.Body, c.code, c.field)
			}
		})
	}
	r := e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/stitch", Key: e.a.Key, Body: map[string]any{
		"scenes": []map[string]any{{"prompt": "a"}, {"prompt": "", "videoUrl": "not a url"}}}})
	if r.Code != 400 || r.field("scenes[1].prompt") == "" || r.field("scenes[1].videoUrl") == "" {
		t.Errorf("bad scenes: %d %s", r.Code, r.Body)
	}
	if r := e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/stitch", Key: e.a.Key, Body: map[string]any{"scenes": []any{}}}); r.Code != 400 || r.field("scenes") == "" {
		t.Errorf("no scenes: %d %s", r.Code, r.Body)
	}
	if es := e.ledger(e.a); len(es) != 0 {
		t.Errorf("refused requests wrote the ledger: %+v", es)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/ai/jobs/" + e.a.AccountID, Key: e.a.Key}); r.Code != http.StatusNotFound {
		t.Errorf("unknown job: %d", r.Code)
	}
}

func TestAIVideoWithoutFFmpeg(t *testing.T) {
	e := newAppEnv(t, store.SQLite, waitForAI, func(c *config.Config) { c.FFmpeg = "/nonexistent/ffmpeg" })
	e.grant(e.a, 10)
	gen := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: map[string]any{"prompt": "p"}})
	stitch := e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/stitch", Key: e.a.Key,
		Body: map[string]any{"scenes": []map[string]any{{"prompt": "a"}}}})
	for _, r := range []*resp{gen, stitch} {
		msg, _ := r.JSON["error"].(map[string]any)["message"].(string)
		if r.Code != http.StatusServiceUnavailable || !strings.Contains(msg, "ffmpeg") {
			t.Errorf("without ffmpeg: %d %s; want 503 naming ffmpeg", r.Code, r.Body)
		}
	}
	if e.credits(e.a) != 10 || len(e.ledger(e.a)) != 1 {
		t.Errorf("without ffmpeg, credits %d and ledger %v; want nothing charged", e.credits(e.a), e.ledger(e.a))
	}
}

func TestStitchStoryboard(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	eachApp(t, func(t *testing.T, e *env) {
		e.grant(e.a, 10)
		first := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: map[string]any{"prompt": "Scene one"}})
		if first.Code != http.StatusOK {
			t.Fatalf("generate: %d %s", first.Code, first.Body)
		}
		// A landscape clip without sound, at another frame rate, from elsewhere.
		ms := newMediaServer(t, map[string][]byte{
			"/wide.mp4":  mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 640, Height: 360}),
			"/photo.jpg": mediatest.JPEG(t, 64, 64),
		})
		r := e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/stitch", Key: e.a.Key, Body: map[string]any{
			"scenes": []map[string]any{
				{"prompt": "Scene one", "videoUrl": first.JSON["videoUrl"], "title": "Hook"},
				{"prompt": "Scene two: the payoff"},
				{"prompt": "Scene three", "videoUrl": ms.URL + "/wide.mp4"},
			}}})
		if r.Code != http.StatusOK {
			t.Fatalf("stitch: %d %s", r.Code, r.Body)
		}
		info, _ := e.fetchVideo(r.JSON["videoUrl"].(string))
		checkClip(t, info, 1080, 1920, 13)
		if d := r.JSON["duration"].(float64); math.Abs(d-info.Duration.Seconds()) > 0.001 {
			t.Errorf("duration %v, the file lasts %v", d, info.Duration.Seconds())
		}
		// 1 for the first clip, then 1 for the join and 1 for the one generated scene.
		if got := e.credits(e.a); got != 7 {
			t.Errorf("credits %d, want 7", got)
		}

		// A scene whose video is a picture fails the job, and the credits come back.
		r = e.do(req{Method: "POST", Path: "/api/v1/ai/storyboard/stitch", Key: e.a.Key, Body: map[string]any{
			"scenes": []map[string]any{{"prompt": "a"}, {"prompt": "b", "videoUrl": ms.URL + "/photo.jpg"}}}})
		if r.Code != http.StatusUnsupportedMediaType || r.field("scenes[1].videoUrl") == "" {
			t.Errorf("picture as a scene video: %d %s", r.Code, r.Body)
		}
		if got := e.credits(e.a); got != 7 {
			t.Errorf("credits after a failed stitch: %d, want 7 (refunded)", got)
		}
	}, waitForAI)
}

func TestAIJobOutlastsTheWait(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	e := newAppEnv(t, store.SQLite) // AIWait 0: every call answers 202
	e.grant(e.a, 1)
	r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: map[string]any{"prompt": "Later"}})
	if r.Code != http.StatusAccepted || r.JSON["status"] != "running" || r.Header.Get("Location") != "/api/v1/ai/jobs/"+r.JSON["job_id"].(string) {
		t.Fatalf("generate with no wait: %d %s %v", r.Code, r.Body, r.Header)
	}
	path := "/api/v1/ai/jobs/" + r.JSON["job_id"].(string)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		job := e.do(req{Method: "GET", Path: path, Key: e.a.Key})
		if job.JSON["status"] == "succeeded" {
			info, _ := e.fetchVideo(job.JSON["videoUrl"].(string))
			checkClip(t, info, 1080, 1920, 5)
			if job.JSON["requestId"] != r.JSON["job_id"] || job.JSON["aspectRatio"] != "9:16" {
				t.Errorf("job answer: %s", job.Body)
			}
			break
		}
		if job.JSON["status"] != "running" || time.Now().After(deadline) {
			t.Fatalf("job: %d %s", job.Code, job.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestAICreditsUnderConcurrency(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			e := newAppEnv(t, d) // 202 at once: the race is on the reservations
			e.grant(e.a, 3)
			var wg sync.WaitGroup
			codes := make(chan int, 8)
			for range 8 {
				wg.Go(func() {
					codes <- e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: map[string]any{"prompt": "race"}}).Code
				})
			}
			wg.Wait()
			close(codes)
			counts := map[int]int{}
			for c := range codes {
				counts[c]++
			}
			if counts[http.StatusAccepted] != 3 || counts[http.StatusPaymentRequired] != 5 {
				t.Errorf("answers %v; want 3 accepted and 5 refused with 402", counts)
			}
			if e.credits(e.a) != 0 {
				t.Errorf("balance %d, want 0", e.credits(e.a))
			}
		})
	}
}

func TestGenerateVideoHosted(t *testing.T) {
	const userKey = "user-key-abcdef0123"
	model := videogentest.NewServer(t, videogentest.WithKey(userKey))
	e := newAppEnv(t, store.SQLite, waitForAI, func(c *config.Config) {
		c.VideoURL, c.VideoAPIKey = model.TextURL(), "server-key-refused"
	})
	e.grant(e.a, 20)

	// The server's own key is refused by the model: its operator's problem, 502, refunded.
	r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: map[string]any{"prompt": "Latte art"}})
	if r.Code != http.StatusBadGateway || r.errCode() != "upstream_error" {
		t.Errorf("server key refused: %d %s", r.Code, r.Body)
	}
	if e.credits(e.a) != 20 {
		t.Errorf("credits after a refused key: %d, want 20", e.credits(e.a))
	}
	// The request's own key works for its call.
	r = e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
		Body: map[string]any{"prompt": "Latte art", "aspectRatio": "16:9", "apiKey": userKey}})
	if r.Code != http.StatusOK {
		t.Fatalf("hosted generation: %d %s", r.Code, r.Body)
	}
	subs := model.Submits()
	if len(subs) != 2 || r.JSON["requestId"] == nil || r.JSON["requestId"] == "" {
		t.Fatalf("submits %d, answer %s", len(subs), r.Body)
	}
	info, _ := e.fetchVideo(r.JSON["videoUrl"].(string))
	if info.Width != 1920 || info.Height != 1080 {
		t.Errorf("hosted clip is %dx%d, want the 16:9 the model was asked for", info.Width, info.Height)
	}
	if e.credits(e.a) != 15 {
		t.Errorf("credits after a hosted clip: %d, want 15", e.credits(e.a))
	}
	// The key is gone from the job once it ended, and was never stored in plain text.
	var sealed []byte
	if err := e.st.JobsDB().QueryRow(`SELECT provider_key FROM ai_jobs WHERE account_id = $1 AND status = 'succeeded'`, e.a.AccountID).Scan(&sealed); err != nil || sealed != nil {
		t.Errorf("provider key after the job: %q, %v; want NULL", sealed, err)
	}
	var dump strings.Builder
	rows, _ := e.st.JobsDB().Query(`SELECT input, progress, COALESCE(result, ''), COALESCE(error, '') FROM ai_jobs`)
	for rows.Next() {
		var a, b, c, d string
		rows.Scan(&a, &b, &c, &d)
		dump.WriteString(a + b + c + d)
	}
	rows.Close()
	if strings.Contains(dump.String(), userKey) {
		t.Errorf("the request's key is stored in plain text: %s", dump.String())
	}

	// A wrong key of the request's own is the request's fault.
	r = e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
		Body: map[string]any{"prompt": "Latte art", "apiKey": "wrong-key"}})
	if r.Code != http.StatusBadRequest || r.field("apiKey") == "" {
		t.Errorf("wrong request key: %d %s", r.Code, r.Body)
	}
	if e.credits(e.a) != 15 {
		t.Errorf("credits after a wrong key: %d, want 15", e.credits(e.a))
	}
}

func TestGenerateVideoHostedFailure(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  videogentest.Option
		want string // in the error message
	}{
		{"model fails", videogentest.FailModel(500, "GPU on fire"), "GPU on fire"},
		{"model never finishes", videogentest.NeverComplete(), "did not finish in time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := videogentest.NewServer(t, c.opt)
			e := newAppEnv(t, store.SQLite, waitForAI, func(cfg *config.Config) {
				cfg.VideoURL, cfg.VideoAPIKey, cfg.VideoTimeout = model.TextURL(), model.Key, 500*time.Millisecond
			})
			e.grant(e.a, 5)
			r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key, Body: map[string]any{"prompt": "p"}})
			msg, _ := r.JSON["error"].(map[string]any)["message"].(string)
			if r.Code != http.StatusBadGateway || !strings.Contains(msg, c.want) {
				t.Errorf("%d %s; want 502 saying %q", r.Code, r.Body, c.want)
			}
			if e.credits(e.a) != 5 {
				t.Errorf("credits after the failure: %d, want 5", e.credits(e.a))
			}
			es := e.ledger(e.a)
			if last := es[len(es)-1]; last.Kind != store.CreditRefund {
				t.Errorf("last ledger row %+v, want a refund", last)
			}
			var status string
			if err := e.st.JobsDB().QueryRow(`SELECT status FROM ai_jobs`).Scan(&status); err != nil || status != "failed" {
				t.Errorf("job row: %s %v", status, err)
			}
		})
	}
}

// An image at an address the server must not reach is refused like a video_url there.
func TestGenerateVideoImageBlocked(t *testing.T) {
	e := newAppEnv(t, store.SQLite, waitForAI, func(c *config.Config) { c.AllowPrivateURLs = false })
	e.grant(e.a, 5)
	r := e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
		Body: map[string]any{"prompt": "p", "imageUrl": "http://127.0.0.1:9/photo.png"}})
	if r.Code != http.StatusBadRequest || r.field("imageUrl") == "" {
		t.Errorf("private image address: %d %s", r.Code, r.Body)
	}
	if e.credits(e.a) != 5 {
		t.Errorf("credits after a refused image: %d", e.credits(e.a))
	}
}
