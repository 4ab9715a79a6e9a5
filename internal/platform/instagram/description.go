package instagram

import "github.com/reelay/reelay/internal/platform"

// reelSpecs is the Reel specifications of the IG User Media reference, which state every media rule of Instagram.
const reelSpecs = "https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reel-specifications"

// Description is Instagram as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Instagram,
	Name: "Instagram",
	API: platform.APIVersion{
		// v26.0 was introduced on July 29, 2026; its "Available until" is still TBD.
		Version: APIVersion, InPath: true, Checked: "2026-11-28",
		Source: "https://developers.facebook.com/docs/graph-api/changelog/versions/",
	},
	Capabilities: platform.Capabilities{
		// Reels specs: 300 MB in older documentation, 1 GB in newer
		// copies; the stricter is kept.
		MaxVideoBytes:      300 * platform.MB,
		MinDurationSeconds: 3,
		MaxDurationSeconds: 15 * 60,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatMOV},
		// Reels specifications (IG User Media reference, media_type REELS): HEVC or H.264,
		// progressive, 4:2:0.
		VideoCodecs: []string{"h264", "hevc"},
		MaxWidth:    1920,
		// Reel specifications: "Required aspect ratio is between 0.01:1 and 10:1 but we
		// recommend 9:16" and "Video bitrate: VBR, 25Mbps maximum" (confirmed in several
		// publishers' copies of the reference; no stored copy of Meta's page itself).
		MinAspectRatio:  0.01,
		MaxAspectRatio:  10,
		MaxVideoBitrate: 25_000_000,
		// Reel specifications of the IG User Media reference
		// (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media#reel-specifications):
		// "Container: MOV or MP4 (MPEG-4 Part 14), no edit lists, moov atom at
		// the front of the file", "Audio codec: AAC, 48khz sample rate maximum,
		// 1 or 2 channels (mono or stereo)", "Frame rate: 23-60 FPS".
		MinFrameRate:       23,
		MaxFrameRate:       60,
		MoovFirst:          true,
		NoEditLists:        true,
		AudioCodecs:        []string{"aac"},
		MaxAudioSampleRate: 48000,
		MaxAudioChannels:   2,
		Text: map[string]platform.TextLimit{
			// The interface gives no limit for instagram.caption; Instagram
			// documents 2,200 characters without saying how it counts them,
			// so UTF-16 units (the stricter of the plausible units) are used.
			"caption": {Max: 2200, Unit: platform.UnitUTF16, MaxHashtags: 30, MaxMentions: 20},
		},
		Thumbnail:    true, // cover_url
		UploadMethod: platform.UploadPull,
		// Media insights (instagram-media/insights reference): views,
		// reach, likes, comments, shares, saved and
		// ig_reels_video_view_total_time. impressions is retired for media
		// created after 2024-07-02 (asking for it fails the whole read).
		Analytics: []string{platform.MetricViews, platform.MetricReach, platform.MetricLikes, platform.MetricComments, platform.MetricShares, platform.MetricSaves, platform.MetricWatchTime},
		Comments:  true,
		Replies:   true,
		// Meta documents no limit for a comment's message; Instagram caps
		// comments like captions, 2,200 characters (one third-party
		// scheduler says 2,196). Counted in UTF-16 units like the caption.
		ReplyText:        platform.TextLimit{Max: 2200, Unit: platform.UnitUTF16},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		// Current Graph API documentation: 100 API-published posts per
		// rolling 24 hours (older documentation and third parties say 25
		// or 50). GET /{ig-user-id}/content_publishing_limit is authoritative.
		PostsPerDay: 100,
		Notes: []string{
			"the video URL must be publicly reachable: Meta fetches it",
			"a container that is not published within 24 hours expires",
			"at most 30 hashtags and 20 @-mentions per caption",
			"MOV or MP4 with the moov atom first, H.264 or HEVC, AAC at most 48 kHz, 23-60 fps; 9:16 recommended",
			"the publishing cap is per rolling 24 hours; content_publishing_limit gives the live usage",
			"only top-level comments take replies (a reply to a reply is posted under its top-level comment), and hidden comments cannot be replied to",
			"insights lag up to 48 hours; missing data is an empty set, not zero",
			"watch time is the total time the Reel was played, replays included; impressions are not available for Reels",
		},
		// Every media rule above is in the Reel specifications of the IG User Media reference.
		Sources: map[string]string{
			"max_video_bytes":       reelSpecs,
			"min_duration_seconds":  reelSpecs,
			"max_duration_seconds":  reelSpecs,
			"video_formats":         reelSpecs,
			"video_codecs":          reelSpecs,
			"max_width":             reelSpecs,
			"min_aspect_ratio":      reelSpecs,
			"max_aspect_ratio":      reelSpecs,
			"max_video_bitrate":     reelSpecs,
			"min_frame_rate":        reelSpecs,
			"max_frame_rate":        reelSpecs,
			"moov_first":            reelSpecs,
			"no_edit_lists":         reelSpecs,
			"audio_codecs":          reelSpecs,
			"max_audio_sample_rate": reelSpecs,
			"max_audio_channels":    reelSpecs,
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"caption": platform.FromCaptionOrTitle},
	StaticOptions:       staticOptions,
}

func staticOptions() map[string]any {
	return map[string]any{
		"share_to_feed": platform.WithNote(platform.Option("boolean", nil, true), "also show the Reel in the profile feed"),
	}
}
