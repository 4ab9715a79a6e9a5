package platform

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
)

// A platform's object of a publish request ("youtube": {...}) is a struct type of the
// platform's package (Description.NewOptions) that the request decodes into and the provider
// reads back from the destination, so that a field is declared once. Its texts, the string
// fields named as keys of the platform's Capabilities.Text, are checked and filled by the
// description (CheckOptions, ResolveOptions); a type with rules of its own implements Checker
// or Resolver.

// Checker is an options type with rules beyond its texts' limits (choices, formats).
type Checker interface {
	// Check adds to f what is wrong with the object as the request gives it, naming each field
	// as the request does ("mastodon.visibility").
	Check(f *apierr.Fields)
}

// Resolver is an options type with defaults, required fields, or texts it fills itself.
type Resolver interface {
	// Resolve applies the object's defaults and requires what the platform requires
	// (Pinterest's board), after fill has filled its texts from post.
	Resolve(post Post, fill *Filler, f *apierr.Fields)
}

// CheckOptions adds to f what is wrong with o, the platform's object as the request gives it:
// each of its texts against the platform's limits (but those in OwnTexts), then the type's
// own rules.
func (d *Description) CheckOptions(f *apierr.Fields, o any) {
	d.eachText(o, func(key string, v *string) { d.CheckText(f, key, *v) })
	if fo, ok := o.(fitter); ok {
		CheckFit(f, d.ID+".fit", fo.FitChoice())
	}
	if c, ok := o.(Checker); ok {
		c.Check(f)
	}
}

// ResolveOptions makes o what is sent to the platform: the texts it leaves out filled from
// post (TextFallbacks) and checked, then the type's defaults and requirements. It returns the
// texts so filled.
func (d *Description) ResolveOptions(o any, post Post, f *apierr.Fields) Derived {
	fill := &Filler{d: d, post: post, f: f, Derived: Derived{}}
	d.eachText(o, func(key string, v *string) { *v = fill.Text(key, *v) })
	if r, ok := o.(Resolver); ok {
		r.Resolve(post, fill, f)
	}
	return fill.Derived
}

// eachText calls fn with each text of o (a pointer to a struct): its string fields whose JSON
// name is a key of the platform's Capabilities.Text, in the order of the fields, except those
// the type handles itself (OwnTexts).
func (d *Description) eachText(o any, fn func(key string, v *string)) {
	v := reflect.ValueOf(o).Elem()
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if _, text := d.Capabilities.Text[key]; text && v.Field(i).Kind() == reflect.String && !slices.Contains(d.OwnTexts, key) {
			fn(key, v.Field(i).Addr().Interface().(*string))
		}
	}
}

// Post is what a platform's object falls back on: the post's own title and caption.
type Post struct {
	Title   string
	Caption string
	// DeriveTitle makes a title for a post that gives none (YouTube needs one): the text, and
	// where it came from; "" when nothing gives one.
	DeriveTitle func() (title, from string)
}

// Derived names the texts of one platform's payload that reelay filled in, each with where it
// came from: {"title": "caption_first_line", "description": "caption"}.
type Derived map[string]string

// Where a text left out of a platform's object comes from (Description.TextFallbacks), and
// the values of Derived for the post's own texts.
const (
	FromTitle          = "title"            // the post's title
	FromCaption        = "caption"          // the post's caption
	FromCaptionOrTitle = "caption_or_title" // the caption, or the title when there is no caption
	FromTitleOrDerived = "title_or_derived" // the title, or one derived from the caption or the video's name
)

// Filler fills the texts a platform's object leaves out from the post, as the platform's
// description says (TextFallbacks), and checks what it filled against the platform's limits,
// naming the post's field that the text came from.
type Filler struct {
	d       *Description
	post    Post
	f       *apierr.Fields
	Derived Derived
}

// Text returns own when the object gives it; else the post's text that the description names
// for key (its title, its caption, or its caption or else its title), checked and recorded in
// Derived. A title that must be derived (FromTitleOrDerived) is the post's title here; the
// platform's Resolve derives one when that is empty.
func (fl *Filler) Text(key, own string) string {
	if own != "" {
		return own
	}
	v, from := fl.Source(key)
	if v == "" {
		return ""
	}
	field := fl.d.ID + "." + key
	switch does, allows, length := fl.d.TextExcess(key, v); {
	case does == "":
	case length:
		fl.f.Addf(from, "%s, over %s's limit of %s for %s; shorten it or set %s", does, fl.d.Name, allows, field, field)
	default:
		fl.f.Addf(from, "%s, and %s allows %s in %s; change it or set %s", does, fl.d.Name, allows, field, field)
	}
	fl.Derived[key] = from
	return v
}

// Source is the post's text that stands in for the object's key, and the post's field it is
// (FromTitle or FromCaption); "" when the post has none.
func (fl *Filler) Source(key string) (v, from string) {
	switch fl.d.TextFallbacks[key] {
	case FromTitle, FromTitleOrDerived:
		return fl.post.Title, FromTitle
	case FromCaption:
		return fl.post.Caption, FromCaption
	case FromCaptionOrTitle:
		if fl.post.Caption != "" {
			return fl.post.Caption, FromCaption
		}
		return fl.post.Title, FromTitle
	}
	return "", ""
}

// CheckText adds to f what is wrong with v as the platform's text key, a field of its object.
func (d *Description) CheckText(f *apierr.Fields, key, v string) {
	field := d.ID + "." + key
	if !utf8.ValidString(v) {
		f.Add(field, "must be valid UTF-8")
		return
	}
	if does, allows, _ := d.TextExcess(key, v); does != "" {
		f.Addf(field, "%s; %s allows %s", does, d.Name, allows)
	}
}

// TextExcess says how v breaks the platform's rules for its text key: what v does ("is 320
// characters (graphemes) long", `contains "<"`), what the platform allows ("300", "no < or
// >"), and whether it is the length; does is "" when v keeps every rule.
func (d *Description) TextExcess(key, v string) (does, allows string, length bool) {
	lim := d.Capabilities.Text[key]
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
	case UnitGraphemes:
		return "characters (graphemes)"
	case UnitUTF16:
		return "UTF-16 units"
	case UnitBytes:
		return "bytes"
	case UnitEmojiBytes:
		return "characters (an emoji as its UTF-8 bytes)"
	default:
		return "characters"
	}
}

// CheckChars adds to f that v, the request's field, is not valid UTF-8 or is longer than max
// characters.
func CheckChars(f *apierr.Fields, field, v string, max int) {
	if !utf8.ValidString(v) {
		f.Add(field, "must be valid UTF-8")
		return
	}
	if n := utf8.RuneCountInString(v); n > max {
		f.Addf(field, "must be at most %d characters, got %d", max, n)
	}
}

// CheckChoice adds to f that v, the request's field, is given and not one of allowed.
func CheckChoice(f *apierr.Fields, field, v string, allowed []string) {
	if v != "" && !slices.Contains(allowed, v) {
		f.Addf(field, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
	}
}

// MaxURL is the longest URL a request may give (video_url, a link).
const MaxURL = 2048

// CheckURL adds to f what keeps raw, the request's field, from being a link reelay may hand
// on: an absolute http or https URL of at most MaxURL characters, without credentials.
func CheckURL(f *apierr.Fields, field, raw string) {
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

// Or is *p, or def where the request left the choice out (p nil): a boolean's default.
func Or(p *bool, def bool) *bool {
	if p != nil {
		return p
	}
	return &def
}

// First is the first of vs that is not empty: a choice, or its default.
func First(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
