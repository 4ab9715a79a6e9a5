// Package sendonce is the at-most-once send of the providers whose platform takes no
// idempotency key for the request that posts (Telegram's sendVideo, Discord's webhook
// execute): the ticket that arms one send, the error kept in State until it is reported, and
// the streamed multipart POST that tells a send that cannot have posted from one whose outcome
// is unknown.
//
// Why a ticket. Once such a request may have reached the platform, nothing on reelay's side
// can tell whether it posted: repeating it may post the video twice. So a provider splits the
// work into Steps and stores State between them. The Step before the send arms it: it issues
// a ticket, a random value that goes both into the State it returns (Attempt.Ticket) and into
// the provider's memory (Tickets). The send Step takes the ticket out of memory before it
// sends. Only the process that armed a State, and only once, finds its ticket; every other
// Step with that State (after a crash or a restart during the request, or the same State
// stepped again by the publisher) finds none, and must not send blindly: it fails permanently
// asking the user to look at the channel (Telegram, a Discord webhook), or finds out by other
// means what became of the send (a Discord bot reads its channel).
//
// Failures known not to have posted do not go that way. Post returns them apart: the
// platform's own error answer, a request that never got a connection, and media that failed
// mid-body (a *SourceError: the body was cut short, so the platform cannot have accepted it).
// The send Step first sends again at once, a few times (Attempt.Send); what still fails it
// stores as Attempt.Pending with a fresh ticket (Attempt.Fail);
// the next Step in this process reports it to the publisher once (Attempt.Report), which
// retries transient errors with back-off, and the Step after that arms a new send. A failure
// whose outcome is unknown (an *UnknownError: a connection was made and no answer came back,
// or the context ended during the send, see Unknown) is reported as a permanent error instead.
package sendonce

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// ticketLife is how long an unused ticket stays armed: one that old belongs to a destination
// that went elsewhere (another process took it, or it was cancelled).
const ticketLife = time.Hour

// Tickets are the sends armed in this process. The zero value is ready to use.
type Tickets struct {
	mu    sync.Mutex
	armed map[string]time.Time
}

// Issue arms a new ticket at now, dropping tickets older than an hour (or more than an hour
// ahead of now: a clock that went back).
func (t *Tickets) Issue(now time.Time) string {
	ticket := randomHex(16)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.armed == nil {
		t.armed = map[string]time.Time{}
	}
	for k, at := range t.armed {
		if now.Sub(at) > ticketLife || at.After(now.Add(ticketLife)) {
			delete(t.armed, k)
		}
	}
	t.armed[ticket] = now
	return ticket
}

// Take consumes a ticket: it reports whether the ticket was armed in this process and not yet
// taken.
func (t *Tickets) Take(ticket string) bool {
	if ticket == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.armed[ticket]
	delete(t.armed, ticket)
	return ok
}

// Attempt is the part of a provider's State that the at-most-once send keeps. Providers embed
// it, so its fields sit in the State's JSON beside the provider's own.
type Attempt struct {
	// Ticket arms one send (the provider's sending phase) or one report of Pending.
	Ticket string `json:"ticket,omitempty"`
	// Sends counts the requests made that could post.
	Sends int `json:"sends,omitempty"`
	// ArmedAt is when the last send was armed.
	ArmedAt time.Time `json:"armed_at,omitzero"`
	// Pending is a failure known not to have posted, to be reported by the next Step.
	Pending *SavedError `json:"pending,omitempty"`
}

// Arm issues the ticket of a new send.
func (a *Attempt) Arm(t *Tickets, now time.Time) {
	a.Ticket, a.ArmedAt = t.Issue(now), now
}

// Fail keeps e, the error of a send that did not post, with a fresh ticket for its report.
// The provider moves its State back to the phase that arms a send.
func (a *Attempt) Fail(t *Tickets, now time.Time, e *provider.Error) {
	a.Pending, a.Ticket = Save(e), t.Issue(now)
}

