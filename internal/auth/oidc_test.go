package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/reelay/reelay/internal/clocktest"
)

const testAudience = "reelay-api"

// testIdP is an identity provider: a discovery document and a JWKS endpoint
// whose keys, availability and response delay the test controls.
type testIdP struct {
	srv *httptest.Server

	mu   sync.Mutex
	keys []jose.JSONWebKey // public keys served at /jwks

	discoveryDown atomic.Bool
	jwksDown      atomic.Bool
	discoveryHits atomic.Int32
	jwksHits      atomic.Int32
	// discoveryDelay widens the window in which concurrent first calls
	// would all discover if Verify did not serialise them.
	discoveryDelay time.Duration
	// advertisedIssuer overrides the issuer in the discovery document.
	advertisedIssuer string
}

func newTestIdP(t testing.TB, keys ...signingKey) *testIdP {
	t.Helper()
	idp := &testIdP{}
	idp.setKeys(keys...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		idp.discoveryHits.Add(1)
		time.Sleep(idp.discoveryDelay)
		if idp.discoveryDown.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		iss := idp.srv.URL
		if idp.advertisedIssuer != "" {
			iss = idp.advertisedIssuer
		}
		writeJSON(w, map[string]any{
			"issuer":                                iss,
			"authorization_endpoint":                idp.srv.URL + "/authorize",
			"token_endpoint":                        idp.srv.URL + "/token",
			"jwks_uri":                              idp.srv.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		idp.jwksHits.Add(1)
		if idp.jwksDown.Load() {
			http.Error(w, "down for maintenance", http.StatusInternalServerError)
			return
		}
		idp.mu.Lock()
		set := jose.JSONWebKeySet{Keys: idp.keys}
		idp.mu.Unlock()
		writeJSON(w, set)
	})
	idp.srv = httptest.NewServer(mux)
	t.Cleanup(idp.srv.Close)
	return idp
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// setKeys replaces the published key set, as a key rotation does.
func (idp *testIdP) setKeys(keys ...signingKey) {
	pub := make([]jose.JSONWebKey, len(keys))
	for i, k := range keys {
		pub[i] = k.public()
	}
	idp.mu.Lock()
	idp.keys = pub
	idp.mu.Unlock()
}

func (idp *testIdP) verifier() *OIDCVerifier {
	return NewOIDCVerifier(idp.srv.URL, testAudience, idp.srv.Client())
}

// signingKey is a private key with the kid and algorithm tokens name.
type signingKey struct {
	alg  jose.SignatureAlgorithm
	kid  string
	priv crypto.Signer
}

func newRSAKey(t testing.TB, kid string) signingKey {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{alg: jose.RS256, kid: kid, priv: priv}
}

func newECKey(t testing.TB, kid string) signingKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{alg: jose.ES256, kid: kid, priv: priv}
}

func (k signingKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

func (k signingKey) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	return signJWT(t, jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, claims)
}

func signJWT(t testing.TB, key jose.SigningKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// claims returns the claims of a valid token from idp, with overrides
// applied; an override of nil deletes the claim.
func claims(idp *testIdP, overrides map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss":   idp.srv.URL,
		"sub":   "user-123",
		"aud":   testAudience,
		"exp":   now.Add(time.Hour).Unix(),
		"iat":   now.Unix(),
		"email": "ada@example.com",
		"name":  "Ada Lovelace",
	}
	for k, v := range overrides {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// assertInvalid checks that err rejects the token (not the provider), says
// why, and does not repeat the token.
func assertInvalid(t *testing.T, err error, token, reason string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("error = %v, want one wrapping ErrInvalidToken", err)
	}
	if errors.Is(err, ErrOIDCUnavailable) {
		t.Errorf("error = %v, must not also wrap ErrOIDCUnavailable", err)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("error = %q, want it to say %q", err, reason)
	}
	if token != "" && strings.Contains(err.Error(), token) {
		t.Errorf("error repeats the token: %q", err)
	}
}

func TestOIDCVerifierVerify(t *testing.T) {
	t.Parallel()
	rsaKey := newRSAKey(t, "rsa-1")
	ecKey := newECKey(t, "ec-1")
	idp := newTestIdP(t, rsaKey, ecKey)
	v := idp.verifier() // shared: the subtests also exercise concurrent use

	now := time.Now()
	otherKeySameKID := newRSAKey(t, rsaKey.kid)
	otherKeyOtherKID := newRSAKey(t, "unknown")

	// An HS256 token keyed with the RSA public key: the algorithm-confusion
	// forgery a verifier accepting HS256 with JWKS keys would fall for.
	pubDER, err := x509.MarshalPKIXPublicKey(rsaKey.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	hs256 := signJWT(t, jose.SigningKey{Algorithm: jose.HS256, Key: pubDER}, claims(idp, nil))

	unsigned := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." +
		base64.RawURLEncoding.EncodeToString(mustJSON(t, claims(idp, nil))) + "."

	wantIdentity := Identity{Issuer: idp.srv.URL, Subject: "user-123", Email: "ada@example.com", Name: "Ada Lovelace"}

	tests := []struct {
		name  string
		token string
		want  Identity
		// reason, when set, means the token must be rejected with an
		// error saying this.
		reason string
	}{
		{name: "valid RS256", token: rsaKey.sign(t, claims(idp, nil)), want: wantIdentity},
		{name: "valid ES256", token: ecKey.sign(t, claims(idp, nil)), want: wantIdentity},
		{
			name:  "audience list containing ours",
			token: rsaKey.sign(t, claims(idp, map[string]any{"aud": []string{"other", testAudience}})),
			want:  wantIdentity,
		},
		{
			name:  "no email or name",
			token: rsaKey.sign(t, claims(idp, map[string]any{"email": nil, "name": nil})),
			want:  Identity{Issuer: idp.srv.URL, Subject: "user-123"},
		},
		{
			name:  "non-string email is ignored",
			token: rsaKey.sign(t, claims(idp, map[string]any{"email": 42})),
			want:  Identity{Issuer: idp.srv.URL, Subject: "user-123", Name: "Ada Lovelace"},
		},
		{
			name:   "expired",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"exp": now.Add(-time.Minute).Unix()})),
			reason: "expired",
		},
		{
			name:   "no exp",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"exp": nil})),
			reason: "no expiry",
		},
		{
			name:   "nbf an hour ahead",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"nbf": now.Add(time.Hour).Unix()})),
			reason: "not valid yet",
		},
		// go-oidc allows 5 minutes of clock skew on nbf...
		{
			name:  "nbf a minute ahead",
			token: rsaKey.sign(t, claims(idp, map[string]any{"nbf": now.Add(time.Minute).Unix()})),
			want:  wantIdentity,
		},
		// ...and does not look at iat at all.
		{
			name:  "iat an hour ahead",
			token: rsaKey.sign(t, claims(idp, map[string]any{"iat": now.Add(time.Hour).Unix()})),
			want:  wantIdentity,
		},
		{
			name:   "wrong audience",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"aud": "someone-else"})),
			reason: "wrong audience",
		},
		{
			name:   "no audience",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"aud": nil})),
			reason: "wrong audience",
		},
		{
			name:   "wrong issuer",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"iss": "https://evil.example.com"})),
			reason: "wrong issuer",
		},
		{
			name:   "issuer with trailing slash",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"iss": idp.srv.URL + "/"})),
			reason: "wrong issuer",
		},
		{
			name:   "no subject",
			token:  rsaKey.sign(t, claims(idp, map[string]any{"sub": nil})),
			reason: "no subject",
		},
		{
			name:   "signed by another key with the same kid",
			token:  otherKeySameKID.sign(t, claims(idp, nil)),
			reason: "bad signature",
		},
		{
			name:   "signed by another key with an unknown kid",
			token:  otherKeyOtherKID.sign(t, claims(idp, nil)),
			reason: "bad signature",
		},
		{
			name: "payload altered after signing",
			token: func() string {
				parts := strings.Split(rsaKey.sign(t, claims(idp, nil)), ".")
				parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(t, claims(idp, map[string]any{"sub": "admin"})))
				return strings.Join(parts, ".")
			}(),
			reason: "bad signature",
		},
		{name: "HS256 keyed with the public key", token: hs256, reason: `unsupported signing algorithm "HS256"`},
		{name: "alg none", token: unsigned, reason: "malformed"},
		{name: "garbage", token: "not-a-jwt", reason: "malformed"},
		{name: "three garbage parts", token: "abc.def.ghi", reason: "malformed"},
		{name: "empty", token: "", reason: "empty token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := v.Verify(context.Background(), tt.token)
			if tt.reason != "" {
				assertInvalid(t, err, tt.token, tt.reason)
				if got != (Identity{}) {
					t.Errorf("identity = %+v alongside an error, want zero", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got != tt.want {
				t.Errorf("identity = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOIDCVerifierKeyRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := newRSAKey(t, "2024"), newRSAKey(t, "2025")
	idp := newTestIdP(t, oldKey)
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	v := idp.verifier()
	v.now = clock.Now
	ctx := context.Background()

	oldToken := oldKey.sign(t, claims(idp, nil))
	if _, err := v.Verify(ctx, oldToken); err != nil {
		t.Fatalf("token signed with the old key: %v", err)
	}
	if n := idp.jwksHits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times before rotation, want 1", n)
	}

	idp.setKeys(newKey) // rotation: the old key is retired
	newToken := newKey.sign(t, claims(idp, nil))
	// Within a minute of the last fetch, a key id reelay has not seen is taken for a forgery:
	// looking again would let anyone make reelay query the provider at will.
	_, err := v.Verify(ctx, newToken)
	assertInvalid(t, err, newToken, "bad signature")
	if n := idp.jwksHits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times for a new kid within the minute, want still 1", n)
	}

	clock.Advance(time.Minute)
	got, err := v.Verify(ctx, newToken)
	if err != nil {
		t.Fatalf("token signed with the new key, a minute on: %v", err)
	}
	if got.Subject != "user-123" {
		t.Errorf("subject = %q, want user-123", got.Subject)
	}
	if n := idp.jwksHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2 (one refetch for the new kid)", n)
	}
	// The refetched keys are cached: the next token needs no request.
	if _, err := v.Verify(ctx, newKey.sign(t, claims(idp, map[string]any{"sub": "user-456"}))); err != nil {
		t.Fatalf("second token signed with the new key: %v", err)
	}
	if n := idp.jwksHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want still 2 (keys cached)", n)
	}

	_, err = v.Verify(ctx, oldToken)
	assertInvalid(t, err, oldToken, "bad signature")
}

// Anyone can make up a token naming a key id the provider never published. Each such token
// must not become a request to the provider: however many arrive, one at a time or all at
// once, the key set is fetched at most once a minute, and a genuine rotation is still seen.
func TestOIDCVerifierForgedKeyIDsFetchKeysOncePerMinute(t *testing.T) {
	t.Parallel()
	const forgeries = 51
	forgers := make([]signingKey, forgeries)
	for i := range forgers {
		forgers[i] = newECKey(t, fmt.Sprintf("forged-%d", i))
	}
	tests := []struct {
		name string
		// send verifies the tokens and returns their errors.
		send func(v *OIDCVerifier, tokens []string) []error
	}{
		{name: "one after another", send: func(v *OIDCVerifier, tokens []string) []error {
			errs := make([]error, len(tokens))
			for i, tok := range tokens {
				_, errs[i] = v.Verify(context.Background(), tok)
			}
			return errs
		}},
		{name: "all at once", send: func(v *OIDCVerifier, tokens []string) []error {
			errs := make([]error, len(tokens))
			var start, done sync.WaitGroup
			start.Add(1)
			for i, tok := range tokens {
				done.Add(1)
				go func() {
					defer done.Done()
					start.Wait()
					_, errs[i] = v.Verify(context.Background(), tok)
				}()
			}
			start.Done()
			done.Wait()
			return errs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			realKey, rotated := newECKey(t, "real-1"), newECKey(t, "real-2")
			idp := newTestIdP(t, realKey)
			clock := clocktest.New(time.Unix(1_700_000_000, 0))
			v := idp.verifier()
			v.now = clock.Now

			if _, err := v.Verify(context.Background(), realKey.sign(t, claims(idp, nil))); err != nil {
				t.Fatalf("genuine token: %v", err)
			}
			// A minute on, a refresh is due: the forgeries may cause one, not one each.
			clock.Advance(time.Minute)
			tokens := make([]string, forgeries)
			for i, k := range forgers {
				tokens[i] = k.sign(t, claims(idp, nil))
			}
			before := idp.jwksHits.Load()
			for i, err := range tt.send(v, tokens) {
				assertInvalid(t, err, tokens[i], "bad signature")
			}
			fetched := idp.jwksHits.Load() - before
			t.Logf("%d forged tokens (%s): %d JWKS fetches", forgeries, tt.name, fetched)
			if fetched > 1 {
				t.Errorf("%d forged tokens made %d JWKS fetches, want at most 1", forgeries, fetched)
			}

			// Within the same minute, more of them cost nothing.
			before = idp.jwksHits.Load()
			for i, err := range tt.send(v, tokens) {
				assertInvalid(t, err, tokens[i], "bad signature")
			}
			if n := idp.jwksHits.Load() - before; n != 0 {
				t.Errorf("the same forgeries again within the minute made %d JWKS fetches, want 0", n)
			}

			// The provider rotates; after the minute, its new key is fetched and accepted.
			idp.setKeys(realKey, rotated)
			clock.Advance(time.Minute)
			before = idp.jwksHits.Load()
			if _, err := v.Verify(context.Background(), rotated.sign(t, claims(idp, nil))); err != nil {
				t.Fatalf("token signed with the rotated key: %v", err)
			}
			if n := idp.jwksHits.Load() - before; n != 1 {
				t.Errorf("the rotated key took %d JWKS fetches, want 1", n)
			}
		})
	}
}

// A key set that cannot be fetched is retried after the discovery back-off, not at every
// token, and not only after a minute (the tokens may be valid: they are answered 503).
func TestOIDCVerifierKeyFetchBackoff(t *testing.T) {
	t.Parallel()
	key := newRSAKey(t, "k")
	idp := newTestIdP(t, key)
	idp.jwksDown.Store(true)
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	v := idp.verifier()
	v.now = clock.Now
	token := key.sign(t, claims(idp, nil))

	for range 3 {
		if _, err := v.Verify(context.Background(), token); !errors.Is(err, ErrOIDCUnavailable) || errors.Is(err, ErrInvalidToken) {
			t.Fatalf("key set down: error = %v, want ErrOIDCUnavailable only", err)
		}
	}
	if n := idp.jwksHits.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times within the back-off, want 1", n)
	}
	idp.jwksDown.Store(false)
	clock.Advance(v.retryInterval)
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("after the back-off, key set up: %v", err)
	}
	if n := idp.jwksHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times, want 2", n)
	}
}

