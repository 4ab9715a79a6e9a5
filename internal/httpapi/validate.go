package httpapi

import (
	"github.com/reelay/reelay/internal/apierr"
)

// checkName validates a required display name: not blank, at most max characters, no control
// or bidirectional override characters.
func checkName(f *apierr.Fields, field, v string, max int) { f.Name(field, v, max) }

// checkText validates an optional free text of at most max characters.
func checkText(f *apierr.Fields, field, v string, max int) { f.Text(field, v, max) }

// checkLabel validates an optional display name (a channel's): at most max characters, no
// control or bidirectional override characters.
func checkLabel(f *apierr.Fields, field, v string, max int) { f.Label(field, v, max) }
