package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// apiServer is a whole reelay process (API, workers, platform simulators, media storage)
// behind a real listener, with one account, for driving the command line against.
type apiServer struct {
	URL         string
	DatabaseURL string
	Store       *store.Store
	AccountID   string
	ProjectID   string
	Key         string
	// cliRequests counts the requests the command line sent (its User-Agent), not the
	// simulators' traffic, so a test can prove that bad input sent nothing.
	cliRequests atomic.Int64
}

func newAPIServer(t *testing.T, d store.Dialect) *apiServer {
	t.Helper()
	s := &apiServer{DatabaseURL: storetest.URL(t, d)}
	st, err := store.Open(context.Background(), s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.Store = st
	srv := httptest.NewUnstartedServer(nil)
	cfg := &config.Config{
		Role: config.RoleAll, Sandbox: true, BlobURL: "file://" + t.TempDir(),
		PublicURL: "http://" + srv.Listener.Addr().String(), AllowPrivateURLs: true,
		PublishWait: 10 * time.Second, RetryAttempts: 3, RetryBaseDelay: 20 * time.Millisecond,
		RateLimitRPS: 1000, RateLimitBurst: 1000,
	}
	ctx := context.Background()
	a, err := app.New(ctx, app.Params{Config: cfg, Store: st, SecretKey: bytes.Repeat([]byte{7}, 32),
		PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.UserAgent(), "reelay-cli/") {
			s.cliRequests.Add(1)
		}
		a.Handler.ServeHTTP(w, r)
	})
	srv.Start()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(stop)
		srv.Close()
	})
	raw, rec := auth.NewKey("default")
	created, err := st.CreateAccount(ctx, store.NewAccount{Name: "cli-test", Key: &rec})
	if err != nil {
		t.Fatal(err)
	}
	s.URL, s.AccountID, s.ProjectID, s.Key = srv.URL, created.Account.ID, created.Project.ID, raw
	return s
}

// client is a Go client of the server, for checking what the command line did.
func (s *apiServer) client(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, s.Key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cliResult is what one run of the command line did.
type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line in-process with captured output (not a terminal, as in CI or a
// pipe) and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// cli runs the command line against the server with its key.
func (s *apiServer) cli(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runCLI(t, "", append(args, "--url", s.URL, "--api-key", s.Key)...)
}

// ok fails the test unless the run exited 0.
func (r cliResult) ok(t *testing.T) cliResult {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r
}

// failed fails the test unless the run exited with code and said want on stderr.
func (r cliResult) failed(t *testing.T, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}
