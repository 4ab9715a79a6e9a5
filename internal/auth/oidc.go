package auth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// ErrInvalidToken means the bearer token itself was rejected (malformed,
// badly signed, expired, meant for another audience or issuer, ...). Callers
// answer 401. Errors wrapping it say why, but never contain the token.
var ErrInvalidToken = errors.New("invalid token")

// ErrOIDCUnavailable means the token could not be judged because the identity
// provider's discovery document or signing keys could not be fetched, or OIDC
// is misconfigured. Callers answer 503: the token may well be valid.
var ErrOIDCUnavailable = errors.New("identity provider unavailable")

const (
	// defaultDiscoveryRetryInterval bounds how often a failing identity
	// provider is asked for its discovery document, so that a burst of API
	// calls during an outage does not turn into a burst of requests to it.
	defaultDiscoveryRetryInterval = 5 * time.Second

	// defaultHTTPTimeout applies when no client is given. A request without a
	// timeout could hang forever, and go-oidc fetches keys in a background
	// request that every later key refresh waits for.
	defaultHTTPTimeout = 10 * time.Second
)

// signingAlgs are the accepted JWS algorithms: every asymmetric one go-oidc
// supports. They are listed explicitly rather than taken from the discovery
// document because providers usually advertise only what they sign ID tokens
// with, while access tokens may use another algorithm. Symmetric (HS*) and
// "none" are left out on purpose: verifying those with a public key is the
// classic algorithm-confusion forgery.
var signingAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.EdDSA,
}

// parseAlgs are the algorithms a token may name and still be parsed, so that
// a token using a rejected algorithm gets a precise error instead of
// "malformed". Only signingAlgs are ever accepted for verification.
var parseAlgs = append(slices.Clone(signingAlgs), jose.HS256, jose.HS384, jose.HS512)

// Identity is who an OIDC token says the caller is.
type Identity struct {
	// Issuer is the token's iss claim, i.e. the configured issuer.
	Issuer string
	// Subject is the token's sub claim; never empty. Together with Issuer
	// it identifies the account.
	Subject string
	// Email is the email claim, or "" when absent. It is informational:
	// email_verified is not checked, so do not map accounts by it.
	Email string
	// Name is the name claim, or "" when absent.
	Name string
}

// OIDCVerifier checks bearer JWTs issued by one OpenID Connect provider for
// one audience. It is safe for concurrent use. The provider is contacted
// lazily, on the first Verify, so the server can start while it is down.
type OIDCVerifier struct {
	issuer   string
	audience string
	client   *http.Client

	// retryInterval is the minimum time between two discovery attempts, or
	// two fetches of the signing keys, after a failure; keyRefreshInterval
	// the minimum time between two fetches of the keys that tokens naming an
	// unknown key may cause; now is the clock both are measured with. They
	// are fields so tests can control them.
	retryInterval      time.Duration
	keyRefreshInterval time.Duration
	now                func() time.Time

	// mu serialises discovery, so concurrent first calls discover once,
	// and guards the fields below.
	mu          sync.Mutex
	verifier    *oidc.IDTokenVerifier // nil until discovery succeeds
	authURL     string                // the provider's endpoints, from discovery
	tokenURL    string
	lastErr     error     // last discovery failure, if any
	lastAttempt time.Time // when lastErr happened
}

// NewOIDCVerifier returns a verifier for tokens issued by issuer (compared
// exactly with the iss claim and the discovery document, so mind trailing
// slashes) whose aud claim contains audience. client is used for discovery and
// key fetches; it should have a timeout. If nil, a client with a 10-second
// timeout is used. No request is made until the first Verify.
func NewOIDCVerifier(issuer, audience string, client *http.Client) *OIDCVerifier {
	if client == nil {
		client = &http.Client{Timeout: defaultHTTPTimeout}
	}
	return &OIDCVerifier{
		issuer:             issuer,
		audience:           audience,
		client:             client,
		retryInterval:      defaultDiscoveryRetryInterval,
		keyRefreshInterval: defaultKeyRefreshInterval,
		now:                time.Now,
	}
}

