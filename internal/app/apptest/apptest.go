// Package apptest runs the whole reelay process, as `reelay serve` assembles it (API,
// dashboard, workers, platform simulators, media storage), behind a real listener, and makes
// the accounts tests act as. It is for the tests that drive reelay from outside — the Go
// client, the command line, the MCP tools, the dashboard, the API against the simulators, the
// benchmarks — so that each builds the same process the same way and says only where its own
// differs.
package apptest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// Server is a started reelay process and the listener serving its handler.
type Server struct {
	// URL is the listener's base URL, which is also the process's public URL (where the
	// simulators live and media links point).
	URL    string
	Store  *store.Store
	App    *app.App
	Config *config.Config
}

// Option changes how Start builds the process.
type Option func(*setup)

type setup struct {
	config []func(*config.Config)
	params []func(*app.Params)
	wrap   func(http.Handler) http.Handler
}

// WithConfig changes the configuration after the defaults are set, in order.
func WithConfig(fs ...func(*config.Config)) Option {
	return func(s *setup) { s.config = append(s.config, fs...) }
}

// WithParams changes app.Params (a logger, a clock, another secret key) after the defaults
// are set, in order.
func WithParams(fs ...func(*app.Params)) Option {
	return func(s *setup) { s.params = append(s.params, fs...) }
}

// WrapHandler puts wrap around the app's handler on the listener, to observe the requests
// that reach it.
func WrapHandler(wrap func(http.Handler) http.Handler) Option {
	return func(s *setup) { s.wrap = wrap }
}

// Start builds the process on st and starts it behind a listener on loopback; both stop at
// cleanup, the process first. The defaults are those of a fast, permissive sandbox: every
// role, sandbox channels, media in a temporary folder, private addresses allowed (the test's
// own servers are on loopback), a 10 s publish wait, 4 retries 20 ms apart, a rate limit out
// of the way (1000/s), a secret key of 32 bytes of 7, and providers polling every 20 ms.
func Start(t testing.TB, st *store.Store, opts ...Option) *Server {
	t.Helper()
	var s setup
	for _, o := range opts {
		o(&s)
	}
	srv := httptest.NewUnstartedServer(nil)
	cfg := &config.Config{
		Role: config.RoleAll, Sandbox: true, BlobURL: "file://" + t.TempDir(),
		PublicURL: "http://" + srv.Listener.Addr().String(), AllowPrivateURLs: true,
		PublishWait: 10 * time.Second, RetryAttempts: 4, RetryBaseDelay: 20 * time.Millisecond,
		RateLimitRPS: 1000, RateLimitBurst: 1000, PublishWorkers: config.DefaultPublishWorkers, ConvertWorkers: config.DefaultConvertWorkers,
	}
	for _, f := range s.config {
		f(cfg)
	}
	p := app.Params{Config: cfg, Store: st, SecretKey: bytes.Repeat([]byte{7}, 32), PollInterval: 20 * time.Millisecond}
	for _, f := range s.params {
		f(&p)
	}
	ctx := context.Background()
	a, err := app.New(ctx, p)
	if err != nil {
		srv.Listener.Close()
		t.Fatal(err)
	}
	srv.Config.Handler = a.Handler
	if s.wrap != nil {
		srv.Config.Handler = s.wrap(a.Handler)
	}
	srv.Start()
	if err := a.Start(ctx); err != nil {
		srv.Close()
		a.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a.Stop(stop)
		srv.Close()
	})
	return &Server{URL: srv.URL, Store: st, App: a, Config: cfg}
}

// Tenant is an account as a test sees it: its ids, its first project, and its first API key,
// raw.
type Tenant struct {
	AccountID, ProjectID, KeyID, Key string
}

// NewTenant creates an account named account with its default project and a first API key
// named keyName.
func NewTenant(t testing.TB, st *store.Store, account, keyName string) Tenant {
	t.Helper()
	raw, rec := auth.NewKey(keyName)
	ca, err := st.CreateAccount(context.Background(), store.NewAccount{Name: account, Key: &rec})
	if err != nil {
		t.Fatal(err)
	}
	return Tenant{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, KeyID: ca.Key.ID, Key: raw}
}

// SyncBuffer is a bytes.Buffer that a server's goroutines (or a child process's output
// copier) may write while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// StoredPost stores a post of tn, titled title, to new sandbox channels of the platforms, as
// created at created and scheduled for scheduled (nil: published at once), straight through
// the store, for tests that need posts at given times; it answers the post's id.
func StoredPost(t testing.TB, st *store.Store, tn Tenant, title string, created time.Time, scheduled *time.Time, platforms ...string) string {
	t.Helper()
	ctx := context.Background()
	var dests []store.Destination
	for _, p := range platforms {
		ch, _, err := st.SaveChannel(ctx, store.Channel{AccountID: tn.AccountID, ProjectID: tn.ProjectID, Platform: p,
			Name: p, ExternalAccountID: title + "-" + p, Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		dests = append(dests, store.Destination{ChannelID: ch.ID, Platform: p, Options: []byte(`{}`)})
	}
	p, err := st.CreatePost(ctx, store.NewPost{AccountID: tn.AccountID, ProjectID: tn.ProjectID, Title: title, ContentHash: title,
		Video:   store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request: []byte(`{}`), ScheduledFor: scheduled, Destinations: dests, AllowDuplicate: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.JobsDB().ExecContext(ctx, `UPDATE posts SET created_at = $1 WHERE id = $2`, created, p.ID); err != nil {
		t.Fatal(err)
	}
	return p.ID
}
