// Package blueskysim is the simulator of Bluesky's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package blueskysim

// Bluesky (AT Protocol) simulator: one handler serving an account's PDS (com.atproto.server.*,
// com.atproto.repo.*, app.bsky.actor.getProfile) and the video service (app.bsky.video.*), both
// below /xrpc/ as XRPC does; the method names do not collide.
//
// Sources: docs.bsky.app (tutorials/video, advanced-guides/rate-limits, the app.bsky.video.*
// reference pages), the atproto lexicons (app.bsky.feed.post, app.bsky.richtext.facet,
// app.bsky.embed.video), the PDS's auth verifier, and bluesky-social/atproto issues #3026 and
// #3097 (the video service's actual answer shapes) and #3718 (createRecord on an existing key),
// all read through the search tool. What the sources leave open, and how it is decided here:
//
//   - Accounts: the app password is resolved with Config.Accounts; the identifier must be the
//     account's handle (BlueskySandboxHandle of its id) or DID (DID). A wrong one is 401
//     AuthenticationRequired "Invalid identifier or password". createSession is limited per
//     identifier to 30 calls per 5 minutes and 300 per day (429 RateLimitExceeded with
//     RateLimit-Limit/Remaining/Reset/Policy headers; Reset is Unix seconds). The 5 minutes are
//     counted in each process (a documented deviation: each allows them); the day in the State,
//     for the identifiers of accounts that signed in once (the calls of an identifier no
//     account has, which anyone can make up, count in the 5 minutes only, so that they cannot
//     grow the State).
//   - Tokens are JWT-shaped and HMAC-signed with a key of the simulator's own, kept in the
//     State, so that every process and the one after a restart take them; they carry the
//     account's app password sealed under the same key, which each call resolves again with
//     Config.Accounts, so no session is stored. Access tokens last 2 hours, refresh tokens 60
//     days, both by Config.Now. As the PDS does: an expired access token is 400 ExpiredToken
//     "Token has expired", a bad one 400 InvalidToken, none 401 AuthenticationRequired;
//     refreshSession rotates the refresh token and refuses a used one (kept as used until it
//     would have expired).
//   - getServiceAuth mints service tokens (iss = the account's DID, aud, lxm, exp ≤ 1 hour; a
//     token without lxm ≤ 1 minute). The video service takes uploadVideo tokens whose aud is the
//     PDS's did:web (this simulator's host) and lxm com.atproto.repo.uploadBlob, and
//     getUploadLimits tokens with its own did:web (the same host here) and that method's lxm; a
//     wrong audience is 401 with the video service's wording.
//   - uploadVideo answers the bare jobStatus {did, jobId, state: JOB_STATE_CREATED} (not the
//     lexicon's {"jobStatus":…}, as the live service does); the same bytes from the same
//     account again, while their job has not failed, are 409 {did, error: already_exists,
//     jobId, message: "Video already processed", state}. Only uploads that start a job are
//     recorded. The job is JOB_STATE_ENCODING (with progress) for Behavior.ProcessingMS
//     (default 3 s), then JOB_STATE_COMPLETED with the blob, which is then on the PDS, or
//     JOB_STATE_FAILED {error: "video processing error for job: …", message: "Failed to process
//     video"} for a video that media.Probe cannot read as MP4, MOV or WebM, one over 3 minutes,
//     and every video of an account with Behavior reject. getJobStatus needs no token.
//   - The blob the job answers has the CID of the uploaded bytes (raw codec, SHA-256) and their
//     size: the live service stores a re-encoded file, whose CID and size differ.
//   - Limits: 100,000,000 bytes per video (413 PayloadTooLarge beyond; the lexicon's maxSize in
//     2025, raised to 300 MB in 2026, see Options.MaxVideoBytes), 3 minutes, 25 videos or
//     10 GB per account and rolling day (getUploadLimits reports what is left; an upload beyond
//     is 400 InvalidRequest with this simulator's wording). An account marked EmailUnconfirmed
//     cannot upload: getUploadLimits says canUpload false with error unconfirmed_email, and
//     uploadVideo answers {"jobStatus":{"error":"unconfirmed_email",…}} with 400.
//   - uploadBlob takes up to MaxVideoBytes, records the upload and answers {blob}; with
//     Behavior reject it refuses a video with 400 InvalidRequest (the live PDS stores anything
//     and the video fails later; the simulator refuses where a test can see it).
//   - An account with Behavior.BarePDS is on a self-hosted PDS with neither AppView nor video
//     service, as the reference PDS (@atproto/pds) runs without PDS_BSKY_APP_VIEW_URL: every
//     app.bsky.* call its token makes (getProfile, getPosts, the video methods) answers 400
//     InvalidRequest "No service configured for <method>" (packages/pds/src/pipethrough.ts),
//     and uploadBlob takes at most Options.BarePDSBlobLimit, 5 MiB as PDS_BLOB_UPLOAD_LIMIT's
//     default (packages/pds/src/config/config.ts), answering a larger one 413 PayloadTooLarge
//     "request entity too large", as its XRPC server does (packages/xrpc-server/src/util.ts).
//   - createRecord validates app.bsky.feed.post as the lexicon says (text ≤ 300 graphemes and
//     ≤ 3000 UTF-8 bytes, createdAt a datetime, ≤ 3 langs, facets with byteSlice ≥ 0 and
//     tag/link/mention features, tag ≤ 64 graphemes / 640 bytes) and the video embed (video/mp4
//     blob ≤ MaxVideoBytes that this account uploaded, aspectRatio ≥ 1), with the PDS's message
//     form "Invalid app.bsky.feed.post record: …". Stricter than the live PDS, so that client
//     bugs show: a facet must lie within the text on UTF-8 boundaries (the AppView silently drops
//     others), only posts with video embeds are accepted, except replies (a reply {root,
//     parent} of strong references needs no embed, but both must be posts the simulator knows,
//     with their CIDs, and root must be the parent's thread root; see audience.go), and
//     rkey must be a TID. A record key already used is 500 InternalServerError, as the live PDS
//     answers (#3718). A post is recorded as published, a reply as a reply to its parent.
//   - Call faults use XRPC shapes: unavailable → 503 NotEnoughResources, auth → 400 InvalidToken
//     on authenticated calls and 401 AuthenticationRequired on createSession, rate_limit → 429
//     RateLimitExceeded with RateLimit-Reset one second ahead.
//
// Reads of figures and threads (app.bsky.feed.getPosts, getPostThread) are in
// audience.go.
//
// What the PDS and the video service keep is in Config.State (state.go), so that a restart or
// another process serving them loses none of it: the accounts that signed in (getRecord and
// getProfile know a repository's owner as of its last sign-in), the day's sign-ins, the used
// refresh tokens, the jobs and which job each account's video has, the blobs (a job's from when
// it completes, as its processing is its upload's time plus its delay), the records and which
// records answer each post, and each account's videos of the day. Unreferenced blobs are kept
// until retention: Bluesky deletes them "if not referenced within a time window (eg, minutes)"
// (com.atproto.repo.uploadBlob) without saying how long. A failure of the State answers 500
// InternalServerError, as XRPC services answer their own errors.
//
// Not reproduced: other collections and embeds, deleteRecord, putRecord, applyWrites, handle
// resolution, mentions' DIDs being real, the write-points rate limit, captions.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/secret"
)

// Options tunes the simulator; the zero value is Bluesky's documented behaviour.
type Options struct {
	// Profiles overrides what getProfile and getUploadLimits know of an account, by account ID.
	Profiles map[string]Profile
	// DefaultProcessing is a video job's duration when Behavior.ProcessingMS < 0 (0: 3 s).
	DefaultProcessing time.Duration
	// SessionsPer5Min and SessionsPerDay limit createSession per identifier (0: 30 and 300).
	SessionsPer5Min, SessionsPerDay int
	// AccessTTL and RefreshTTL are the tokens' lifetimes (0: 2 hours and 60 days).
	AccessTTL, RefreshTTL time.Duration
	// MaxVideoBytes is the largest video (0: 100,000,000), MaxVideoDuration the longest
	// (0: 3 minutes).
	MaxVideoBytes    int64
	MaxVideoDuration time.Duration
	// VideosPerDay and VideoBytesPerDay are the daily allowance (0: 25 and 10 GB).
	VideosPerDay     int
	VideoBytesPerDay int64
	// NoVideoService makes app.bsky.video.* unknown methods (501), as on a network without a
	// video service.
	NoVideoService bool
	// BarePDSBlobLimit is the largest blob uploadBlob takes from an account whose PDS is bare
	// (0: 5 MiB, the reference PDS's default PDS_BLOB_UPLOAD_LIMIT).
	BarePDSBlobLimit int64
}