func TestOIDCVerifierDiscoveryBackoff(t *testing.T) {
	t.Parallel()
	key := newRSAKey(t, "k")
	idp := newTestIdP(t, key)
	idp.discoveryDown.Store(true)
	clock := clocktest.New(time.Unix(1_700_000_000, 0))
	v := idp.verifier()
	v.now = clock.Now
	ctx := context.Background()
	token := key.sign(t, claims(idp, nil))

	if n := idp.discoveryHits.Load(); n != 0 {
		t.Fatalf("constructor made %d discovery requests, want 0 (discovery is lazy)", n)
	}

	_, err := v.Verify(ctx, token)
	if !errors.Is(err, ErrOIDCUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("provider down: error = %v, want ErrOIDCUnavailable only", err)
	}
	if !strings.Contains(err.Error(), "503") {
		t.Errorf("error = %q, want the cause (503) included", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("error repeats the token: %q", err)
	}

	// Garbage is judged without the provider, even while it is down.
	_, err = v.Verify(ctx, "garbage")
	assertInvalid(t, err, "garbage", "malformed")

	idp.discoveryDown.Store(false)
	clock.Advance(v.retryInterval - time.Millisecond)
	_, err = v.Verify(ctx, token)
	if !errors.Is(err, ErrOIDCUnavailable) {
		t.Fatalf("within back-off: error = %v, want ErrOIDCUnavailable", err)
	}
	if n := idp.discoveryHits.Load(); n != 1 {
		t.Fatalf("discovery requests = %d within the back-off, want 1", n)
	}

	clock.Advance(time.Millisecond)
	got, err := v.Verify(ctx, token)
	if err != nil {
		t.Fatalf("after back-off, provider up: %v", err)
	}
	if got.Subject != "user-123" {
		t.Errorf("subject = %q, want user-123", got.Subject)
	}
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatalf("second verification: %v", err)
	}
	if n := idp.discoveryHits.Load(); n != 2 {
		t.Errorf("discovery requests = %d, want 2 (one failed, one kept)", n)
	}
}

