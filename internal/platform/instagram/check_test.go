package instagram_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/instagram/instagramsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/provider"
)

// TestCheckPermissions: the check reads GET /me/permissions; a permission the user declined
// fails the scopes line, naming it and what reelay needs it for, while the token passes.
func TestCheckPermissions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		declined []string
		want     string
	}{
		{"all granted", nil, provider.CheckOK},
		{"comments declined", []string{"instagram_manage_comments"}, provider.CheckFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, sim.Behavior{}, instagramsim.Options{Declined: map[string][]string{account: tc.declined}})
			lines := map[string]provider.Check{}
			for _, c := range e.p.Check(context.Background(), provider.Channel{Account: account,
				Credentials: map[string]string{"access_token": token}, BaseURL: e.api}) {
				lines[c.Name] = c
			}
			s := lines[provider.CheckScopes]
			if lines[provider.CheckToken].Status != provider.CheckOK || lines[provider.CheckPublish].Status != provider.CheckOK || s.Status != tc.want {
				t.Fatalf("lines: %+v", lines)
			}
			if tc.want == provider.CheckFailed && (!strings.Contains(s.Detail, "instagram_manage_comments (comments)") || !strings.Contains(s.Fix, "reconnect")) {
				t.Errorf("scopes line: %+v", s)
			}
		})
	}
}
