package connect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// Channels connected with credentials a user pastes (token platforms, or a token pair of an
// OAuth platform): the HTTP API's POST /channels and the web dashboard's form both check and
// build them here.

// CredentialChannel builds a channel of project on platformName from credentials whose shape
// CheckCredentials accepted: the platform itself says whose they are (and refuses wrong ones,
// with nothing stored); without a connector to ask (c nil), the identity is derived from the
// credentials without revealing them. The credentials are sealed; the channel is not stored.
func CredentialChannel(ctx context.Context, c *Connector, access publish.ChannelAccess, project store.Project,
	platformName, name string, creds map[string]string) (store.Channel, error) {
	ch := store.Channel{AccountID: project.AccountID, ProjectID: project.ID, Platform: platformName, Name: name}
	who, verified := provider.Identity{}, false
	if c != nil {
		var err error
		if who, verified, err = c.Verify(ctx, platformName, creds); err != nil {
			return store.Channel{}, err
		}
	}
	if verified {
		ch.ExternalAccountID, ch.Username, ch.AvatarURL = who.ExternalID, who.Username, who.AvatarURL
		if ch.Name == "" {
			ch.Name = who.Name
		}
	} else {
		ch.ExternalAccountID, ch.Username = identityFromCredentials(platformName, creds)
	}
	if ch.Name == "" {
		ch.Name = registry.DisplayName(platformName) + " " + ch.Username
	}
	ch.Credentials = access.Seal(ch, creds)
	return ch, nil
}

var (
	telegramToken    = regexp.MustCompile(`^[0-9]{3,}:[A-Za-z0-9_-]{30,}$`)
	telegramChat     = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$`)
	discordSnowflake = regexp.MustCompile(`^[0-9]{5,25}$`)
	discordWebhook   = regexp.MustCompile(`^/api/(v[0-9]+/)?webhooks/([0-9]{5,25})/[A-Za-z0-9_-]{20,}$`)
	blueskyHandle    = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,}$`)
)

// CheckCredentials adds to f what is wrong with the shape of token-based credentials; whether the platform
// accepts them is checked by the platform's provider.
func CheckCredentials(f *apierr.Fields, name string, creds map[string]string) {
	caps, _ := registry.CapabilitiesOf(name)
	if creds == nil {
		f.Addf("credentials", "is required for a %s channel: %s (or set \"sandbox\": true)",
			registry.DisplayName(name), registry.CredentialsHint(name))
		return
	}
	for k, v := range creds {
		field := "credentials." + k
		switch {
		case !slices.Contains(caps.CredentialFields, k):
			f.Addf(field, "unknown credential for %s; expected %s", registry.DisplayName(name), strings.Join(caps.CredentialFields, ", "))
		case strings.TrimSpace(v) == "":
			f.Add(field, "must not be blank")
		case len(v) > 4096:
			f.Add(field, "must be at most 4096 bytes")
		}
	}
	for _, k := range registry.RequiredCredentials(name) {
		if _, ok := creds[k]; !ok {
			f.Add("credentials."+k, "is required")
		}
	}
	if f != nil && len(*f) > 0 {
		return
	}
	switch name {
	case platform.Telegram:
		if !telegramToken.MatchString(creds["bot_token"]) {
			f.Add("credentials.bot_token", "is not a bot token of the form 123456:ABC... (from @BotFather)")
		}
		if !telegramChat.MatchString(creds["chat_id"]) {
			f.Add("credentials.chat_id", "must be a numeric chat id or a @channelusername")
		}
	case platform.Discord:
		_, hasBot := creds["bot_token"]
		_, hasChannel := creds["channel_id"]
		switch _, hasHook := creds["webhook_url"]; {
		case hasHook && (hasBot || hasChannel):
			f.Add("credentials", "give either a webhook_url or a bot_token with a channel_id, not both")
		case hasHook:
			if _, ok := discordWebhookID(creds["webhook_url"]); !ok {
				f.Add("credentials.webhook_url", "must be a Discord webhook URL: https://discord.com/api/webhooks/{id}/{token}")
			}
		case hasBot != hasChannel || !hasBot:
			f.Add("credentials", "a Discord channel needs a webhook_url, or a bot_token with a channel_id")
		case !discordSnowflake.MatchString(creds["channel_id"]):
			f.Add("credentials.channel_id", "must be a Discord channel id (digits)")
		}
	case platform.Mastodon:
		if !isHTTPURL(creds["instance_url"]) {
			f.Add("credentials.instance_url", "must be the instance's https URL, e.g. https://mastodon.social")
		}
	case platform.Bluesky:
		if !blueskyHandle.MatchString(strings.TrimPrefix(creds["handle"], "@")) {
			f.Add("credentials.handle", "must be a handle such as alice.bsky.social")
		}
		if pds, ok := creds["pds_url"]; ok && !isHTTPURL(pds) {
			f.Add("credentials.pds_url", "must be an https URL")
		}
	}
}

func discordWebhookID(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return "", false
	}
	switch u.Host {
	case "discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com":
	default:
		return "", false
	}
	m := discordWebhook.FindStringSubmatch(u.Path)
	if m == nil {
		return "", false
	}
	return m[2], true
}

func isHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

// identityFromCredentials derives a stable account id and a username from credentials, never
// revealing a secret: tokens are represented by a short fingerprint of their hash.
func identityFromCredentials(name string, creds map[string]string) (externalID, username string) {
	switch name {
	case platform.Bluesky:
		h := strings.ToLower(strings.TrimPrefix(creds["handle"], "@"))
		return h, h
	case platform.Telegram:
		return creds["chat_id"], creds["chat_id"]
	case platform.Discord:
		if id, ok := discordWebhookID(creds["webhook_url"]); ok {
			return "webhook:" + id, "webhook " + id
		}
		return "channel:" + creds["channel_id"], "channel " + creds["channel_id"]
	case platform.Mastodon:
		u, _ := url.Parse(creds["instance_url"])
		fp := fingerprint(creds["access_token"])
		return u.Host + ":" + fp, "@" + u.Host
	default:
		fp := fingerprint(creds["access_token"])
		return "token:" + fp, fp
	}
}

func fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}
