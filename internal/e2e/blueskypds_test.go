package e2e

// The peer test: reelay against the reference Bluesky PDS (@atproto/pds from npm, the server
// bsky.social's PDSes run) and an in-memory PLC directory (@did-plc/server), both installed at
// the versions testdata/peers/bluesky-pds/package-lock.json pins and started on loopback. It is
// the first server in the suite that reelay's authors did not write: it checks the records,
// facets and blobs reelay sends against the PDS's own lexicons and storage.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/media/mediatest"
)

// peersDir holds what the peer tests install and run.
const peersDir = "testdata/peers"

// needPeerTools skips the test when a tool it needs is missing, or fails it when
// REELAY_TEST_REQUIRE_PEERS=1 (CI) says the peers must run.
func needPeerTools(t *testing.T, why string, check func() error) {
	t.Helper()
	if err := check(); err != nil {
		if os.Getenv("REELAY_TEST_REQUIRE_PEERS") == "1" {
			t.Fatalf("peer test: %s: %v (REELAY_TEST_REQUIRE_PEERS=1)", why, err)
		}
		t.Skipf("peer test skipped: %s: %v (set REELAY_TEST_REQUIRE_PEERS=1 to make this a failure)", why, err)
	}
}

var nodeVersion = regexp.MustCompile(`^v(\d+)\.(\d+)`)

// checkNode: the reference PDS 0.4 runs on Node.js 18.7 or newer (its package.json's engines).
func checkNode() error {
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			return err
		}
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return fmt.Errorf("node --version: %w", err)
	}
	m := nodeVersion.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return fmt.Errorf("node --version answered %q", out)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 18 || (major == 18 && minor < 7) {
		return fmt.Errorf("node %s is older than 18.7", strings.TrimSpace(string(out)))
	}
	return nil
}

// blueskyPeer is a running PLC directory and PDS.
type blueskyPeer struct {
	PDS string // the PDS's root, http://127.0.0.1:port
}

// startBlueskyPeer installs the PDS (install.sh; at once when the cache has it) and starts it
// with a PLC directory of its own, in a data folder of the test's. Both end with the test.
func startBlueskyPeer(t *testing.T) *blueskyPeer {
	t.Helper()
	needPeerTools(t, "Node.js 18.7 or newer with npm is needed to run the reference Bluesky PDS (Debian: apt-get install nodejs npm)", checkNode)
	here, err := filepath.Abs(filepath.Join(peersDir, "bluesky-pds"))
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	var installErr bytes.Buffer
	install := exec.Command("bash", filepath.Join(here, "install.sh"))
	install.Stderr = &installErr
	out, err := install.Output()
	needPeerTools(t, "installing the reference Bluesky PDS from npm (install.sh)", func() error {
		if err != nil {
			return fmt.Errorf("%w\n%s", err, installErr.String())
		}
		return nil
	})
	modules := filepath.Join(strings.TrimSpace(string(out)), "node_modules")
	t.Logf("reference PDS installed in %s (%s)", modules, time.Since(started).Round(time.Millisecond))

	data := t.TempDir()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	cmd := exec.Command("node", filepath.Join(here, "launch.js"))
	cmd.Env = append(os.Environ(),
		"NODE_PATH="+modules,
		"PDS_HOSTNAME=localhost", // the PDS's own URL is then http://localhost:PDS_PORT, and handles end in .test
		"PDS_PORT="+port,
		"PDS_DATA_DIRECTORY="+data,
		"PDS_BLOBSTORE_DISK_LOCATION="+filepath.Join(data, "blobs"),
		"PDS_JWT_SECRET="+randomHex(t, 16),
		"PDS_ADMIN_PASSWORD="+randomHex(t, 16),
		"PDS_PLC_ROTATION_KEY_K256_PRIVATE_KEY_HEX="+randomHex(t, 32),
		"PDS_INVITE_REQUIRED=false",
		"PDS_DEV_MODE=true",
		"LOG_ENABLED=false",
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Not StdoutPipe, whose reads must end before Wait: the launcher may end first.
	stdout, stdoutW := io.Pipe()
	cmd.Stdout = stdoutW
	stderr := &apptest.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the PDS: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		stdoutW.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		stdin.Close() // the launcher ends when its stdin closes
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("------ PDS launcher's stderr ------\n%s------", stderr.String())
		}
	})
	// The launcher's first line that is its JSON says it serves; anything else it prints goes
	// with its stderr into the log of a failed test.
	ready := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			var urls struct{ PLC, PDS string }
			if json.Unmarshal(lines.Bytes(), &urls) == nil && urls.PDS != "" {
				close(ready)
				break
			}
			stderr.Write(append(lines.Bytes(), '\n'))
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case <-ready:
	case <-exited:
		t.Fatalf("the PDS launcher ended before it served\n%s", stderr.String())
	case <-time.After(3 * time.Minute): // it takes seconds, unless the machine is very busy
		t.Fatalf("the PDS did not start within 3 minutes\n%s", stderr.String())
	}
	t.Logf("PLC and PDS serving after %s", time.Since(started).Round(time.Millisecond))
	return &blueskyPeer{PDS: "http://127.0.0.1:" + port}
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// xrpc calls the PDS: a POST with a JSON body when in is not nil, else a GET with query. It
// answers the JSON body of a 200, and fails the test on anything else.
func (p *blueskyPeer) xrpc(t *testing.T, nsid, token string, query url.Values, in any) map[string]any {
	t.Helper()
	raw := p.raw(t, nsid, token, query, in)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v: %s", nsid, err, raw)
	}
	return out
}

