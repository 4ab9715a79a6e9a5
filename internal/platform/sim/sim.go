// Package sim is the core of the platforms' simulators: what every simulator shares. Each
// simulator is a package of its own beside its platform's provider
// (internal/platform/<name>/<name>sim, listed in sim/simset) that speaks its platform's wire
// protocol (paths, fields, status values, error shapes, processing delays) and is exactly as
// strict as the platform's documentation: a simulator that accepts what the platform would
// refuse is a bug. Sandbox channels publish to them, mounted on the server at
// /sandbox/{platform}/, and every test uses them.
//
// The core holds accounts and their misbehaviour (this file), the record of what was received
// (served as _introspect), the State simulators keep between requests (state.go), the spool of
// an upload's bytes (spool.go), the simulated OAuth consent (oauth.go) and the audience of
// published items (audience.go).
package sim

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/platform/sim/simstate"
)

// Behavior is how a sandbox account's platform misbehaves (docs/CONTRACT.md, Sandbox channels).
type Behavior struct {
	// ProcessingMS is how long the platform takes to process an upload; < 0 uses the
	// simulator's default.
	ProcessingMS int `json:"processing_ms,omitempty"`
	// Fail is none, reject (the platform refuses the video: permanent, with the platform's
	// message), unavailable (every call 5xx), auth (token rejected), rate_limit (429 with
	// Retry-After) or flaky (a share FailRate of calls fail transiently).
	Fail     string  `json:"fail,omitempty"`
	FailRate float64 `json:"fail_rate,omitempty"`
	// DailyQuotaUnits replaces the YouTube simulator's general daily quota of units for this
	// account, the bucket of every method but videos.insert (nil: the simulator's own, 10,000;
	// negative: no quota).
	DailyQuotaUnits *int `json:"daily_quota_units,omitempty"`
	// AppAccess is the access level the platform granted reelay's app, where the platform
	// grades apps and a grade refuses what a channel asks: Pinterest's "trial" (Trial access
	// creates no Pins in production), TikTok's "audited" (an app TikTok has not audited, as
	// every new one, posts only SELF_ONLY:
	// developers.tiktok.com/doc/content-sharing-guidelines/). "" is Pinterest's Standard
	// access and a TikTok app not yet audited.
	AppAccess string `json:"app_access,omitempty"`
	// BarePDS makes the Bluesky simulator, for this account, a self-hosted PDS with neither an
	// AppView nor a video service.
	BarePDS bool `json:"bare_pds,omitempty"`
}

// App access levels (Behavior.AppAccess).
const (
	AppAccessTrial   = "trial"   // Pinterest
	AppAccessAudited = "audited" // TikTok
)

// Failure kinds.
const (
	FailNone        = "none"
	FailReject      = "reject"
	FailUnavailable = "unavailable"
	FailAuth        = "auth"
	FailRateLimit   = "rate_limit"
	FailFlaky       = "flaky"
)

// Account is a simulated platform account.
type Account struct {
	// ID is the account's id on the platform (reelay's external_account_id).
	ID       string
	Username string
	Behavior Behavior
	// App names the app on the platform the account granted its tokens to, for limits a
	// platform counts per app rather than per account (TikTok's cap on the creators an
	// unaudited app lets post). The accounts of one simulator share one app unless it is
	// set: the server's built-in sandbox sets the reelay account's id, so that its tenants
	// never share such a limit.
	App string
}

// Accounts resolves the access token a request presents to the account it belongs to.
type Accounts interface {
	Resolve(ctx context.Context, token string) (Account, bool)
}

// StaticAccounts maps tokens to accounts; tests use it.
type StaticAccounts map[string]Account

// Resolve implements Accounts.
func (s StaticAccounts) Resolve(_ context.Context, token string) (Account, bool) {
	a, ok := s[token]
	return a, ok
}

// CallFault decides whether one API call fails because of the account's behavior, and how:
// "" (no fault), FailUnavailable, FailAuth or FailRateLimit. A flaky account fails a share of
// calls as unavailable. Reject is not a call fault: each simulator refuses the video where its
// platform would (usually at processing).
func CallFault(b Behavior, rnd func() float64) string {
	switch b.Fail {
	case FailUnavailable, FailAuth, FailRateLimit:
		return b.Fail
	case FailFlaky:
		rate := b.FailRate
		if rate == 0 {
			rate = 0.5
		}
		if rnd() < rate {
			return FailUnavailable
		}
	}
	return ""
}

