package publish

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// Request is a publish request as POST /publish takes it, in JSON or multipart form
// (docs/CONTRACT.md, Publishing).
type Request struct {
	ProjectID      string   `json:"project_id"`
	ChannelIDs     []string `json:"channel_ids,omitempty"`
	VideoURL       string   `json:"video_url,omitempty"`
	ThumbnailURL   string   `json:"thumbnail_url,omitempty"`
	Title          string   `json:"title,omitempty"`
	Caption        string   `json:"caption,omitempty"`
	Platforms      []string `json:"platforms,omitempty"`
	ScheduledFor   string   `json:"scheduled_for,omitempty"`
	AllowDuplicate bool     `json:"allow_duplicate,omitempty"`

	PlatformObjects

	// VideoFileName is the uploaded video's file name as the multipart form gave it ("" for
	// video_url), which YouTube's title may be derived from. It is not a field of the request:
	// a JSON body cannot set it.
	VideoFileName string `json:"-"`
}

// PlatformObjects are the per-platform objects of a publish request.
type PlatformObjects struct {
	YouTube   *YouTubeOptions   `json:"youtube,omitempty"`
	Instagram *InstagramOptions `json:"instagram,omitempty"`
	TikTok    *TikTokOptions    `json:"tiktok,omitempty"`
	LinkedIn  *LinkedInOptions  `json:"linkedin,omitempty"`
	Pinterest *PinterestOptions `json:"pinterest,omitempty"`
	Threads   *ThreadsOptions   `json:"threads,omitempty"`
	Facebook  *FacebookOptions  `json:"facebook,omitempty"`
	Bluesky   *BlueskyOptions   `json:"bluesky,omitempty"`
	Telegram  *TelegramOptions  `json:"telegram,omitempty"`
	Discord   *DiscordOptions   `json:"discord,omitempty"`
	Mastodon  *MastodonOptions  `json:"mastodon,omitempty"`
	Reddit    *RedditOptions    `json:"reddit,omitempty"`
}

// The per-platform objects (docs/CONTRACT.md, Platform objects). Booleans are pointers so that
// "not given" can take the object's default; after Resolve every field holds the value that
// will be sent. Each decodes itself strictly (apierr.DecodeObject), so that an error names its
// field as youtube.made_for_kids.

// YouTubeOptions is the youtube object of a publish request.
type YouTubeOptions struct {
	Title         string `json:"title,omitempty"`
	Description   string `json:"description,omitempty"`
	PrivacyStatus string `json:"privacy_status,omitempty"`
	MadeForKids   *bool  `json:"made_for_kids,omitempty"`
	// CategoryID is reelay's addition to the interface's object: one of the categories
	// GET /channels/{id}/options lists (a number, or its digits as a string).
	CategoryID json.RawMessage `json:"category_id,omitempty"`
}

// InstagramOptions is the instagram object of a publish request.
type InstagramOptions struct {
	Caption     string `json:"caption,omitempty"`
	ShareToFeed *bool  `json:"share_to_feed,omitempty"`
}

// TikTokOptions is the tiktok object of a publish request.
type TikTokOptions struct {
	Mode         string `json:"mode,omitempty"`
	Title        string `json:"title,omitempty"`
	PrivacyLevel string `json:"privacy_level,omitempty"`
	IsAIGC       *bool  `json:"is_aigc,omitempty"`
	AllowComment *bool  `json:"allow_comment,omitempty"`
	AllowDuet    *bool  `json:"allow_duet,omitempty"`
	AllowStitch  *bool  `json:"allow_stitch,omitempty"`
}

// LinkedInOptions is the linkedin object of a publish request.
type LinkedInOptions struct {
	Commentary string `json:"commentary,omitempty"`
	Title      string `json:"title,omitempty"`
}

// PinterestOptions is the pinterest object of a publish request.
type PinterestOptions struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Link        string `json:"link,omitempty"`
	BoardID     string `json:"board_id,omitempty"`
}

