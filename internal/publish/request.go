package publish

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/bluesky"
	"github.com/reelay/reelay/internal/platform/discord"
	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/instagram"
	"github.com/reelay/reelay/internal/platform/linkedin"
	"github.com/reelay/reelay/internal/platform/mastodon"
	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/reddit"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/platform/telegram"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/reelay/reelay/internal/platform/tiktok"
	"github.com/reelay/reelay/internal/platform/youtube"
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
	// Fit and Transcode say what may be done to a video a platform would refuse as it is
	// (conform.Options); a platform object's own fit overrides Fit for its platform.
	Fit       string `json:"fit,omitempty"`
	Transcode string `json:"transcode,omitempty"`

	PlatformObjects

	// VideoFileName is the uploaded video's file name as the multipart form gave it ("" for
	// video_url), which YouTube's title may be derived from. It is not a field of the request:
	// a JSON body cannot set it.
	VideoFileName string `json:"-"`
}

// PlatformObjects are the per-platform objects of a publish request. Each is its platform's
// own type (platform.Options): it decodes strictly, checks itself and resolves into what the
// provider is sent (docs/CONTRACT.md, Platform objects). Booleans are pointers so that "not
// given" can take the object's default.
type PlatformObjects struct {
	YouTube   *youtube.Options   `json:"youtube,omitempty"`
	Instagram *instagram.Options `json:"instagram,omitempty"`
	TikTok    *tiktok.Options    `json:"tiktok,omitempty"`
	LinkedIn  *linkedin.Options  `json:"linkedin,omitempty"`
	Pinterest *pinterest.Options `json:"pinterest,omitempty"`
	Threads   *threads.Options   `json:"threads,omitempty"`
	Facebook  *facebook.Options  `json:"facebook,omitempty"`
	Bluesky   *bluesky.Options   `json:"bluesky,omitempty"`
	Telegram  *telegram.Options  `json:"telegram,omitempty"`
	Discord   *discord.Options   `json:"discord,omitempty"`
	Mastodon  *mastodon.Options  `json:"mastodon,omitempty"`
	Reddit    *reddit.Options    `json:"reddit,omitempty"`
}

// each calls fn with every platform object given, and its platform (the field's JSON name).
func (o *PlatformObjects) each(fn func(name string, obj reflect.Value)) {
	objects := reflect.ValueOf(o).Elem()
	for i := range objects.NumField() {
		if obj := objects.Field(i); !obj.IsNil() {
			fn(jsonName(objects.Type().Field(i)), obj)
		}
	}
}

// object returns a copy of the named platform's object as the request gives it, or a new
// empty one.
func (o *PlatformObjects) object(d platform.Description) any {
	name := d.ID
	out := d.NewOptions()
	o.each(func(n string, obj reflect.Value) {
		if n == name {
			reflect.ValueOf(out).Elem().Set(obj.Elem())
		}
	})
	return out
}

// Service-wide limits (docs/CONTRACT.md, Publishing).
const (
	MaxTitle   = 100
	MaxCaption = 5000
	MaxURL     = platform.MaxURL
	// maxScheduleAhead bounds scheduled_for: a post a year out is almost surely a typo.
	maxScheduleAhead = 365 * 24 * time.Hour
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
		platform.CheckURL(&f, "video_url", r.VideoURL)
	}
	if r.ThumbnailURL != "" {
		if hasThumbUpload {
			f.Add("thumbnail_url", "give either thumbnail_url or an uploaded thumbnail, not both")
		} else {
			platform.CheckURL(&f, "thumbnail_url", r.ThumbnailURL)
		}
	}
	r.checkControlChars(&f)
	platform.CheckChars(&f, "title", r.Title, MaxTitle)
	platform.CheckChars(&f, "caption", r.Caption, MaxCaption)
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
	platform.CheckFit(&f, "fit", r.Fit)
	if r.Transcode != "" && !slices.Contains(conform.TranscodeChoices, r.Transcode) {
		f.Addf("transcode", "must be one of %s", strings.Join(conform.TranscodeChoices, ", "))
	}
	r.checkOptions(&f)
	return scheduledFor, f
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

