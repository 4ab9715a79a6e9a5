package reddit

import (
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the reddit object of a publish request; the provider reads it back from the
// destination. Booleans are pointers so that "not given" takes the default (false).
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	Title     string `json:"title,omitempty"`
	Subreddit string `json:"subreddit,omitempty"`
	NSFW      *bool  `json:"nsfw,omitempty"`
	Spoiler   *bool  `json:"spoiler,omitempty"`
	// FlairID and FlairText are reelay's addition to the interface's object: subreddits that
	// require flair refuse a post without one (GET /channels/{id}/options?subreddit=... lists
	// them).
	FlairID   string `json:"flair_id,omitempty"`
	FlairText string `json:"flair_text,omitempty"`
}

// The rules of the reddit object beyond its texts' limits.
var (
	_ platform.Checker  = (*Options)(nil)
	_ platform.Resolver = (*Options)(nil)
)

// UnmarshalJSON decodes the object strictly, naming a bad field reddit.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Reddit, b, (*plain)(o))
}

// Check implements platform.Checker.
func (o *Options) Check(f *apierr.Fields) {
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

// Resolve implements platform.Resolver. A Reddit post needs a title and a subreddit.
func (o *Options) Resolve(_ platform.Post, _ *platform.Filler, f *apierr.Fields) {
	if o.Title == "" {
		f.Add("reddit.title", "is required to publish to Reddit (or set title)")
	}
	if o.Subreddit == "" {
		f.Add("reddit.subreddit", "is required to publish to Reddit")
	}
	o.NSFW = platform.Or(o.NSFW, false)
	o.Spoiler = platform.Or(o.Spoiler, false)
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
