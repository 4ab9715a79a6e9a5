package youtube

import (
	"context"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/youtube/youtubesim"
	"github.com/reelay/reelay/internal/provider"
)

// TestCheck: the scopes come from Google's tokeninfo, and a scope missing from it fails the
// scopes line naming it; a token YouTube refuses fails the token line (auth_expired, with the
// fix) and asks nothing more.
func TestCheck(t *testing.T) {
	t.Parallel()
	e := newAudienceEnv(t, youtubesim.Options{Scopes: map[string][]string{"acct": {
		"https://www.googleapis.com/auth/youtube.upload", "https://www.googleapis.com/auth/youtube.readonly"}}})
	lines := func(token string) map[string]provider.Check {
		out := map[string]provider.Check{}
		for _, c := range e.p.Check(context.Background(), e.channel(token)) {
			out[c.Name] = c
		}
		return out
	}
	got := lines("tok")
	s := got[provider.CheckScopes]
	if got[provider.CheckToken].Status != provider.CheckOK || got[provider.CheckPublish].Status != provider.CheckOK ||
		s.Status != provider.CheckFailed || !strings.Contains(s.Detail, "youtube.force-ssl (comments)") {
		t.Errorf("a token without force-ssl: %+v", got)
	}
	got = lines("tok-auth")
	tok := got[provider.CheckToken]
	if tok.Status != provider.CheckFailed || tok.Category != provider.CategoryAuthExpired || tok.Fix != provider.ReconnectFix ||
		got[provider.CheckScopes].Status != provider.CheckSkipped {
		t.Errorf("a refused token: %+v", got)
	}
}
