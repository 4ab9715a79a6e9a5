package sim

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
//     account's handle (BlueskySandboxHandle of its id) or DID (BlueskyDID). A wrong one is 401
//     AuthenticationRequired "Invalid identifier or password". createSession is limited per
//     identifier to 30 calls per 5 minutes and 300 per day (429 RateLimitExceeded with
//     RateLimit-Limit/Remaining/Reset/Policy headers; Reset is Unix seconds).
//   - Tokens are JWT-shaped and HMAC-signed with a key of the simulator's own; sessions live in
//     its memory (a restarted simulator forgets them: clients sign in again). Access tokens last
//     2 hours, refresh tokens 60 days, both by Config.Now. As the PDS does: an expired access
//     token is 400 ExpiredToken "Token has expired", a bad one 400 InvalidToken, none 401
//     AuthenticationRequired; refreshSession rotates the refresh token and refuses a used one.
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
//     2025, raised to 300 MB in 2026, see BlueskyOptions.MaxVideoBytes), 3 minutes, 25 videos or
//     10 GB per account and rolling day (getUploadLimits reports what is left; an upload beyond
//     is 400 InvalidRequest with this simulator's wording). An account marked EmailUnconfirmed
//     cannot upload: getUploadLimits says canUpload false with error unconfirmed_email, and
//     uploadVideo answers {"jobStatus":{"error":"unconfirmed_email",…}} with 400.
//   - uploadBlob takes up to MaxVideoBytes, records the upload and answers {blob}; with
//     Behavior reject it refuses a video with 400 InvalidRequest (the live PDS stores anything
//     and the video fails later; the simulator refuses where a test can see it).
//   - createRecord validates app.bsky.feed.post as the lexicon says (text ≤ 300 graphemes and
//     ≤ 3000 UTF-8 bytes, createdAt a datetime, ≤ 3 langs, facets with byteSlice ≥ 0 and
//     tag/link/mention features, tag ≤ 64 graphemes / 640 bytes) and the video embed (video/mp4
//     blob ≤ MaxVideoBytes that this account uploaded, aspectRatio ≥ 1), with the PDS's message
//     form "Invalid app.bsky.feed.post record: …". Stricter than the live PDS, so that client
//     bugs show: a facet must lie within the text on UTF-8 boundaries (the AppView silently drops
//     others), only posts with video embeds are accepted, except replies (a reply {root,
//     parent} of strong references needs no embed, but both must be posts the simulator knows,
//     with their CIDs, and root must be the parent's thread root; see bluesky_audience.go), and
//     rkey must be a TID. A record key already used is 500 InternalServerError, as the live PDS
//     answers (#3718). A post is recorded as published, a reply as a reply to its parent.
//   - Call faults use XRPC shapes: unavailable → 503 NotEnoughResources, auth → 400 InvalidToken
//     on authenticated calls and 401 AuthenticationRequired on createSession, rate_limit → 429
//     RateLimitExceeded with RateLimit-Reset one second ahead.
//
// Reads of figures and threads (app.bsky.feed.getPosts, getPostThread) are in
// bluesky_audience.go.
//
// Not reproduced: other collections and embeds, deleteRecord, putRecord, applyWrites, handle
// resolution, mentions' DIDs being real, the write-points rate limit, captions.

import (
	"bytes"
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
)

// BlueskyOptions tunes the simulator; the zero value is Bluesky's documented behaviour.
type BlueskyOptions struct {
	// Profiles overrides what getProfile and getUploadLimits know of an account, by account ID.
	Profiles map[string]BlueskyProfile
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
}

// BlueskyProfile is what the simulator knows of an account beyond its ID.
type BlueskyProfile struct {
	DisplayName string
	Avatar      string
	// EmailUnconfirmed accounts may not upload video.
	EmailUnconfirmed bool
}

// BlueskyPost is a record the simulator holds.
type BlueskyPost struct {
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

	author Account
}