// Profile is what the simulator knows of an account beyond its ID.
type Profile struct {
	DisplayName string
	Avatar      string
	// EmailUnconfirmed accounts may not upload video.
	EmailUnconfirmed bool
}

// Post is a record the simulator holds.
type Post struct {
	Account string
	URI     string
	CID     string
	Rkey    string
	Text    string
	// Record is the record as it was sent.
	Record json.RawMessage
	// SHA256 is the hash of the video the record embeds ("" for a reply without video).
	SHA256 string
	// At is when the record was created, on the simulator's clock: a post's audience counts
	// from then.
	At time.Time
	// ReplyRoot and ReplyParent are the URIs the record's reply refers to ("" for a post that
	// answers none: an item, which has an audience).
	ReplyRoot, ReplyParent string
}

// DID is the DID of a simulated account: did:plc: and 24 base32 characters derived from
// the account id.
func DID(account string) string {
	h := sha256.Sum256([]byte("reelay-sim-bluesky|" + account))
	return "did:plc:" + strings.ToLower(base32.StdEncoding.EncodeToString(h[:]))[:24]
}

// Sim simulates a PDS and the video service. It implements http.Handler. Its accounts,
// jobs, blobs, records, allowances and the day's sign-ins are records of Config.State; the
// tokens it issues verify themselves with a key kept there.
type Sim struct {
	cfg  sim.Config
	opts Options
	// did is this service's did:web (PDS and video service alike).
	did string

	mu sync.Mutex
	// keys are the token keys read from the State, at keysRead on the wall clock.
	keys     *bskyKeys
	keysRead time.Time
	// recent is the createSession calls of the last 5 minutes by identifier, this process's.
	recent map[string][]time.Time
}

// The kinds of the Bluesky simulator's records.
const (
	// bskyKeyKind is the key the simulator's tokens are signed with and the app passwords in
	// them sealed with (bskyKeyRecord): one, for every process.
	bskyKeyKind = "key"
	// bskyAccountKind is an account that signed in (its Account: id, username, behaviour), by
	// DID, and bskyHandleKind the same account's DID by lower-case handle: the repositories
	// getRecord and getProfile know.
	bskyAccountKind = "account"
	bskyHandleKind  = "handle"
	// bskyLoginsKind is the createSession calls of the last day ([]time.Time) of an
	// identifier of an account the simulator knows.
	bskyLoginsKind = "logins"
	// bskyRefreshedKind is a refresh token already used, by its jti, until it expires.
	bskyRefreshedKind = "refreshed"
	// bskyJobKind is a video job (bskyJob), and bskyVideoKind the id of the job of an
	// account's video, by DID and SHA-256 (how the service knows a video sent again). The video
	// service does not say how long it keeps them: until retention, as the kinds below whose
	// comment names no end.
	bskyJobKind   = "job"
	bskyVideoKind = "video"
	// bskyBlobKind is a blob of an account's repository (bskyBlob), by DID and CID.
	bskyBlobKind = "blob"
	// bskyPostKind is a record (bskyPost), by at:// URI, and bskyRepliesKind the URIs of the
	// records answering a post, by its URI.
	bskyPostKind    = "post"
	bskyRepliesKind = "replies"
	// bskyUploadsKind is an account's videos accepted in the last day ([]bskyUploaded), by
	// DID: the daily allowance.
	bskyUploadsKind = "uploads"
)

func bskyKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Bluesky, Kind: kind, ID: id} }

type bskyJob struct {
	ID       string        `json:"id"`
	Account  sim.Account   `json:"account"`
	DID      string        `json:"did"`
	SHA      string        `json:"sha"`
	Size     int64         `json:"size"`
	Created  time.Time     `json:"created"`
	Duration time.Duration `json:"duration"`
	Verdict  string        `json:"verdict,omitempty"` // "" passes; otherwise the failure's error text
}

// completed reports whether the job's processing is over at now.
func (j bskyJob) completed(now time.Time) bool { return !now.Before(j.Created.Add(j.Duration)) }

type bskyBlob struct {
	CID  string `json:"cid"`
	Mime string `json:"mime"`
	Size int64  `json:"size"`
	SHA  string `json:"sha"`
	// Ready is when the blob is in the repository: at once for uploadBlob, when its job
	// completes for the video service.
	Ready time.Time `json:"ready"`
}

type bskyUploaded struct {
	At   time.Time `json:"at"`
	Size int64     `json:"size"`
}

// bskyPost is a record as the simulator keeps it.
type bskyPost struct {
	Post
	// Username is the author's (its display name).
	Username string `json:"username"`
}

func (p *bskyPost) author() sim.Account { return sim.Account{ID: p.Account, Username: p.Username} }

// New returns the Bluesky simulator with Bluesky's documented behaviour.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the Bluesky simulator with options.
func NewSim(cfg sim.Config, opts Options) *Sim {
	cfg.Normalize()
	if opts.DefaultProcessing <= 0 {
		opts.DefaultProcessing = 3 * time.Second
	}
	if opts.SessionsPer5Min <= 0 {
		opts.SessionsPer5Min = 30
	}
	if opts.SessionsPerDay <= 0 {
		opts.SessionsPerDay = 300
	}
	if opts.AccessTTL <= 0 {
		opts.AccessTTL = 2 * time.Hour
	}
	if opts.RefreshTTL <= 0 {
		opts.RefreshTTL = 60 * 24 * time.Hour
	}
	if opts.MaxVideoBytes <= 0 {
		opts.MaxVideoBytes = 100_000_000
	}
	if opts.MaxVideoDuration <= 0 {
		opts.MaxVideoDuration = 3 * time.Minute
	}
	if opts.VideosPerDay <= 0 {
		opts.VideosPerDay = 25
	}
	if opts.VideoBytesPerDay <= 0 {
		opts.VideoBytesPerDay = 10_000_000_000
	}
	if opts.BarePDSBlobLimit <= 0 {
		opts.BarePDSBlobLimit = 5 << 20
	}
	host := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		host = u.Host
	}
	return &Sim{
		cfg: cfg, opts: opts,
		did:    "did:web:" + strings.ReplaceAll(host, ":", "%3A"),
		recent: map[string][]time.Time{},
	}
}

// Recorder returns the record of what the simulator received.
func (b *Sim) Recorder() *sim.Recorder { return b.cfg.Recorder }

// ServiceDID is the did:web of the simulated PDS and video service.
func (b *Sim) ServiceDID() string { return b.did }

// Posts lists the records of an account, oldest first. It is for tests: an error of the State
// panics.
func (b *Sim) Posts(accountID string) []Post {
	all, err := sim.ListJSON[bskyPost](context.Background(), b.cfg.State, bskyKey(bskyPostKind, ""), accountID)
	if err != nil {
		panic(err)
	}
	out := make([]Post, len(all))
	for i, p := range all {
		out[i] = p.Post
	}
	return out
}

// ServeHTTP implements http.Handler.
func (b *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	nsid, ok := strings.CutPrefix(r.URL.Path, "/xrpc/")
	if !ok {
		bskyError(w, http.StatusNotFound, "NotFound", "Not Found")
		return
	}
	type route struct {
		method string
		h      func(http.ResponseWriter, *http.Request)
		video  bool
	}
	routes := map[string]route{
		"com.atproto.server.createSession":  {http.MethodPost, b.createSession, false},
		"com.atproto.server.refreshSession": {http.MethodPost, b.refreshSession, false},
		"com.atproto.server.getServiceAuth": {http.MethodGet, b.getServiceAuth, false},
		"com.atproto.repo.uploadBlob":       {http.MethodPost, b.uploadBlob, false},
		"com.atproto.repo.createRecord":     {http.MethodPost, b.createRecord, false},
		"com.atproto.repo.getRecord":        {http.MethodGet, b.getRecord, false},
		"app.bsky.actor.getProfile":         {http.MethodGet, b.getProfile, false},
		"app.bsky.feed.getPosts":            {http.MethodGet, b.getPosts, false},
		"app.bsky.feed.getPostThread":       {http.MethodGet, b.getPostThread, false},
		"app.bsky.video.getUploadLimits":    {http.MethodGet, b.getUploadLimits, true},
		"app.bsky.video.uploadVideo":        {http.MethodPost, b.uploadVideo, true},
		"app.bsky.video.getJobStatus":       {http.MethodGet, b.getJobStatus, true},
	}
	if strings.HasPrefix(nsid, "app.bsky.") && b.barePDS(r) {
		// What the reference PDS answers a method it would proxy to a service it has none of
		// (packages/pds/src/pipethrough.ts, github.com/bluesky-social/atproto).
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "No service configured for "+nsid)
		return
	}
	rt, ok := routes[nsid]
	if !ok || (rt.video && b.opts.NoVideoService) {
		bskyError(w, http.StatusNotImplemented, "MethodNotImplemented", "Method Not Implemented")
		return
	}
	if r.Method != rt.method {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("Incorrect HTTP method (%s) expected %s", r.Method, rt.method))
		return
	}
	rt.h(w, r)
}

