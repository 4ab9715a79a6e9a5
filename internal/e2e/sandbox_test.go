package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
)

// sandboxPlatforms are the platforms these tests publish to through the server's own sandbox:
// all twelve, whose built-in simulators keep their state in the database.
var sandboxPlatforms = []string{"tiktok", "instagram", "threads", "facebook", "telegram", "discord", "linkedin", "pinterest", "reddit", "youtube", "mastodon", "bluesky"}

// sandboxVideoSize is the size of the video these tests publish: above the smallest LinkedIn
// takes (75 KiB), in two of its 4 MiB parts, and below the 5 MiB TikTok takes in one request.
const sandboxVideoSize = 9 << 19

// sandboxOptions is the platform object a publish to a sandbox channel of platform p needs
// ("" for none).
func sandboxOptions(p string, ch channel) string {
	switch p {
	case "tiktok":
		return `{"mode":"direct"}`
	case "pinterest":
		// The first of the boards its simulated account has.
		return `{"board_id":"` + pinterestsim.DefaultBoards(ch.Account)[0].ID + `"}`
	case "reddit":
		return `{"subreddit":"reelay_sandbox"}`
	}
	return ""
}

// postsAtOnce are the sandboxPlatforms that publish in the request that uploads the video:
// their destinations go from uploading to published, never processing.
var postsAtOnce = map[string]bool{"telegram": true, "discord": true}

// sandboxPost is a video published to a sandbox channel of each of sandboxPlatforms.
type sandboxPost struct {
	id       string
	channels map[string]channel
	sum      string // the video's SHA-256
	size     int64
}

// publishToSandbox connects a channel of each of sandboxPlatforms through connect, whose
// platform takes processing to process each upload, and publishes a new video to all of them
// through publish, with title and caption.
func publishToSandbox(t *testing.T, connect, publish *client, project string, processing time.Duration, title, caption string) sandboxPost {
	t.Helper()
	post := sandboxPost{channels: connect.sandboxChannels(project, sandboxPlatforms, processing)}
	var ids []string
	for _, p := range sandboxPlatforms {
		ids = append(ids, post.channels[p].ID)
	}
	video := mediatest.MP4(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920, Size: sandboxVideoSize})
	post.sum, post.size = fileSHA256(t, video)
	channelIDs, _ := json.Marshal(ids)
	fields := map[string]string{"project_id": project, "channel_ids": string(channelIDs), "title": title, "caption": caption}
	for _, p := range sandboxPlatforms {
		if o := sandboxOptions(p, post.channels[p]); o != "" {
			fields[p] = o
		}
	}
	post.id = publish.publishForm(fields, video)
	return post
}

// destinationStatuses reads each destination's upload_status of a post, by platform.
func (c *client) destinationStatuses(id string) map[string]string {
	c.t.Helper()
	code, post, err := c.do("GET", "/api/v1/posts/"+id, nil, "", nil)
	if err != nil || code != 200 {
		c.t.Fatalf("GET /posts/%s: %d %v", id, code, err)
	}
	out := map[string]string{}
	for _, r := range post["publish_results"].([]any) {
		d := r.(map[string]any)
		out[d["platform"].(string)] = d["upload_status"].(string)
	}
	return out
}

// checkSandboxReceivedOnce checks that each platform received the post's video once and
// published it once, on the channel's account, as its _introspect (read through c) says.
func checkSandboxReceivedOnce(t *testing.T, c *client, post sandboxPost) {
	t.Helper()
	sum, size := post.sum, post.size
	for _, p := range sandboxPlatforms {
		in := c.introspect(p)
		account := post.channels[p].Account
		if len(in.Uploads) != 1 || in.Uploads[0].Account != account || in.Uploads[0].SHA256 != sum || in.Uploads[0].Bytes != size {
			t.Errorf("%s received %+v, want the video once (%d bytes, sha256 %s) for %s", p, in.Uploads, size, sum, account)
		}
		if len(in.Published) != 1 || in.Published[0].Account != account || in.Published[0].SHA256 != sum {
			t.Errorf("%s published %+v, want the video once for %s", p, in.Published, account)
		}
	}
}