// Report returns the pending error when this is the Step that reports it (its ticket is armed
// in this process); a transient one becomes permanent once maxSends sends were made. Otherwise
// it clears Pending and returns nil: the error was reported, and the caller arms a new send.
func (a *Attempt) Report(t *Tickets, maxSends int) *provider.Error {
	if a.Pending != nil && t.Take(a.Ticket) {
		e := a.Pending.Err()
		if e.Transient && a.Sends >= maxSends {
			e.Transient = false
			e.Message = fmt.Sprintf("%s (gave up after %d attempts)", e.Message, a.Sends)
		}
		return e
	}
	a.Pending = nil
	return nil
}

// sendRounds is how many Steps' worth of sends DefaultMaxSends allows.
const sendRounds = 6

// DefaultMaxSends is the bound on a destination's sends that providers take when none is
// configured: six Steps of sends repeated with r (Send).
func DefaultMaxSends(r provider.Repeat) int { return sendRounds * r.MaxCalls() }

// Send makes the armed send with r, counting each request in a.Sends. A failure known not to
// have posted (NotPosted: the platform's own error answer, no connection made, the media cut
// mid-body) is sent again at once while r allows it and a.Sends stays under maxSends: nothing
// was posted, so a second request cannot post twice, and this Step holds the send's ticket. A
// failure whose outcome is unknown (Unknown) is never sent again. It returns send's last error
// as send returned it; the caller reads it with Unknown and NotPosted as before.
func (a *Attempt) Send(ctx context.Context, r provider.Repeat, maxSends int, platform string, classify func(error) *provider.Error, send func() error) error {
	return r.Do(ctx, func(err error) *provider.Error {
		if Unknown(ctx, err) || a.Sends >= maxSends {
			return provider.Permanent(provider.CategoryInternal, 0, "%v", err) // ends the tries
		}
		return NotPosted(err, platform, classify)
	}, func() error {
		a.Sends++
		return send()
	})
}

// SavedError is a *provider.Error kept in State until it is reported.
type SavedError struct {
	Category     string `json:"category"`
	Transient    bool   `json:"transient"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	Message      string `json:"message"`
	Status       int    `json:"status,omitempty"`
}

// Save keeps e for State.
func Save(e *provider.Error) *SavedError {
	return &SavedError{Category: e.Category, Transient: e.Transient, RetryAfterMS: e.RetryAfter.Milliseconds(), Message: e.Message, Status: e.Status}
}

// Err is the kept error (RetryAfter to the millisecond).
func (s *SavedError) Err() *provider.Error {
	return &provider.Error{Category: s.Category, Transient: s.Transient, RetryAfter: time.Duration(s.RetryAfterMS) * time.Millisecond, Message: s.Message, Status: s.Status}
}

// Unknown reports whether a failed send may have posted: no answer came after a connection
// was made (an *UnknownError), or ctx ended while it ran.
func Unknown(ctx context.Context, err error) bool {
	var ue *UnknownError
	return errors.As(err, &ue) || ctx.Err() != nil
}

// NotPosted is the error to keep for a send that failed without posting: for media that
// failed mid-body (a *SourceError) a transient upstream_unavailable error that names the
// platform, else classify(err).
func NotPosted(err error, platform string, classify func(error) *provider.Error) *provider.Error {
	var se *SourceError
	if errors.As(err, &se) {
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "reading the video for %s failed mid-upload: %v", platform, se.Err)
	}
	return classify(err)
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Result is what a send that posted leaves in State for the outcome: the message's id on the
// platform, its link, and a note for the user (a video posted as a document).
type Result struct {
	ExternalID string `json:"external_id"`
	URL        string `json:"url,omitempty"`
	Message    string `json:"message,omitempty"`
}

// Outcome is the published outcome of a destination whose State st holds r: st is stored with
// it, so that a Step of the done State answers the same.
func (r *Result) Outcome(st any) provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: provider.StatusPublished, State: raw, ExternalID: r.ExternalID, URL: r.URL, Message: r.Message}
}