// barePDS reports whether a request's token, an access or a service token that is valid and
// not expired, is an account's whose PDS is bare (Behavior.BarePDS). Any other request goes to
// its method, which answers a missing or bad token as the PDS does before anything else.
func (b *Sim) barePDS(r *http.Request) bool {
	token, ok := bearer(r)
	if !ok {
		return false
	}
	keys, err := b.tokenKeys(r.Context())
	if err != nil {
		return false
	}
	c, expired, ok := keys.parse(token, b.cfg.Now())
	if !ok || expired {
		return false
	}
	did := c.Sub
	if did == "" {
		did = c.Iss
	}
	acc, ok := b.resolve(r.Context(), keys, c, did)
	return ok && acc.Behavior.BarePDS
}

// bskyError writes an XRPC error.
func bskyError(w http.ResponseWriter, status int, name, msg string) {
	bskyJSON(w, status, map[string]string{"error": name, "message": msg})
}

func bskyJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// bskyRateLimited answers 429 with the rate-limit headers Bluesky's services send.
func bskyRateLimited(w http.ResponseWriter, limit int, window time.Duration, reset time.Time) {
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", "0")
	h.Set("RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", limit, int(window/time.Second)))
	bskyError(w, http.StatusTooManyRequests, "RateLimitExceeded", "Rate Limit Exceeded")
}

// bskyFault answers the account's call fault, if any; onAuth writes the auth fault's answer on
// this call. It reports whether it answered.
func (b *Sim) bskyFault(w http.ResponseWriter, acc sim.Account, onAuth func()) bool {
	return b.answerFault(w, sim.CallFault(acc.Behavior, b.cfg.Rand), onAuth)
}

// answerFault answers a call fault drawn by CallFault, as bskyFault does.
func (b *Sim) answerFault(w http.ResponseWriter, fault string, onAuth func()) bool {
	switch fault {
	case sim.FailUnavailable:
		bskyError(w, http.StatusServiceUnavailable, "NotEnoughResources", "Service Unavailable")
	case sim.FailAuth:
		onAuth()
	case sim.FailRateLimit:
		bskyRateLimited(w, 3000, 5*time.Minute, b.cfg.Now().Add(time.Second))
	default:
		return false
	}
	return true
}

// bskyInternal answers a failure of the simulator's State as XRPC services answer their own
// unhandled errors.
func bskyInternal(w http.ResponseWriter) {
	bskyError(w, http.StatusInternalServerError, "InternalServerError", "Internal Server Error")
}

// JWTs. The tokens the simulator issues verify themselves, as the PDS's do: signed with a key
// every process reads from the State, they carry the account's app password sealed under it,
// which each call resolves again through Config.Accounts (so that a revoked password, or an
// account's changed behaviour, shows at once). Nothing of a session is stored but the refresh
// tokens already used.

// How long a process uses the key it read before reading it again, and how old the key's
// record may grow before a process writes it again: written weekly, it never reaches
// housekeeping's retention while the sandbox serves Bluesky.
const (
	bskyKeyReread  = 10 * time.Minute
	bskyKeyRewrite = 7 * 24 * time.Hour
)

type bskyKeyRecord struct {
	Key     []byte    `json:"key"`
	Written time.Time `json:"written"`
}

// bskyKeys sign the simulator's tokens and seal the app passwords in them.
type bskyKeys struct {
	mac []byte
	box *secret.Box
}

// tokenKeys reads the simulator's key, made by the first process that needs it.
func (b *Sim) tokenKeys(ctx context.Context) (*bskyKeys, error) {
	b.mu.Lock()
	k, read := b.keys, b.keysRead
	b.mu.Unlock()
	if k != nil && time.Since(read) < bskyKeyReread {
		return k, nil
	}
	key := bskyKey(bskyKeyKind, "tokens")
	now := b.cfg.Now()
	stored, _, found, err := sim.Load[bskyKeyRecord](ctx, b.cfg.State, key)
	if err != nil {
		return nil, err
	}
	if !found || now.Sub(stored.Written) > bskyKeyRewrite {
		err := b.cfg.State.Update(ctx, func(tx sim.Tx) error {
			cur, rec, found, err := sim.LoadTx[bskyKeyRecord](tx, key)
			if err != nil {
				return err
			}
			if !found {
				cur.Key = sim.RandomBytes(secret.KeySize)
			}
			cur.Written = now
			stored = cur
			return sim.Save(tx, rec, cur)
		})
		if err != nil {
			return nil, err
		}
	}
	box, err := secret.NewBox(secret.Derive(stored.Key, "sandbox bluesky app passwords"))
	if err != nil {
		return nil, err
	}
	k = &bskyKeys{mac: secret.Derive(stored.Key, "sandbox bluesky tokens"), box: box}
	b.mu.Lock()
	b.keys, b.keysRead = k, time.Now()
	b.mu.Unlock()
	return k, nil
}

func b64(v []byte) string { return base64.RawURLEncoding.EncodeToString(v) }

func (k *bskyKeys) mint(claims map[string]any) string {
	head, _ := json.Marshal(map[string]string{"typ": "at+jwt", "alg": "HS256"})
	body, _ := json.Marshal(claims)
	msg := b64(head) + "." + b64(body)
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(msg))
	return msg + "." + b64(m.Sum(nil))
}

// seal seals the app password of the account did for a token's pwd claim.
func (k *bskyKeys) seal(password, did string) string {
	return b64(k.box.Seal([]byte(password), []byte(did)))
}

// open opens a token's pwd claim for the account did.
func (k *bskyKeys) open(sealed, did string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(sealed)
	if err != nil {
		return "", false
	}
	password, err := k.box.Open(raw, []byte(did))
	return string(password), err == nil
}

type bskyClaims struct {
	Scope string `json:"scope"`
	Sub   string `json:"sub"`
	Iss   string `json:"iss"`
	Aud   string `json:"aud"`
	Lxm   string `json:"lxm"`
	Jti   string `json:"jti"`
	Exp   int64  `json:"exp"`
	// Pwd is the account's app password, sealed (bskyKeys.seal).
	Pwd string `json:"pwd"`
}

// parse verifies a token's signature and returns its claims; expired reports exp at or before
// now.
func (k *bskyKeys) parse(token string, now time.Time) (c bskyClaims, expired, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, false, false
	}
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, m.Sum(nil)) {
		return c, false, false
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(body, &c) != nil {
		return c, false, false
	}
	return c, !now.Before(time.Unix(c.Exp, 0)), true
}

// resolve finds the account whose app password a token's claims carry, sealed for did.
func (b *Sim) resolve(ctx context.Context, k *bskyKeys, c bskyClaims, did string) (sim.Account, bool) {
	password, ok := k.open(c.Pwd, did)
	if !ok || b.cfg.Accounts == nil {
		return sim.Account{}, false
	}
	acc, ok := b.cfg.Accounts.Resolve(ctx, password)
	return acc, ok && DID(acc.ID) == did
}

func bearer(r *http.Request) (string, bool) {
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t = strings.TrimSpace(t)
	return t, ok && t != ""
}

// issue mints an access and refresh token pair carrying the account's app password.
func (b *Sim) issue(k *bskyKeys, password string, acc sim.Account) (access, refresh string) {
	now := b.cfg.Now()
	did := DID(acc.ID)
	pwd := k.seal(password, did)
	access = k.mint(map[string]any{"scope": "com.atproto.appPass", "sub": did, "aud": b.did,
		"iat": now.Unix(), "exp": now.Add(b.opts.AccessTTL).Unix(), "jti": sim.RandomHex(12), "pwd": pwd})
	refresh = k.mint(map[string]any{"scope": "com.atproto.refresh", "sub": did, "aud": b.did,
		"iat": now.Unix(), "exp": now.Add(b.opts.RefreshTTL).Unix(), "jti": sim.RandomHex(12), "pwd": pwd})
	return access, refresh
}

