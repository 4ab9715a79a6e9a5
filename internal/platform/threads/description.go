package threads

import "github.com/reelay/reelay/internal/platform"

// videoSpecs is the video specifications of the Threads API overview, which state every media rule of Threads.
const videoSpecs = "https://developers.facebook.com/docs/threads/overview#video-specifications"

// Description is Threads as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Threads,
	Name: "Threads",
	API: platform.APIVersion{
		// The Threads API has had one version; Meta announces no sunset for it.
		Version: APIVersion, InPath: true, Checked: "2026-11-28",
		Source: "https://developers.facebook.com/docs/threads/changelog",
	},
	Capabilities: platform.Capabilities{
		MaxVideoBytes:      1 * platform.GB,
		MaxDurationSeconds: 5 * 60,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatMOV},
		// Threads media specifications (video): HEVC or H264, as Instagram's Reels.
		VideoCodecs: []string{"h264", "hevc"},
		MaxWidth:    1920,
		// Video specifications: "Aspect ratio: 0.01:1 to 10:1" (the simulator enforces it).
		MinAspectRatio: 0.01,
		MaxAspectRatio: 10,
		// Video specifications of the Threads API
		// (developers.facebook.com/docs/threads/overview#video-specifications), the same as
		// Instagram's Reels: "Container: MOV or MP4 (MPEG-4 Part 14), no edit lists, moov
		// atom at the front of the file", "Audio codec: AAC, 48khz sample rate maximum, 1 or
		// 2 channels (mono or stereo)", "Frame rate: 23-60 FPS".
		MinFrameRate:       23,
		MaxFrameRate:       60,
		MoovFirst:          true,
		NoEditLists:        true,
		AudioCodecs:        []string{"aac"},
		MaxAudioSampleRate: 48000,
		MaxAudioChannels:   2,
		Text: map[string]platform.TextLimit{
			// Threads Posts, Limitations: "Text posts are limited to 500
			// characters. Emojis are counted as the number of UTF-8 bytes."
			// (developers.facebook.com/documentation/threads/posts). Text
			// attachments: a post with more than 5 links fails at container
			// creation, THREADS_API__LINK_LIMIT_EXCEEDED (since 2025-12-22).
			"text": {Max: 500, Unit: platform.UnitEmojiBytes, MaxLinks: 5},
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
		ReplyText:        platform.TextLimit{Max: 500, Unit: platform.UnitEmojiBytes, MaxLinks: 5},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		PostsPerDay:      250, // plus 1000 replies, per rolling 24 hours
		Notes: []string{
			"the video URL must be publicly reachable: Meta fetches it",
			"text is counted in characters, each emoji as its UTF-8 bytes (a smiley counts 4), as Threads counts it; at most 5 distinct links",
			"250 API posts and 1000 replies per rolling 24 hours",
			"23-60 fps",
			"shares count reposts, quotes and shares together; replies have no like counts",
		},
		// Every media rule above is in the video specifications of the Threads API overview.
		Sources: map[string]string{
			"max_video_bytes":       videoSpecs,
			"max_duration_seconds":  videoSpecs,
			"video_formats":         videoSpecs,
			"video_codecs":          videoSpecs,
			"max_width":             videoSpecs,
			"min_aspect_ratio":      videoSpecs,
			"max_aspect_ratio":      videoSpecs,
			"min_frame_rate":        videoSpecs,
			"max_frame_rate":        videoSpecs,
			"moov_first":            videoSpecs,
			"no_edit_lists":         videoSpecs,
			"audio_codecs":          videoSpecs,
			"max_audio_sample_rate": videoSpecs,
			"max_audio_channels":    videoSpecs,
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"text": platform.FromCaptionOrTitle},
}
