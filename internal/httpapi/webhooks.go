package httpapi

import (
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

type webhookJSON struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"created_at"`
	// Status is active or disabled; a disabled webhook records no events.
	Status         string     `json:"status"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason *string    `json:"disabled_reason"`
}

func toWebhookJSON(w store.Webhook) webhookJSON {
	out := webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, CreatedAt: w.CreatedAt, Status: "active"}
	if w.DisabledAt != nil {
		out.Status, out.DisabledAt, out.DisabledReason = "disabled", w.DisabledAt, &w.DisabledReason
	}
	return out
}

type webhookDeliveryJSON struct {
	ID             string     `json:"id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      *string    `json:"last_error"`
	CreatedAt      time.Time  `json:"created_at"`
	DeliveredAt    *time.Time `json:"delivered_at"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
}

func toWebhookDeliveryJSON(d store.WebhookDelivery) webhookDeliveryJSON {
	out := webhookDeliveryJSON{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status,
		Attempts: d.Attempts, LastStatusCode: d.LastStatusCode, LastError: nullable(d.LastError),
		CreatedAt: d.CreatedAt, DeliveredAt: d.DeliveredAt}
	if d.Status == store.WebhookPending {
		// Only a pending delivery has a next attempt.
		out.NextAttemptAt = d.NextAttemptAt
	}
	return out
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	hooks, err := s.webhooks.List(r.Context(), mustPrincipal(r).AccountID)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(hooks))
	for i, h := range hooks {
		out[i] = toWebhookJSON(h)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "webhooks": out})
	return nil
}

// createWebhook registers a URL for events and answers its signing secret, once.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	hook, secretText, err := s.webhooks.Register(r.Context(), mustPrincipal(r).AccountID, req.URL, req.Events)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "webhook": toWebhookJSON(hook), "secret": secretText})
	return nil
}

// updateWebhook enables a webhook again (one that was disabled because its receiver failed
// for days, or said 410 Gone), or disables it.
func (s *Server) updateWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var req struct {
		Enabled *bool `json:"enabled"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Enabled == nil {
		return apierr.Field("enabled", "is required: true to enable the webhook, false to disable it")
	}
	hook, err := s.webhooks.SetEnabled(r.Context(), mustPrincipal(r).AccountID, id, *req.Enabled)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "webhook": toWebhookJSON(hook)})
	return nil
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.webhooks.Delete(r.Context(), mustPrincipal(r).AccountID, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
	return nil
}

// listWebhookDeliveries is a webhook's delivery log, newest first, paged like GET /posts.
func (s *Server) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	limit, err := limitQuery(r, 20, 100)
	if err != nil {
		return err
	}
	ds, next, err := s.webhooks.Deliveries(r.Context(), mustPrincipal(r).AccountID, id, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	out := make([]webhookDeliveryJSON, len(ds))
	for i, d := range ds {
		out[i] = toWebhookDeliveryJSON(d)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "deliveries": out, "next_cursor": next})
	return nil
}
