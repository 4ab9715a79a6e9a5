package reddit

import (
	"context"
	"net/url"
	"strings"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks Reddit whether a channel works, with reads only (https://www.reddit.com/dev/api):
//   - token: GET /api/v1/me (identity scope);
//   - scopes: Reddit has no read of a token's granted scopes (/api/v1/scopes describes every
//     scope there is), so each scope reelay reads with is proven by a read that needs it:
//     GET /subreddits/mine/subscriber?limit=1 (mysubreddits, the options' subreddits) and
//     GET /api/info for no post (read, figures and comments). Reddit refuses a call outside
//     the token's scopes with 403; submit and flair show only in a publish;
//   - api_version: skipped, Reddit's API is not versioned as a whole;
//   - publish: /api/v1/me's is_suspended (Reddit's reference lists no fields of the answer;
//     this is the one its clients read): a suspended account may not post. Whether a
//     subreddit takes the channel's videos is a question of the post's subreddit, which
//     GET /channels/{id}/options?subreddit= answers.
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	version := provider.Skipped(provider.CheckAPIVersion, "Reddit's API is not versioned")
	c, err := p.client(ch.BaseURL, ch.Credentials)
	var m struct {
		Name        string `json:"name"`
		IsSuspended bool   `json:"is_suspended"`
	}
	if err == nil {
		if err = c.get(ctx, "/api/v1/me", nil, &m); err != nil {
			err = classify(err, "GET /api/v1/me")
		}
	}
	if err != nil {
		token, _ := provider.CallChecks(err, "")
		return []provider.Check{token, provider.Skipped(provider.CheckScopes, "not asked: the token was not accepted"), version,
			provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	token := provider.Passed(provider.CheckToken, "Reddit reads u/%s with the token", m.Name)
	scopes := provider.Passed(provider.CheckScopes, "identity, mysubreddits and read answer; submit and flair show in a publish")
	var missing []string
	for _, probe := range []struct{ scope, path string }{
		{"mysubreddits", "/subreddits/mine/subscriber?limit=1"},
		{"read", "/api/info?id=t3_0"},
	} {
		path, rawQuery, _ := strings.Cut(probe.path, "?")
		q, _ := url.ParseQuery(rawQuery)
		var out map[string]any
		if err := c.get(ctx, path, q, &out); err != nil {
			pe := classify(err, "GET "+path)
			if pe.Status == 403 {
				missing = append(missing, probe.scope)
				continue
			}
			scopes = provider.Failed(provider.CheckScopes, pe, "try again later")
		}
	}
	if len(missing) > 0 {
		scopes = provider.Check{Name: provider.CheckScopes, Status: provider.CheckFailed,
			Detail: "Reddit refused reads that need " + strings.Join(missing, ", "),
			Fix:    "reconnect the channel and grant every permission reelay asks for"}
	}
	publish := provider.Passed(provider.CheckPublish, "u/%s is not suspended; each subreddit's rules are in the channel's options", m.Name)
	if m.IsSuspended {
		publish = provider.Check{Name: provider.CheckPublish, Status: provider.CheckFailed,
			Detail: "Reddit says u/" + m.Name + " is suspended", Fix: "wait for the suspension to end, or appeal it on Reddit"}
	}
	return []provider.Check{token, scopes, version, publish}
}