// raw is xrpc answering the body as it is (a blob's bytes).
func (p *blueskyPeer) raw(t *testing.T, nsid, token string, query url.Values, in any) []byte {
	t.Helper()
	method, body := http.MethodGet, io.Reader(nil)
	if in != nil {
		b, _ := json.Marshal(in)
		method, body = http.MethodPost, bytes.NewReader(b)
	}
	u := p.PDS + "/xrpc/" + nsid
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, _ := http.NewRequest(method, u, body)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", nsid, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d: %s", nsid, resp.StatusCode, raw)
	}
	return raw
}

// pdsRecord is an app.bsky.feed.post record as listRecords answers it.
type pdsRecord struct {
	URI   string `json:"uri"`
	Value struct {
		Type   string `json:"$type"`
		Text   string `json:"text"`
		Facets []struct {
			Index struct {
				ByteStart int `json:"byteStart"`
				ByteEnd   int `json:"byteEnd"`
			} `json:"index"`
			Features []struct {
				Type string `json:"$type"`
				Tag  string `json:"tag"`
				URI  string `json:"uri"`
			} `json:"features"`
		} `json:"facets"`
		Embed struct {
			Type  string `json:"$type"`
			Video struct {
				Ref struct {
					Link string `json:"$link"`
				} `json:"ref"`
				MimeType string `json:"mimeType"`
				Size     int64  `json:"size"`
			} `json:"video"`
			AspectRatio struct{ Width, Height int } `json:"aspectRatio"`
		} `json:"embed"`
	} `json:"value"`
}

// posts lists the account's posts on the PDS.
func (p *blueskyPeer) posts(t *testing.T, did string) []pdsRecord {
	t.Helper()
	raw := p.raw(t, "com.atproto.repo.listRecords", "", url.Values{"repo": {did}, "collection": {"app.bsky.feed.post"}, "limit": {"100"}}, nil)
	var out struct{ Records []pdsRecord }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("listRecords: %v: %s", err, raw)
	}
	return out.Records
}

