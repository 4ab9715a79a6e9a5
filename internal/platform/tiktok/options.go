package tiktok

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the tiktok object of a publish request; the provider reads it back from the
// destination. Booleans are pointers so that "not given" takes the default.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	Mode         string `json:"mode,omitempty"`
	Title        string `json:"title,omitempty"`
	PrivacyLevel string `json:"privacy_level,omitempty"`
	IsAIGC       *bool  `json:"is_aigc,omitempty"`
	AllowComment *bool  `json:"allow_comment,omitempty"`
	AllowDuet    *bool  `json:"allow_duet,omitempty"`
	AllowStitch  *bool  `json:"allow_stitch,omitempty"`
}

// requestPrivacy are the privacy levels a request may choose. FOLLOWER_OF_CREATOR exists in
// the API for some creators only, and is not offered.
var requestPrivacy = []string{PrivacyPublic, PrivacyFriends, PrivacySelfOnly}

// The rules of the tiktok object beyond its texts' limits.
var (
	_ platform.Checker  = (*Options)(nil)
	_ platform.Resolver = (*Options)(nil)
)

// UnmarshalJSON decodes the object strictly, naming a bad field tiktok.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.TikTok, b, (*plain)(o))
}

// Check implements platform.Checker.
func (o *Options) Check(f *apierr.Fields) {
	platform.CheckChoice(f, "tiktok.mode", o.Mode, []string{ModeInbox, ModeDirect})
	platform.CheckChoice(f, "tiktok.privacy_level", o.PrivacyLevel, requestPrivacy)
}

// Resolve implements platform.Resolver.
func (o *Options) Resolve(_ platform.Post, _ *platform.Filler, _ *apierr.Fields) {
	o.Mode = platform.First(o.Mode, ModeInbox)
	o.PrivacyLevel = platform.First(o.PrivacyLevel, PrivacyPublic)
	o.IsAIGC = platform.Or(o.IsAIGC, false)
	o.AllowComment = platform.Or(o.AllowComment, true)
	o.AllowDuet = platform.Or(o.AllowDuet, true)
	o.AllowStitch = platform.Or(o.AllowStitch, true)
}