// saveAccount keeps acc as an account that signed in, by DID and by handle.
func saveAccount(tx sim.Tx, acc sim.Account) error {
	did := DID(acc.ID)
	if err := sim.Save(tx, sim.Record{Key: bskyKey(bskyAccountKind, did), Account: acc.ID}, acc); err != nil {
		return err
	}
	return sim.Save(tx, sim.Record{Key: bskyKey(bskyHandleKind, strings.ToLower(sandboxtoken.BlueskyHandle(acc.ID))), Account: acc.ID}, did)
}

// knownAccount finds the account that signed in with a DID or handle.
func (b *Sim) knownAccount(ctx context.Context, actor string) (acc sim.Account, did string, found bool, err error) {
	did = actor
	if !strings.HasPrefix(actor, "did:") {
		if did, _, found, err = sim.Load[string](ctx, b.cfg.State, bskyKey(bskyHandleKind, strings.ToLower(actor))); err != nil || !found {
			return sim.Account{}, "", false, err
		}
	}
	acc, _, found, err = sim.Load[sim.Account](ctx, b.cfg.State, bskyKey(bskyAccountKind, did))
	return acc, did, found, err
}

func (b *Sim) profile(acc sim.Account) Profile {
	p := b.opts.Profiles[acc.ID]
	if p.DisplayName == "" {
		p.DisplayName = acc.Username
	}
	if p.Avatar == "" {
		p.Avatar = b.cfg.BaseURL + "/img/avatar/plain/" + DID(acc.ID) + "/avatar@jpeg"
	}
	return p
}

func (b *Sim) sessionAnswer(acc sim.Account, access, refresh string) map[string]any {
	did, handle := DID(acc.ID), sandboxtoken.BlueskyHandle(acc.ID)
	return map[string]any{
		"accessJwt": access, "refreshJwt": refresh, "handle": handle, "did": did,
		"didDoc": map[string]any{
			"@context":    []string{"https://www.w3.org/ns/did/v1"},
			"id":          did,
			"alsoKnownAs": []string{"at://" + handle},
			"service": []map[string]string{{
				"id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": b.cfg.BaseURL,
			}},
		},
		"email": acc.ID + "@sandbox.invalid", "emailConfirmed": !b.profile(acc).EmailUnconfirmed,
		"active": true,
	}
}

// takeRecentLogin counts a createSession call of ident in the 5 minutes' window, kept in this
// process (a documented deviation: each process allows the limit; the window is minutes long).
// When the limit is reached it counts nothing and answers when the window frees a place.
func (b *Sim) takeRecentLogin(ident string, now time.Time) (reset time.Time, limited bool) {
	cutoff := now.Add(-5 * time.Minute)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.recent) > 10_000 {
		for id, calls := range b.recent {
			if len(sim.PruneBefore(calls, cutoff)) == 0 {
				delete(b.recent, id)
			}
		}
		if len(b.recent) > 10_000 {
			clear(b.recent)
		}
	}
	calls := sim.PruneBefore(b.recent[ident], cutoff)
	if len(calls) >= b.opts.SessionsPer5Min {
		b.recent[ident] = calls
		return calls[0].Add(5 * time.Minute), true
	}
	b.recent[ident] = append(calls, now)
	return time.Time{}, false
}

// untakeRecentLogin takes back a call takeRecentLogin counted at now.
func (b *Sim) untakeRecentLogin(ident string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	calls := b.recent[ident]
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].Equal(now) {
			b.recent[ident] = slices.Delete(calls, i, i+1)
			return
		}
	}
}

func (b *Sim) createSession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Identifier *string `json:"identifier"`
		Password   *string `json:"password"`
	}
	if msg := bskyDecode(r, &in); msg != "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", msg)
		return
	}
	if in.Identifier == nil || in.Password == nil {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Input must have the properties "identifier" and "password"`)
		return
	}
	ident := strings.ToLower(strings.TrimSpace(*in.Identifier))
	now := b.cfg.Now()
	// Every call counts, a refused one too, before the password is looked at.
	if reset, limited := b.takeRecentLogin(ident, now); limited {
		bskyRateLimited(w, b.opts.SessionsPer5Min, 5*time.Minute, reset)
		return
	}
	ctx := r.Context()
	var acc sim.Account
	authed := b.cfg.Accounts != nil && *in.Password != ""
	if authed {
		acc, authed = b.cfg.Accounts.Resolve(ctx, *in.Password)
	}
	authed = authed && (ident == strings.ToLower(sandboxtoken.BlueskyHandle(acc.ID)) || ident == DID(acc.ID))
	fault := ""
	var keys *bskyKeys
	if authed {
		fault = sim.CallFault(acc.Behavior, b.cfg.Rand)
		var err error
		if keys, err = b.tokenKeys(ctx); err != nil {
			bskyInternal(w)
			return
		}
	}
	// The day's limit is kept in the State for the identifiers of accounts the simulator knows
	// (that signed in once): the calls of other identifiers, which anyone can make up, count
	// in the 5 minutes' window only.
	var dayReset time.Time
	var dayLimited bool
	err := b.cfg.State.Update(ctx, func(tx sim.Tx) error {
		dayLimited = false
		owner := ""
		if authed {
			owner = acc.ID
		} else {
			kind := bskyHandleKind
			if strings.HasPrefix(ident, "did:") {
				kind = bskyAccountKind
			}
			_, rec, found, err := sim.LoadTx[json.RawMessage](tx, bskyKey(kind, ident))
			if err != nil || !found {
				return err
			}
			owner = rec.Account
		}
		key := bskyKey(bskyLoginsKind, ident)
		calls, _, _, err := sim.LoadTx[[]time.Time](tx, key)
		if err != nil {
			return err
		}
		ok, err := sim.TakeInWindow(tx, key, owner, now, 24*time.Hour, b.opts.SessionsPerDay)
		if err != nil {
			return err
		}
		if !ok {
			dayLimited, dayReset = true, sim.PruneBefore(calls, now.Add(-24*time.Hour))[0].Add(24*time.Hour)
			return nil
		}
		if authed && fault == "" {
			return saveAccount(tx, acc)
		}
		return nil
	})
	refuse := func() {
		bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", "Invalid identifier or password")
	}
	switch {
	case err != nil:
		bskyInternal(w)
	case dayLimited:
		b.untakeRecentLogin(ident, now)
		bskyRateLimited(w, b.opts.SessionsPerDay, 24*time.Hour, dayReset)
	case !authed:
		refuse()
	case b.answerFault(w, fault, refuse):
	default:
		access, refresh := b.issue(keys, *in.Password, acc)
		bskyJSON(w, http.StatusOK, b.sessionAnswer(acc, access, refresh))
	}
}

func (b *Sim) refreshSession(w http.ResponseWriter, r *http.Request) {
	token, ok := bearer(r)
	if !ok {
		bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", "Authentication Required")
		return
	}
	ctx := r.Context()
	keys, err := b.tokenKeys(ctx)
	if err != nil {
		bskyInternal(w)
		return
	}
	invalid := func() { bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified") }
	revoked := func() { bskyError(w, http.StatusBadRequest, "ExpiredToken", "Token has been revoked") }
	c, expired, ok := keys.parse(token, b.cfg.Now())
	if !ok || c.Scope != "com.atproto.refresh" {
		invalid()
		return
	}
	if expired {
		bskyError(w, http.StatusBadRequest, "ExpiredToken", "Token has expired")
		return
	}
	used := bskyKey(bskyRefreshedKind, c.Jti)
	if _, _, found, err := sim.Load[bool](ctx, b.cfg.State, used); err != nil {
		bskyInternal(w)
		return
	} else if found {
		revoked()
		return
	}
	acc, ok := b.resolve(ctx, keys, c, c.Sub)
	if !ok {
		invalid()
		return
	}
	if b.bskyFault(w, acc, invalid) {
		return
	}
	// A refresh token is good once: it is kept as used until it would have expired.
	again := false
	err = b.cfg.State.Update(ctx, func(tx sim.Tx) error {
		_, rec, found, err := sim.LoadTx[bool](tx, used)
		if again = found; err != nil || found {
			return err
		}
		rec.Account, rec.Expires = acc.ID, time.Unix(c.Exp, 0)
		if err := sim.Save(tx, rec, true); err != nil {
			return err
		}
		return saveAccount(tx, acc)
	})
	switch {
	case err != nil:
		bskyInternal(w)
	case again:
		revoked()
	default:
		password, _ := keys.open(c.Pwd, c.Sub)
		access, refresh := b.issue(keys, password, acc)
		bskyJSON(w, http.StatusOK, b.sessionAnswer(acc, access, refresh))
	}
}

// auth checks an access token; it answers and reports false when the call may not go on.
func (b *Sim) auth(w http.ResponseWriter, r *http.Request) (sim.Account, bool) {
	acc, _, _, ok := b.authClaims(w, r)
	return acc, ok
}

// authClaims is auth that also answers the token's claims and the keys that verified them.
func (b *Sim) authClaims(w http.ResponseWriter, r *http.Request) (sim.Account, bskyClaims, *bskyKeys, bool) {
	token, ok := bearer(r)
	if !ok {
		bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", "Authentication Required")
		return sim.Account{}, bskyClaims{}, nil, false
	}
	keys, err := b.tokenKeys(r.Context())
	if err != nil {
		bskyInternal(w)
		return sim.Account{}, bskyClaims{}, nil, false
	}
	invalid := func() { bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified") }
	c, expired, ok := keys.parse(token, b.cfg.Now())
	switch {
	case !ok:
		invalid()
		return sim.Account{}, c, nil, false
	case c.Scope != "com.atproto.appPass" && c.Scope != "com.atproto.access":
		bskyError(w, http.StatusBadRequest, "InvalidToken", "Bad token scope")
		return sim.Account{}, c, nil, false
	case expired:
		bskyError(w, http.StatusBadRequest, "ExpiredToken", "Token has expired")
		return sim.Account{}, c, nil, false
	}
	acc, ok := b.resolve(r.Context(), keys, c, c.Sub)
	if !ok {
		invalid()
		return sim.Account{}, c, nil, false
	}
	if b.bskyFault(w, acc, invalid) {
		return sim.Account{}, c, nil, false
	}
	return acc, c, keys, true
}

func (b *Sim) getServiceAuth(w http.ResponseWriter, r *http.Request) {
	acc, claims, keys, ok := b.authClaims(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	aud, lxm := q.Get("aud"), q.Get("lxm")
	if !strings.HasPrefix(aud, "did:") {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Input/aud must be a valid did`)
		return
	}
	now := b.cfg.Now()
	exp := now.Add(time.Minute)
	if v := q.Get("exp"); v != "" {
		n, err := sim.ParseDigits(v)
		if err != nil {
			bskyError(w, http.StatusBadRequest, "InvalidRequest", "Input/exp must be an integer")
			return
		}
		exp = time.Unix(n, 0)
	}
	switch {
	case !exp.After(now):
		bskyError(w, http.StatusBadRequest, "BadExpiration", "expiration is in past")
		return
	case exp.Sub(now) > time.Hour:
		bskyError(w, http.StatusBadRequest, "BadExpiration", "cannot request a token with an expiration more than an hour in the future")
		return
	case lxm == "" && exp.Sub(now) > time.Minute:
		bskyError(w, http.StatusBadRequest, "BadExpiration", "cannot request a method-less token with an expiration more than a minute in the future")
		return
	}
	// The service token carries the app password as the session's do: the video service
	// resolves the account with it.
	token := keys.mint(map[string]any{"iss": DID(acc.ID), "aud": aud, "lxm": lxm,
		"iat": now.Unix(), "exp": exp.Unix(), "jti": sim.RandomHex(12), "pwd": claims.Pwd})
	bskyJSON(w, http.StatusOK, map[string]string{"token": token})
}

