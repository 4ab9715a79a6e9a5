package platform

import (
	"maps"
	"strings"
)

// Capabilities describes what a platform accepts and offers. It is shown to
// API users as channel.capabilities and is what publish validation checks a
// destination against.
type Capabilities struct {
	// MaxVideoBytes is the largest video file the platform accepts; 0 = none known.
	MaxVideoBytes int64 `json:"max_video_bytes"`
	// MinVideoBytes is the smallest video file the platform accepts; 0 = none.
	MinVideoBytes int64 `json:"min_video_bytes"`
	// MinDurationSeconds is the shortest accepted video; 0 = no minimum.
	MinDurationSeconds float64 `json:"min_duration_seconds"`
	// MaxDurationSeconds is the longest accepted video; 0 = none known.
	MaxDurationSeconds float64 `json:"max_duration_seconds"`
	// VideoFormats lists the accepted containers, among "mp4", "mov" and "webm".
	VideoFormats []string `json:"video_formats"`
	// AspectRatios lists the only aspect ratios (width:height) the platform
	// accepts, for platforms that give a list; empty = any.
	AspectRatios []string `json:"aspect_ratios"`
	// MinAspectRatio is the smallest width/height accepted, for platforms that
	// give a range; 0 = unbounded.
	MinAspectRatio float64 `json:"min_aspect_ratio"`
	// MaxAspectRatio is the largest width/height accepted; 0 = unbounded.
	MaxAspectRatio float64 `json:"max_aspect_ratio"`
	// MaxWidth is the largest frame width in pixels; 0 = none known.
	MaxWidth int `json:"max_width"`
	// Text holds the length limit of each text field, keyed by the field's
	// name in the interface's per-platform object (youtube.title, bluesky.text, ...).
	Text map[string]TextLimit `json:"text"`
	// Thumbnail reports whether a custom thumbnail (cover image) can be set.
	Thumbnail bool `json:"thumbnail"`
	// UploadMethod is how the video reaches the platform: "resumable"
	// (session with resumable ranges), "chunked" (ordered chunks), "pull" (the
	// platform fetches a public URL), "multipart" (one form upload) or
	// "direct" (one raw request body).
	UploadMethod string `json:"upload_method"`
	// Analytics lists the metrics the platform provides, among views, likes,
	// comments, shares, impressions, reach, saves and watch_time. A metric not
	// listed is unavailable and must never be reported as zero.
	Analytics []string `json:"analytics"`
	// Comments reports whether audience comments can be read.
	Comments bool `json:"comments"`
	// Replies reports whether a reply can be posted to a comment.
	Replies bool `json:"replies"`
	// ReplyText is the length limit of a reply to a comment (Max 0 where there are no replies).
	ReplyText TextLimit `json:"reply_text"`
	// Connect is how a channel is connected: "oauth" (consent flow, or a
	// token pair obtained from one) or "token" (credentials pasted by the user).
	Connect string `json:"connect"`
	// CredentialFields names the fields of POST /channels credentials,
	// required and optional; RequiredCredentials gives the required ones.
	CredentialFields []string `json:"credential_fields"`
	// PostsPerDay is the platform's documented publish cap per account per
	// (rolling) day; 0 = none known.
	PostsPerDay int `json:"posts_per_day"`
	// Notes are short human-readable remarks that the fields above cannot express.
	Notes []string `json:"notes"`
}

// Ways a channel is connected.
const (
	// ConnectOAuth means the channel is connected through the platform's
	// OAuth consent flow (or with an access/refresh token pair from one).
	ConnectOAuth = "oauth"
	// ConnectToken means the user supplies long-lived credentials directly.
	ConnectToken = "token"
)

// Upload methods.
const (
	// UploadResumable is a session upload whose received range can be queried
	// and resumed (YouTube, Facebook's rupload).
	UploadResumable = "resumable"
	// UploadChunked sends ordered byte ranges to upload URLs the platform hands out.
	UploadChunked = "chunked"
	// UploadPull has the platform fetch the video from a public URL.
	UploadPull = "pull"
	// UploadMultipart sends the file in one multipart/form-data request.
	UploadMultipart = "multipart"
	// UploadDirect sends the file as the raw body of one request.
	UploadDirect = "direct"
)

