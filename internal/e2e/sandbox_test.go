package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// sandboxPlatforms are the platforms whose built-in simulators keep their state in the
// database, which these tests publish to through the server's own sandbox.
var sandboxPlatforms = []string{"tiktok", "instagram", "threads", "facebook", "mastodon", "bluesky"}

// sandboxChannelSlow connects a sandbox channel whose platform takes processing to process
// each upload.
func (c *client) sandboxChannelSlow(projectID, platform string, processing time.Duration) channel {
	c.t.Helper()
	out := c.must(201, "POST", "/api/v1/channels", map[string]any{
		"project_id": projectID, "platform": platform, "sandbox": true,
		"sandbox_behavior": map[string]any{"processing_ms": processing.Milliseconds()},
	})
	ch := out["channel"].(map[string]any)
	return channel{ID: ch["id"].(string), Platform: platform, Account: ch["external_account_id"].(string)}
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

// checkSandboxReceivedOnce checks that each platform received the video once and published it once,
// on the channel's account, as its _introspect (read through c) says.
func checkSandboxReceivedOnce(t *testing.T, c *client, channels map[string]channel, sum string, size int64) {
	t.Helper()
	for _, p := range sandboxPlatforms {
		in := c.introspect(p)
		account := channels[p].Account
		if len(in.Uploads) != 1 || in.Uploads[0].Account != account || in.Uploads[0].SHA256 != sum || in.Uploads[0].Bytes != size {
			t.Errorf("%s received %+v, want the video once (%d bytes, sha256 %s) for %s", p, in.Uploads, size, sum, account)
		}
		if len(in.Published) != 1 || in.Published[0].Account != account || in.Published[0].SHA256 != sum {
			t.Errorf("%s published %+v, want the video once for %s", p, in.Published, account)
		}
	}
}

// checkPublished checks that every destination of a settled post was published.
func checkPublished(t *testing.T, post map[string]any) {
	t.Helper()
	if post["status"] != "published" {
		t.Errorf("post status %v, want published: %s", post["status"], jsonText(post["publish_results"]))
	}
	for _, r := range post["publish_results"].([]any) {
		d := r.(map[string]any)
		if d["upload_status"] != "published" || d["id"] == nil {
			t.Errorf("%s destination: %s", d["platform"], jsonText(d))
		}
	}
}

// TestSandboxSurvivesKill publishes through the server's own simulators, kills the server with
// SIGKILL while every destination is processing on its platform, and restarts it on the same
// data folder: each destination finishes, and each platform's _introspect shows the video
// received and published once. With the simulators' state in process memory, the restarted
// server's platforms had forgotten every upload (TikTok "no longer knows publish_id", the
// containers and reels gone).
func TestSandboxSurvivesKill(t *testing.T) {
	needBinary(t)
	dataDir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	env := append(envOf(map[string]string{
		"REELAY_ADDR":               addr,
		"REELAY_PUBLIC_URL":         base,
		"REELAY_DATA_DIR":           dataDir,
		"REELAY_ALLOW_PRIVATE_URLS": "true",
		"REELAY_PUBLISH_WAIT":       "0s",
		"REELAY_RETRY_BASE_DELAY":   "100ms",
		"REELAY_RATE_LIMIT_RPS":     "1000",
		"REELAY_RATE_LIMIT_BURST":   "1000",
	}), secretKeyEnv())

	first := startProc(t, "reelay serve #1", env, "serve")
	key := first.waitOutput(apiKeyLine, 30*time.Second)[1]
	first.waitHealthy(base, 30*time.Second)
	c := newClient(t, base, key)
	project := c.projectID()
	channels := map[string]channel{}
	var ids []string
	for _, p := range sandboxPlatforms {
		// Long enough for every destination to be processing at once, short enough for the test.
		channels[p] = c.sandboxChannelSlow(project, p, 8*time.Second)
		ids = append(ids, channels[p].ID)
	}
	video := mediatest.MP4(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920})
	sum, size := fileSHA256(t, video)
	channelIDs, _ := json.Marshal(ids)
	id := c.publishForm(map[string]string{
		"project_id": project, "channel_ids": string(channelIDs), "title": "Sandbox kill",
		"caption": "the sandbox survives a restart #e2e", "tiktok": `{"mode":"direct"}`,
	}, video)

	deadline := time.Now().Add(60 * time.Second)
	for {
		st := c.destinationStatuses(id)
		processing := 0
		for _, p := range sandboxPlatforms {
			if st[p] == "processing" {
				processing++
			}
		}
		if processing == len(sandboxPlatforms) {
			t.Logf("killing the server with every destination processing: %v", st)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the destinations never were all processing: %v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	first.kill()

	second := startProc(t, "reelay serve #2 (after SIGKILL)", env, "serve")
	second.waitHealthy(base, 30*time.Second)
	checkPublished(t, c.waitSettled(id, 120*time.Second))
	checkSandboxReceivedOnce(t, c, channels, sum, size)
}

// TestSandboxSharedByAPIProcesses runs two API processes and a worker on one PostgreSQL
// database behind a load balancer that sends each request to the other process than the last:
// every simulated platform's requests (TikTok's init, then its upload; a container's creation,
// its fetch of the media link, its status reads, its publish) are shared by both. The channels
// are made through the first process, the post through the second: every destination is
// published, and both processes' _introspect show each video received and published once.
func TestSandboxSharedByAPIProcesses(t *testing.T) {
	needBinary(t)
	if os.Getenv(storetest.EnvPostgres) == "" {
		t.Skipf("%s is not set: two API processes share a database on PostgreSQL", storetest.EnvPostgres)
	}
	t.Parallel()
	dbURL := storetest.URL(t, store.Postgres)
	blobURL := s3BlobURL(t)
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	bases := []string{"http://" + addrs[0], "http://" + addrs[1], "http://" + addrs[2]}
	balancer := httptest.NewServer(roundRobin(t, bases[0], bases[1]))
	t.Cleanup(balancer.Close)
	common := map[string]string{
		"REELAY_DATA_DIR":           t.TempDir(),
		"REELAY_DATABASE_URL":       dbURL,
		"REELAY_BLOB_URL":           blobURL,
		"REELAY_PUBLIC_URL":         balancer.URL,
		"REELAY_ALLOW_PRIVATE_URLS": "true",
		"REELAY_PUBLISH_WAIT":       "0s",
		"REELAY_RETRY_BASE_DELAY":   "100ms",
		"REELAY_RATE_LIMIT_RPS":     "1000",
		"REELAY_RATE_LIMIT_BURST":   "1000",
	}
	envWith := func(addr string) []string {
		kv := map[string]string{"REELAY_ADDR": addr}
		for k, v := range common {
			kv[k] = v
		}
		return append(envOf(kv), secretKeyEnv())
	}
	create := newAccount(t, dbURL, common["REELAY_DATA_DIR"])
	procs := []*proc{
		startProc(t, "reelay serve --role api #1", envWith(addrs[0]), "serve", "--role", "api"),
		startProc(t, "reelay serve --role api #2", envWith(addrs[1]), "serve", "--role", "api"),
		startProc(t, "reelay serve --role worker", envWith(addrs[2]), "serve", "--role", "worker"),
	}
	for i, p := range procs {
		p.waitHealthy(bases[i], 60*time.Second)
	}
	api1, api2 := newClient(t, bases[0], create.APIKey), newClient(t, bases[1], create.APIKey)
	channels := map[string]channel{}
	var ids []string
	for _, p := range sandboxPlatforms {
		channels[p] = api1.sandboxChannel(create.ProjectID, p)
		ids = append(ids, channels[p].ID)
	}
	video := mediatest.MP4(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920})
	sum, size := fileSHA256(t, video)
	channelIDs, _ := json.Marshal(ids)
	id := api2.publishForm(map[string]string{
		"project_id": create.ProjectID, "channel_ids": string(channelIDs), "title": "Two API processes",
		"caption": "one sandbox for every process #e2e", "tiktok": `{"mode":"direct"}`,
	}, video)
	checkPublished(t, api1.waitSettled(id, 90*time.Second))
	for i, c := range []*client{api1, api2} {
		t.Run(fmt.Sprintf("introspect at API #%d", i+1), func(t *testing.T) {
			checkSandboxReceivedOnce(t, c, channels, sum, size)
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

// createdAccount is what `reelay accounts create --json` prints.
type createdAccount struct {
	AccountID string `json:"account_id"`
	ProjectID string `json:"project_id"`
	APIKey    string `json:"api_key"`
}

// newAccount makes an account with the administration command against the database.
func newAccount(t *testing.T, dbURL, dataDir string) createdAccount {
	t.Helper()
	cmd := exec.Command(binary, "accounts", "create", "--name", "e2e-sandbox", "--json", "--database-url", dbURL)
	cmd.Env = append(baseEnv(), "REELAY_DATA_DIR="+dataDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reelay accounts create: %v\n%s", err, stderr.String())
	}
	var acct createdAccount
	if err := json.Unmarshal(out, &acct); err != nil || acct.APIKey == "" || acct.ProjectID == "" {
		t.Fatalf("reelay accounts create printed %q: %v", out, err)
	}
	return acct
}
