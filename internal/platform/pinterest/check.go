package pinterest

import (
	"context"
	"net/http"
	"net/url"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks Pinterest whether a channel works, with reads only:
//   - token: GET /v5/user_account (Identify), which needs user_accounts:read;
//   - scopes: Pinterest has no read of a token's scopes; GET /v5/boards proves boards:read
//     (https://developers.pinterest.com/docs/api/v5/boards-list/). pins:write shows only in a
//     publish;
//   - api_version: the calls went to the API version in Pinterest's description (v5);
//   - publish: a Pin is created on a board (board_id is required,
//     https://developers.pinterest.com/docs/api/v5/pins-create/), so the account needs one.
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	who, err := p.Identify(ctx, ch.BaseURL, ch.Credentials)
	token, version := provider.CallChecks(err, "Pinterest API "+p.cfg.APIVersion)
	if err != nil {
		return []provider.Check{token, provider.Skipped(provider.CheckScopes, "not asked: the token was not accepted"), version,
			provider.Skipped(provider.CheckPublish, "not asked: the token was not accepted")}
	}
	token.Detail = "Pinterest reads " + who.Username + " with the token"
	base, tok, _ := p.target(ch.BaseURL, ch.Credentials)
	var pg page[board]
	if err := p.call(ctx, http.MethodGet, base, tok, pathBoards, url.Values{"page_size": {"1"}}, nil, &pg); err != nil {
		pe := classify(err, provider.CategoryInternal)
		fix := "try again later"
		if pe.Category == provider.CategoryAuthExpired {
			fix = "reconnect the channel and grant every permission reelay asks for"
		}
		return []provider.Check{token, provider.Failed(provider.CheckScopes, pe, fix), version,
			provider.Skipped(provider.CheckPublish, "not asked: the boards could not be read")}
	}
	scopes := provider.Passed(provider.CheckScopes, "user_accounts:read and boards:read answer; pins:write shows in a publish")
	publish := provider.Passed(provider.CheckPublish, "the account has a board to pin to")
	if len(pg.Items) == 0 {
		publish = provider.Check{Name: provider.CheckPublish, Status: provider.CheckFailed,
			Detail: "the account has no board, and every Pin goes to a board",
			Fix:    "create a board on Pinterest"}
	}
	return []provider.Check{token, scopes, version, publish}
}
