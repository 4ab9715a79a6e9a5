package metagraph

import (
	"encoding/json"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// Decode reads a destination's stored state into st and its platform object into opts
// (both pointers); an empty or null one leaves its target as it is.
func Decode(platform string, d *provider.Destination, st, opts any) error {
	if err := provider.UnmarshalStored(d.State, st); err != nil {
		return provider.Permanent(provider.CategoryInternal, 0, "%s: stored state is unreadable: %v", platform, err)
	}
	if err := provider.UnmarshalStored(d.Options, opts); err != nil {
		return provider.Permanent(provider.CategoryInvalidOptions, 0, "%s: options: %v", platform, err)
	}
	return nil
}

// Outcome is an outcome with st encoded as its State.
func Outcome(platform, status string, st any, after time.Duration) (provider.Outcome, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "%s: encoding state: %v", platform, err)
	}
	return provider.Outcome{Status: status, State: b, After: after}, nil
}

// ParseTime reads a Graph timestamp ("2006-01-02T15:04:05-0700", or RFC 3339).
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse("2006-01-02T15:04:05-0700", s)
	if err != nil {
		t, err = time.Parse(time.RFC3339, s)
	}
	return t, err
}
