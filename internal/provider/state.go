package provider

import (
	"cmp"
	"encoding/json"
	"time"
)

// UnmarshalStored decodes raw, a destination's stored State or its platform object (Options),
// into v. raw absent or JSON null (no state before the first step, no options given) leaves v
// as it is.
func UnmarshalStored(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// ReadState decodes the State the last Step returned for d into st, a pointer to the
// provider's State (left as it is before the first step). A State that cannot be read is a
// permanent internal *Error naming the platform: no step can go on from it.
func ReadState(d *Destination, platform string, st any) error {
	if err := UnmarshalStored(d.State, st); err != nil {
		return Permanent(CategoryInternal, 0, "stored %s state is unreadable: %v", platform, err)
	}
	return nil
}

// Next is the outcome of a step that is not final: status, with st encoded as the State to
// store, and after the wait before the next step.
func Next(st any, status string, after time.Duration) Outcome {
	raw, _ := json.Marshal(st)
	return Outcome{Status: status, State: raw, After: after}
}

// Text is the text a post sends to a platform that takes one text: own, the platform object's
// (its options), when set; else the post's caption; else its title.
func (d *Destination) Text(own string) string {
	return cmp.Or(own, d.Caption, d.Title)
}