// videoAuth checks a service token presented to the video service.
func (b *Sim) videoAuth(w http.ResponseWriter, r *http.Request, lxm string) (sim.Account, string, bool) {
	unauthorized := func(msg string) { bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", msg) }
	token, ok := bearer(r)
	if !ok {
		unauthorized("missing authorization")
		return sim.Account{}, "", false
	}
	keys, err := b.tokenKeys(r.Context())
	if err != nil {
		bskyInternal(w)
		return sim.Account{}, "", false
	}
	c, expired, ok := keys.parse(token, b.cfg.Now())
	switch {
	case !ok || c.Iss == "":
		unauthorized("invalid token: could not verify the token")
		return sim.Account{}, "", false
	case expired:
		unauthorized("invalid token: token has expired")
		return sim.Account{}, "", false
	case c.Aud != b.did:
		unauthorized(fmt.Sprintf("invalid token: invalid token audience %q, should be %q", c.Aud, b.did))
		return sim.Account{}, "", false
	case c.Lxm != lxm:
		unauthorized(fmt.Sprintf("invalid token: invalid token lxm %q, should be %q", c.Lxm, lxm))
		return sim.Account{}, "", false
	}
	acc, ok := b.resolve(r.Context(), keys, c, c.Iss)
	if !ok {
		unauthorized("invalid token: unknown issuer")
		return sim.Account{}, "", false
	}
	if b.bskyFault(w, acc, func() { unauthorized("invalid token: could not verify the token") }) {
		return sim.Account{}, "", false
	}
	return acc, c.Iss, true
}

// remaining reports the daily allowance left to the account did at now.
func (b *Sim) remaining(ctx context.Context, did string, now time.Time) (videos int, bytes int64, err error) {
	uploads, _, _, err := sim.Load[[]bskyUploaded](ctx, b.cfg.State, bskyKey(bskyUploadsKind, did))
	if err != nil {
		return 0, 0, err
	}
	n := 0
	for _, u := range uploads {
		if u.At.After(now.Add(-24 * time.Hour)) {
			n++
			bytes += u.Size
		}
	}
	return max(b.opts.VideosPerDay-n, 0), max(b.opts.VideoBytesPerDay-bytes, 0), nil
}

func (b *Sim) getUploadLimits(w http.ResponseWriter, r *http.Request) {
	acc, did, ok := b.videoAuth(w, r, "app.bsky.video.getUploadLimits")
	if !ok {
		return
	}
	videos, bytes, err := b.remaining(r.Context(), did, b.cfg.Now())
	if err != nil {
		bskyInternal(w)
		return
	}
	out := map[string]any{"canUpload": true, "remainingDailyVideos": videos, "remainingDailyBytes": bytes}
	switch {
	case b.profile(acc).EmailUnconfirmed:
		out["canUpload"], out["error"] = false, "unconfirmed_email"
		out["message"] = "You must verify your email address before uploading videos."
	case videos == 0 || bytes == 0:
		out["canUpload"] = false
		out["message"] = "You have reached your daily video upload limit."
	}
	bskyJSON(w, http.StatusOK, out)
}

// receive streams a request body of at most max bytes into a temporary file (when keep) while
// hashing it. tooLarge reports a body over max; the file is the caller's to remove.
func receive(r *http.Request, maxBytes int64, keep bool) (f *os.File, size int64, sha string, tooLarge bool, err error) {
	var h hash.Hash = sha256.New()
	var dst io.Writer = h
	if keep {
		f, err = os.CreateTemp("", "reelay-bluesky-sim-*.upload")
		if err != nil {
			return nil, 0, "", false, err
		}
		dst = io.MultiWriter(f, h)
	}
	buf := make([]byte, 256<<10)
	size, err = io.CopyBuffer(dst, io.LimitReader(r.Body, maxBytes+1), buf)
	if err == nil && size > maxBytes {
		tooLarge = true
	}
	return f, size, hex.EncodeToString(h.Sum(nil)), tooLarge, err
}

func removeTemp(f *os.File) {
	if f != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
}

var bskyVideoTypes = []string{"video/mp4", "video/quicktime", "video/webm", "video/mpeg"}

func (b *Sim) uploadVideo(w http.ResponseWriter, r *http.Request) {
	defer sim.Drain(r.Body)
	acc, did, ok := b.videoAuth(w, r, "com.atproto.repo.uploadBlob")
	if !ok {
		return
	}
	if q := r.URL.Query().Get("did"); q != did {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("did %q does not match the token's issuer", q))
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !slices.Contains(bskyVideoTypes, mt) {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "unsupported content type: "+r.Header.Get("Content-Type"))
		return
	}
	if b.profile(acc).EmailUnconfirmed {
		bskyJSON(w, http.StatusBadRequest, map[string]any{"jobStatus": map[string]string{
			"did": "", "error": "unconfirmed_email", "jobId": "", "state": ""}})
		return
	}
	if r.ContentLength > b.opts.MaxVideoBytes {
		bskyError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request entity too large")
		return
	}
	ctx := r.Context()
	videos, left, err := b.remaining(ctx, did, b.cfg.Now())
	if err != nil {
		bskyInternal(w)
		return
	}
	if videos == 0 || (r.ContentLength > 0 && r.ContentLength > left) {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "daily video upload limit reached")
		return
	}
	f, size, sha, tooLarge, err := receive(r, b.opts.MaxVideoBytes, true)
	defer removeTemp(f)
	switch {
	case err != nil:
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "the upload was interrupted")
		return
	case tooLarge:
		bskyError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request entity too large")
		return
	case size == 0:
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "empty upload")
		return
	case r.ContentLength >= 0 && size != r.ContentLength:
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "the body does not match Content-Length")
		return
	}
	now := b.cfg.Now()
	videoKey := bskyKey(bskyVideoKind, did+"|"+sha)
	// already answers the job of the same video of the account, when it has not failed: the
	// video service answers it again instead of making another.
	already := func(j bskyJob) {
		bskyJSON(w, http.StatusConflict, map[string]string{"did": did, "error": "already_exists",
			"jobId": j.ID, "message": "Video already processed", "state": bskyJobState(j, now)})
	}
	if prior, found, err := b.videoJob(ctx, videoKey); err != nil {
		bskyInternal(w)
		return
	} else if found && prior.Verdict == "" {
		already(prior)
		return
	}

	verdict := ""
	info, perr := media.Probe(f, size)
	switch {
	case perr != nil || !slices.Contains([]string{"mp4", "mov", "webm"}, info.Kind.Name):
		verdict = "unsupported video format"
	case info.Duration > b.opts.MaxVideoDuration:
		verdict = fmt.Sprintf("video is too long: %s, the maximum is %s", info.Duration, b.opts.MaxVideoDuration)
	case acc.Behavior.Fail == sim.FailReject:
		verdict = "rejected"
	}
	processing := b.opts.DefaultProcessing
	if ms := acc.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	j := bskyJob{ID: bskyJobID(), Account: acc, DID: did, SHA: sha, Size: size, Created: now, Duration: processing, Verdict: verdict}
	var prior *bskyJob
	err = b.cfg.State.Update(ctx, func(tx sim.Tx) error {
		prior = nil
		// The same video, sent meanwhile by another request.
		if id, _, found, err := sim.LoadTx[string](tx, videoKey); err != nil {
			return err
		} else if found {
			p, _, found, err := sim.LoadTx[bskyJob](tx, bskyKey(bskyJobKind, id))
			if err != nil {
				return err
			}
			if found && p.Verdict == "" {
				prior = &p
				return nil
			}
		}
		if err := sim.Save(tx, sim.Record{Key: bskyKey(bskyJobKind, j.ID), Account: acc.ID}, j); err != nil {
			return err
		}
		if err := sim.Save(tx, sim.Record{Key: videoKey, Account: acc.ID}, j.ID); err != nil {
			return err
		}
		uploadsKey := bskyKey(bskyUploadsKind, did)
		uploads, _, _, err := sim.LoadTx[[]bskyUploaded](tx, uploadsKey)
		if err != nil {
			return err
		}
		uploads = append(slices.DeleteFunc(uploads, func(u bskyUploaded) bool { return !u.At.After(now.Add(-24 * time.Hour)) }),
			bskyUploaded{At: now, Size: size})
		if err := sim.Save(tx, sim.Record{Key: uploadsKey, Account: acc.ID, Expires: now.Add(24 * time.Hour)}, uploads); err != nil {
			return err
		}
		if verdict == "" {
			// The job puts its blob in the account's repository when it completes.
			if err := putBlob(tx, acc.ID, did, bskyBlob{Mime: "video/mp4", Size: size, SHA: sha, Ready: j.Created.Add(j.Duration)}); err != nil {
				return err
			}
		}
		return sim.RecordTx(tx, platform.Bluesky, sim.Upload{Account: acc.ID, Bytes: size, SHA256: sha})
	})
	switch {
	case err != nil:
		bskyInternal(w)
	case prior != nil:
		already(*prior)
	default:
		bskyJSON(w, http.StatusOK, map[string]string{"did": did, "jobId": j.ID, "state": bskyJobState(j, now)})
	}
}

