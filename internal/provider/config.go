package provider

import (
	"net/http"
	"strings"
	"time"
)

// The functions below are how a provider's New fills the zero fields of its Config. Each
// Config keeps its own fields, so that callers go on naming them in literals
// (Config{HTTPClient: c, Now: clock}); what the providers share is the rule for a field left
// zero, and that is written here once.

// DefaultAPITimeout bounds each API call other than an upload of a provider whose Config
// leaves its APITimeout zero.
const DefaultAPITimeout = 30 * time.Second

// BaseURL is a provider's API root: base, or def when base is empty, without trailing
// slashes, so that call paths ("/v5/pins") are appended to it as they are.
func BaseURL(base, def string) string {
	if base == "" {
		base = def
	}
	return strings.TrimRight(base, "/")
}

// HTTPClient is the client a provider makes its requests with: hc, or when hc is nil a new
// one of its own (NewHTTPClient(timeout)).
func HTTPClient(hc *http.Client, timeout time.Duration) *http.Client {
	if hc == nil {
		return NewHTTPClient(timeout)
	}
	return hc
}

// Clock is a provider's clock: now, or time.Now when now is nil.
func Clock(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// Positive is a duration, size or count of a Config: v, or def when v is zero or negative
// (neither means anything for these settings).
func Positive[T ~int | ~int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
