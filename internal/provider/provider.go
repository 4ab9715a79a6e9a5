// Package provider is the contract between reelay and the providers of the platforms it
// publishes to: what a provider is handed (a destination, its media, a channel), what it
// answers (an outcome, a classified error), the abilities it may have beyond publishing
// (identifying an account, reading options, figures and comments, replying, closing), and
// the helpers every provider shares (repeating a call, pacing polls, its HTTP client, the
// defaults of its Config, sending a call and reading its answer, reading its stored state).
//
// It imports nothing of reelay but leaf packages, so that a provider, an HTTP client of one
// platform, does not bring the publisher, the store or the simulators along.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/httpx"
)

// Provider delivers a video to one platform. The publisher drives each destination through
// Step, one step per call, and stores the returned State before calling again, so that a
// process that dies between steps resumes from the last stored state instead of starting over
// (and never uploads the same bytes twice when the platform offers a way to resume).
//
// Step must be safe to call again with the same State after a crash at any point: a step that
// cannot know whether its last request reached the platform asks the platform (YouTube's
// upload status query, TikTok's status fetch) before repeating it.
type Provider interface {
	// Platform is the platform identifier, e.g. "youtube".
	Platform() string
	// Step performs the next step of delivering d and reports where the destination stands.
	// Errors are *Error values (transient or permanent, with a category); any other error is
	// treated as transient.
	Step(ctx context.Context, d *Destination) (Outcome, error)
}

// NewHTTPClient returns the client a provider uses when none is configured: a connection pool
// of its own, so that one platform's connections are not another's, and nothing that closes
// http.DefaultTransport's idle connections (every httptest.Server.Close does) breaks a
// provider's request in flight. timeout 0 means none (uploads are bounded by their context).
// Its errors name hosts, never the addresses they resolved to (httpx.HideAddresses): they end
// up in destinations' messages.
func NewHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	KeepConnections(t)
	httpx.HideAddresses(t)
	return &http.Client{Timeout: timeout, Transport: t}
}

// KeepConnections sizes t's pool of idle connections for the publish workers: hundreds of
// them (REELAY_PUBLISH_WORKERS) talk to one platform's few hosts (all simulators share one
// host in sandbox). net/http keeps 2 idle connections per host by default, so with more
// requests in flight most connections were closed after one use and the next request dialed
// (and, for a real platform, did its TLS handshake) again: in a burst, a tenth of the CPU
// (docs/BENCHMARKS.md).
func KeepConnections(t *http.Transport) {
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 128
}

// Destination is what a provider needs to deliver one post to one channel.
type Destination struct {
	// ID is reelay's destination id, stable across retries: providers use it as the
	// idempotency key where the platform accepts one (Mastodon's Idempotency-Key).
	ID string
	// Account is the channel's id on the platform (external_account_id).
	Account string
	// Credentials are the channel's platform credentials, unsealed (access_token, ...).
	Credentials map[string]string
	// BaseURL is the platform API's base URL (the simulator's for sandbox channels).
	BaseURL string
	// Title and Caption are the post's common texts; Options is the per-platform object of the
	// request (e.g. {"privacy_status":"unlisted"}) after validation, with defaults applied.
	Title   string
	Caption string
	Options json.RawMessage
	Video   Media
	// Thumbnail is optional.
	Thumbnail *Media
	// State is what the last Step returned (nil before the first step).
	State json.RawMessage
	// Continued is true when State is what the previous Step of the same job run returned,
	// and that step succeeded: reelay has sent the platform nothing for this destination
	// since, so a provider may skip asking the platform where things stand. It is false for a
	// State loaded from the store (after a crash, a snooze or a retry) and after a failed step.
	Continued bool
}

// Media is a stored video or image.
type Media struct {
	Size int64
	// SHA256 names the bytes, stable across attempts: the hex SHA-256 of the file, or for a
	// rendition stored without being read, the digest that names it (of its source's SHA-256
	// and its conversion).
	SHA256      string
	ContentType string // video/mp4, video/quicktime, video/webm, image/jpeg, ...
	Width       int
	Height      int
	Duration    time.Duration
	// Open reads the bytes from offset on, for push uploads. Providers stream from it; they
	// never hold a whole video in memory.
	Open func(ctx context.Context, offset int64) (io.ReadCloser, error)
	// URL is a signed, expiring link to the bytes, for platforms that pull (Instagram, Threads,
	// TikTok PULL_FROM_URL).
	URL string
}

// Upload statuses of a destination (upload_status in the API).
const (
	StatusQueued      = "queued"
	StatusUploading   = "uploading"
	StatusProcessing  = "processing"
	StatusPublished   = "published"
	StatusSentToInbox = "sent_to_inbox"
	StatusFailed      = "failed"
	StatusCanceled    = "canceled"
)

