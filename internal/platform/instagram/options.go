package instagram

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the instagram object of a publish request; the provider reads it back from the
// destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	// Caption overrides the post's caption.
	Caption string `json:"caption,omitempty"`
	// ShareToFeed also shows the Reel in the profile feed (true when absent).
	ShareToFeed *bool `json:"share_to_feed,omitempty"`
}

var _ platform.Resolver = (*Options)(nil)

// UnmarshalJSON decodes the object strictly, naming a bad field instagram.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Instagram, b, (*plain)(o))
}

// Resolve implements platform.Resolver.
func (o *Options) Resolve(_ platform.Post, _ *platform.Filler, _ *apierr.Fields) {
	o.ShareToFeed = platform.Or(o.ShareToFeed, true)
}
