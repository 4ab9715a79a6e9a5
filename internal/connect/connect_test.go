package connect

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// simIdentity names the account behind a simulator-issued token, as the simulator sees it: the
// connect flows are under test here; each provider's own Identify is tested in its package
// against its simulator.
type simIdentity struct{ key []byte }

func (s simIdentity) Identify(_ context.Context, base string, creds map[string]string) (provider.Identity, error) {
	platform := base[strings.LastIndex(base, "/sandbox/")+len("/sandbox/"):]
	platform, _, _ = strings.Cut(platform, "/")
	account, _, ok := sandboxtoken.Mint{Key: s.key, Platform: platform}.ParseAccessToken(creds["access_token"])
	if !ok {
		return provider.Identity{}, provider.Permanent(provider.CategoryAuthExpired, 401, "invalid token")
	}
	return provider.Identity{ExternalID: account, Name: "Sim " + account, Username: "@" + account}, nil
}

type fixture struct {
	t         *testing.T
	st        *store.Store
	c         *Connector
	account   string
	project   string
	grants    atomic.Int64 // token requests with grant_type=refresh_token (or Meta's refresh)
	sandboxed string
}

func newFixture(t *testing.T, st *store.Store) *fixture {
	t.Helper()
	key := bytes.Repeat([]byte{7}, 32)
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, st: st}
	mux := http.NewServeMux()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("grant_type") == "refresh_token" || strings.HasSuffix(r.URL.Path, "/refresh_access_token") {
			f.grants.Add(1)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	sandboxKey := secret.Derive(key, "sandbox tokens")
	for _, p := range sim.OAuthPlatforms() {
		api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
		h := sim.WithOAuth(p, sim.OAuthConfig{Mint: sandboxtoken.Mint{Key: sandboxKey, Platform: p},
			RedirectURIs: []string{srv.URL + CallbackPath(p)}}, api)
		mux.Handle("/sandbox/"+p+"/", http.StripPrefix("/sandbox/"+p, h))
	}
	access := publish.ChannelAccess{Box: box, SandboxKey: sandboxKey, SimulatorsURL: srv.URL}
	ids := map[string]provider.Identifier{}
	for _, p := range sim.OAuthPlatforms() {
		ids[p] = simIdentity{key: sandboxKey}
	}
	f.c = &Connector{Store: st, Access: access, Identifiers: ids, PublicURL: srv.URL,
		StateKey: bytes.Repeat([]byte{9}, 32), HTTPClient: srv.Client()}
	acct, err := st.CreateAccount(context.Background(), store.NewAccount{Name: "alice",
		Identity: &store.Identity{Issuer: "https://issuer.test", Subject: "alice"}})
	if err != nil {
		t.Fatal(err)
	}
	f.account, f.project = acct.Account.ID, acct.Project.ID
	return f
}