// crashProxy stands between reelay and the PDS. Armed, it lets the next createRecord reach
// the PDS and, once the PDS has answered that the record exists, calls onCreated (which kills
// reelay) instead of passing the answer on: reelay dies between creating the post and storing
// that it did.
type crashProxy struct {
	*httptest.Server
	armed     atomic.Bool
	onCreated func()
	mu        sync.Mutex
	creates   []int // the status of every createRecord, in order
	killed    chan struct{}
}

func newCrashProxy(t *testing.T, target string) *crashProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &crashProxy{killed: make(chan struct{})}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/xrpc/com.atproto.repo.createRecord" {
			rp.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		p.mu.Lock()
		p.creates = append(p.creates, rec.Code)
		p.mu.Unlock()
		if rec.Code == http.StatusOK && p.armed.CompareAndSwap(true, false) {
			p.onCreated()
			close(p.killed)
			return // the one who asked is gone
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *crashProxy) createStatuses() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int(nil), p.creates...)
}

// TestBlueskyPDSPeer connects a Bluesky channel on the reference PDS through reelay's API,
// publishes a video with a hashtag and a link, and reads the post back from the PDS: one
// record, its video embed with the aspect ratio, its facets, and the very bytes. Then it
// publishes again and kills reelay (SIGKILL) between the PDS creating the record and reelay
// storing that: the restarted server finds the record, and the PDS holds one post for it.
//
// The PDS has neither AppView nor video service, as a self-hosted one may: reelay's video
// service setting names the PDS itself, which answers "No service configured" to the video
// methods, so the video goes to uploadBlob (issue 31, item 4).
func TestBlueskyPDSPeer(t *testing.T) {
	needBinary(t)
	t.Parallel()
	peer := startBlueskyPeer(t)

	// An account, and an app password for reelay, as a user makes them.
	handle, email := "reelay.test", "peer@reelay.example"
	acct := peer.xrpc(t, "com.atproto.server.createAccount", "", nil, map[string]string{
		"handle": handle, "email": email, "password": randomHex(t, 12)})
	did, access := acct["did"].(string), acct["accessJwt"].(string)
	appPassword := peer.xrpc(t, "com.atproto.server.createAppPassword", access, nil, map[string]string{"name": "reelay"})["password"].(string)

	proxy := newCrashProxy(t, peer.PDS)
	srv, c := startServer(t, map[string]string{
		"REELAY_BLUESKY_VIDEO_SERVICE": proxy.URL,
		// The PDS is on this machine: reachable as the operator's own network is, by
		// REELAY_ALLOW_HOSTS, not by the tests-only REELAY_ALLOW_PRIVATE_URLS.
		"REELAY_ALLOW_PRIVATE_URLS": "false",
		"REELAY_ALLOW_HOSTS":        "127.0.0.1/32",
	})
	proxy.onCreated = srv.proc.kill
	project := c.projectID()

	// POST /channels names the account from its session: the PDS has no AppView to ask.
	ch := c.must(http.StatusCreated, "POST", "/api/v1/channels", map[string]any{
		"project_id": project, "platform": "bluesky",
		"credentials": map[string]string{"handle": handle, "app_password": appPassword, "pds_url": proxy.URL},
	})["channel"].(map[string]any)
	if ch["username"] != handle {
		t.Errorf("channel: %s", jsonText(ch))
	}
	channelIDs := jsonText([]string{ch["id"].(string)})

	// The channel's health check, asked of the PDS: signed in, and nothing failed (the PDS has
	// no video service to ask about the upload allowance).
	check := c.must(http.StatusOK, "POST", "/api/v1/channels/"+ch["id"].(string)+"/check", nil)
	if check["ok"] != true {
		t.Errorf("check against the PDS: %s", jsonText(check))
	}
	for _, x := range check["checks"].([]any) {
		if l := x.(map[string]any); l["name"] == "token" && l["status"] != "ok" || l["status"] == "failed" {
			t.Errorf("check line against the PDS: %s", jsonText(l))
		}
	}

	// Under the reference PDS's 5 MiB blob limit.
	video := mediatest.MP4(t, mediatest.Options{Duration: 3 * time.Second, Width: 720, Height: 1280})
	want, err := os.ReadFile(video)
	if err != nil {
		t.Fatal(err)
	}
	const link = "https://example.com/reelay?peer=1"
	publish := func(caption string) string {
		return c.publishForm(map[string]string{"project_id": project, "channel_ids": channelIDs, "title": "Peer test", "caption": caption}, video)
	}

	// 1. A publish, read back from the PDS.
	caption := "Published on the reference PDS #reelay, see " + link
	post := c.waitSettled(publish(caption), 90*time.Second)
	checkPublished(t, post)
	records := peer.posts(t, did)
	if len(records) != 1 {
		t.Fatalf("the PDS holds %d posts, want 1: %s", len(records), jsonText(records))
	}
	rec := records[0]
	dest := post["publish_results"].([]any)[0].(map[string]any)
	if dest["id"] != rec.URI {
		t.Errorf("the destination's id %v, the record's URI %s", dest["id"], rec.URI)
	}
	v := rec.Value
	if v.Type != "app.bsky.feed.post" || v.Text != caption || v.Embed.Type != "app.bsky.embed.video" ||
		v.Embed.Video.MimeType != "video/mp4" || v.Embed.Video.Size != int64(len(want)) ||
		v.Embed.AspectRatio.Width != 720 || v.Embed.AspectRatio.Height != 1280 {
		t.Errorf("record: %s", jsonText(rec))
	}
	var facets []string
	for _, f := range v.Facets {
		span := v.Text[f.Index.ByteStart:f.Index.ByteEnd]
		for _, ft := range f.Features {
			facets = append(facets, ft.Type+" "+span+" "+ft.Tag+ft.URI)
		}
	}
	if w := []string{"app.bsky.richtext.facet#tag #reelay reelay", "app.bsky.richtext.facet#link " + link + " " + link}; jsonText(facets) != jsonText(w) {
		t.Errorf("facets %q, want %q", facets, w)
	}
	got := peer.raw(t, "com.atproto.sync.getBlob", "", url.Values{"did": {did}, "cid": {v.Embed.Video.Ref.Link}}, nil)
	if !bytes.Equal(got, want) {
		t.Errorf("the PDS's blob is %d bytes and not the video's %d", len(got), len(want))
	}

	// 2. reelay dies between createRecord and storing its answer.
	proxy.armed.Store(true)
	caption2 := "Published through a crash #reelay " + link
	id := publish(caption2)
	select {
	case <-proxy.killed:
	case <-time.After(90 * time.Second):
		t.Fatalf("post %s: no createRecord reached the PDS within 90s", id)
	}
	srv.restart()
	post = c.waitSettled(id, 90*time.Second)
	checkPublished(t, post)
	records = peer.posts(t, did)
	var crashed []pdsRecord
	for _, r := range records {
		if r.Value.Text == caption2 {
			crashed = append(crashed, r)
		}
	}
	if len(records) != 2 || len(crashed) != 1 {
		t.Fatalf("the PDS holds %d posts, %d of them the crashed publish's; want 2 and 1: %s", len(records), len(crashed), jsonText(records))
	}
	if d := post["publish_results"].([]any)[0].(map[string]any); d["id"] != crashed[0].URI {
		t.Errorf("after the restart the destination's id is %v, the record's URI %s", d["id"], crashed[0].URI)
	}
	// The restart created the record again under its key, which the PDS refused (a record is
	// there), and found it: 200 (first publish), 200 (the one reelay died on), then a refusal.
	s := proxy.createStatuses()
	if len(s) < 3 || s[0] != 200 || s[1] != 200 || s[2] == 200 {
		t.Errorf("createRecord statuses %v", s)
	}
	t.Logf("createRecord answered %v; the PDS holds %d posts", s, len(records))
}
