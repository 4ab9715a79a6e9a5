package linkedin

import (
	"context"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/linkedin/linkedinsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// TestCheckVersion: the check proves reelay's LinkedIn-Version with a versioned read, and a
// version LinkedIn does not serve (426 NONEXISTENT_VERSION) fails api_version with the fix,
// while the token, read on the unversioned userinfo, still passes.
func TestCheckVersion(t *testing.T) {
	t.Parallel()
	e, _, p := env(t, sim.Behavior{}, linkedinsim.Options{})
	ch := provider.Channel{Account: member, Credentials: creds(), BaseURL: e.BaseURL}
	lines := map[string]provider.Check{}
	for _, c := range p.Check(context.Background(), ch) {
		lines[c.Name] = c
	}
	if lines[provider.CheckToken].Status != provider.CheckOK || lines[provider.CheckAPIVersion].Status != provider.CheckOK {
		t.Fatalf("current version: %+v", lines)
	}

	old := New(Config{HTTPClient: e.Client, Now: e.Clock.Now, APIVersion: "202301"})
	lines = map[string]provider.Check{}
	for _, c := range old.Check(context.Background(), ch) {
		lines[c.Name] = c
	}
	v := lines[provider.CheckAPIVersion]
	if lines[provider.CheckToken].Status != provider.CheckOK || v.Status != provider.CheckFailed ||
		!strings.Contains(v.Detail, "not active") || !strings.Contains(v.Fix, "REELAY_LINKEDIN_API_VERSION") {
		t.Errorf("sunset version: %+v", lines)
	}
}
