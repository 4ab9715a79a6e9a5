// Package metagraph is what the Meta providers (facebook, instagram, threads) share of the
// Graph API: the authenticated call (Client), Graph's error envelope (APIError), the
// classification of Graph error codes into *provider.Error categories (Classifier, with each
// platform's own codes as overrides), the wait read from Retry-After and
// X-Business-Use-Case-Usage (RetryAfter), the publishing-limit read (Client.PublishingLimit),
// the small helpers of their Step loops (Decode, Outcome, ParseTime), the container flow
// Instagram and Threads publish through (Container), and the reads of figures and comments
// (Client.Insights with Count and Breakdown, List, NotFound).
//
// The providers keep their endpoints, fields, limits and the codes only they answer with;
// Facebook keeps its own upload state machine.
package metagraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// Client calls a Graph API (graph.facebook.com, graph.instagram.com, graph.threads.net) with
// one access token. The token travels in the Authorization header, never in a URL, so that no
// logged URL carries it; POST parameters travel in a form body (captions are long, and URLs
// end up in logs).
type Client struct {
	// Platform names the platform at the head of every message ("Instagram").
	Platform string
	// BaseURL is the API root, version included, without a trailing slash.
	BaseURL string
	// Token is the access token.
	Token string
	// HTTP makes the calls.
	HTTP *http.Client
}

// New returns a client; baseURL may end with a slash.
func New(platform, baseURL, token string, hc *http.Client) Client {
	return Client{Platform: platform, BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: hc}
}

// ErrorBody is the "error" object of a Graph API error answer.
type ErrorBody struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode"`
	IsTransient bool   `json:"is_transient"`
	UserTitle   string `json:"error_user_title"`
	UserMsg     string `json:"error_user_msg"`
	FBTraceID   string `json:"fbtrace_id"`
}

// APIError is a Graph API error answer, before classification.
type APIError struct {
	Status int
	Header http.Header
	Body   ErrorBody
	Raw    string // the body, when it was not Graph's JSON
}

func (e *APIError) Error() string {
	if e.notGraph() {
		return fmt.Sprintf("HTTP %d: %s", e.Status, e.Raw)
	}
	return e.Body.Message
}

// notGraph reports whether the answer carried no Graph error object (a proxy, an outage page).
func (e *APIError) notGraph() bool { return e.Body.Code == 0 && e.Body.Message == "" }

// Code returns the Graph error code and subcode of err when it is an *APIError.
func Code(err error) (code, subcode int, ok bool) {
	var ae *APIError
	if !errors.As(err, &ae) {
		return 0, 0, false
	}
	return ae.Body.Code, ae.Body.Subcode, true
}

// Get calls GET path?q and decodes a 2xx answer into out (when not nil).
func (c Client) Get(ctx context.Context, path string, q url.Values, out any) error {
	u := c.BaseURL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return provider.Permanent(provider.CategoryInternal, 0, "%s: building GET %s: %v", c.Platform, path, err)
	}
	return c.do(req, path, out)
}

// Post calls POST path with form as the body and decodes a 2xx answer into out (when not nil).
func (c Client) Post(ctx context.Context, path string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+path, strings.NewReader(form.Encode()))
	if err != nil {
		return provider.Permanent(provider.CategoryInternal, 0, "%s: building POST %s: %v", c.Platform, path, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req, path, out)
}

// do sends req and decodes a 2xx answer into out. Failures come back as *APIError (Graph
// answered with an error) or as a transient *provider.Error (the call did not complete).
func (c Client) do(req *http.Request, path string, out any) error {
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Accept", "application/json")
	// Answer leaves the URL out of messages: ours carry no token, but the message stays short.
	what := c.Platform + ": " + req.Method + " " + path
	resp, body, err := provider.Answer(c.HTTP, req, 1<<20, what)
	if err != nil {
		return err
	}
	var env struct {
		Error *ErrorBody `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	if resp.StatusCode/100 != 2 || env.Error != nil {
		ae := &APIError{Status: resp.StatusCode, Header: resp.Header}
		if env.Error != nil {
			ae.Body = *env.Error
		} else {
			ae.Raw = provider.Excerpt(body, 300)
		}
		return ae
	}
	return provider.Decode(resp, body, out, what)
}

// Quota is a publishing limit: the posts published through the API in the rolling window,
// the limit, and the window's length.
type Quota struct {
	Usage, Total int
	Window       time.Duration
}

// PublishingLimit reads GET path?fields=quota_usage,config, the shape of Instagram's
// /{ig-user-id}/content_publishing_limit and Threads' /{threads-user-id}/threads_publishing_limit.
// An empty answer is the zero Quota.
func (c Client) PublishingLimit(ctx context.Context, path string) (Quota, error) {
	var lim struct {
		Data []struct {
			Usage  int `json:"quota_usage"`
			Config struct {
				Total    int `json:"quota_total"`
				Duration int `json:"quota_duration"`
			} `json:"config"`
		} `json:"data"`
	}
	if err := c.Get(ctx, path, url.Values{"fields": {"quota_usage,config"}}, &lim); err != nil {
		return Quota{}, err
	}
	if len(lim.Data) == 0 {
		return Quota{}, nil
	}
	l := lim.Data[0]
	return Quota{Usage: l.Usage, Total: l.Config.Total, Window: time.Duration(l.Config.Duration) * time.Second}, nil
}

// AccessToken is a Meta channel's Graph token, its credential access_token. A channel without
// one must be connected again: a permanent auth_expired *provider.Error, "{platform}: the
// channel has no {name}" (name is "access token", or Facebook's "Page access token").
func AccessToken(platform, name string, creds map[string]string) (string, error) {
	token := creds["access_token"]
	if token == "" {
		return "", provider.Permanent(provider.CategoryAuthExpired, 0, "%s: the channel has no %s", platform, name)
	}
	return token, nil
}