// TestSandboxSurvivesKill publishes through the server's own simulators, kills the server with
// SIGKILL while every destination is processing on its platform, and restarts it on the same
// data folder: each destination finishes, and each platform's _introspect shows the video
// received and published once (the platforms that post at once, before the kill). With the
// simulators' state in process memory, the restarted server's platforms had forgotten every
// upload (TikTok "no longer knows publish_id", the containers and reels gone).
func TestSandboxSurvivesKill(t *testing.T) {
	needBinary(t)
	srv, c := startServer(t, nil)
	// Long enough for every destination to be processing at once, short enough for the test.
	post := publishToSandbox(t, c, c, c.projectID(), 8*time.Second, "Sandbox kill", "the sandbox survives a restart #e2e")

	deadline := time.Now().Add(60 * time.Second)
	for {
		st := c.destinationStatuses(post.id)
		ready := 0
		for _, p := range sandboxPlatforms {
			if st[p] == "processing" || postsAtOnce[p] && st[p] == "published" {
				ready++
			}
		}
		if ready == len(sandboxPlatforms) {
			t.Logf("killing the server with every destination processing (published where it posts at once): %v", st)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the destinations never were all processing (published where they post at once): %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.proc.kill()

	srv.restart()
	checkPublished(t, c.waitSettled(post.id, 120*time.Second))
	checkSandboxReceivedOnce(t, c, post)
}

// TestSandboxSharedByAPIProcesses runs two API processes and a worker on one PostgreSQL
// database behind a load balancer that sends each request to the other process than the last:
// every simulated platform's requests (TikTok's init, then its upload; a container's creation,
// its fetch of the media link, its status reads, its publish) are shared by both. The channels
// are made through the first process, the post through the second: every destination is
// published, and both processes' _introspect show each video received and published once.
func TestSandboxSharedByAPIProcesses(t *testing.T) {
	needPostgres(t, "two API processes share a database on PostgreSQL")
	t.Parallel()
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	bases := []string{"http://" + addrs[0], "http://" + addrs[1], "http://" + addrs[2]}
	balancer := httptest.NewServer(roundRobin(t, bases[0], bases[1]))
	t.Cleanup(balancer.Close)
	f := newFleet(t, "e2e-sandbox", map[string]string{"REELAY_PUBLIC_URL": balancer.URL})
	procs := []*proc{
		f.serve("reelay serve --role api #1", addrs[0], "api"),
		f.serve("reelay serve --role api #2", addrs[1], "api"),
		f.serve("reelay serve --role worker", addrs[2], "worker"),
	}
	for i, p := range procs {
		p.waitHealthy(bases[i], 60*time.Second)
	}
	api1, api2 := newClient(t, bases[0], f.acct.APIKey), newClient(t, bases[1], f.acct.APIKey)
	post := publishToSandbox(t, api1, api2, f.acct.ProjectID, 0, "Two API processes", "one sandbox for every process #e2e")
	checkPublished(t, api1.waitSettled(post.id, 90*time.Second))
	for i, c := range []*client{api1, api2} {
		t.Run(fmt.Sprintf("introspect at API #%d", i+1), func(t *testing.T) {
			checkSandboxReceivedOnce(t, c, post)
		})
	}
	for i, p := range procs[:2] {
		if n := strings.Count(p.out.String(), "path=/sandbox/"); n == 0 {
			t.Errorf("API #%d served no simulator request: the balancer did not share them", i+1)
		}
	}
}

// roundRobin is a reverse proxy that sends each request to the next of backends in turn.
func roundRobin(t *testing.T, backends ...string) http.Handler {
	var proxies []http.Handler
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		proxies = append(proxies, httputil.NewSingleHostReverseProxy(u))
	}
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[(n.Add(1)-1)%uint64(len(proxies))].ServeHTTP(w, r)
	})
}
