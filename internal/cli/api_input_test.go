package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
)

// TestCLIBadInput: a command line that is wrong fails with exit code 2 and a message naming
// the problem, and sends nothing at all to the server.
func TestCLIBadInput(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, store.SQLite)
	dir := t.TempDir()
	video := mediatest.MP4(t, mediatest.Options{})
	missing := filepath.Join(dir, "no-such-clip.mp4")
	empty := filepath.Join(dir, "empty.mp4")
	os.WriteFile(empty, nil, 0o600)
	badJSON := filepath.Join(dir, "storyboard.json")
	os.WriteFile(badJSON, []byte(`{"scenes":[`), 0o600)
	noScenes := filepath.Join(dir, "none.json")
	os.WriteFile(noScenes, []byte(`{"storyboard":{"scenes":[]}}`), 0o600)

	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no video", []string{"publish", "--title", "x"}, "--video is required"},
		{"missing video file", []string{"publish", "--video", missing}, "--video " + missing + ": no such file"},
		{"video is a folder", []string{"publish", "--video", dir}, "not a regular file"},
		{"empty video file", []string{"publish", "--video", empty}, "the file is empty"},
		{"missing thumbnail", []string{"publish", "--video", video, "--thumbnail", missing}, "--thumbnail " + missing + ": no such file"},
		{"--at in words", []string{"publish", "--video", video, "--at", "tomorrow"}, `--at "tomorrow": give an RFC 3339 time`},
		{"--at without an offset", []string{"publish", "--video", video, "--at", "2030-12-01T09:00:00"}, "RFC 3339"},
		{"--at in the past", []string{"publish", "--video", video, "--at", "2001-01-01T00:00:00Z"}, "is not in the future"},
		{"--at +0h", []string{"publish", "--video", video, "--at", "+0h"}, "a delay from now"},
		{"--at negative", []string{"publish", "--video", video, "--at", "+-2h"}, "a delay from now"},
		{"--at unknown unit", []string{"publish", "--video", video, "--at", "+2w"}, "a delay from now"},
		{"unknown flag", []string{"publish", "--video", video, "--bogus"}, "unknown flag: --bogus"},
		{"unknown command", []string{"publsh"}, `unknown command "publsh"`},
		{"unknown subcommand", []string{"posts", "frobnicate"}, `unknown command "frobnicate"`},
		{"extra argument", []string{"publish", "--video", video, "stray"}, `unknown command "stray"`},
		{"unknown platform", []string{"publish", "--video", video, "--platforms", "youtube,myspace"}, `unknown platform "myspace"`},
		{"--option without a field", []string{"publish", "--video", video, "--option", "youtube=1"}, "platform.field=value"},
		{"--option unknown platform", []string{"publish", "--video", video, "--option", "myspace.title=x"}, `unknown platform "myspace"`},
		{"--option bad JSON", []string{"publish", "--video", video, "--option", "tiktok.is_aigc:=yes"}, "not JSON"},
		{"--platform-json not an object", []string{"publish", "--video", video, "--platform-json", "tiktok=[1]"}, "not a JSON object"},
		{"--limit out of range", []string{"posts", "list", "--limit", "500"}, "--limit must be 1 to 100"},
		{"bad --to", []string{"analytics", "--to", "2026-13-01"}, "YYYY-MM-DD"},
		{"bad --platform", []string{"inbox", "list", "--platform", "myspace"}, `unknown platform "myspace"`},
		{"stitch: missing file", []string{"ai", "stitch", "--storyboard-file", missing}, "--storyboard-file " + missing},
		{"stitch: bad JSON", []string{"ai", "stitch", "--storyboard-file", badJSON}, "not JSON"},
		{"stitch: no scenes", []string{"ai", "stitch", "--storyboard-file", noScenes}, "no scenes"},
		{"generate: no folder for --output", []string{"ai", "generate", "--prompt", "x", "--output", filepath.Join(missing, "clip.mp4")}, "its folder does not exist"},
		{"generate: bad --aspect", []string{"ai", "generate", "--prompt", "x", "--aspect", "4:3"}, "9:16 or 16:9"},
		{"connect: credentials and sandbox", []string{"channels", "connect", "bluesky", "--sandbox", "--credentials", "{}"}, "cannot be used together"},
		{"connect: credentials not strings", []string{"channels", "connect", "telegram", "--credentials", `{"chat_id":42}`}, "JSON object of strings"},
	}
	if os.Geteuid() != 0 { // root reads anything
		unreadable := filepath.Join(dir, "locked.mp4")
		os.WriteFile(unreadable, []byte("x"), 0o000)
		tests = append(tests, struct {
			name string
			args []string
			want string
		}{"unreadable video", []string{"publish", "--video", unreadable}, "cannot read it"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.cli(t, tt.args...).failed(t, exitUsage, tt.want)
		})
	}
	t.Run("no API key", func(t *testing.T) {
		runCLI(t, "", "projects", "list", "--url", srv.URL, "--api-key", "").failed(t, exitUsage, "no API key: set REELAY_API_KEY")
	})
	t.Run("bad --url", func(t *testing.T) {
		runCLI(t, "", "projects", "list", "--url", "ftp://example.com", "--api-key", srv.Key).failed(t, exitUsage, "--url")
	})
	if n := srv.cliRequests.Load(); n != 0 {
		t.Errorf("bad command lines sent %d requests to the server", n)
	}
}