// BlueskyDID is the DID of a simulated account: did:plc: and 24 base32 characters derived from
// the account id.
func BlueskyDID(account string) string {
	h := sha256.Sum256([]byte("reelay-sim-bluesky|" + account))
	return "did:plc:" + strings.ToLower(base32.StdEncoding.EncodeToString(h[:]))[:24]
}

// Bluesky simulates a PDS and the video service. It implements http.Handler.
type Bluesky struct {
	cfg  Config
	opts BlueskyOptions
	// did is this service's did:web (PDS and video service alike).
	did string
	key []byte

	mu       sync.Mutex
	tokens   map[string]*bskyToken     // jti → session token
	accounts map[string]bskyAccount    // DID → the account and last app password that signed in
	logins   map[string][]time.Time    // identifier → createSession calls within a day
	jobs     map[string]*bskyJob       // job id → job
	jobBySHA map[string]string         // DID|sha256 → job id
	blobs    map[string]*bskyBlob      // DID|cid → blob
	records  map[string]*BlueskyPost   // at:// URI → record
	daily    map[string][]bskyUploaded // DID → accepted uploads within a day
}

type bskyAccount struct {
	id       string
	password string
}

type bskyToken struct {
	password string
	did      string
	refresh  bool
	revoked  bool
}

type bskyJob struct {
	id        string
	account   Account
	did       string
	sha       string
	size      int64
	created   time.Time
	duration  time.Duration
	verdict   string // "" passes; otherwise the failure's error text
	completed bool
}

type bskyBlob struct {
	cid  string
	mime string
	size int64
	sha  string
}

type bskyUploaded struct {
	at   time.Time
	size int64
}

// NewBluesky returns the Bluesky simulator with Bluesky's documented behaviour.
func NewBluesky(cfg Config) http.Handler { return NewBlueskySim(cfg, BlueskyOptions{}) }

// NewBlueskySim returns the Bluesky simulator with options.
func NewBlueskySim(cfg Config, opts BlueskyOptions) *Bluesky {
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
	host := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		host = u.Host
	}
	return &Bluesky{
		cfg: cfg, opts: opts,
		did:      "did:web:" + strings.ReplaceAll(host, ":", "%3A"),
		key:      randomBytes(32),
		tokens:   map[string]*bskyToken{},
		accounts: map[string]bskyAccount{},
		logins:   map[string][]time.Time{},
		jobs:     map[string]*bskyJob{},
		jobBySHA: map[string]string{},
		blobs:    map[string]*bskyBlob{},
		records:  map[string]*BlueskyPost{},
		daily:    map[string][]bskyUploaded{},
	}
}

// Recorder returns the record of what the simulator received.
func (b *Bluesky) Recorder() *Recorder { return b.cfg.Recorder }

// ServiceDID is the did:web of the simulated PDS and video service.
func (b *Bluesky) ServiceDID() string { return b.did }

// Posts lists the records of an account, in no particular order.
func (b *Bluesky) Posts(accountID string) []BlueskyPost {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []BlueskyPost
	for _, p := range b.records {
		if p.Account == accountID {
			out = append(out, *p)
		}
	}
	return out
}

