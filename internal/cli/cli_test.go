package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// run executes the reelay command line in-process.
func run(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot(&out, &errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), err
}

var keyPattern = regexp.MustCompile(`rly_live_[0-9A-Za-z]{43}`)

// startServer runs serve on dataDir until the test ends and returns its URL and its stderr;
// tune changes the configuration first.
func startServer(t *testing.T, dataDir string, tune ...func(*config.Config)) (string, *apptest.SyncBuffer) {
	t.Helper()
	url, stderr, stop, done := launchServer(t, dataDir, tune...)
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return url, stderr
}

// launchServer runs serve on dataDir and returns its URL, its stderr, the function that stops
// it as a signal would (serve's context ends), and where serve's result arrives; the caller
// stops it.
func launchServer(t *testing.T, dataDir string, tune ...func(*config.Config)) (string, *apptest.SyncBuffer, context.CancelFunc, <-chan error) {
	t.Helper()
	cfg := config.Config{Addr: "127.0.0.1:0", DataDir: dataDir, Sandbox: true, PublishWait: time.Second,
		RetryAttempts: 3, RetryBaseDelay: time.Second, RateLimitRPS: 100, RateLimitBurst: 100,
		Role: config.RoleAll, LogLevel: "info", LogFormat: "text"}
	for _, f := range tune {
		f(&cfg)
	}
	if err := cfg.Finish(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &apptest.SyncBuffer{}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(ctx, &cfg, stderr, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve ended before listening: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve did not start:\n%s", stderr.String())
	}
	return "http://" + addr, stderr, cancel, done
}

func getJSON(t *testing.T, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func TestServeFirstStart(t *testing.T) {
	dataDir := t.TempDir()
	url, stderr := startServer(t, dataDir)
	key := keyPattern.FindString(stderr.String())
	if key == "" {
		t.Fatalf("first start printed no key:\n%s", stderr.String())
	}
	if strings.Count(stderr.String(), key) != 1 {
		t.Errorf("the key appears %d times in the output (logs must not carry it)", strings.Count(stderr.String(), key))
	}
	code, body := getJSON(t, url+"/api/v1/projects", key)
	projects, _ := body["projects"].([]any)
	if code != 200 || len(projects) != 1 || projects[0].(map[string]any)["name"] != "Default" {
		t.Fatalf("projects: %d %v", code, body)
	}
	// The account can try every AI endpoint, with a hosted video model too: a clip, and the
	// stitch of a storyboard of the default length whose every scene is generated.
	scenes := ai.DefaultDurationSeconds / ai.SceneSeconds
	tryAll := float64(aivideo.HostedClipCredits + aivideo.JoinCredits + scenes*aivideo.HostedClipCredits)
	code, body = getJSON(t, url+"/api/v1/account/credits", key)
	if credits, _ := body["ai_credits"].(float64); code != 200 || credits < tryAll {
		t.Errorf("first account's AI credits: %d %v, want at least %v", code, body, tryAll)
	}
	if !strings.Contains(stderr.String(), "reelay accounts credits add") {
		t.Errorf("the first start does not say how to add credits:\n%s", stderr.String())
	}
	// The simulators are mounted, and their introspection answers only with a key.
	if code, body := getJSON(t, url+"/sandbox/tiktok/_introspect", key); code != 200 || body["uploads"] == nil {
		t.Errorf("tiktok introspection: %d %v", code, body)
	}
	if code, _ := getJSON(t, url+"/sandbox/youtube/_introspect", ""); code != 401 {
		t.Errorf("introspection without a key: %d", code)
	}
	info, err := os.Stat(filepath.Join(dataDir, "secret.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("secret key file: %v %v", info, err)
	}
}

// With the json log format every line on stderr is JSON, the first start's key too: a record
// of its own with the key in its api_key field, and in no other record.
func TestServeFirstStartLogsJSON(t *testing.T) {
	for _, level := range []string{"info", "error"} {
		t.Run(level, func(t *testing.T) {
			url, stderr := startServer(t, t.TempDir(), func(c *config.Config) { c.LogFormat, c.LogLevel = "json", level })
			key := keyPattern.FindString(stderr.String())
			if key == "" {
				t.Fatalf("first start printed no key:\n%s", stderr.String())
			}
			// A request, so that the request log has its say too.
			if code, _ := getJSON(t, url+"/api/v1/projects", key); code != 200 {
				t.Fatalf("projects: %d", code)
			}
			var withKey []map[string]any
			for i, line := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("line %d is not JSON: %q", i+1, line)
				}
				if strings.Contains(line, key) {
					withKey = append(withKey, rec)
				}
			}
			if len(withKey) != 1 || withKey[0]["api_key"] != key || withKey[0]["account_id"] == nil ||
				withKey[0]["ai_credits"] != float64(firstStartAICredits) {
				t.Errorf("records with the key: %v", withKey)
			}
		})
	}
}

func TestServeRestartKeepsAccount(t *testing.T) {
	dataDir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dataDir, "reelay.db"))
	if err != nil {
		t.Fatal(err)
	}
	raw, rec := auth.NewKey("existing")
	if _, err := st.CreateAccount(ctx, store.NewAccount{Name: "existing", Key: &rec}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	url, stderr := startServer(t, dataDir)
	if keyPattern.MatchString(stderr.String()) {
		t.Errorf("a server on a database with accounts printed a new key:\n%s", stderr.String())
	}
	if code, _ := getJSON(t, url+"/api/v1/projects", raw); code != 200 {
		t.Errorf("existing key: %d", code)
	}
}

