// Package ai writes copy and storyboards for short videos: POST /ai/adapt turns a script into
// per-platform copy (hook, text, hashtags, title), POST /ai/storyboard/create splits a topic
// into 5-second scenes. Two engines do it: a deterministic built-in one that needs nothing, and
// an OpenAI-compatible chat-completions client for when a model is configured. Both answer
// copy that fits every platform's text limit, counted the way that platform counts.
package ai

import (
	"slices"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
)

// Tones of adapted copy.
const (
	ToneViral        = "viral"
	ToneEngaging     = "engaging"
	ToneEducational  = "educational"
	ToneHumorous     = "humorous"
	ToneProfessional = "professional"
)

// Tones lists the accepted tones, in the interface's order; DefaultTone is used when none is asked for.
var Tones = []string{ToneViral, ToneEngaging, ToneEducational, ToneHumorous, ToneProfessional}

// DefaultTone is the interface's default tone.
const DefaultTone = ToneViral

// DefaultPlatforms are the platforms copy is adapted for when the request names none (the
// interface's default for /ai/adapt, which differs from publishing's).
var DefaultPlatforms = []string{platform.TikTok, platform.Instagram, platform.YouTube, platform.Threads, platform.Bluesky}

// ValidTone reports whether t is one of Tones.
func ValidTone(t string) bool { return slices.Contains(Tones, t) }

// AdaptRequest is what POST /ai/adapt asks for, with defaults applied: Platforms is not empty
// and Tone is valid.
type AdaptRequest struct {
	Prompt    string
	Platforms []string
	Tone      string
	// IncludeJEV asks for jump-cut edit visuals: Copy.JEV, the on-screen text lines of the
	// video (see JEVLineLimit).
	IncludeJEV bool
}

// Copy is one platform's adapted copy.
type Copy struct {
	// Text is ready to post: the hook, the body, a call to action and the hashtags, within the
	// platform's limit for the field it goes in (TextField).
	Text string `json:"text"`
	// Hook is the opening line (also the start of Text).
	Hook string `json:"hook"`
	// Hashtags are the tags used in Text, each with its '#'.
	Hashtags []string `json:"hashtags"`
	// Title is set for platforms whose post has a title besides its text (TitleField).
	Title string `json:"title,omitempty"`
	// JEV, when asked for, are the on-screen text lines of a jump-cut edit: the hook first,
	// then the key points, then the call to action, each at most JEVLineLimit.
	JEV []string `json:"jev,omitempty"`
}

// Adapted is copy per platform identifier.
type Adapted map[string]Copy

// JEVLineLimit bounds each on-screen line: 42 characters is the usual maximum of a subtitle
// line, what a viewer reads at a glance on a phone. Counted in code points, as the contract's
// maxLength is, which is never fewer than graphemes.
var JEVLineLimit = platform.TextLimit{Max: 42, Unit: platform.UnitCharacters}

// CaptionLimit is the interface's own limit on a post's caption (5000 characters), which
// applies to every text on top of the platform's.
var CaptionLimit = platform.TextLimit{Max: 5000, Unit: platform.UnitCharacters}

// TitleLimit is the interface's limit on a post's title (100 characters).
var TitleLimit = platform.TextLimit{Max: 100, Unit: platform.UnitCharacters}

// target says where a platform's copy goes in POST /publish and how it is shaped there.
type target struct {
	// text and title are the keys of the platform object's fields (and of
	// Capabilities.Text) that Copy.Text and Copy.Title fill; text "" means the platform has
	// no field for a body (Reddit's video posts carry a title only), title "" that it has no
	// title besides the text (TikTok's "title" is its caption).
	text, title string
	// tags is how many hashtags people use there: a few where tags help discovery, one on
	// Threads (it takes one topic tag per post), none on Discord and Reddit, where they
	// read as spam.
	tags int
	// soft is the length the body stops growing at, in the platform's unit, where the hard
	// limit is far above what people read in a feed; 0 = the limit.
	soft int
	// plain platforms get no emoji and no call to action added (Reddit).
	plain bool
	// follow is how the call to follow is phrased there ("" = "Follow").
	follow string
}

var targets = map[string]target{
	platform.YouTube:   {text: "description", title: "title", tags: 3, follow: "Subscribe"},
	platform.Instagram: {text: "caption", tags: 5, soft: 1200},
	platform.TikTok:    {text: "title", tags: 4, soft: 800},
	platform.LinkedIn:  {text: "commentary", title: "title", tags: 3},
	platform.Pinterest: {text: "description", title: "title", tags: 4, follow: "Save this Pin and follow"},
	platform.Threads:   {text: "text", tags: 1},
	platform.Facebook:  {text: "description", title: "title", tags: 2, soft: 1200},
	platform.Bluesky:   {text: "text", tags: 2},
	platform.Telegram:  {text: "caption", tags: 2, follow: "Subscribe to the channel"},
	platform.Discord:   {text: "content", tags: 0, soft: 1500},
	platform.Mastodon:  {text: "text", tags: 3},
	platform.Reddit:    {title: "title", tags: 0, soft: 1500, plain: true},
}

// Limits are the length limits a platform's copy must respect.
type Limits struct {
	// TextField and TitleField name the fields of the platform's object in POST /publish
	// that Text and Title fill ("" when there is none).
	TextField, TitleField string
	// Text holds every limit Copy.Text must fit: the platform's for its field and the
	// interface's caption limit.
	Text []platform.TextLimit
	// Title holds the limits of Copy.Title; empty when the platform has no title.
	Title []platform.TextLimit
}

// LimitsOf returns the limits of a platform's copy, read from the platform's capabilities.
func LimitsOf(name string) (Limits, bool) {
	tg, ok := targets[name]
	caps, known := registry.CapabilitiesOf(name)
	if !ok || !known {
		return Limits{}, false
	}
	l := Limits{TextField: tg.text, TitleField: tg.title, Text: []platform.TextLimit{CaptionLimit}}
	if lim, ok := caps.Text[tg.text]; ok && tg.text != "" {
		l.Text = append([]platform.TextLimit{lim}, l.Text...)
	}
	if lim, ok := caps.Text[tg.title]; ok && tg.title != "" {
		l.Title = []platform.TextLimit{lim}
	}
	return l, true
}

// fits reports whether s is within every limit.
func fits(s string, lims []platform.TextLimit) bool {
	for _, l := range lims {
		if !l.Check(s) {
			return false
		}
	}
	return true
}

// truncate cuts s to fit every limit, between grapheme clusters.
func truncate(s string, lims []platform.TextLimit) string {
	for _, l := range lims {
		s = l.Truncate(s)
	}
	return s
}

// validUTF8 replaces invalid bytes so that counting and cutting behave.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}
