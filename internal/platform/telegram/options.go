package telegram

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the telegram object of a publish request; the provider reads it back from the
// destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	// Caption is the video's caption (the post's caption, else its title, when empty).
	Caption string `json:"caption,omitempty"`
}

// UnmarshalJSON decodes the object strictly, naming a bad field telegram.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Telegram, b, (*plain)(o))
}