// Metric names used in Capabilities.Analytics.
const (
	MetricViews       = "views"       // plays or views, as the platform counts them
	MetricLikes       = "likes"       // likes, reactions, favourites, upvotes
	MetricComments    = "comments"    // comments or replies to the post
	MetricShares      = "shares"      // shares, reposts, reblogs
	MetricImpressions = "impressions" // times shown on screen
	MetricReach       = "reach"       // distinct accounts reached
	MetricSaves       = "saves"       // saves or bookmarks
	MetricWatchTime   = "watch_time"  // total or average watch time
)

// Video containers used in Capabilities.VideoFormats.
const (
	FormatMP4  = "mp4"
	FormatMOV  = "mov"
	FormatWebM = "webm"
)

// Byte sizes. Platforms write "MB" and "GB" without saying which; the decimal
// reading is the smaller, so it is used unless the source says MiB.
const (
	mb  = 1000 * 1000
	gb  = 1000 * mb
	mib = 1 << 20
)

// entry is one platform's registry record: its capabilities and which of its
// credential fields a token-based connection must supply.
type entry struct {
	caps     Capabilities
	required []string
}

// oauthCredentials are the fields a channel of an OAuth platform can be
// connected with directly: a token pair obtained elsewhere. The refresh token
// is optional because some platforms (LinkedIn outside approved partners)
// never issue one.
func oauthCredentials() (all, required []string) {
	return []string{"access_token", "refresh_token"}, []string{"access_token"}
}

