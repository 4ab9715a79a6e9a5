package platform

import (
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
)

// What may happen to a video whose aspect ratio a platform does not take: the post's "fit",
// which each platform's object may override for that platform alone.
const (
	// FitRefuse refuses the destination (the default): a picture is not reframed unasked.
	FitRefuse = "refuse"
	// FitPad scales the picture to fit inside the platform's frame, with black bars.
	FitPad = "pad"
	// FitCrop scales it to cover the frame and cuts the overflow off both sides equally.
	FitCrop = "crop"
)

// FitChoices are the values fit takes.
var FitChoices = []string{FitRefuse, FitPad, FitCrop}

// Fitting is embedded in every platform's object: its "fit" overrides the post's for that
// platform ("" takes the post's).
type Fitting struct {
	Fit string `json:"fit,omitempty"`
}

// FitChoice is the object's fit, "" when it leaves it to the post.
func (f Fitting) FitChoice() string { return f.Fit }

// CheckFit adds to f a refusal of fit under field when it is not one of FitChoices.
func CheckFit(f *apierr.Fields, field, fit string) {
	if fit != "" && !slices.Contains(FitChoices, fit) {
		f.Addf(field, "must be one of %s", strings.Join(FitChoices, ", "))
	}
}

// fitter is an object that embeds Fitting.
type fitter interface{ FitChoice() string }

// Interface assertion: every platform object embeds Fitting (registry's tests check it).
var _ fitter = Fitting{}
