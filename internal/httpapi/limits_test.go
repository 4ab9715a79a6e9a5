package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/store"
)

// TestAccountLimitAcrossKeys: an account's keys share one bucket beside their own, so making
// more keys does not multiply the account's rate. Three keys of one account, sixty requests
// each, get the account's burst of 40 together, not 40 each; another account is untouched.
func TestAccountLimitAcrossKeys(t *testing.T) {
	t.Parallel()
	const burst, keys, perKey = 40, 3, 60
	each(t, func(t *testing.T, e *env) {
		raw := []string{e.a.Key}
		for i := 1; i < keys; i++ {
			k, rec := auth.NewKey(fmt.Sprintf("extra %d", i))
			if _, err := e.st.CreateAPIKey(context.Background(), e.a.AccountID, rec); err != nil {
				t.Fatal(err)
			}
			raw = append(raw, k)
		}
		served := 0
		for range perKey {
			for _, k := range raw {
				r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: k})
				switch r.Code {
				case http.StatusOK:
					served++
				case http.StatusTooManyRequests:
					if r.errCode() != "rate_limited" || r.Header.Get("Retry-After") == "" {
						t.Fatalf("429 without its body or Retry-After: %v %s", r.Header, r.Body)
					}
				default:
					t.Fatalf("%d %s", r.Code, r.Body)
				}
			}
		}
		t.Logf("%d keys of one account, %d requests each, burst %d: %d served", keys, perKey, burst, served)
		if served != burst {
			t.Errorf("%d keys of one account were served %d requests; want the account's burst, %d", keys, served, burst)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.b.Key}); r.Code != http.StatusOK {
			t.Errorf("another account was limited: %d", r.Code)
		}
	}, func(o *httpapi.Options) {
		// A token every 1,000 s: nothing refills while the test runs.
		o.RateLimitRPS, o.RateLimitBurst = 0.001, burst
		if o.Store.Dialect() == store.Postgres {
			o.RateBuckets = o.Store
		}
	})
}

// addressFlood is a kind of request that anyone may send without a credential.
type addressFlood struct {
	name string
	// make builds one request; every request of a flood comes from the same address.
	make func(e *env) *http.Request
	// api is whether the path is in the contract (then one 429 is checked against it).
	api bool
}

func floodGET(path string, header ...string) func(*env) *http.Request {
	return func(*env) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "http://reelay.test"+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		return r
	}
}

