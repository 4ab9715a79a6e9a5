package pinterest

import "github.com/reelay/reelay/internal/platform"

// productSpecs is Pinterest's product specs, which state the rules of standard width video Pins.
const productSpecs = "https://help.pinterest.com/en/business/article/pinterest-product-specs"

// Description is Pinterest as reelay describes it: its limits and abilities (shown as
// channel.capabilities and checked before anything is sent), what connecting a channel takes,
// and the choices of its publish options. Sources are those named beside each value.
var Description = platform.Description{
	ID:   platform.Pinterest,
	Name: "Pinterest",
	API: platform.APIVersion{
		// API v5 is the version Pinterest documents, whose reference the provider follows;
		// Pinterest has announced neither a successor nor a sunset.
		Version: "v5", Checked: "2026-11-28",
		Source: "https://developers.pinterest.com/docs/api/v5/",
	},
	Capabilities: platform.Capabilities{
		MaxVideoBytes:      2 * platform.GB,
		MinDurationSeconds: 4,
		MaxDurationSeconds: 15 * 60,
		VideoFormats:       []string{platform.FormatMP4, platform.FormatMOV},
		// "Aspect ratio: Shorter than 1:2 (width:height), taller than 1.91:1. We recommend
		// making your videos square (1:1) or vertical (2:3, 4:5 or 9:16)": any ratio in the
		// range, the recommended ones only recommended
		// (https://help.pinterest.com/en/business/article/pinterest-product-specs, standard
		// width video Pins).
		MinAspectRatio: 1.0 / 2,
		MaxAspectRatio: 1.91,
		// Product specs, standard width video Pins: "Encoding: H.264 or H.265" (older copies
		// said H.264 only). The simulator refuses other codecs.
		VideoCodecs: []string{"h264", "hevc"},
		Text: map[string]platform.TextLimit{
			"title":       {Max: 100, Unit: platform.UnitUTF16},
			"description": {Max: 500, Unit: platform.UnitUTF16},
			"link":        {Max: 2048, Unit: platform.UnitUTF16},
		},
		Thumbnail:    true, // cover_image_url or cover_image_key_frame_time
		UploadMethod: platform.UploadMultipart,
		// Pin analytics' lifetime figures: IMPRESSION, SAVE, VIDEO_MRC_VIEW ("video
		// views"), VIDEO_V50_WATCH_TIME ("total play time", ms), TOTAL_REACTIONS as likes
		// and TOTAL_COMMENTS as comments. There is no reach or share count per Pin.
		Analytics: []string{platform.MetricViews, platform.MetricLikes, platform.MetricComments, platform.MetricImpressions, platform.MetricSaves, platform.MetricWatchTime},
		// API v5 has no endpoint to read or write a Pin's comments.
		Comments:         false,
		Replies:          false,
		Connect:          platform.ConnectOAuth,
		CredentialFields: platform.OAuthCredentialFields(),
		Notes: []string{
			"a board_id is required: the channel options list the account's boards",
			"pin analytics give lifetime figures; daily figures reach back 90 days only",
			"multi-Pin analytics (100 Pins a call) is a beta endpoint; without access, each Pin costs a call",
			"comments are counted, but API v5 cannot read or answer them",
		},
		// Pinterest's product specs (standard width video Pins) state every media rule above.
		Sources: map[string]string{
			"max_video_bytes":      productSpecs,
			"min_duration_seconds": productSpecs,
			"max_duration_seconds": productSpecs,
			"video_formats":        productSpecs,
			"min_aspect_ratio":     productSpecs,
			"max_aspect_ratio":     productSpecs,
			"video_codecs":         productSpecs,
		},
	},
	RequiredCredentials: platform.OAuthRequiredCredentials(),
	NewOptions:          func() any { return new(Options) },
	TextFallbacks:       map[string]string{"title": platform.FromTitle, "description": platform.FromCaption},
	StaticOptions:       staticOptions,
}

// staticOptions: the boards come from the connected account (the provider's Options).
func staticOptions() map[string]any {
	return map[string]any{
		"board_id": platform.WithNote(platform.Required(platform.Option("string", []any{}, nil)),
			"boards come from the connected Pinterest account; the static registry has none"),
	}
}
