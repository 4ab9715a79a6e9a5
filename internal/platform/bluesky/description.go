package bluesky

import (
	"regexp"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// embedVideoLexicon is Bluesky's own schema of a video embed (app.bsky.embed.video), which gives the size cap and the accepted type.
const embedVideoLexicon = "https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/embed/video.json"

// Description is Bluesky as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Bluesky,
	Name: "Bluesky",
	Capabilities: platform.Capabilities{
		MaxVideoBytes:      100 * platform.MB,
		MaxDurationSeconds: 3 * 60,
		VideoFormats:       []string{platform.FormatMP4},
		Text: map[string]platform.TextLimit{
			// The post record caps text at 300 graphemes and 3000 UTF-8 bytes.
			"text": {Max: 300, Unit: platform.UnitGraphemes, MaxBytes: 3000},
		},
		Thumbnail:    false,
		UploadMethod: platform.UploadDirect,
		// app.bsky.feed.getPosts: likeCount, repostCount + quoteCount (shares),
		// replyCount (comments).
		Analytics: []string{platform.MetricLikes, platform.MetricComments, platform.MetricShares},
		Comments:  true,
		Replies:   true,
		// A reply is an app.bsky.feed.post record: the lexicon's maxGraphemes 300
		// (and maxLength 3000 bytes), as for the post itself.
		ReplyText:        platform.TextLimit{Max: 300, Unit: platform.UnitGraphemes},
		Connect:          platform.ConnectToken,
		CredentialFields: []string{"handle", "app_password", "pds_url"},
		// The video service allows 25 videos or 10 GB per day.
		PostsPerDay: 25,
		Notes: []string{
			"text is also limited to 3000 UTF-8 bytes",
			"connect with an app password, never the account password; pds_url is optional (default https://bsky.social)",
			"a self-hosted PDS without video service takes the video itself, up to its blob limit (5 MiB unless its operator raised PDS_BLOB_UPLOAD_LIMIT)",
			"video upload needs a verified e-mail address on the account",
			"25 videos or 10 GB per day",
			"no views or impressions",
			"shares are reposts plus quotes; comments count direct replies only, as Bluesky does",
		},
		// The app.bsky.embed.video lexicon, Bluesky's own schema of a video embed, states the
		// 100 MB cap and accepts video/mp4 only. The 3-minute cap was announced in the app, not
		// in any documentation found, so it has no source here.
		Sources: map[string]string{
			"max_video_bytes": embedVideoLexicon,
			"video_formats":   embedVideoLexicon,
		},
	},
	RequiredCredentials: []string{"handle", "app_password"},
	CheckCredentials:    checkCredentials,
	AccountOf:           accountOf,
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"text": platform.FromCaptionOrTitle},
}

var handle = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,}$`)

// checkCredentials: a handle (the app password is checked by signing in), and the PDS's
// address when one is given.
func checkCredentials(f *apierr.Fields, creds map[string]string) {
	if !handle.MatchString(strings.TrimPrefix(creds["handle"], "@")) {
		f.Add("credentials.handle", "must be a handle such as alice.bsky.social")
	}
	if pds, ok := creds["pds_url"]; ok && !platform.IsWebURL(pds) {
		f.Add("credentials.pds_url", "must be an https URL")
	}
}

// accountOf is the handle, in lower case.
func accountOf(creds map[string]string) (externalID, username string) {
	h := strings.ToLower(strings.TrimPrefix(creds["handle"], "@"))
	return h, h
}
