package provider

import (
	"net/http"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	if got := BaseURL("", "https://api.example/"); got != "https://api.example" {
		t.Errorf("BaseURL of empty = %q, want the default without its slash", got)
	}
	if got := BaseURL("http://sim//", "https://api.example"); got != "http://sim" {
		t.Errorf("BaseURL = %q, want the given one without its slashes", got)
	}
	hc := &http.Client{}
	if HTTPClient(hc, 0) != hc {
		t.Error("HTTPClient replaced a configured client")
	}
	if c := HTTPClient(nil, time.Minute); c == nil || c.Timeout != time.Minute {
		t.Errorf("HTTPClient(nil, 1m) = %+v, want a new client with that timeout", c)
	}
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := Clock(func() time.Time { return fixed })(); !got.Equal(fixed) {
		t.Errorf("Clock replaced a configured clock: %v", got)
	}
	if Clock(nil) == nil {
		t.Error("Clock(nil) is nil, want time.Now")
	}
	for _, c := range []struct{ v, want time.Duration }{{0, time.Second}, {-1, time.Second}, {time.Millisecond, time.Millisecond}} {
		if got := Positive(c.v, time.Second); got != c.want {
			t.Errorf("Positive(%v, 1s) = %v, want %v", c.v, got, c.want)
		}
	}
	if got := Positive(0, 3); got != 3 {
		t.Errorf("Positive(0, 3) = %d, want 3", got)
	}
}
