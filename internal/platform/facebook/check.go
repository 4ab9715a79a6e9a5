package facebook

import (
	"context"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks Graph whether a Facebook Page channel works, with reads only:
//   - token: GET /me with the Page access token answers the Page (Identify; a user token is
//     refused there);
//   - scopes: skipped: a Page token's permissions are its user's, which Graph lists to a user
//     token (/me/permissions) or the app's own token (debug_token,
//     https://developers.facebook.com/docs/graph-api/reference/debug_token), neither of which
//     reelay keeps;
//   - api_version: the call went to Graph APIVersion;
//   - publish: skipped: Graph has no read that says whether a Page may publish Reels; a refused
//     publish marks the channel.
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	who, err := p.Identify(ctx, ch.BaseURL, ch.Credentials)
	token, version := provider.CallChecks(err, "Graph API "+APIVersion)
	if err == nil {
		token.Detail = "Graph reads the Page " + who.Name + " with its token"
	}
	return []provider.Check{token,
		provider.Skipped(provider.CheckScopes, "Graph lists a Page token's permissions only to its user's token or the app's own"),
		version,
		provider.Skipped(provider.CheckPublish, "Graph has no read that says whether the Page may publish Reels")}
}