// registry is the single place where every platform fact lives. Sources are
// those named in PLATFORMS.md unless a comment says otherwise.
var registry = func() map[string]entry {
	oauthAll, oauthRequired := oauthCredentials()
	return map[string]entry{
		YouTube: {caps: Capabilities{
			MaxVideoBytes: 256 * gb,
			// 15 minutes is the cap for channels that have not verified a
			// phone number (12 hours once verified); the stricter is kept
			// because verification cannot be seen from the API.
			MaxDurationSeconds: 15 * 60,
			VideoFormats:       []string{FormatMP4, FormatMOV, FormatWebM},
			Text: map[string]TextLimit{
				// videos resource: title "maximum length of 100 characters",
				// description "maximum length of 5000 bytes" (PLATFORMS.md had
				// this from memory; confirmed against a copy of the videos
				// resource reference. Third-party schedulers say 5,000
				// characters: bytes is the stricter and the documented one).
				"title":       {Max: 100, Unit: UnitCharacters, Forbidden: "<>"},
				"description": {Max: 5000, Unit: UnitBytes, Forbidden: "<>"},
			},
			Thumbnail:    true,
			UploadMethod: UploadResumable,
			// What videos.list's statistics part gives. Shares and watch time are only in
			// the YouTube Analytics API (another scope, 48-72 h lag), which reelay does not
			// read; impressions are in neither.
			Analytics: []string{MetricViews, MetricLikes, MetricComments},
			Comments:  true,
			Replies:   true,
			// comments.insert refuses a long textOriginal (commentTextTooLong) without
			// giving the number. 10,000 characters is the commonly reported limit; no
			// stored copy of Google's documentation confirms it (checked for issue 5).
			ReplyText:        TextLimit{Max: 10000, Unit: UnitCharacters},
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
			// The publish cap is a quota of the API project, shared by every
			// channel of the deployment, not a per-channel cap: see Notes.
			PostsPerDay: 0,
			Notes: []string{
				"a vertical or square video of at most 3 minutes is classified as a Short; the API has no Shorts flag",
				"videos uploaded by an API project that has not passed Google's audit are forced to private",
				"upload quota belongs to the API project and is shared by all channels: an insert costs 1,600 of the default 10,000 daily units (about 6 uploads a day); newer projects have a separate bucket of 100 uploads a day",
				"title and description must not contain < or >",
				"videos longer than 15 minutes need a verified channel",
				"custom thumbnails need a verified channel",
				"figures are the public counts of videos.list (views, likes, comments); shares and watch time need the YouTube Analytics API, which reelay does not read",
				"replies attach to the top-level comment: YouTube threads are one level deep",
				"a reply costs 50 quota units, a comment listing 1",
			},
		}, required: oauthRequired},

		Instagram: {caps: Capabilities{
			// Reels specs: 300 MB in older documentation, 1 GB in newer
			// copies; the stricter is kept.
			MaxVideoBytes:      300 * mb,
			MinDurationSeconds: 3,
			MaxDurationSeconds: 15 * 60,
			VideoFormats:       []string{FormatMP4, FormatMOV},
			MaxWidth:           1920,
			Text: map[string]TextLimit{
				// The interface gives no limit for instagram.caption; Instagram
				// documents 2,200 characters without saying how it counts them,
				// so UTF-16 units (the stricter of the plausible units) are used.
				"caption": {Max: 2200, Unit: UnitUTF16, MaxHashtags: 30, MaxMentions: 20},
			},
			Thumbnail:    true, // cover_url
			UploadMethod: UploadPull,
			// Media insights (instagram-media/insights reference): views,
			// reach, likes, comments, shares, saved and
			// ig_reels_video_view_total_time. impressions is retired for media
			// created after 2024-07-02 (asking for it fails the whole read).
			Analytics: []string{MetricViews, MetricReach, MetricLikes, MetricComments, MetricShares, MetricSaves, MetricWatchTime},
			Comments:  true,
			Replies:   true,
			// Meta documents no limit for a comment's message; Instagram caps
			// comments like captions, 2,200 characters (one third-party
			// scheduler says 2,196). Counted in UTF-16 units like the caption.
			ReplyText:        TextLimit{Max: 2200, Unit: UnitUTF16},
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
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
		}, required: oauthRequired},

		TikTok: {caps: Capabilities{
			// TikTok's video restrictions say "Maximum of 4GB" (PLATFORMS.md
			// marked it unconfirmed; confirmed against a copy of TikTok's
			// Content Posting API docs). Aggregators state 1 GB or 10 GB as
			// their own limits; the documented 4 GB is kept.
			MaxVideoBytes:      4 * gb,
			MinDurationSeconds: 3,
			// 10 minutes is the most the API accepts; each creator's own
			// maximum (max_video_post_duration_sec in creator_info) may be lower.
			MaxDurationSeconds: 600,
			VideoFormats:       []string{FormatMP4, FormatWebM, FormatMOV},
			MaxWidth:           4096,
			Text: map[string]TextLimit{
				"title": {Max: 2200, Unit: UnitUTF16},
			},
			Thumbnail:    false, // only a frame can be picked (video_cover_timestamp_ms)
			UploadMethod: UploadChunked,
			// video/query's view_count, like_count, comment_count and share_count (scope
			// video.list); no impressions, reach, saves or watch time.
			Analytics: []string{MetricViews, MetricLikes, MetricComments, MetricShares},
			// Comments are only in the Research and Business APIs.
			Comments:         false,
			Replies:          false,
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
			// TikTok's content sharing guidelines: "typically around 15 posts
			// per day" per creator through Direct Post, varying by creator.
			PostsPerDay: 15,
			Notes: []string{
				"inbox mode needs an action in the TikTok app before the video is published",
				"API clients that have not passed TikTok's audit can only post SELF_ONLY, to private accounts",
				"privacy_level must be one of the creator's privacy_level_options from creator_info",
				"the creator's maximum duration (max_video_post_duration_sec) may be below 600 s",
				"each side of the frame must be 360-4096 px; 23-60 fps",
				"the public post id appears only after moderation, minutes to hours after PUBLISH_COMPLETE",
				"is_aigc must be true for AI-generated video",
				"comments are not available through these APIs",
				"figures exist for public posts once TikTok gives their public id (after moderation; inbox uploads once the creator posts them)",
			},
		}, required: oauthRequired},

		LinkedIn: {caps: Capabilities{
			// Videos API: 200 MB to 500 MB depending on the documentation
			// version; the stricter is kept.
			MaxVideoBytes: 200 * mb,
			// 75 KB, read as KiB: the stricter.
			MinVideoBytes:      75 << 10,
			MinDurationSeconds: 3,
			MaxDurationSeconds: 30 * 60,
			VideoFormats:       []string{FormatMP4},
			MinAspectRatio:     1 / 2.4,
			MaxAspectRatio:     2.4,
			Text: map[string]TextLimit{
				// How LinkedIn counts is not documented: UTF-16 units, the
				// stricter of the plausible units.
				"commentary": {Max: 3000, Unit: UnitUTF16},
				"title":      {Max: 200, Unit: UnitUTF16},
			},
			Thumbnail:    true, // uploadThumbnail at initializeUpload
			UploadMethod: UploadChunked,
			// Member Post Statistics (IMPRESSION, MEMBERS_REACHED, RESHARE, REACTION, COMMENT)
			// and Member Video Statistics (VIDEO_PLAY as views, VIDEO_WATCH_TIME in ms).
			Analytics: []string{MetricViews, MetricLikes, MetricComments, MetricShares, MetricImpressions, MetricReach, MetricWatchTime},
			Comments:  true,
			Replies:   true,
			// 1,250 characters is LinkedIn's product limit of a comment as integrators
			// enforce it (Buffer's API refuses a LinkedIn comment "exceed[ing] 1250
			// characters"); the Comments API pages state no number. How it is counted is not
			// documented: UTF-16 units, the stricter of the plausible units.
			ReplyText:        TextLimit{Max: 1250, Unit: UnitUTF16},
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
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
		}, required: oauthRequired},

		Pinterest: {caps: Capabilities{
			MaxVideoBytes:      2 * gb,
			MinDurationSeconds: 4,
			MaxDurationSeconds: 15 * 60,
			VideoFormats:       []string{FormatMP4, FormatMOV},
			AspectRatios:       []string{"2:3", "1:1", "9:16"},
			Text: map[string]TextLimit{
				"title":       {Max: 100, Unit: UnitUTF16},
				"description": {Max: 500, Unit: UnitUTF16},
				"link":        {Max: 2048, Unit: UnitUTF16},
			},
			Thumbnail:    true, // cover_image_url or cover_image_key_frame_time
			UploadMethod: UploadMultipart,
			// Pin analytics' lifetime figures: IMPRESSION, SAVE, VIDEO_MRC_VIEW ("video
			// views"), VIDEO_V50_WATCH_TIME ("total play time", ms), TOTAL_REACTIONS as likes
			// and TOTAL_COMMENTS as comments. There is no reach or share count per Pin.
			Analytics: []string{MetricViews, MetricLikes, MetricComments, MetricImpressions, MetricSaves, MetricWatchTime},
			// API v5 has no endpoint to read or write a Pin's comments.
			Comments:         false,
			Replies:          false,
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
			Notes: []string{
				"a board_id is required: the channel options list the account's boards",
				"pin analytics give lifetime figures; daily figures reach back 90 days only",
				"multi-Pin analytics (100 Pins a call) is a beta endpoint; without access, each Pin costs a call",
				"comments are counted, but API v5 cannot read or answer them",
			},
		}, required: oauthRequired},

		Threads: {caps: Capabilities{
			MaxVideoBytes:      1 * gb,
			MaxDurationSeconds: 5 * 60,
			VideoFormats:       []string{FormatMP4, FormatMOV},
			MaxWidth:           1920,
			Text: map[string]TextLimit{
				// Threads: "Text posts are limited to 500 characters. Emojis
				// are counted as the number of UTF-8 bytes." That mixed count
				// is not one of the units; counting every character in UTF-8
				// bytes is never below it, so bytes is the stricter reading.
				"text": {Max: 500, Unit: UnitBytes},
			},
			Thumbnail:    false,
			UploadMethod: UploadPull,
			// Media insights (threads/insights): views, likes, replies
			// (comments, nested replies included) and reposts, quotes and
			// shares (together: shares). No reach, impressions, saves or watch
			// time.
			Analytics: []string{MetricViews, MetricLikes, MetricComments, MetricShares},
			Comments:  true,
			Replies:   true,
			// A reply is a Threads post (a TEXT container with reply_to_id):
			// the same 500 limit as text.
			ReplyText:        TextLimit{Max: 500, Unit: UnitBytes},
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
			PostsPerDay:      250, // plus 1000 replies, per rolling 24 hours
			Notes: []string{
				"the video URL must be publicly reachable: Meta fetches it",
				"text is counted in UTF-8 bytes here: Threads counts each emoji as its UTF-8 byte length, and non-ASCII text may therefore fit better than shown",
				"250 API posts and 1000 replies per rolling 24 hours",
				"23-60 fps",
				"shares count reposts, quotes and shares together; replies have no like counts",
			},
		}, required: oauthRequired},

		Facebook: {caps: Capabilities{
			// Reels: 1 GB or 2 GB depending on the source; the stricter is kept.
			MaxVideoBytes:      1 * gb,
			MinDurationSeconds: 3,
			MaxDurationSeconds: 90,
			VideoFormats:       []string{FormatMP4},
			AspectRatios:       []string{"9:16"},
			Text: map[string]TextLimit{
				"description": {Max: 5000, Unit: UnitUTF16},
				"title":       {Max: 200, Unit: UnitUTF16},
			},
			Thumbnail:    false,
			UploadMethod: UploadResumable,
			// Reels metrics of video_insights (video-api insights guide):
			// blue_reels_play_count (views), post_impressions_unique (reach),
			// post_video_likes_by_reaction_type (likes),
			// post_video_social_actions (comments and shares),
			// post_video_view_time (watch time). No impressions or saves.
			Analytics: []string{MetricViews, MetricLikes, MetricComments, MetricShares, MetricReach, MetricWatchTime},
			Comments:  true,
			Replies:   true,
			// Graph comments: message up to 8,000 characters (from memory; no
			// stored copy of Meta's documentation states a limit).
			ReplyText:        TextLimit{Max: 8000, Unit: UnitUTF16},
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
			PostsPerDay:      30, // API-published Reels per Page per 24 hours
			Notes: []string{
				"publishes as a Page with a Page access token, not a user token",
				"Reels must be at least 540x960, 24-60 fps",
				"30 API-published Reels per Page per 24 hours",
				"views are plays without replays; likes are all reactions; watch time includes replays",
				"comments are two levels deep: a reply to a reply is posted under its top-level comment",
			},
		}, required: oauthRequired},

		Bluesky: {caps: Capabilities{
			MaxVideoBytes:      100 * mb,
			MaxDurationSeconds: 3 * 60,
			VideoFormats:       []string{FormatMP4},
			Text: map[string]TextLimit{
				// The post record caps text at 300 graphemes and 3000 UTF-8 bytes.
				"text": {Max: 300, Unit: UnitGraphemes, MaxBytes: 3000},
			},
			Thumbnail:    false,
			UploadMethod: UploadDirect,
			// app.bsky.feed.getPosts: likeCount, repostCount + quoteCount (shares),
			// replyCount (comments).
			Analytics: []string{MetricLikes, MetricComments, MetricShares},
			Comments:  true,
			Replies:   true,
			// A reply is an app.bsky.feed.post record: the lexicon's maxGraphemes 300
			// (and maxLength 3000 bytes), as for the post itself.
			ReplyText:        TextLimit{Max: 300, Unit: UnitGraphemes},
			Connect:          ConnectToken,
			CredentialFields: []string{"handle", "app_password", "pds_url"},
			// The video service allows 25 videos or 10 GB per day.
			PostsPerDay: 25,
			Notes: []string{
				"text is also limited to 3000 UTF-8 bytes",
				"connect with an app password, never the account password; pds_url is optional (default https://bsky.social)",
				"video upload needs a verified e-mail address on the account",
				"25 videos or 10 GB per day",
				"no views or impressions",
				"shares are reposts plus quotes; comments count direct replies only, as Bluesky does",
			},
		}, required: []string{"handle", "app_password"}},

		Telegram: {caps: Capabilities{
			// Bot API sendVideo: "Bots can currently send video files of up to
			// 50 MB in size" (confirmed in several client libraries' copies of
			// the reference); 20 MB when Telegram fetches by URL, which is why
			// the file is uploaded.
			MaxVideoBytes: 50 * mb,
			VideoFormats:  []string{FormatMP4},
			Text: map[string]TextLimit{
				// "0-1024 characters after entities parsing", unit not stated.
				// Telegram measures entity offsets in UTF-16 units, and UTF-16
				// is also the stricter of the plausible units.
				"caption": {Max: 1024, Unit: UnitUTF16},
			},
			Thumbnail:    true,
			UploadMethod: UploadMultipart,
			Analytics:    []string{},
			// Comments live in the channel's linked discussion group, which the Bot API
			// hands a bot only as live updates (getUpdates or a webhook): there is no way
			// to read a post's comments after the fact.
			Comments:         false,
			Replies:          false,
			Connect:          ConnectToken,
			CredentialFields: []string{"bot_token", "chat_id"},
			Notes: []string{
				"the bot must be an administrator of the channel",
				"Telegram clients play MP4; other formats arrive as documents",
				"the thumbnail must be a JPEG of at most 200 kB and 320 px a side",
				"comments exist only in the channel's linked discussion group, which reelay does not read",
				"about 1 message per second per chat",
				"the Bot API offers no analytics",
			},
		}, required: []string{"bot_token", "chat_id"}},

		Discord: {caps: Capabilities{
			// discord-api-docs: the default upload limit became 10 MiB for
			// webhooks on 2025-01-16 (it was 8 MiB, then 25 MiB); boosted
			// servers allow more. The default is kept.
			MaxVideoBytes: 10 * mib,
			VideoFormats:  []string{FormatMP4, FormatMOV, FormatWebM},
			Text: map[string]TextLimit{
				// How Discord counts is not documented: UTF-16 units, the
				// stricter of the plausible units.
				"content": {Max: 2000, Unit: UnitUTF16},
			},
			Thumbnail:    false,
			UploadMethod: UploadMultipart,
			Analytics:    []string{},
			Comments:     false,
			Replies:      false,
			Connect:      ConnectToken,
			// A webhook URL, or a bot token and the channel it posts to
			// (checked together by the API).
			CredentialFields: []string{"webhook_url", "bot_token", "channel_id"},
			Notes: []string{
				"connect with a webhook_url, or with a bot_token and channel_id",
				"a webhook can post but cannot read messages, so there is no comment inbox",
				"the upload limit is 10 MiB unless the server is boosted",
				"Discord offers no analytics (reactions only)",
			},
		}, required: nil},

		Mastodon: {caps: Capabilities{
			// Defaults of a stock server (MediaAttachment video limit 99 MiB);
			// every server can change them, see Notes.
			MaxVideoBytes: 99 * mib,
			VideoFormats:  []string{FormatMP4, FormatMOV, FormatWebM},
			Text: map[string]TextLimit{
				// StatusLengthValidator counts each_grapheme_cluster.size
				// (checked in Mastodon's source); 500 is the stock maximum.
				"text": {Max: 500, Unit: UnitGraphemes},
			},
			Thumbnail:    true,
			UploadMethod: UploadMultipart,
			// Status: favourites_count, reblogs_count (+ quotes_count from 4.5; shares),
			// replies_count (comments).
			Analytics: []string{MetricLikes, MetricComments, MetricShares},
			Comments:  true,
			Replies:   true,
			// A reply is a status: the instance's max_characters, 500 on a stock server,
			// counted as for any status (StatusLengthValidator).
			ReplyText:        TextLimit{Max: 500, Unit: UnitGraphemes},
			Connect:          ConnectToken,
			CredentialFields: []string{"instance_url", "access_token"},
			Notes: []string{
				"limits are per server: GET /api/v2/instance configuration overrides these defaults",
				"each URL counts as 23 characters, and a content warning counts toward the same limit",
				"30 media uploads per 30 minutes; 300 requests per 5 minutes",
				"no views or impressions",
				"comments count direct replies only, as Mastodon does",
				"a reply begins with @author (as Mastodon's apps do), which counts toward the limit as @user",
			},
		}, required: []string{"instance_url", "access_token"}},

		Reddit: {caps: Capabilities{
			// Reddit documents no API video limits; 1 GB and 15 minutes are
			// Reddit's own video specs (ads) and its 2017 native-video launch,
			// MP4 or MOV.
			MaxVideoBytes:      1 * gb,
			MaxDurationSeconds: 15 * 60,
			VideoFormats:       []string{FormatMP4, FormatMOV},
			Text: map[string]TextLimit{
				"title": {Max: 300, Unit: UnitUTF16},
			},
			Thumbnail:    true, // video_poster_url
			UploadMethod: UploadMultipart,
			// /api/info: ups (likes) and num_comments; view_count is usually null, and
			// filled only when Reddit gives it, so views are not promised.
			Analytics: []string{MetricLikes, MetricComments},
			Comments:  true,
			Replies:   true,
			// /api/comment: r2's VMarkdownLength, max_length 10000, counted with len() of
			// the unicode text ("this is too long (max: 10000)"): characters.
			ReplyText:        TextLimit{Max: 10000, Unit: UnitCharacters},
			Connect:          ConnectOAuth,
			CredentialFields: oauthAll,
			Notes: []string{
				"a subreddit is required; some subreddits forbid video or require flair (post_requirements)",
				"video upload is not part of the documented API: it follows what PRAW does",
				"view counts are usually unavailable",
				"likes are the post's upvotes (its score, with the author's own upvote)",
				"about 100 requests per minute",
			},
		}, required: oauthRequired},
	}
}()

