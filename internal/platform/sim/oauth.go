package sim

// This file simulates the platforms' OAuth 2.0 authorization servers: the consent page (which
// approves at once, for a new simulated account, and redirects back) and the token endpoint
// (authorization code, refresh token, and Meta's long-lived exchanges), each at the path and in
// the dialect of its platform. Access tokens are expiring sandbox tokens that verify
// themselves, so every simulator accepts them the way it accepts a sandbox channel's token.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// oauthDialect is how one platform's authorization server speaks.
type oauthDialect struct {
	authorize, token string // paths; a leading "/{version}" is matched by versioned
	versioned        bool   // Meta: paths below a /vNN.N segment
	clientParam      string // client_id, or TikTok's client_key
	basicOnly        bool   // client credentials in Authorization: Basic only (Reddit, Pinterest)
	// namedAgent: a token call without a descriptive User-Agent (none, or an HTTP library's
	// default) is throttled with 429 (Reddit: "Many default User-Agents ... are drastically
	// limited", github.com/reddit/reddit/wiki/API).
	namedAgent  bool
	scopeSep    string
	pkce        bool   // accepts code_challenge (S256)
	style       string // "oauth2", "tiktok" or "meta"
	accessTTL   time.Duration
	refresh     bool // issues refresh tokens
	offlineOnly bool // ... only when the consent asked access_type=offline (Google)
	rotate      bool // a refresh grant answers a new refresh token
	required    map[string]string
	// Meta's long-lived token endpoints: exchange turns a short token into a long one; metaRefresh
	// extends a long one. Paths and grant types.
	exchangePath, exchangeGrant, exchangeParam string
	metaRefreshPath, metaRefreshGrant          string
	longTTL                                    time.Duration
}

var oauthDialects = map[string]oauthDialect{
	"youtube": {authorize: "/o/oauth2/v2/auth", token: "/token", clientParam: "client_id", scopeSep: " ",
		pkce: true, style: "oauth2", accessTTL: time.Hour, refresh: true, offlineOnly: true,
		required: map[string]string{"response_type": "code"}},
	"tiktok": {authorize: "/v2/auth/authorize/", token: "/v2/oauth/token/", clientParam: "client_key", scopeSep: ",",
		pkce: true, style: "tiktok", accessTTL: 24 * time.Hour, refresh: true, rotate: true,
		required: map[string]string{"response_type": "code"}},
	"linkedin": {authorize: "/oauth/v2/authorization", token: "/oauth/v2/accessToken", clientParam: "client_id", scopeSep: " ",
		style: "oauth2", accessTTL: 60 * 24 * time.Hour, refresh: true,
		required: map[string]string{"response_type": "code"}},
	"pinterest": {authorize: "/oauth/", token: "/v5/oauth/token", clientParam: "client_id", basicOnly: true, scopeSep: ",",
		style: "oauth2", accessTTL: 30 * 24 * time.Hour, refresh: true,
		required: map[string]string{"response_type": "code"}},
	"reddit": {authorize: "/api/v1/authorize", token: "/api/v1/access_token", clientParam: "client_id", basicOnly: true, scopeSep: " ",
		namedAgent: true, style: "oauth2", accessTTL: time.Hour, refresh: true,
		required: map[string]string{"response_type": "code", "duration": "permanent"}},
	"instagram": {authorize: "/dialog/oauth", token: "/oauth/access_token", versioned: true, clientParam: "client_id", scopeSep: ",",
		style: "meta", accessTTL: time.Hour,
		exchangePath: "/oauth/access_token", exchangeGrant: "fb_exchange_token", exchangeParam: "fb_exchange_token",
		longTTL: 60 * 24 * time.Hour},
	"facebook": {authorize: "/dialog/oauth", token: "/oauth/access_token", versioned: true, clientParam: "client_id", scopeSep: ",",
		style: "meta", accessTTL: time.Hour,
		exchangePath: "/oauth/access_token", exchangeGrant: "fb_exchange_token", exchangeParam: "fb_exchange_token",
		longTTL: 60 * 24 * time.Hour},
	"threads": {authorize: "/oauth/authorize", token: "/oauth/access_token", clientParam: "client_id", scopeSep: ",",
		style: "meta", accessTTL: time.Hour,
		exchangePath: "/access_token", exchangeGrant: "th_exchange_token", exchangeParam: "access_token",
		metaRefreshPath: "/refresh_access_token", metaRefreshGrant: "th_refresh_token",
		longTTL: 60 * 24 * time.Hour},
}

