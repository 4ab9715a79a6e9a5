package tiktok

import (
	"context"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
	"github.com/reelay/reelay/internal/provider"
)

// TestCheckScopes: TikTok has no read of a token's scopes, so the check proves each with a
// read that needs it; a creator who did not grant video.list (figures) fails the scopes line
// naming it, and one without video.publish cannot be asked creator_info either.
func TestCheckScopes(t *testing.T) {
	t.Parallel()
	all := []string{"user.info.basic", "user.info.profile", "video.publish", "video.upload", "video.list"}
	for _, tc := range []struct {
		name      string
		granted   []string
		scopes    string
		missing   string
		publishOK bool
	}{
		{"all", all, provider.CheckOK, "", true},
		{"no video.list", all[:4], provider.CheckFailed, "video.list (figures)", true},
		{"no video.publish", []string{"user.info.basic", "video.list"}, provider.CheckFailed, "video.publish (publishing)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.StaticAccounts{"tok": {ID: "acct", Username: "creator"}},
				tiktoksim.Options{Scopes: map[string][]string{"acct": tc.granted}}, Config{})
			lines := map[string]provider.Check{}
			for _, c := range e.prov.Check(context.Background(), provider.Channel{Account: "acct",
				Credentials: map[string]string{"access_token": "tok"}, BaseURL: e.BaseURL}) {
				lines[c.Name] = c
			}
			s := lines[provider.CheckScopes]
			if lines[provider.CheckToken].Status != provider.CheckOK || s.Status != tc.scopes || !strings.Contains(s.Detail, tc.missing) {
				t.Fatalf("lines: %+v", lines)
			}
			if got := lines[provider.CheckPublish].Status == provider.CheckOK; got != tc.publishOK {
				t.Errorf("publish line: %+v", lines[provider.CheckPublish])
			}
		})
	}
}
