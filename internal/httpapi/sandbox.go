package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/store"
)

// SimulatorFactory builds one platform's simulator.
type SimulatorFactory func(cfg sim.Config) http.Handler

// mountSandbox serves each platform's simulator at /sandbox/{platform}/ (its own paths below
// that prefix) and what it received at /sandbox/{platform}/_introspect.
func (s *Server) mountSandbox(factories map[string]SimulatorFactory, key []byte, publicURL string, now func() time.Time) {
	for _, name := range platform.All {
		factory, ok := factories[name]
		if !ok {
			continue
		}
		prefix := "/sandbox/" + name
		rec := &sim.Recorder{}
		h := factory(sim.Config{
			BaseURL:  publicURL + prefix,
			Accounts: sandboxAccounts{store: s.store, key: key, platform: name},
			Recorder: rec,
			Now:      now,
		})
		// The simulator's consent page approves at once and sends the browser back to this
		// server's callback, so the whole OAuth round trip runs in the sandbox.
		h = sim.WithOAuth(name, sim.OAuthConfig{
			Mint:         sim.TokenMint{Key: key, Platform: name},
			RedirectURIs: []string{publicURL + connect.CallbackPath(name)},
		}, h)
		s.mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
		s.private("GET "+prefix+"/_introspect", func(w http.ResponseWriter, r *http.Request) error {
			return s.introspect(w, r, name, rec)
		})
	}
}

// introspect answers what a simulator received for the caller's own sandbox channels.
func (s *Server) introspect(w http.ResponseWriter, r *http.Request, name string, rec *sim.Recorder) error {
	ids, err := s.store.SandboxAccountIDs(r.Context(), mustPrincipal(r).AccountID, name)
	if err != nil {
		return err
	}
	mine := make(map[string]bool, len(ids))
	for _, id := range ids {
		mine[id] = true
	}
	writeJSON(w, http.StatusOK, rec.Snapshot(func(account string) bool { return mine[account] }))
	return nil
}

// sandboxAccounts resolves the sandbox tokens that sandbox channels present to a simulator:
// the token names the account and proves it was minted here; the channel's stored
// sandbox_behavior says how the simulated platform treats it.
type sandboxAccounts struct {
	store    *store.Store
	key      []byte
	platform string
}

func (a sandboxAccounts) Resolve(ctx context.Context, token string) (sim.Account, bool) {
	account, exp, ok := sim.TokenMint{Key: a.key, Platform: a.platform}.ParseAccessToken(token)
	if !ok || (!exp.IsZero() && time.Now().After(exp)) {
		return sim.Account{}, false
	}
	c, err := a.store.SandboxChannel(ctx, a.platform, account)
	if errors.Is(err, store.ErrNotFound) && !exp.IsZero() {
		// A token the simulator's consent issued, for an account whose channel the callback
		// has not stored yet (it asks who the account is first): the account exists, and
		// behaves.
		return sim.Account{ID: account, Username: connect.SandboxUsername(a.platform, account), Behavior: sim.Behavior{ProcessingMS: -1}}, true
	}
	if err != nil {
		return sim.Account{}, false
	}
	var stored struct {
		ProcessingMS *int    `json:"processing_ms"`
		Fail         string  `json:"fail"`
		FailRate     float64 `json:"fail_rate"`
	}
	if err := json.Unmarshal([]byte(c.SandboxBehavior), &stored); err != nil {
		return sim.Account{}, false
	}
	b := sim.Behavior{ProcessingMS: -1, Fail: stored.Fail, FailRate: stored.FailRate}
	if stored.ProcessingMS != nil {
		b.ProcessingMS = *stored.ProcessingMS
	}
	return sim.Account{ID: c.ExternalAccountID, Username: c.Username, Behavior: b}, true
}
