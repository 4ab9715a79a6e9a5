package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Error codes the server answers in Error.Code (the contract's list; the server may add
// others).
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
	CodeServiceUnavailable   = "service_unavailable"
	// CodeLimitReached: the account is at its cap of API keys, projects, channels or webhooks
	// (Error.Limit); nothing was created.
	CodeLimitReached = "limit_reached"
)

// Error is an error answer of the server: the contract's error body, with what the HTTP
// answer adds. Answers that are not the contract's JSON (a proxy's 502 page) are an *Error
// too, with Code empty and the start of the body in Message.
type Error struct {
	// StatusCode is the HTTP status. For the error of a failed AI job (AIJob.Err), which is
	// not an answer of its own, it is the status the original call would have answered, known
	// from Code (0 for a code this client does not know).
	StatusCode int
	// Code is the stable snake_case code (CodeNotFound, ...); empty for a non-JSON answer.
	Code string
	// Message is the server's explanation, meant for people.
	Message string
	// Fields names each request field at fault, with what is wrong with it; the names are
	// dotted for nested fields ("tiktok.privacy_level").
	Fields map[string]string
	// RequestID identifies the request in the server's log; quote it when reporting a bug.
	RequestID string
	// RetryAfter is how long the server asked to wait (Retry-After), 0 when it did not.
	RetryAfter time.Duration
	// PostID is, with CodeDuplicatePost, the post that already carries this content.
	PostID string
	// Limit is, with CodeLimitReached, the cap the account is at.
	Limit int
}

// Error answers the server's message.
func (e *Error) Error() string {
	switch {
	case e.Code != "" && e.Message != "":
		return e.Message
	case e.Code != "":
		return e.Code
	case e.Message != "":
		return fmt.Sprintf("reelay answered %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
	default:
		return fmt.Sprintf("reelay answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
}

// RequestError is a request that got no answer: the server could not be reached, the
// connection broke, or the context ended (errors.Is(err, context.Canceled) holds then).
type RequestError struct {
	Method string
	// URL is the address called, without its query.
	URL string
	Err error
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("cannot reach reelay (%s %s): %v", e.Method, e.URL, e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain, if there is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ErrorCode is the contract's code of err ("" when err is not an error answer).
func ErrorCode(err error) string {
	if e, ok := AsError(err); ok {
		return e.Code
	}
	return ""
}

// IsCode tells whether err is an error answer with the contract's code.
func IsCode(err error, code string) bool { return ErrorCode(err) == code }

// IsNotFound tells whether err is a 404: no such resource in the caller's account.
func IsNotFound(err error) bool { return hasStatusOrCode(err, http.StatusNotFound, CodeNotFound) }

// IsUnauthorized tells whether the credential was missing, invalid or revoked.
func IsUnauthorized(err error) bool {
	return hasStatusOrCode(err, http.StatusUnauthorized, CodeUnauthorized)
}

// IsRateLimited tells whether the request was refused for its rate (Error.RetryAfter says
// for how long), after the client's own retries.
func IsRateLimited(err error) bool {
	return hasStatusOrCode(err, http.StatusTooManyRequests, CodeRateLimited)
}

// IsValidation tells whether the request was refused for its content; Error.Fields names the
// fields at fault.
func IsValidation(err error) bool { return IsCode(err, CodeValidationFailed) }

// IsConflict tells whether the request conflicts with the resource's state (409): an
// idempotency key used with another body, a duplicate post, a post that has fired, an account
// at one of its caps.
func IsConflict(err error) bool { return hasStatusOrCode(err, http.StatusConflict, "") }

func hasStatusOrCode(err error, status int, code string) bool {
	e, ok := AsError(err)
	return ok && (e.StatusCode == status || (code != "" && e.Code == code))
}

// errorBody is the contract's Error schema.
type errorBody struct {
	Error     ErrorDetail `json:"error"`
	RequestID string      `json:"request_id"`
	PostID    string      `json:"post_id"`
	Limit     int         `json:"limit"`
}

// ErrorDetail is the contract's ErrorDetail: the error part of an error body, and the error of
// a failed AI job.
type ErrorDetail struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// errorFrom turns an error answer into an *Error.
func (c *Client) errorFrom(resp *http.Response, raw []byte, sentRequestID string) *Error {
	e := &Error{StatusCode: resp.StatusCode, RetryAfter: c.retryAfter(resp.Header)}
	var body errorBody
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		e.Code, e.Message, e.Fields = body.Error.Code, body.Error.Message, body.Error.Fields
		e.RequestID, e.PostID, e.Limit = body.RequestID, body.PostID, body.Limit
	} else {
		e.Message = excerpt(raw)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			e.Message = "redirected to " + resp.Header.Get("Location") + "; the API does not redirect, check the base URL"
		}
	}
	if e.RequestID == "" {
		e.RequestID = resp.Header.Get("X-Request-Id")
	}
	if e.RequestID == "" {
		e.RequestID = sentRequestID
	}
	return e
}

// excerpt is the start of a body that is not the contract's JSON, on one line.
func excerpt(raw []byte) string {
	const max = 300
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// retryAfter reads Retry-After: delay seconds, or an HTTP date.
func (c *Client) retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(secs)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(c.now()), 0)
	}
	return 0
}

// jobError is a failed AI job's error as an *Error: the job's answer carries no status, so
// it is the one the original call would have answered, known from the code.
func jobError(d *ErrorDetail, jobID string) *Error {
	if d == nil {
		return &Error{Code: CodeInternal, Message: "AI job " + jobID + " failed without an error"}
	}
	return &Error{StatusCode: statusOfCode[d.Code], Code: d.Code, Message: d.Message, Fields: d.Fields}
}

// statusOfCode maps the contract's codes to the status they come with.
var statusOfCode = map[string]int{
	CodeValidationFailed: 400, CodeInvalidJSON: 400, CodeCredentialsInURL: 400, CodeUnauthorized: 401,
	CodeInsufficientCredits: 402, CodeMonthlyLimitReached: 403, CodeAccountSuspended: 403, CodeForbidden: 403,
	CodeNotFound: 404, CodeMethodNotAllowed: 405, CodeIdempotencyConflict: 409, CodeDuplicatePost: 409,
	CodeInvalidState: 409, CodeLimitReached: 409, CodePayloadTooLarge: 413, CodeUnsupportedMediaType: 415, CodeRateLimited: 429,
	CodeInternal: 500, CodeUpstreamError: 502, CodeServiceUnavailable: 503,
}
