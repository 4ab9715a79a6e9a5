package instagram

import (
	"context"
	"strings"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// checkPermissions are the permissions reelay needs of an Instagram channel's user, and for
// what (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-facebook-login/content-publishing
// and .../comment-moderation, .../insights).
var checkPermissions = [][2]string{
	{"instagram_basic", "reading the account"},
	{"instagram_content_publish", "publishing"},
	{"instagram_manage_insights", "figures"},
	{"instagram_manage_comments", "comments"},
}

// Check asks Graph whether an Instagram channel works, with reads only:
//   - token: GET /{ig-user-id}?fields=id,username (AccountInfo);
//   - scopes: GET /me/permissions lists each permission the user granted or declined
//     (https://developers.facebook.com/docs/graph-api/reference/user/permissions/);
//   - api_version: the call went to Graph APIVersion;
//   - publish: GET /{ig-user-id}/content_publishing_limit: quota_usage against the quota's
//     total in its rolling 24 hours (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/content_publishing_limit).
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	info, err := p.AccountInfo(ctx, ch.BaseURL, ch.Credentials["access_token"], ch.Account)
	token, version := provider.CallChecks(err, "Graph API "+APIVersion)
	if err != nil {
		return []provider.Check{token, provider.Skipped(provider.CheckScopes, "not asked: the token was not accepted"), version,
			provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	token.Detail = "Graph reads @" + info.Username + " with the token"
	base := ch.BaseURL
	if base == "" {
		base = p.cfg.BaseURL
	}
	scopes := metaPermissions(ctx, graph(base, ch.Credentials["access_token"], p.cfg.HTTPClient), checkPermissions)
	publish := provider.Passed(provider.CheckPublish, "%d of %d API posts used in the last 24 hours", info.QuotaUsage, info.QuotaTotal)
	if info.QuotaTotal > 0 && info.QuotaUsage >= info.QuotaTotal {
		publish = provider.Check{Name: provider.CheckPublish, Status: provider.CheckFailed,
			Detail: "the account has published its quota of posts through the API in the last 24 hours",
			Fix:    "wait: the quota is counted over a rolling 24 hours"}
	}
	return []provider.Check{token, scopes, version, publish}
}

// metaPermissions is the scopes line from GET /me/permissions.
func metaPermissions(ctx context.Context, g metagraph.Client, need [][2]string) provider.Check {
	var perms struct {
		Data []struct {
			Permission string `json:"permission"`
			Status     string `json:"status"`
		} `json:"data"`
	}
	if err := g.Get(ctx, "/me/permissions", nil, &perms); err != nil {
		return provider.Failed(provider.CheckScopes, classify(err), "try again later")
	}
	var granted []string
	for _, p := range perms.Data {
		if strings.EqualFold(p.Status, "granted") {
			granted = append(granted, p.Permission)
		}
	}
	return provider.ScopeCheck(granted, need)
}