func TestOIDCVerifierCancelledDiscoveryDoesNotBackOff(t *testing.T) {
	t.Parallel()
	key := newRSAKey(t, "k")
	idp := newTestIdP(t, key)
	v := idp.verifier()
	v.now = clocktest.New(time.Unix(1_700_000_000, 0)).Now // frozen: a back-off would never end
	token := key.sign(t, claims(idp, nil))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := v.Verify(ctx, token)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrOIDCUnavailable) {
		t.Fatalf("cancelled caller: error = %v, want context.Canceled and ErrOIDCUnavailable", err)
	}
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("next caller: %v (a cancelled caller must not start the back-off)", err)
	}
}

func TestOIDCVerifierDiscoversOnce(t *testing.T) {
	t.Parallel()
	key := newRSAKey(t, "k")
	idp := newTestIdP(t, key)
	idp.discoveryDelay = 50 * time.Millisecond
	v := idp.verifier()
	token := key.sign(t, claims(idp, nil))

	const callers = 16
	errs := make(chan error, callers)
	var start sync.WaitGroup
	start.Add(1)
	for range callers {
		go func() {
			start.Wait()
			_, err := v.Verify(context.Background(), token)
			errs <- err
		}()
	}
	start.Done()
	for range callers {
		if err := <-errs; err != nil {
			t.Errorf("Verify: %v", err)
		}
	}
	if n := idp.discoveryHits.Load(); n != 1 {
		t.Errorf("discovery requests = %d for %d concurrent first calls, want 1", n, callers)
	}
}

