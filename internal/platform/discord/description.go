package discord

import "github.com/reelay/reelay/internal/platform"

// Description is Discord as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Discord,
	Name: "Discord",
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
	},
	RequiredCredentials: nil,
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"content": platform.FromCaptionOrTitle},
}
