package telegram

import (
	"context"

	"github.com/reelay/reelay/internal/provider"
)

var _ provider.Checker = (*Provider)(nil)

// Check asks Telegram whether a channel works, with reads only
// (https://core.telegram.org/bots/api#available-methods):
//   - token: getMe, which answers 401 Unauthorized for a bot token Telegram does not know;
//   - scopes: skipped, a bot token has none; what a bot may do in a chat is its membership;
//   - api_version: skipped, the Bot API has one version, which only ever grows
//     (https://core.telegram.org/bots/api#recent-changes);
//   - publish: getChat and getChatMember for the bot: an administrator of a channel needs
//     can_post_messages (https://core.telegram.org/bots/api#chatmemberadministrator), a
//     group member must not be restricted from sending videos (canPost).
func (p *Provider) Check(ctx context.Context, ch provider.Channel) []provider.Check {
	scopes := provider.Skipped(provider.CheckScopes, "a bot token has no scopes; its rights in the chat are checked under publish")
	version := provider.Skipped(provider.CheckAPIVersion, "the Bot API is not versioned")
	c, chatID, err := p.client(ch.BaseURL, ch.Credentials)
	var bot User
	if err == nil {
		bot, err = c.getMe(ctx)
	}
	if err != nil {
		token, _ := provider.CallChecks(classify(err), "")
		return []provider.Check{token, scopes, version, provider.Skipped(provider.CheckPublish, "not asked: the bot token was not accepted")}
	}
	token := provider.Passed(provider.CheckToken, "the bot @%s is known to Telegram", bot.Username)
	fix := "add the bot to the chat as an administrator allowed to post messages"
	publish := provider.Passed(provider.CheckPublish, "the bot may post videos in chat %s", chatID)
	if _, err := c.getChat(ctx, chatID); err != nil {
		publish = provider.Failed(provider.CheckPublish, classify(err), fix)
	} else if m, err := c.getChatMember(ctx, chatID, bot.ID); err != nil {
		publish = provider.Failed(provider.CheckPublish, classify(err), fix)
	} else if err := canPost(m, chatID); err != nil {
		publish = provider.Failed(provider.CheckPublish, err, fix)
	}
	return []provider.Check{token, scopes, version, publish}
}