// floodForm builds a POST of a URL-encoded form; with signinForm it carries the sign-in form's
// double-submit cookie and token, as a browser's does. Each request gets a copy of form: the
// SQLite and PostgreSQL runs build theirs at the same time.
func floodForm(path string, shared url.Values, signinForm bool) func(*env) *http.Request {
	return func(*env) *http.Request {
		const token = "0123456789abcdef0123456789abcdef"
		form := maps.Clone(shared)
		if signinForm {
			form.Set("csrf_token", token)
		}
		r := httptest.NewRequest(http.MethodPost, "http://reelay.test"+path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Accept", "application/json")
		if signinForm {
			r.AddCookie(&http.Cookie{Name: "reelay_signin", Value: token})
		}
		return r
	}
}

// TestAddressLimits: the work anyone may ask for without a credential is bounded per client
// address. A thousand requests from one address to each of the sign-in pages, the OAuth
// callback, the sandbox's consent page and token endpoint, a media link, and with a bad API
// key or bearer token, are served the address's burst and refused the rest with 429, the
// contract's body and Retry-After; another address is still served.
func TestAddressLimits(t *testing.T) {
	t.Parallel()
	const burst, flood = 10, 1000
	cases := []addressFlood{
		{name: "bad API key", api: true, make: floodGET("/api/v1/projects", "X-API-Key", auth.KeyPrefix+strings.Repeat("x", 43))},
		{name: "bad bearer token", api: true, make: floodGET("/api/v1/projects", "Authorization", "Bearer not-a-key")},
		{name: "OAuth callback", api: true, make: floodGET("/api/v1/oauth/youtube/callback?code=c&state=forged")},
		{name: "media link", api: true, make: floodGET("/api/v1/media/m1?exp=4102444800&sig=forged")},
		{name: "API contract", api: true, make: floodGET("/api/v1/openapi.json")},
		{name: "sandbox consent page", make: floodGET("/sandbox/youtube/o/oauth2/v2/auth?response_type=code&client_id=" +
			sandboxtoken.ClientID + "&redirect_uri=" + url.QueryEscape("https://elsewhere.example/cb"))},
		{name: "sandbox token endpoint", make: floodForm("/sandbox/youtube/token",
			url.Values{"grant_type": {"authorization_code"}, "code": {"forged"}, "client_id": {sandboxtoken.ClientID}}, false)},
		{name: "dashboard sign-in", make: floodForm("/signin", url.Values{"api_key": {"rly_wrong"}}, true)},
		{name: "OIDC sign-in start", make: floodForm("/signin/oidc", url.Values{}, true)},
		{name: "OIDC sign-in callback", make: floodGET("/signin/oidc/callback?code=c&state=forged", "Accept", "application/json")},
	}
	eachApp(t, func(t *testing.T, e *env) {
		for i, c := range cases {
			// Each kind from its own address, so that the buckets are the kind's alone.
			addr := fmt.Sprintf("198.51.100.%d:4000", i+1)
			served, first := 0, 0
			var last *httptest.ResponseRecorder
			for range flood {
				r := c.make(e)
				r.RemoteAddr = addr
				last = httptest.NewRecorder()
				e.h.ServeHTTP(last, r)
				if last.Code != http.StatusTooManyRequests {
					served++
				}
				if first == 0 {
					first = last.Code
				}
			}
			t.Logf("%s: %d requests from one address, %d served (the first answered %d), %d refused with 429",
				c.name, flood, served, first, flood-served)
			if served != burst {
				t.Errorf("%s: %d of %d requests from one address were served; want the burst, %d", c.name, served, flood, burst)
				continue
			}
			var body struct {
				Error struct{ Code string } `json:"error"`
			}
			if ra, err := strconv.Atoi(last.Header().Get("Retry-After")); err != nil || ra < 1 ||
				json.Unmarshal(last.Body.Bytes(), &body) != nil || body.Error.Code != "rate_limited" {
				t.Errorf("%s: the refusal lacks Retry-After or the error body: %v %s", c.name, last.Header(), last.Body)
			}
			if c.api {
				r := c.make(e)
				got := e.do(req{Method: r.Method, Path: r.URL.RequestURI(), RemoteAddr: addr, Header: map[string]string{
					"X-API-Key": r.Header.Get("X-API-Key"), "Authorization": r.Header.Get("Authorization")}})
				if got.Code != http.StatusTooManyRequests {
					t.Errorf("%s: %d after the flood", c.name, got.Code)
				}
			}
			r := c.make(e)
			r.RemoteAddr = "203.0.113.9:4000"
			other := httptest.NewRecorder()
			e.h.ServeHTTP(other, r)
			if other.Code == http.StatusTooManyRequests {
				t.Errorf("%s: another address was refused", c.name)
			}
		}
		// Probes are not limited: orchestrators send them often, from few addresses.
		for _, path := range []string{"/healthz", "/readyz"} {
			refused := 0
			for range flood {
				r := httptest.NewRequest(http.MethodGet, "http://reelay.test"+path, nil)
				r.RemoteAddr = "198.51.100.100:4000"
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, r)
				if rec.Code == http.StatusTooManyRequests {
					refused++
				}
			}
			if refused != 0 {
				t.Errorf("%s: %d of %d probes refused", path, refused, flood)
			}
		}
		// An address that failed its credentials too often is refused before its next one is
		// looked up, a good key too; the same key from elsewhere is served.
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key, RemoteAddr: "198.51.100.1:4000"}); r.Code != http.StatusTooManyRequests {
			t.Errorf("a good key from an address over its failures: %d, want 429", r.Code)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key, RemoteAddr: "198.51.100.200:4000"}); r.Code != http.StatusOK {
			t.Errorf("a good key from another address: %d, want 200", r.Code)
		}
	}, limitAddresses(0.001, burst))
}

// TestDashboardSpendsAccountLimit: the dashboard's signed-in pages spend the account's requests
// as its keys do: once the account's burst is spent at the API, its session is refused too.
func TestDashboardSpendsAccountLimit(t *testing.T) {
	t.Parallel()
	const burst = 5
	eachApp(t, func(t *testing.T, e *env) {
		const token = "0123456789abcdef0123456789abcdef"
		form := url.Values{"csrf_token": {token}, "api_key": {e.a.Key}}
		sr := httptest.NewRequest(http.MethodPost, "http://reelay.test/signin", strings.NewReader(form.Encode()))
		sr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		sr.AddCookie(&http.Cookie{Name: "reelay_signin", Value: token})
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, sr)
		var session *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == "reelay_session" && c.Value != "" {
				session = c
			}
		}
		if rec.Code != http.StatusSeeOther || session == nil {
			t.Fatalf("sign-in: %d %v", rec.Code, rec.Header())
		}
		page := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodGet, "http://reelay.test/posts", nil)
			r.AddCookie(session)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, r)
			return rec
		}
		if rec := page(); rec.Code != http.StatusOK {
			t.Fatalf("dashboard: %d", rec.Code)
		}
		served := 1
		for range 2 * burst {
			if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key}); r.Code == http.StatusOK {
				served++
			}
		}
		rec = page()
		if rec.Code == http.StatusOK {
			served++
		}
		t.Logf("dashboard then API then dashboard, burst %d: %d served", burst, served)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
			t.Errorf("dashboard after the account's burst: %d %v; want 429 with Retry-After", rec.Code, rec.Header())
		}
		if served != burst {
			t.Errorf("the account's key and session were served %d requests together; want its burst, %d", served, burst)
		}
	}, limitAccount(0.001, burst))
}

// limitAccount sets the limit per key of an app env, which is the account's too.
func limitAccount(rps float64, burst int) func(*config.Config) {
	return func(c *config.Config) { c.RateLimitRPS, c.RateLimitBurst = rps, burst }
}
