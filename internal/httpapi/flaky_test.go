package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
)

// flakyPosts and flakyPostsPerChannel: twenty posts per platform, five to a channel, so that
// no simulator's per-account limit is reached (TikTok allows 6 inits a minute per creator;
// YouTube's upload bucket holds 100 a day).
const (
	flakyPosts           = 20
	flakyPostsPerChannel = 5
)

// TestPublishOutlastsFlakyPlatforms publishes twenty posts to each platform's sandbox channels
// whose simulator fails half of all calls (fail_rate 0.5, the platform's own 5xx answer, before
// anything takes effect), through the real worker with the default
// REELAY_RETRY_ATTEMPTS and a 100 ms base delay: every post is published, and each simulator
// received each video once and published it once.
//
// Before the providers repeated single calls in place (provider.Repeat), a step lost a whole
// attempt whenever any of its calls failed, and 10 to 20 posts of 20 published per platform;
// docs/BENCHMARKS.md, "Publishing through flaky platforms", has the figures before and after,
// three runs each with `go test -count=1 -v -run TestPublishOutlastsFlakyPlatforms`.
//
// Sandbox channels are made without a call to the simulator, so the flaky behaviour applies to
// publishing only, not to connecting the channels.
func TestPublishOutlastsFlakyPlatforms(t *testing.T) {
	// A video of its own for each post (each a few milliseconds longer than the last), so that
	// what the simulators received tells the posts apart. 256 KB: LinkedIn refuses videos under
	// 75 KB.
	files, sums := map[string][]byte{}, make([]string, flakyPosts)
	for i := range flakyPosts {
		mp4 := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5*time.Second + time.Duration(i)*40*time.Millisecond,
			Width: 1080, Height: 1920, Size: 256 << 10})
		files[fmt.Sprintf("/clip%d.mp4", i)], sums[i] = mp4, sha(mp4)
	}
	eachApp(t, func(t *testing.T, e *env) {
		ms := newMediaServer(t, files)
		for _, name := range platform.All {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := *e // the subtest's own t
				e.t = t
				e.publishThroughFlaky(name, ms.URL, sums)
			})
		}
	}, func(c *config.Config) {
		c.RetryAttempts = config.DefaultRetryAttempts
		c.RetryBaseDelay = 100 * time.Millisecond
	})
}

// publishThroughFlaky publishes flakyPosts posts to flaky sandbox channels of platform name,
// post i with the video at {media}/clip{i}.mp4 whose SHA-256 is sums[i], waits for all of
// them to settle, and checks what the simulator received.
func (e *env) publishThroughFlaky(name, media string, sums []string) {
	t := e.t
	behavior := map[string]any{"processing_ms": 100, "fail": "flaky", "fail_rate": 0.5}
	var channels, accounts []string
	for range flakyPosts / flakyPostsPerChannel {
		id, account := e.sandboxChannel(e.a, name, behavior)
		channels, accounts = append(channels, id), append(accounts, account)
	}
	var posts []string
	for i := range flakyPosts {
		k := i / flakyPostsPerChannel
		title := fmt.Sprintf("Flaky %s #%d", name, i)
		body := map[string]any{
			"project_id": e.a.ProjectID, "video_url": fmt.Sprintf("%s/clip%d.mp4", media, i), "channel_ids": []string{channels[k]},
			"title": title, "caption": title + " #reelay",
		}
		switch name {
		case platform.TikTok:
			body[name] = map[string]any{"mode": "direct"}
		case platform.Pinterest:
			body[name] = map[string]any{"board_id": pinterestsim.DefaultBoards(accounts[k])[0].ID}
		case platform.Reddit:
			body[name] = map[string]any{"subreddit": "reelay_sandbox", "title": title}
		}
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"}, Body: body})
		if r.Code != http.StatusAccepted {
			t.Fatalf("publish %d: %d %s", i, r.Code, r.Body)
		}
		posts = append(posts, r.JSON["post_id"].(string))
	}

	// Wait for every post to settle, reading them a page at a time by platform.
	settled := map[string]map[string]any{}
	deadline := time.Now().Add(4 * time.Minute)
	for len(settled) < len(posts) {
		time.Sleep(250 * time.Millisecond)
		r := e.do(req{Method: "GET", Path: "/api/v1/posts?limit=100&platform=" + name, Key: e.a.Key})
		if r.Code != http.StatusOK {
			t.Fatalf("list posts: %d %s", r.Code, r.Body)
		}
		var open []any
		for _, x := range r.JSON["posts"].([]any) {
			p := x.(map[string]any)
			if !slices.Contains(posts, p["id"].(string)) {
				continue
			}
			if s := p["status"]; s != "processing" && s != "scheduled" {
				settled[p["id"].(string)] = p
			} else {
				open = append(open, p["publish_results"])
			}
		}
		if len(settled) < len(posts) && time.Now().After(deadline) {
			t.Fatalf("%d of %d posts settled in 4 minutes; the others: %v", len(settled), len(posts), open)
		}
	}
	published := 0
	for _, id := range posts {
		p := settled[id]
		if p["status"] == "published" {
			published++
			continue
		}
		d := p["publish_results"].([]any)[0].(map[string]any)
		t.Errorf("post %s %s: %v (%v)", p["title"], p["status"], d["error"], d["error_category"])
	}
	t.Logf("%s: %d of %d published", name, published, len(posts))

	// Each post's video reached the simulator once, from its channel's account, and was
	// published once: no retry sent it twice.
	uploads, items := e.introspect(e.a, name)
	for i, sum := range sums {
		account := accounts[i/flakyPostsPerChannel]
		count := func(recs []map[string]any) (n int) {
			for _, r := range recs {
				if r["sha256"] == sum && r["account"] == account {
					n++
				}
			}
			return n
		}
		up, pub := count(uploads), count(items)
		if settled[posts[i]]["status"] == "published" && (up != 1 || pub != 1) {
			t.Errorf("post %d: %d uploads and %d published items of its video", i, up, pub)
		} else if up > 1 || pub > 1 {
			t.Errorf("post %d (failed): %d uploads and %d published items of its video", i, up, pub)
		}
	}
	if len(uploads) > len(posts) || len(items) != published {
		t.Errorf("%d uploads and %d published items for %d posts, %d published", len(uploads), len(items), len(posts), published)
	}
}
