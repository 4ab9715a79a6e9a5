// Package apierr is reelay's vocabulary of client-facing errors: a stable snake_case code, the
// HTTP status the contract assigns to it, a readable message and, for validation, the fields at
// fault. Domain packages return these; internal/httpapi turns them into the error body in one
// place, so no handler formats an error itself.
package apierr

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Error is an error a client is meant to see. Err, when set, is the underlying cause: it is
// logged, never sent.
type Error struct {
	Status  int
	Code    string
	Message string
	Fields  map[string]string
	// Extra holds top-level members added to the error body, such as the post_id of the post a
	// duplicate request collides with.
	Extra map[string]any
	// RetryAfter, when set, is sent as the Retry-After header (a 429 passing on a platform's).
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Wrap returns a copy of e with cause attached (for logs only).
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Err = cause
	return &c
}

// New returns an error with the given status, code and message.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// Newf is New with a formatted message.
func Newf(status int, code, format string, args ...any) *Error {
	return New(status, code, fmt.Sprintf(format, args...))
}

// The codes of the contract (docs/CONTRACT.md, Errors), plus the few the HTTP layer needs itself.
const (
	CodeValidationFailed     = "validation_failed"
	CodeInvalidJSON          = "invalid_json"
	CodeUnauthorized         = "unauthorized"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeMonthlyLimitReached  = "monthly_limit_reached"
	CodeAccountSuspended     = "account_suspended"
	CodeInsufficientCredits  = "insufficient_credits"
	CodeUpstreamError        = "upstream_error"
	CodeRateLimited          = "rate_limited"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeIdempotencyConflict  = "idempotency_conflict"
	CodeDuplicatePost        = "duplicate_post"
	CodeInvalidState         = "invalid_state"
	CodeForbidden            = "forbidden"
	CodeCredentialsInURL     = "credentials_in_url"
	CodeInternal             = "internal_error"
	CodeUnavailable          = "service_unavailable"
	// CodeRequestTimeout: the request body came too slowly, or the request outlasted the
	// longest a request may take (408).
	CodeRequestTimeout = "request_timeout"
	// CodeLimitReached refuses a create that would take an account past one of its caps (API
	// keys, projects, channels, webhooks); nothing was created.
	CodeLimitReached = "limit_reached"
)

// Unauthorized is the answer to missing, malformed, unknown or revoked credentials.
func Unauthorized(message string) *Error {
	return New(http.StatusUnauthorized, CodeUnauthorized, message)
}

// NotFound says that the named thing does not exist for the caller. Objects of other accounts
// get exactly this answer too, so that their existence is not revealed.
func NotFound(what string) *Error {
	return Newf(http.StatusNotFound, CodeNotFound, "%s not found", what)
}

// Internal is what a client sees of an unexpected failure; the cause goes to the log.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal,
		Message: "internal error; the request id identifies it in the server log", Err: cause}
}

// Fields collects validation problems, keyed by the request field at fault (dotted for nested
// fields, e.g. "tiktok.privacy_level"). The zero value is ready to use.
type Fields map[string]string

// Add records a problem with field; the first problem recorded for a field wins, since later
// checks on the same field usually follow from the first.
func (f *Fields) Add(field, message string) {
	if *f == nil {
		*f = Fields{}
	}
	if _, ok := (*f)[field]; !ok {
		(*f)[field] = message
	}
}

// Addf is Add with a formatted message.
func (f *Fields) Addf(field, format string, args ...any) {
	f.Add(field, fmt.Sprintf(format, args...))
}

// Err returns nil when no problem was recorded, else a 400 validation_failed error listing them.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return Validation(f)
}

// Validation builds the 400 error for the given field problems. The message names each field,
// so that a client that only prints the message still says what to fix.
func Validation(fields map[string]string) *Error {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, k+": "+fields[k])
	}
	return &Error{Status: http.StatusBadRequest, Code: CodeValidationFailed,
		Message: "invalid request: " + strings.Join(parts, "; "), Fields: fields}
}

// Field is a shorthand for a validation error on one field.
func Field(field, message string) *Error {
	return Validation(map[string]string{field: message})
}

// Name checks a required name of at most max characters, without control characters or
// bidirectional overrides (NoBidi).
func (f *Fields) Name(field, v string, max int) {
	switch {
	case strings.TrimSpace(v) == "":
		f.Add(field, "is required")
	case utf8.RuneCountInString(v) > max:
		f.Addf(field, "must be at most %d characters, got %d", max, utf8.RuneCountInString(v))
	case strings.ContainsFunc(v, isControl):
		f.Add(field, "must not contain control characters")
	default:
		f.NoBidi(field, v)
	}
}

// Label checks an optional name of at most max characters (a channel's), as Text does, and
// without bidirectional overrides (NoBidi).
func (f *Fields) Label(field, v string, max int) {
	f.Text(field, v, max)
	f.NoBidi(field, v)
}

// NoBidi refuses the bidirectional embedding, override and isolate characters (U+202A to
// U+202E, U+2066 to U+2069) in a name: a name is shown beside others in lists, logs and
// confirmations, where such a character makes it read as something else (U+202E in
// "key-<U+202E>gnp.exe" shows it as "key-exe.png"). Right-to-left names need none of them.
func (f *Fields) NoBidi(field, v string) {
	at := 0
	for _, r := range v {
		at++
		if isBidiControl(r) {
			f.Addf(field, "must not contain bidirectional override characters: U+%04X at character %d", r, at)
			return
		}
	}
}

func isBidiControl(r rune) bool { return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) }

// Text checks an optional free text of at most max characters, without control characters
// other than newline and tab (NoControl).
func (f *Fields) Text(field, v string, max int) {
	f.NoControl(field, v)
	if n := utf8.RuneCountInString(v); n > max {
		f.Addf(field, "must be at most %d characters, got %d", max, n)
	}
}

// NoControl refuses a text holding a C0 control character other than newline and tab: no
// platform takes one, and PostgreSQL cannot even store a NUL (SQLite would, and send it on).
// A carriage return is refused too, so that a line ends one way: with \n.
func (f *Fields) NoControl(field, v string) {
	at := 0
	for _, r := range v {
		at++
		if r >= 0x20 || r == '\n' || r == '\t' {
			continue
		}
		hint := ""
		if r == '\r' {
			hint = "; end lines with \\n alone"
		}
		f.Addf(field, "must not contain control characters other than newline and tab: U+%04X at character %d%s", r, at, hint)
		return
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
