package tiktok

import "github.com/reelay/reelay/internal/platform"

// maxDurationSeconds is the longest video the API takes (the option list repeats it).
const maxDurationSeconds = 600

// mediaTransferGuide is the Content Posting API's media transfer guide, whose video restrictions state TikTok's media rules.
const mediaTransferGuide = "https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide"

// Description is TikTok as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.TikTok,
	Name: "TikTok",
	API: platform.APIVersion{
		// Every Content Posting API and Display API call is below /v2/; TikTok has announced
		// neither a successor nor a sunset for it.
		Version: "v2", Checked: "2026-11-28",
		Source: "https://developers.tiktok.com/doc/content-posting-api-reference-direct-post",
	},
	Capabilities: platform.Capabilities{
		// TikTok's video restrictions say "Maximum of 4GB" (PLATFORMS.md
		// marked it unconfirmed; confirmed against a copy of TikTok's
		// Content Posting API docs). Aggregators state 1 GB or 10 GB as
		// their own limits; the documented 4 GB is kept.
		MaxVideoBytes:      4 * platform.GB,
		MinDurationSeconds: 3,
		// 10 minutes is the most the API accepts; each creator's own
		// maximum (max_video_post_duration_sec in creator_info) may be lower.
		MaxDurationSeconds: maxDurationSeconds,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatWebM, platform.FormatMOV},
		// Media transfer guide, video restrictions: H.264, H.265, VP8 or VP9.
		VideoCodecs: []string{"h264", "hevc", "vp8", "vp9"},
		// Media transfer guide, video restrictions
		// (developers.tiktok.com/doc/content-posting-api-media-transfer-guide): height and
		// width each from 360 to 4096 pixels.
		MaxWidth:  4096,
		MaxHeight: 4096,
		MinWidth:  360,
		MinHeight: 360,
		// Media transfer guide, video restrictions
		// (developers.tiktok.com/doc/content-posting-api-media-transfer-guide):
		// "Framerate restrictions: Minimum of 23 FPS, Maximum of 60 FPS". It
		// sets no rule on audio or on the MP4 layout.
		MinFrameRate: 23,
		MaxFrameRate: 60,
		Text: map[string]platform.TextLimit{
			"title": {Max: 2200, Unit: platform.UnitUTF16},
		},
		Thumbnail:    false, // only a frame can be picked (video_cover_timestamp_ms)
		UploadMethod: platform.UploadChunked,
		// video/query's view_count, like_count, comment_count and share_count (scope
		// video.list); no impressions, reach, saves or watch time.
		Analytics: []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricShares},
		// Comments are only in the Research and Business APIs.
		Comments:         false,
		Replies:          false,
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		// TikTok's content sharing guidelines: "typically around 15 posts
		// per day" per creator through Direct Post, varying by creator.
		PostsPerDay: 15,
		Notes: []string{
			"inbox mode needs an action in the TikTok app before the video is published",
			"API clients that have not passed TikTok's audit can only post SELF_ONLY, to private accounts, for at most 5 creators in 24 hours",
			"privacy_level must be one of the creator's privacy_level_options from creator_info",
			"the creator's maximum duration (max_video_post_duration_sec) may be below 600 s",
			"each side of the frame must be 360-4096 px; 23-60 fps",
			"the public post id appears only after moderation, minutes to hours after PUBLISH_COMPLETE",
			"is_aigc must be true for AI-generated video",
			"comments are not available through these APIs",
			"figures exist for public posts once TikTok gives their public id (after moderation; inbox uploads once the creator posts them)",
		},
		// The media transfer guide's video restrictions state the size, duration, formats,
		// codecs, frame sizes and frame rates. The 3-second minimum is in no TikTok page found
		// (only aggregators state it), so it has no source here.
		Sources: map[string]string{
			"max_video_bytes":      mediaTransferGuide,
			"max_duration_seconds": mediaTransferGuide,
			"video_formats":        mediaTransferGuide,
			"video_codecs":         mediaTransferGuide,
			"max_width":            mediaTransferGuide,
			"max_height":           mediaTransferGuide,
			"min_width":            mediaTransferGuide,
			"min_height":           mediaTransferGuide,
			"min_frame_rate":       mediaTransferGuide,
			"max_frame_rate":       mediaTransferGuide,
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"title": platform.FromCaptionOrTitle},
	StaticOptions:       staticOptions,
}

// staticOptions are the tiktok object's choices; the creator's own (creator_info) replace
// them for a connected channel.
func staticOptions() map[string]any {
	return map[string]any{
		"mode": platform.WithNote(platform.Option("string", []any{"inbox", "direct"}, "inbox"),
			"inbox sends the video to the TikTok app, where the creator finishes the post; direct publishes at once"),
		"privacy_level": platform.WithNote(platform.Option("string",
			[]any{"PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"},
			"PUBLIC_TO_EVERYONE"),
			"must be one of the creator's own privacy levels; unaudited API clients can only use SELF_ONLY"),
		"is_aigc":       platform.WithNote(platform.Option("boolean", nil, false), "must be true when the video was made with AI tools"),
		"allow_comment": platform.Option("boolean", nil, true),
		"allow_duet":    platform.Option("boolean", nil, true),
		"allow_stitch":  platform.Option("boolean", nil, true),
		"max_video_post_duration_sec": platform.WithNote(platform.Option("integer", nil, maxDurationSeconds),
			"the API's ceiling; the creator's own maximum may be lower"),
	}
}
