package metagraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// Graph API error codes every Meta platform answers with
// (developers.facebook.com/docs/graph-api/guides/error-handling).
const (
	CodeUnknown          = 1
	CodeService          = 2
	CodeTooManyCalls     = 4
	CodeUserLimit        = 9 // a spent publishing quota
	CodePermission       = 10
	CodeUserTooManyCalls = 17
	CodeMediaNotFound    = 24
	CodeAccountRestrict  = 25
	CodePageTooManyCalls = 32
	CodeInvalidParameter = 100
	CodeSessionKey       = 102
	CodeNoToken          = 104
	CodeTokenInvalid     = 190
	CodeAppLimit         = 341
	CodeFormat           = 352
	CodePolicyBlock      = 368
	CodeCustomRate       = 613
	CodeNotReady         = 9007 // the media container is not ready to publish
)

// Rule classifies the Graph errors with its code and subcode (0: any) as Category.
type Rule struct {
	Code, Subcode int
	Category      string
	Transient     bool
}

func (r Rule) matches(b ErrorBody) bool {
	return (r.Code == 0 || r.Code == b.Code) && (r.Subcode == 0 || r.Subcode == b.Subcode)
}

// Classifier turns failed Graph calls into *provider.Error values. The zero value, with
// Platform set, is the table every Meta platform shares, in this order:
//
//   - not Graph's JSON (a proxy, an outage page): HTTP 429 → transient rate_limited; 401 and
//     403 → auth_expired; 5xx → transient upstream_unavailable; anything else → internal;
//   - 190, 102, 104, 10, 200-299 (token, permissions) and 25 (restricted account) → auth_expired;
//   - BeforeRateLimit;
//   - 4, 17, 32, 613, 341, 368 and RateLimitedCodes → transient rate_limited (the wait from
//     Retry-After or X-Business-Use-Case-Usage);
//   - 9 → quota_exceeded;
//   - BeforeUpstream;
//   - 1, 2, -1, -2, UpstreamSubcodes and HTTP 5xx → transient upstream_unavailable;
//   - 100 and InvalidOptionsCodes → invalid_options;
//   - 352, 24 and MediaRejectedCodes → media_rejected;
//   - is_transient → transient upstream_unavailable;
//   - anything else → internal.
//
// The other fields are each platform's differences.
type Classifier struct {
	// Platform names the platform at the head of every message ("Instagram").
	Platform string
	// PlainForbiddenIsInternal classifies a 403 that is not Graph's JSON as internal rather
	// than auth_expired.
	PlainForbiddenIsInternal bool
	// BeforeRateLimit is checked after the token codes, ahead of the rate-limit codes.
	BeforeRateLimit []Rule
	// BeforeUpstream is checked after the quota code, ahead of the transient codes.
	BeforeUpstream []Rule
	// RateLimitedCodes, UpstreamSubcodes, InvalidOptionsCodes and MediaRejectedCodes add to
	// the common codes of their category.
	RateLimitedCodes    []int
	UpstreamSubcodes    []int
	InvalidOptionsCodes []int
	MediaRejectedCodes  []int
	// SubcodeText explains subcodes in messages, when Graph gave no user-facing text.
	SubcodeText map[int]string
}

// Classify turns a failed call into a *provider.Error: an *APIError by the table above,
// anything else with provider.AsError.
func (c Classifier) Classify(err error) *provider.Error {
	var ae *APIError
	if !errors.As(err, &ae) {
		return provider.AsError(err)
	}
	ge := ae.Body
	msg := c.Platform + ": " + c.Describe(ae)
	transient := func(cat string) *provider.Error {
		return provider.Transient(cat, ae.Status, RetryAfter(ae.Header), "%s", msg)
	}
	permanent := func(cat string) *provider.Error { return provider.Permanent(cat, ae.Status, "%s", msg) }
	rule := func(rules []Rule) *provider.Error {
		for _, r := range rules {
			if r.matches(ge) {
				if r.Transient {
					return transient(r.Category)
				}
				return permanent(r.Category)
			}
		}
		return nil
	}

	switch {
	case ae.notGraph():
		switch {
		case ae.Status == http.StatusTooManyRequests:
			return transient(provider.CategoryRateLimited)
		case ae.Status == http.StatusUnauthorized || (ae.Status == http.StatusForbidden && !c.PlainForbiddenIsInternal):
			return permanent(provider.CategoryAuthExpired)
		case ae.Status >= 500:
			return transient(provider.CategoryUpstreamUnavailable)
		}
		return permanent(provider.CategoryInternal)
	case ge.Code == CodeTokenInvalid || ge.Code == CodeSessionKey || ge.Code == CodeNoToken ||
		ge.Code == CodePermission || (ge.Code >= 200 && ge.Code <= 299) || ge.Code == CodeAccountRestrict:
		return permanent(provider.CategoryAuthExpired)
	}
	if pe := rule(c.BeforeRateLimit); pe != nil {
		return pe
	}
	switch {
	case ge.Code == CodeTooManyCalls || ge.Code == CodeUserTooManyCalls || ge.Code == CodePageTooManyCalls ||
		ge.Code == CodeCustomRate || ge.Code == CodeAppLimit || ge.Code == CodePolicyBlock ||
		slices.Contains(c.RateLimitedCodes, ge.Code):
		return transient(provider.CategoryRateLimited)
	case ge.Code == CodeUserLimit:
		return permanent(provider.CategoryQuotaExceeded)
	}
	if pe := rule(c.BeforeUpstream); pe != nil {
		return pe
	}
	switch {
	case ge.Code == CodeUnknown || ge.Code == CodeService || ge.Code == -1 || ge.Code == -2 ||
		slices.Contains(c.UpstreamSubcodes, ge.Subcode) || ae.Status >= 500:
		return transient(provider.CategoryUpstreamUnavailable)
	case ge.Code == CodeInvalidParameter || slices.Contains(c.InvalidOptionsCodes, ge.Code):
		return permanent(provider.CategoryInvalidOptions)
	case ge.Code == CodeFormat || ge.Code == CodeMediaNotFound || slices.Contains(c.MediaRejectedCodes, ge.Code):
		return permanent(provider.CategoryMediaRejected)
	case ge.IsTransient:
		return transient(provider.CategoryUpstreamUnavailable)
	}
	return permanent(provider.CategoryInternal)
}

// Describe renders a Graph error readably: the user-facing title and text when Graph gave
// them, the developer message, and the codes for support.
func (c Classifier) Describe(ae *APIError) string {
	ge := ae.Body
	if ae.notGraph() {
		return fmt.Sprintf("HTTP %d: %s", ae.Status, ae.Raw)
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
		if t, ok := c.SubcodeText[ge.Subcode]; ok && ge.UserMsg == "" {
			b.WriteString(": " + t)
		}
	}
	if ge.FBTraceID != "" {
		b.WriteString(", fbtrace_id " + ge.FBTraceID)
	}
	b.WriteString("]")
	return b.String()
}

// RetryAfter reads how long to wait from a throttled answer: Retry-After when present, else
// the largest estimated_time_to_regain_access (minutes) of X-Business-Use-Case-Usage. Graph's
// X-App-Usage gives percentages only: 0 leaves the wait to the publisher's back-off.
func RetryAfter(h http.Header) time.Duration {
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
