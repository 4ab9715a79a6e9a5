package httpx

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header string
		wait   time.Duration
		ok     bool
	}{
		{"absent", "", 0, false},
		{"seconds", "120", 2 * time.Minute, true},
		{"seconds with spaces", " 7 ", 7 * time.Second, true},
		{"zero", "0", 0, true},
		{"negative", "-5", 0, false},
		{"fractional", "1.5", 0, false},
		{"a date ahead", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"a date past", now.Add(-time.Minute).Format(http.TimeFormat), 0, false},
		{"an RFC 850 date", now.Add(time.Hour).Format("Monday, 02-Jan-06 15:04:05 GMT"), time.Hour, true},
		{"garbage", "soon", 0, false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Retry-After", tc.header)
		}
		wait, ok := RetryAfter(h, now)
		if wait != tc.wait || ok != tc.ok {
			t.Errorf("%s (%q): %v, %v; want %v, %v", tc.name, tc.header, wait, ok, tc.wait, tc.ok)
		}
	}
}
