package discord

import (
	"cmp"
	"context"
	"net/url"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks Discord whether a channel works, with reads only:
//   - token: a webhook channel reads its webhook (GET /webhooks/{id}/{token}, which answers
//     404 Unknown Webhook once the webhook is deleted:
//     https://discord.com/developers/docs/resources/webhook#get-webhook-with-token); a bot
//     channel reads its bot user (GET /users/@me);
//   - scopes: skipped, neither a webhook nor a bot token carries OAuth scopes;
//   - api_version: the call went to the API version in Discord's description (v10, or
//     REELAY_DISCORD_API_VERSION), which Discord still serves
//     (https://discord.com/developers/docs/reference#api-versioning); a retired version
//     answers an error to every call, which fails the token line first;
//   - publish: a bot channel reads its channel (GET /channels/{id}); a webhook posts to its own
//     channel, which the webhook read proves.
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	scopes := provider.Skipped(provider.CheckScopes, "Discord webhooks and bot tokens have no scopes")
	t, err := p.target(ch.BaseURL, ch.Credentials)
	if err != nil {
		token, version := provider.CallChecks(err, "Discord API "+cmp.Or(p.cfg.APIVersion, APIVersion))
		return []provider.Check{token, scopes, version, provider.Skipped(provider.CheckPublish, "not asked: the credentials are not usable")}
	}
	if !t.bot() {
		var w Webhook
		err := t.c.get(ctx, t.c.webhook, &w)
		if err != nil {
			err = classify(err)
		}
		token, version := provider.CallChecks(err, "Discord API "+cmp.Or(p.cfg.APIVersion, APIVersion))
		publish := provider.Skipped(provider.CheckPublish, "not asked: the webhook did not answer")
		if err == nil {
			token = provider.Passed(provider.CheckToken, "the webhook %q exists", w.Name)
			publish = provider.Passed(provider.CheckPublish, "the webhook posts to channel %s", w.ChannelID)
		}
		return []provider.Check{token, scopes, version, publish}
	}
	var me User
	err = t.c.get(ctx, t.c.base+"/users/@me", &me)
	if err != nil {
		err = classify(err)
	}
	token, version := provider.CallChecks(err, "Discord API "+cmp.Or(p.cfg.APIVersion, APIVersion))
	if err != nil {
		return []provider.Check{token, scopes, version, provider.Skipped(provider.CheckPublish, "not asked: the bot token was not accepted")}
	}
	var dch Channel
	publish := provider.Passed(provider.CheckPublish, "the bot sees channel %s", t.channelID)
	if err := t.c.get(ctx, t.c.base+"/channels/"+url.PathEscape(t.channelID), &dch); err != nil {
		publish = provider.Failed(provider.CheckPublish, classify(err), "invite the bot to the server and let it see and post in the channel")
	}
	return []provider.Check{token, scopes, version, publish}
}
