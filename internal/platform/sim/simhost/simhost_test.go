package simhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simhost"
	"github.com/reelay/reelay/internal/platform/sim/simset"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/secret"
)

var serverKey = bytes.Repeat([]byte{0x42}, 32)

// simulators are the server's own, as simhost's callers pass them.
func simulators() map[string]func(sim.Config) http.Handler {
	out := map[string]func(sim.Config) http.Handler{}
	for name, f := range simset.All {
		out[name] = f
	}
	return out
}

// newHost serves every simulator on a test server.
func newHost(t *testing.T, introspectKey string) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	h, err := simhost.New(simhost.Config{URL: "http://" + srv.Listener.Addr().String(), SecretKey: serverKey,
		Simulators: simulators(), Behavior: sim.Behavior{ProcessingMS: 0}, IntrospectKey: introspectKey})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// The host knows every account a server with its key minted a token for, on every platform,
// and no other: each provider names the account of a channel's token, with the username the
// server gave the channel, and fails with a token of another key, of another platform, or one
// expired.
func TestHostResolvesTheServersTokens(t *testing.T) {
	srv := newHost(t, "")
	providers := app.Providers(nil, 20*time.Millisecond, srv.Client())
	// What follows a simulator's mount point in its API base URL, as the server has it.
	apiPaths := map[string]string{}
	for _, d := range registry.Descriptions() {
		if d.API.InPath {
			apiPaths[d.ID] = d.API.PathPrefix + "/" + d.API.Version
		}
	}
	const account = "sbx_0123456789abcdef"
	ours := secret.Derive(serverKey, "sandbox tokens")
	theirs := secret.Derive(bytes.Repeat([]byte{0x43}, 32), "sandbox tokens")
	tests := []struct {
		name  string
		token func(platform string) string
		ok    bool
	}{
		{"a sandbox channel's token", func(p string) string { return sandboxtoken.Token(ours, p, account) }, true},
		{"another server's token", func(p string) string { return sandboxtoken.Token(theirs, p, account) }, false},
		{"another platform's token", func(p string) string {
			other := platform.YouTube
			if p == other {
				other = platform.TikTok
			}
			return sandboxtoken.Token(ours, other, account)
		}, false},
		{"a token the simulated OAuth issued", func(p string) string {
			return sandboxtoken.Mint{Key: ours, Platform: p}.Access(account, time.Now().Add(time.Hour))
		}, true},
		{"an expired one", func(p string) string {
			return sandboxtoken.Mint{Key: ours, Platform: p}.Access(account, time.Now().Add(-time.Minute))
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range platform.All {
				idf, ok := providers[p].(provider.Identifier)
				if !ok {
					t.Fatalf("%s's provider names no account", p)
				}
				base := srv.URL + "/sandbox/" + p + apiPaths[p]
				id, err := idf.Identify(context.Background(), base, sandboxtoken.Credentials(p, base, account, tc.token(p)))
				switch {
				case tc.ok && err != nil:
					t.Errorf("%s: %v", p, err)
				case tc.ok && id.Name != connect.SandboxUsername(p, account):
					// The simulators name the account by its username, the server's.
					t.Errorf("%s: identified %+v, want the account named %s", p, id, connect.SandboxUsername(p, account))
				case !tc.ok && err == nil:
					t.Errorf("%s: identified %+v with a token it must refuse", p, id)
				}
			}
		})
	}
}

// What a simulator received is answered only to the holder of the introspection key, and not
// at all when the host has none.
func TestHostIntrospection(t *testing.T) {
	tests := []struct {
		name, hostKey, sent string
		want                int
	}{
		{"the key", "k3y", "k3y", http.StatusOK},
		{"another key", "k3y", "other", http.StatusUnauthorized},
		{"no key", "k3y", "", http.StatusUnauthorized},
		{"a host without introspection", "", "", http.StatusNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHost(t, tc.hostKey)
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sandbox/youtube/_introspect", nil)
			if tc.sent != "" {
				req.Header.Set("X-API-Key", tc.sent)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusOK {
				var got sim.Introspection
				if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Uploads == nil || got.Published == nil {
					t.Errorf("introspection %+v (%v)", got, err)
				}
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  simhost.Config
	}{
		{"no secret key", simhost.Config{URL: "http://127.0.0.1:1", Simulators: simulators()}},
		{"a platform without simulator", simhost.Config{URL: "http://127.0.0.1:1", SecretKey: serverKey,
			Simulators: simulators(), Platforms: []string{"myspace"}}},
	}
	for _, tc := range tests {
		if _, err := simhost.New(tc.cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
