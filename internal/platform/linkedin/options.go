package linkedin

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the linkedin object of a publish request; the provider reads it back from the
// destination.
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	Commentary string `json:"commentary,omitempty"`
	Title      string `json:"title,omitempty"`
}

// UnmarshalJSON decodes the object strictly, naming a bad field linkedin.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.LinkedIn, b, (*plain)(o))
}