// ServeHTTP implements http.Handler.
func (b *Bluesky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
func (b *Bluesky) bskyFault(w http.ResponseWriter, acc Account, onAuth func()) bool {
	switch CallFault(acc.Behavior, b.cfg.Rand) {
	case FailUnavailable:
		bskyError(w, http.StatusServiceUnavailable, "NotEnoughResources", "Service Unavailable")
	case FailAuth:
		onAuth()
	case FailRateLimit:
		bskyRateLimited(w, 3000, 5*time.Minute, b.cfg.Now().Add(time.Second))
	default:
		return false
	}
	return true
}

// JWTs.

func b64(v []byte) string { return base64.RawURLEncoding.EncodeToString(v) }

func (b *Bluesky) mint(claims map[string]any) string {
	head, _ := json.Marshal(map[string]string{"typ": "at+jwt", "alg": "HS256"})
	body, _ := json.Marshal(claims)
	msg := b64(head) + "." + b64(body)
	m := hmac.New(sha256.New, b.key)
	m.Write([]byte(msg))
	return msg + "." + b64(m.Sum(nil))
}

type bskyClaims struct {
	Scope string `json:"scope"`
	Sub   string `json:"sub"`
	Iss   string `json:"iss"`
	Aud   string `json:"aud"`
	Lxm   string `json:"lxm"`
	Jti   string `json:"jti"`
	Exp   int64  `json:"exp"`
}

// parse verifies a token's signature and returns its claims; expired reports exp in the past.
func (b *Bluesky) parse(token string) (c bskyClaims, expired, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c, false, false
	}
	m := hmac.New(sha256.New, b.key)
	m.Write([]byte(parts[0] + "." + parts[1]))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, m.Sum(nil)) {
		return c, false, false
	}
	body, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(body, &c) != nil {
		return c, false, false
	}
	return c, !b.cfg.Now().Before(time.Unix(c.Exp, 0)), true
}

func bearer(r *http.Request) (string, bool) {
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t = strings.TrimSpace(t)
	return t, ok && t != ""
}

// issue mints an access and refresh token pair (under b.mu).
func (b *Bluesky) issue(password string, acc Account) (access, refresh string) {
	now := b.cfg.Now()
	did := BlueskyDID(acc.ID)
	aj, rj := randomHex(12), randomHex(12)
	b.tokens[aj] = &bskyToken{password: password, did: did}
	b.tokens[rj] = &bskyToken{password: password, did: did, refresh: true}
	b.accounts[did] = bskyAccount{id: acc.ID, password: password}
	access = b.mint(map[string]any{"scope": "com.atproto.appPass", "sub": did, "aud": b.did,
		"iat": now.Unix(), "exp": now.Add(b.opts.AccessTTL).Unix(), "jti": aj})
	refresh = b.mint(map[string]any{"scope": "com.atproto.refresh", "sub": did, "aud": b.did,
		"iat": now.Unix(), "exp": now.Add(b.opts.RefreshTTL).Unix(), "jti": rj})
	return access, refresh
}

func (b *Bluesky) profile(acc Account) BlueskyProfile {
	p := b.opts.Profiles[acc.ID]
	if p.DisplayName == "" {
		p.DisplayName = acc.Username
	}
	if p.Avatar == "" {
		p.Avatar = b.cfg.BaseURL + "/img/avatar/plain/" + BlueskyDID(acc.ID) + "/avatar@jpeg"
	}
	return p
}

