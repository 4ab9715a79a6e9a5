// Package httpx holds what reelay's HTTP clients share about the protocol itself, whichever
// service they talk to: the platform clients and the webhook sender.
package httpx

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads a Retry-After header (RFC 9110 section 10.2.3: delay-seconds or an
// HTTP-date) as a wait from now. ok is false when there is none to honour: no header, a value
// that is neither form, or a date already past; callers then fall back on what else the service
// says (its own rate-limit headers) or on their back-off.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now), true
	}
	return 0, false
}
