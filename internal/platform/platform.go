// Package platform is the vocabulary reelay uses to describe the social platforms it
// publishes to: their identifiers, and the shape of a platform's description
// (Description: capabilities, text limits and how each platform counts text, credentials,
// static publish options). It imports nothing of reelay, so that every platform package can
// describe itself with it; internal/platform/registry lists the twelve descriptions.
//
// Every number in a description describes the platform itself. The service-wide limits of
// the interface (video up to 100 MB, title 100 characters, caption 5000 characters) apply on
// top of these, so a check against a destination must use the stricter of the two. Where
// sources disagree, the comment next to the value says which sources and which value was
// chosen (the stricter one when unsure).
package platform

import "slices"

// Platform identifiers, as used in the API's platforms array and in channel.platform.
const (
	// YouTube is the identifier of YouTube (Shorts through the Data API v3).
	YouTube = "youtube"
	// Instagram is the identifier of Instagram (Reels through the Graph API).
	Instagram = "instagram"
	// TikTok is the identifier of TikTok (Content Posting API).
	TikTok = "tiktok"
	// LinkedIn is the identifier of LinkedIn (Posts and Videos APIs).
	LinkedIn = "linkedin"
	// Pinterest is the identifier of Pinterest (API v5 video pins).
	Pinterest = "pinterest"
	// Threads is the identifier of Threads (Threads API).
	Threads = "threads"
	// Facebook is the identifier of Facebook Pages (Reels publishing).
	Facebook = "facebook"
	// Bluesky is the identifier of Bluesky (AT Protocol).
	Bluesky = "bluesky"
	// Telegram is the identifier of Telegram channels (Bot API).
	Telegram = "telegram"
	// Discord is the identifier of Discord (webhooks).
	Discord = "discord"
	// Mastodon is the identifier of Mastodon (any instance).
	Mastodon = "mastodon"
	// Reddit is the identifier of Reddit.
	Reddit = "reddit"
)

// All lists every supported platform, in the order the interface lists them,
// so that listings and error messages are stable.
var All = []string{
	YouTube, Instagram, TikTok, LinkedIn, Pinterest, Threads,
	Facebook, Bluesky, Telegram, Discord, Mastodon, Reddit,
}

// Defaults are the platforms a publish request targets when it names none,
// as the interface states.
var Defaults = []string{YouTube, Instagram, TikTok}

// Valid reports whether name is a supported platform identifier. The match is
// exact: identifiers are lower case and "YouTube" is not one.
func Valid(name string) bool {
	return slices.Contains(All, name)
}