// OAuthPlatforms lists the platforms whose simulators have an authorization server.
func OAuthPlatforms() []string {
	out := make([]string, 0, len(oauthDialects))
	for p := range oauthDialects {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// OAuthConfig is the sandbox OAuth app of a simulator.
type OAuthConfig struct {
	Mint sandboxtoken.Mint
	// RedirectURIs are the registered redirect URIs of the sandbox client: a consent request
	// naming another is refused, as every platform refuses an unregistered redirect.
	RedirectURIs []string
	// Now is the clock of codes and token expiries (time.Now when nil).
	Now func() time.Time
	// NewAccount names the simulated account a consent approves ("sbx_" + 16 hex digits when nil).
	NewAccount func() string
	// State keeps the authorization codes until they are exchanged or expire (in memory when
	// nil), so that any API process exchanges a code another one issued, after a restart too.
	State State
	// Admit, when set, sees every request for the consent page and the token endpoints first
	// (these are reachable without credentials: the server bounds them per client); false
	// means it has answered the request.
	Admit func(http.ResponseWriter, *http.Request) bool
}

// oauthCodeKind is the kind of the records of authorization codes, named by the SHA-256 of the
// code: a code is a credential, and the database holds none in plain text.
const oauthCodeKind = "oauth_code"

// An authorization code is valid for oauthCodeTTL. RFC 6749 section 4.1.2: "A maximum
// authorization code lifetime of 10 minutes is RECOMMENDED"; the platforms' own pages give no
// other figure.
const oauthCodeTTL = 10 * time.Minute

// The consent page is reachable without credentials, so what one request may leave behind is
// bounded: the query it is given (front ends answer a longer request line with 414; 8 KiB is
// the common limit), the scope it keeps (no platform documents a bound on it: 2 KiB is the
// simulator's, far above any list of its scopes), and the codes outstanding at once, per client
// address and in all (the simulator's bounds: each consent of the sandbox is exchanged within
// seconds, and expired codes are deleted as new ones are written).
const (
	oauthMaxQuery            = 8 << 10
	oauthMaxScope            = 2 << 10
	oauthMaxCodesPerAddress  = 100
	oauthMaxCodesOutstanding = 1000
)

// oauthCode is what a code stands for until it is exchanged.
type oauthCode struct {
	Account     string `json:"account"`
	ClientID    string `json:"client_id"`
	RedirectURI string `json:"redirect_uri"`
	Challenge   string `json:"challenge,omitempty"`
	Scope       string `json:"scope"`
	Offline     bool   `json:"offline,omitempty"`
}

// oauthServer is one platform's simulated authorization server, in front of its API simulator.
type oauthServer struct {
	platform string
	dialect  oauthDialect
	cfg      OAuthConfig
	next     http.Handler
}

// codeKey is the key of the record of code.
func (s *oauthServer) codeKey(code string) Key {
	sum := sha256.Sum256([]byte(code))
	return Key{Platform: s.platform, Kind: oauthCodeKind, ID: hex.EncodeToString(sum[:])}
}

var oauthVersionSegment = regexp.MustCompile(`^/v[0-9]+\.[0-9]+(/.*)$`)

// WithOAuth puts platform's simulated authorization server in front of its API simulator next
// (requests for other paths go to next). A platform without OAuth gets next as it is.
func WithOAuth(platform string, cfg OAuthConfig, next http.Handler) http.Handler {
	d, ok := oauthDialects[platform]
	if !ok {
		return next
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewAccount == nil {
		cfg.NewAccount = func() string {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			return "sbx_" + hex.EncodeToString(b)
		}
	}
	if cfg.State == nil {
		cfg.State = NewMemoryState(cfg.Now)
	}
	return &oauthServer{platform: platform, dialect: d, cfg: cfg, next: next}
}

func (s *oauthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if s.dialect.versioned {
		m := oauthVersionSegment.FindStringSubmatch(p)
		if m == nil {
			s.next.ServeHTTP(w, r)
			return
		}
		p = m[1]
	}
	d := s.dialect
	if s.cfg.Admit != nil && d.serves(p) && !s.cfg.Admit(w, r) {
		return
	}
	switch {
	case p == d.authorize && r.Method == http.MethodGet:
		s.consent(w, r)
	case p == d.token && (r.Method == http.MethodPost || d.style == "meta" && r.Method == http.MethodGet) &&
		!(d.exchangePath == d.token && r.FormValue("grant_type") == d.exchangeGrant):
		s.exchange(w, r)
	case d.exchangePath != "" && p == d.exchangePath && r.FormValue("grant_type") == d.exchangeGrant:
		s.metaLongLived(w, r, false)
	case d.metaRefreshPath != "" && p == d.metaRefreshPath:
		s.metaLongLived(w, r, true)
	default:
		s.next.ServeHTTP(w, r)
	}
}

// serves reports whether path is one of the authorization server's own: the consent page or a
// token endpoint.
func (d oauthDialect) serves(path string) bool {
	return path == d.authorize || path == d.token ||
		d.exchangePath != "" && path == d.exchangePath || d.metaRefreshPath != "" && path == d.metaRefreshPath
}

// consent approves at once: the simulated user signs in as a new account and agrees.
func (s *oauthServer) consent(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > oauthMaxQuery {
		http.Error(w, "the request URL is too long", http.StatusRequestURITooLong)
		return
	}
	q := r.URL.Query()
	d := s.dialect
	clientID := q.Get(d.clientParam)
	redirect := q.Get("redirect_uri")
	// Before a redirect URI is trusted, errors are shown on the page, never redirected.
	if clientID != sandboxtoken.ClientID {
		http.Error(w, fmt.Sprintf("invalid %s: unknown app", d.clientParam), http.StatusBadRequest)
		return
	}
	if !slices.Contains(s.cfg.RedirectURIs, redirect) {
		http.Error(w, "redirect_uri is not registered for this app", http.StatusBadRequest)
		return
	}
	fail := func(code, desc string) {
		u, _ := url.Parse(redirect)
		v := u.Query()
		v.Set("error", code)
		v.Set("error_description", desc)
		if st := q.Get("state"); st != "" {
			v.Set("state", st)
		}
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	for k, want := range d.required {
		if q.Get(k) != want {
			fail("invalid_request", fmt.Sprintf("%s must be %q", k, want))
			return
		}
	}
	if d.style == "meta" && q.Get("response_type") != "" && q.Get("response_type") != "code" {
		fail("invalid_request", "response_type must be code")
		return
	}
	if strings.TrimSpace(q.Get("scope")) == "" {
		fail("invalid_scope", "scope is required")
		return
	}
	if len(q.Get("scope")) > oauthMaxScope {
		fail("invalid_scope", fmt.Sprintf("scope is longer than %d bytes", oauthMaxScope))
		return
	}
	challenge := q.Get("code_challenge")
	if challenge != "" {
		if !d.pkce {
			fail("invalid_request", "code_challenge is not supported")
			return
		}
		if q.Get("code_challenge_method") != "S256" {
			fail("invalid_request", "code_challenge_method must be S256")
			return
		}
	}
	code, err := s.issueCode(r, oauthCode{Account: s.cfg.NewAccount(), ClientID: clientID, RedirectURI: redirect,
		Challenge: challenge, Scope: q.Get("scope"), Offline: q.Get("access_type") == "offline"})
	switch {
	case errors.Is(err, errTooManyCodes):
		fail("temporarily_unavailable", "too many authorizations are waiting to be exchanged; try again in a few minutes")
		return
	case err != nil:
		fail("server_error", "the authorization could not be recorded")
		return
	}
	u, _ := url.Parse(redirect)
	v := u.Query()
	v.Set("code", code)
	if st := q.Get("state"); st != "" {
		v.Set("state", st)
	}
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// errTooManyCodes: the codes outstanding are at one of the consent page's bounds.
var errTooManyCodes = errors.New("too many authorization codes outstanding")

// issueCode records a new code for c, unless too many are outstanding, and answers it. The
// expired codes of the platform are deleted first, so that what is stored is what is counted.
func (s *oauthServer) issueCode(r *http.Request, c oauthCode) (string, error) {
	ctx := r.Context()
	address, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		address = r.RemoteAddr
	}
	if err := s.cfg.State.Purge(ctx, s.platform, oauthCodeKind); err != nil {
		return "", err
	}
	for _, bound := range []struct {
		address string
		max     int
	}{{address, oauthMaxCodesPerAddress}, {"", oauthMaxCodesOutstanding}} {
		n, err := s.cfg.State.Count(ctx, s.platform, oauthCodeKind, bound.address)
		if err != nil {
			return "", err
		}
		if n >= bound.max {
			return "", errTooManyCodes
		}
	}
	code := oauthRandom()
	err = s.cfg.State.Update(ctx, func(tx Tx) error {
		return Save(tx, Record{Key: s.codeKey(code), Account: address, Expires: s.cfg.Now().Add(oauthCodeTTL)}, c)
	})
	return code, err
}

// takeCode reads the code's record and deletes it: a code works once, even a refused attempt
// spends it.
func (s *oauthServer) takeCode(ctx context.Context, code string) (c oauthCode, found bool, err error) {
	err = s.cfg.State.Update(ctx, func(tx Tx) error {
		var rec Record
		c, rec, found, err = LoadTx[oauthCode](tx, s.codeKey(code))
		if err != nil || !found {
			return err
		}
		return tx.Delete(rec.Key)
	})
	return c, found, err
}

// client checks the client credentials of a token request, the way the dialect takes them.
func (s *oauthServer) client(r *http.Request) bool {
	id, secret, basic := r.BasicAuth()
	if !basic {
		if s.dialect.basicOnly {
			return false
		}
		id, secret = r.PostFormValue(s.dialect.clientParam), r.PostFormValue("client_secret")
		if s.dialect.style == "meta" {
			id, secret = r.FormValue("client_id"), r.FormValue("client_secret")
		}
	}
	return id == sandboxtoken.ClientID && hmac.Equal([]byte(secret), []byte(s.cfg.Mint.ClientSecret()))
}

func (s *oauthServer) exchange(w http.ResponseWriter, r *http.Request) {
	d := s.dialect
	if d.namedAgent && LibraryUserAgent(r.Header.Get("User-Agent")) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"message": "Too Many Requests", "error": 429}`))
		return
	}
	if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") && d.style != "meta" {
		s.oauthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	if !s.client(r) {
		s.oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	grant := r.FormValue("grant_type")
	if d.style == "meta" && grant == "" {
		grant = "authorization_code"
	}
	switch grant {
	case "authorization_code":
		c, ok, err := s.takeCode(r.Context(), r.FormValue("code"))
		switch {
		case err != nil:
			s.oauthError(w, http.StatusInternalServerError, "server_error", "the authorization code could not be read")
			return
		case !ok:
			s.oauthError(w, http.StatusBadRequest, "invalid_grant", "the authorization code is invalid, expired or already used")
			return
		case r.FormValue("redirect_uri") != c.RedirectURI:
			s.oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri does not match the authorization request")
			return
		case c.Challenge != "" && !oauthPKCEMatches(c.Challenge, r.FormValue("code_verifier")):
			s.oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
			return
		}
		s.issue(w, c.Account, c.Scope, d.refresh && (c.Offline || !d.offlineOnly), "")
	case "refresh_token":
		if !d.refresh {
			s.oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "refresh_token is not supported")
			return
		}
		old := r.FormValue("refresh_token")
		account, ok := s.cfg.Mint.RefreshAccount(old)
		if !ok {
			s.oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is invalid or revoked")
			return
		}
		keep := old
		if d.rotate {
			keep = ""
		}
		s.issue(w, account, r.FormValue("scope"), true, keep)
	default:
		s.oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
	}
}

// issue answers a token response in the dialect; keepRefresh, when set, is returned instead of a
// new refresh token (platforms that do not rotate).
func (s *oauthServer) issue(w http.ResponseWriter, account, scope string, withRefresh bool, keepRefresh string) {
	d := s.dialect
	now := s.cfg.Now()
	body := map[string]any{
		"access_token": s.cfg.Mint.Access(account, now.Add(d.accessTTL)),
		"token_type":   "bearer",
		"expires_in":   int(d.accessTTL / time.Second),
	}
	if d.style != "meta" {
		body["token_type"] = "Bearer"
		body["scope"] = scope
	}
	if withRefresh {
		rt := keepRefresh
		if rt == "" {
			rt = s.cfg.Mint.Refresh(account)
		}
		body["refresh_token"] = rt
		body["refresh_token_expires_in"] = int((365 * 24 * time.Hour) / time.Second)
	}
	if d.style == "tiktok" {
		body["open_id"] = account
		body["refresh_expires_in"] = body["refresh_token_expires_in"]
		delete(body, "refresh_token_expires_in")
	}
	if d.style == "meta" && d.metaRefreshPath != "" {
		body["user_id"] = account // Threads answers the user id with the code exchange
	}
	oauthJSON(w, http.StatusOK, body)
}

// metaLongLived answers Meta's long-lived token exchange (short → 60 days) and refresh (a
// long-lived token still valid → a new 60 days).
func (s *oauthServer) metaLongLived(w http.ResponseWriter, r *http.Request, refresh bool) {
	d := s.dialect
	param := d.exchangeParam
	if refresh {
		param = "access_token"
		if r.FormValue("grant_type") != d.metaRefreshGrant {
			s.oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type must be "+d.metaRefreshGrant)
			return
		}
	} else if id := r.FormValue("client_id"); (id != "" && id != sandboxtoken.ClientID) ||
		!hmac.Equal([]byte(r.FormValue("client_secret")), []byte(s.cfg.Mint.ClientSecret())) {
		// Threads' exchange takes the secret alone; Facebook's the id and the secret.
		s.oauthError(w, http.StatusBadRequest, "invalid_client", "client_secret is invalid")
		return
	}
	account, exp, ok := s.cfg.Mint.ParseAccessToken(r.FormValue(param))
	if !ok || (!exp.IsZero() && s.cfg.Now().After(exp)) {
		s.oauthError(w, http.StatusBadRequest, "invalid_token", "Error validating access token: Session has expired or the token is invalid")
		return
	}
	oauthJSON(w, http.StatusOK, map[string]any{
		"access_token": s.cfg.Mint.Access(account, s.cfg.Now().Add(d.longTTL)),
		"token_type":   "bearer",
		"expires_in":   int(d.longTTL / time.Second),
	})
}

// oauthError answers an error in the dialect: RFC 6749's shape, TikTok's (the same plus a
// log_id), or Meta's Graph error envelope.
func (s *oauthServer) oauthError(w http.ResponseWriter, status int, code, desc string) {
	switch s.dialect.style {
	case "meta":
		graphCode, status := 100, http.StatusBadRequest
		switch code {
		case "invalid_token":
			graphCode = 190
		case "server_error":
			graphCode, status = 2, http.StatusInternalServerError
		}
		oauthJSON(w, status, map[string]any{"error": map[string]any{
			"message": desc, "type": "OAuthException", "code": graphCode, "fbtrace_id": oauthRandom()[:12]}})
	case "tiktok":
		oauthJSON(w, status, map[string]any{"error": code, "error_description": desc, "log_id": oauthRandom()[:16]})
	default:
		oauthJSON(w, status, map[string]any{"error": code, "error_description": desc})
	}
}

func oauthPKCEMatches(challenge, verifier string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return hmac.Equal([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge))
}

func oauthRandom() string { return base64.RawURLEncoding.EncodeToString(RandomBytes(24)) }

func oauthJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// LibraryUserAgent reports whether ua names no application: empty, or the default of Go's HTTP
// client. Platforms that ask for a descriptive User-Agent (Reddit) refuse or throttle those.
func LibraryUserAgent(ua string) bool {
	return ua == "" || strings.HasPrefix(ua, "Go-http-client/")
}