// start begins a sandbox consent and opens its start page as a new browser: it answers the
// platform's consent URL and the secret that browser keeps in its cookie.
func (f *fixture) start(platform string) (consentURL, browser string) {
	f.t.Helper()
	link, err := f.c.Begin(context.Background(), f.account, f.project, platform, true)
	if err != nil {
		f.t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil || u.Path != StartPath(platform) || !strings.HasPrefix(link, f.c.PublicURL) {
		f.t.Fatalf("link %q is not reelay's start page", link)
	}
	consentURL, cookie, err := f.c.Start(context.Background(), platform, u.Query().Get("state"), "")
	if err != nil {
		f.t.Fatal(err)
	}
	return consentURL, cookie.Value
}

// consent starts a sandbox consent and follows the simulator's consent page to the redirect,
// returning what the platform sent back to the callback, with the browser's cookie.
func (f *fixture) consent(platform string) Callback {
	f.t.Helper()
	link, browser := f.start(platform)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(link)
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		f.t.Fatalf("consent page %s: %s", link, resp.Status)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Path != CallbackPath(platform) {
		f.t.Fatalf("consent redirected to %q", resp.Header.Get("Location"))
	}
	q := loc.Query()
	return Callback{Code: q.Get("code"), State: q.Get("state"), Error: q.Get("error"), ErrorDescription: q.Get("error_description"), Browser: browser}
}

func (f *fixture) creds(ch store.Channel) map[string]string {
	f.t.Helper()
	_, creds, err := f.c.Access.Open(ch)
	if err != nil {
		f.t.Fatal(err)
	}
	return creds
}

func TestConsentRoundTripPerPlatform(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		for _, p := range []string{"youtube", "tiktok", "linkedin", "pinterest", "reddit", "instagram", "threads"} {
			t.Run(p, func(t *testing.T) {
				d := dialects[p]
				link, _ := f.start(p)
				u, _ := url.Parse(link)
				real, _ := url.Parse(d.authURL)
				if u.Path != "/sandbox/"+p+real.Path || u.Query().Get(d.clientParam) != sandboxtoken.ClientID {
					t.Fatalf("consent URL %s: want the simulator's %s with %s", link, real.Path, d.clientParam)
				}
				if got := u.Query().Get("code_challenge") != ""; got != d.pkce {
					t.Fatalf("code_challenge present = %v, want %v", got, d.pkce)
				}
				cb := f.consent(p)
				if cb.Code == "" || cb.Error != "" {
					t.Fatalf("callback %+v", cb)
				}
				before := time.Now()
				chans, err := f.c.Complete(context.Background(), p, cb)
				if err != nil {
					t.Fatal(err)
				}
				if len(chans) != 1 {
					t.Fatalf("%d channels", len(chans))
				}
				ch := chans[0]
				if !ch.Sandbox || ch.ProjectID != f.project || !strings.HasPrefix(ch.ExternalAccountID, "sbx_") {
					t.Fatalf("channel %+v", ch)
				}
				creds := f.creds(ch)
				if _, _, ok := (sandboxtoken.Mint{Key: f.c.Access.SandboxKey, Platform: p}).ParseAccessToken(creds["access_token"]); !ok {
					t.Fatalf("stored access token %q is not the simulator's", creds["access_token"])
				}
				wantRefresh := !d.meta
				if (creds["refresh_token"] != "") != wantRefresh {
					t.Fatalf("refresh token stored = %v, want %v", creds["refresh_token"] != "", wantRefresh)
				}
				// Meta's tokens are exchanged for long-lived ones (60 days); others last as long
				// as the platform says.
				if ch.TokenExpiresAt == nil || ch.TokenExpiresAt.Before(before.Add(30*time.Minute)) {
					t.Fatalf("token expires at %v", ch.TokenExpiresAt)
				}
				if d.meta && ch.TokenExpiresAt.Before(before.Add(59*24*time.Hour)) {
					t.Fatalf("Meta token expires at %v: not long-lived", ch.TokenExpiresAt)
				}
				// The stored row is what Complete returned, credentials sealed.
				got, err := st.GetChannel(context.Background(), f.account, ch.ID)
				if err != nil || bytes.Contains(got.Credentials, []byte(creds["access_token"])) {
					t.Fatalf("stored channel: %v (credentials in plain text?)", err)
				}
			})
		}
	})
}

func TestCallbackRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := context.Background()
		good := f.consent("reddit")

		cases := map[string]struct {
			platform string
			cb       func() Callback
			want     string
		}{
			"forged state":              {"reddit", func() Callback { return Callback{Code: good.Code, State: "abc.def"} }, "not issued by this server"},
			"state of another platform": {"linkedin", func() Callback { return f.consent("reddit") }, "issued for Reddit"},
			"user declined": {"reddit", func() Callback {
				cb := f.consent("reddit")
				return Callback{State: cb.State, Error: "access_denied", ErrorDescription: "The user said no", Browser: cb.Browser}
			}, "did not grant access (access_denied: The user said no)"},
			"code refused": {"reddit", func() Callback {
				cb := f.consent("reddit")
				cb.Code += "x"
				return cb
			}, "refused the authorization: invalid_grant"},
			"no browser cookie": {"reddit", func() Callback {
				cb := f.consent("reddit")
				cb.Browser = ""
				return cb
			}, "not started in this browser"},
			"another browser's cookie": {"reddit", func() Callback {
				cb := f.consent("reddit")
				_, cb.Browser = f.start("reddit")
				return cb
			}, "not started in this browser"},
			"expired state": {"reddit", func() Callback {
				f.c.Now = func() time.Time { return time.Now().Add(-StateTTL - time.Minute) }
				defer func() { f.c.Now = nil }()
				link, err := f.c.Begin(ctx, f.account, f.project, "reddit", true)
				if err != nil {
					t.Fatal(err)
				}
				u, _ := url.Parse(link)
				return Callback{Code: good.Code, State: u.Query().Get("state"), Browser: randomString(browserSecretBytes)}
			}, "expired or was already used"},
		}
		for name, tc := range cases {
			_, err := f.c.Complete(ctx, tc.platform, tc.cb())
			r, ok := ErrRefusal(err)
			if !ok || !strings.Contains(r.Message, tc.want) {
				t.Errorf("%s: error %v; want a refusal saying %q", name, err, tc.want)
			}
		}
		chans, err := st.ListChannels(ctx, f.account, f.project)
		if err != nil || len(chans) != 0 {
			t.Fatalf("refused callbacks stored %d channels (%v)", len(chans), err)
		}

		// The good callback works once; the same state again is a replay.
		if _, err := f.c.Complete(ctx, "reddit", good); err != nil {
			t.Fatal(err)
		}
		_, err = f.c.Complete(ctx, "reddit", good)
		if r, ok := ErrRefusal(err); !ok || !strings.Contains(r.Message, "already used") {
			t.Fatalf("replayed state: %v", err)
		}
	})
}

