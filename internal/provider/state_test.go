package provider

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestReadStateAndNext(t *testing.T) {
	type state struct {
		Phase string `json:"phase"`
	}
	for _, raw := range []string{"", "null"} {
		st := state{Phase: "kept"}
		if err := ReadState(&Destination{State: json.RawMessage(raw)}, "P", &st); err != nil || st.Phase != "kept" {
			t.Errorf("ReadState(%q) = %v, %+v; want st as it was", raw, err, st)
		}
	}
	var st state
	err := ReadState(&Destination{State: json.RawMessage(`{"phase":`)}, "P", &st)
	var pe *Error
	if !errors.As(err, &pe) || pe.Transient || pe.Category != CategoryInternal || pe.Message[:len("stored P state is unreadable")] != "stored P state is unreadable" {
		t.Errorf("ReadState of a broken state = %v, want a permanent internal error", err)
	}
	o := Next(state{Phase: "upload"}, StatusUploading, 5)
	if o.Status != StatusUploading || o.After != 5 || string(o.State) != `{"phase":"upload"}` {
		t.Errorf("Next = %+v", o)
	}
	if err := ReadState(&Destination{State: o.State}, "P", &st); err != nil || st.Phase != "upload" {
		t.Errorf("ReadState of Next's state = %v, %+v", err, st)
	}
}

func TestDestinationText(t *testing.T) {
	d := &Destination{Title: "title", Caption: "caption"}
	if got := d.Text("own"); got != "own" {
		t.Errorf("Text(own) = %q", got)
	}
	if got := d.Text(""); got != "caption" {
		t.Errorf("Text without own = %q, want the caption", got)
	}
	d.Caption = ""
	if got := d.Text(""); got != "title" {
		t.Errorf("Text without own or caption = %q, want the title", got)
	}
}