// Outcome is where a destination stands after a step.
type Outcome struct {
	// Status is one of uploading, processing, published or sent_to_inbox.
	Status string
	// State is stored and handed back on the next Step: the platform's own references
	// (resumable session URI, container id, publish id, bytes confirmed, ...).
	State json.RawMessage
	// After asks the publisher to wait before the next step (processing polls); 0 = at once.
	After time.Duration
	// ExternalID and URL identify the published item once known.
	ExternalID string
	URL        string
	// Message is platform feedback worth showing even on success (e.g. TikTok inbox mode).
	Message string
}

// Done reports whether the destination needs no further step.
func (o Outcome) Done() bool {
	return o.Status == StatusPublished || o.Status == StatusSentToInbox
}

// PollDelay is the wait before a platform's processing status is read again after polls
// reads found it unfinished: first twice, then doubled every second read, capped at most.
// Doubling at every read lets a status that turns ready just after a read wait up to twice
// the elapsed time to be seen (a container downloaded in 0.14 s seen at 0.3 s); doubling
// every second read bounds that to about one and a half times, for a few more reads over a
// long wait (about 20 in the first five minutes from 100 ms, against a documented 200 calls
// an hour per Meta user). YouTube and LinkedIn double at every read instead: their quotas
// are counted per day.
func PollDelay(first, most time.Duration, polls int) time.Duration {
	return DoublingDelay(first, most, polls/2)
}

// DoublingDelay is first doubled n times, capped at most: YouTube's and LinkedIn's wait before
// processing read n+1 (see PollDelay).
func DoublingDelay(first, most time.Duration, n int) time.Duration {
	d := max(first, 0)
	for i := 0; i < n && 0 < d && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}

// Error categories (error_category in the API).
const (
	CategoryAuthExpired         = "auth_expired"
	CategoryMediaRejected       = "media_rejected"
	CategoryRateLimited         = "rate_limited"
	CategoryQuotaExceeded       = "quota_exceeded"
	CategoryUpstreamUnavailable = "upstream_unavailable"
	CategoryInvalidOptions      = "invalid_options"
	CategoryInternal            = "internal"
	// CategoryAPIVersion: the platform does not serve the version of its API that reelay
	// speaks (retired, or never released); the operator sets another one
	// (REELAY_<PLATFORM>_API_VERSION). No reconnect and no retry helps.
	CategoryAPIVersion = "api_version"
	// CategoryAppAccess: reelay's app on the platform lacks the access level the call needs
	// (Pinterest's Trial access creates no Pins in production); the fix is the app's, on the
	// platform's developer site, not the channel's, so the channel is not marked for reauth.
	CategoryAppAccess = "app_access"
)

// Error is a platform failure, classified. Message is the platform's own words, readable.
type Error struct {
	Category string
	// Transient errors are retried with back-off; permanent ones fail the destination at once.
	Transient bool
	// RetryAfter is the platform's Retry-After, when it gave one.
	RetryAfter time.Duration
	Message    string
	// Status is the HTTP status the platform answered, when there was one.
	Status int
}

func (e *Error) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("%s %s error (HTTP %d): %s", kind, e.Category, e.Status, e.Message)
}

// Transient returns a retryable error.
func Transient(category string, status int, retryAfter time.Duration, format string, args ...any) *Error {
	return &Error{Category: category, Transient: true, Status: status, RetryAfter: retryAfter, Message: fmt.Sprintf(format, args...)}
}

// Permanent returns an error that fails the destination at once.
func Permanent(category string, status int, format string, args ...any) *Error {
	return &Error{Category: category, Status: status, Message: fmt.Sprintf(format, args...)}
}

// AsError classifies any error: an *Error as it is, a context deadline or other failure as a
// transient upstream_unavailable error.
func AsError(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return &Error{Category: CategoryUpstreamUnavailable, Transient: true, Message: err.Error()}
}

// Identity is who a channel's credentials belong to on the platform: what connecting a channel
// stores (external_account_id, name, username, avatar_url). Providers that can tell implement
// Identify(ctx, baseURL, credentials) (Identity, error); a token-based channel is verified that
// way before it is stored, and an OAuth channel is named that way after the code exchange.
type Identity struct {
	ExternalID string
	Name       string
	Username   string
	AvatarURL  string
}

// Channel is a connected account as a provider sees it outside publishing: reading its
// items' figures and comments, answering comments.
type Channel struct {
	// Account is the channel's id on the platform (external_account_id).
	Account string
	// Credentials are the channel's platform credentials, unsealed.
	Credentials map[string]string
	// BaseURL is the platform API's base URL (the simulator's for sandbox channels).
	BaseURL string
}
