package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/media/s3test"
)

// binary is the reelay executable TestMain builds; empty under -short.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "reelay-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	binary, err = build(dir)
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "e2e: build reelay:", err)
		os.Exit(1)
	}
	code := m.Run()
	s3test.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles ./cmd/reelay of this module into dir.
func build(dir string) (string, error) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		gocmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(gocmd, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module")
	}
	bin := filepath.Join(dir, "reelay")
	cmd := exec.Command(gocmd, "build", "-o", bin, "./cmd/reelay")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return bin, nil
}

// needBinary skips the test under -short.
func needBinary(t *testing.T) {
	t.Helper()
	if testing.Short() || binary == "" {
		t.Skip("end-to-end test: runs the reelay binary (skipped with -short)")
	}
}

// testSecretKey is the REELAY_SECRET_KEY of every process a test starts.
var testSecretKey = bytes.Repeat([]byte{0x5e}, 32)

func secretKeyEnv() string {
	return "REELAY_SECRET_KEY=" + base64.StdEncoding.EncodeToString(testSecretKey)
}

// proc is one reelay process.
type proc struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	out    *apptest.SyncBuffer
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// baseEnv is the test's environment without any REELAY_ variable, so that a developer's
// settings do not leak into the processes.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REELAY_") {
			env = append(env, kv)
		}
	}
	return env
}

// startProc runs the reelay binary with args and the REELAY_ variables in env. The process is
// killed at cleanup, and its output is written to the test log when the test failed.
func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(baseEnv(), env...)
	p := &proc{t: t, name: name, cmd: cmd, out: &apptest.SyncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("------ output of %s (pid %d) ------\n%s------ end of %s ------", name, cmd.Process.Pid, p.out.String(), name)
		}
	})
	return p
}

// running reports whether the process is still alive.
func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill ends the process with SIGKILL (a crash: no deferred function, no shutdown) and waits
// for it.
func (p *proc) kill() {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.t.Errorf("%s (pid %d) still running 10s after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// waitOutput waits until the process's output matches re and returns the submatches.
func (p *proc) waitOutput(re *regexp.Regexp, timeout time.Duration) []string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			return m
		}
		if !p.running() {
			p.t.Fatalf("%s exited (%v) before printing %q", p.name, p.err, re)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not print %q within %s", p.name, re, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitHealthy waits until GET base/healthz answers 200.
func (p *proc) waitHealthy(base string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if !p.running() {
			p.t.Fatalf("%s exited (%v) before it served %s", p.name, p.err, base)
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not serve %s/healthz within %s (last error %v)", p.name, base, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// httpGet answers the body of a GET that must succeed.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v: %s", url, resp.StatusCode, err, body)
	}
	return string(body)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

var apiKeyLine = regexp.MustCompile(`API key \(shown once, keep it\): (rly_live_\S+)`)

// server is `reelay serve` on its embedded defaults (SQLite, media on disk) in a data folder of
// its own, which a test kills and starts again on the same folder.
type server struct {
	t    *testing.T
	env  []string
	base string
	proc *proc // the process running, or killed last
}

// startServer starts a server's first process with the tests' settings and settings and waits
// until it serves; it answers a client with the API key the process printed at first start.
func startServer(t *testing.T, settings map[string]string) (*server, *client) {
	t.Helper()
	addr := freeAddr(t)
	s := &server{t: t, base: "http://" + addr}
	s.env = testEnv(map[string]string{"REELAY_ADDR": addr, "REELAY_DATA_DIR": t.TempDir()}, settings)
	s.proc = startProc(t, "reelay serve #1", s.env, "serve")
	key := s.proc.waitOutput(apiKeyLine, 30*time.Second)[1]
	s.proc.waitHealthy(s.base, 30*time.Second)
	return s, newClient(t, s.base, key)
}

// restart starts the server again, on the same data folder, once its process was killed, and
// waits until it serves.
func (s *server) restart() {
	s.t.Helper()
	s.proc = startProc(s.t, "reelay serve #2 (after SIGKILL)", s.env, "serve")
	s.proc.waitHealthy(s.base, 30*time.Second)
}

// client calls a reelay API with one key.
type client struct {
	t    *testing.T
	base string
	key  string
	http *http.Client
}

func newClient(t *testing.T, base, key string) *client {
	return &client{t: t, base: base, key: key, http: &http.Client{Timeout: 2 * time.Minute}}
}

// do sends a request (body: nil, an io.Reader with contentType, or a value sent as JSON) and
// decodes a JSON answer. A transport error is returned, not fatal: servers get killed here.
func (c *client) do(method, path string, body any, contentType string, header map[string]string) (int, map[string]any, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r, contentType = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var out map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return resp.StatusCode, map[string]any{"_raw": string(raw)}, nil
		}
	}
	return resp.StatusCode, out, nil
}

// must is do for requests that must succeed with want.
func (c *client) must(want int, method, path string, body any) map[string]any {
	c.t.Helper()
	code, out, err := c.do(method, path, body, "", nil)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if code != want {
		c.t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, out)
	}
	return out
}

// projectID returns the id of the key's only project.
func (c *client) projectID() string {
	c.t.Helper()
	out := c.must(http.StatusOK, "GET", "/api/v1/projects", nil)
	projects, _ := out["projects"].([]any)
	if len(projects) != 1 {
		c.t.Fatalf("want one project: %v", out)
	}
	return projects[0].(map[string]any)["id"].(string)
}

// channel is a sandbox channel.
type channel struct {
	ID, Platform, Account string
}

