package apierr

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestFields(t *testing.T) {
	t.Parallel()
	var f Fields
	if f.Err() != nil {
		t.Fatal("no problems must be no error")
	}
	f.Add("title", "is too long")
	f.Add("title", "a later problem")
	f.Addf("caption", "max %d", 5000)
	err := f.Err()
	var ae *Error
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != CodeValidationFailed {
		t.Fatalf("Err() = %#v", err)
	}
	if ae.Fields["title"] != "is too long" || ae.Fields["caption"] != "max 5000" {
		t.Errorf("fields = %v", ae.Fields)
	}
	// The message names every field, in a stable order, for clients that print only it.
	if want := "invalid request: caption: max 5000; title: is too long"; ae.Message != want {
		t.Errorf("message = %q, want %q", ae.Message, want)
	}
}

func TestWrapKeepsCauseOutOfMessage(t *testing.T) {
	t.Parallel()
	cause := errors.New("pq: password authentication failed for user reelay")
	e := Internal(cause)
	if !errors.Is(e, cause) || strings.Contains(e.Message, "password") {
		t.Errorf("Internal: %#v", e)
	}
	w := NotFound("channel").Wrap(cause)
	if w.Message != "channel not found" || !errors.Is(w, cause) || NotFound("channel").Err != nil {
		t.Errorf("Wrap: %#v", w)
	}
}
