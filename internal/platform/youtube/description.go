package youtube

import "github.com/reelay/reelay/internal/platform"

// Description is YouTube as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.YouTube,
	Name: "YouTube",
	Capabilities: platform.Capabilities{
		MaxVideoBytes: 256 * platform.GB,
		// 15 minutes is the cap for channels that have not verified a
		// phone number (12 hours once verified); the stricter is kept
		// because verification cannot be seen from the API.
		MaxDurationSeconds: 15 * 60,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatMOV, platform.FormatWebM},
		Text: map[string]platform.TextLimit{
			// videos resource: title "maximum length of 100 characters",
			// description "maximum length of 5000 bytes" (PLATFORMS.md had
			// this from memory; confirmed against a copy of the videos
			// resource reference. Third-party schedulers say 5,000
			// characters: bytes is the stricter and the documented one).
			"title":       {Max: 100, Unit: platform.UnitCharacters, Forbidden: "<>"},
			"description": {Max: 5000, Unit: platform.UnitBytes, Forbidden: "<>"},
		},
		Thumbnail:    true,
		UploadMethod: platform.UploadResumable,
		// What videos.list's statistics part gives. Shares and watch time are only in
		// the YouTube Analytics API (another scope, 48-72 h lag), which reelay does not
		// read; impressions are in neither.
		Analytics: []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments},
		Comments:  true,
		Replies:   true,
		// comments.insert refuses a long textOriginal (commentTextTooLong) without
		// giving the number. 10,000 characters is the commonly reported limit; no
		// stored copy of Google's documentation confirms it (checked for issue 5).
		ReplyText:        platform.TextLimit{Max: 10000, Unit: platform.UnitCharacters},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		// The publish cap is a quota of the API project, shared by every
		// channel of the deployment, not a per-channel cap: see Notes. Since 1 June 2026
		// videos.insert is charged to a bucket of its own, 100 calls a day by default at 1
		// each, and every other method to the 10,000 daily units
		// (https://developers.google.com/youtube/v3/determine_quota_cost; the revision
		// history, https://developers.google.com/youtube/v3/revision_history, dates the
		// buckets to 1 June 2026 and an upload's former cost of about 1,600 units to before
		// 4 December 2025).
		PostsPerDay: 0,
		// From 28 July 2020 YouTube locked videos.insert uploads of unverified API projects
		// to private until the project passed an audit; the YouTube Data API revision
		// history of 2 November 2026 reverses that (https://developers.google.com/youtube/
		// data/revision_history, "Videos uploaded through the videos.insert method from
		// unverified API projects are no longer restricted to private viewing mode"), and
		// status.privacyStatus in the videos resource says the same. The note is for those
		// who remember the old rule.
		Notes: []string{
			"a vertical or square video of at most 3 minutes is classified as a Short; the API has no Shorts flag",
			"uploads of API projects Google has not audited keep the privacy asked for: YouTube stopped locking them to private on 2 November 2026",
			"upload quota belongs to the API project and is shared by all channels: videos.insert has a bucket of its own, 100 uploads a day by default, apart from the 10,000 daily units all other calls share",
			"title and description must not contain < or >",
			"videos longer than 15 minutes need a verified channel",
			"custom thumbnails need a verified channel",
			"figures are the public counts of videos.list (views, likes, comments); shares and watch time need the YouTube Analytics API, which reelay does not read",
			"replies attach to the top-level comment: YouTube threads are one level deep",
			"a reply costs 50 quota units, a comment listing 1",
		},
		// Sources of the media rules: videos.insert states the 256 GB cap and takes any video/*
		// MIME type (MP4, MOV and WebM among them). The 15-minute cap of unverified channels is
		// stated only in YouTube Help, which no stored copy confirms: it has no source here.
		Sources: map[string]string{
			"max_video_bytes": "https://developers.google.com/youtube/v3/docs/videos/insert",
			"video_formats":   "https://developers.google.com/youtube/v3/docs/videos/insert",
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	StaticOptions:       staticOptions,
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"title": platform.FromTitleOrDerived, "description": platform.FromCaption},
}

// staticOptions are the youtube object's choices, and the video categories of region US
// (the live ones depend on the channel's region).
func staticOptions() map[string]any {
	return map[string]any{
		"privacy_status": platform.Option("string", []any{"public", "unlisted", "private"}, "public"),
		"made_for_kids":  platform.Option("boolean", nil, false),
		"category_id": platform.WithNote(platform.Option("string", categoriesUS(), "22"),
			"YouTube videoCategories assignable in region US; the default is People & Blogs"),
	}
}

// categoriesUS lists the video categories that videos.insert accepts (assignable) for region
// US, as videoCategories.list?regionCode=US returns them. Categories 18, 21 and 30-44 exist
// but are not assignable.
func categoriesUS() []any {
	cats := []struct{ id, title string }{
		{"1", "Film & Animation"},
		{"2", "Autos & Vehicles"},
		{"10", "Music"},
		{"15", "Pets & Animals"},
		{"17", "Sports"},
		{"19", "Travel & Events"},
		{"20", "Gaming"},
		{"22", "People & Blogs"},
		{"23", "Comedy"},
		{"24", "Entertainment"},
		{"25", "News & Politics"},
		{"26", "Howto & Style"},
		{"27", "Education"},
		{"28", "Science & Technology"},
		{"29", "Nonprofits & Activism"},
	}
	out := make([]any, 0, len(cats))
	for _, c := range cats {
		out = append(out, map[string]any{"id": c.id, "title": c.title})
	}
	return out
}
