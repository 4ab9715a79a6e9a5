package cli

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/app/apptest"
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
	srv := apptest.Start(t, st,
		apptest.WithConfig(func(c *config.Config) { c.RetryAttempts = 3 }),
		apptest.WrapHandler(func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.UserAgent(), "reelay-cli/") {
					s.cliRequests.Add(1)
				}
				h.ServeHTTP(w, r)
			})
		}))
	tn := apptest.NewTenant(t, st, "cli-test", "default")
	s.URL, s.AccountID, s.ProjectID, s.Key = srv.URL, tn.AccountID, tn.ProjectID, tn.Key
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
