package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/webhooks"
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
	hooks, err := h.o.Store.ListWebhooks(r.Context(), s.AccountID)
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

// createWebhook registers a webhook (webhooks.Register, as POST /api/v1/webhooks does) and
// shows its signing secret once, on the answer to the form.
func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, s *session) error {
	d := webhooksData{URL: strings.TrimSpace(r.PostFormValue("url")), Chosen: map[string]bool{}}
	events := []string{}
	for _, e := range r.PostForm["events"] {
		events = append(events, e)
		d.Chosen[e] = true
	}
	hook, secretText, err := webhooks.Register(r.Context(), h.o.Store, h.o.Box, h.o.WebhookPolicy, s.AccountID, d.URL, events)
	var ae *apierr.Error
	if errors.As(err, &ae) && ae.Status < 500 {
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
	err := h.o.Store.DeleteWebhook(r.Context(), s.AccountID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("webhook")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/webhooks?done=webhook_deleted", http.StatusSeeOther)
	return nil
}

// enableWebhook enables a webhook reelay disabled (its receiver failed for days or said 410
// Gone), for the events that come after.
func (h *Handler) enableWebhook(w http.ResponseWriter, r *http.Request, s *session) error {
	_, err := h.o.Store.SetWebhookEnabled(r.Context(), s.AccountID, r.PathValue("id"), true)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("webhook")
	}
	if err != nil {
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
	hook, err := h.o.Store.GetWebhook(r.Context(), s.AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("webhook")
	}
	if err != nil {
		return err
	}
	d := deliveriesData{Hook: hook}
	filter := store.DeliveryFilter{Limit: deliveriesPerPage + 1}
	if c := r.URL.Query().Get("cursor"); c != "" {
		t, cid, ok := store.DecodeCursor(c)
		if !ok {
			return apierr.Field("cursor", "is not a page this server handed out")
		}
		filter.AfterTime, filter.AfterID = &t, cid
		d.First = "/webhooks/" + hook.ID
	}
	ds, err := h.o.Store.ListWebhookDeliveries(r.Context(), s.AccountID, hook.ID, filter)
	if err != nil {
		return err
	}
	ds, next := store.Page(ds, deliveriesPerPage, func(d store.WebhookDelivery) (time.Time, string) { return d.CreatedAt, d.ID })
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