// sandboxChannels connects a sandbox channel of each of platforms, whose platform takes
// processing to process each upload (0: at once).
func (c *client) sandboxChannels(projectID string, platforms []string, processing time.Duration) map[string]channel {
	c.t.Helper()
	channels := map[string]channel{}
	for _, p := range platforms {
		behavior := map[string]any{"processing_ms": processing.Milliseconds()}
		if p == "tiktok" {
			// The tests publish direct with reelay's default privacy, PUBLIC_TO_EVERYONE, which
			// TikTok refuses from the unaudited app a sandbox channel has by default.
			behavior["app_access"] = "audited"
		}
		out := c.must(http.StatusCreated, "POST", "/api/v1/channels", map[string]any{
			"project_id": projectID, "platform": p, "sandbox": true, "sandbox_behavior": behavior,
		})
		ch := out["channel"].(map[string]any)
		channels[p] = channel{ID: ch["id"].(string), Platform: p, Account: ch["external_account_id"].(string)}
	}
	return channels
}

// publishForm sends POST /api/v1/publish as a multipart form streaming the video file, with
// Prefer: wait=0, and returns the post id.
func (c *client) publishForm(fields map[string]string, videoPath string) string {
	c.t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		err := func() error {
			for k, v := range fields {
				if err := mw.WriteField(k, v); err != nil {
					return err
				}
			}
			fw, err := mw.CreateFormFile("video", filepath.Base(videoPath))
			if err != nil {
				return err
			}
			f, err := os.Open(videoPath)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(fw, f); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
	}()
	code, out, err := c.do("POST", "/api/v1/publish", pr, mw.FormDataContentType(), map[string]string{"Prefer": "wait=0"})
	pr.CloseWithError(errors.New("request done"))
	if err != nil {
		c.t.Fatalf("publish: %v", err)
	}
	if code != http.StatusAccepted { // Prefer: wait=0
		c.t.Fatalf("publish: status %d: %v", code, out)
	}
	id, _ := out["post_id"].(string)
	if id == "" {
		c.t.Fatalf("publish answered no post_id: %v", out)
	}
	return id
}

// settledStatuses are the final destination statuses.
var settledStatuses = map[string]bool{"published": true, "sent_to_inbox": true, "failed": true, "canceled": true}

// postSettled reports whether every destination of a post (GET /posts/{id}) is final.
func postSettled(post map[string]any) bool {
	results, _ := post["publish_results"].([]any)
	if len(results) == 0 {
		return false
	}
	for _, r := range results {
		if !settledStatuses[r.(map[string]any)["upload_status"].(string)] {
			return false
		}
	}
	return true
}

// waitSettled polls GET /posts/{id} until every destination is final. Transport errors (a
// server restarting) are retried until the deadline.
func (c *client) waitSettled(id string, timeout time.Duration) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	var last map[string]any
	var lastErr error
	for time.Now().Before(deadline) {
		code, out, err := c.do("GET", "/api/v1/posts/"+id, nil, "", nil)
		switch {
		case err != nil:
			lastErr = err
		case code != http.StatusOK:
			c.t.Fatalf("GET /posts/%s: status %d: %v", id, code, out)
		default:
			last = out
			if postSettled(out) {
				return out
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("post %s not settled within %s; last answer %s (last error %v)", id, timeout, jsonText(last), lastErr)
	return nil
}

// checkPublished checks that a settled post and every destination of it were published.
func checkPublished(t *testing.T, post map[string]any) {
	t.Helper()
	if post["status"] != "published" {
		t.Errorf("post %v: status %v, want published: %s", post["id"], post["status"], jsonText(post["publish_results"]))
	}
	for _, r := range post["publish_results"].([]any) {
		d := r.(map[string]any)
		if d["upload_status"] != "published" || d["id"] == nil {
			t.Errorf("post %v, %s destination: %s", post["id"], d["platform"], jsonText(d))
		}
	}
}

// introspection is what /sandbox/{platform}/_introspect and sim.Recorder.Snapshot hold.
type introspection struct {
	Uploads []struct {
		Account string `json:"account"`
		Bytes   int64  `json:"bytes"`
		SHA256  string `json:"sha256"`
	} `json:"uploads"`
	Published []struct {
		Account string `json:"account"`
		ID      string `json:"id"`
		URL     string `json:"url"`
		SHA256  string `json:"sha256"`
		Text    string `json:"text"`
	} `json:"published"`
}

// introspect reads what the API's built-in simulator of platform received from the key's
// channels.
func (c *client) introspect(platform string) introspection {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/sandbox/"+platform+"/_introspect", nil)
	req.Header.Set("X-API-Key", c.key)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("introspect %s: %v", platform, err)
	}
	defer resp.Body.Close()
	var in introspection
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("introspect %s: status %d: %s", platform, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
		c.t.Fatalf("introspect %s: %v", platform, err)
	}
	return in
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// fileSHA256 returns the hex SHA-256 and size of a file.
func fileSHA256(t *testing.T, path string) (string, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// testEnv is the environment of a reelay process the tests start: the given REELAY_ settings
// (later maps win) over those every test shares, and the secret key of every process.
func testEnv(settings ...map[string]string) []string {
	kv := map[string]string{
		"REELAY_ALLOW_PRIVATE_URLS": "true",
		"REELAY_PUBLISH_WAIT":       "0s",
		"REELAY_RETRY_BASE_DELAY":   "100ms",
		"REELAY_RATE_LIMIT_RPS":     "1000",
		"REELAY_RATE_LIMIT_BURST":   "1000",
	}
	for _, m := range settings {
		maps.Copy(kv, m)
	}
	return append(envOf(kv), secretKeyEnv())
}

// env joins REELAY_ settings.
func envOf(kv map[string]string) []string {
	out := make([]string, 0, len(kv))
	for k, v := range kv {
		out = append(out, k+"="+v)
	}
	return out
}