// Verify checks rawToken (the JWT from "Authorization: Bearer", without the
// prefix) and returns who it identifies. It checks the signature against the
// provider's published keys, the issuer, the audience, expiry and not-before
// (go-oidc's rules: no leeway on exp, 5 minutes on nbf, iat unchecked), and
// that sub is present. No nonce is required, so JWT access tokens work too.
//
// A rejected token yields an error wrapping ErrInvalidToken; a provider that
// cannot be reached yields one wrapping ErrOIDCUnavailable. Neither contains
// the token.
func (v *OIDCVerifier) Verify(ctx context.Context, rawToken string) (Identity, error) {
	ident, _, err := v.verify(ctx, rawToken)
	return ident, err
}

// VerifyIDToken is Verify for the ID token of a browser sign-in (the audience is then the
// client id): the token must also carry the nonce the sign-in was started with, so that a
// token obtained for another sign-in cannot be replayed into this one.
func (v *OIDCVerifier) VerifyIDToken(ctx context.Context, rawToken, nonce string) (Identity, error) {
	ident, tok, err := v.verify(ctx, rawToken)
	if err != nil {
		return Identity{}, err
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(tok.Nonce), []byte(nonce)) != 1 {
		return Identity{}, invalidToken("the ID token's nonce is not this sign-in's")
	}
	return ident, nil
}

// Endpoints are the provider's authorization and token endpoints, from its discovery document.
func (v *OIDCVerifier) Endpoints(ctx context.Context) (authURL, tokenURL string, err error) {
	if _, err := v.idTokenVerifier(ctx); err != nil {
		return "", "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.authURL == "" || v.tokenURL == "" {
		return "", "", fmt.Errorf("%w: the discovery document of %s names no authorization or token endpoint", ErrOIDCUnavailable, v.issuer)
	}
	return v.authURL, v.tokenURL, nil
}

func (v *OIDCVerifier) verify(ctx context.Context, rawToken string) (Identity, *oidc.IDToken, error) {
	// Garbage is rejected before discovery, so it gets a 401 even while the
	// provider is down, and never causes a request to it.
	if err := checkShape(rawToken); err != nil {
		return Identity{}, nil, err
	}
	verifier, err := v.idTokenVerifier(ctx)
	if err != nil {
		return Identity{}, nil, err
	}

	probe := &keyProbe{}
	tok, err := verifier.Verify(context.WithValue(ctx, keyProbeKey{}, probe), rawToken)
	if err != nil {
		return Identity{}, nil, v.explain(err, probe)
	}
	// go-oidc accepts a token without sub, but then it names nobody.
	if tok.Subject == "" {
		return Identity{}, nil, invalidToken("no subject (sub claim)")
	}

	// Decoded loosely: these claims are informational, so an off-spec type
	// (say, a number) just leaves the field empty instead of failing login.
	var profile struct {
		Email any `json:"email"`
		Name  any `json:"name"`
	}
	if err := tok.Claims(&profile); err != nil {
		return Identity{}, nil, invalidToken("unreadable claims")
	}
	email, _ := profile.Email.(string)
	name, _ := profile.Name.(string)
	return Identity{Issuer: tok.Issuer, Subject: tok.Subject, Email: email, Name: name}, tok, nil
}

// checkShape rejects anything that is not a compact JWS signed with an
// accepted algorithm. go-jose's own error is not passed on, so nothing decoded
// from the token ends up in the message.
func checkShape(rawToken string) error {
	if rawToken == "" {
		return invalidToken("empty token")
	}
	jws, err := jose.ParseSignedCompact(rawToken, parseAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return invalidToken("malformed token (not a signed JWT with a supported algorithm)")
	}
	if alg := jose.SignatureAlgorithm(jws.Signatures[0].Header.Algorithm); !slices.Contains(signingAlgs, alg) {
		return invalidToken(fmt.Sprintf("unsupported signing algorithm %q", alg))
	}
	return nil
}

// idTokenVerifier returns the go-oidc verifier, running discovery if it has
// not succeeded yet and the back-off allows.
func (v *OIDCVerifier) idTokenVerifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	// Misconfiguration is the server's fault, not the token's: 503, not 401.
	if v.issuer == "" || v.audience == "" {
		return nil, fmt.Errorf("%w: OIDC issuer or audience not configured", ErrOIDCUnavailable)
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	if v.lastErr != nil {
		if since := v.now().Sub(v.lastAttempt); since < v.retryInterval {
			return nil, fmt.Errorf("%w: discovery failed %s ago, retrying after %s: %w",
				ErrOIDCUnavailable, since.Round(time.Millisecond), v.retryInterval, v.lastErr)
		}
	}

	verifier, err := v.discover(ctx)
	if err != nil {
		// A caller that gave up (cancelled, deadline) says nothing about the
		// provider, so it must not make everyone else wait out a back-off.
		if ctx.Err() == nil {
			v.lastErr, v.lastAttempt = err, v.now()
		}
		return nil, fmt.Errorf("%w: %w", ErrOIDCUnavailable, err)
	}
	v.verifier, v.lastErr = verifier, nil
	return verifier, nil
}

