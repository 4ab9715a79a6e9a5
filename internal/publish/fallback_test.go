package publish

import (
	"encoding/json"
	"testing"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
)

// TestTextFallbackMatchesEffectiveOptions holds TextFallback to what EffectiveOptions really
// sends for every text field of every platform, with and without a caption.
func TestTextFallbackMatchesEffectiveOptions(t *testing.T) {
	for _, name := range platform.All {
		caps, _ := registry.CapabilitiesOf(name)
		for key := range caps.Text {
			want := map[string][2]string{ // fallback → (sent with title and caption, sent with title only)
				FromTitle:          {"T", "T"},
				FromTitleOrDerived: {"T", "T"},
				FromCaption:        {"C", ""},
				FromCaptionOrTitle: {"C", "T"},
			}[TextFallback(name, key)]
			for i, caption := range []string{"C", ""} {
				r := Request{Title: "T", Caption: caption}
				var f apierr.Fields
				raw, _ := r.EffectiveOptions(name, &f)
				var sent map[string]any
				if err := json.Unmarshal(raw, &sent); err != nil {
					t.Fatal(err)
				}
				got, _ := sent[key].(string)
				if got != want[i] {
					t.Errorf("%s.%s with caption %q: sent %q, TextFallback %q says %q", name, key, caption, got, TextFallback(name, key), want[i])
				}
			}
		}
	}
}
