package threads

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

	"github.com/reelay/reelay/internal/publish"
)

// graph calls the Threads Graph API with one access token. The token travels in the
// Authorization header, never in a URL, so that no logged URL carries it; POST parameters
// travel in a form body.
type graph struct {
	base  string
	token string
	hc    *http.Client
}

// graphError is the "error" object of a Graph API error answer.
type graphError struct {
	Message     string `json:"message"`
	Type        string `json:"type"`
	Code        int    `json:"code"`
	Subcode     int    `json:"error_subcode"`
	IsTransient bool   `json:"is_transient"`
	UserTitle   string `json:"error_user_title"`
	UserMsg     string `json:"error_user_msg"`
	FBTraceID   string `json:"fbtrace_id"`
}

// apiError is a Graph API error answer, before classification.
type apiError struct {
	status int
	header http.Header
	err    graphError
	raw    string // the body, when it was not Graph's JSON
}

func (e *apiError) Error() string {
	if e.err.Code == 0 && e.err.Message == "" {
		return fmt.Sprintf("HTTP %d: %s", e.status, e.raw)
	}
	return e.err.Message
}

func (g graph) get(ctx context.Context, path string, q url.Values, out any) error {
	u := g.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return publish.Permanent(publish.CategoryInternal, 0, "Threads: building GET %s: %v", path, err)
	}
	return g.do(req, path, out)
}

func (g graph) post(ctx context.Context, path string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return publish.Permanent(publish.CategoryInternal, 0, "Threads: building POST %s: %v", path, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return g.do(req, path, out)
}

// do sends req and decodes a 2xx answer into out. Failures come back as *apiError (Graph
// answered with an error) or as a transient *publish.Error (the call did not complete).
func (g graph) do(req *http.Request, path string, out any) error {
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", "application/json")
	resp, err := g.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return publish.Transient(publish.CategoryUpstreamUnavailable, 0, 0, "Threads: %s %s: %v", req.Method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return publish.Transient(publish.CategoryUpstreamUnavailable, resp.StatusCode, 0, "Threads: %s %s: reading the answer: %v", req.Method, path, err)
	}
	var env struct {
		Error *graphError `json:"error"`
	}
	_ = json.Unmarshal(body, &env)
	if resp.StatusCode/100 != 2 || env.Error != nil {
		ae := &apiError{status: resp.StatusCode, header: resp.Header}
		if env.Error != nil {
			ae.err = *env.Error
		} else {
			ae.raw = strings.TrimSpace(string(bytes.ToValidUTF8(body[:min(len(body), 300)], nil)))
		}
		return ae
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return publish.Transient(publish.CategoryUpstreamUnavailable, resp.StatusCode, 0, "Threads: %s %s: unexpected answer: %v", req.Method, path, err)
		}
	}
	return nil
}

// quota is a profile's threads_publishing_limit.
type quota struct {
	usage, total int
	window       time.Duration
}

// publishingLimit reads GET /{threads-user-id}/threads_publishing_limit?fields=quota_usage,config.
func (g graph) publishingLimit(ctx context.Context, userID string) (quota, error) {
	var lim struct {
		Data []struct {
			Usage  int `json:"quota_usage"`
			Config struct {
				Total    int `json:"quota_total"`
				Duration int `json:"quota_duration"`
			} `json:"config"`
		} `json:"data"`
	}
	path := "/" + url.PathEscape(userID) + "/threads_publishing_limit"
	if err := g.get(ctx, path, url.Values{"fields": {"quota_usage,config"}}, &lim); err != nil {
		return quota{}, err
	}
	if len(lim.Data) == 0 {
		return quota{}, nil
	}
	l := lim.Data[0]
	return quota{usage: l.Usage, total: l.Config.Total, window: time.Duration(l.Config.Duration) * time.Second}, nil
}

// Graph API error codes that Threads answers with (graph-api/guides/error-handling).
const (
	codeUnknown          = 1
	codeService          = 2
	codeTooManyCalls     = 4
	codeUserLimit        = 9 // a spent publishing quota
	codePermission       = 10
	codeUserTooManyCalls = 17
	codeMediaNotFound    = 24
	codeAccountRestrict  = 25
	codePageTooManyCalls = 32
	codeInvalidParameter = 100
	codeSessionKey       = 102
	codeNoToken          = 104
	codeTokenInvalid     = 190
	codeAppLimit         = 341
	codeFormat           = 352
	codePolicyBlock      = 368
	codeCustomRate       = 613
	codeNotReady         = 9007
)