// TestCLIServerErrors: what the server refuses, or a server that is not there, is said
// clearly with its own exit code.
func TestCLIServerErrors(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, store.SQLite)
	ctx := context.Background()

	t.Run("server down", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := "http://" + ln.Addr().String()
		ln.Close()
		r := runCLI(t, "", "posts", "list", "--url", down, "--api-key", srv.Key)
		r.failed(t, exitUnreachable, "cannot reach reelay at "+down+": ", "is the server running")
		if r.stdout != "" {
			t.Errorf("stdout: %q", r.stdout)
		}
		// A publish too: the file is checked, then the server is found missing.
		video := mediatest.MP4(t, mediatest.Options{})
		runCLI(t, "", "publish", "--video", video, "--project", srv.ProjectID, "--url", down, "--api-key", srv.Key).
			failed(t, exitUnreachable, "cannot reach reelay at "+down)
	})

	t.Run("revoked key", func(t *testing.T) {
		raw, rec := auth.NewKey("old")
		k, err := srv.Store.CreateAPIKey(ctx, srv.AccountID, rec)
		if err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, "", "projects", "list", "--url", srv.URL, "--api-key", raw); r.code != 0 {
			t.Fatalf("the key before its revocation: %+v", r)
		}
		if err := srv.Store.RevokeAPIKey(ctx, srv.AccountID, k.ID); err != nil {
			t.Fatal(err)
		}
		r := runCLI(t, "", "projects", "list", "--url", srv.URL, "--api-key", raw)
		r.failed(t, exitUnauthorized, "the API key was refused (expired or revoked?)", "REELAY_API_KEY")
		if strings.Contains(r.stderr, raw) {
			t.Errorf("the key was printed:\n%s", r.stderr)
		}
	})

	t.Run("validation errors list each field", func(t *testing.T) {
		video := mediatest.MP4(t, mediatest.Options{})
		srv.cli(t, "channels", "connect", "youtube", "--sandbox").ok(t)
		r := srv.cli(t, "publish", "--video", video, "--platforms", "youtube", "--title", strings.Repeat("t", 101),
			"--caption", strings.Repeat("c", 5001))
		r.failed(t, exitError, "validation_failed", "\n  title: ", "\n  caption: ", "request id: ")
		if n := strings.Count(r.stderr, "caption: "); n != 1 {
			t.Errorf("the caption's problem is printed %d times:\n%s", n, r.stderr)
		}
	})
}

// dropFirstPublish is a proxy in front of the server that lets the first publish through and
// then loses its answer, as a flaky network does, and records each publish's Idempotency-Key.
type dropFirstPublish struct {
	t     *testing.T
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	keys  []string
}

func (p *dropFirstPublish) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/api/v1/publish" {
		p.mu.Lock()
		p.keys = append(p.keys, r.Header.Get("Idempotency-Key"))
		first := len(p.keys) == 1
		p.mu.Unlock()
		if first {
			rec := httptest.NewRecorder()
			p.proxy.ServeHTTP(rec, r) // the server takes the upload and publishes…
			if rec.Code != http.StatusOK {
				p.t.Errorf("the first publish answered %d: %s", rec.Code, rec.Body)
			}
			conn, _, err := w.(http.Hijacker).Hijack() // …and its answer never arrives
			if err != nil {
				p.t.Error(err)
				return
			}
			conn.Close()
			return
		}
	}
	p.proxy.ServeHTTP(w, r)
}