// discover fetches the discovery document and builds the verifier.
func (v *OIDCVerifier) discover(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, v.client), v.issuer)
	if err != nil {
		return nil, fmt.Errorf("discovery for %s: %w", v.issuer, err)
	}
	var meta struct {
		JWKSURI  string `json:"jwks_uri"`
		AuthURL  string `json:"authorization_endpoint"`
		TokenURL string `json:"token_endpoint"`
	}
	if err := provider.Claims(&meta); err != nil {
		return nil, fmt.Errorf("discovery for %s: %w", v.issuer, err)
	}
	if meta.JWKSURI == "" {
		return nil, fmt.Errorf("discovery for %s: document has no jwks_uri", v.issuer)
	}
	v.authURL, v.tokenURL = meta.AuthURL, meta.TokenURL

	// Provider.Verifier would use go-oidc's RemoteKeySet, which fetches the key set anew for
	// every token naming a key it does not hold, forged ones included (remoteKeys bounds
	// that). Our own key set also lets explain tell "keys unreachable" (503) from "bad
	// signature" (401) without reading go-oidc's flattened error text.
	keys := &remoteKeys{url: meta.JWKSURI, client: v.client, now: v.now,
		refreshInterval: v.keyRefreshInterval, retryInterval: v.retryInterval}
	algs := make([]string, len(signingAlgs))
	for i, a := range signingAlgs {
		algs[i] = string(a)
	}
	return oidc.NewVerifier(v.issuer, keySetAdapter{keys: keys}, &oidc.Config{ClientID: v.audience, SupportedSigningAlgs: algs}), nil
}

// keyProbe records, for one Verify call, what the key set made of the token.
type keyProbe struct {
	called   bool
	payload  []byte // non-nil iff the signature verified
	fetchErr error  // set iff the key set could not be fetched
}

type keyProbeKey struct{}

// explain turns a go-oidc rejection into an error saying why in plain words.
// go-oidc has already decided; this only finds the reason, checking the same
// things in the same order, and falls back to go-oidc's message.
func (v *OIDCVerifier) explain(err error, probe *keyProbe) error {
	switch {
	case probe.fetchErr != nil:
		return fmt.Errorf("%w: fetching signing keys: %w", ErrOIDCUnavailable, probe.fetchErr)
	case !probe.called:
		// checkShape already accepted the token, so go-oidc refused it
		// while parsing, before looking at the signature.
		return invalidToken("malformed token")
	case probe.payload == nil:
		return invalidToken("bad signature (no signing key of the issuer verifies it)")
	}

	// The signature is good, so these claims come from the provider.
	var claims struct {
		Issuer    string          `json:"iss"`
		Audience  json.RawMessage `json:"aud"`
		NotBefore *float64        `json:"nbf"`
	}
	if json.Unmarshal(probe.payload, &claims) != nil {
		return invalidToken("malformed claims")
	}
	if claims.Issuer != v.issuer {
		return invalidToken(fmt.Sprintf("wrong issuer %q (want %q)", claims.Issuer, v.issuer))
	}
	if aud := audiences(claims.Audience); !slices.Contains(aud, v.audience) {
		return invalidToken(fmt.Sprintf("wrong audience %q (want %q)", aud, v.audience))
	}
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		if expired.Expiry.IsZero() {
			return invalidToken("no expiry (exp claim)")
		}
		return invalidToken("expired at " + expired.Expiry.UTC().Format(time.RFC3339))
	}
	if nbf := claims.NotBefore; nbf != nil && *nbf > float64(time.Now().Unix()) {
		return invalidToken("not valid yet (nbf " + time.Unix(int64(*nbf), 0).UTC().Format(time.RFC3339) + ")")
	}
	// go-oidc's messages quote claims, never the token.
	return invalidToken(err.Error())
}

// audiences decodes an aud claim, which may be a string or a list of them.
func audiences(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

// invalidToken wraps ErrInvalidToken with a reason.
func invalidToken(reason string) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, reason)
}