// classify turns a failed call into a *publish.Error.
func classify(err error) *publish.Error {
	var ae *apiError
	if !errors.As(err, &ae) {
		return publish.AsError(err)
	}
	ge := ae.err
	msg := "Threads: " + describe(ae)
	transient := func(cat string) *publish.Error {
		return publish.Transient(cat, ae.status, retryAfter(ae.header), "%s", msg)
	}
	permanent := func(cat string) *publish.Error { return publish.Permanent(cat, ae.status, "%s", msg) }

	switch {
	case ge.Code == 0 && ge.Message == "":
		// Not Graph's JSON: a proxy or an outage page.
		switch {
		case ae.status == http.StatusTooManyRequests:
			return transient(publish.CategoryRateLimited)
		case ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden:
			return permanent(publish.CategoryAuthExpired)
		case ae.status >= 500:
			return transient(publish.CategoryUpstreamUnavailable)
		}
		return permanent(publish.CategoryInternal)
	case ge.Code == codeTokenInvalid || ge.Code == codeSessionKey || ge.Code == codeNoToken ||
		ge.Code == codePermission || (ge.Code >= 200 && ge.Code <= 299) || ge.Code == codeAccountRestrict:
		return permanent(publish.CategoryAuthExpired)
	case ge.Code == codeTooManyCalls || ge.Code == codeUserTooManyCalls || ge.Code == codePageTooManyCalls ||
		ge.Code == codeCustomRate || ge.Code == codeAppLimit || ge.Code == codePolicyBlock:
		return transient(publish.CategoryRateLimited)
	case ge.Code == codeUserLimit:
		return permanent(publish.CategoryQuotaExceeded)
	case ge.Code == codeUnknown || ge.Code == codeService || ge.Code == -1 || ge.Code == -2 || ae.status >= 500:
		return transient(publish.CategoryUpstreamUnavailable)
	case ge.Code == codeInvalidParameter:
		return permanent(publish.CategoryInvalidOptions)
	case ge.Code == codeFormat || ge.Code == codeMediaNotFound:
		return permanent(publish.CategoryMediaRejected)
	case ge.IsTransient:
		return transient(publish.CategoryUpstreamUnavailable)
	}
	return permanent(publish.CategoryInternal)
}

// describe renders a Graph error readably: the user-facing title and text when Graph gave
// them, the developer message, and the codes for support.
func describe(ae *apiError) string {
	ge := ae.err
	if ge.Code == 0 && ge.Message == "" {
		return fmt.Sprintf("HTTP %d: %s", ae.status, ae.raw)
	}
	var b strings.Builder
	if ge.UserMsg != "" {
		if ge.UserTitle != "" {
			b.WriteString(ge.UserTitle + ": ")
		}
		b.WriteString(ge.UserMsg)
		if ge.Message != "" && ge.Message != ge.UserMsg {
			b.WriteString(" (" + ge.Message + ")")
		}
	} else {
		b.WriteString(ge.Message)
	}
	fmt.Fprintf(&b, " [code %d", ge.Code)
	if ge.Subcode != 0 {
		fmt.Fprintf(&b, ", subcode %d", ge.Subcode)
	}
	if ge.FBTraceID != "" {
		b.WriteString(", fbtrace_id " + ge.FBTraceID)
	}
	b.WriteString("]")
	return b.String()
}

// retryAfter reads how long to wait from a throttled answer: Retry-After when present, else
// the largest estimated_time_to_regain_access (minutes) of X-Business-Use-Case-Usage. 0
// leaves the wait to the publisher's back-off.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	var usage map[string][]struct {
		Regain float64 `json:"estimated_time_to_regain_access"`
	}
	if v := h.Get("X-Business-Use-Case-Usage"); v != "" && json.Unmarshal([]byte(v), &usage) == nil {
		var most float64
		for _, list := range usage {
			for _, u := range list {
				most = max(most, u.Regain)
			}
		}
		return time.Duration(most * float64(time.Minute))
	}
	return 0
}
