package pinterest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/provider"
)

// API paths (Pinterest API v5 reference), below the base URL and the version (/v5).
const (
	pathUserAccount = "/user_account"
	pathBoards      = "/boards"
	pathMedia       = "/media"
	pathPins        = "/pins"
)

// Pinterest's error codes the provider tells apart (Error schema examples of the v5 reference
// and what the API answers).
const (
	codeAuthenticationFailed = 2
	codeRateLimited          = 8
	codeNotPermitted         = 29
	codeBoardNotFound        = 40
	codeImageBroken          = 235
)

// apiError is Pinterest's error answer {"code":N,"message":"..."}, or a non-JSON failure.
type apiError struct {
	HTTP       int
	Code       int
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.HTTP)
	}
	if e.Code != 0 {
		return fmt.Sprintf("Pinterest: %s (code %d, HTTP %d)", msg, e.Code, e.HTTP)
	}
	return fmt.Sprintf("Pinterest: %s (HTTP %d)", msg, e.HTTP)
}

// publishError classifies an API error. other is the category of a 4xx that is none of the
// known kinds (what the request was about: invalid_options for a Pin, internal for a call
// whose input reelay builds alone).
func (e *apiError) publishError(other string) *provider.Error {
	msg := e.Error()
	switch {
	case e.HTTP == http.StatusUnauthorized || e.Code == codeAuthenticationFailed:
		return provider.Permanent(provider.CategoryAuthExpired, e.HTTP, "%s", msg)
	case e.HTTP == http.StatusTooManyRequests || e.Code == codeRateLimited:
		ra := e.RetryAfter
		if ra <= 0 {
			// Standard access limits are per minute: a minute frees the window.
			ra = time.Minute
		}
		return provider.Transient(provider.CategoryRateLimited, e.HTTP, ra, "%s", msg)
	case e.HTTP >= 500 || e.HTTP == http.StatusRequestTimeout:
		return provider.Transient(provider.CategoryUpstreamUnavailable, e.HTTP, e.RetryAfter, "%s", msg)
	case e.HTTP == http.StatusForbidden && e.Code == codeNotPermitted && strings.Contains(e.Message, "Trial access"):
		// "Apps with Trial access may not create Pins in production": reelay's app, not the
		// channel, lacks Standard access, so no reconnect helps. Pinterest's API Sandbox
		// takes a Trial app's Pins, visible only to their creator
		// (https://developers.pinterest.com/docs/key-concepts/access-tiers/).
		return provider.Permanent(provider.CategoryAppAccess, e.HTTP,
			"%s; reelay's Pinterest app has Trial access: apply for Standard access on developers.pinterest.com, "+
				"or set REELAY_PINTEREST_API_URL=https://api-sandbox.pinterest.com to publish Pins only you can see", msg)
	case e.HTTP == http.StatusForbidden && e.Code == codeNotPermitted:
		// A token without pins:write/boards:write: connecting the channel again with the
		// scopes is the cure.
		return provider.Permanent(provider.CategoryAuthExpired, e.HTTP,
			"%s; the token lacks a scope Pinterest needs for this (boards:read, boards:write, pins:read, pins:write)", msg)
	}
	return provider.Permanent(other, e.HTTP, "%s", msg)
}

// call sends a JSON request to a Pinterest API path and decodes a 2xx answer into out.
// Failures are *apiError (Pinterest answered) or a transient *provider.Error (no answer).
func (p *Provider) call(ctx context.Context, method, base, token, path string, q url.Values, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return provider.Permanent(provider.CategoryInternal, 0, "Pinterest: encoding %s %s: %v", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.APITimeout)
	defer cancel()
	u := base + "/" + p.cfg.APIVersion + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return provider.Permanent(provider.CategoryInternal, 0, "Pinterest: building %s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	what := "Pinterest: " + method + " /" + p.cfg.APIVersion + path
	resp, raw, err := provider.Answer(p.cfg.HTTPClient, req, 4<<20, what)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		ae := &apiError{HTTP: resp.StatusCode, RetryAfter: retryAfter(resp.Header, p.cfg.Now())}
		var eb struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &eb) == nil && eb.Message != "" {
			ae.Code, ae.Message = eb.Code, eb.Message
		} else {
			ae.Message = provider.Excerpt(raw, 300)
		}
		return ae
	}
	return provider.Decode(resp, raw, out, what)
}

// classify turns a call's error into a *provider.Error; other is the category of an
// unrecognised 4xx (see publishError).
func classify(err error, other string) *provider.Error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.publishError(other)
	}
	return provider.AsError(err)
}

// readAs is classify for provider.Repeat, an unrecognised 4xx being other.
func readAs(other string) func(error) *provider.Error {
	return func(err error) *provider.Error { return classify(err, other) }
}

// retryAfter reads how long Pinterest asks to wait: Retry-After when present, else
// X-RateLimit-Reset (seconds until the window frees a request; a Unix time is accepted too).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := httpx.RetryAfter(h, now); ok {
		return d
	}
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
			if s > 1_000_000_000 { // a Unix time
				if t := time.Unix(s, 0); t.After(now) {
					return t.Sub(now)
				}
				return 0
			}
			return time.Duration(s) * time.Second
		}
	}
	return 0
}

// user is GET /v5/user_account.
type user struct {
	AccountType  string `json:"account_type"`
	ID           string `json:"id"`
	Username     string `json:"username"`
	ProfileImage string `json:"profile_image"`
	BusinessName string `json:"business_name"`
}

// board is an item of GET /v5/boards.
type board struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Privacy     string `json:"privacy"`
	Description string `json:"description"`
}

// page is Pinterest's Paginated answer.
type page[T any] struct {
	Items    []T     `json:"items"`
	Bookmark *string `json:"bookmark"`
}

// mediaUpload is the answer of POST /v5/media.
type mediaUpload struct {
	MediaID          string            `json:"media_id"`
	MediaType        string            `json:"media_type"`
	UploadURL        string            `json:"upload_url"`
	UploadParameters map[string]string `json:"upload_parameters"`
}

// mediaDetails is the answer of GET /v5/media/{media_id}.
type mediaDetails struct {
	MediaID   string `json:"media_id"`
	MediaType string `json:"media_type"`
	Status    string `json:"status"`
}

// Media upload statuses.
const (
	mediaRegistered = "registered"
	mediaProcessing = "processing"
	mediaSucceeded  = "succeeded"
	mediaFailed     = "failed"
)

// pinCreate is the body of POST /v5/pins for a video Pin.
type pinCreate struct {
	BoardID     string      `json:"board_id"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
	Link        string      `json:"link,omitempty"`
	MediaSource videoSource `json:"media_source"`
}

// videoSource is PinMediaSourceVideoID: a cover is required, as an image URL or a key frame
// time in seconds.
type videoSource struct {
	SourceType        string `json:"source_type"`
	MediaID           string `json:"media_id"`
	CoverImageURL     string `json:"cover_image_url,omitempty"`
	CoverKeyFrameTime *int   `json:"cover_image_key_frame_time,omitempty"`
}

// pin is the Pin object, as much as the provider reads of it.
type pin struct {
	ID          string  `json:"id"`
	CreatedAt   string  `json:"created_at"`
	Title       *string `json:"title"`
	Description *string `json:"description"`
	Link        *string `json:"link"`
	BoardID     string  `json:"board_id"`
	Media       *struct {
		MediaType string `json:"media_type"`
	} `json:"media"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// createdAt parses a Pin's created_at ("2020-01-01T20:10:40-00:00", or without an offset:
// UTC).
func (x pin) createdAt() (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05-07:00", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, x.CreatedAt); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