// videoJob reads the job of an account's video (videoKey: bskyVideoKind).
func (b *Sim) videoJob(ctx context.Context, videoKey sim.Key) (bskyJob, bool, error) {
	id, _, found, err := sim.Load[string](ctx, b.cfg.State, videoKey)
	if err != nil || !found {
		return bskyJob{}, false, err
	}
	j, _, found, err := sim.Load[bskyJob](ctx, b.cfg.State, bskyKey(bskyJobKind, id))
	return j, found, err
}

// putBlob stores a blob in the account did's repository, replacing one of the same bytes; the
// blob is ready as soon as either was.
func putBlob(tx sim.Tx, account, did string, bl bskyBlob) error {
	bl.CID = bskyCID(0x55, bl.SHA)
	key := bskyKey(bskyBlobKind, did+"|"+bl.CID)
	cur, rec, found, err := sim.LoadTx[bskyBlob](tx, key)
	if err != nil {
		return err
	}
	if found && cur.Ready.Before(bl.Ready) {
		bl.Ready = cur.Ready
	}
	rec.Account = account
	return sim.Save(tx, rec, bl)
}

// bskyJobID looks like the video service's job ids (20 lower-case base32hex characters).
func bskyJobID() string {
	return strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sim.RandomBytes(12)))[:20]
}

// bskyJobState is the state of a job at now: encoding for its processing time, then
// completed or failed.
func bskyJobState(j bskyJob, now time.Time) string {
	switch {
	case !j.completed(now):
		return "JOB_STATE_ENCODING"
	case j.Verdict != "":
		return "JOB_STATE_FAILED"
	}
	return "JOB_STATE_COMPLETED"
}

