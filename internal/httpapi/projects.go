package httpapi

import (
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

type projectJSON struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
}

func toProjectJSON(p store.Project) projectJSON {
	return projectJSON{ID: p.ID, Name: p.Name, Description: p.Description, CreatedAt: p.CreatedAt}
}

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	projects, err := s.store.ListProjects(r.Context(), mustPrincipal(r).AccountID)
	if err != nil {
		return err
	}
	out := make([]projectJSON, len(projects))
	for i, p := range projects {
		out[i] = toProjectJSON(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "projects": out})
	return nil
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	var f apierr.Fields
	checkName(&f, "name", req.Name, 100)
	checkText(&f, "description", req.Description, 1000)
	if err := f.Err(); err != nil {
		return err
	}
	p, err := s.store.CreateProject(r.Context(), mustPrincipal(r).AccountID, req.Name, req.Description)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "project": toProjectJSON(p)})
	return nil
}
