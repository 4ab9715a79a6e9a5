package platform

// StaticOptions returns the publish options of the named platform that
// GET /channels/{id}/options shows: the choices and defaults of the fields of
// the interface's per-platform object, plus YouTube's video categories.
//
// This is the registry's static data. It stands in until each provider serves
// live options for the connected account (TikTok creator_info with the
// creator's own privacy levels and duration, the Pinterest account's boards,
// a subreddit's flair, YouTube categories for the channel's region), which
// should replace it key by key.
//
// Every option has the same shape: "type" (string, boolean, integer), and
// where they apply "choices", "default", "required" and "note". A new map is
// built on each call, so callers may change it. The result is nil for an
// unknown platform and an empty map for a platform without options.
func StaticOptions(name string) map[string]any {
	if !Valid(name) {
		return nil
	}
	switch name {
	case YouTube:
		return map[string]any{
			"privacy_status": option("string", []any{"public", "unlisted", "private"}, "public"),
			"made_for_kids":  option("boolean", nil, false),
			"category_id": withNote(option("string", youtubeCategories(), "22"),
				"YouTube videoCategories assignable in region US; the default is People & Blogs"),
		}
	case TikTok:
		caps, _ := CapabilitiesOf(TikTok)
		return map[string]any{
			"mode": withNote(option("string", []any{"inbox", "direct"}, "inbox"),
				"inbox sends the video to the TikTok app, where the creator finishes the post; direct publishes at once"),
			"privacy_level": withNote(option("string",
				[]any{"PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"},
				"PUBLIC_TO_EVERYONE"),
				"must be one of the creator's own privacy levels; unaudited API clients can only use SELF_ONLY"),
			"is_aigc":       withNote(option("boolean", nil, false), "must be true when the video was made with AI tools"),
			"allow_comment": option("boolean", nil, true),
			"allow_duet":    option("boolean", nil, true),
			"allow_stitch":  option("boolean", nil, true),
			"max_video_post_duration_sec": withNote(option("integer", nil, int(caps.MaxDurationSeconds)),
				"the API's ceiling; the creator's own maximum may be lower"),
		}
	case Instagram:
		return map[string]any{
			"share_to_feed": withNote(option("boolean", nil, true), "also show the Reel in the profile feed"),
		}
	case Pinterest:
		o := option("string", []any{}, nil)
		o["required"] = true
		return map[string]any{
			"board_id": withNote(o, "boards come from the connected Pinterest account; the static registry has none"),
		}
	case Reddit:
		sub := option("string", nil, nil)
		sub["required"] = true
		return map[string]any{
			"subreddit": withNote(sub, "target subreddit name, without r/"),
			"nsfw":      option("boolean", nil, false),
			"spoiler":   option("boolean", nil, false),
			"flair_id": withNote(option("string", []any{}, nil),
				"flair comes from the subreddit; the static registry has none"),
		}
	}
	return map[string]any{}
}

// option builds one option description. A nil choices or def is left out.
func option(typ string, choices []any, def any) map[string]any {
	o := map[string]any{"type": typ}
	if choices != nil {
		o["choices"] = choices
	}
	if def != nil {
		o["default"] = def
	}
	return o
}

// withNote adds a human-readable note to an option.
func withNote(o map[string]any, note string) map[string]any {
	o["note"] = note
	return o
}

// youtubeCategories lists the video categories that videos.insert accepts
// (assignable) for region US, as videoCategories.list?regionCode=US returns
// them. Categories 18, 21 and 30-44 exist but are not assignable.
func youtubeCategories() []any {
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
