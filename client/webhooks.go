package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// Webhook event types.
const (
	EventPostScheduled          = "post.scheduled"
	EventPostPublished          = "post.published"
	EventPostPartiallyPublished = "post.partially_published"
	EventPostFailed             = "post.failed"
	EventChannelReauthRequired  = "channel.reauth_required"
	// EventChannelCheckFailed: a channel's health check failed for a reason other than its
	// token, the first time (until a check passes again).
	EventChannelCheckFailed = "channel.check_failed"
)

// Webhook is a URL that receives events, signed per the Standard Webhooks convention.
type Webhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"created_at"`
	// Status is "active" or "disabled": reelay disables a webhook whose receiver answered
	// 410 Gone or took no delivery for 5 days, and a disabled one records no events
	// (SetWebhookEnabled enables it again).
	Status         string     `json:"status"`
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason *string    `json:"disabled_reason"`
}

type webhookResponse struct {
	Webhook Webhook `json:"webhook"`
}

type updateWebhookRequest struct {
	Enabled bool `json:"enabled"`
}

// CreateWebhookRequest registers a public http(s) URL for some events (Event*).
type CreateWebhookRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

// WebhookCreated is a new webhook with its signing secret ("whsec_…"), shown this once.
type WebhookCreated struct {
	Webhook Webhook `json:"webhook"`
	Secret  string  `json:"secret"`
}

type webhookList struct {
	Webhooks []Webhook `json:"webhooks"`
}

// WebhookDelivery is one event sent (or being sent) to one webhook.
type WebhookDelivery struct {
	ID string `json:"id"`
	// EventID is the webhook-id header of every attempt: receivers deduplicate on it.
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// Status is "pending" while attempts remain, "delivered" after a 2xx, "failed" once they
	// are exhausted or the receiver answered 410.
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	// LastStatusCode is nil before the first attempt or when the receiver did not answer.
	LastStatusCode *int `json:"last_status_code"`
	// LastError is why the last attempt failed; empty when it did not.
	LastError     string     `json:"last_error"`
	CreatedAt     time.Time  `json:"created_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
}

// DeliveryList is a page of a webhook's deliveries, newest first.
type DeliveryList struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
	NextCursor string            `json:"next_cursor"`
}

// CreateWebhook registers a webhook (at most the server's cap per account, 20 by default: 409
// limit_reached beyond).
func (c *Client) CreateWebhook(ctx context.Context, req CreateWebhookRequest) (*WebhookCreated, error) {
	var out WebhookCreated
	if _, err := c.post(ctx, "/webhooks", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListWebhooks answers the account's webhooks (without their secrets).
func (c *Client) ListWebhooks(ctx context.Context) ([]Webhook, error) {
	var out webhookList
	if err := c.get(ctx, "/webhooks", nil, &out); err != nil {
		return nil, err
	}
	return out.Webhooks, nil
}

// SetWebhookEnabled enables a webhook again, for the events that come after, or disables it.
func (c *Client) SetWebhookEnabled(ctx context.Context, id string, enabled bool) (*Webhook, error) {
	path, err := idPath("/webhooks", id, "")
	if err != nil {
		return nil, err
	}
	var out webhookResponse
	// It sets a value, so sending it twice changes nothing more.
	body := updateWebhookRequest{Enabled: enabled}
	if _, err := c.send(ctx, &call{method: http.MethodPatch, path: path, body: body, safety: idempotent}, &out); err != nil {
		return nil, err
	}
	return &out.Webhook, nil
}

// DeleteWebhook stops deliveries to a webhook; pending retries are dropped.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	path, err := idPath("/webhooks", id, "")
	if err != nil {
		return err
	}
	return c.remove(ctx, path, id)
}

// WebhookDeliveries answers a page of a webhook's delivery log.
func (c *Client) WebhookDeliveries(ctx context.Context, id string, params ListParams) (*DeliveryList, error) {
	path, err := idPath("/webhooks", id, "/deliveries")
	if err != nil {
		return nil, err
	}
	var out DeliveryList
	if err := c.get(ctx, path, encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllWebhookDeliveries walks a webhook's whole delivery log.
func (c *Client) AllWebhookDeliveries(ctx context.Context, id string, params ListParams) iter.Seq2[WebhookDelivery, error] {
	return pages(ctx, params.Cursor, func(ctx context.Context, cursor string) ([]WebhookDelivery, string, error) {
		p := params
		p.Cursor = cursor
		l, err := c.WebhookDeliveries(ctx, id, p)
		if err != nil {
			return nil, "", err
		}
		return l.Deliveries, l.NextCursor, nil
	})
}