func (b *Sim) getJobStatus(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("jobId")
	if id == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Params must have the property "jobId"`)
		return
	}
	j, _, found, err := sim.Load[bskyJob](r.Context(), b.cfg.State, bskyKey(bskyJobKind, id))
	if err != nil {
		bskyInternal(w)
		return
	}
	if !found {
		bskyError(w, http.StatusNotFound, "NotFound", "job not found")
		return
	}
	if b.bskyFault(w, j.Account, func() { bskyError(w, http.StatusServiceUnavailable, "NotEnoughResources", "Service Unavailable") }) {
		return
	}
	now := b.cfg.Now()
	state := bskyJobState(j, now)
	js := map[string]any{"jobId": j.ID, "did": j.DID, "state": state}
	switch state {
	case "JOB_STATE_ENCODING":
		js["progress"] = min(99, int(100*now.Sub(j.Created)/max(j.Duration, 1)))
	case "JOB_STATE_FAILED":
		js["error"] = "video processing error for job: " + j.ID
		js["message"] = "Failed to process video"
		if j.Verdict != "rejected" {
			js["message"] = "Failed to process video: " + j.Verdict
		}
	default:
		js["progress"] = 100
		js["blob"] = bskyBlobJSON(bskyCID(0x55, j.SHA), "video/mp4", j.Size)
	}
	bskyJSON(w, http.StatusOK, map[string]any{"jobStatus": js})
}

func bskyBlobJSON(cid, mimeType string, size int64) map[string]any {
	return map[string]any{"$type": "blob", "ref": map[string]string{"$link": cid}, "mimeType": mimeType, "size": size}
}

// bskyCID is a CIDv1 of a SHA-256 digest (hex) with the given codec (0x55 raw, 0x71 dag-cbor),
// in base32 multibase ("b…").
func bskyCID(codec byte, shaHex string) string {
	d, _ := hex.DecodeString(shaHex)
	raw := append([]byte{0x01, codec, 0x12, 0x20}, d...)
	return "b" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw))
}

func (b *Sim) uploadBlob(w http.ResponseWriter, r *http.Request) {
	defer sim.Drain(r.Body)
	acc, ok := b.auth(w, r)
	if !ok {
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Content-Type is required")
		return
	}
	limit := b.opts.MaxVideoBytes
	if acc.Behavior.BarePDS {
		limit = b.opts.BarePDSBlobLimit
	}
	if r.ContentLength > limit {
		bskyError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request entity too large")
		return
	}
	_, size, sha, tooLarge, err := receive(r, limit, false)
	switch {
	case err != nil || (r.ContentLength >= 0 && size != r.ContentLength):
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "the upload was interrupted")
		return
	case tooLarge:
		bskyError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request entity too large")
		return
	case strings.HasPrefix(mt, "video/") && acc.Behavior.Fail == sim.FailReject:
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Failed to process video")
		return
	}
	now := b.cfg.Now()
	did := DID(acc.ID)
	err = b.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		if err := putBlob(tx, acc.ID, did, bskyBlob{Mime: mt, Size: size, SHA: sha, Ready: now}); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Bluesky, sim.Upload{Account: acc.ID, Bytes: size, SHA256: sha})
	})
	if err != nil {
		bskyInternal(w)
		return
	}
	bskyJSON(w, http.StatusOK, map[string]any{"blob": bskyBlobJSON(bskyCID(0x55, sha), mt, size)})
}

// bskyTIDRE: a TID is 13 base32-sortable characters, the first within 234567abcdefghij.
func bskyTID(s string) bool {
	if len(s) != 13 || !strings.ContainsRune("234567abcdefghij", rune(s[0])) {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("234567abcdefghijklmnopqrstuvwxyz", c) {
			return false
		}
	}
	return true
}

var (
	bskyTextLimit = platform.TextLimit{Max: 300, Unit: platform.UnitGraphemes}
	bskyTagLimit  = platform.TextLimit{Max: 64, Unit: platform.UnitGraphemes}
	bskyAltLimit  = platform.TextLimit{Max: 1000, Unit: platform.UnitGraphemes}
)

type bskyBlobIn struct {
	Type string `json:"$type"`
	Ref  *struct {
		Link string `json:"$link"`
	} `json:"ref"`
	MimeType string `json:"mimeType"`
	Size     *int64 `json:"size"`
}

type bskyPostIn struct {
	Type      string          `json:"$type"`
	Text      *string         `json:"text"`
	CreatedAt *string         `json:"createdAt"`
	Langs     []string        `json:"langs"`
	Facets    []bskyFacetIn   `json:"facets"`
	Embed     json.RawMessage `json:"embed"`
	Reply     *bskyReplyIn    `json:"reply"`
}

// bskyReplyIn is app.bsky.feed.post#replyRef: the thread's root and the post answered.
type bskyReplyIn struct {
	Root   *bskyStrongRefIn `json:"root"`
	Parent *bskyStrongRefIn `json:"parent"`
}

// bskyStrongRefIn is com.atproto.repo.strongRef.
type bskyStrongRefIn struct {
	URI string `json:"uri"`
	CID string `json:"cid"`
}

type bskyFacetIn struct {
	Index *struct {
		ByteStart *int `json:"byteStart"`
		ByteEnd   *int `json:"byteEnd"`
	} `json:"index"`
	Features []struct {
		Type string  `json:"$type"`
		Tag  *string `json:"tag"`
		URI  *string `json:"uri"`
		DID  *string `json:"did"`
	} `json:"features"`
}

type bskyVideoEmbedIn struct {
	Type        string      `json:"$type"`
	Video       *bskyBlobIn `json:"video"`
	Alt         *string     `json:"alt"`
	AspectRatio *struct {
		Width  *int `json:"width"`
		Height *int `json:"height"`
	} `json:"aspectRatio"`
}

// checkPost validates a post record; it returns the message after "Invalid app.bsky.feed.post
// record: ", or "".
func (b *Sim) checkPost(p bskyPostIn, validate bool) string {
	if p.Type != "app.bsky.feed.post" {
		return "Record/$type must be app.bsky.feed.post"
	}
	if validate {
		if p.Text == nil {
			return `Record must have the property "text"`
		}
		text := *p.Text
		if !bskyTextLimit.Check(text) {
			return "Record/text must not be longer than 300 graphemes"
		}
		if len(text) > 3000 {
			return "Record/text must not be longer than 3000 characters"
		}
		if p.CreatedAt == nil {
			return `Record must have the property "createdAt"`
		}
		if _, err := time.Parse(time.RFC3339Nano, *p.CreatedAt); err != nil {
			return "Record/createdAt must be an valid atproto datetime (both RFC-3339 and ISO-8601)"
		}
		if len(p.Langs) > 3 {
			return "Record/langs must not have more than 3 elements"
		}
		for i, f := range p.Facets {
			if msg := checkFacet(text, f); msg != "" {
				return fmt.Sprintf("Record/facets/%d%s", i, msg)
			}
		}
		if p.Reply != nil {
			return checkReplyRef(*p.Reply)
		}
	}
	return ""
}

// checkReplyRef validates the shape of a reply's strong references.
func checkReplyRef(r bskyReplyIn) string {
	for name, ref := range map[string]*bskyStrongRefIn{"root": r.Root, "parent": r.Parent} {
		switch {
		case ref == nil:
			return `Record/reply must have the properties "root" and "parent"`
		case !strings.HasPrefix(ref.URI, "at://"):
			return "Record/reply/" + name + "/uri must be a valid at-uri"
		case !strings.HasPrefix(ref.CID, "b") || len(ref.CID) < 8:
			return "Record/reply/" + name + "/cid must be a cid string"
		}
	}
	return ""
}

func checkFacet(text string, f bskyFacetIn) string {
	if f.Index == nil || f.Index.ByteStart == nil || f.Index.ByteEnd == nil {
		return `/index must have the properties "byteStart" and "byteEnd"`
	}
	s, e := *f.Index.ByteStart, *f.Index.ByteEnd
	if s < 0 || e < 0 {
		return "/index/byteStart and byteEnd can not be less than 0"
	}
	// Not a lexicon rule: the AppView drops such facets silently; the simulator says so.
	if s >= e || e > len(text) || !utf8.RuneStart(bskyByteAt(text, s)) || (e < len(text) && !utf8.RuneStart(text[e])) {
		return fmt.Sprintf("/index [%d,%d) is not a range of whole characters within the text's %d bytes", s, e, len(text))
	}
	if f.Features == nil {
		return `must have the property "features"`
	}
	for j, ft := range f.Features {
		switch ft.Type {
		case "app.bsky.richtext.facet#tag":
			if ft.Tag == nil {
				return fmt.Sprintf(`/features/%d must have the property "tag"`, j)
			}
			if len(*ft.Tag) > 640 || !bskyTagLimit.Check(*ft.Tag) {
				return fmt.Sprintf("/features/%d/tag must not be longer than 64 graphemes", j)
			}
		case "app.bsky.richtext.facet#link":
			if ft.URI == nil {
				return fmt.Sprintf(`/features/%d must have the property "uri"`, j)
			}
			if u, err := url.Parse(*ft.URI); err != nil || u.Scheme == "" {
				return fmt.Sprintf("/features/%d/uri must be a uri", j)
			}
		case "app.bsky.richtext.facet#mention":
			if ft.DID == nil || !strings.HasPrefix(*ft.DID, "did:") {
				return fmt.Sprintf("/features/%d/did must be a did", j)
			}
		default:
			// An open union: unknown features are allowed by the lexicon.
			if ft.Type == "" {
				return fmt.Sprintf(`/features/%d must have the property "$type"`, j)
			}
		}
	}
	return ""
}

func bskyByteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// checkEmbed validates the video embed and finds its blob in the repository of did; it
// returns the status, error name and message of a refusal, or the blob.
func (v *bskyView) checkEmbed(did string, raw json.RawMessage) (*bskyBlob, int, string, string) {
	b := v.b
	invalid := func(msg string) (*bskyBlob, int, string, string) {
		return nil, http.StatusBadRequest, "InvalidRequest", "Invalid app.bsky.feed.post record: " + msg
	}
	if len(raw) == 0 || string(raw) == "null" {
		return invalid("Record/embed is required by this simulator: it takes posts with a video only")
	}
	var e bskyVideoEmbedIn
	if err := json.Unmarshal(raw, &e); err != nil {
		return invalid("Record/embed must be an object")
	}
	if e.Type != "app.bsky.embed.video" {
		return invalid(fmt.Sprintf("Record/embed $type %q: this simulator takes app.bsky.embed.video only", e.Type))
	}
	vid := e.Video
	if vid == nil {
		return invalid(`Record/embed must have the property "video"`)
	}
	if vid.Type != "blob" || vid.Ref == nil || vid.Ref.Link == "" || vid.Size == nil || vid.MimeType == "" {
		return invalid("Record/embed/video should be a blob ref")
	}
	if vid.MimeType != "video/mp4" {
		return invalid(fmt.Sprintf("Record/embed/video mimeType (%s) does not match accepted types: video/mp4", vid.MimeType))
	}
	if *vid.Size > b.opts.MaxVideoBytes {
		return invalid(fmt.Sprintf("Record/embed/video is too big (%d bytes, the maximum is %d)", *vid.Size, b.opts.MaxVideoBytes))
	}
	if e.AspectRatio != nil && (e.AspectRatio.Width == nil || e.AspectRatio.Height == nil || *e.AspectRatio.Width < 1 || *e.AspectRatio.Height < 1) {
		return invalid("Record/embed/aspectRatio width and height must be integers of at least 1")
	}
	if e.Alt != nil && (!bskyAltLimit.Check(*e.Alt) || len(*e.Alt) > 10000) {
		return invalid("Record/embed/alt must not be longer than 1000 graphemes")
	}
	bl, _, found, err := sim.Load[bskyBlob](v.ctx, b.cfg.State, bskyKey(bskyBlobKind, did+"|"+vid.Ref.Link))
	if err != nil {
		v.fail(err)
		return nil, http.StatusInternalServerError, "InternalServerError", "Internal Server Error"
	}
	if !found || v.now.Before(bl.Ready) {
		return nil, http.StatusBadRequest, "InvalidRequest", "Could not find blob: " + vid.Ref.Link
	}
	if bl.Mime != vid.MimeType || bl.Size != *vid.Size {
		return invalid("Record/embed/video does not match the stored blob's mimeType and size")
	}
	return &bl, 0, "", ""
}

func (b *Sim) createRecord(w http.ResponseWriter, r *http.Request) {
	acc, ok := b.auth(w, r)
	if !ok {
		return
	}
	var in struct {
		Repo       string          `json:"repo"`
		Collection string          `json:"collection"`
		Rkey       *string         `json:"rkey"`
		Validate   *bool           `json:"validate"`
		Record     json.RawMessage `json:"record"`
		SwapCommit *string         `json:"swapCommit"`
	}
	if msg := bskyDecode(r, &in); msg != "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", msg)
		return
	}
	did, handle := DID(acc.ID), sandboxtoken.BlueskyHandle(acc.ID)
	switch {
	case in.Repo == "" || in.Collection == "" || len(in.Record) == 0:
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Input must have the properties "repo", "collection" and "record"`)
		return
	case in.Repo != did && !strings.EqualFold(in.Repo, handle):
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Could not find repo: "+in.Repo)
		return
	case in.Collection != "app.bsky.feed.post":
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "this simulator takes app.bsky.feed.post records only")
		return
	}
	rkey := ""
	if in.Rkey != nil {
		rkey = *in.Rkey
		if !bskyTID(rkey) {
			bskyError(w, http.StatusBadRequest, "InvalidRequest", "Invalid record key: app.bsky.feed.post keys must be TIDs")
			return
		}
	} else {
		rkey = bskyNewTID(b.cfg.Now())
	}
	var post bskyPostIn
	if err := json.Unmarshal(in.Record, &post); err != nil {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Invalid app.bsky.feed.post record: Record must be an object of the right shape: "+err.Error())
		return
	}
	if msg := b.checkPost(post, in.Validate == nil || *in.Validate); msg != "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Invalid app.bsky.feed.post record: "+msg)
		return
	}
	uri := "at://" + did + "/app.bsky.feed.post/" + rkey
	ctx := r.Context()
	now := b.cfg.Now()
	v := b.view(ctx, now)
	var bl *bskyBlob
	if post.Reply == nil || len(post.Embed) > 0 && string(post.Embed) != "null" {
		var status int
		var name, msg string
		if bl, status, name, msg = v.checkEmbed(did, post.Embed); status != 0 {
			bskyError(w, status, name, msg)
			return
		}
	}
	if post.Reply != nil {
		msg := v.checkReply(*post.Reply)
		if v.err != nil {
			bskyInternal(w)
			return
		}
		if msg != "" {
			bskyError(w, http.StatusBadRequest, "InvalidRequest", "Invalid app.bsky.feed.post record: "+msg)
			return
		}
	}
	var canon bytes.Buffer
	_ = json.Compact(&canon, in.Record)
	sum := sha256.Sum256(canon.Bytes())
	p := bskyPost{Username: acc.Username, Post: Post{Account: acc.ID, URI: uri,
		CID: bskyCID(0x71, hex.EncodeToString(sum[:])), Rkey: rkey, Record: json.RawMessage(canon.Bytes()), At: now}}
	if bl != nil {
		p.SHA256 = bl.SHA
	}
	if post.Text != nil {
		p.Text = *post.Text
	}
	if post.Reply != nil {
		p.ReplyRoot, p.ReplyParent = post.Reply.Root.URI, post.Reply.Parent.URI
	}
	exists := false
	err := b.cfg.State.Update(ctx, func(tx sim.Tx) error {
		_, rec, found, err := sim.LoadTx[bskyPost](tx, bskyKey(bskyPostKind, uri))
		if exists = found; err != nil || found {
			return err
		}
		rec.Account = acc.ID
		if err := sim.Save(tx, rec, p); err != nil {
			return err
		}
		if p.ReplyParent == "" {
			return sim.RecordTx(tx, platform.Bluesky, sim.Published{Account: acc.ID, ID: uri,
				URL: "https://bsky.app/profile/" + handle + "/post/" + rkey, SHA256: p.SHA256, Text: p.Text})
		}
		repliesKey := bskyKey(bskyRepliesKind, p.ReplyParent)
		replies, rrec, _, err := sim.LoadTx[[]string](tx, repliesKey)
		if err != nil {
			return err
		}
		if err := sim.Save(tx, rrec, append(replies, uri)); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Bluesky, sim.Reply{Account: acc.ID, CommentID: p.ReplyParent, Text: p.Text})
	})
	switch {
	case err != nil:
		bskyInternal(w)
		return
	case exists:
		// The live PDS's MST refuses the key with an unhandled error (bluesky-social/atproto#3718).
		bskyInternal(w)
		return
	}
	commit := sha256.Sum256([]byte(uri + p.CID))
	bskyJSON(w, http.StatusOK, map[string]any{"uri": uri, "cid": p.CID,
		"commit":           map[string]string{"cid": bskyCID(0x71, hex.EncodeToString(commit[:])), "rev": bskyNewTID(b.cfg.Now())},
		"validationStatus": "valid"})
}

