// Package connect connects channels to reelay: by an OAuth consent (reelay's start page, which
// binds a signed, single-use state to the browser that opens it and sends that browser to the
// platform's consent page; the callback that, for that browser only, exchanges the code, names
// the account and stores the channel), by credentials a user pastes (verified against the
// platform before anything is stored), and keeps OAuth tokens alive (refreshed before expiry and on a refused token, one
// refresh at a time per channel across processes).
package connect

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// Connector connects channels.
type Connector struct {
	Store  *store.Store
	Access publish.ChannelAccess
	// Identifiers name accounts, by platform.
	Identifiers map[string]provider.Identifier
	// Checkers check channels' health (CheckChannel), by platform.
	Checkers map[string]provider.Checker
	// Clients are reelay's OAuth apps, by platform (from configuration).
	Clients map[string]Client
	// PublicURL is reelay's, where platforms send the browser back (/oauth/{platform}/callback).
	PublicURL string
	// StateKey signs the state parameters.
	StateKey []byte
	// PreviousStateKeys verify states signed before a key rotation, so that consents in
	// progress during one complete.
	PreviousStateKeys [][]byte
	// APIBases replaces the platforms' API base URLs when verifying credentials a user pasted
	// (tests point them at the simulators); "" is the provider's default, the platform's own.
	APIBases   map[string]string
	HTTPClient *http.Client
	Now        func() time.Time
}

// StateTTL is how long a consent may take.
const StateTTL = 15 * time.Minute

var errNothingToConnect = errors.New("nothing to connect")

func (c *Connector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Connector) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return http.DefaultClient
}

// RedirectURI is where platform sends the browser back after the consent (the URL to register
// with the platform's app).
func (c *Connector) RedirectURI(platformName string) string {
	return c.PublicURL + CallbackPath(platformName)
}

// CallbackPath is the path of platform's OAuth callback on reelay.
func CallbackPath(platformName string) string {
	return "/api/v1/oauth/" + platformName + "/callback"
}

// StartPath is the path of reelay's page that starts platform's consent in a browser: the link
// Begin answers leads there, never straight to the platform.
func StartPath(platformName string) string {
	return "/api/v1/oauth/" + platformName + "/start"
}

// oauthRoot is where a platform's authorization server is: the simulator's mount point for
// sandbox flows, "" (the platform's own URLs) otherwise.
func (c *Connector) oauthRoot(platformName string, sandbox bool) string {
	if sandbox {
		return c.Access.SimulatorsURL + "/sandbox/" + platformName
	}
	return ""
}

// client is the OAuth app to use: the simulator's sandbox app, or the configured one.
func (c *Connector) client(platformName string, sandbox bool) (Client, error) {
	if sandbox {
		return Client{ID: sandboxtoken.ClientID, Secret: sandboxtoken.Mint{Key: c.Access.SandboxKey, Platform: platformName}.ClientSecret()}, nil
	}
	cl, ok := c.Clients[platformName]
	if !ok || cl.ID == "" {
		up := strings.ToUpper(platformName)
		return Client{}, apierr.Newf(http.StatusBadRequest, apierr.CodeValidationFailed,
			"this server has no %s app: set REELAY_%s_CLIENT_ID and REELAY_%s_CLIENT_SECRET, connect with a token pair through POST /channels, or add sandbox=true",
			registry.DisplayName(platformName), up, up)
	}
	return cl, nil
}

// Begin starts a consent for a channel of platformName in the caller's project and returns the
// link to open in a browser: reelay's start page (StartPath), which binds the consent to that
// browser and sends it on to the platform. The project must be the caller's (checked by the
// caller).
func (c *Connector) Begin(ctx context.Context, accountID, projectID, platformName string, sandbox bool) (string, error) {
	return c.BeginReturning(ctx, accountID, projectID, platformName, sandbox, "")
}

