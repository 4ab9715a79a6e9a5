package sim

// What the Graph-style simulators of Threads and Facebook Pages share with each other (and with
// the Instagram simulator, whose parameter parsing, token reading, error objects and field
// selection they reuse): request paths below an optional API version segment, authentication
// with the account's call faults, and the throttling headers Meta sends.

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// metaSegments splits a request path below the simulator's base path into its segments,
// dropping a leading API version segment (/v1.0, /v26.0): Graph serves unversioned paths too.
func metaSegments(prefix, path string) []string {
	if prefix != "" {
		path = strings.TrimPrefix(path, prefix)
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 0 && igVersionSegment.MatchString(segs[0]) {
		segs = segs[1:]
	}
	return segs
}

// metaAuth resolves the access token a Graph request presents (Authorization: Bearer or OAuth,
// or an access_token parameter) and applies the account's call fault. rateCode is the Graph
// error code the platform throttles with (4 application, 17 user, 32 Page). The error, when
// not nil, is written as it is.
func metaAuth(cfg Config, r *http.Request, params url.Values, rateCode int) (Account, *igError) {
	token := igToken(r, params)
	if token == "" {
		return Account{}, igErr(http.StatusBadRequest, 104, 0, "An access token is required to request this resource.")
	}
	acct, ok := cfg.Accounts.Resolve(r.Context(), token)
	if !ok {
		return Account{}, igErr(http.StatusBadRequest, 190, 0, "Invalid OAuth access token - Cannot parse access token")
	}
	if e := metaFault(cfg, acct, rateCode); e != nil {
		return Account{}, e
	}
	return acct, nil
}

// metaFault is the Graph error for the account's call fault on this call, or nil.
func metaFault(cfg Config, acct Account, rateCode int) *igError {
	switch CallFault(acct.Behavior, cfg.Rand) {
	case FailUnavailable:
		e := igErr(http.StatusInternalServerError, 2, 0, "An unexpected error has occurred. Please retry your request later.")
		e.IsTransient = true
		return e
	case FailAuth:
		return igErr(http.StatusBadRequest, 190, 463,
			"Error validating access token: Session has expired on "+cfg.Now().UTC().Add(-time.Hour).Format("Monday, 02-Jan-06 15:04:05 MST")+".")
	case FailRateLimit:
		// Graph throttles with an error code (HTTP 400 or 403), never 429 or Retry-After; the
		// wait is in the usage header's estimated_time_to_regain_access, in minutes.
		msg := map[int]string{
			4:  "(#4) Application request limit reached",
			17: "(#17) User request limit reached",
			32: "(#32) Page request limit reached",
		}[rateCode]
		e := igErr(http.StatusForbidden, rateCode, 0, msg)
		e.IsTransient = true
		e.header = map[string]string{"X-Business-Use-Case-Usage": metaUsage(acct.ID)}
		return e
	}
	return nil
}

// metaUsage is an X-Business-Use-Case-Usage header value saying the account is throttled for
// one more minute.
func metaUsage(id string) string {
	b, _ := json.Marshal(map[string][]map[string]any{id: {{
		"type": "pages", "call_count": 100, "total_cputime": 25, "total_time": 30,
		"estimated_time_to_regain_access": 1,
	}}})
	return string(b)
}

// metaJSON writes a 200 answer.
func metaJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

// metaTimestamp formats a time as Graph does (2026-03-01T12:00:00+0000).
func metaTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05-0700")
}
