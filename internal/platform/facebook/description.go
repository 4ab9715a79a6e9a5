package facebook

import "github.com/reelay/reelay/internal/platform"

// reelsSpecs is the Reels Publishing API guide, whose video specifications state Facebook's Reel rules.
const reelsSpecs = "https://developers.facebook.com/docs/video-api/guides/reels-publishing"

// Description is Facebook as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Facebook,
	Name: "Facebook",
	API: platform.APIVersion{
		// v26.0 was introduced on July 29, 2026; its "Available until" is still TBD.
		Version: APIVersion, InPath: true, Checked: "2026-11-28",
		Source: "https://developers.facebook.com/docs/graph-api/changelog/versions/",
	},
	Capabilities: platform.Capabilities{
		// Reels: 1 GB or 2 GB depending on the source; the stricter is kept.
		MaxVideoBytes:      1 * platform.GB,
		MinDurationSeconds: 3,
		MaxDurationSeconds: 90,
		VideoFormats:       []string{platform.FormatMP4},
		// Reels Publishing API, video settings: "Compression – H.264, H.265 (VP9, AV1 are also
		// supported)".
		VideoCodecs:  []string{"h264", "hevc", "vp9", "av1"},
		AspectRatios: []string{"9:16"},
		// Reels Publishing API, video specifications: "Resolution: 1080 x 1920 pixels
		// (recommended). Minimum is 540 x 960 pixels".
		MinWidth:  540,
		MinHeight: 960,
		// Reels Publishing API, video specifications
		// (developers.facebook.com/docs/video-api/guides/reels-publishing):
		// "Frame Rate: 24 to 60 frames per second". Its audio settings (AAC
		// LC, 48 kHz, stereo) are given as settings to use, not as limits,
		// and the page names no container layout rule, so none is checked.
		MinFrameRate: 24,
		MaxFrameRate: 60,
		Text: map[string]platform.TextLimit{
			"description": {Max: 5000, Unit: platform.UnitUTF16},
			"title":       {Max: 200, Unit: platform.UnitUTF16},
		},
		Thumbnail:    false,
		UploadMethod: platform.UploadResumable,
		// Reels metrics of video_insights (video-api insights guide):
		// blue_reels_play_count (views), post_impressions_unique (reach),
		// post_video_likes_by_reaction_type (likes),
		// post_video_social_actions (comments and shares),
		// post_video_view_time (watch time). No impressions or saves.
		Analytics: []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricShares, platform.MetricReach, platform.MetricWatchTime},
		Comments:  true,
		Replies:   true,
		// Graph comments: message up to 8,000 characters (from memory; no
		// stored copy of Meta's documentation states a limit).
		ReplyText:        platform.TextLimit{Max: 8000, Unit: platform.UnitUTF16},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		PostsPerDay:      30, // API-published Reels per Page per 24 hours
		Notes: []string{
			"publishes as a Page with a Page access token, not a user token",
			"Reels must be at least 540x960, 24-60 fps",
			"30 API-published Reels per Page per 24 hours",
			"views are plays without replays; likes are all reactions; watch time includes replays",
			"comments are two levels deep: a reply to a reply is posted under its top-level comment",
		},
		// The Reels Publishing API's video specifications state the rules below. The page gives
		// no file size, so the 1 GB cap has no source here.
		Sources: map[string]string{
			"min_duration_seconds": reelsSpecs,
			"max_duration_seconds": reelsSpecs,
			"video_formats":        reelsSpecs,
			"video_codecs":         reelsSpecs,
			"aspect_ratios":        reelsSpecs,
			"min_width":            reelsSpecs,
			"min_height":           reelsSpecs,
			"min_frame_rate":       reelsSpecs,
			"max_frame_rate":       reelsSpecs,
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"description": platform.FromCaption, "title": platform.FromTitle},
}
