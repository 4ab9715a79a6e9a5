package metagraph

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

func TestClassify(t *testing.T) {
	common := Classifier{Platform: "Threads"}
	ig := Classifier{
		Platform:                 "Instagram",
		PlainForbiddenIsInternal: true,
		BeforeRateLimit:          []Rule{{Code: CodeTooManyCalls, Subcode: 2207051, Category: provider.CategoryMediaRejected}},
		RateLimitedCodes:         []int{80002},
		BeforeUpstream:           []Rule{{Subcode: 2207020, Category: provider.CategoryMediaRejected}},
		UpstreamSubcodes:         []int{2207008},
		InvalidOptionsCodes:      []int{36004},
		MediaRejectedCodes:       []int{9004},
		SubcodeText:              map[int]string{2207020: "the container expired"},
	}
	graph := func(status, code, sub int) *APIError {
		return &APIError{Status: status, Body: ErrorBody{Message: "m", Code: code, Subcode: sub}}
	}
	plain := func(status int) *APIError { return &APIError{Status: status, Raw: "<html>"} }
	for _, tc := range []struct {
		name      string
		c         Classifier
		err       error
		category  string
		transient bool
	}{
		{"not an API error", common, errors.New("dial tcp: refused"), provider.CategoryUpstreamUnavailable, true},
		{"plain 429", common, plain(429), provider.CategoryRateLimited, true},
		{"plain 401", common, plain(401), provider.CategoryAuthExpired, false},
		{"plain 403", common, plain(403), provider.CategoryAuthExpired, false},
		{"plain 403, Instagram", ig, plain(403), provider.CategoryInternal, false},
		{"plain 502", common, plain(502), provider.CategoryUpstreamUnavailable, true},
		{"plain 404", common, plain(404), provider.CategoryInternal, false},
		{"190 token", common, graph(400, 190, 0), provider.CategoryAuthExpired, false},
		{"200-299 permission", common, graph(403, 230, 0), provider.CategoryAuthExpired, false},
		{"25 restricted", ig, graph(400, 25, 0), provider.CategoryAuthExpired, false},
		{"4 too many calls", common, graph(400, 4, 0), provider.CategoryRateLimited, true},
		{"4 spam, common", common, graph(400, 4, 2207051), provider.CategoryRateLimited, true},
		{"4 spam, Instagram", ig, graph(400, 4, 2207051), provider.CategoryMediaRejected, false},
		{"80002, common", common, graph(400, 80002, 0), provider.CategoryInternal, false},
		{"80002, Instagram", ig, graph(400, 80002, 0), provider.CategoryRateLimited, true},
		{"9 quota", common, graph(400, 9, 2207042), provider.CategoryQuotaExceeded, false},
		{"9 with an expired container stays quota", ig, graph(400, 9, 2207020), provider.CategoryQuotaExceeded, false},
		{"expired container, Instagram, even from a 5xx", ig, graph(500, 1, 2207020), provider.CategoryMediaRejected, false},
		{"expired container subcode, common", common, graph(500, 1, 2207020), provider.CategoryUpstreamUnavailable, true},
		{"1 unknown", common, graph(400, 1, 0), provider.CategoryUpstreamUnavailable, true},
		{"-2", common, graph(400, -2, 0), provider.CategoryUpstreamUnavailable, true},
		{"2207008, Instagram", ig, graph(400, 12345, 2207008), provider.CategoryUpstreamUnavailable, true},
		{"2207008, common", common, graph(400, 12345, 2207008), provider.CategoryInternal, false},
		{"5xx with an unknown code", common, graph(503, 12345, 0), provider.CategoryUpstreamUnavailable, true},
		{"100 invalid parameter", common, graph(400, 100, 0), provider.CategoryInvalidOptions, false},
		{"36004, Instagram", ig, graph(400, 36004, 0), provider.CategoryInvalidOptions, false},
		{"352 format", common, graph(400, 352, 0), provider.CategoryMediaRejected, false},
		{"9004, Instagram", ig, graph(400, 9004, 0), provider.CategoryMediaRejected, false},
		{"9004, common", common, graph(400, 9004, 0), provider.CategoryInternal, false},
		{"is_transient", common, &APIError{Status: 400, Body: ErrorBody{Message: "m", Code: 12345, IsTransient: true}}, provider.CategoryUpstreamUnavailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pe := tc.c.Classify(tc.err)
			if pe.Category != tc.category || pe.Transient != tc.transient {
				t.Fatalf("got %s transient=%v (%s), want %s transient=%v", pe.Category, pe.Transient, pe.Message, tc.category, tc.transient)
			}
		})
	}
}

func TestClassifyMessageAndWait(t *testing.T) {
	c := Classifier{Platform: "Instagram", SubcodeText: map[int]string{2207020: "the container expired"}}
	h := http.Header{}
	h.Set("X-Business-Use-Case-Usage", `{"1":[{"estimated_time_to_regain_access":3},{"estimated_time_to_regain_access":7}]}`)
	pe := c.Classify(&APIError{Status: 400, Header: h, Body: ErrorBody{Message: "slow down", Code: 4, FBTraceID: "T"}})
	if !pe.Transient || pe.RetryAfter != 7*time.Minute {
		t.Fatalf("wait %v transient=%v, want 7m transient", pe.RetryAfter, pe.Transient)
	}
	if want := "Instagram: slow down [code 4, fbtrace_id T]"; pe.Message != want {
		t.Fatalf("message %q, want %q", pe.Message, want)
	}
	h.Set("Retry-After", "30")
	if got := RetryAfter(h); got != 30*time.Second {
		t.Fatalf("Retry-After: %v, want 30s", got)
	}
	pe = c.Classify(&APIError{Status: 400, Body: ErrorBody{Message: "gone", Code: 100, Subcode: 2207020}})
	if !strings.Contains(pe.Message, "subcode 2207020: the container expired") {
		t.Fatalf("message %q lacks the subcode's text", pe.Message)
	}
}