// CapabilitiesOf returns the capabilities of the named platform, and false
// when the name is not a platform. The result is a deep copy: callers may
// change it (to merge live limits, say) without touching the registry.
func CapabilitiesOf(name string) (Capabilities, bool) {
	e, ok := registry[name]
	if !ok {
		return Capabilities{}, false
	}
	return e.caps.clone(), true
}

// RequiredCredentials returns the credential fields that connecting a channel
// of the named platform with POST /channels must supply (for OAuth platforms,
// the access token). It returns nil for an unknown platform.
func RequiredCredentials(name string) []string {
	e, ok := registry[name]
	if !ok {
		return nil
	}
	return cloneStrings(e.required)
}

// CredentialsHint names what connecting a channel of the platform takes, for messages: the
// required fields, or every field where the choice is between sets (Discord).
func CredentialsHint(name string) string {
	if req := RequiredCredentials(name); len(req) > 0 {
		return strings.Join(req, ", ")
	}
	caps, _ := CapabilitiesOf(name)
	return strings.Join(caps.CredentialFields, ", ")
}

// clone returns a deep copy of c. Slices come back non-nil so that JSON shows
// [] rather than null for "none".
func (c Capabilities) clone() Capabilities {
	out := c
	out.VideoFormats = cloneStrings(c.VideoFormats)
	out.AspectRatios = cloneStrings(c.AspectRatios)
	out.Analytics = cloneStrings(c.Analytics)
	out.CredentialFields = cloneStrings(c.CredentialFields)
	out.Notes = cloneStrings(c.Notes)
	out.Text = maps.Clone(c.Text)
	if out.Text == nil {
		out.Text = map[string]TextLimit{}
	}
	return out
}

// cloneStrings copies s into a new, never nil, slice.
func cloneStrings(s []string) []string {
	return append(make([]string, 0, len(s)), s...)
}
