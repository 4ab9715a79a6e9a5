package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/platform/sim/simset"
)

// One post to every platform reelay has a simulator for reaches each of them, once, with the
// video byte for byte and each platform's own text.
func TestPublishToEveryPlatform(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		var names []string
		for _, p := range platform.All {
			if _, ok := simset.All[p]; ok {
				names = append(names, p)
			}
		}
		channels, accounts := map[string]string{}, map[string]string{}
		for _, p := range names {
			channels[p], accounts[p] = e.sandboxChannel(e.a, p, map[string]any{"processing_ms": 0})
		}
		// 256 KB: LinkedIn refuses videos under 75 KB.
		mp4 := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920, Size: 256 << 10})
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4})
		body := map[string]any{
			"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "platforms": names,
			"title": "Morning run", "caption": "Five seconds of sunrise #run",
			"tiktok":   map[string]any{"mode": "direct"},
			"bluesky":  map[string]any{"text": "Sunrise, five seconds of it #run"},
			"mastodon": map[string]any{"text": "Sunrise on Mastodon #run"},
			"telegram": map[string]any{"caption": "Sunrise for the channel"},
			"discord":  map[string]any{"content": "Sunrise for the server"},
			"threads":  map[string]any{"text": "Sunrise on Threads #run"},
			"reddit":   map[string]any{"subreddit": "reelay_sandbox", "title": "Five seconds of sunrise"},
		}
		if slices.Contains(names, platform.Pinterest) {
			body["pinterest"] = map[string]any{"board_id": pinterestsim.DefaultBoards(accounts[platform.Pinterest])[0].ID}
		}
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"}, Body: body})
		if r.Code != http.StatusAccepted {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		p := e.waitPost(e.a, r.JSON["post_id"].(string), 60*time.Second, statusIs("published"))
		results := p["publish_results"].([]any)
		if len(results) != len(names) {
			t.Fatalf("%d destinations for %d platforms", len(results), len(names))
		}
		for _, x := range results {
			d := x.(map[string]any)
			if d["published"] != true || d["id"] == nil || d["channel_id"] != channels[d["platform"].(string)] {
				t.Errorf("destination: %v", d)
			}
			if d["url"] == nil && d["platform"] != platform.TikTok {
				t.Errorf("destination without a url: %v", d)
			}
		}
		wantText := map[string]string{
			platform.Bluesky: "Sunrise, five seconds of it #run", platform.Mastodon: "Sunrise on Mastodon #run",
			platform.Telegram: "Sunrise for the channel", platform.Discord: "Sunrise for the server",
			platform.Threads: "Sunrise on Threads #run",
		}
		for _, name := range names {
			uploads, published := e.introspect(e.a, name)
			if len(uploads) != 1 || uploads[0]["sha256"] != sha(mp4) || uploads[0]["account"] != accounts[name] {
				t.Errorf("%s uploads: %v", name, uploads)
			}
			if len(published) != 1 {
				t.Errorf("%s published: %v", name, published)
				continue
			}
			if want, ok := wantText[name]; ok && !strings.Contains(published[0]["text"].(string), want) {
				t.Errorf("%s published text %q, want %q", name, published[0]["text"], want)
			}
		}

		// Two hours later every platform's audience has watched and commented: each platform
		// reports exactly the figures its capabilities list, and null for the others.
		e.advanceSimulators(2 * time.Hour)
		r = e.do(req{Method: "POST", Path: "/api/v1/analytics/sync", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["failed"] != 0.0 {
			t.Fatalf("analytics sync: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/analytics/overview", Key: e.a.Key})
		breakdown := r.JSON["platformBreakdown"].(map[string]any)
		keys := map[string]string{
			platform.MetricViews: "views", platform.MetricLikes: "likes", platform.MetricComments: "comments",
			platform.MetricShares: "shares", platform.MetricImpressions: "impressions", platform.MetricReach: "reach",
			platform.MetricSaves: "saves", platform.MetricWatchTime: "watchTimeSeconds",
		}
		for _, name := range names {
			caps, _ := registry.CapabilitiesOf(name)
			figures := breakdown[name].(map[string]any)
			for metric, key := range keys {
				given := slices.Contains(caps.Analytics, metric)
				v, isNumber := figures[key].(float64)
				switch {
				case given && (!isNumber || v <= 0):
					t.Errorf("%s lists %s but reports %v", name, metric, figures[key])
				case !given && figures[key] != nil:
					t.Errorf("%s does not list %s but reports %v", name, metric, figures[key])
				}
			}
		}

		// Every platform with a comments API has comments, and takes a reply to one.
		r = e.do(req{Method: "GET", Path: "/api/v1/inbox/comments?refresh=true&limit=100", Key: e.a.Key})
		if r.Code != http.StatusOK || r.JSON["sync"].(map[string]any)["failed"] != 0.0 {
			t.Fatalf("comments: %d %s", r.Code, r.Body)
		}
		first := map[string]map[string]any{}
		for _, x := range r.JSON["comments"].([]any) {
			c := x.(map[string]any)
			if _, seen := first[c["platform"].(string)]; !seen && c["parent_id"] == nil {
				first[c["platform"].(string)] = c
			}
		}
		for _, name := range names {
			caps, _ := registry.CapabilitiesOf(name)
			c, ok := first[name]
			if ok != caps.Comments {
				t.Errorf("%s: comments %v, capabilities say %v", name, ok, caps.Comments)
			}
			if !ok || !caps.Replies {
				continue
			}
			r := e.do(req{Method: "POST", Path: "/api/v1/inbox/reply", Key: e.a.Key,
				Body: map[string]any{"commentId": c["id"], "platform": name, "replyText": "Thank you, " + c["author"].(string) + "!"}})
			if r.Code != http.StatusOK || r.JSON["reply"].(map[string]any)["parent_id"] != c["id"] {
				t.Errorf("reply on %s: %d %s", name, r.Code, r.Body)
				continue
			}
			if n := e.replies(e.a, name); n != 1 {
				t.Errorf("%s received %d replies", name, n)
			}
		}
	})
}