// Upload is one complete upload a simulator received.
type Upload struct {
	Account string `json:"account"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// Published is one item a simulator published.
type Published struct {
	Account string `json:"account"`
	ID      string `json:"id"`
	URL     string `json:"url"`
	SHA256  string `json:"sha256"`
	Text    string `json:"text"`
}

// Reply is one reply a simulator received.
type Reply struct {
	Account   string `json:"account"`
	CommentID string `json:"comment_id"`
	Text      string `json:"text"`
}

// Introspection is what GET /sandbox/{platform}/_introspect answers.
type Introspection struct {
	Uploads   []Upload    `json:"uploads"`
	Published []Published `json:"published"`
	Replies   []Reply     `json:"replies"`
}

// Recorder reads and records what a simulator received, as entries of a State. An upload
// repeated after a crash is recorded twice: that is how tests prove nothing was uploaded twice.
// The zero Recorder keeps its entries in memory, in the State it gives the simulators whose
// Config names no other (Config.Normalize).
type Recorder struct {
	mu       sync.Mutex
	state    State
	platform string
}

// NewRecorder returns the Recorder of what the simulator of platform received, kept in state.
func NewRecorder(state State, platform string) *Recorder {
	return &Recorder{state: state, platform: platform}
}

// stateOr is the recorder's State, a new one in memory with the clock now if it has none.
func (r *Recorder) stateOr(now func() time.Time) State {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == nil {
		r.state = NewMemoryState(now)
	}
	return r.state
}

// record appends an entry in a transaction of its own, for a stand-in simulator that keeps no
// records (the tests'); the simulators record what they receive with RecordTx, in the
// transaction of the change it belongs to. A failing State loses the entry rather than the
// request.
func (r *Recorder) record(v any) {
	_ = r.stateOr(nil).Update(context.Background(), func(tx Tx) error { return RecordTx(tx, r.platform, v) })
}

// RecordUpload notes a complete upload.
func (r *Recorder) RecordUpload(u Upload) { r.record(u) }

// RecordPublished notes a published item.
func (r *Recorder) RecordPublished(p Published) { r.record(p) }

// RecordReply notes a reply.
func (r *Recorder) RecordReply(rp Reply) { r.record(rp) }

// Of returns what was received for accounts (nil: every account), oldest first.
func (r *Recorder) Of(ctx context.Context, accounts []string) (Introspection, error) {
	entries, err := r.stateOr(nil).Entries(ctx, r.platform, accounts)
	if err != nil {
		return Introspection{}, err
	}
	out := Introspection{Uploads: []Upload{}, Published: []Published{}, Replies: []Reply{}}
	for _, e := range entries {
		switch e.Kind {
		case simstate.EntryUpload:
			var u Upload
			err = json.Unmarshal(e.Data, &u)
			out.Uploads = append(out.Uploads, u)
		case simstate.EntryPublished:
			var p Published
			err = json.Unmarshal(e.Data, &p)
			out.Published = append(out.Published, p)
		case simstate.EntryReply:
			var rp Reply
			err = json.Unmarshal(e.Data, &rp)
			out.Replies = append(out.Replies, rp)
		}
		if err != nil {
			return Introspection{}, fmt.Errorf("sim: entry of %s: %w", e.Platform, err)
		}
	}
	return out, nil
}

// Snapshot returns what was received for the accounts keep accepts (nil keeps all). It is for
// tests, whose recorders are in memory: an error of the State panics.
func (r *Recorder) Snapshot(keep func(account string) bool) Introspection {
	all, err := r.Of(context.Background(), nil)
	if err != nil {
		panic(err)
	}
	out := Introspection{Uploads: []Upload{}, Published: []Published{}, Replies: []Reply{}}
	for _, u := range all.Uploads {
		if keep == nil || keep(u.Account) {
			out.Uploads = append(out.Uploads, u)
		}
	}
	for _, p := range all.Published {
		if keep == nil || keep(p.Account) {
			out.Published = append(out.Published, p)
		}
	}
	for _, rp := range all.Replies {
		if keep == nil || keep(rp.Account) {
			out.Replies = append(out.Replies, rp)
		}
	}
	return out
}

// Config is what every simulator is built with.
type Config struct {
	// BaseURL is where the simulator is reachable, without a trailing slash (e.g.
	// http://127.0.0.1:8080/sandbox/youtube); URLs it hands out (upload URLs, permalinks of
	// its API) start with it.
	BaseURL  string
	Accounts Accounts
	Recorder *Recorder
	// State keeps the simulator's records; the Recorder's (in memory unless it was made with
	// NewRecorder) when nil.
	State State
	// Blobs keeps the bytes of uploads in progress, below "sandbox/" (BlobPrefix); a bucket
	// in memory when nil.
	Blobs *blob.Bucket
	// Now is the simulator's clock (time.Now when nil); tests move it to skip processing time.
	Now func() time.Time
	// Rand draws flaky failures (math/rand/v2's Float64 when nil).
	Rand func() float64
	// PullClient fetches media for pull-based uploads (Instagram video_url, TikTok
	// PULL_FROM_URL); a client with its own connection pool when nil.
	PullClient *http.Client
}

// Normalize fills the defaults of c.
func (c *Config) Normalize() {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Recorder == nil {
		c.Recorder = &Recorder{}
	}
	if c.State == nil {
		c.State = c.Recorder.stateOr(c.Now)
	}
	if c.Blobs == nil {
		c.Blobs = memblob.OpenBucket(nil)
	}
	if c.PullClient == nil {
		// A pool of its own: http.DefaultTransport's idle connections are anyone's to close.
		c.PullClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
}

// What follows is shared by the simulators.

// drainLimit bounds what Drain reads: more than any simulator's single request body (TikTok's
// largest chunk, 128 MB, is the largest).
const drainLimit = 128_000_000 + 1

// PruneBefore drops the times at or before cutoff from a sorted list (rate-limit windows).
func PruneBefore(times []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(times) && !times[i].After(cutoff) {
		i++
	}
	return times[i:]
}

// UploadError answers a storage host's plain-text error (upload URLs are not the JSON API).
func UploadError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// Drain reads what is left of a request body (at most drainLimit), so the connection can be
// reused.
func Drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainLimit))
	_ = body.Close()
}

func RandomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = cryptorand.Read(b)
	return b
}

func RandomHex(n int) string { return hex.EncodeToString(RandomBytes(n)) }

// RandomDigits is n random decimal digits, the first not 0 (numeric ids).
func RandomDigits(n int) string {
	b := RandomBytes(n)
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	if b[0] == '0' {
		b[0] = '1'
	}
	return string(b)
}

// ParseDigits parses a non-negative decimal number written with digits only (no sign, no
// spaces), as the platforms' headers and parameters write them.
func ParseDigits(s string) (int64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not a number")
	}
	return strconv.ParseInt(s, 10, 64)
}
