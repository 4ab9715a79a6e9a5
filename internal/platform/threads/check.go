package threads

import (
	"context"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks the Threads API whether a channel works, with reads only:
//   - token: GET /me (Identify);
//   - scopes: skipped: the Threads API has no read of a user token's permissions (Meta's
//     debug_token answers only to the app's own token), and a missing one shows as a refused
//     call;
//   - api_version: the call went to the Threads API APIVersion;
//   - publish: GET /{threads-user-id}/threads_publishing_limit: quota_usage against
//     config.quota_total in the rolling 24 hours
//     (https://developers.facebook.com/docs/threads/overview/, Rate Limiting, Posts).
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	scopes := provider.Skipped(provider.CheckScopes, "the Threads API tells a token's permissions only to the app's own token")
	token, err := metagraph.AccessToken("Threads", "access token", ch.Credentials)
	var pr profile
	var g metagraph.Client
	if err == nil {
		g = p.graph(ch.BaseURL, token)
		pr, err = p.me(ctx, g)
	}
	tokenLine, version := provider.CallChecks(err, "Threads API "+APIVersion)
	if err != nil {
		return []provider.Check{tokenLine, scopes, version, provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	tokenLine.Detail = "Threads reads @" + pr.Username + " with the token"
	publish := provider.Check{}
	lim, err := publishingLimit(ctx, g, pr.ID)
	switch {
	case err != nil:
		publish = provider.Failed(provider.CheckPublish, classify(err), "try again later")
	case lim.Total > 0 && lim.Usage >= lim.Total:
		publish = provider.Check{Name: provider.CheckPublish, Status: provider.CheckFailed,
			Detail: "the account has published its quota of posts through the API in the last 24 hours",
			Fix:    "wait: the quota is counted over a rolling 24 hours"}
	default:
		publish = provider.Passed(provider.CheckPublish, "%d of %d API posts used in the last 24 hours", lim.Usage, lim.Total)
	}
	return []provider.Check{tokenLine, scopes, version, publish}
}
