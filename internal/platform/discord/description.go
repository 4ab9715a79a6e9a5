package discord

import (
	"net/url"
	"regexp"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Description is Discord as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Discord,
	Name: "Discord",
	API: platform.APIVersion{
		// Calls go to https://discord.com/api/v{version}; v10 has been the stable version
		// since April 30, 2022 (discord-api-docs discussion #4510), which decommissioned v6
		// and v7. Discord publishes no sunset for v10.
		Version: APIVersion, InPath: true, PathPrefix: "/api", Checked: "2026-11-28",
		Source: "https://discord.com/developers/docs/reference#api-versioning",
	},
	Capabilities: platform.Capabilities{
		// discord-api-docs: the default upload limit became 10 MiB for
		// webhooks on 2025-01-16 (it was 8 MiB, then 25 MiB); boosted
		// servers allow more. The default is kept.
		MaxVideoBytes: 10 * platform.MiB,
		VideoFormats:  []string{platform.FormatMP4, platform.FormatMOV, platform.FormatWebM},
		Text: map[string]platform.TextLimit{
			// How Discord counts is not documented: UTF-16 units, the
			// stricter of the plausible units.
			"content": {Max: 2000, Unit: platform.UnitUTF16},
		},
		Thumbnail:    false,
		UploadMethod: platform.UploadMultipart,
		Analytics:    []string{},
		Comments:     false,
		Replies:      false,
		Connect:      platform.ConnectToken,
		// A webhook URL, or a bot token and the channel it posts to
		// (checked together by the API).
		CredentialFields: []string{"webhook_url", "bot_token", "channel_id"},
		Notes: []string{
			"connect with a webhook_url, or with a bot_token and channel_id",
			"a webhook can post but cannot read messages, so there is no comment inbox",
			"the upload limit is 10 MiB unless the server is boosted",
			"Discord offers no analytics (reactions only)",
		},
		// The API reference's "Uploading Files" gives the default upload limit. Discord
		// documents no list of video containers (any file can be attached), so the formats
		// have no source here.
		Sources: map[string]string{
			"max_video_bytes": "https://discord.com/developers/docs/reference#uploading-files",
		},
	},
	RequiredCredentials: nil,
	CheckCredentials:    checkCredentials,
	AccountOf:           accountOf,
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"content": platform.FromCaptionOrTitle},
}

var (
	channelID      = regexp.MustCompile(`^[0-9]{5,25}$`)
	webhookURLPath = regexp.MustCompile(`^/api/(v[0-9]+/)?webhooks/([0-9]{5,25})/[A-Za-z0-9_-]{20,}$`)
)

// checkCredentials: a webhook URL, or a bot token with the channel it posts to, not both.
func checkCredentials(f *apierr.Fields, creds map[string]string) {
	_, hasBot := creds["bot_token"]
	_, hasChannel := creds["channel_id"]
	switch _, hasHook := creds["webhook_url"]; {
	case hasHook && (hasBot || hasChannel):
		f.Add("credentials", "give either a webhook_url or a bot_token with a channel_id, not both")
	case hasHook:
		if _, ok := webhookID(creds["webhook_url"]); !ok {
			f.Add("credentials.webhook_url", "must be a Discord webhook URL: https://discord.com/api/webhooks/{id}/{token}")
		}
	case hasBot != hasChannel || !hasBot:
		f.Add("credentials", "a Discord channel needs a webhook_url, or a bot_token with a channel_id")
	case !channelID.MatchString(creds["channel_id"]):
		f.Add("credentials.channel_id", "must be a Discord channel id (digits)")
	}
}

// accountOf names the webhook or the channel, never the token.
func accountOf(creds map[string]string) (externalID, username string) {
	if id, ok := webhookID(creds["webhook_url"]); ok {
		return "webhook:" + id, "webhook " + id
	}
	return "channel:" + creds["channel_id"], "channel " + creds["channel_id"]
}

// webhookID is the id in a Discord webhook URL, on one of Discord's hosts.
func webhookID(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return "", false
	}
	switch u.Host {
	case "discord.com", "discordapp.com", "ptb.discord.com", "canary.discord.com":
	default:
		return "", false
	}
	m := webhookURLPath.FindStringSubmatch(u.Path)
	if m == nil {
		return "", false
	}
	return m[2], true
}