// A refused browser spends nothing: the consent is still there for the browser that started
// it, and only that one can finish it.
func TestCallbackFromAnotherBrowser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := context.Background()
		good := f.consent("youtube")
		_, otherBrowser := f.start("youtube")
		for name, browser := range map[string]string{"none": "", "another browser's": otherBrowser,
			"malformed": "not-a-secret", "the state itself": good.State} {
			cb := good
			cb.Browser = browser
			_, err := f.c.Complete(ctx, "youtube", cb)
			if r, ok := ErrRefusal(err); !ok || r.HTTPStatus() != http.StatusForbidden {
				t.Errorf("%s cookie: %v, want a 403 refusal", name, err)
			}
		}
		if chans, err := st.ListChannels(ctx, f.account, f.project); err != nil || len(chans) != 0 {
			t.Fatalf("refused browsers stored %d channels (%v)", len(chans), err)
		}
		done, err := f.c.CompleteReturning(ctx, "youtube", good)
		if err != nil || len(done.Channels) != 1 || !done.Spent {
			t.Fatalf("the browser that started: %+v, %v", done, err)
		}
	})
}

// The start page binds a consent to the first browser that opens it, with a cookie that lives
// as long as the state, and refuses what it cannot start without a cookie.
func TestStartPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		f := newFixture(t, st)
		ctx := context.Background()
		at := time.Now()
		f.c.Now = func() time.Time { return at }
		f.c.PublicURL = strings.Replace(f.c.PublicURL, "http://", "https://", 1)
		link, err := f.c.Begin(ctx, f.account, f.project, "youtube", true)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(link)
		state := u.Query().Get("state")
		consent, cookie, err := f.c.Start(ctx, "youtube", state, "")
		if err != nil {
			t.Fatal(err)
		}
		cu, _ := url.Parse(consent)
		if cu.Query().Get("state") != state || cu.Query().Get("code_challenge") == "" {
			t.Errorf("consent URL %s", consent)
		}
		// The state's end as the database keeps it (PostgreSQL: to the microsecond).
		if end := at.Add(StateTTL); cookie.Expires.After(end) || end.Sub(cookie.Expires) >= time.Microsecond {
			t.Errorf("cookie expires at %v, the state at %v", cookie.Expires, end)
		}
		want := http.Cookie{Name: BrowserCookie(state), Value: cookie.Value, Path: "/api/v1/oauth/youtube/",
			Expires: cookie.Expires, MaxAge: int(StateTTL / time.Second), HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}
		if !reflect.DeepEqual(*cookie, want) || !wellFormedBrowserSecret(cookie.Value) || strings.Contains(cookie.Name+cookie.Value, state) {
			t.Errorf("cookie %+v, want %+v", *cookie, want)
		}
		if err := cookie.Valid(); err != nil {
			t.Errorf("cookie: %v", err)
		}
		// The same browser again: the same consent page, the same secret.
		if again, c2, err := f.c.Start(ctx, "youtube", state, cookie.Value); err != nil || again != consent || c2.Value != cookie.Value {
			t.Errorf("opened again by its browser: %q %v %v", again, c2, err)
		}

		f.c.Now = func() time.Time { return time.Now().Add(-StateTTL - time.Minute) }
		expired, _ := f.c.Begin(ctx, f.account, f.project, "youtube", true)
		f.c.Now = nil
		eu, _ := url.Parse(expired)
		for name, tc := range map[string]struct {
			platform, state, browser string
			status                   int
		}{
			"another browser":       {"youtube", state, "", http.StatusForbidden},
			"another browser's own": {"youtube", state, randomString(browserSecretBytes), http.StatusForbidden},
			"forged":                {"youtube", "abc.def", "", http.StatusBadRequest},
			"expired":               {"youtube", eu.Query().Get("state"), "", http.StatusBadRequest},
			"another platform":      {"tiktok", state, cookie.Value, http.StatusBadRequest},
		} {
			link, c, err := f.c.Start(ctx, tc.platform, tc.state, tc.browser)
			if r, ok := ErrRefusal(err); !ok || r.HTTPStatus() != tc.status || link != "" || c != nil {
				t.Errorf("%s: %q %v %v, want a %d refusal", name, link, c, err, tc.status)
			}
		}
	})
}

