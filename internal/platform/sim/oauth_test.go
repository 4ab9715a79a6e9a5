package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
)

const testRedirect = "https://reelay.test/api/v1/oauth/linkedin/callback"

// testOAuth is the LinkedIn authorization server on st, as one API process serves it.
func testOAuth(st State, clock *clocktest.Clock) http.Handler {
	return WithOAuth("linkedin", OAuthConfig{Mint: sandboxtoken.Mint{Key: []byte("0123456789abcdef0123456789abcdef"), Platform: "linkedin"},
		RedirectURIs: []string{testRedirect}, Now: clock.Now, State: st}, http.NotFoundHandler())
}

// consentFrom asks for a consent from a client address; it answers the response and the
// parameters of its redirect.
func consentFrom(h http.Handler, address string, query url.Values) (*httptest.ResponseRecorder, url.Values) {
	r := httptest.NewRequest(http.MethodGet, "/oauth/v2/authorization?"+query.Encode(), nil)
	r.RemoteAddr = address + ":40000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	loc, _ := url.Parse(w.Header().Get("Location"))
	if loc == nil {
		return w, url.Values{}
	}
	return w, loc.Query()
}

func consentQuery(scope string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {sandboxtoken.ClientID}, "redirect_uri": {testRedirect},
		"scope": {scope}, "state": {"st"}}
}

func exchange(h http.Handler, code string) (int, map[string]any) {
	mint := sandboxtoken.Mint{Key: []byte("0123456789abcdef0123456789abcdef"), Platform: "linkedin"}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
		"client_id": {sandboxtoken.ClientID}, "client_secret": {mint.ClientSecret()}}
	r := httptest.NewRequest(http.MethodPost, "/oauth/v2/accessToken", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var body map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	return w.Code, body
}

// TestOAuthCodeSharedAndOnce: a code one process issued is exchanged at another (the state is
// shared), once, and not after it expired.
func TestOAuthCodeSharedAndOnce(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	st := NewMemoryState(clock.Now)
	a, b := testOAuth(st, clock), testOAuth(st, clock)

	_, q := consentFrom(a, "192.0.2.1", consentQuery("w_member_social"))
	code := q.Get("code")
	if code == "" {
		t.Fatalf("consent answered no code: %v", q)
	}
	if status, body := exchange(b, code); status != http.StatusOK || body["access_token"] == nil {
		t.Fatalf("the other process's exchange: %d %v", status, body)
	}
	if status, body := exchange(a, code); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("a second exchange of the code: %d %v, want invalid_grant", status, body)
	}

	_, q = consentFrom(a, "192.0.2.1", consentQuery("w_member_social"))
	clock.Advance(oauthCodeTTL)
	if status, body := exchange(b, q.Get("code")); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("an exchange after %v: %d %v, want invalid_grant", oauthCodeTTL, status, body)
	}
	// The database holds the codes' hashes, not the codes.
	recs, _ := st.List(t.Context(), "linkedin", oauthCodeKind, "")
	for _, r := range recs {
		if strings.Contains(r.ID, code) || strings.Contains(string(r.Data), code) {
			t.Errorf("a code is stored in plain text: %+v", r)
		}
	}
}

// storedRecords counts every record a memory State holds, expired ones included.
func storedRecords(st State) int {
	m := st.(*memState)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}

// TestOAuthConsentBounded: the consent page, reachable without credentials, keeps at most a
// bounded number of bounded codes, however many requests arrive and however large.
func TestOAuthConsentBounded(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	st := NewMemoryState(clock.Now)
	h := testOAuth(st, clock)

	for _, tc := range []struct {
		name   string
		scope  string
		status int
		error  string
	}{
		{"a 900 KB scope", strings.Repeat("s", 900<<10), http.StatusRequestURITooLong, ""},
		{"a scope over the bound", strings.Repeat("s", oauthMaxScope+1), http.StatusFound, "invalid_scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, q := consentFrom(h, "192.0.2.1", consentQuery(tc.scope))
			if w.Code != tc.status || q.Get("error") != tc.error {
				t.Errorf("answered %d with error %q, want %d %q", w.Code, q.Get("error"), tc.status, tc.error)
			}
			if n := storedRecords(st); n != 0 {
				t.Errorf("%d records stored", n)
			}
		})
	}

	// One address gets oauthMaxCodesPerAddress codes; the others theirs, up to the total.
	granted := 0
	for i := range oauthMaxCodesOutstanding + 50 {
		address := "192.0.2.1"
		if i >= oauthMaxCodesPerAddress+10 {
			address = fmt.Sprintf("198.51.100.%d", i%200)
		}
		_, q := consentFrom(h, address, consentQuery("w_member_social"))
		switch {
		case q.Get("code") != "":
			granted++
		case q.Get("error") != "temporarily_unavailable":
			t.Fatalf("consent %d answered %v", i, q)
		case i < oauthMaxCodesPerAddress:
			t.Fatalf("consent %d refused below the address's bound", i)
		}
	}
	if granted != oauthMaxCodesOutstanding {
		t.Errorf("%d codes granted, want %d", granted, oauthMaxCodesOutstanding)
	}
	if n := storedRecords(st); n != oauthMaxCodesOutstanding {
		t.Errorf("%d records stored, want %d", n, oauthMaxCodesOutstanding)
	}
	// Once they expired, the next consent deletes them: storage does not grow over time either.
	clock.Advance(oauthCodeTTL)
	if _, q := consentFrom(h, "192.0.2.1", consentQuery("w_member_social")); q.Get("code") == "" {
		t.Fatalf("consent after the codes expired: %v", q)
	}
	if n := storedRecords(st); n != 1 {
		t.Errorf("%d records stored after the expired codes went, want 1", n)
	}
}

// TestRedditTokenNeedsANamedAgent: Reddit's token endpoint throttles a call that names no
// application (no User-Agent, or Go's default) with 429, and answers one that does.
func TestRedditTokenNeedsANamedAgent(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	mint := sandboxtoken.Mint{Key: []byte("0123456789abcdef0123456789abcdef"), Platform: "reddit"}
	h := WithOAuth("reddit", OAuthConfig{Mint: mint, RedirectURIs: []string{testRedirect}, Now: clock.Now,
		State: NewMemoryState(clock.Now)}, http.NotFoundHandler())
	for _, c := range []struct {
		agent string
		want  int
	}{
		{"", http.StatusTooManyRequests},
		{"Go-http-client/1.1", http.StatusTooManyRequests},
		{"server:reelay:1.0 (self-hosted reelay)", http.StatusBadRequest}, // past the agent: the made-up code is refused
	} {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {"nope"}, "redirect_uri": {testRedirect}}
		r := httptest.NewRequest(http.MethodPost, "/api/v1/access_token", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("User-Agent", c.agent)
		r.SetBasicAuth(sandboxtoken.ClientID, mint.ClientSecret())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("User-Agent %q: %d %s, want %d", c.agent, w.Code, w.Body, c.want)
		}
	}
}
