package web

import (
	"net/http"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

type webhooksData struct {
	Hooks  []store.Webhook
	Events []string
	// Form is what the form was sent with, shown again with Errors beside its fields.
	URL    string
	Chosen map[string]bool
	Errors map[string]string
	Error  string
	// Created is the webhook just registered; Secret its signing secret, shown this once.
	Created *store.Webhook
	Secret  string
	Notice  string
}

func (h *Handler) renderWebhooks(w http.ResponseWriter, r *http.Request, s *session, status int, d webhooksData) error {
	hooks, err := h.webhooks.List(r.Context(), s.AccountID)
	if err != nil {
		return err
	}
	d.Hooks, d.Events = hooks, store.WebhookEvents
	if d.Chosen == nil {
		d.Chosen = map[string]bool{store.EventPostPublished: true, store.EventPostFailed: true}
	}
	p, err := h.pageFor(r, s, "Webhooks", "webhooks", d)
	if err != nil {
		return err
	}
	h.render(w, r, status, "webhooks", p)
	return nil
}

// webhooksPage lists the account's webhooks and the form that registers one.
func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request, s *session) error {
	return h.renderWebhooks(w, r, s, http.StatusOK, webhooksData{Notice: notices[r.URL.Query().Get("done")]})
}

// createWebhook registers a webhook (webhooks.Service, as POST /api/v1/webhooks does) and
// shows its signing secret once, on the answer to the form.
func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, s *session) error {
	d := webhooksData{URL: strings.TrimSpace(r.PostFormValue("url")), Chosen: map[string]bool{}}
	events := []string{}
	for _, e := range r.PostForm["events"] {
		events = append(events, e)
		d.Chosen[e] = true
	}
	hook, secretText, err := h.webhooks.Register(r.Context(), s.AccountID, d.URL, events)
	if ae := refusal(err); ae != nil {
		d.Errors, d.Error = ae.Fields, "The webhook was not registered."
		if len(ae.Fields) == 0 {
			d.Error += " " + ae.Message
		}
		if ae.Code == apierr.CodeLimitReached {
			d.Error = pageSentence(ae)
		}
		return h.renderWebhooks(w, r, s, ae.Status, d)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return h.renderWebhooks(w, r, s, http.StatusCreated, webhooksData{Created: &hook, Secret: secretText})
}

// deleteWebhook removes one of the account's webhooks.
func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.webhooks.Delete(r.Context(), s.AccountID, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/webhooks?done=webhook_deleted", http.StatusSeeOther)
	return nil
}

// enableWebhook enables a webhook reelay disabled (its receiver failed for days or said 410
// Gone), for the events that come after.
func (h *Handler) enableWebhook(w http.ResponseWriter, r *http.Request, s *session) error {
	if _, err := h.webhooks.SetEnabled(r.Context(), s.AccountID, r.PathValue("id"), true); err != nil {
		return err
	}
	http.Redirect(w, r, "/webhooks?done=webhook_enabled", http.StatusSeeOther)
	return nil
}

const deliveriesPerPage = 25

type deliveriesData struct {
	Hook       store.Webhook
	Deliveries []store.WebhookDelivery
	Next       string
	First      string
}

// webhookPage is a webhook's delivery log, newest first, paged like the posts.
func (h *Handler) webhookPage(w http.ResponseWriter, r *http.Request, s *session) error {
	id := r.PathValue("id")
	hook, err := h.webhooks.Get(r.Context(), s.AccountID, id)
	if err != nil {
		return err
	}
	d := deliveriesData{Hook: hook}
	cursor := r.URL.Query().Get("cursor")
	if cursor != "" {
		d.First = "/webhooks/" + hook.ID
	}
	ds, next, err := h.webhooks.Deliveries(r.Context(), s.AccountID, hook.ID, cursor, deliveriesPerPage)
	if err != nil {
		return err
	}
	d.Deliveries = ds
	if next != nil {
		d.Next = "/webhooks/" + hook.ID + "?cursor=" + *next
	}
	p, err := h.pageFor(r, s, "Webhook deliveries", "webhooks", d)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "webhook", p)
	return nil
}
