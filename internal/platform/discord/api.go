package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sendonce"
	"github.com/reelay/reelay/internal/provider"
)

// Discord JSON error codes the provider tells apart (opcodes-and-status-codes#json).
const (
	codeUnknownChannel    = 10003
	codeUnknownWebhook    = 10015
	codeExplicitContent   = 20009
	codeEntityTooLarge    = 40005
	codeMissingAccess     = 50001
	codeEmptyMessage      = 50006
	codeInvalidToken      = 50027 // Invalid Webhook Token
	codeMissingPermission = 50013
	codeInvalidFormBody   = 50035
)

// Webhook is what GET /webhooks/{id}/{token} answers.
type Webhook struct {
	ID        string  `json:"id"`
	Type      int     `json:"type"`
	Name      string  `json:"name"`
	Avatar    *string `json:"avatar"`
	ChannelID string  `json:"channel_id"`
	GuildID   string  `json:"guild_id"`
}

// Channel is what GET /channels/{id} answers.
type Channel struct {
	ID      string `json:"id"`
	Type    int    `json:"type"`
	GuildID string `json:"guild_id"`
	Name    string `json:"name"`
}

// User is what GET /users/@me answers for a bot.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Bot      bool   `json:"bot"`
}

type message struct {
	ID        string `json:"id"`
	ChannelID string `json:"channel_id"`
	Content   string `json:"content"`
	Author    struct {
		ID string `json:"id"`
	} `json:"author"`
	Attachments []struct {
		ID       string `json:"id"`
		Filename string `json:"filename"`
		Size     int64  `json:"size"`
		URL      string `json:"url"`
	} `json:"attachments"`
}

// apiError is an error answer of the Discord API: {"code", "message", "errors"} or, for rate
// limits, {"message", "retry_after", "global"}. It is a definite answer: nothing was created.
type apiError struct {
	Status     int
	Code       int
	Message    string
	Detail     string // the first field error of "errors", flattened
	RetryAfter time.Duration
	Global     bool
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("Discord: %s (HTTP %d", e.Message, e.Status)
	if e.Code != 0 {
		s += fmt.Sprintf(", code %d", e.Code)
	}
	s += ")"
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// publishError classifies a Discord error.
func (e *apiError) publishError() *provider.Error {
	msg := e.Error()
	switch {
	case e.Status == http.StatusTooManyRequests:
		ra := e.RetryAfter
		if ra <= 0 {
			ra = time.Second
		}
		return provider.Transient(provider.CategoryRateLimited, e.Status, ra, "%s", msg)
	case e.Status == http.StatusRequestEntityTooLarge || e.Code == codeEntityTooLarge || e.Code == codeExplicitContent:
		return provider.Permanent(provider.CategoryMediaRejected, e.Status, "%s", msg)
	case e.Status == http.StatusUnauthorized || e.Code == codeUnknownWebhook || e.Code == codeInvalidToken:
		return provider.Permanent(provider.CategoryAuthExpired, e.Status,
			"%s: the webhook or bot token no longer works; create a new webhook (or token) and reconnect the channel", msg)
	case e.Status == http.StatusForbidden || e.Code == codeMissingAccess || e.Code == codeMissingPermission || e.Code == codeUnknownChannel:
		return provider.Permanent(provider.CategoryAuthExpired, e.Status,
			"%s: the bot cannot post in this channel; give it View Channel, Send Messages and Attach Files there", msg)
	case e.Status >= 500:
		return provider.Transient(provider.CategoryUpstreamUnavailable, e.Status, e.RetryAfter, "%s", msg)
	case e.Code == codeInvalidFormBody && (strings.Contains(e.Detail, "files") || strings.Contains(e.Detail, "attachments")):
		return provider.Permanent(provider.CategoryMediaRejected, e.Status, "%s", msg)
	case e.Status == http.StatusBadRequest || e.Code == codeEmptyMessage:
		return provider.Permanent(provider.CategoryInvalidOptions, e.Status, "%s", msg)
	case e.Status == http.StatusNotFound:
		return provider.Permanent(provider.CategoryAuthExpired, e.Status, "%s: reconnect the channel", msg)
	}
	return provider.Permanent(provider.CategoryInternal, e.Status, "%s", msg)
}

// client calls one target: a webhook (its URL carries its token) or a bot's channel.
type client struct {
	hc      *http.Client
	timeout time.Duration
	now     func() time.Time
	// webhook is the webhook URL without query; "" for a bot.
	webhook string
	// base and botToken are a bot's API base and token.
	base, botToken string
}

func (c client) request(ctx context.Context, method, u string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, provider.Permanent(provider.CategoryInvalidOptions, 0, "Discord: the channel's URL is not usable")
	}
	if c.webhook == "" {
		req.Header.Set("Authorization", "Bot "+c.botToken)
	}
	req.Header.Set("User-Agent", "DiscordBot (https://github.com/reelay/reelay, 1)")
	return req, nil
}