// BeginReturning is Begin for a consent after which the browser goes back to returnTo, a path
// of this server (the web dashboard's channels page), whatever the outcome.
func (c *Connector) BeginReturning(ctx context.Context, accountID, projectID, platformName string, sandbox bool, returnTo string) (string, error) {
	if returnTo != "" && (!strings.HasPrefix(returnTo, "/") || strings.HasPrefix(returnTo, "//") || strings.Contains(returnTo, "\\")) {
		return "", fmt.Errorf("connect: return path %q is not a path of this server", returnTo)
	}
	d, ok := dialects[platformName]
	if !ok {
		return "", apierr.Newf(http.StatusBadRequest, apierr.CodeValidationFailed,
			"%s connects with credentials, not a consent: POST /channels with %s",
			registry.DisplayName(platformName), registry.CredentialsHint(platformName))
	}
	// The app is checked now, so that a server without one refuses before a link is handed out.
	if _, err := c.client(platformName, sandbox); err != nil {
		return "", err
	}
	id := randomString(18)
	st := store.OAuthState{ID: id, AccountID: accountID, ProjectID: projectID, Platform: platformName,
		Sandbox: sandbox, ExpiresAt: c.now().Add(StateTTL), ReturnTo: returnTo}
	if d.pkce {
		st.Verifier = c.Access.Box.Seal([]byte(randomString(48)), StateAD(id))
	}
	if err := c.Store.CreateOAuthState(ctx, st); err != nil {
		return "", err
	}
	return c.PublicURL + StartPath(platformName) + "?" + url.Values{"state": {c.signState(id)}}.Encode(), nil
}

// Start serves reelay's start page of a consent: it binds the flow to the browser that opens
// it and answers the platform's consent URL to send that browser to, with the cookie that
// later proves to the callback that it is the same browser. presented is that cookie's value
// when the browser already has one (the page opened again), "" otherwise. The first browser to
// open the page owns the flow; any other is refused (403), as is a forged, expired or used
// state (400): a *Refusal, with nothing bound and no cookie to set. The consent URL is built
// from the stored flow and this server's apps alone, so the page redirects nowhere else.
func (c *Connector) Start(ctx context.Context, platformName, state, presented string) (consentURL string, cookie *http.Cookie, err error) {
	d, ok := dialects[platformName]
	id, valid := c.verifyState(state)
	if !ok || !valid {
		return "", nil, &Refusal{Message: "This link is not valid: the state parameter was not issued by this server. Start the connection again."}
	}
	secret := presented
	if !wellFormedBrowserSecret(secret) {
		secret = randomString(browserSecretBytes)
	}
	st, err := c.Store.BindOAuthState(ctx, id, platformName, browserHash(secret))
	switch {
	case errors.Is(err, store.ErrConflict):
		return "", nil, &Refusal{Status: http.StatusForbidden, Message: "This link was already opened in another browser, and the connection can only be finished there. Start the connection again in this one."}
	case errors.Is(err, store.ErrNotFound):
		return "", nil, &Refusal{Message: "This link has expired or was already used. Start the connection again."}
	case err != nil:
		return "", nil, err
	}
	cl, err := c.client(platformName, st.Sandbox)
	if err != nil {
		return "", nil, err
	}
	var challenge string
	if len(st.Verifier) > 0 {
		verifier, err := c.Access.Box.Open(st.Verifier, StateAD(st.ID))
		if err != nil {
			return "", nil, fmt.Errorf("connect: PKCE verifier: %w", err)
		}
		sum := sha256.Sum256(verifier)
		challenge = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	cookie = &http.Cookie{Name: BrowserCookie(state), Value: secret, Path: cookiePath(platformName),
		Expires: st.ExpiresAt, MaxAge: max(1, int(math.Ceil(st.ExpiresAt.Sub(c.now()).Seconds()))),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(c.PublicURL, "https://")}
	return d.authCodeURL(c.oauthRoot(platformName, st.Sandbox), cl, c.RedirectURI(platformName), state, challenge), cookie, nil
}

// browserSecretBytes is the size of the secret a browser holds for a consent it started.
const browserSecretBytes = 32

// BrowserCookie is the name of the cookie that binds the consent of state to the browser that
// opened its start page ("" for a state of no consent): one per flow, so that a browser can
// run several at once. The secret is the cookie's value; the database keeps its hash.
func BrowserCookie(state string) string {
	id, _, ok := strings.Cut(state, ".")
	if !ok || id == "" || strings.ContainsFunc(id, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_')
	}) {
		return ""
	}
	return "reelay_connect_" + id
}

