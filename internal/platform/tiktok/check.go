package tiktok

import (
	"context"
	"errors"
	"strings"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks TikTok whether a channel works, with reads only:
//   - token: GET /v2/user/info/ (Identify), which needs user.info.basic;
//   - scopes: TikTok has no call that lists a token's scopes, so each scope reelay uses is
//     proven by a read that needs it: creator_info (video.publish) and a video query for no
//     video of the creator's (video.list, for figures). TikTok refuses a call whose scope the
//     user did not grant with 401 scope_not_authorized
//     (https://developers.tiktok.com/doc/tiktok-api-v2-error-handling);
//   - api_version: the v2 API answered;
//   - publish: creator_info answers whether the creator may post now (spam_risk_too_many_posts,
//     spam_risk_user_banned_from_posting, reached_active_user_cap refuse it) and the privacy
//     levels they may use
//     (https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info).
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	_, err := p.Identify(ctx, ch.BaseURL, ch.Credentials)
	token, version := provider.CallChecks(err, "TikTok API v2")
	if err != nil {
		return []provider.Check{token, provider.Skipped(provider.CheckScopes, "not asked: the token was not accepted"), version,
			provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	base, tok, _ := p.target(ch.BaseURL, ch.Credentials)
	ci, cerr := p.creatorInfo(ctx, base, tok)
	var data struct {
		Videos []video `json:"videos"`
	}
	// A numeric id no video has: the query answers no video, and proves the scope.
	qerr := p.call(ctx, base, tok, pathVideoQuery+"?fields=id", map[string]any{"filters": map[string]any{"video_ids": []string{"0"}}}, &data)

	var missing []string
	scopes := provider.Passed(provider.CheckScopes, "granted: user.info.basic, video.publish, video.list")
	for _, probe := range []struct {
		err         error
		scope, what string
	}{{cerr, "video.publish", "publishing"}, {qerr, "video.list", "figures"}} {
		if ae := (*apiError)(nil); errors.As(probe.err, &ae) && (ae.Code == "scope_not_authorized" || ae.Code == "scope_permission_missed") {
			missing = append(missing, probe.scope+" ("+probe.what+")")
		} else if probe.err != nil && scopes.Status == provider.CheckOK {
			scopes = provider.Failed(provider.CheckScopes, classify(probe.err), "try again later")
		}
	}
	if len(missing) > 0 {
		scopes = provider.Check{Name: provider.CheckScopes, Status: provider.CheckFailed,
			Detail: "TikTok answered scope_not_authorized: the token lacks " + strings.Join(missing, ", "),
			Fix:    "reconnect the channel and grant every permission reelay asks for"}
	}

	var publish provider.Check
	switch {
	case cerr == nil:
		publish = provider.Passed(provider.CheckPublish, "creator_info allows posting; privacy levels: %s", strings.Join(ci.PrivacyOptions, ", "))
	case len(missing) > 0 && strings.HasPrefix(missing[0], "video.publish"):
		publish = provider.Skipped(provider.CheckPublish, "not asked: creator_info needs video.publish")
	default:
		fix := "try again later"
		if ae := (*apiError)(nil); errors.As(cerr, &ae) && strings.HasPrefix(ae.Code, "spam_risk") || errors.As(cerr, &ae) && ae.Code == "reached_active_user_cap" {
			fix = "TikTok does not let this creator post through the API now; wait, or post in the TikTok app"
		}
		publish = provider.Failed(provider.CheckPublish, classify(cerr), fix)
	}
	return []provider.Check{token, scopes, version, publish}
}
