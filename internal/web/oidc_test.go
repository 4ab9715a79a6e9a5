package web_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// testIdP is an OpenID provider run by the test: discovery, keys, an authorization endpoint
// that approves at once (as the user it is told to be) and a token endpoint that checks the
// client, the code and its PKCE verifier before issuing a signed ID token.
type testIdP struct {
	srv *httptest.Server
	key *rsa.PrivateKey

	mu      sync.Mutex
	subject string // who signs in; "" denies
	nonce   string // when set, the ID token carries this nonce instead of the asked one
	codes   map[string]idpCode
}

type idpCode struct{ challenge, nonce, redirect string }

const (
	idpClient = "reelay-web"
	idpSecret = "web-s3cret"
)

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &testIdP{key: key, codes: map[string]idpCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/jwks",
			"authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != idpClient || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || q.Get("nonce") == "" || !strings.Contains(q.Get("scope"), "openid") {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		back, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"state": {q.Get("state")}}
		p.mu.Lock()
		if p.subject == "" {
			v.Set("error", "access_denied")
			v.Set("error_description", "the user said no")
		} else {
			code := base64.RawURLEncoding.EncodeToString([]byte(time.Now().String()))
			p.codes[code] = idpCode{challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), redirect: q.Get("redirect_uri")}
			v.Set("code", code)
		}
		p.mu.Unlock()
		back.RawQuery = v.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		p.mu.Lock()
		c, ok := p.codes[r.PostFormValue("code")]
		delete(p.codes, r.PostFormValue("code"))
		subject, nonce := p.subject, p.nonce
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
		if id != idpClient || secret != idpSecret || !ok || r.PostFormValue("redirect_uri") != c.redirect ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		if nonce == "" {
			nonce = c.nonce
		}
		signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
		now := time.Now()
		tok, _ := jwt.Signed(signer).Claims(jwt.Claims{Issuer: p.srv.URL, Subject: subject, Audience: jwt.Audience{idpClient},
			IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute))}).
			Claims(map[string]any{"nonce": nonce, "name": "Alice Example"}).Serialize()
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "id_token": tok})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testIdP) as(subject, nonce string) {
	p.mu.Lock()
	p.subject, p.nonce = subject, nonce
	p.mu.Unlock()
}

// oidcSignIn goes through the sign-in at the identity provider as a browser does, and answers
// the dashboard's last answer.
func (b *browser) oidcSignIn(next string) answer {
	b.e.t.Helper()
	page := b.get("/signin?next=" + url.QueryEscape(next))
	if !strings.Contains(page.Body, `action="/signin/oidc"`) {
		b.e.t.Fatalf("no identity provider on the sign-in page:\n%s", page.Body)
	}
	r := b.post("/signin/oidc", url.Values{"csrf_token": {formToken(b.e.t, page.Body)}, "next": {next}}, nil)
	if r.Code != http.StatusSeeOther {
		b.e.t.Fatalf("start: %d %s", r.Code, r.Body)
	}
	idp := b.fetch(r.location())
	if idp.Code != http.StatusFound {
		b.e.t.Fatalf("identity provider: %d %s", idp.Code, idp.Body)
	}
	back, _ := url.Parse(idp.location())
	return b.get(back.RequestURI())
}

func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	idp := newTestIdP(t)
	e := newEnv(t, store.SQLite, func(c *config.Config) {
		c.OIDCIssuer, c.OIDCAudience, c.OIDCClientID, c.OIDCClientSecret = idp.srv.URL, "reelay-api", idpClient, idpSecret
	})
	if err := e.st.LinkIdentity(t.Context(), e.a.AccountID, store.Identity{Issuer: idp.srv.URL, Subject: "alice-sub"}); err != nil {
		t.Fatal(err)
	}

	// A linked subject signs in to its account and lands where it was going.
	b := e.browser()
	idp.as("alice-sub", "")
	r := b.oidcSignIn("/channels")
	if r.Code != http.StatusSeeOther || r.location() != "/channels" {
		t.Fatalf("sign in: %d %q\n%s", r.Code, r.location(), r.Body)
	}
	if page := b.get("/channels"); page.Code != 200 || !strings.Contains(page.Body, "<h1>Channels</h1>") {
		t.Fatalf("signed in: %d", page.Code)
	}
	projects, _ := e.st.ListProjects(t.Context(), e.a.AccountID)
	if page := b.get("/posts"); !strings.Contains(page.Body, projects[0].ID) {
		t.Error("not signed in to the linked account")
	}

	cases := []struct {
		name, subject, nonce string
		code                 int
		says                 string
	}{
		{"unlinked subject", "mallory-sub", "", http.StatusForbidden, "No reelay account is linked"},
		{"denied at the provider", "", "", http.StatusUnauthorized, "access_denied"},
		{"another sign-in's nonce", "alice-sub", "replayed-nonce", http.StatusUnauthorized, "could not be verified"},
	}
	for _, c := range cases {
		b := e.browser()
		idp.as(c.subject, c.nonce)
		r := b.oidcSignIn("/posts")
		if r.Code != c.code || !strings.Contains(r.Body, c.says) || b.cookie("reelay_session") != nil {
			t.Errorf("%s: %d (session %v)\n%s", c.name, r.Code, b.cookie("reelay_session"), r.Body)
		}
	}

	// A callback this browser did not start (no flow cookie, or another state) signs no one in.
	idp.as("alice-sub", "")
	b = e.browser()
	page := b.get("/signin")
	start := b.post("/signin/oidc", url.Values{"csrf_token": {formToken(t, page.Body)}}, nil)
	back, _ := url.Parse(b.fetch(start.location()).location())
	forged := back.Query()
	forged.Set("state", "forged")
	if r := b.get("/signin/oidc/callback?" + forged.Encode()); r.Code != http.StatusBadRequest || b.cookie("reelay_session") != nil {
		t.Errorf("forged state: %d", r.Code)
	}
	stranger := e.browser()
	if r := stranger.get(back.RequestURI()); r.Code != http.StatusBadRequest || stranger.cookie("reelay_session") != nil {
		t.Errorf("callback in another browser: %d", r.Code)
	}
	// Starting a sign-in needs the sign-in form's token (no login CSRF).
	if r := e.browser().post("/signin/oidc", url.Values{"csrf_token": {""}}, nil); r.Code != http.StatusForbidden {
		t.Errorf("start without the form token: %d", r.Code)
	}
}