// ClearBrowserCookie is the cookie that removes BrowserCookie(state) from a browser, once the
// consent it bound is over.
func ClearBrowserCookie(platformName, state string) *http.Cookie {
	return &http.Cookie{Name: BrowserCookie(state), Path: cookiePath(platformName), MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode}
}

// cookiePath is where a browser sends BrowserCookie: to the callback, and to the start page, so
// that the browser that opened a link can open it again (and no other), and nowhere else.
func cookiePath(platformName string) string {
	return "/api/v1/oauth/" + platformName + "/"
}

func wellFormedBrowserSecret(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == browserSecretBytes
}

func browserHash(secret string) []byte {
	sum := sha256.Sum256([]byte("oauth-browser|" + secret))
	return sum[:]
}

// StateAD binds a consent's sealed PKCE verifier to its state.
func StateAD(id string) []byte { return []byte("oauth-state:" + id) }

// signState is the state parameter: the flow's id and a MAC, so that a forged state is refused
// before the database is asked.
func (c *Connector) signState(id string) string { return signState(c.StateKey, id) }

func signState(key []byte, id string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("oauth-state|" + id))
	return id + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}

func (c *Connector) verifyState(state string) (string, bool) {
	id, _, ok := strings.Cut(state, ".")
	if !ok {
		return id, false
	}
	for _, k := range append([][]byte{c.StateKey}, c.PreviousStateKeys...) {
		if hmac.Equal([]byte(state), []byte(signState(k, id))) {
			return id, true
		}
	}
	return id, false
}

// Refusal is a consent that cannot connect anything: the user declined, the state is forged,
// replayed or stale, the browser is not the one that started it, or the platform refused the
// code. Its message is shown to the user.
type Refusal struct {
	// Status is the HTTP status to answer with: 400 when zero, 403 for a browser that did not
	// start the consent.
	Status  int
	Message string
	Err     error
}

func (r *Refusal) Error() string { return r.Message }
func (r *Refusal) Unwrap() error { return r.Err }

// HTTPStatus is the status to answer the refusal with.
func (r *Refusal) HTTPStatus() int {
	if r.Status == 0 {
		return http.StatusBadRequest
	}
	return r.Status
}

// Callback is what the platform sent the browser back with, and the browser's own part:
// Browser is the value of its BrowserCookie(State) ("" when it sent none).
type Callback struct {
	Code, State, Error, ErrorDescription string
	Browser                              string
}

// Completion is how a callback ended beyond its channels: ReturnTo is the path the consent was
// started to return to ("" when none, or when the state is not known), and Spent says the
// state was used up (the browser's cookie for it can go).
type Completion struct {
	Channels []store.Channel
	ReturnTo string
	Spent    bool
}

// Complete finishes a consent for the browser that started it: it spends the state, exchanges
// the code, names the account(s) and stores the channel(s) (Facebook: one per Page). Failures
// are *Refusal (nothing stored), the store's 409 limit_reached when the account's cap of
// channels has no room for them (nothing stored), or transient platform errors.
func (c *Connector) Complete(ctx context.Context, platformName string, cb Callback) ([]store.Channel, error) {
	done, err := c.CompleteReturning(ctx, platformName, cb)
	return done.Channels, err
}

