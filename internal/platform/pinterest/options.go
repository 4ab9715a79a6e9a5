package pinterest

import (
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// Options is the pinterest object of a publish request; the provider reads it back from the
// destination (title from the post's title, description from its caption, when left out).
type Options struct {
	// Fitting is the object's "fit": what may be done to the video for this platform alone.
	platform.Fitting

	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Link        string `json:"link,omitempty"`
	BoardID     string `json:"board_id,omitempty"`
}

// The rules of the pinterest object beyond its texts' limits.
var (
	_ platform.Checker  = (*Options)(nil)
	_ platform.Resolver = (*Options)(nil)
)

// UnmarshalJSON decodes the object strictly, naming a bad field pinterest.<field>.
func (o *Options) UnmarshalJSON(b []byte) error {
	type plain Options
	return apierr.DecodeObject(platform.Pinterest, b, (*plain)(o))
}

// Check implements platform.Checker.
func (o *Options) Check(f *apierr.Fields) {
	if o.Link != "" {
		platform.CheckURL(f, "pinterest.link", o.Link)
	}
	platform.CheckChars(f, "pinterest.board_id", o.BoardID, 64)
}

// Resolve implements platform.Resolver: Pinterest pins to a board, which only the request can
// name.
func (o *Options) Resolve(_ platform.Post, _ *platform.Filler, f *apierr.Fields) {
	if o.BoardID == "" {
		f.Add("pinterest.board_id", "is required to publish to Pinterest (GET /channels/{id}/options lists the boards)")
	}
}
