package httpapi

import (
	"context"
	"net/http"
	"time"
)

// healthz says the process is alive; it checks nothing else, so that an orchestrator does not
// restart a process only because its database is away.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz says whether the process can serve: database reachable, schema current, and not
// stopping. A stopping process answers 503 while it still serves what it is sent (see Drain),
// so that load balancers send the next requests elsewhere before its listener closes.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if d := drainOf(r.Context()); d != nil {
		d.probed.Store(time.Now().UnixNano())
		if d.began() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "stopping", "checks": map[string]string{}})
			return nil
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	checks := map[string]string{}
	status, code := "ok", http.StatusOK
	for name, err := range s.store.Ready(ctx) {
		if err != nil {
			// The cause goes to the log only: this answer is for anyone, and a database's
			// error names its host and port.
			s.log.Warn("not ready", "check", name, "error", err)
			checks[name] = "unavailable"
			status, code = "unavailable", http.StatusServiceUnavailable
			continue
		}
		checks[name] = "ok"
	}
	writeJSON(w, code, map[string]any{"status": status, "checks": checks})
	return nil
}

func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(s.openapiJSON)
	return err
}
