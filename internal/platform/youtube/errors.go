package youtube

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/api/googleapi"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/provider"
)

// errorFrom classifies a non-success answer to a hand-written call. It reads (a bounded part
// of) the body and parses it as the client library does, so that both kinds of call are
// classified by googleError alike.
func errorFrom(resp *http.Response) *provider.Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	ge, ok := errors.AsType[*googleapi.Error](googleapi.CheckResponseWithBody(resp, raw))
	if !ok { // a 2xx the call did not expect
		ge = &googleapi.Error{Code: resp.StatusCode, Body: string(raw), Header: resp.Header}
	}
	ge.Code = resp.StatusCode // the answer's status, should the body's code differ
	return googleError(ge)
}

// libraryError classifies an error of a client library call: Google's error answer as
// googleError does; no answer at all as a transient upstream_unavailable error; and an answer
// that did not decode (a 2xx, or one over maxAnswerBytes) as one too, naming the method.
func libraryError(ctx context.Context, method string, err error) *provider.Error {
	if ge, ok := errors.AsType[*googleapi.Error](err); ok {
		return googleError(ge)
	}
	if unreadableAnswer(ctx, err) {
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "unreadable %s answer: %v", method, err)
	}
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	}
	return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "YouTube did not answer: %v", err)
}

// unreadableAnswer reports whether a client library call failed after YouTube accepted it: a
// 2xx answer that did not decode, as opposed to an error answer or no answer at all (the
// library returns the transport's *url.Error, or the context's error once it is done).
func unreadableAnswer(ctx context.Context, err error) bool {
	_, refused := errors.AsType[*googleapi.Error](err)
	_, noAnswer := errors.AsType[*url.Error](err)
	return !refused && !noAnswer && ctx.Err() == nil
}

// googleError classifies Google's error answer {"error":{"code","message","errors":[{"domain",
// "reason","message"}],"status"}}: its status, the first reason, the message (the top-level
// one, else the first item's, else a short non-HTML body, else the status text) and
// Retry-After.
func googleError(ge *googleapi.Error) *provider.Error {
	reason, msg := "", ge.Message
	if len(ge.Errors) > 0 {
		reason = ge.Errors[0].Reason
		if msg == "" {
			msg = ge.Errors[0].Message
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(ge.Body)
		if len(msg) > 300 || strings.HasPrefix(msg, "<") {
			msg = ""
		}
	}
	if msg == "" {
		msg = http.StatusText(ge.Code)
	}
	return classify(ge.Code, reason, plain(msg), retryAfter(ge.Header))
}

// classify maps an HTTP status and Google's reason to reelay's error categories.
//
// Daily limits (quotaExceeded, dailyLimitExceeded, uploadLimitExceeded) are permanent: they
// reset at midnight Pacific Time, beyond any retry schedule, and retrying spends nothing but
// more attempts. Short-term limits (rateLimitExceeded, userRateLimitExceeded,
// uploadRateLimitExceeded, 429) are transient, honouring Retry-After. 401 means the token is
// no longer accepted: reconnecting the channel is the fix. Other 403s (forbidden,
// insufficientPermissions, a closed or suspended account or channel) also need the channel's
// owner, and are reported as auth_expired so that the channel is marked reauth_required;
// 403s about a setting (forbiddenPrivacySetting, ...) are invalid_options.
func classify(status int, reason, msg string, ra time.Duration) *provider.Error {
	text := msg
	if reason != "" && !strings.Contains(msg, reason) {
		text = msg + " (" + reason + ")"
	}
	switch reason {
	case "quotaExceeded", "dailyLimitExceeded", "uploadLimitExceeded", "quotaExceeded402", "dailyLimitExceeded402",
		"variableTermExpiredDailyExceeded":
		return provider.Permanent(provider.CategoryQuotaExceeded, status, "%s", text)
	case "rateLimitExceeded", "userRateLimitExceeded", "uploadRateLimitExceeded", "concurrentLimitExceeded",
		"servingLimitExceeded", "limitExceeded", "variableTermLimitExceeded":
		return provider.Transient(provider.CategoryRateLimited, status, ra, "%s", text)
	case "forbiddenPrivacySetting", "forbiddenLicenseSetting", "forbiddenEmbedSetting":
		return provider.Permanent(provider.CategoryInvalidOptions, status, "%s", text)
	case "commentsDisabled", "videoNotFound", "commentNotFound", "parentCommentIsPrivate":
		// About the video or comment, not the channel's access: a 403 or 404 that
		// reconnecting does not fix.
		return provider.Permanent(provider.CategoryInvalidOptions, status, "%s", text)
	}
	switch {
	case status == http.StatusUnauthorized:
		return provider.Permanent(provider.CategoryAuthExpired, status, "%s", text)
	case status == http.StatusTooManyRequests:
		return provider.Transient(provider.CategoryRateLimited, status, ra, "%s", text)
	case status == http.StatusForbidden:
		return provider.Permanent(provider.CategoryAuthExpired, status, "%s", text)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return provider.Permanent(provider.CategoryInvalidOptions, status, "%s", text)
	case status == http.StatusRequestEntityTooLarge:
		return provider.Permanent(provider.CategoryMediaRejected, status, "%s", text)
	case status == http.StatusRequestTimeout || status >= 500:
		return provider.Transient(provider.CategoryUpstreamUnavailable, status, ra, "%s", text)
	}
	return provider.Permanent(provider.CategoryInternal, status, "%s", text)
}

// retryAfter reads Retry-After as seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	d, _ := httpx.RetryAfter(h, time.Now())
	return d
}

// plain strips the HTML some Google messages carry ("exceeded your <a href=...>quota</a>").
func plain(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
