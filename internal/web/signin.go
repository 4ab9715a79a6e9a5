package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/store"
)

type signinData struct {
	Next   string
	Token  string // the double-submit token of the sign-in form
	Error  string
	Notice string
	// OIDC offers signing in at the identity provider named OIDCName.
	OIDC     bool
	OIDCName string
}

// signinPage shows the sign-in form. It sets the form's double-submit cookie, which guards the
// form against login CSRF (a site signing a visitor into the attacker's account).
func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	d := signinData{Next: safeNext(r.URL.Query().Get("next")), Token: h.signinToken(w, r), OIDC: h.oidcEnabled(), OIDCName: h.o.OIDCName}
	if r.URL.Query().Get("signed_out") == "1" {
		d.Notice = "You are signed out."
	} else if d.Next != "/" {
		d.Notice = "Sign in to continue."
	}
	h.render(w, r, http.StatusOK, "signin", page{Title: "Sign in", Data: d})
}

func (h *Handler) signinToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(signinCookie); err == nil && len(c.Value) >= 32 && len(c.Value) <= 64 {
		return c.Value
	}
	t := newToken()
	h.setCookie(w, r, signinCookie, t, 3600)
	return t
}

// signin checks the API key and opens a session. The key is read from the form body only and
// never written anywhere: not into the page (a failed attempt shows an empty field), not into
// a log, not into a URL.
func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.renderError(w, r, nil, http.StatusBadRequest, "The sign-in form could not be read.")
		return
	}
	c, err := r.Cookie(signinCookie)
	form := r.PostForm.Get(csrfField)
	if !h.sameOrigin(r) || err != nil || form == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(form)) != 1 {
		h.fail(w, r, errCSRF)
		return
	}
	d := signinData{Next: safeNext(r.PostForm.Get("next")), Token: c.Value, OIDC: h.oidcEnabled(), OIDCName: h.o.OIDCName}
	key := strings.TrimSpace(r.PostForm.Get("api_key"))
	if key == "" {
		d.Error = "Enter an API key."
		h.render(w, r, http.StatusBadRequest, "signin", page{Title: "Sign in", Data: d})
		return
	}
	var owner store.KeyOwner
	if auth.LooksLikeKey(key) {
		owner, err = h.o.Store.LookupAPIKey(r.Context(), auth.HashKey(key))
	} else {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		d.Error = "That is not a valid API key, or it has been revoked. Keys start with " + auth.KeyPrefix + "."
		h.render(w, r, http.StatusUnauthorized, "signin", page{Title: "Sign in", Data: d})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.openSession(w, r, owner.AccountID, owner.KeyID); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
}

// openSession signs the browser in to accountID (keyID is the key it signed in with, "" for
// an identity provider): a new session, its token in the cookie.
func (h *Handler) openSession(w http.ResponseWriter, r *http.Request, accountID, keyID string) error {
	token := newToken()
	now := h.o.Now()
	ws, err := h.o.Store.CreateWebSession(r.Context(), store.NewWebSession{TokenHash: hashToken(token),
		AccountID: accountID, APIKeyID: keyID, ExpiresAt: now.Add(h.o.SessionIdle), MaxExpiresAt: now.Add(h.o.SessionMax)})
	if err != nil {
		return err
	}
	logger(r).Info("signed in to the dashboard", "account_id", accountID, "api_key_id", keyID, "session_id", ws.ID)
	h.setCookie(w, r, sessionCookie, token, int(h.o.SessionMax.Seconds()))
	h.clearCookie(w, r, signinCookie)
	return nil
}

// signinError shows the sign-in page with a message (a failed sign-in at the identity
// provider).
func (h *Handler) signinError(w http.ResponseWriter, r *http.Request, status int, next, message string) {
	d := signinData{Next: safeNext(next), Token: h.signinToken(w, r), Error: message, OIDC: h.oidcEnabled(), OIDCName: h.o.OIDCName}
	h.render(w, r, status, "signin", page{Title: "Sign in", Data: d})
}

// signout ends the session.
func (h *Handler) signout(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.o.Store.DeleteWebSession(r.Context(), hashToken(s.token)); err != nil {
		return err
	}
	h.clearCookie(w, r, sessionCookie)
	http.Redirect(w, r, "/signin?signed_out=1", http.StatusSeeOther)
	return nil
}

// switchProject is the project switcher: the session's dashboard shows the chosen project.
func (h *Handler) switchProject(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.o.Store.SetWebSessionProject(r.Context(), s.ID, s.AccountID, r.PostFormValue("project_id")); err != nil {
		return err
	}
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
	return nil
}
