package mastodon

import (
	"net/url"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Description is Mastodon as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID: platform.Mastodon,
	API: platform.APIVersion{
		// Not a version reelay asks for but the oldest server it works with: POST
		// /api/v2/media was added in Mastodon 3.1.3 and took its thumbnail parameter in 3.2.0
		// (the method's version history). Every instance chooses its own release; the channel
		// check compares the instance's with this one.
		Version: "3.2.0", Checked: "2026-11-28",
		Source: "https://docs.joinmastodon.org/methods/media/#v2",
	},
	Name: "Mastodon",
	Capabilities: platform.Capabilities{
		// Defaults of a stock server (MediaAttachment video limit 99 MiB);
		// every server can change them, see Notes.
		MaxVideoBytes: 99 * platform.MiB,
		VideoFormats:  []string{platform.FormatMP4, platform.FormatMOV, platform.FormatWebM},
		// Each server announces its limit as configuration.media_attachments
		// .video_frame_rate_limit (docs.joinmastodon.org/entities/Instance/);
		// a stock server's is MediaAttachment::MAX_VIDEO_FRAME_RATE, 120, and it
		// refuses a faster video ("150fps videos are not supported", checked
		// in Mastodon's app/models/media_attachment.rb). No audio or layout rule.
		MaxFrameRate: 120,
		Text: map[string]platform.TextLimit{
			// StatusLengthValidator counts each_grapheme_cluster.size
			// (checked in Mastodon's source); 500 is the stock maximum.
			"text": {Max: 500, Unit: platform.UnitGraphemes},
		},
		Thumbnail:    true,
		UploadMethod: platform.UploadMultipart,
		// Status: favourites_count, reblogs_count (+ quotes_count from 4.5; shares),
		// replies_count (comments).
		Analytics: []string{platform.MetricLikes, platform.MetricComments, platform.MetricShares},
		Comments:  true,
		Replies:   true,
		// A reply is a status: the instance's max_characters, 500 on a stock server,
		// counted as for any status (StatusLengthValidator).
		ReplyText:        platform.TextLimit{Max: 500, Unit: platform.UnitGraphemes},
		Connect:          platform.ConnectToken,
		CredentialFields: []string{"instance_url", "access_token"},
		Notes: []string{
			"limits are per server: GET /api/v2/instance configuration overrides these defaults",
			"each URL counts as 23 characters, and a content warning counts toward the same limit",
			"30 media uploads per 30 minutes; 300 requests per 5 minutes",
			"no views or impressions",
			"comments count direct replies only, as Mastodon does",
			"a reply begins with @author (as Mastodon's apps do), which counts toward the limit as @user",
		},
		// "Posting to your profile" lists the video containers and the 99 MB cap of a stock
		// server; the Instance entity documents the frame rate limit a server announces.
		Sources: map[string]string{
			"max_video_bytes": "https://docs.joinmastodon.org/user/posting/#media",
			"video_formats":   "https://docs.joinmastodon.org/user/posting/#media",
			"max_frame_rate":  "https://docs.joinmastodon.org/entities/Instance/",
		},
	},
	RequiredCredentials: []string{"instance_url", "access_token"},
	CheckCredentials:    checkCredentials,
	AccountOf:           accountOf,
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"text": platform.FromCaptionOrTitle},
	OwnTexts:            []string{"text"},
}

// checkCredentials: the instance's address beside the token.
func checkCredentials(f *apierr.Fields, creds map[string]string) {
	if !platform.IsWebURL(creds["instance_url"]) {
		f.Add("credentials.instance_url", "must be the instance's https URL, e.g. https://mastodon.social")
	}
}

// accountOf names the instance and a fingerprint of the token.
func accountOf(creds map[string]string) (externalID, username string) {
	u, _ := url.Parse(creds["instance_url"])
	return u.Host + ":" + platform.Fingerprint(creds["access_token"]), "@" + u.Host
}