// CompleteReturning is Complete, also answering where the consent was to return to and
// whether its state is spent.
func (c *Connector) CompleteReturning(ctx context.Context, platformName string, cb Callback) (Completion, error) {
	var st store.OAuthState
	var done Completion
	channels, err := c.complete(ctx, platformName, cb, &st, &done.Spent)
	done.Channels, done.ReturnTo = channels, st.ReturnTo
	return done, err
}

func (c *Connector) complete(ctx context.Context, platformName string, cb Callback, consumed *store.OAuthState, spent *bool) ([]store.Channel, error) {
	id, ok := c.verifyState(cb.State)
	if !ok {
		return nil, &Refusal{Message: "This link is not valid: the state parameter was not issued by this server. Start the connection again."}
	}
	// Only the browser that opened the start page may finish: without that, whoever is sent
	// the platform's consent page would put their own account into the starter's project.
	elsewhere := &Refusal{Status: http.StatusForbidden, Message: "This connection was not started in this browser (or this browser did not keep reelay's cookie). Open the link reelay gave you in the browser you connect " +
		registry.DisplayName(platformName) + " from, and finish there."}
	if !wellFormedBrowserSecret(cb.Browser) {
		return nil, elsewhere
	}
	st, err := c.Store.ConsumeOAuthState(ctx, id, browserHash(cb.Browser))
	if err == nil {
		*consumed, *spent = st, true
	}
	if errors.Is(err, store.ErrConflict) {
		return nil, elsewhere
	}
	if errors.Is(err, store.ErrNotFound) {
		*spent = true
		return nil, &Refusal{Message: "This link has expired or was already used. Start the connection again."}
	}
	if err != nil {
		return nil, err
	}
	if st.Platform != platformName {
		return nil, &Refusal{Message: "This link was issued for " + registry.DisplayName(st.Platform) + ", not " + registry.DisplayName(platformName) + "."}
	}
	if cb.Error != "" {
		msg := cb.Error
		if cb.ErrorDescription != "" {
			msg += ": " + cb.ErrorDescription
		}
		return nil, &Refusal{Message: registry.DisplayName(platformName) + " did not grant access (" + msg + ")."}
	}
	if cb.Code == "" {
		return nil, &Refusal{Message: registry.DisplayName(platformName) + " sent no authorization code."}
	}
	var verifier string
	if len(st.Verifier) > 0 {
		plain, err := c.Access.Box.Open(st.Verifier, StateAD(st.ID))
		if err != nil {
			return nil, fmt.Errorf("connect: PKCE verifier: %w", err)
		}
		verifier = string(plain)
	}
	d := dialects[platformName]
	cl, err := c.client(platformName, st.Sandbox)
	if err != nil {
		return nil, err
	}
	tok, err := d.exchange(ctx, c.httpClient(), c.oauthRoot(platformName, st.Sandbox), cl, cb.Code, c.RedirectURI(platformName), verifier)
	if err != nil {
		if pe := provider.AsError(err); !pe.Transient {
			return nil, &Refusal{Message: registry.DisplayName(platformName) + " refused the authorization: " + pe.Message, Err: err}
		}
		return nil, err
	}
	creds := map[string]string{"access_token": tok.AccessToken}
	if tok.RefreshToken != "" {
		creds["refresh_token"] = tok.RefreshToken
	}
	draft := store.Channel{AccountID: st.AccountID, ProjectID: st.ProjectID, Platform: platformName, Sandbox: st.Sandbox,
		TokenExpiresAt: tok.expiry(c.now())}
	if !d.pages {
		ch, err := c.identifyAndSave(ctx, draft, creds)
		if err != nil {
			return nil, err
		}
		return []store.Channel{ch}, nil
	}
	ps, err := pages(ctx, c.httpClient(), c.apiBase(platformName, st.Sandbox), tok.AccessToken)
	if errors.Is(err, errNothingToConnect) {
		return nil, &Refusal{Message: strings.TrimPrefix(err.Error(), errNothingToConnect.Error()+": "), Err: err}
	}
	if err != nil {
		return nil, err
	}
	var named []store.Channel
	for _, p := range ps {
		// A Page token derived from a long-lived user token does not expire.
		pd := draft
		pd.TokenExpiresAt = nil
		ch, err := c.identify(ctx, pd, map[string]string{"access_token": p.AccessToken})
		if err != nil {
			return nil, err
		}
		named = append(named, ch)
	}
	// In one transaction: the Pages granted are connected all, or none when they do not fit
	// within the account's cap of channels.
	return c.Store.SaveChannels(ctx, named)
}

