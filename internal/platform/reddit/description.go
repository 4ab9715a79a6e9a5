package reddit

import "github.com/reelay/reelay/internal/platform"

// Description is Reddit as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Reddit,
	Name: "Reddit",
	Capabilities: platform.Capabilities{
		// Reddit documents no API video limits; 1 GB and 15 minutes are
		// Reddit's own video specs (ads) and its 2017 native-video launch,
		// MP4 or MOV.
		MaxVideoBytes:      1 * platform.GB,
		MaxDurationSeconds: 15 * 60,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatMOV},
		Text: map[string]platform.TextLimit{
			"title": {Max: 300, Unit: platform.UnitUTF16},
		},
		Thumbnail:    true, // video_poster_url
		UploadMethod: platform.UploadMultipart,
		// /api/info: ups (likes) and num_comments; view_count is usually null, and
		// filled only when Reddit gives it, so views are not promised.
		Analytics: []string{platform.MetricLikes, platform.MetricComments},
		Comments:  true,
		Replies:   true,
		// /api/comment: r2's VMarkdownLength, max_length 10000, counted with len() of
		// the unicode text ("this is too long (max: 10000)"): characters.
		ReplyText:        platform.TextLimit{Max: 10000, Unit: platform.UnitCharacters},
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		Notes: []string{
			"a subreddit is required; some subreddits forbid video or require flair (post_requirements)",
			"video upload is not part of the documented API: it follows what PRAW does",
			"view counts are usually unavailable",
			"likes are the post's upvotes (its score, with the author's own upvote)",
			"about 100 requests per minute",
		},
		// Reddit's API documentation states no video rule; the values above come from its ad
		// specs and the 2017 launch, so none has a source here.
		Sources: map[string]string{},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"title": platform.FromTitle},
	StaticOptions:       staticOptions,
}

// staticOptions: a subreddit's flair comes from the subreddit (the provider's
// SubredditOptions).
func staticOptions() map[string]any {
	return map[string]any{
		"subreddit": platform.WithNote(platform.Required(platform.Option("string", nil, nil)), "target subreddit name, without r/"),
		"nsfw":      platform.Option("boolean", nil, false),
		"spoiler":   platform.Option("boolean", nil, false),
		"flair_id": platform.WithNote(platform.Option("string", []any{}, nil),
			"flair comes from the subreddit; the static registry has none"),
	}
}
