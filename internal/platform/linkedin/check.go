package linkedin

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks LinkedIn whether a channel works, with reads only:
//   - token: GET /v2/userinfo (Identify), which answers 401 for an expired or revoked token;
//   - scopes: skipped: LinkedIn tells a token's scopes only to the app's own credentials
//     (token introspection, https://learn.microsoft.com/en-us/linkedin/shared/authentication/token-introspection);
//     userinfo proves openid and profile, and w_member_social shows in a publish;
//   - api_version: a versioned read (GET /rest/videos/{urn} of a video that does not exist)
//     with reelay's LinkedIn-Version: LinkedIn answers 426 NONEXISTENT_VERSION to a version it
//     does not serve, before it looks at the resource
//     (https://learn.microsoft.com/en-us/linkedin/marketing/versioning); any other answer (404)
//     proves the version;
//   - publish: skipped, LinkedIn has no read that says whether a member may post.
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	scopes := provider.Skipped(provider.CheckScopes, "LinkedIn tells a token's scopes only to the app's own credentials")
	publish := provider.Skipped(provider.CheckPublish, "LinkedIn has no read that says whether a member may post")
	who, err := p.Identify(ctx, ch.BaseURL, ch.Credentials)
	token, _ := provider.CallChecks(err, "")
	if err != nil {
		return []provider.Check{token, scopes, provider.Skipped(provider.CheckAPIVersion, "not asked: the token was not accepted"), publish}
	}
	token.Detail = "LinkedIn reads " + who.Name + " with the token"
	c, _ := p.client(ch.BaseURL, ch.Credentials)
	v := p.cfg.APIVersion
	_, err = c.do(ctx, http.MethodGet, pathVideos+"/"+url.PathEscape("urn:li:video:0"), nil, nil, true)
	var ae *apiError
	var version provider.Check
	switch {
	case err == nil || errors.As(err, &ae) && ae.HTTP != http.StatusUpgradeRequired && ae.Code != "NONEXISTENT_VERSION" &&
		ae.Code != "VERSION_MISSING" && ae.HTTP != http.StatusUnauthorized && ae.HTTP < 500 && ae.HTTP != http.StatusTooManyRequests:
		version = provider.Passed(provider.CheckAPIVersion, "LinkedIn-Version %s accepted", v)
	case ae != nil && (ae.HTTP == http.StatusUpgradeRequired || ae.Code == "NONEXISTENT_VERSION" || ae.Code == "VERSION_MISSING"):
		version = provider.Failed(provider.CheckAPIVersion, p.classify(err),
			"set REELAY_LINKEDIN_API_VERSION to a month LinkedIn lists as active, or update reelay")
	default:
		version = provider.Failed(provider.CheckAPIVersion, p.classify(err), "try again later")
	}
	return []provider.Check{token, scopes, version, publish}
}