func TestAdminCommands(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	out, err := run(t, "accounts", "create", "--name", "acme", "--monthly-post-limit", "5", "--ai-credits", "7", "--json", "--data-dir", dataDir)
	if err != nil {
		t.Fatal(err)
	}
	var created map[string]string
	if err := json.Unmarshal([]byte(out), &created); err != nil || len(created) != 3 || !auth.LooksLikeKey(created["api_key"]) {
		t.Fatalf("accounts create --json printed %q (%v)", out, err)
	}
	account := created["account_id"]

	out, err = run(t, "keys", "create", "--account", account, "--name", "ci", "--json", "--data-dir", dataDir)
	var key map[string]string
	if err != nil || json.Unmarshal([]byte(out), &key) != nil || !auth.LooksLikeKey(key["key"]) {
		t.Fatalf("keys create: %q %v", out, err)
	}
	out, err = run(t, "keys", "list", "--account", account, "--data-dir", dataDir)
	if err != nil || !strings.Contains(out, key["id"]) || strings.Contains(out, key["key"]) {
		t.Errorf("keys list: %q %v", out, err)
	}
	if _, err := run(t, "keys", "revoke", "--account", account, key["id"], "--data-dir", dataDir); err != nil {
		t.Errorf("keys revoke: %v", err)
	}
	if _, err := run(t, "keys", "revoke", "--account", account, key["id"], "--data-dir", dataDir); err == nil {
		t.Error("revoking twice succeeded")
	}
	if _, err := run(t, "projects", "create", "--account", account, "--name", "Launch", "--data-dir", dataDir); err != nil {
		t.Errorf("projects create: %v", err)
	}
	out, err = run(t, "projects", "list", "--account", account, "--data-dir", dataDir)
	if err != nil || !strings.Contains(out, "Default") || !strings.Contains(out, "Launch") {
		t.Errorf("projects list: %q %v", out, err)
	}
	out, err = run(t, "accounts", "list", "--json", "--data-dir", dataDir)
	var accounts []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &accounts) != nil || len(accounts) != 1 ||
		accounts[0]["monthly_post_limit"] != float64(5) || accounts[0]["ai_credits"] != float64(7) {
		t.Errorf("accounts list: %q %v", out, err)
	}
	for name, args := range map[string][]string{
		"no name":         {"accounts", "create"},
		"negative limit":  {"accounts", "create", "--name", "x", "--monthly-post-limit", "-1"},
		"unknown account": {"keys", "create", "--account", "6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11", "--name", "x"},
		"oidc no issuer":  {"accounts", "create", "--name", "x", "--oidc-subject", "s"},
		"unknown flag":    {"accounts", "create", "--name", "x", "--bogus"},
	} {
		if _, err := run(t, append(args, "--data-dir", dataDir)...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	out, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "reelay ") {
		t.Errorf("version: %q %v", out, err)
	}
}
