package mastodon_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/mastodon"
	"github.com/reelay/reelay/internal/platform/mastodon/mastodonsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// The channel check holds the instance's version (the simulator runs 4.3.0) to the oldest
// Mastodon reelay works with.
func TestCheckServerVersion(t *testing.T) {
	for _, c := range []struct {
		min, status string
	}{
		{"", provider.CheckOK}, // the description's, 3.2.0
		{"4.3.0", provider.CheckOK},
		{"4.4.0", provider.CheckFailed},
	} {
		e := newEnvRand(t, sim.Behavior{}, mastodonsim.Options{}, nil, mastodon.Config{MinServerVersion: c.min})
		checks := e.p.Check(context.Background(), provider.Channel{Account: accountID, Credentials: e.creds()})
		for _, l := range checks {
			if l.Name != provider.CheckAPIVersion {
				continue
			}
			if l.Status != c.status {
				t.Errorf("minimum %q: version line %+v, want %s", c.min, l, c.status)
			}
			if c.status == provider.CheckFailed && (!strings.Contains(l.Detail, "4.4.0 or later") || l.Fix == "") {
				t.Errorf("minimum %q: the failed line does not say what is needed: %+v", c.min, l)
			}
		}
	}
}
