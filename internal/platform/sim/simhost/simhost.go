// Package simhost serves the platform simulators apart from any reelay server, as the platforms
// themselves are: each at /sandbox/{platform}/ of a host of their own, with their state in
// process memory, for the sandbox channels of the servers whose secret key the host is given
// (servers started with REELAY_SANDBOX_URL pointing at it). The benchmarks host the platforms
// with it, so that what the simulators do costs the server under test nothing, neither CPU
// nor its database; the end-to-end tests, so that the simulators outlive the servers they kill.
package simhost

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Config is what a Host is built with.
type Config struct {
	// URL is where the host is reached: scheme and host, what the servers' sandbox URL is. The
	// simulators hand out URLs below it (upload URLs, permalinks).
	URL string
	// SecretKey is the servers' secret key (REELAY_SECRET_KEY): the key of their sandbox
	// tokens derives from it.
	SecretKey []byte
	// Simulators build the platforms' simulators, by platform.
	Simulators map[string]func(sim.Config) http.Handler
	// Platforms are the platforms served (nil: every one of Simulators).
	Platforms []string
	// Behavior is how every account behaves. A server keeps each sandbox channel's behaviour
	// in its database, which a host apart does not read: it is told the one its callers
	// created their channels with.
	Behavior sim.Behavior
	// RedirectURIs are where the simulated OAuth consent may send the browser back to (the
	// servers' callbacks, <public URL>/connect/{platform}/callback); none refuses every
	// consent.
	RedirectURIs []string
	// IntrospectKey, when set, opens GET /sandbox/{platform}/_introspect to requests that
	// carry it in X-API-Key, as a server's own sandbox answers its callers: all that the
	// simulator received, for every account.
	IntrospectKey string
	// Wrap, when set, wraps each platform's simulator (tests throttle uploads and log).
	Wrap func(platform string, h http.Handler) http.Handler
	// PullClient, when set, is the client a platform's simulator fetches media with
	// (Instagram's video_url); nil lets each simulator make its own.
	PullClient func(platform string) *http.Client
}

// Host serves the simulators. It is an http.Handler for a server the caller runs.
type Host struct {
	mux       *http.ServeMux
	recorders map[string]*sim.Recorder
}

// New builds the host of cfg.Platforms' simulators.
func New(cfg Config) (*Host, error) {
	if len(cfg.SecretKey) == 0 {
		return nil, errors.New("simhost: no secret key")
	}
	platforms := cfg.Platforms
	if platforms == nil {
		for name := range cfg.Simulators {
			platforms = append(platforms, name)
		}
		slices.Sort(platforms)
	}
	key := sandboxtoken.Key(cfg.SecretKey)
	h := &Host{mux: http.NewServeMux(), recorders: map[string]*sim.Recorder{}}
	for _, name := range platforms {
		factory, ok := cfg.Simulators[name]
		if !ok {
			return nil, fmt.Errorf("simhost: no simulator of %q", name)
		}
		prefix := "/sandbox/" + name
		// One State per platform: the one in memory takes a single lock per update, which
		// the platforms then do not share.
		state := sim.NewMemoryState(nil)
		rec := sim.NewRecorder(state, name)
		h.recorders[name] = rec
		mint := sandboxtoken.Mint{Key: key, Platform: name}
		sc := sim.Config{BaseURL: cfg.URL + prefix, Accounts: accounts{mint: mint, behavior: cfg.Behavior},
			Recorder: rec, State: state}
		if cfg.PullClient != nil {
			sc.PullClient = cfg.PullClient(name)
		}
		handler := sim.WithOAuth(name, sim.OAuthConfig{Mint: mint, RedirectURIs: cfg.RedirectURIs, State: state}, factory(sc))
		if cfg.Wrap != nil {
			handler = cfg.Wrap(name, handler)
		}
		h.mux.Handle(prefix+"/", http.StripPrefix(prefix, handler))
		if cfg.IntrospectKey != "" {
			h.mux.Handle("GET "+prefix+"/_introspect", introspection(rec, cfg.IntrospectKey))
		}
	}
	return h, nil
}

func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Received is what platform's simulator received, for every account (nothing for a platform
// not served).
func (h *Host) Received(ctx context.Context, platform string) (sim.Introspection, error) {
	rec, ok := h.recorders[platform]
	if !ok {
		return sim.Introspection{Uploads: []sim.Upload{}, Published: []sim.Published{}, Replies: []sim.Reply{}}, nil
	}
	return rec.Of(ctx, nil)
}

// introspection answers what rec recorded to a request that carries key.
func introspection(rec *sim.Recorder, key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-Key")), []byte(key)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		got, err := rec.Of(r.Context(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(got)
	})
}

// accounts resolves the sandbox tokens a server minted for one platform (those of sandbox
// channels, and those the simulated OAuth issued until they expire) to the account they name,
// which behaves as every account of the host does.
type accounts struct {
	mint     sandboxtoken.Mint
	behavior sim.Behavior
}

func (a accounts) Resolve(_ context.Context, token string) (sim.Account, bool) {
	account, exp, ok := a.mint.ParseAccessToken(token)
	if !ok || (!exp.IsZero() && time.Now().After(exp)) {
		return sim.Account{}, false
	}
	return sim.Account{ID: account, Username: connect.SandboxUsername(a.mint.Platform, account), Behavior: a.behavior}, true
}
