package bluesky

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the bluesky object of a publish request; the provider reads it back from the
// destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	// Text is the post's text (the post's caption, else its title, when empty).
	Text string `json:"text,omitempty"`
}

// UnmarshalJSON decodes the object strictly, naming a bad field bluesky.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Bluesky, b, (*plain)(o))
}
