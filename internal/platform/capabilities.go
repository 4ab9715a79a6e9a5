package platform

import "maps"

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
	// MaxHeight is the largest frame height in pixels; 0 = none known.
	MaxHeight int `json:"max_height"`
	// MinWidth and MinHeight are the smallest frame width and height in pixels; 0 = none.
	MinWidth  int `json:"min_width"`
	MinHeight int `json:"min_height"`
	// VideoCodecs lists the accepted video codecs, as media.Info names them ("h264", "hevc",
	// "vp9", ...); empty = any.
	VideoCodecs []string `json:"video_codecs"`
	// MaxVideoBitrate is the highest average bitrate of a whole video file, in bits per
	// second; 0 = none known.
	MaxVideoBitrate int64 `json:"max_video_bitrate"`
	// MinFrameRate and MaxFrameRate bound a video's average frame rate in frames per
	// second; 0 = unbounded.
	MinFrameRate float64 `json:"min_frame_rate"`
	MaxFrameRate float64 `json:"max_frame_rate"`
	// MoovFirst: an MP4 or MOV must have its metadata (the moov box) before its media data,
	// as "fast start" files do.
	MoovFirst bool `json:"moov_first"`
	// NoEditLists: an MP4 or MOV must not carry an edit list (the single edit encoders
	// write to skip codec delay aside; media.Info.EditList says which count).
	NoEditLists bool `json:"no_edit_lists"`
	// AudioCodecs lists the accepted codecs of a video's sound ("aac"); empty = any.
	AudioCodecs []string `json:"audio_codecs"`
	// MaxAudioSampleRate is the highest sample rate of a video's sound in Hz; 0 = none known.
	MaxAudioSampleRate int `json:"max_audio_sample_rate"`
	// MaxAudioChannels is the most channels a video's sound may have; 0 = none known.
	MaxAudioChannels int `json:"max_audio_channels"`
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
	// Sources gives, for each media rule above that the platform sets (keyed by the rule's
	// JSON name: "max_video_bytes", "video_codecs", "max_frame_rate", ...), the page of the
	// platform's own documentation that states it.
	Sources map[string]string `json:"sources"`
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
	MB  = 1000 * 1000
	GB  = 1000 * MB
	MiB = 1 << 20
)

// OAuthCredentialFields are the fields a channel of an OAuth platform can be connected with
// directly: a token pair obtained elsewhere. OAuthRequiredCredentials are those it must give:
// the refresh token is optional because some platforms (LinkedIn outside approved partners)
// never issue one. Each call returns a new slice.
func OAuthCredentialFields() []string { return []string{"access_token", "refresh_token"} }

// OAuthRequiredCredentials: see OAuthCredentialFields.
func OAuthRequiredCredentials() []string { return []string{"access_token"} }

// Clone returns a deep copy of c. Slices come back non-nil so that JSON shows
// [] rather than null for "none".
func (c Capabilities) Clone() Capabilities {
	out := c
	out.VideoFormats = CloneStrings(c.VideoFormats)
	out.AspectRatios = CloneStrings(c.AspectRatios)
	out.AudioCodecs = CloneStrings(c.AudioCodecs)
	out.VideoCodecs = CloneStrings(c.VideoCodecs)
	out.Analytics = CloneStrings(c.Analytics)
	out.CredentialFields = CloneStrings(c.CredentialFields)
	out.Notes = CloneStrings(c.Notes)
	out.Text = maps.Clone(c.Text)
	if out.Text == nil {
		out.Text = map[string]TextLimit{}
	}
	out.Sources = maps.Clone(c.Sources)
	if out.Sources == nil {
		out.Sources = map[string]string{}
	}
	return out
}

// CloneStrings copies s into a new, never nil, slice.
func CloneStrings(s []string) []string {
	return append(make([]string, 0, len(s)), s...)
}
