package httpapi

import (
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
)

// checkName validates a required display name: not blank, at most max characters.
func checkName(f *apierr.Fields, field, v string, max int) {
	switch {
	case strings.TrimSpace(v) == "":
		f.Add(field, "is required")
	case utf8.RuneCountInString(v) > max:
		f.Addf(field, "must be at most %d characters, got %d", max, utf8.RuneCountInString(v))
	case strings.ContainsFunc(v, isControl):
		f.Add(field, "must not contain control characters")
	}
}

// checkText validates an optional free text of at most max characters.
func checkText(f *apierr.Fields, field, v string, max int) {
	if n := utf8.RuneCountInString(v); n > max {
		f.Addf(field, "must be at most %d characters, got %d", max, n)
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
