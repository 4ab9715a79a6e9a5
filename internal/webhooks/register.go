package webhooks

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

// Register checks a webhook registration (the events known, the URL public http(s) under
// policy) and stores it with a new signing secret, sealed with box. It answers the webhook and
// the secret, which is shown once and never again. The HTTP API and the web dashboard both
// register webhooks through it. events nil means the field was left out.
func Register(ctx context.Context, st *store.Store, box *secret.Box, policy media.AddressPolicy,
	accountID, rawURL string, events []string) (store.Webhook, string, error) {
	var f apierr.Fields
	var unique []string
	switch {
	case events == nil:
		f.Add("events", "is required: a list of "+strings.Join(store.WebhookEvents, ", "))
	case len(events) == 0:
		f.Add("events", "must name at least one of "+strings.Join(store.WebhookEvents, ", "))
	}
	for _, e := range events {
		if !slices.Contains(store.WebhookEvents, e) {
			f.Addf("events", "%q is not an event; known events: %s", e, strings.Join(store.WebhookEvents, ", "))
			break
		}
		if !slices.Contains(unique, e) {
			unique = append(unique, e)
		}
	}
	target := ""
	if strings.TrimSpace(rawURL) == "" {
		f.Add("url", "is required")
	} else if u, err := CheckURL(ctx, rawURL, policy); err != nil {
		f.Add("url", err.Error())
	} else {
		target = u.String()
	}
	if err := f.Err(); err != nil {
		return store.Webhook{}, "", err
	}
	if box == nil {
		return store.Webhook{}, "", apierr.Internal(errors.New("no secret box to seal webhook secrets"))
	}
	id, secretText := uuid.NewString(), NewSecret()
	hook, err := st.CreateWebhook(ctx, store.Webhook{ID: id, AccountID: accountID, URL: target, Events: unique,
		Secret: SealSecret(box, id, secretText)})
	if err != nil {
		return store.Webhook{}, "", err
	}
	return hook, secretText, nil
}
