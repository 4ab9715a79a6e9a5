package facebook

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the facebook object of a publish request; the provider reads it back from the
// destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	// Description is the reel's text (the post's caption when empty).
	Description string `json:"description,omitempty"`
	// Title is the reel's title (the post's title when empty).
	Title string `json:"title,omitempty"`
}

// UnmarshalJSON decodes the object strictly, naming a bad field facebook.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Facebook, b, (*plain)(o))
}
