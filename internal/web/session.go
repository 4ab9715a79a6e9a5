package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

// The session cookie holds a random token; the store keeps its SHA-256 only. The CSRF token of
// a session is an HMAC of that token, so it is bound to the session, changes with it, and
// needs no storage. Before sign-in, the sign-in form is protected by a double-submit cookie.
const (
	sessionCookie = "reelay_session"
	signinCookie  = "reelay_signin"
	csrfField     = "csrf_token"
	csrfHeader    = "X-CSRF-Token"
)

// session is a signed-in request's session.
type session struct {
	store.WebSession
	token string // the cookie's raw token, for the CSRF token
}

// CSRF is the token every form of this session carries.
func (s *session) CSRF() string { return csrfToken(s.token) }

func csrfToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("reelay web csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(t string) []byte {
	h := sha256.Sum256([]byte(t))
	return h[:]
}

// session reads the request's session: nil when there is none or it has expired (or its key
// was revoked). A session in use past half its idle time is renewed (sliding expiry).
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, nil
	}
	now := h.o.Now()
	ws, err := h.o.Store.LookupWebSession(r.Context(), hashToken(c.Value), now)
	if errors.Is(err, store.ErrNotFound) {
		h.clearCookie(w, r, sessionCookie)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if ws.ExpiresAt.Sub(now) < h.o.SessionIdle/2 && ws.ExpiresAt.Before(ws.MaxExpiresAt) {
		if err := h.o.Store.ExtendWebSession(r.Context(), ws.ID, now.Add(h.o.SessionIdle)); err != nil {
			return nil, err
		}
	}
	return &session{WebSession: ws, token: c.Value}, nil
}

// secure says whether cookies must be Secure: the request came over TLS, or users reach this
// server by https.
func (h *Handler) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(h.o.PublicURL, "https://")
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure(r), SameSite: http.SameSiteLaxMode})
}

func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	h.setCookie(w, r, name, "", -1)
}

// errCSRF is the answer to a request that fails the CSRF checks: 403, and nothing is done.
var errCSRF = apierr.New(http.StatusForbidden, apierr.CodeForbidden,
	"This form has expired or did not come from this site. Go back, reload the page and try again.")

// checkCSRF admits an unsafe request of session s when it comes from this site (Origin, or
// else Referer, when the browser sends them) and carries the session's CSRF token in the
// X-CSRF-Token header or the csrf_token form field.
func (h *Handler) checkCSRF(r *http.Request, s *session) error {
	if !h.sameOrigin(r) {
		return errCSRF
	}
	got := r.Header.Get(csrfHeader)
	if got == "" && isURLEncodedForm(r) {
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		got = r.PostFormValue(csrfField)
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF())) != 1 {
		return errCSRF
	}
	return nil
}

func isURLEncodedForm(r *http.Request) bool {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/x-www-form-urlencoded")
}

// sameOrigin checks the Origin header, or the Referer when there is no Origin, against this
// server's origins (the request's own and the public URL's). A request with neither, which
// browsers do not make for cross-site form posts, is left to the token check.
func (h *Handler) sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		ref := r.Header.Get("Referer")
		if ref == "" {
			return true
		}
		u, err := url.Parse(ref)
		if err != nil {
			return false
		}
		origin = u.Scheme + "://" + u.Host
	}
	if origin == "null" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if strings.EqualFold(origin, scheme+"://"+r.Host) {
		return true
	}
	if pu, err := url.Parse(h.o.PublicURL); err == nil && pu.Host != "" && strings.EqualFold(origin, pu.Scheme+"://"+pu.Host) {
		return true
	}
	return false
}

// toSignin sends a browser without a session to sign in, to come back where it was going; a
// script's request (which cannot follow to a form) gets a 401 saying so.
func (h *Handler) toSignin(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(csrfHeader) != "" || strings.Contains(r.Header.Get("Accept"), "application/json") ||
		strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		writeJSONError(w, r, apierr.Unauthorized("your session has ended; sign in again"))
		return
	}
	next := r.URL.RequestURI()
	if !safeMethod(r.Method) {
		// A form posted after the session ended: come back to the page it was on.
		next = "/"
		if ref, err := url.Parse(r.Referer()); err == nil && h.sameOrigin(r) {
			next = ref.RequestURI()
		}
	}
	target := "/signin"
	if next = safeNext(next); next != "/" && next != "/posts" {
		target += "?next=" + url.QueryEscape(next)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// safeNext keeps a return path only when it stays on this site: an absolute path, not
// protocol-relative (//host), no backslashes (which browsers read as slashes), no scheme, no
// control characters; anything else is "/".
func safeNext(next string) string {
	if next == "" || len(next) > 2048 || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n\t") || strings.HasPrefix(next, "/signin") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f {
			return "/"
		}
	}
	return next
}
