package telegram

import (
	"regexp"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Description is Telegram as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Telegram,
	Name: "Telegram",
	Capabilities: platform.Capabilities{
		// Bot API sendVideo: "Bots can currently send video files of up to
		// 50 MB in size" (confirmed in several client libraries' copies of
		// the reference); 20 MB when Telegram fetches by URL, which is why
		// the file is uploaded.
		MaxVideoBytes: 50 * platform.MB,
		VideoFormats:  []string{platform.FormatMP4},
		Text: map[string]platform.TextLimit{
			// "0-1024 characters after entities parsing", unit not stated.
			// Telegram measures entity offsets in UTF-16 units, and UTF-16
			// is also the stricter of the plausible units.
			"caption": {Max: 1024, Unit: platform.UnitUTF16},
		},
		Thumbnail:    true,
		UploadMethod: platform.UploadMultipart,
		Analytics:    []string{},
		// Comments live in the channel's linked discussion group, which the Bot API
		// hands a bot only as live updates (getUpdates or a webhook): there is no way
		// to read a post's comments after the fact.
		Comments:         false,
		Replies:          false,
		Connect:          platform.ConnectToken,
		CredentialFields: []string{"bot_token", "chat_id"},
		Notes: []string{
			"the bot must be an administrator of the channel",
			"Telegram clients play MP4; other formats arrive as documents",
			"the thumbnail must be a JPEG of at most 200 kB and 320 px a side",
			"comments exist only in the channel's linked discussion group, which reelay does not read",
			"about 1 message per second per chat",
			"the Bot API offers no analytics",
		},
		// sendVideo: "Telegram clients support MPEG4 videos" and the 50 MB cap.
		Sources: map[string]string{
			"max_video_bytes": "https://core.telegram.org/bots/api#sendvideo",
			"video_formats":   "https://core.telegram.org/bots/api#sendvideo",
		},
	},
	RequiredCredentials: []string{"bot_token", "chat_id"},
	CheckCredentials:    checkCredentials,
	AccountOf:           func(creds map[string]string) (string, string) { return creds["chat_id"], creds["chat_id"] },
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"caption": platform.FromCaptionOrTitle},
}

var (
	botToken = regexp.MustCompile(`^[0-9]{3,}:[A-Za-z0-9_-]{30,}$`)
	chatID   = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$`)
)

// checkCredentials: a bot token as @BotFather gives it, and the chat it posts to.
func checkCredentials(f *apierr.Fields, creds map[string]string) {
	if !botToken.MatchString(creds["bot_token"]) {
		f.Add("credentials.bot_token", "is not a bot token of the form 123456:ABC... (from @BotFather)")
	}
	if !chatID.MatchString(creds["chat_id"]) {
		f.Add("credentials.chat_id", "must be a numeric chat id or a @channelusername")
	}
}
