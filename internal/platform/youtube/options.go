package youtube

import (
	"encoding/json"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the youtube object of a publish request (docs/CONTRACT.md, Platform objects):
// title, description, privacy_status (public, unlisted or private; default public) and
// made_for_kids (default false), plus category_id as the channel options offer it (a number,
// or its digits as a string; default 22, People & Blogs). The request decodes into it and the
// provider reads it back from the destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	Title         string `json:"title,omitempty"`
	Description   string `json:"description,omitempty"`
	PrivacyStatus string `json:"privacy_status,omitempty"`
	MadeForKids   *bool  `json:"made_for_kids,omitempty"`
	// CategoryID is reelay's addition to the interface's object: one of the categories
	// GET /channels/{id}/options lists.
	CategoryID json.RawMessage `json:"category_id,omitempty"`
}

var privacyStatuses = []string{"public", "unlisted", "private"}

// The rules of the youtube object beyond its texts' limits.
var (
	_ platform.Checker  = (*Options)(nil)
	_ platform.Resolver = (*Options)(nil)
)

// UnmarshalJSON decodes the object strictly, naming a bad field youtube.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.YouTube, b, (*plain)(o))
}

// Check implements platform.Checker.
func (o *Options) Check(f *apierr.Fields) {
	platform.CheckChoice(f, "youtube.privacy_status", o.PrivacyStatus, privacyStatuses)
	if c := string(o.CategoryID); c != "" && c != "null" && !isDigits(strings.TrimSuffix(strings.TrimPrefix(c, `"`), `"`)) {
		f.Add("youtube.category_id", "must be a category id, such as 22 (GET /channels/{id}/options lists them)")
	}
}

// Resolve implements platform.Resolver. YouTube needs a title: without youtube.title or the
// post's, one is derived from the post.
func (o *Options) Resolve(post platform.Post, fill *platform.Filler, f *apierr.Fields) {
	if o.Title == "" {
		made, from := "", ""
		if post.DeriveTitle != nil {
			made, from = post.DeriveTitle()
		}
		if made == "" {
			f.Add("title", "is required for YouTube when there is no caption and the video's file name gives none (as with a video_url ending in /): set title or youtube.title")
		} else {
			o.Title, fill.Derived["title"] = made, from
		}
	}
	o.PrivacyStatus = platform.First(o.PrivacyStatus, "public")
	o.MadeForKids = platform.Or(o.MadeForKids, false)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
