package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/store"
)

// Signing in at the OIDC issuer: the authorization code flow with PKCE and a nonce. What the
// flow must remember between leaving for the issuer and coming back (state, nonce, PKCE
// verifier, where to go next) travels in a short-lived cookie sealed with the server's key.

const (
	oidcCookie   = "reelay_oidc"
	oidcFlowTTL  = 10 * time.Minute
	oidcCallback = "/signin/oidc/callback"
)

// oidcFlow is a sign-in at the issuer in progress.
type oidcFlow struct {
	State    string    `json:"state"`
	Nonce    string    `json:"nonce"`
	Verifier string    `json:"verifier"`
	Next     string    `json:"next"`
	Expires  time.Time `json:"expires"`
}

var oidcFlowAD = []byte("reelay web oidc flow")

// oidcEnabled says the sign-in page offers the issuer.
func (h *Handler) oidcEnabled() bool {
	return h.o.OIDC != nil && h.o.OIDCClientID != "" && h.o.Box != nil
}

// oidcStart sends the browser to the issuer's authorization endpoint. The form is guarded
// like the key sign-in form (double-submit token and origin), so that no other site can start
// a sign-in in the user's browser.
func (h *Handler) oidcStart(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !h.oidcEnabled() {
		h.renderError(w, r, nil, http.StatusNotFound, "Signing in with an identity provider is not configured on this server.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	c, err := r.Cookie(signinCookie)
	form := r.PostFormValue(csrfField)
	if !h.sameOrigin(r) || err != nil || form == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		h.fail(w, r, errCSRF)
		return
	}
	authURL, _, err := h.o.OIDC.Endpoints(r.Context())
	if err != nil {
		logger(r).Warn("identity provider unavailable", "error", err)
		h.signinError(w, r, http.StatusServiceUnavailable, safeNext(r.PostFormValue("next")),
			"The identity provider cannot be reached right now. Try again shortly, or sign in with an API key.")
		return
	}
	flow := oidcFlow{State: newToken(), Nonce: newToken(), Verifier: newToken(), Next: safeNext(r.PostFormValue("next")),
		Expires: h.o.Now().Add(oidcFlowTTL)}
	raw, _ := json.Marshal(flow)
	h.setCookie(w, r, oidcCookie, base64.RawURLEncoding.EncodeToString(h.o.Box.Seal(raw, oidcFlowAD)), int(oidcFlowTTL.Seconds()))
	challenge := sha256.Sum256([]byte(flow.Verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {h.o.OIDCClientID}, "redirect_uri": {h.oidcRedirectURI(r)},
		"scope": {"openid profile email"}, "state": {flow.State}, "nonce": {flow.Nonce},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(challenge[:])}, "code_challenge_method": {"S256"}}
	sep := "?"
	if strings.Contains(authURL, "?") {
		sep = "&"
	}
	http.Redirect(w, r, authURL+sep+q.Encode(), http.StatusSeeOther)
}

func (h *Handler) oidcRedirectURI(r *http.Request) string {
	base := h.o.PublicURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return base + oidcCallback
}

// oidcReturn finishes the sign-in: the state must be the one this browser left with, the code
// is exchanged (with the PKCE verifier) for an ID token, which must be the issuer's, for this
// client, with this sign-in's nonce; its subject must be linked to an account (or one is made
// when the server creates accounts for new subjects).
func (h *Handler) oidcReturn(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !h.oidcEnabled() {
		h.renderError(w, r, nil, http.StatusNotFound, "Signing in with an identity provider is not configured on this server.")
		return
	}
	flow, ok := h.readFlow(r)
	h.clearCookie(w, r, oidcCookie)
	q := r.URL.Query()
	if !ok || q.Get("state") == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(flow.State)) != 1 {
		h.signinError(w, r, http.StatusBadRequest, "/", "This sign-in link is not valid here or has expired. Start again.")
		return
	}
	if e := q.Get("error"); e != "" {
		msg := "The identity provider did not sign you in (" + e
		if d := q.Get("error_description"); d != "" {
			msg += ": " + d
		}
		h.signinError(w, r, http.StatusUnauthorized, flow.Next, msg+").")
		return
	}
	idToken, err := h.exchangeCode(r, q.Get("code"), flow.Verifier)
	if err != nil {
		logger(r).Warn("OIDC code exchange failed", "error", err)
		h.signinError(w, r, http.StatusBadGateway, flow.Next, "The identity provider did not complete the sign-in. Start again.")
		return
	}
	ident, err := h.o.OIDC.VerifyIDToken(r.Context(), idToken, flow.Nonce)
	if err != nil {
		logger(r).Warn("OIDC ID token refused", "error", err)
		h.signinError(w, r, http.StatusUnauthorized, flow.Next, "The identity provider's answer could not be verified. Start again.")
		return
	}
	accountID, created, err := auth.AccountForIdentity(r.Context(), h.o.Store, ident, h.o.OIDCAutoCreate)
	if errors.Is(err, store.ErrNotFound) {
		h.signinError(w, r, http.StatusForbidden, flow.Next,
			"No reelay account is linked to this identity. An operator links one with `reelay accounts create --oidc-subject`.")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if created {
		logger(r).Info("account created for a new OIDC subject", "account_id", accountID)
	}
	if err := h.openSession(w, r, accountID, ""); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, flow.Next, http.StatusSeeOther)
}

func (h *Handler) readFlow(r *http.Request) (oidcFlow, bool) {
	c, err := r.Cookie(oidcCookie)
	if err != nil {
		return oidcFlow{}, false
	}
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return oidcFlow{}, false
	}
	raw, err := h.o.Box.Open(sealed, oidcFlowAD)
	if err != nil {
		return oidcFlow{}, false
	}
	var f oidcFlow
	if json.Unmarshal(raw, &f) != nil || h.o.Now().After(f.Expires) {
		return oidcFlow{}, false
	}
	f.Next = safeNext(f.Next)
	return f, true
}

// exchangeCode trades the authorization code for the ID token at the token endpoint
// (client_secret_basic when the client has a secret; PKCE always).
func (h *Handler) exchangeCode(r *http.Request, code, verifier string) (string, error) {
	if code == "" {
		return "", errors.New("no authorization code")
	}
	_, tokenURL, err := h.o.OIDC.Endpoints(r.Context())
	if err != nil {
		return "", err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {h.oidcRedirectURI(r)},
		"code_verifier": {verifier}, "client_id": {h.o.OIDCClientID}}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if h.o.OIDCClientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(h.o.OIDCClientID), url.QueryEscape(h.o.OIDCClientSecret))
	}
	client := h.o.OIDCHTTPClient
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	res, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("token endpoint: %w", err)
	}
	defer res.Body.Close()
	var out struct {
		IDToken          string `json:"id_token"`
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&out); err != nil {
		return "", fmt.Errorf("token endpoint answered %d, not JSON: %w", res.StatusCode, err)
	}
	if res.StatusCode != http.StatusOK || out.IDToken == "" {
		return "", fmt.Errorf("token endpoint answered %d: %s %s", res.StatusCode, out.Error, out.ErrorDescription)
	}
	return out.IDToken, nil
}