// ThreadsOptions is the threads object of a publish request.
type ThreadsOptions struct {
	Text string `json:"text,omitempty"`
}

// BlueskyOptions is the bluesky object of a publish request.
type BlueskyOptions struct {
	Text string `json:"text,omitempty"`
}

// MastodonOptions is the mastodon object of a publish request. Visibility, Sensitive,
// SpoilerText (the content warning), Language and Description (the video's alt text) are
// reelay's additions to it (docs/CONTRACT.md, Platform objects):
// the status's own parameters, which the mastodon provider sends as they are.
type MastodonOptions struct {
	Text        string `json:"text,omitempty"`
	Visibility  string `json:"visibility,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	SpoilerText string `json:"spoiler_text,omitempty"`
	Language    string `json:"language,omitempty"`
	Description string `json:"description,omitempty"`
}

// FacebookOptions is the facebook object of a publish request.
type FacebookOptions struct {
	Description string `json:"description,omitempty"`
	Title       string `json:"title,omitempty"`
}

// TelegramOptions is the telegram object of a publish request.
type TelegramOptions struct {
	Caption string `json:"caption,omitempty"`
}

// DiscordOptions is the discord object of a publish request.
type DiscordOptions struct {
	Content string `json:"content,omitempty"`
}

// RedditOptions is the reddit object of a publish request.
type RedditOptions struct {
	Title     string `json:"title,omitempty"`
	Subreddit string `json:"subreddit,omitempty"`
	NSFW      *bool  `json:"nsfw,omitempty"`
	Spoiler   *bool  `json:"spoiler,omitempty"`
	// FlairID and FlairText are reelay's addition to the interface's object: subreddits that require
	// flair refuse a post without one (GET /channels/{id}/options?subreddit=... lists them).
	FlairID   string `json:"flair_id,omitempty"`
	FlairText string `json:"flair_text,omitempty"`
}

// UnmarshalJSON of each platform object decodes it through a plain copy of its type, which
// has no UnmarshalJSON to recurse into.
func (o *YouTubeOptions) UnmarshalJSON(b []byte) error {
	type plain YouTubeOptions
	return apierr.DecodeObject(platform.YouTube, b, (*plain)(o))
}

func (o *InstagramOptions) UnmarshalJSON(b []byte) error {
	type plain InstagramOptions
	return apierr.DecodeObject(platform.Instagram, b, (*plain)(o))
}

func (o *TikTokOptions) UnmarshalJSON(b []byte) error {
	type plain TikTokOptions
	return apierr.DecodeObject(platform.TikTok, b, (*plain)(o))
}

func (o *LinkedInOptions) UnmarshalJSON(b []byte) error {
	type plain LinkedInOptions
	return apierr.DecodeObject(platform.LinkedIn, b, (*plain)(o))
}

func (o *PinterestOptions) UnmarshalJSON(b []byte) error {
	type plain PinterestOptions
	return apierr.DecodeObject(platform.Pinterest, b, (*plain)(o))
}

func (o *ThreadsOptions) UnmarshalJSON(b []byte) error {
	type plain ThreadsOptions
	return apierr.DecodeObject(platform.Threads, b, (*plain)(o))
}

func (o *FacebookOptions) UnmarshalJSON(b []byte) error {
	type plain FacebookOptions
	return apierr.DecodeObject(platform.Facebook, b, (*plain)(o))
}

func (o *BlueskyOptions) UnmarshalJSON(b []byte) error {
	type plain BlueskyOptions
	return apierr.DecodeObject(platform.Bluesky, b, (*plain)(o))
}

func (o *TelegramOptions) UnmarshalJSON(b []byte) error {
	type plain TelegramOptions
	return apierr.DecodeObject(platform.Telegram, b, (*plain)(o))
}

func (o *DiscordOptions) UnmarshalJSON(b []byte) error {
	type plain DiscordOptions
	return apierr.DecodeObject(platform.Discord, b, (*plain)(o))
}

func (o *MastodonOptions) UnmarshalJSON(b []byte) error {
	type plain MastodonOptions
	return apierr.DecodeObject(platform.Mastodon, b, (*plain)(o))
}

func (o *RedditOptions) UnmarshalJSON(b []byte) error {
	type plain RedditOptions
	return apierr.DecodeObject(platform.Reddit, b, (*plain)(o))
}

// Service-wide limits (docs/CONTRACT.md, Publishing).
const (
	MaxTitle   = 100
	MaxCaption = 5000
	MaxURL     = 2048
	// maxScheduleAhead bounds scheduled_for: a post a year out is almost surely a typo.
	maxScheduleAhead = 365 * 24 * time.Hour
)

// Enumerations of the per-platform objects (docs/CONTRACT.md, Platform objects).
var (
	youtubePrivacy = []string{"public", "unlisted", "private"}
	tiktokModes    = []string{"inbox", "direct"}
	tiktokPrivacy  = []string{"PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "SELF_ONLY"}
)

// CheckStatic validates everything that needs neither the database nor the media: ids, URLs,
// lengths, enumerations and the schedule. hasUpload says the video arrives as a file rather
// than as video_url.
func (r *Request) CheckStatic(now time.Time, hasUpload, hasThumbUpload bool) (scheduledFor *time.Time, f apierr.Fields) {
	switch {
	case r.ProjectID == "":
		f.Add("project_id", "is required")
	case !store.ValidID(r.ProjectID):
		f.Add("project_id", "must be a UUID")
	}
	seen := map[string]bool{}
	for i, id := range r.ChannelIDs {
		field := fmt.Sprintf("channel_ids[%d]", i)
		switch {
		case !store.ValidID(id):
			f.Add(field, "must be a UUID")
		case seen[id]:
			f.Add(field, "is listed twice")
		}
		seen[id] = true
	}
	switch {
	case hasUpload && r.VideoURL != "":
		f.Add("video_url", "give either video_url or an uploaded video file, not both")
	case !hasUpload && r.VideoURL == "":
		f.Add("video_url", "is required (or upload the file as multipart field \"video\")")
	case r.VideoURL != "":
		checkMediaURL(&f, "video_url", r.VideoURL)
	}
	if r.ThumbnailURL != "" {
		if hasThumbUpload {
			f.Add("thumbnail_url", "give either thumbnail_url or an uploaded thumbnail, not both")
		} else {
			checkMediaURL(&f, "thumbnail_url", r.ThumbnailURL)
		}
	}
	r.checkControlChars(&f)
	checkChars(&f, "title", r.Title, MaxTitle)
	checkChars(&f, "caption", r.Caption, MaxCaption)
	seenPlatform := map[string]bool{}
	for i, p := range r.Platforms {
		field := fmt.Sprintf("platforms[%d]", i)
		switch {
		case !platform.Valid(p):
			f.Addf(field, "unknown platform %q; one of %s", p, strings.Join(platform.All, ", "))
		case seenPlatform[p]:
			f.Addf(field, "%s is listed twice", p)
		}
		seenPlatform[p] = true
	}
	if r.ScheduledFor != "" {
		scheduledFor = checkSchedule(&f, r.ScheduledFor, now)
	}
	r.checkOptions(&f)
	return scheduledFor, f
}

func checkMediaURL(f *apierr.Fields, field, raw string) {
	if len(raw) > MaxURL {
		f.Addf(field, "must be at most %d characters", MaxURL)
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		f.Add(field, "must be an absolute http or https URL")
		return
	}
	if u.User != nil {
		f.Add(field, "must not carry a user name or password")
	}
}

// scheduleLayouts are the ISO 8601 date-times scheduled_for takes: RFC 3339, and the same
// without seconds or with an offset written +0100 or +01. Each has an offset: a time without
// one is ambiguous.
var scheduleLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04Z07",
}

// checkSchedule parses scheduled_for (scheduleLayouts), which must be in the future.
func checkSchedule(f *apierr.Fields, raw string, now time.Time) *time.Time {
	t, ok := parseSchedule(raw)
	if !ok {
		f.Add("scheduled_for", "must be an ISO 8601 date-time with a timezone offset, e.g. 2026-12-01T09:00:00Z or 2026-12-01T10:00:00+01:00")
		return nil
	}
	switch {
	case !t.After(now):
		f.Addf("scheduled_for", "must be in the future (now is %s); omit it to publish now", now.UTC().Format(time.RFC3339))
		return nil
	case t.Sub(now) > maxScheduleAhead:
		f.Add("scheduled_for", "must be at most one year ahead")
		return nil
	}
	t = t.UTC()
	return &t
}

// parseSchedule parses raw in the first of scheduleLayouts that fits it.
func parseSchedule(raw string) (time.Time, bool) {
	for _, layout := range scheduleLayouts {
		if t, err := time.Parse(layout, raw); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// checkControlChars refuses control characters (apierr.Fields.NoControl) in the title, the
// caption and every string of the platform objects, each named as its field
// ("mastodon.spoiler_text").
func (r *Request) checkControlChars(f *apierr.Fields) {
	r.eachText(func(field string, v *string) { f.NoControl(field, *v) })
}

// NormalizeNewlines turns the CRLF line ends of every text (as eachText walks them) into LF.
// Browsers send a textarea's lines ending in CRLF, which the API refuses as control
// characters; the web dashboard's publish form calls this before checking.
func (r *Request) NormalizeNewlines() {
	r.eachText(func(_ string, v *string) { *v = strings.ReplaceAll(*v, "\r\n", "\n") })
}

// eachText calls fn with the title, the caption and every string field of the platform
// objects given, each named as its field ("mastodon.spoiler_text"). The objects' fields are
// read from their types, so that a field added to one is walked without being listed here.
func (r *Request) eachText(fn func(field string, v *string)) {
	fn("title", &r.Title)
	fn("caption", &r.Caption)
	objects := reflect.ValueOf(&r.PlatformObjects).Elem()
	for i := range objects.NumField() {
		obj := objects.Field(i)
		if obj.IsNil() {
			continue
		}
		prefix := jsonName(objects.Type().Field(i)) + "."
		obj = obj.Elem()
		for j := range obj.NumField() {
			if v := obj.Field(j); v.Kind() == reflect.String {
				fn(prefix+jsonName(obj.Type().Field(j)), v.Addr().Interface().(*string))
			}
		}
	}
}

// jsonName is the name a struct field has in JSON.
func jsonName(sf reflect.StructField) string {
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	return name
}

func checkChars(f *apierr.Fields, field, v string, max int) {
	if !utf8.ValidString(v) {
		f.Add(field, "must be valid UTF-8")
		return
	}
	if n := utf8.RuneCountInString(v); n > max {
		f.Addf(field, "must be at most %d characters, got %d", max, n)
	}
}

func checkEnum(f *apierr.Fields, field, v string, allowed []string) {
	if v != "" && !slices.Contains(allowed, v) {
		f.Addf(field, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
	}
}

// checkOptions validates the per-platform objects that were given, with the contract's limits
// (the registry holds them, counted the way each platform counts).
func (r *Request) checkOptions(f *apierr.Fields) {
	if o := r.YouTube; o != nil {
		checkEnum(f, "youtube.privacy_status", o.PrivacyStatus, youtubePrivacy)
		checkText(f, platform.YouTube, "title", "youtube.title", o.Title)
		checkText(f, platform.YouTube, "description", "youtube.description", o.Description)
		if c := string(o.CategoryID); c != "" && c != "null" && !isDigits(strings.TrimSuffix(strings.TrimPrefix(c, `"`), `"`)) {
			f.Add("youtube.category_id", "must be a category id, such as 22 (GET /channels/{id}/options lists them)")
		}
	}
	if o := r.Instagram; o != nil {
		checkText(f, platform.Instagram, "caption", "instagram.caption", o.Caption)
	}
	if o := r.TikTok; o != nil {
		checkEnum(f, "tiktok.mode", o.Mode, tiktokModes)
		checkEnum(f, "tiktok.privacy_level", o.PrivacyLevel, tiktokPrivacy)
		checkText(f, platform.TikTok, "title", "tiktok.title", o.Title)
	}
	if o := r.LinkedIn; o != nil {
		checkText(f, platform.LinkedIn, "commentary", "linkedin.commentary", o.Commentary)
		checkText(f, platform.LinkedIn, "title", "linkedin.title", o.Title)
	}
	if o := r.Pinterest; o != nil {
		checkText(f, platform.Pinterest, "title", "pinterest.title", o.Title)
		checkText(f, platform.Pinterest, "description", "pinterest.description", o.Description)
		if o.Link != "" {
			checkMediaURL(f, "pinterest.link", o.Link)
		}
		checkChars(f, "pinterest.board_id", o.BoardID, 64)
	}
	if o := r.Threads; o != nil {
		checkText(f, platform.Threads, "text", "threads.text", o.Text)
	}
	if o := r.Facebook; o != nil {
		checkText(f, platform.Facebook, "description", "facebook.description", o.Description)
		checkText(f, platform.Facebook, "title", "facebook.title", o.Title)
	}
	if o := r.Bluesky; o != nil {
		checkText(f, platform.Bluesky, "text", "bluesky.text", o.Text)
	}
	if o := r.Telegram; o != nil {
		checkText(f, platform.Telegram, "caption", "telegram.caption", o.Caption)
	}
	if o := r.Discord; o != nil {
		checkText(f, platform.Discord, "content", "discord.content", o.Content)
	}
	if o := r.Mastodon; o != nil {
		checkMastodon(f, *o)
	}
	if o := r.Reddit; o != nil {
		checkText(f, platform.Reddit, "title", "reddit.title", o.Title)
		if o.Subreddit != "" && !validSubreddit(o.Subreddit) {
			f.Add("reddit.subreddit", "must be a subreddit name (2–21 letters, digits or underscores), without r/")
		}
		if len(o.FlairID) > 36 {
			f.Add("reddit.flair_id", "must be at most 36 characters (a flair template id)")
		}
		if utf8.RuneCountInString(o.FlairText) > 64 {
			f.Add("reddit.flair_text", "must be at most 64 characters")
		}
		if o.FlairText != "" && o.FlairID == "" {
			f.Add("reddit.flair_text", "needs reddit.flair_id: custom text goes on an editable flair template")
		}
	}
}

// checkMastodon checks the mastodon object. Mastodon counts a content warning with the text
// against its limit, so the two are checked together, as Mastodon counts them (mastodonOver).
func checkMastodon(f *apierr.Fields, o MastodonOptions) {
	switch {
	case !utf8.ValidString(o.Text):
		f.Add("mastodon.text", "must be valid UTF-8")
	case !utf8.ValidString(o.SpoilerText):
		f.Add("mastodon.spoiler_text", "must be valid UTF-8")
	case o.SpoilerText == "":
		if n, max, over := mastodonOver(o.Text, ""); over {
			f.Addf("mastodon.text", "is %d characters long as Mastodon counts them (a link as %d); Mastodon allows %d",
				n, platform.MastodonURLLength, max)
		}
	default:
		if n, max, over := mastodonOver(o.Text, o.SpoilerText); over {
			f.Addf("mastodon.spoiler_text", "and mastodon.text are %d characters long together; Mastodon allows %d", n, max)
		}
	}
	if o.Visibility != "" && !slices.Contains(platform.MastodonVisibilities, o.Visibility) {
		f.Addf("mastodon.visibility", "must be one of %s", strings.Join(platform.MastodonVisibilities, ", "))
	}
	if o.Language != "" && !platform.ValidLanguageCode(o.Language) {
		f.Add("mastodon.language", "must be an ISO 639-1 language code of two lower-case letters, such as en")
	}
	if n := utf8.RuneCountInString(o.Description); n > platform.MastodonAltTextMax {
		f.Addf("mastodon.description", "is %d characters long; Mastodon allows %d", n, platform.MastodonAltTextMax)
	}
}

// mastodonOver measures a status as Mastodon does (graphemes, a link as MastodonURLLength,
// @user@domain as @user, the content warning included) against the registry's limit, which
// is that of an instance that sets none of its own; the provider checks the instance's own.
func mastodonOver(text, spoiler string) (n, max int, over bool) {
	caps, _ := registry.CapabilitiesOf(platform.Mastodon)
	max = caps.Text["text"].Max
	n = platform.MastodonLength(text, spoiler, platform.MastodonURLLength)
	return n, max, n > max
}

func checkText(f *apierr.Fields, name, key, field, v string) {
	if !utf8.ValidString(v) {
		f.Add(field, "must be valid UTF-8")
		return
	}
	if does, allows, _ := textExcess(name, key, v); does != "" {
		f.Addf(field, "%s; %s allows %s", does, registry.DisplayName(name), allows)
	}
}

// textExcess says how v breaks the platform's rules for one of its texts: what v does ("is 320
// characters (graphemes) long", `contains "<"`), what the platform allows ("300", "no < or
// >"), and whether it is the length; does is "" when v keeps every rule.
func textExcess(name, key, v string) (does, allows string, length bool) {
	caps, _ := registry.CapabilitiesOf(name)
	lim := caps.Text[key]
	if lim.Max > 0 {
		if n := lim.Count(v); n > lim.Max {
			return fmt.Sprintf("is %d %s long", n, unitWord(lim.Unit)), strconv.Itoa(lim.Max), true
		}
	}
	if lim.MaxBytes > 0 && len(v) > lim.MaxBytes {
		return fmt.Sprintf("is %d bytes long in UTF-8", len(v)), strconv.Itoa(lim.MaxBytes), true
	}
	does, allows = lim.Refusal(v)
	return does, allows, false
}

func unitWord(unit string) string {
	switch unit {
	case platform.UnitGraphemes:
		return "characters (graphemes)"
	case platform.UnitUTF16:
		return "UTF-16 units"
	case platform.UnitBytes:
		return "bytes"
	default:
		return "characters"
	}
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func validSubreddit(s string) bool {
	if len(s) < 2 || len(s) > 21 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// EffectiveOptions returns what will be sent to one platform: its object with the defaults of
// docs/CONTRACT.md (Platform objects) applied, and its texts falling back to the post's title
// and caption where the platform object leaves them out (YouTube's title, without either, is
// derived: derivedTitle).
// derived names the texts so filled in. The result is checked against the platform's limits,
// so a caption fine for YouTube but too long for Bluesky is refused naming both, before
// anything is written; and required choices (Pinterest board, subreddit) are checked here.
func (r *Request) EffectiveOptions(name string, f *apierr.Fields) (options json.RawMessage, derived Derived) {
	derived = Derived{}
	first := func(vs ...string) string {
		for _, v := range vs {
			if v != "" {
				return v
			}
		}
		return ""
	}
	// check checks a text that came from title or caption rather than the platform object.
	check := func(key, field, v, from string) {
		p := registry.DisplayName(name)
		switch does, allows, length := textExcess(name, key, v); {
		case does == "":
		case length:
			f.Addf(from, "%s, over %s's limit of %s for %s; shorten it or set %s", does, p, allows, field, field)
		default:
			f.Addf(from, "%s, and %s allows %s in %s; change it or set %s", does, p, allows, field, field)
		}
	}
	// text picks the platform's own value when given, else the fallback (checked, and
	// reported as derived).
	text := func(key, field, own, fallback, from string) string {
		if own != "" {
			return own
		}
		if fallback != "" {
			check(key, field, fallback, from)
			derived[key] = from
		}
		return fallback
	}
	body := func() (string, string) {
		if r.Caption != "" {
			return r.Caption, FromCaption
		}
		return r.Title, FromTitle
	}
	captionOrTitle, from := body()
	var out any
	switch name {
	case platform.YouTube:
		o := deref(r.YouTube)
		o.Title = text("title", "youtube.title", o.Title, r.Title, FromTitle)
		if o.Title == "" {
			made, source := r.derivedTitle()
			if made == "" {
				f.Add("title", "is required for YouTube when there is no caption and the video's file name gives none (as with a video_url ending in /): set title or youtube.title")
			} else {
				o.Title, derived["title"] = made, source
			}
		}
		o.Description = text("description", "youtube.description", o.Description, r.Caption, FromCaption)
		o.PrivacyStatus = first(o.PrivacyStatus, "public")
		o.MadeForKids = boolOr(o.MadeForKids, false)
		out = o
	case platform.Instagram:
		o := deref(r.Instagram)
		o.Caption = text("caption", "instagram.caption", o.Caption, captionOrTitle, from)
		o.ShareToFeed = boolOr(o.ShareToFeed, true)
		out = o
	case platform.TikTok:
		o := deref(r.TikTok)
		o.Title = text("title", "tiktok.title", o.Title, captionOrTitle, from)
		o.Mode = first(o.Mode, "inbox")
		o.PrivacyLevel = first(o.PrivacyLevel, "PUBLIC_TO_EVERYONE")
		o.IsAIGC = boolOr(o.IsAIGC, false)
		o.AllowComment = boolOr(o.AllowComment, true)
		o.AllowDuet = boolOr(o.AllowDuet, true)
		o.AllowStitch = boolOr(o.AllowStitch, true)
		out = o
	case platform.LinkedIn:
		o := deref(r.LinkedIn)
		o.Commentary = text("commentary", "linkedin.commentary", o.Commentary, captionOrTitle, from)
		o.Title = text("title", "linkedin.title", o.Title, r.Title, FromTitle)
		out = o
	case platform.Pinterest:
		o := deref(r.Pinterest)
		o.Title = text("title", "pinterest.title", o.Title, r.Title, FromTitle)
		o.Description = text("description", "pinterest.description", o.Description, r.Caption, FromCaption)
		if o.BoardID == "" {
			f.Add("pinterest.board_id", "is required to publish to Pinterest (GET /channels/{id}/options lists the boards)")
		}
		out = o
	case platform.Threads:
		o := deref(r.Threads)
		o.Text = text("text", "threads.text", o.Text, captionOrTitle, from)
		out = o
	case platform.Bluesky:
		o := deref(r.Bluesky)
		o.Text = text("text", "bluesky.text", o.Text, captionOrTitle, from)
		out = o
	case platform.Mastodon:
		o := deref(r.Mastodon)
		if o.Text == "" && captionOrTitle != "" {
			// The caption stands in for the text, and counts with the content warning.
			o.Text = captionOrTitle
			derived["text"] = from
			if n, max, over := mastodonOver(o.Text, o.SpoilerText); over && o.SpoilerText != "" {
				f.Addf(from, "is %d characters long with mastodon.spoiler_text, over Mastodon's limit of %d; shorten them or set mastodon.text", n, max)
			} else if over {
				f.Addf(from, "is %d characters long as Mastodon counts them, over its limit of %d for mastodon.text; shorten it or set mastodon.text", n, max)
			}
		}
		out = o
	case platform.Facebook:
		o := deref(r.Facebook)
		o.Description = text("description", "facebook.description", o.Description, r.Caption, FromCaption)
		o.Title = text("title", "facebook.title", o.Title, r.Title, FromTitle)
		out = o
	case platform.Telegram:
		o := deref(r.Telegram)
		o.Caption = text("caption", "telegram.caption", o.Caption, captionOrTitle, from)
		out = o
	case platform.Discord:
		o := deref(r.Discord)
		o.Content = text("content", "discord.content", o.Content, captionOrTitle, from)
		out = o
	case platform.Reddit:
		o := deref(r.Reddit)
		o.Title = text("title", "reddit.title", o.Title, r.Title, FromTitle)
		if o.Title == "" {
			f.Add("reddit.title", "is required to publish to Reddit (or set title)")
		}
		if o.Subreddit == "" {
			f.Add("reddit.subreddit", "is required to publish to Reddit")
		}
		o.NSFW = boolOr(o.NSFW, false)
		o.Spoiler = boolOr(o.Spoiler, false)
		out = o
	default:
		out = struct{}{}
	}
	options, _ = json.Marshal(out)
	return options, derived
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func boolOr(p *bool, def bool) *bool {
	if p != nil {
		return p
	}
	return &def
}

// Empty reports whether no platform object is given.
func (o PlatformObjects) Empty() bool { return o == PlatformObjects{} }

// Merge replaces each platform object that other gives.
func (o *PlatformObjects) Merge(other PlatformObjects) {
	replace(&o.YouTube, other.YouTube)
	replace(&o.Instagram, other.Instagram)
	replace(&o.TikTok, other.TikTok)
	replace(&o.LinkedIn, other.LinkedIn)
	replace(&o.Pinterest, other.Pinterest)
	replace(&o.Threads, other.Threads)
	replace(&o.Facebook, other.Facebook)
	replace(&o.Bluesky, other.Bluesky)
	replace(&o.Telegram, other.Telegram)
	replace(&o.Discord, other.Discord)
	replace(&o.Mastodon, other.Mastodon)
	replace(&o.Reddit, other.Reddit)
}

func replace[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}

// Edit applies an edited request to a scheduled post that has not fired: it validates the
// request as publishing does (a scheduled post stays scheduled: scheduled_for cannot be
// removed) and recomputes what each destination will receive. Failures are *apierr.Error.
func Edit(req *Request, p *store.Post, now time.Time) error {
	scheduledFor, f := req.CheckStatic(now, req.VideoURL == "", false)
	if req.ScheduledFor == "" {
		f.Add("scheduled_for", "cannot be removed from a scheduled post; cancel it and publish again to publish now")
	}
	derived := map[string]Derived{}
	for i := range p.Destinations {
		d := &p.Destinations[i]
		d.Options, derived[d.Platform] = req.EffectiveOptions(d.Platform, &f)
	}
	if err := f.Err(); err != nil {
		return err
	}
	raw, err := req.stored(derived)
	if err != nil {
		return err
	}
	p.Title, p.Caption, p.Request, p.ScheduledFor = req.Title, req.Caption, raw, scheduledFor
	return nil
}

// Fallbacks of a platform's text field left empty (see EffectiveOptions), besides FromTitle
// and FromCaption.
const (
	FromCaptionOrTitle = "caption_or_title" // the caption, or the title when there is no caption
	FromTitleOrDerived = "title_or_derived" // the title, or one derived from the caption or the video's name
)

// TextFallback says what a platform's text field (a key of its capabilities' Text) holds when
// the request leaves it empty: FromTitle, FromCaption, FromCaptionOrTitle or
// FromTitleOrDerived ("" for none). The web dashboard counts the text that will be sent with
// it; a test holds it to EffectiveOptions.
func TextFallback(name, key string) string {
	switch key {
	case "title":
		switch name {
		case platform.TikTok:
			return FromCaptionOrTitle
		case platform.YouTube:
			return FromTitleOrDerived
		}
		return FromTitle
	case "description":
		return FromCaption
	case "caption", "commentary", "text", "content":
		return FromCaptionOrTitle
	}
	return ""
}