func (b *Bluesky) sessionAnswer(acc Account, access, refresh string) map[string]any {
	did, handle := BlueskyDID(acc.ID), BlueskySandboxHandle(acc.ID)
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

func (b *Bluesky) createSession(w http.ResponseWriter, r *http.Request) {
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
	b.mu.Lock()
	calls := pruneBefore(b.logins[ident], now.Add(-24*time.Hour))
	recent := pruneBefore(calls, now.Add(-5*time.Minute))
	var limit int
	var window time.Duration
	var reset time.Time
	switch {
	case len(recent) >= b.opts.SessionsPer5Min:
		limit, window, reset = b.opts.SessionsPer5Min, 5*time.Minute, recent[0].Add(5*time.Minute)
	case len(calls) >= b.opts.SessionsPerDay:
		limit, window, reset = b.opts.SessionsPerDay, 24*time.Hour, calls[0].Add(24*time.Hour)
	}
	if limit == 0 {
		calls = append(calls, now)
	}
	b.logins[ident] = calls
	b.mu.Unlock()
	if limit > 0 {
		bskyRateLimited(w, limit, window, reset)
		return
	}
	refuse := func() {
		bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", "Invalid identifier or password")
	}
	var acc Account
	ok := b.cfg.Accounts != nil && *in.Password != ""
	if ok {
		acc, ok = b.cfg.Accounts.Resolve(r.Context(), *in.Password)
	}
	if !ok || (ident != strings.ToLower(BlueskySandboxHandle(acc.ID)) && ident != BlueskyDID(acc.ID)) {
		refuse()
		return
	}
	if b.bskyFault(w, acc, refuse) {
		return
	}
	b.mu.Lock()
	access, refresh := b.issue(*in.Password, acc)
	b.mu.Unlock()
	bskyJSON(w, http.StatusOK, b.sessionAnswer(acc, access, refresh))
}

func (b *Bluesky) refreshSession(w http.ResponseWriter, r *http.Request) {
	token, ok := bearer(r)
	if !ok {
		bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", "Authentication Required")
		return
	}
	c, expired, ok := b.parse(token)
	if !ok || c.Scope != "com.atproto.refresh" {
		bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified")
		return
	}
	if expired {
		bskyError(w, http.StatusBadRequest, "ExpiredToken", "Token has expired")
		return
	}
	b.mu.Lock()
	t := b.tokens[c.Jti]
	if t == nil || t.revoked {
		b.mu.Unlock()
		bskyError(w, http.StatusBadRequest, "ExpiredToken", "Token has been revoked")
		return
	}
	password := t.password
	b.mu.Unlock()
	acc, ok := b.cfg.Accounts.Resolve(r.Context(), password)
	if !ok {
		bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified")
		return
	}
	if b.bskyFault(w, acc, func() { bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified") }) {
		return
	}
	b.mu.Lock()
	t.revoked = true
	access, refresh := b.issue(password, acc)
	b.mu.Unlock()
	bskyJSON(w, http.StatusOK, b.sessionAnswer(acc, access, refresh))
}

// auth checks an access token; it answers and reports false when the call may not go on.
func (b *Bluesky) auth(w http.ResponseWriter, r *http.Request) (Account, bool) {
	token, ok := bearer(r)
	if !ok {
		bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", "Authentication Required")
		return Account{}, false
	}
	c, expired, ok := b.parse(token)
	switch {
	case !ok:
		bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified")
		return Account{}, false
	case c.Scope != "com.atproto.appPass" && c.Scope != "com.atproto.access":
		bskyError(w, http.StatusBadRequest, "InvalidToken", "Bad token scope")
		return Account{}, false
	case expired:
		bskyError(w, http.StatusBadRequest, "ExpiredToken", "Token has expired")
		return Account{}, false
	}
	b.mu.Lock()
	t := b.tokens[c.Jti]
	b.mu.Unlock()
	var acc Account
	if t != nil && b.cfg.Accounts != nil {
		acc, ok = b.cfg.Accounts.Resolve(r.Context(), t.password)
	}
	if t == nil || !ok || BlueskyDID(acc.ID) != c.Sub {
		bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified")
		return Account{}, false
	}
	if b.bskyFault(w, acc, func() { bskyError(w, http.StatusBadRequest, "InvalidToken", "Token could not be verified") }) {
		return Account{}, false
	}
	return acc, true
}

func (b *Bluesky) getServiceAuth(w http.ResponseWriter, r *http.Request) {
	acc, ok := b.auth(w, r)
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
		n, err := parseDigits(v)
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
	token := b.mint(map[string]any{"iss": BlueskyDID(acc.ID), "aud": aud, "lxm": lxm,
		"iat": now.Unix(), "exp": exp.Unix(), "jti": randomHex(12)})
	bskyJSON(w, http.StatusOK, map[string]string{"token": token})
}

// videoAuth checks a service token presented to the video service.
func (b *Bluesky) videoAuth(w http.ResponseWriter, r *http.Request, lxm string) (Account, string, bool) {
	unauthorized := func(msg string) { bskyError(w, http.StatusUnauthorized, "AuthenticationRequired", msg) }
	token, ok := bearer(r)
	if !ok {
		unauthorized("missing authorization")
		return Account{}, "", false
	}
	c, expired, ok := b.parse(token)
	switch {
	case !ok || c.Iss == "":
		unauthorized("invalid token: could not verify the token")
		return Account{}, "", false
	case expired:
		unauthorized("invalid token: token has expired")
		return Account{}, "", false
	case c.Aud != b.did:
		unauthorized(fmt.Sprintf("invalid token: invalid token audience %q, should be %q", c.Aud, b.did))
		return Account{}, "", false
	case c.Lxm != lxm:
		unauthorized(fmt.Sprintf("invalid token: invalid token lxm %q, should be %q", c.Lxm, lxm))
		return Account{}, "", false
	}
	b.mu.Lock()
	known, ok2 := b.accounts[c.Iss]
	b.mu.Unlock()
	var acc Account
	if ok2 && b.cfg.Accounts != nil {
		acc, ok = b.cfg.Accounts.Resolve(r.Context(), known.password)
	}
	known2 := ok2
	if !known2 || !ok || BlueskyDID(acc.ID) != c.Iss {
		unauthorized("invalid token: unknown issuer")
		return Account{}, "", false
	}
	if b.bskyFault(w, acc, func() { unauthorized("invalid token: could not verify the token") }) {
		return Account{}, "", false
	}
	return acc, c.Iss, true
}

// remaining reports the daily allowance left (under b.mu).
func (b *Bluesky) remaining(did string, now time.Time) (videos int, bytes int64) {
	var kept []bskyUploaded
	var used int64
	for _, u := range b.daily[did] {
		if u.at.After(now.Add(-24 * time.Hour)) {
			kept = append(kept, u)
			used += u.size
		}
	}
	b.daily[did] = kept
	return max(b.opts.VideosPerDay-len(kept), 0), max(b.opts.VideoBytesPerDay-used, 0)
}

func (b *Bluesky) getUploadLimits(w http.ResponseWriter, r *http.Request) {
	acc, did, ok := b.videoAuth(w, r, "app.bsky.video.getUploadLimits")
	if !ok {
		return
	}
	b.mu.Lock()
	videos, bytes := b.remaining(did, b.cfg.Now())
	b.mu.Unlock()
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

func (b *Bluesky) uploadVideo(w http.ResponseWriter, r *http.Request) {
	defer drain(r.Body)
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
	b.mu.Lock()
	videos, left := b.remaining(did, b.cfg.Now())
	b.mu.Unlock()
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
	b.mu.Lock()
	if id, ok := b.jobBySHA[did+"|"+sha]; ok {
		j := b.jobs[id]
		b.advance(j, now)
		if j.verdict == "" {
			state := b.stateOf(j, now)
			b.mu.Unlock()
			bskyJSON(w, http.StatusConflict, map[string]string{"did": did, "error": "already_exists",
				"jobId": j.id, "message": "Video already processed", "state": state})
			return
		}
	}
	b.mu.Unlock()

	verdict := ""
	info, perr := media.Probe(f, size)
	switch {
	case perr != nil || !slices.Contains([]string{"mp4", "mov", "webm"}, info.Kind.Name):
		verdict = "unsupported video format"
	case info.Duration > b.opts.MaxVideoDuration:
		verdict = fmt.Sprintf("video is too long: %s, the maximum is %s", info.Duration, b.opts.MaxVideoDuration)
	case acc.Behavior.Fail == FailReject:
		verdict = "rejected"
	}
	processing := b.opts.DefaultProcessing
	if ms := acc.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	j := &bskyJob{id: bskyJobID(), account: acc, did: did, sha: sha, size: size, created: now, duration: processing, verdict: verdict}
	b.cfg.Recorder.RecordUpload(Upload{Account: acc.ID, Bytes: size, SHA256: sha})
	b.mu.Lock()
	b.jobs[j.id] = j
	b.jobBySHA[did+"|"+sha] = j.id
	b.daily[did] = append(b.daily[did], bskyUploaded{at: now, size: size})
	b.advance(j, now)
	state := b.stateOf(j, now)
	b.mu.Unlock()
	bskyJSON(w, http.StatusOK, map[string]string{"did": did, "jobId": j.id, "state": state})
}

// bskyJobID looks like the video service's job ids (20 lower-case base32hex characters).
func bskyJobID() string {
	return strings.ToLower(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(randomBytes(12)))[:20]
}

// advance completes a job whose processing time is over and stores its blob (under b.mu).
func (b *Bluesky) advance(j *bskyJob, now time.Time) {
	if j.completed || now.Before(j.created.Add(j.duration)) {
		return
	}
	j.completed = true
	if j.verdict == "" {
		cid := bskyCID(0x55, j.sha)
		b.blobs[j.did+"|"+cid] = &bskyBlob{cid: cid, mime: "video/mp4", size: j.size, sha: j.sha}
	}
}

func (b *Bluesky) stateOf(j *bskyJob, _ time.Time) string {
	switch {
	case !j.completed:
		return "JOB_STATE_ENCODING"
	case j.verdict != "":
		return "JOB_STATE_FAILED"
	}
	return "JOB_STATE_COMPLETED"
}

func (b *Bluesky) getJobStatus(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("jobId")
	if id == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Params must have the property "jobId"`)
		return
	}
	b.mu.Lock()
	j, ok := b.jobs[id]
	b.mu.Unlock()
	if !ok {
		bskyError(w, http.StatusNotFound, "NotFound", "job not found")
		return
	}
	if b.bskyFault(w, j.account, func() { bskyError(w, http.StatusServiceUnavailable, "NotEnoughResources", "Service Unavailable") }) {
		return
	}
	now := b.cfg.Now()
	b.mu.Lock()
	b.advance(j, now)
	state := b.stateOf(j, now)
	b.mu.Unlock()
	js := map[string]any{"jobId": j.id, "did": j.did, "state": state}
	switch state {
	case "JOB_STATE_ENCODING":
		js["progress"] = min(99, int(100*now.Sub(j.created)/max(j.duration, 1)))
	case "JOB_STATE_FAILED":
		js["error"] = "video processing error for job: " + j.id
		js["message"] = "Failed to process video"
		if j.verdict != "rejected" {
			js["message"] = "Failed to process video: " + j.verdict
		}
	default:
		js["progress"] = 100
		js["blob"] = bskyBlobJSON(bskyCID(0x55, j.sha), "video/mp4", j.size)
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

func (b *Bluesky) uploadBlob(w http.ResponseWriter, r *http.Request) {
	defer drain(r.Body)
	acc, ok := b.auth(w, r)
	if !ok {
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Content-Type is required")
		return
	}
	if r.ContentLength > b.opts.MaxVideoBytes {
		bskyError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request entity too large")
		return
	}
	_, size, sha, tooLarge, err := receive(r, b.opts.MaxVideoBytes, false)
	switch {
	case err != nil || (r.ContentLength >= 0 && size != r.ContentLength):
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "the upload was interrupted")
		return
	case tooLarge:
		bskyError(w, http.StatusRequestEntityTooLarge, "PayloadTooLarge", "request entity too large")
		return
	case strings.HasPrefix(mt, "video/") && acc.Behavior.Fail == FailReject:
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Failed to process video")
		return
	}
	b.cfg.Recorder.RecordUpload(Upload{Account: acc.ID, Bytes: size, SHA256: sha})
	cid := bskyCID(0x55, sha)
	did := BlueskyDID(acc.ID)
	b.mu.Lock()
	b.blobs[did+"|"+cid] = &bskyBlob{cid: cid, mime: mt, size: size, sha: sha}
	b.mu.Unlock()
	bskyJSON(w, http.StatusOK, map[string]any{"blob": bskyBlobJSON(cid, mt, size)})
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
func (b *Bluesky) checkPost(p bskyPostIn, validate bool) string {
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

// checkEmbed validates the video embed and finds its blob (under b.mu); it returns the
// status, error name and message of a refusal, or the blob.
func (b *Bluesky) checkEmbed(did string, raw json.RawMessage) (*bskyBlob, int, string, string) {
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
	v := e.Video
	if v == nil {
		return invalid(`Record/embed must have the property "video"`)
	}
	if v.Type != "blob" || v.Ref == nil || v.Ref.Link == "" || v.Size == nil || v.MimeType == "" {
		return invalid("Record/embed/video should be a blob ref")
	}
	if v.MimeType != "video/mp4" {
		return invalid(fmt.Sprintf("Record/embed/video mimeType (%s) does not match accepted types: video/mp4", v.MimeType))
	}
	if *v.Size > b.opts.MaxVideoBytes {
		return invalid(fmt.Sprintf("Record/embed/video is too big (%d bytes, the maximum is %d)", *v.Size, b.opts.MaxVideoBytes))
	}
	if e.AspectRatio != nil && (e.AspectRatio.Width == nil || e.AspectRatio.Height == nil || *e.AspectRatio.Width < 1 || *e.AspectRatio.Height < 1) {
		return invalid("Record/embed/aspectRatio width and height must be integers of at least 1")
	}
	if e.Alt != nil && (!bskyAltLimit.Check(*e.Alt) || len(*e.Alt) > 10000) {
		return invalid("Record/embed/alt must not be longer than 1000 graphemes")
	}
	bl, ok := b.blobs[did+"|"+v.Ref.Link]
	if !ok {
		return nil, http.StatusBadRequest, "InvalidRequest", "Could not find blob: " + v.Ref.Link
	}
	if bl.mime != v.MimeType || bl.size != *v.Size {
		return invalid("Record/embed/video does not match the stored blob's mimeType and size")
	}
	return bl, 0, "", ""
}

func (b *Bluesky) createRecord(w http.ResponseWriter, r *http.Request) {
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
	did, handle := BlueskyDID(acc.ID), BlueskySandboxHandle(acc.ID)
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
	now := b.cfg.Now()
	b.mu.Lock()
	var bl *bskyBlob
	if post.Reply == nil || len(post.Embed) > 0 && string(post.Embed) != "null" {
		var status int
		var name, msg string
		if bl, status, name, msg = b.checkEmbed(did, post.Embed); status != 0 {
			b.mu.Unlock()
			bskyError(w, status, name, msg)
			return
		}
	}
	if post.Reply != nil {
		if msg := b.checkReplyLocked(*post.Reply, now); msg != "" {
			b.mu.Unlock()
			bskyError(w, http.StatusBadRequest, "InvalidRequest", "Invalid app.bsky.feed.post record: "+msg)
			return
		}
	}
	if _, exists := b.records[uri]; exists {
		b.mu.Unlock()
		// The live PDS's MST refuses the key with an unhandled error (bluesky-social/atproto#3718).
		bskyError(w, http.StatusInternalServerError, "InternalServerError", "Internal Server Error")
		return
	}
	var canon bytes.Buffer
	_ = json.Compact(&canon, in.Record)
	sum := sha256.Sum256(canon.Bytes())
	p := &BlueskyPost{Account: acc.ID, URI: uri, CID: bskyCID(0x71, hex.EncodeToString(sum[:])), Rkey: rkey,
		Record: json.RawMessage(canon.Bytes()), At: now, author: acc}
	if bl != nil {
		p.SHA256 = bl.sha
	}
	if post.Text != nil {
		p.Text = *post.Text
	}
	if post.Reply != nil {
		p.ReplyRoot, p.ReplyParent = post.Reply.Root.URI, post.Reply.Parent.URI
	}
	b.records[uri] = p
	b.mu.Unlock()
	if p.ReplyParent != "" {
		b.cfg.Recorder.RecordReply(Reply{Account: acc.ID, CommentID: p.ReplyParent, Text: p.Text})
	} else {
		b.cfg.Recorder.RecordPublished(Published{Account: acc.ID, ID: uri,
			URL: "https://bsky.app/profile/" + handle + "/post/" + rkey, SHA256: p.SHA256, Text: p.Text})
	}
	commit := sha256.Sum256([]byte(uri + p.CID))
	bskyJSON(w, http.StatusOK, map[string]any{"uri": uri, "cid": p.CID,
		"commit":           map[string]string{"cid": bskyCID(0x71, hex.EncodeToString(commit[:])), "rev": bskyNewTID(b.cfg.Now())},
		"validationStatus": "valid"})
}

// actorDID resolves a DID or handle of an account that has signed in (under b.mu).
func (b *Bluesky) actorDID(actor string) (bskyAccount, string, bool) {
	if a, ok := b.accounts[actor]; ok {
		return a, actor, true
	}
	for did, a := range b.accounts {
		if strings.EqualFold(BlueskySandboxHandle(a.id), actor) {
			return a, did, true
		}
	}
	return bskyAccount{}, "", false
}

func (b *Bluesky) getRecord(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	repo, coll, rkey := q.Get("repo"), q.Get("collection"), q.Get("rkey")
	if repo == "" || coll == "" || rkey == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Params must have the properties "repo", "collection" and "rkey"`)
		return
	}
	b.mu.Lock()
	a, did, ok := b.actorDID(repo)
	b.mu.Unlock()
	var acc Account
	if ok {
		acc, ok = b.cfg.Accounts.Resolve(r.Context(), a.password)
	}
	if !ok {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Could not find repo: "+repo)
		return
	}
	if b.bskyFault(w, acc, func() { bskyError(w, http.StatusServiceUnavailable, "NotEnoughResources", "Service Unavailable") }) {
		return
	}
	uri := "at://" + did + "/" + coll + "/" + rkey
	b.mu.Lock()
	p, ok := b.records[uri]
	b.mu.Unlock()
	if !ok {
		bskyError(w, http.StatusBadRequest, "RecordNotFound", "Could not locate record: "+uri)
		return
	}
	bskyJSON(w, http.StatusOK, map[string]any{"uri": p.URI, "cid": p.CID, "value": p.Record})
}

func (b *Bluesky) getProfile(w http.ResponseWriter, r *http.Request) {
	if _, ok := b.auth(w, r); !ok {
		return
	}
	actor := r.URL.Query().Get("actor")
	if actor == "" {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", `Params must have the property "actor"`)
		return
	}
	b.mu.Lock()
	a, did, ok := b.actorDID(actor)
	posts := 0
	for _, p := range b.records {
		if ok && strings.HasPrefix(p.URI, "at://"+did+"/") {
			posts++
		}
	}
	b.mu.Unlock()
	var acc Account
	if ok {
		acc, ok = b.cfg.Accounts.Resolve(r.Context(), a.password)
	}
	if !ok {
		bskyError(w, http.StatusBadRequest, "InvalidRequest", "Profile not found")
		return
	}
	prof := b.profile(acc)
	bskyJSON(w, http.StatusOK, map[string]any{
		"did": did, "handle": BlueskySandboxHandle(acc.ID), "displayName": prof.DisplayName, "avatar": prof.Avatar,
		"followersCount": 0, "followsCount": 0, "postsCount": posts,
		"indexedAt": b.cfg.Now().UTC().Format(time.RFC3339), "createdAt": "2024-01-01T00:00:00.000Z",
	})
}

// bskyNewTID returns a TID for the time now.
func bskyNewTID(now time.Time) string { return bskyTIDAt(now, uint64(randomBytes(1)[0])) }

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

var _ http.Handler = (*Bluesky)(nil)
