package web

import (
	"net/http"
	"strings"

	"github.com/reelay/reelay/internal/store"
)

type keysData struct {
	Keys []store.APIKey
	// Created is the key just made, shown this once; CreatedName its name.
	Created     string
	CreatedName string
	// CurrentKeyID is the key this session signed in with.
	CurrentKeyID string
	Name         string
	Errors       map[string]string
	Notice       string
	Error        string
}

func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, s *session, status int, d keysData) error {
	keys, err := h.keys.List(r.Context(), s.AccountID)
	if err != nil {
		return err
	}
	d.Keys, d.CurrentKeyID = keys, s.APIKeyID
	p, err := h.pageFor(r, s, "API keys", "keys", d)
	if err != nil {
		return err
	}
	h.render(w, r, status, "keys", p)
	return nil
}

// keysPage lists the account's active keys.
func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.renderKeys(w, r, s, http.StatusOK, keysData{Notice: notices[r.URL.Query().Get("done")]})
}

// createKey mints a key and shows it once, on the answer to the form (never stored, never
// in a URL; the page is not cached).
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, s *session) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	raw, key, err := h.keys.Create(r.Context(), s.AccountID, name)
	if ae := refusal(err); ae != nil {
		d := keysData{Name: name, Errors: ae.Fields}
		if len(ae.Fields) == 0 {
			d.Error = pageSentence(ae)
		}
		return h.renderKeys(w, r, s, ae.Status, d)
	}
	if err != nil {
		return err
	}
	logger(r).Info("API key created in the dashboard", "account_id", s.AccountID, "prefix", key.Prefix)
	return h.renderKeys(w, r, s, http.StatusCreated, keysData{Created: raw, CreatedName: name})
}

// revokeKey revokes one of the account's keys; sessions signed in with it end at once (this
// one too, when it is its own key).
func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.keys.Revoke(r.Context(), s.AccountID, r.PathValue("id")); err != nil {
		return err
	}
	if r.PathValue("id") == s.APIKeyID {
		h.clearCookie(w, r, sessionCookie)
		http.Redirect(w, r, "/signin?signed_out=1", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, "/keys?done=revoked", http.StatusSeeOther)
	return nil
}
