package linkedin

import "github.com/reelay/reelay/internal/platform"

// videosAPI is LinkedIn's Videos API reference, which states a video's size, length and format.
const videosAPI = "https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api"

// Description is LinkedIn as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.LinkedIn,
	Name: "LinkedIn",
	API: platform.APIVersion{
		// LinkedIn's Recent Marketing API Changes names "August 2026 - Version 202608
		// (Latest)"; each version is "supported and stable for a minimum of one year before
		// sunset" (versioning page), and its sunset date appears on the migrations page once
		// LinkedIn sets it (202603's is March 16, 2027; 202608's is not listed yet). LinkedIn
		// released no 202512.
		Version: "202608", Checked: "2026-11-28",
		Source: "https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations",
	},
	Capabilities: platform.Capabilities{
		// Videos API: 200 MB to 500 MB depending on the documentation
		// version; the stricter is kept.
		MaxVideoBytes: 200 * platform.MB,
		// 75 KB, read as KiB: the stricter.
		MinVideoBytes:      75 << 10,
		MinDurationSeconds: 3,
		MaxDurationSeconds: 30 * 60,
		VideoFormats:       []string{platform.FormatMP4},
		MinAspectRatio:     1 / 2.4,
		MaxAspectRatio:     2.4,
		// LinkedIn's video ad specifications, for videos uploaded through this same Videos
		// API: "Codec format: H.264 or VP8". An HEVC picture is re-encoded (the simulator
		// refuses it).
		VideoCodecs: []string{"h264", "vp8"},
		Text: map[string]platform.TextLimit{
			// How LinkedIn counts is not documented: UTF-16 units, the
			// stricter of the plausible units.
			"commentary": {Max: 3000, Unit: platform.UnitUTF16},
			"title":      {Max: 200, Unit: platform.UnitUTF16},
		},
		Thumbnail:    true, // uploadThumbnail at initializeUpload
		UploadMethod: platform.UploadChunked,
		// Member Post Statistics (IMPRESSION, MEMBERS_REACHED, RESHARE, REACTION, COMMENT)
		// and Member Video Statistics (VIDEO_PLAY as views, VIDEO_WATCH_TIME in ms).
		Analytics: []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricShares, platform.MetricImpressions, platform.MetricReach, platform.MetricWatchTime},
		Comments:  true,
		Replies:   true,
		// 1,250 characters is LinkedIn's product limit of a comment as integrators
		// enforce it (Buffer's API refuses a LinkedIn comment "exceed[ing] 1250
		// characters"); the Comments API pages state no number. How it is counted is not
		// documented: UTF-16 units, the stricter of the plausible units.
		ReplyText:        platform.TextLimit{Max: 1250, Unit: platform.UnitUTF16},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		PostsPerDay:      150,
		Notes: []string{
			"commentary is in little-text format: \\ | { } @ [ ] ( ) < > # * _ ~ must be backslash-escaped, or LinkedIn truncates silently",
			"access tokens last 60 days; refresh tokens are issued only to approved partners",
			"the video must be AVAILABLE before the post is created",
			"post statistics need the r_member_postAnalytics permission (Community Management API, versions 202506 and later); one metric a call, seven calls a post",
			"plays have no data a year after the post",
			"reading comments needs r_member_social, which LinkedIn grants to select developers; replying needs w_member_social",
			"comments nest one level: a reply to a reply is posted below its first-level comment",
			"comments name their authors by member URN only",
		},
		// The Videos API reference states the file size, length and format of a video. The
		// 1:2.4 to 2.4:1 aspect range is in no LinkedIn page found (only aggregators state it),
		// so it has no source here.
		Sources: map[string]string{
			"max_video_bytes":      videosAPI,
			"min_video_bytes":      videosAPI,
			"min_duration_seconds": videosAPI,
			"max_duration_seconds": videosAPI,
			"video_formats":        videosAPI,
			"video_codecs":         "https://www.linkedin.com/help/lms/answer/a424737",
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"commentary": platform.FromCaptionOrTitle, "title": platform.FromTitle},
}
