package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"gocloud.dev/blob"
	"golang.org/x/sync/singleflight"

	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/store"
)

// SimulatorFactory builds one platform's simulator (simset.Factory, which app passes the
// list of).
type SimulatorFactory = func(cfg sim.Config) http.Handler

// mountSandbox serves each platform's simulator at /sandbox/{platform}/ (its own paths below
// that prefix) and what it received at /sandbox/{platform}/_introspect. The simulators keep
// their records in the database and the bytes of uploads in progress in the media storage, so
// that a restart loses nothing and every API process on the database serves the same
// simulated platforms.
// mountSandbox mounts the simulators; keys is a Mint without its platform, which each
// simulator's gets.
func (s *Server) mountSandbox(factories map[string]SimulatorFactory, keys sandboxtoken.Mint, publicURL string, now func() time.Time) {
	state := s.store.SimState(now)
	var blobs *blob.Bucket
	if s.media != nil {
		blobs = s.media.Bucket()
	}
	for _, name := range platform.All {
		factory, ok := factories[name]
		if !ok {
			continue
		}
		prefix := "/sandbox/" + name
		rec := sim.NewRecorder(state, name)
		mint := keys
		mint.Platform = name
		accounts := &sandboxAccounts{store: s.store, mint: mint}
		h := factory(sim.Config{
			BaseURL:  publicURL + prefix,
			Accounts: accounts,
			Recorder: rec,
			State:    state,
			Blobs:    blobs,
			Now:      now,
		})
		// The simulator's consent page approves at once and sends the browser back to this
		// server's callback, so the whole OAuth round trip runs in the sandbox.
		h = sim.WithOAuth(name, sim.OAuthConfig{
			Mint:         mint,
			RedirectURIs: []string{publicURL + connect.CallbackPath(name)},
			Now:          now,
			State:        state,
			Admit: func(w http.ResponseWriter, r *http.Request) bool {
				if !s.limits.AllowAddress(w, r) {
					writeError(w, r, ErrRateLimited())
					return false
				}
				return true
			},
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
	got, err := rec.Of(r.Context(), ids)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, got)
	return nil
}

// sandboxAccounts resolves the sandbox tokens that sandbox channels present to a simulator:
// the token names the account and proves it was minted here; the channel's stored
// sandbox_behavior says how the simulated platform treats it.
//
// Every simulated request resolves its token, several per published destination, so the
// channels found are kept for a moment. A sandbox channel's account, username and behaviour
// are fixed when it is created; what can change is its deletion, after which its token must
// stop working. This process's deletions (and saves) empty the cache at once
// (store.ChannelWrites); another process's are seen within sandboxCacheTTL.
type sandboxAccounts struct {
	store *store.Store
	mint  sandboxtoken.Mint

	mu      sync.Mutex
	writes  uint64 // store.ChannelWrites when found was last emptied
	found   map[string]cachedSandboxAccount
	lookups singleflight.Group
}

type cachedSandboxAccount struct {
	account sim.Account
	at      time.Time
}

// sandboxCacheTTL bounds how long a channel deleted by another process keeps answering here.
const sandboxCacheTTL = 2 * time.Second

// cached answers a sandbox account found less than sandboxCacheTTL ago, when no channel was
// saved or deleted here since; writes is the store's count to pass to remember.
func (a *sandboxAccounts) cached(id string, now time.Time) (acct sim.Account, writes uint64, ok bool) {
	writes = a.store.ChannelWrites()
	a.mu.Lock()
	defer a.mu.Unlock()
	if writes != a.writes || len(a.found) > 10_000 {
		a.writes, a.found = writes, nil
	}
	c, ok := a.found[id]
	if !ok || now.Sub(c.at) >= sandboxCacheTTL {
		return sim.Account{}, writes, false
	}
	return c.account, writes, true
}

// remember keeps an account read from the store after ChannelWrites answered writes; if a
// channel was saved or deleted since, the read may predate it and is not kept.
func (a *sandboxAccounts) remember(id string, acct sim.Account, writes uint64, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if writes != a.writes {
		return
	}
	if a.found == nil {
		a.found = make(map[string]cachedSandboxAccount)
	}
	a.found[id] = cachedSandboxAccount{account: acct, at: at}
}

func (a *sandboxAccounts) Resolve(ctx context.Context, token string) (sim.Account, bool) {
	account, exp, ok := a.mint.ParseAccessToken(token)
	t := time.Now()
	if !ok || (!exp.IsZero() && t.After(exp)) {
		return sim.Account{}, false
	}
	acct, writes, ok := a.cached(account, t)
	if ok {
		return acct, true
	}
	// The requests of a burst come at once: one of them reads the channel for all (those that
	// began before the same channel writes, which a read begun earlier may not have seen).
	// The read is not cut short by the request that happens to make it.
	found, err, _ := a.lookups.Do(strconv.FormatUint(writes, 10)+"/"+account, func() (any, error) {
		acct, err := a.lookup(context.WithoutCancel(ctx), account)
		if err == nil {
			a.remember(account, acct, writes, t)
		}
		return acct, err
	})
	if errors.Is(err, store.ErrNotFound) && !exp.IsZero() {
		// A token the simulator's consent issued, for an account whose channel the callback
		// has not stored yet (it asks who the account is first): the account exists, and
		// behaves.
		return sim.Account{ID: account, Username: connect.SandboxUsername(a.mint.Platform, account), Behavior: sim.Behavior{ProcessingMS: -1}}, true
	}
	if err != nil {
		return sim.Account{}, false
	}
	return found.(sim.Account), true
}

// lookup reads the simulated account of a sandbox channel from the store.
func (a *sandboxAccounts) lookup(ctx context.Context, account string) (sim.Account, error) {
	c, err := a.store.SandboxChannel(ctx, a.mint.Platform, account)
	if err != nil {
		return sim.Account{}, err
	}
	var stored connect.SandboxBehavior
	if err := json.Unmarshal([]byte(c.SandboxBehavior), &stored); err != nil {
		return sim.Account{}, err
	}
	b := sim.Behavior{ProcessingMS: -1, Fail: stored.Fail, DailyQuotaUnits: stored.DailyQuotaUnits, AppAccess: stored.AppAccess,
		BarePDS: stored.BarePDS}
	if stored.ProcessingMS != nil {
		b.ProcessingMS = *stored.ProcessingMS
	}
	if stored.FailRate != nil {
		b.FailRate = *stored.FailRate
	}
	// Each reelay account is an app of its own on the simulated platforms: one tenant's
	// sandbox channels never use up a limit of another's.
	return sim.Account{ID: c.ExternalAccountID, Username: c.Username, Behavior: b, App: c.AccountID}, nil
}