func (b *Sim) getRecord(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	repo, coll, rkey := q.Get("repo"), q.Get("collection"), q.Get("rkey")
	if repo == "" || coll == "" || rkey == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Params must have the properties "repo", "collection" and "rkey"`)
		return
	}
	ctx := r.Context()
	acc, did, found, err := b.knownAccount(ctx, repo)
	if err != nil {
		bskyInternal(w)
		return
	}
	if !found {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Could not find repo: "+repo)
		return
	}
	if b.bskyFault(w, acc, func() { bskyError(w, http.StatusServiceUnavailable, "NotEnoughResources", "Service Unavailable") }) {
		return
	}
	uri := "at://" + did + "/" + coll + "/" + rkey
	p, _, found, err := sim.Load[bskyPost](ctx, b.cfg.State, bskyKey(bskyPostKind, uri))
	if err != nil {
		bskyInternal(w)
		return
	}
	if !found {
		bskyError(w, http.StatusBadRequest, "RecordNotFound", "Could not locate record: "+uri)
		return
	}
	bskyJSON(w, http.StatusOK, map[string]any{"uri": p.URI, "cid": p.CID, "value": p.Record})
}

func (b *Sim) getProfile(w http.ResponseWriter, r *http.Request) {
	if _, ok := b.auth(w, r); !ok {
		return
	}
	actor := r.URL.Query().Get("actor")
	if actor == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Params must have the property "actor"`)
		return
	}
	ctx := r.Context()
	acc, did, found, err := b.knownAccount(ctx, actor)
	posts := 0
	if err == nil && found {
		posts, err = b.cfg.State.Count(ctx, platform.Bluesky, bskyPostKind, acc.ID)
	}
	if err != nil {
		bskyInternal(w)
		return
	}
	if !found {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Profile not found")
		return
	}
	prof := b.profile(acc)
	bskyJSON(w, http.StatusOK, map[string]any{
		"did": did, "handle": sandboxtoken.BlueskyHandle(acc.ID), "displayName": prof.DisplayName, "avatar": prof.Avatar,
		"followersCount": 0, "followsCount": 0, "postsCount": posts,
		"indexedAt": b.cfg.Now().UTC().Format(time.RFC3339), "createdAt": "2024-01-01T00:00:00.000Z",
	})
}

// bskyNewTID returns a TID for the time now.
func bskyNewTID(now time.Time) string { return bskyTIDAt(now, uint64(sim.RandomBytes(1)[0])) }

// bskyTIDAt returns the TID of time t with the clock identifier clock (its low 10 bits).
func bskyTIDAt(t time.Time, clock uint64) string {
	const alphabet = "234567abcdefghijklmnopqrstuvwxyz"
	v := uint64(t.UnixMicro())&(1<<53-1)<<10 | clock&0x3FF
	var out [13]byte
	for i := 12; i >= 0; i-- {
		out[i] = alphabet[v&31]
		v >>= 5
	}
	return string(out[:])
}

// bskyDecode reads a JSON input; it returns the InvalidRequest message, or "".
func bskyDecode(r *http.Request, v any) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return "Wrong request encoding (Content-Type): " + r.Header.Get("Content-Type")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return "the request body could not be read"
	}
	if err := json.Unmarshal(body, v); err != nil {
		return "Input is not valid JSON for this method: " + err.Error()
	}
	return ""
}

var _ http.Handler = (*Sim)(nil)