// apiBase is the platform API's base URL for the calls connect makes itself.
func (c *Connector) apiBase(platformName string, sandbox bool) string {
	if sandbox {
		return c.Access.SandboxAPIBase(platformName)
	}
	return "https://graph.facebook.com/" + graphVersion
}

// identifyAndSave names the account behind creds and stores (or reconnects) its channel.
func (c *Connector) identifyAndSave(ctx context.Context, ch store.Channel, creds map[string]string) (store.Channel, error) {
	ch, err := c.identify(ctx, ch, creds)
	if err != nil {
		return store.Channel{}, err
	}
	saved, _, err := c.Store.SaveChannel(ctx, ch)
	return saved, err
}

// identify names the account behind creds and seals them into its channel, ready to store.
func (c *Connector) identify(ctx context.Context, ch store.Channel, creds map[string]string) (store.Channel, error) {
	idf, ok := c.Identifiers[ch.Platform]
	if !ok {
		return store.Channel{}, fmt.Errorf("connect: no identifier for %s", ch.Platform)
	}
	base := ""
	if ch.Sandbox {
		base = c.Access.SandboxAPIBase(ch.Platform)
	}
	who, err := idf.Identify(ctx, base, creds)
	if err != nil {
		if pe := provider.AsError(err); !pe.Transient {
			return store.Channel{}, &Refusal{Message: registry.DisplayName(ch.Platform) + ": " + pe.Message, Err: err}
		}
		return store.Channel{}, err
	}
	ch.ExternalAccountID, ch.Name, ch.Username, ch.AvatarURL = who.ExternalID, who.Name, who.Username, who.AvatarURL
	if ch.Sandbox {
		// A simulated account is known by the id its tokens carry, whatever the platform calls
		// it (YouTube's UC… channel id, Reddit's t2_ fullname): that is how the simulator
		// records what it received and finds the channel's sandbox behaviour.
		if account, _, ok := (sandboxtoken.Mint{Key: c.Access.SandboxKey, Platform: ch.Platform}).ParseAccessToken(creds["access_token"]); ok {
			ch.ExternalAccountID = account
		}
	}
	if ch.Name == "" {
		ch.Name = registry.DisplayName(ch.Platform) + " " + who.Username
	}
	ch.Credentials = c.Access.Seal(ch, creds)
	return ch, nil
}

// Verify checks pasted credentials with the platform and names their account: what POST
// /channels stores for a token-based channel. A refused credential is a 400 naming it; a
// platform that cannot be reached a 502. It returns ok=false for a platform without an
// identifier (nothing to verify with).
func (c *Connector) Verify(ctx context.Context, platformName string, creds map[string]string) (provider.Identity, bool, error) {
	idf, ok := c.Identifiers[platformName]
	if !ok {
		return provider.Identity{}, false, nil
	}
	who, err := idf.Identify(ctx, c.APIBases[platformName], creds)
	if err != nil {
		pe := provider.AsError(err)
		if pe.Transient {
			return who, true, apierr.Newf(http.StatusBadGateway, apierr.CodeUpstreamError, "%s could not be reached to verify the credentials: %s",
				registry.DisplayName(platformName), pe.Message).Wrap(err)
		}
		return who, true, apierr.Field("credentials", fmt.Sprintf("%s refused them: %s", registry.DisplayName(platformName), pe.Message))
	}
	return who, true, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
