package youtube

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/publish"
)

// googleError is Google's error body: {"error":{"code","message","errors":[{"domain",
// "reason","message"}],"status"}}.
type googleError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Errors  []struct {
			Domain  string `json:"domain"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"errors"`
	} `json:"error"`
}

// errorFrom classifies a non-success answer. It reads (a bounded part of) the body.
func errorFrom(resp *http.Response) *publish.Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var ge googleError
	_ = json.Unmarshal(raw, &ge)
	reason, msg := "", ge.Error.Message
	if len(ge.Error.Errors) > 0 {
		reason = ge.Error.Errors[0].Reason
		if msg == "" {
			msg = ge.Error.Errors[0].Message
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(raw))
		if len(msg) > 300 || strings.HasPrefix(msg, "<") {
			msg = ""
		}
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return classify(resp.StatusCode, reason, plain(msg), retryAfter(resp.Header))
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
func classify(status int, reason, msg string, ra time.Duration) *publish.Error {
	text := msg
	if reason != "" && !strings.Contains(msg, reason) {
		text = msg + " (" + reason + ")"
	}
	switch reason {
	case "quotaExceeded", "dailyLimitExceeded", "uploadLimitExceeded", "quotaExceeded402", "dailyLimitExceeded402",
		"variableTermExpiredDailyExceeded":
		return publish.Permanent(publish.CategoryQuotaExceeded, status, "%s", text)
	case "rateLimitExceeded", "userRateLimitExceeded", "uploadRateLimitExceeded", "concurrentLimitExceeded",
		"servingLimitExceeded", "limitExceeded", "variableTermLimitExceeded":
		return publish.Transient(publish.CategoryRateLimited, status, ra, "%s", text)
	case "forbiddenPrivacySetting", "forbiddenLicenseSetting", "forbiddenEmbedSetting":
		return publish.Permanent(publish.CategoryInvalidOptions, status, "%s", text)
	case "commentsDisabled", "videoNotFound", "commentNotFound", "parentCommentIsPrivate":
		// About the video or comment, not the channel's access: a 403 or 404 that
		// reconnecting does not fix.
		return publish.Permanent(publish.CategoryInvalidOptions, status, "%s", text)
	}
	switch {
	case status == http.StatusUnauthorized:
		return publish.Permanent(publish.CategoryAuthExpired, status, "%s", text)
	case status == http.StatusTooManyRequests:
		return publish.Transient(publish.CategoryRateLimited, status, ra, "%s", text)
	case status == http.StatusForbidden:
		return publish.Permanent(publish.CategoryAuthExpired, status, "%s", text)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		return publish.Permanent(publish.CategoryInvalidOptions, status, "%s", text)
	case status == http.StatusRequestEntityTooLarge:
		return publish.Permanent(publish.CategoryMediaRejected, status, "%s", text)
	case status == http.StatusRequestTimeout || status >= 500:
		return publish.Transient(publish.CategoryUpstreamUnavailable, status, ra, "%s", text)
	}
	return publish.Permanent(publish.CategoryInternal, status, "%s", text)
}

// retryAfter reads Retry-After as seconds or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
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
