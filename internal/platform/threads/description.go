package threads

import "github.com/reelay/reelay/internal/platform"

// Description is Threads as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:         platform.Threads,
	Name:       "Threads",
	APIVersion: APIVersion,
	Capabilities: platform.Capabilities{
		MaxVideoBytes:      1 * platform.GB,
		MaxDurationSeconds: 5 * 60,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatMOV},
		MaxWidth:           1920,
		Text: map[string]platform.TextLimit{
			// Threads: "Text posts are limited to 500 characters. Emojis
			// are counted as the number of UTF-8 bytes." That mixed count
			// is not one of the units; counting every character in UTF-8
			// bytes is never below it, so bytes is the stricter reading.
			"text": {Max: 500, Unit: platform.UnitBytes},
		},
		Thumbnail:    false,
		UploadMethod: platform.UploadPull,
		// Media insights (threads/insights): views, likes, replies
		// (comments, nested replies included) and reposts, quotes and
		// shares (together: shares). No reach, impressions, saves or watch
		// time.
		Analytics: []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricShares},
		Comments:  true,
		Replies:   true,
		// A reply is a Threads post (a TEXT container with reply_to_id):
		// the same 500 limit as text.
		ReplyText:        platform.TextLimit{Max: 500, Unit: platform.UnitBytes},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		PostsPerDay:      250, // plus 1000 replies, per rolling 24 hours
		Notes: []string{
			"the video URL must be publicly reachable: Meta fetches it",
			"text is counted in UTF-8 bytes here: Threads counts each emoji as its UTF-8 byte length, and non-ASCII text may therefore fit better than shown",
			"250 API posts and 1000 replies per rolling 24 hours",
			"23-60 fps",
			"shares count reposts, quotes and shares together; replies have no like counts",
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"text": platform.FromCaptionOrTitle},
}
