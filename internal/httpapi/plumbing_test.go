package httpapi_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func TestRequestIDAndErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key, Header: map[string]string{"X-Request-Id": "trace-123"}})
	if r.Header.Get("X-Request-Id") != "trace-123" {
		t.Errorf("request id not echoed: %q", r.Header.Get("X-Request-Id"))
	}
	r = e.do(req{Method: "GET", Path: "/api/v1/projects", Header: map[string]string{"X-Request-Id": "bad id with spaces"}})
	if id := r.Header.Get("X-Request-Id"); id == "" || id == "bad id with spaces" || r.JSON["request_id"] != id {
		t.Errorf("generated request id %q, body %v", id, r.JSON["request_id"])
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/nowhere", Key: e.a.Key}); r.Code != 404 || r.errCode() != "not_found" {
		t.Errorf("unknown path: %d %s", r.Code, r.Body)
	}
	r = e.do(req{Method: "PUT", Path: "/api/v1/projects", Key: e.a.Key})
	if r.Code != 405 || r.errCode() != "method_not_allowed" || !strings.Contains(r.Header.Get("Allow"), "POST") {
		t.Errorf("wrong method: %d %s %v", r.Code, r.Body, r.Header)
	}
	// Endpoints of later issues are in the contract but not served yet.
	if r := e.do(req{Method: "GET", Path: "/api/v1/posts/6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11", Key: e.a.Key}); r.Code != 404 {
		t.Errorf("unserved endpoint: %d", r.Code)
	}
}

func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	if r := e.do(req{Method: "GET", Path: "/healthz"}); r.Code != 200 || r.JSON["status"] != "ok" {
		t.Errorf("healthz: %d %s", r.Code, r.Body)
	}
	r := e.do(req{Method: "GET", Path: "/readyz"})
	checks, _ := r.JSON["checks"].(map[string]any)
	if r.Code != 200 || checks["database"] != "ok" || checks["migrations"] != "ok" {
		t.Errorf("readyz: %d %s", r.Code, r.Body)
	}
	r = e.do(req{Method: "GET", Path: "/api/v1/openapi.json"})
	var doc map[string]any
	if r.Code != 200 || json.Unmarshal(r.Body, &doc) != nil || doc["openapi"] == nil || doc["paths"].(map[string]any)["/publish"] == nil {
		t.Errorf("openapi.json: %d", r.Code)
	}
	e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key})
	r = e.do(req{Method: "GET", Path: "/metrics"})
	if r.Code != 200 || !strings.Contains(string(r.Body), `reelay_http_requests_total{method="GET",route="GET /api/v1/projects",status="200"} 1`) {
		t.Errorf("metrics lack the projects request:\n%s", r.Body)
	}
	e.st.Close()
	// Each failed check says only that it failed: the cause (a database's host and port) is
	// for the log, not for anyone who asks.
	if r := e.do(req{Method: "GET", Path: "/readyz"}); r.Code != 503 || r.JSON["status"] != "unavailable" ||
		r.JSON["checks"].(map[string]any)["database"] != "unavailable" {
		t.Errorf("readyz with the database closed: %d %s", r.Code, r.Body)
	}
}

// TestWorkerEndpoints: a worker process serves only the operational endpoints, the metrics
// from its own registry, and answers everything else in the contract's error body.
func TestWorkerEndpoints(t *testing.T) {
	t.Parallel()
	st := storetest.New(t, store.SQLite)
	reg := prometheus.NewRegistry()
	jobs := prometheus.NewCounter(prometheus.CounterOpts{Name: "reelay_test_jobs_total", Help: "test"})
	reg.MustRegister(jobs)
	jobs.Add(3)
	h := httpapi.NewOperational(st, reg, nil, httpapi.MetricsAccess{})
	for _, tc := range []struct {
		method, path string
		code         int
		has          string
	}{
		{"GET", "/healthz", 200, `"status":"ok"`},
		{"GET", "/readyz", 200, `"migrations":"ok"`},
		{"GET", "/metrics", 200, "reelay_test_jobs_total 3"},
		{"POST", "/metrics", 405, `"code":"method_not_allowed"`},
		{"GET", "/api/v1/projects", 404, `"code":"not_found"`},
		{"GET", "/", 404, `"success":false`},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.has) {
			t.Errorf("%s %s: %d %s, want %d with %s", tc.method, tc.path, w.Code, w.Body, tc.code, tc.has)
		}
	}
	// Its own requests are counted too.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(w.Body.String(), `reelay_http_requests_total{method="GET",route="GET /healthz",status="200"} 1`) {
		t.Errorf("metrics lack the health request:\n%s", w.Body)
	}
}

func TestSandboxDisabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite, func(o *httpapi.Options) { o.Sandbox = false })
	r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{"project_id": e.a.ProjectID, "platform": "youtube", "sandbox": true}})
	if r.Code != 400 || r.field("sandbox") == "" {
		t.Errorf("sandbox channel on a server without sandbox: %d %s", r.Code, r.Body)
	}
}

// testIssuer is an OIDC identity provider run by the test: discovery and JWKS, and tokens it
// signs itself.
type testIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &testIssuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss.srv.URL, "jwks_uri": iss.srv.URL + "/jwks",
			"authorization_endpoint": iss.srv.URL + "/auth", "token_endpoint": iss.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	return iss
}

func (i *testIssuer) token(t *testing.T, claims jwt.Claims, extra map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: i.key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Claims(extra).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestOIDCBearer(t *testing.T) {
	t.Parallel()
	iss := newTestIssuer(t)
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			verifier := auth.NewOIDCVerifier(iss.srv.URL, "reelay-api", iss.srv.Client())
			e := newEnv(t, d, func(o *httpapi.Options) { o.OIDC = verifier })
			linked := store.Identity{Issuer: iss.srv.URL, Subject: "alice-sub"}
			if err := e.st.LinkIdentity(t.Context(), e.a.AccountID, linked); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			valid := jwt.Claims{Issuer: iss.srv.URL, Subject: "alice-sub", Audience: jwt.Audience{"reelay-api"},
				IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(time.Hour))}
			with := func(mut func(c *jwt.Claims)) jwt.Claims { c := valid; mut(&c); return c }
			cases := []struct {
				name   string
				claims jwt.Claims
				code   int
			}{
				{"valid", valid, 200},
				{"expired", with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-time.Hour)) }), 401},
				{"wrong audience", with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"another-api"} }), 401},
				{"wrong issuer", with(func(c *jwt.Claims) { c.Issuer = "https://evil.example" }), 401},
				{"unlinked subject", with(func(c *jwt.Claims) { c.Subject = "mallory" }), 401},
			}
			for _, c := range cases {
				tok := iss.token(t, c.claims, map[string]any{"email": "alice@example.com"})
				r := e.do(req{Method: "GET", Path: "/api/v1/projects", Header: map[string]string{"Authorization": "Bearer " + tok}})
				if r.Code != c.code {
					t.Errorf("%s: %d %s", c.name, r.Code, r.Body)
				}
				if c.code == 200 && r.JSON["projects"].([]any)[0].(map[string]any)["id"] != e.a.ProjectID {
					t.Errorf("%s: the token reached another account: %s", c.name, r.Body)
				}
			}
		})
	}
}

func TestOIDCAutoCreate(t *testing.T) {
	t.Parallel()
	iss := newTestIssuer(t)
	verifier := auth.NewOIDCVerifier(iss.srv.URL, "reelay-api", iss.srv.Client())
	e := newEnv(t, store.SQLite, func(o *httpapi.Options) { o.OIDC = verifier; o.OIDCAutoCreate = true })
	now := time.Now()
	tok := iss.token(t, jwt.Claims{Issuer: iss.srv.URL, Subject: "newcomer", Audience: jwt.Audience{"reelay-api"},
		Expiry: jwt.NewNumericDate(now.Add(time.Hour))}, map[string]any{"name": "New Comer"})
	hdr := map[string]string{"Authorization": "Bearer " + tok}
	first := e.do(req{Method: "GET", Path: "/api/v1/projects", Header: hdr})
	second := e.do(req{Method: "GET", Path: "/api/v1/projects", Header: hdr})
	if first.Code != 200 || second.Code != 200 {
		t.Fatalf("auto-created account: %d %d %s", first.Code, second.Code, first.Body)
	}
	p1 := first.JSON["projects"].([]any)[0].(map[string]any)["id"]
	if p1 != second.JSON["projects"].([]any)[0].(map[string]any)["id"] || p1 == e.a.ProjectID {
		t.Errorf("the subject did not get one account of its own")
	}
	if n, _ := e.st.CountAccounts(t.Context()); n != 3 {
		t.Errorf("accounts = %d, want 3", n)
	}
}