func TestOIDCVerifierUnavailable(t *testing.T) {
	t.Parallel()
	key := newRSAKey(t, "k")

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	tests := []struct {
		name  string
		setup func(t *testing.T) (v *OIDCVerifier, token string)
		cause string
	}{
		{
			name: "discovery returns 503",
			setup: func(t *testing.T) (*OIDCVerifier, string) {
				idp := newTestIdP(t, key)
				idp.discoveryDown.Store(true)
				return idp.verifier(), key.sign(t, claims(idp, nil))
			},
			cause: "503",
		},
		{
			name: "connection refused",
			setup: func(t *testing.T) (*OIDCVerifier, string) {
				c := map[string]any{"iss": closed.URL, "sub": "u", "aud": testAudience, "exp": time.Now().Add(time.Hour).Unix()}
				return NewOIDCVerifier(closed.URL, testAudience, nil), key.sign(t, c)
			},
			cause: "refused",
		},
		{
			name: "discovery document names another issuer",
			setup: func(t *testing.T) (*OIDCVerifier, string) {
				idp := newTestIdP(t, key)
				idp.advertisedIssuer = "https://elsewhere.example.com"
				return idp.verifier(), key.sign(t, claims(idp, nil))
			},
			cause: "did not match",
		},
		{
			name: "JWKS returns 500",
			setup: func(t *testing.T) (*OIDCVerifier, string) {
				idp := newTestIdP(t, key)
				idp.jwksDown.Store(true)
				return idp.verifier(), key.sign(t, claims(idp, nil))
			},
			cause: "500",
		},
		{
			name: "no audience configured",
			setup: func(t *testing.T) (*OIDCVerifier, string) {
				idp := newTestIdP(t, key)
				return NewOIDCVerifier(idp.srv.URL, "", idp.srv.Client()), key.sign(t, claims(idp, nil))
			},
			cause: "not configured",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, token := tt.setup(t)
			got, err := v.Verify(context.Background(), token)
			if !errors.Is(err, ErrOIDCUnavailable) {
				t.Fatalf("error = %v, want one wrapping ErrOIDCUnavailable", err)
			}
			if errors.Is(err, ErrInvalidToken) {
				t.Errorf("error = %v, must not blame the token", err)
			}
			if !strings.Contains(err.Error(), tt.cause) {
				t.Errorf("error = %q, want the cause (%q) included", err, tt.cause)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error repeats the token: %q", err)
			}
			if got != (Identity{}) {
				t.Errorf("identity = %+v alongside an error, want zero", got)
			}
		})
	}
}
