package httpapi

import (
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/store"
)

type apiKeyJSON struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
}

func (s *Server) toAPIKeyJSON(k store.APIKey) apiKeyJSON {
	out := apiKeyJSON{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt}
	// A use not yet written to the database is newer than what the database holds.
	if t, ok := s.usage.Pending(k.ID); ok && (out.LastUsedAt == nil || t.After(*out.LastUsedAt)) {
		t = t.UTC().Truncate(time.Microsecond)
		out.LastUsedAt = &t
	}
	return out
}

func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := s.keys.List(r.Context(), mustPrincipal(r).AccountID)
	if err != nil {
		return err
	}
	out := make([]apiKeyJSON, len(keys))
	for i, k := range keys {
		out[i] = s.toAPIKeyJSON(k)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "api_keys": out})
	return nil
}

func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	raw, k, err := s.keys.Create(r.Context(), mustPrincipal(r).AccountID, req.Name)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "api_key": s.toAPIKeyJSON(k), "key": raw})
	return nil
}

func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.keys.Revoke(r.Context(), mustPrincipal(r).AccountID, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
	return nil
}