// checkOptions validates the per-platform objects that were given, each by its own rules.
func (r *Request) checkOptions(f *apierr.Fields) {
	r.PlatformObjects.each(func(name string, obj reflect.Value) {
		d, _ := registry.Describe(name)
		d.CheckOptions(f, obj.Interface())
	})
}

// EffectiveOptions returns what will be sent to one platform: its object with the defaults of
// docs/CONTRACT.md (Platform objects) applied, and its texts falling back to the post's title
// and caption where the platform object leaves them out (YouTube's title, without either, is
// derived: derivedTitle).
// derived names the texts so filled in. The result is checked against the platform's limits,
// so a caption fine for YouTube but too long for Bluesky is refused naming both, before
// anything is written; and required choices (Pinterest board, subreddit) are checked here.
func (r *Request) EffectiveOptions(name string, f *apierr.Fields) (options json.RawMessage, derived Derived) {
	d, ok := registry.Describe(name)
	if !ok {
		return json.RawMessage(`{}`), Derived{}
	}
	obj := r.PlatformObjects.object(d)
	derived = d.ResolveOptions(obj, platform.Post{Title: r.Title, Caption: r.Caption, DeriveTitle: r.derivedTitle}, f)
	options, _ = json.Marshal(obj)
	return options, derived
}

// conformOptions is what the request says of converting the video for one platform.
func (r *Request) conformOptions(d platform.Description) conform.Options {
	o := conform.Options{Fit: r.Fit, Transcode: r.Transcode}
	if obj, ok := r.PlatformObjects.object(d).(interface{ FitChoice() string }); ok && obj.FitChoice() != "" {
		o.Fit = obj.FitChoice()
	}
	return o
}

// Empty reports whether no platform object is given.
func (o PlatformObjects) Empty() bool { return o == PlatformObjects{} }

// Merge replaces each platform object that other gives.
func (o *PlatformObjects) Merge(other PlatformObjects) {
	mine := reflect.ValueOf(o).Elem()
	theirs := reflect.ValueOf(other)
	for i := range theirs.NumField() {
		if !theirs.Field(i).IsNil() {
			mine.Field(i).Set(theirs.Field(i))
		}
	}
}

// Edit applies an edited request to a scheduled post that has not fired: it validates the
// request as publishing does (a scheduled post stays scheduled: scheduled_for cannot be
// removed) and recomputes what each destination will receive. Failures are *apierr.Error.
func Edit(req *Request, p *store.Post, video store.Media, now time.Time) error {
	scheduledFor, f := req.CheckStatic(now, req.VideoURL == "", false)
	if req.ScheduledFor == "" {
		f.Add("scheduled_for", "cannot be removed from a scheduled post; cancel it and publish again to publish now")
	}
	derived := map[string]Derived{}
	for i := range p.Destinations {
		d := &p.Destinations[i]
		d.Options, derived[d.Platform] = req.EffectiveOptions(d.Platform, &f)
	}
	// An edited fit may change what a destination's video needs.
	planConversions(&f, "video", req, p.Destinations, video.SHA256, video.Size, infoOf(video), nil)
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
	FromCaptionOrTitle = platform.FromCaptionOrTitle
	FromTitleOrDerived = platform.FromTitleOrDerived
)

// TextFallback says what a platform's text field (a key of its capabilities' Text) holds when
// the request leaves it empty: FromTitle, FromCaption, FromCaptionOrTitle or
// FromTitleOrDerived ("" for none), as the platform's description says. The web dashboard
// counts the text that will be sent with it; a test holds it to EffectiveOptions.
func TextFallback(name, key string) string {
	d, _ := registry.Describe(name)
	return d.TextFallbacks[key]
}