func TestBeginWithoutAnApp(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storetest.New(t, store.SQLite))
	_, err := f.c.Begin(context.Background(), f.account, f.project, "linkedin", false)
	if err == nil || !strings.Contains(err.Error(), "REELAY_LINKEDIN_CLIENT_ID") {
		t.Fatalf("error %v", err)
	}
	_, err = f.c.Begin(context.Background(), f.account, f.project, "telegram", true)
	if err == nil || !strings.Contains(err.Error(), "POST /channels") {
		t.Fatalf("token platform: error %v", err)
	}
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFixture(t, st)
		connect := func(p string) store.Channel {
			chans, err := f.c.Complete(ctx, p, f.consent(p))
			if err != nil {
				t.Fatal(err)
			}
			return chans[0]
		}

		// Not due: nothing is asked of the platform.
		ch := connect("tiktok")
		if _, err := f.c.Refresh(ctx, ch, false); err != nil || f.grants.Load() != 0 {
			t.Fatalf("refresh of a fresh token: %v, %d grants", err, f.grants.Load())
		}

		// Due (the refresher looks RefreshAhead ahead): renewed, and TikTok's rotated refresh
		// token replaces the old one.
		old := f.creds(ch)
		f.c.Now = func() time.Time { return time.Now().Add(24*time.Hour - RefreshAhead/2) }
		due, err := st.ChannelsDueForRefresh(ctx, f.c.Now().Add(RefreshAhead), 10)
		if err != nil || len(due) != 1 || due[0].ID != ch.ID {
			t.Fatalf("due: %v %v", due, err)
		}
		got, err := f.c.Refresh(ctx, due[0], false)
		if err != nil {
			t.Fatal(err)
		}
		f.c.Now = nil
		renewed := f.creds(got)
		if renewed["access_token"] == old["access_token"] || renewed["refresh_token"] == old["refresh_token"] || renewed["refresh_token"] == "" {
			t.Fatalf("tokens not renewed and rotated: %v → %v", old, renewed)
		}
		if !got.TokenExpiresAt.After(*ch.TokenExpiresAt) || f.grants.Load() != 1 {
			t.Fatalf("expiry %v → %v, %d grants", ch.TokenExpiresAt, got.TokenExpiresAt, f.grants.Load())
		}

		// Many processes refusing the token at once: one refresh; all see its result.
		f.grants.Store(0)
		ch = connect("reddit")
		var wg sync.WaitGroup
		results := make([]store.Channel, 6)
		errs := make([]error, 6)
		for i := range results {
			wg.Add(1)
			go func() { defer wg.Done(); results[i], errs[i] = f.c.Refresh(ctx, ch, true) }()
		}
		wg.Wait()
		if f.grants.Load() != 1 {
			t.Fatalf("%d refresh grants for one channel; want 1", f.grants.Load())
		}
		want := f.creds(results[0])["access_token"]
		for i := range results {
			if errs[i] != nil || f.creds(results[i])["access_token"] != want {
				t.Fatalf("refresh %d: %v, token %q want %q", i, errs[i], f.creds(results[i])["access_token"], want)
			}
		}

		// A refresh the platform refuses: reauth_required, a permanent auth_expired error. The
		// channel is the one a refresh answered, as a worker holds it when the platform then
		// refuses its token: a forced refresh must not take it for someone else's newer one.
		if ch, err = f.c.Refresh(ctx, results[0], true); err != nil {
			t.Fatal(err)
		}
		creds := f.creds(ch)
		creds["refresh_token"] = "revoked"
		ch.Credentials = f.c.Access.Seal(ch, creds)
		if err := st.SaveRefreshedCredentials(ctx, ch.ID, ch.Credentials, ch.TokenExpiresAt); err != nil {
			t.Fatal(err)
		}
		_, err = f.c.Refresh(ctx, ch, true)
		if err == nil {
			t.Fatal("a refresh with a revoked refresh token succeeded")
		}
		if pe := provider.AsError(err); pe.Transient || pe.Category != provider.CategoryAuthExpired {
			t.Fatalf("refused refresh: %v", err)
		}
		after, _ := st.GetChannel(ctx, f.account, ch.ID)
		if after.Status != store.ChannelReauthRequired {
			t.Fatalf("status %q after a refused refresh", after.Status)
		}

		// Threads extends its long-lived token through its own endpoint.
		f.grants.Store(0)
		ch = connect("threads")
		if _, err := f.c.Refresh(ctx, ch, true); err != nil || f.grants.Load() != 1 {
			t.Fatalf("threads refresh: %v, %d grants", err, f.grants.Load())
		}
	})
}