// TestCLIPublishRetrySameKey: when a publish's answer is lost, the client sends it again with
// the same Idempotency-Key, and the server holds one post with one upload.
func TestCLIPublishRetrySameKey(t *testing.T) {
	t.Parallel()
	srv := newAPIServer(t, store.SQLite)
	c := srv.client(t)
	ctx := context.Background()
	srv.cli(t, "channels", "connect", "youtube", "--sandbox").ok(t)
	target, _ := url.Parse(srv.URL)
	drop := &dropFirstPublish{t: t, proxy: httputil.NewSingleHostReverseProxy(target)}
	proxy := httptest.NewServer(drop)
	t.Cleanup(proxy.Close)

	video := mediatest.MP4(t, mediatest.Options{Size: 1_000_000})
	r := runCLI(t, "", "publish", "--video", video, "--platforms", "youtube", "--title", "Once", "--url", proxy.URL, "--api-key", srv.Key).ok(t)
	printed := regexp.MustCompile(`idempotency key (\S+)`).FindStringSubmatch(r.stderr)
	if printed == nil {
		t.Fatalf("no key printed:\n%s", r.stderr)
	}
	if len(drop.keys) != 2 || drop.keys[0] != printed[1] || drop.keys[1] != printed[1] {
		t.Errorf("publish attempts carried keys %q, want twice %q", drop.keys, printed[1])
	}
	if !strings.Contains(r.stderr, "upload interrupted; sending it again") || !strings.Contains(r.stderr, "was used before") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	posts, err := c.ListPosts(ctx, client.ListPostsParams{})
	if err != nil || len(posts.Posts) != 1 || posts.Posts[0].Status != client.PostPublished {
		t.Fatalf("the server holds %+v, %v; want one published post", posts, err)
	}
	if !strings.Contains(r.stdout, posts.Posts[0].ID) {
		t.Errorf("stdout names another post:\n%s", r.stdout)
	}
	seen, err := c.SandboxIntrospect(ctx, client.YouTube)
	if err != nil || len(seen.Uploads) != 1 || len(seen.Published) != 1 {
		t.Errorf("youtube received %+v, %v; want one upload", seen, err)
	}
}

// TestCLIEnvironment: REELAY_URL and REELAY_API_KEY configure the client commands, and no
// other REELAY_* variable changes them.
func TestCLIEnvironment(t *testing.T) {
	srv := newAPIServer(t, store.SQLite)
	t.Setenv("REELAY_URL", srv.URL)
	t.Setenv("REELAY_API_KEY", srv.Key)
	t.Setenv("REELAY_JSON", "true")
	r := runCLI(t, "", "projects", "list").ok(t)
	if !strings.HasPrefix(r.stdout, "ID ") || !strings.Contains(r.stdout, srv.ProjectID) {
		t.Errorf("projects list with the environment:\n%s", r.stdout)
	}
	c := srv.client(t)
	if _, err := c.CreateChannel(context.Background(), client.CreateChannelRequest{ProjectID: srv.ProjectID, Platform: client.YouTube, Sandbox: true}); err != nil {
		t.Fatal(err)
	}
	// A flag wins over the environment.
	runCLI(t, "", "channels", "list", "--api-key", "rly_live_nope").failed(t, exitUnauthorized)
}

// TestCLIAIVideo: generate waits for the job and saves the clip, which publishes by its link;
// stitch renders a storyboard file.
func TestCLIAIVideo(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	t.Parallel()
	srv := newAPIServer(t, store.SQLite) // AIWait 0: every generation answers 202 at once
	ctx := context.Background()
	dir := t.TempDir()

	srv.cli(t, "ai", "generate", "--prompt", "Cold brew in 16 hours").failed(t, exitError, "insufficient_credits", "402")
	if _, err := srv.Store.AddCredits(ctx, srv.AccountID, 4, "cli test"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "clip.mp4")
	r := srv.cli(t, "ai", "generate", "--prompt", "Cold brew in 16 hours", "--aspect", "16:9", "--output", out).ok(t)
	link := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(link, srv.URL+"/api/v1/media/") || !strings.Contains(r.stderr, "is running") || !strings.Contains(r.stderr, "saved "+out) {
		t.Fatalf("generate:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	clip, err := os.ReadFile(out)
	if err != nil || len(clip) < 1000 || !bytes.Equal(clip[4:8], []byte("ftyp")) {
		t.Fatalf("saved clip: %d bytes, %v", len(clip), err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*part*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// The link publishes as it is (--video URL).
	srv.cli(t, "channels", "connect", "youtube", "--sandbox").ok(t)
	r = srv.cli(t, "publish", "--video", link, "--platforms", "youtube", "--title", "Generated", "--json").ok(t)
	if strings.Contains(r.stderr, "upload ") {
		t.Errorf("a link was uploaded:\n%s", r.stderr)
	}
	var post client.Post
	decodeJSON(t, r, &post)
	if post.Status != client.PostPublished {
		t.Errorf("published by link: %+v", post)
	}

	sb := filepath.Join(dir, "storyboard.json")
	os.WriteFile(sb, []byte(`{"success":true,"model":"reelay-builtin","storyboard":{"scenes":[{"title":"One","prompt":"Coarse beans","timecode":"00:00-00:05"},{"title":"Two","prompt":"16 hours in the fridge","timecode":"00:05-00:10"}]}}`), 0o600)
	var job client.AIJob
	start := time.Now()
	decodeJSON(t, srv.cli(t, "ai", "stitch", "--storyboard-file", sb, "--json").ok(t), &job)
	if job.Status != client.AIJobSucceeded || job.VideoURL == "" || job.Duration < 9.5 || job.Duration > 10.5 {
		t.Errorf("stitch --json: %+v (after %s)", job, time.Since(start))
	}
	srv.cli(t, "ai", "stitch", "--storyboard-file", sb).failed(t, exitError, "insufficient_credits")
}
