package cli

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim/simhost"
	"github.com/reelay/reelay/internal/platform/sim/simset"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
	"github.com/reelay/reelay/internal/webhooks"
)

// TestSecretKeyRotation rotates REELAY_SECRET_KEY from A to B the way docs/OPERATIONS.md says,
// through the API and the command line: what was sealed and signed with A keeps working while
// A is a previous key, `secret-key reseal` moves the sealed values to B, and B alone then
// opens them, while links signed with A stop verifying.
func TestSecretKeyRotation(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testSecretKeyRotation(t, d)
		})
	}
}

func testSecretKeyRotation(t *testing.T, d store.Dialect) {
	ctx := context.Background()
	dbURL := storetest.URL(t, d)
	cli := func(args ...string) string {
		t.Helper()
		out, err := run(t, append(args, "--database-url", dbURL)...)
		if err != nil {
			t.Fatalf("reelay %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	newKey := func() string {
		t.Helper()
		out, err := run(t, "secret-key", "new")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	keyA, keyB := newKey(), newKey()
	var created map[string]string
	if err := json.Unmarshal([]byte(cli("accounts", "create", "--name", "acme", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	apiKey := created["api_key"]

	// A Mastodon channel on a simulator apart, whose own key does not change: its token is the
	// channel's credentials, sealed by the server under its secret key.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hostURL := "http://" + ln.Addr().String()
	simKey := []byte(strings.Repeat("s", secret.KeySize))
	host, err := simhost.New(simhost.Config{URL: hostURL, SecretKey: simKey, Simulators: simset.All, Platforms: []string{"mastodon"}})
	if err != nil {
		t.Fatal(err)
	}
	sims := &http.Server{Handler: host, ReadHeaderTimeout: 10 * time.Second}
	go sims.Serve(ln)
	t.Cleanup(func() { sims.Close() })
	token := sandboxtoken.Token(sandboxtoken.Key(simKey), "mastodon", "sbx_rotation")

	dataDir := t.TempDir()
	withKeys := func(current, previous string) func(*config.Config) {
		return func(c *config.Config) {
			c.DatabaseURL, c.SecretKey, c.SecretKeyPrevious, c.AllowPrivateURLs = dbURL, current, previous, true
		}
	}
	// serveWith runs a server with the given keys until fn returns.
	serveWith := func(current, previous string, fn func(url string)) {
		t.Helper()
		url, stderr, stop, done := launchServer(t, dataDir, withKeys(current, previous))
		fn(url)
		stop()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v", err)
		}
		for _, k := range []string{keyA, keyB, token} {
			if strings.Contains(stderr.String(), k) {
				t.Fatal("a secret appears in the server's log")
			}
		}
	}
	checkChannel := func(url, id, when string) {
		t.Helper()
		res := postJSON(t, url+"/api/v1/channels/"+id+"/check", apiKey, map[string]any{})
		if res["ok"] != true {
			t.Fatalf("%s: channel check = %v", when, res)
		}
	}
	// mediaStatus fetches a link to a media id that stores nothing, signed with key: 404 says
	// the signature verified, 403 that it did not.
	mediaID := strings.Repeat("ab", 32)
	mediaStatus := func(url, key string) int {
		t.Helper()
		k, _ := secret.ParseKey(key)
		signer, err := media.OpenStore(ctx, "mem://", secret.Derive(k, "media links"), media.WithPublicURL(url))
		if err != nil {
			t.Fatal(err)
		}
		defer signer.Close()
		link, err := signer.SignedURL(media.KeyForSHA256(mediaID), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	var channelID, webhookID, webhookSecret string
	serveWith(keyA, "", func(url string) {
		res := postJSON(t, url+"/api/v1/channels", apiKey, map[string]any{"project_id": created["project_id"], "platform": "mastodon",
			"credentials": map[string]string{"instance_url": hostURL + "/sandbox/mastodon", "access_token": token}})
		channelID = res["channel"].(map[string]any)["id"].(string)
		res = postJSON(t, url+"/api/v1/webhooks", apiKey, map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"post.published"}})
		wh, _ := res["webhook"].(map[string]any)
		webhookID, _ = wh["id"].(string)
		webhookSecret, _ = res["secret"].(string)
		if webhookID == "" || webhookSecret == "" {
			t.Fatalf("POST /webhooks = %v", res)
		}
	})

	// Rolling restart onto B, A still accepted.
	serveWith(keyB, keyA, func(url string) {
		checkChannel(url, channelID, "new key, old one previous, before reseal")
		if got := mediaStatus(url, keyA); got != http.StatusNotFound {
			t.Errorf("link signed with the previous key: %d, want 404 (verified, nothing stored)", got)
		}
	})

	reseal := func(current, previous string) []app.ResealCount {
		t.Helper()
		var counts []app.ResealCount
		out := cli("secret-key", "reseal", "--json", "--batch", "1", "--secret-key", current, "--secret-key-previous", previous)
		if err := json.Unmarshal([]byte(out), &counts); err != nil {
			t.Fatalf("reseal --json: %q: %v", out, err)
		}
		return counts
	}
	count := func(counts []app.ResealCount, kind store.SealedKind) app.ResealCount {
		for _, c := range counts {
			if c.Kind == kind {
				return c
			}
		}
		t.Fatalf("reseal printed no %s", kind)
		return app.ResealCount{}
	}
	for _, tc := range []struct {
		name                       string
		current, previous          string
		resealed, current_, unopen int
	}{
		{"first run", keyB, keyA, 1, 0, 0},
		{"second run finds nothing to do", keyB, keyA, 0, 1, 0},
		{"previous key already dropped", keyB, "", 0, 1, 0},
		{"wrong key reseals nothing", keyA, "", 0, 0, 1},
	} {
		counts := reseal(tc.current, tc.previous)
		for _, kind := range []store.SealedKind{store.SealedChannelCredentials, store.SealedWebhookSecrets} {
			c := count(counts, kind)
			if c.Resealed != tc.resealed || c.Current != tc.current_ || len(c.Unopened) != tc.unopen {
				t.Errorf("%s: %s = %+v, want resealed %d, current %d, unopened %d", tc.name, kind, c, tc.resealed, tc.current_, tc.unopen)
			}
		}
	}

	// The stored webhook secret opens with B alone.
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wh, err := st.GetWebhook(ctx, created["account_id"], webhookID)
	if err != nil {
		t.Fatal(err)
	}
	kB, _ := secret.ParseKey(keyB)
	boxB, _ := secret.NewBox(kB)
	if got, err := webhooks.OpenSecret(boxB, webhookID, wh.Secret); err != nil || got != webhookSecret {
		t.Errorf("webhook secret under B alone: %v", err)
	}

	// Rolling restart onto B alone.
	serveWith(keyB, "", func(url string) {
		checkChannel(url, channelID, "new key alone, after reseal")
		if got := mediaStatus(url, keyA); got != http.StatusForbidden {
			t.Errorf("link signed with a dropped key: %d, want 403", got)
		}
		if got := mediaStatus(url, keyB); got != http.StatusNotFound {
			t.Errorf("link signed with the current key: %d, want 404 (verified, nothing stored)", got)
		}
	})
}

// TestPreviousKeySettings: REELAY_SECRET_KEY_PREVIOUS is checked before anything starts.
func TestPreviousKeySettings(t *testing.T) {
	t.Parallel()
	key := secret.NewKey()
	for _, tc := range []struct {
		previous, wantErr string
	}{
		{"not base64!", "REELAY_SECRET_KEY_PREVIOUS: key 1"},
		{secret.NewKey() + "," + key, "key 2 is REELAY_SECRET_KEY itself"},
	} {
		_, err := run(t, "secret-key", "reseal", "--data-dir", t.TempDir(), "--secret-key", key, "--secret-key-previous", tc.previous)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("previous %q: %v, want %q", tc.previous, err, tc.wantErr)
		}
	}
	if _, err := run(t, "secret-key", "reseal", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no secret key") {
		t.Errorf("reseal without a key: %v", err)
	}
}

// TestSecretKeyFlags: only the commands that open or seal stored secrets take the secret key
// flags; the other administration commands touch no sealed value, so offering the flags there
// would suggest they matter.
func TestSecretKeyFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"serve"}, true},
		{[]string{"secret-key", "reseal"}, true},
		{[]string{"accounts", "create"}, false},
		{[]string{"keys", "create"}, false},
		{[]string{"projects", "list"}, false},
	} {
		help, err := run(t, append(c.args, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v", c.args, err)
		}
		for _, flag := range []string{"--secret-key ", "--secret-key-previous "} {
			if got := strings.Contains(help, flag); got != c.want {
				t.Errorf("%v offers %s: %v, want %v", c.args, flag, got, c.want)
			}
		}
	}
}
