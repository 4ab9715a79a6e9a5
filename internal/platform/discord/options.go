package discord

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the discord object of a publish request; the provider reads it back from the
// destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	// Content is the message's text (the post's caption, else its title, when empty).
	Content string `json:"content,omitempty"`
}

// UnmarshalJSON decodes the object strictly, naming a bad field discord.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Discord, b, (*plain)(o))
}
