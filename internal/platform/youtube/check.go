package youtube

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// TokenInfoURL is Google's token information endpoint: GET ?access_token= answers the scopes
// granted to an access token (scope, space-separated) and its seconds left (expires_in), and
// 400 for a token Google does not know
// (https://developers.google.com/identity/sign-in/web/backend-auth#calling-the-tokeninfo-endpoint;
// the OAuth2 v2 API's Tokeninfo resource: "scope: the space separated list of scopes granted
// to this token"). A simulator serves it at its root, as it serves the token endpoint.
const TokenInfoURL = "https://oauth2.googleapis.com/tokeninfo"

// checkScopes are the scopes reelay needs of a YouTube channel, and for what
// (https://developers.google.com/youtube/v3/guides/auth/server-side-web-apps#identify-access-scopes).
var checkScopes = [][2]string{
	{"https://www.googleapis.com/auth/youtube.upload", "publishing"},
	{"https://www.googleapis.com/auth/youtube.readonly", "reading the channel and figures"},
	{"https://www.googleapis.com/auth/youtube.force-ssl", "comments"},
}

// Check asks YouTube whether a channel works, with reads only:
//   - token: channels.list?part=snippet&mine=true (Identify, 1 quota unit);
//   - scopes: Google's tokeninfo (TokenInfoURL);
//   - api_version: the call went to the Data API v3;
//   - publish: the token's Google account has a YouTube channel to upload to (channels.list
//     answers none otherwise).
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	who, err := p.Identify(ctx, ch.BaseURL, ch.Credentials)
	var publish provider.Check
	if err != nil && provider.AsError(err).Category == provider.CategoryInvalidOptions {
		// No channel: the token itself was accepted.
		publish = provider.Failed(provider.CheckPublish, err, "create a YouTube channel for this Google account on youtube.com")
		err = nil
	}
	token, version := provider.CallChecks(err, "YouTube Data API v3")
	if err != nil {
		return []provider.Check{token, provider.Skipped(provider.CheckScopes, "not asked: the token was not accepted"), version,
			provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	if publish.Name == "" {
		token.Detail = "YouTube reads the channel " + who.Name + " with the token"
		publish = provider.Passed(provider.CheckPublish, "the account has the channel %s to upload to", who.Name)
	}
	return []provider.Check{token, p.checkScopes(ctx, ch), version, publish}
}

// checkScopes is the scopes line, from tokeninfo.
func (p *Provider) checkScopes(ctx context.Context, ch provider.Channel) provider.Check {
	u := TokenInfoURL
	if base := strings.TrimRight(ch.BaseURL, "/"); base != "" {
		u = base + "/tokeninfo"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"?"+url.Values{"access_token": {ch.Credentials["access_token"]}}.Encode(), nil)
	if err != nil {
		return provider.Failed(provider.CheckScopes, provider.Permanent(provider.CategoryInternal, 0, "tokeninfo: %v", err), "")
	}
	resp, raw, err := provider.Answer(p.client, req, 64<<10, "YouTube: tokeninfo")
	if err != nil {
		return provider.Failed(provider.CheckScopes, err, "try again later")
	}
	if resp.StatusCode != http.StatusOK {
		return provider.Failed(provider.CheckScopes, provider.Permanent(provider.CategoryAuthExpired, resp.StatusCode,
			"Google's tokeninfo refused the token: %s", provider.Excerpt(raw, 200)), provider.ReconnectFix)
	}
	var info struct {
		Scope string `json:"scope"`
	}
	if err := provider.Decode(resp, raw, &info, "YouTube: tokeninfo"); err != nil {
		return provider.Failed(provider.CheckScopes, err, "try again later")
	}
	return provider.ScopeCheck(strings.Fields(info.Scope), checkScopes)
}