// get GETs a URL and decodes the answer into out.
func (c client) get(ctx context.Context, u string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := c.request(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Discord: %v", provider.WithoutURL(err))
	}
	defer resp.Body.Close()
	return c.decode(resp, out)
}

// decode reads an answer into out, or returns an *apiError, or a transient *provider.Error for
// an answer that is not Discord's JSON.
func (c client) decode(resp *http.Response, out any) error {
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "Discord: reading the answer: %v", provider.WithoutURL(err))
	}
	if resp.StatusCode/100 == 2 {
		return provider.Decode(resp, raw, out, "Discord")
	}
	var body struct {
		Code       int             `json:"code"`
		Message    string          `json:"message"`
		Errors     json.RawMessage `json:"errors"`
		RetryAfter *float64        `json:"retry_after"`
		Global     bool            `json:"global"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Message == "" {
		if resp.StatusCode == http.StatusRequestEntityTooLarge {
			return &apiError{Status: resp.StatusCode, Code: codeEntityTooLarge, Message: "Request entity too large"}
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			// Cloudflare's ban page, not JSON: still a rate limit.
			return &apiError{Status: resp.StatusCode, Message: "Too many requests", RetryAfter: headerRetryAfter(resp.Header)}
		}
		text := provider.Excerpt(raw, 200)
		var ra time.Duration
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n > 0 {
			ra = time.Duration(n) * time.Second
		}
		return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, ra,
			"Discord: unexpected answer (HTTP %d): %s", resp.StatusCode, text)
	}
	ae := &apiError{Status: resp.StatusCode, Code: body.Code, Message: body.Message, Detail: flatten(body.Errors), Global: body.Global}
	if body.RetryAfter != nil && *body.RetryAfter > 0 {
		ae.RetryAfter = time.Duration(math.Ceil(*body.RetryAfter * float64(time.Second)))
	} else if resp.StatusCode == http.StatusTooManyRequests {
		ae.RetryAfter = headerRetryAfter(resp.Header)
	} else if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && ra > 0 {
		ae.RetryAfter = time.Duration(ra) * time.Second
	}
	return ae
}

// flatten turns Discord's nested "errors" object into "field.path: message" for the first
// field errors, sorted.
func flatten(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var tree map[string]any
	if json.Unmarshal(raw, &tree) != nil {
		return ""
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "_errors" {
				if list, ok := m[k].([]any); ok {
					for _, e := range list {
						if em, ok := e.(map[string]any); ok {
							out = append(out, fmt.Sprintf("%s: %v (%v)", prefix, em["message"], em["code"]))
						}
					}
				}
				continue
			}
			if sub, ok := m[k].(map[string]any); ok {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, sub)
			}
		}
	}
	walk("", tree)
	if len(out) > 3 {
		out = out[:3]
	}
	return strings.Join(out, "; ")
}

// headerRetryAfter reads a 429's Retry-After, else X-RateLimit-Reset-After (seconds, fractional).
func headerRetryAfter(h http.Header) time.Duration {
	for _, k := range []string{"Retry-After", "X-RateLimit-Reset-After"} {
		if f, err := strconv.ParseFloat(strings.TrimSpace(h.Get(k)), 64); err == nil && f > 0 {
			return time.Duration(math.Ceil(f * float64(time.Second)))
		}
	}
	return 0
}

// create POSTs f to u through sendonce.Post. Failures: *apiError (Discord answered: nothing
// was created), *sendonce.SourceError (the media failed mid-body), *sendonce.UnknownError, or
// a transient *provider.Error for a request that never reached Discord.
func (c client) create(ctx context.Context, u string, f sendonce.Form) (message, error) {
	resp, err := sendonce.Post(ctx, c.hc, "Discord", f, func(ctx context.Context, body io.Reader) (*http.Request, error) {
		return c.request(ctx, http.MethodPost, u, body)
	})
	if err != nil {
		return message{}, err
	}
	defer resp.Body.Close()
	var msg message
	err = c.decode(resp, &msg)
	var ae *apiError
	switch {
	case err == nil && msg.ID != "":
		return msg, nil
	case err == nil:
		return message{}, &sendonce.UnknownError{Err: fmt.Errorf("Discord answered HTTP %d without the message", resp.StatusCode)}
	case errors.As(err, &ae):
		return message{}, err
	}
	return message{}, &sendonce.UnknownError{Err: err}
}
