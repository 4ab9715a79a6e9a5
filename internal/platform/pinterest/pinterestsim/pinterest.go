// Package pinterestsim is the simulator of Pinterest's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package pinterestsim

// Pinterest API v5 simulator: video Pins.
//
// Sources: Pinterest's v5 OpenAPI description (media/create, media/get, pins/create, pins/get,
// boards/list, boards/list_pins, user_account/get and their schemas: MediaUpload,
// MediaUploadDetails, PinCreate, PinMediaSourceVideoID, Board, Account, Error, Paginated),
// developers.pinterest.com's rate-limit page, the generated SDKs' model docs
// (cover_image_key_frame_time is "Keyframe timestamp for cover image (seconds)"), and Amazon
// S3's POST Object (browser-based upload) reference for the upload itself. Copies were read
// through the search tool. What the pages leave open, and how it is decided here:
//
//   - Registering (POST /v5/media {"media_type":"video"}) answers 201 with media_id (digits),
//     upload_url and upload_parameters: x-amz-date, x-amz-signature, x-amz-security-token,
//     x-amz-algorithm, key, policy, x-amz-credential and Content-Type ("multipart/form-data"),
//     the eight fields of Pinterest's example. upload_url is this simulator's own S3-style bucket
//     root, Config.BaseURL + "/_upload/".
//   - The upload is an S3 browser POST: multipart/form-data with the fields first and the file
//     last (S3 ignores fields after the file, so a file sent first leaves the fields missing).
//     The policy is a base64 JSON S3 POST policy (expiration and conditions) and
//     x-amz-signature an HMAC of it under a key made for that registration alone and not kept
//     (the simulator keeps a hash of the policy with its signature): every condition is
//     checked as S3 checks it (each field present and equal, no extra field, the policy not
//     expired, the file's size within content-length-range). Answers are S3's: 204 with ETag
//     and Location, or an XML <Error> with S3's codes (AccessDenied, SignatureDoesNotMatch,
//     EntityTooLarge, InvalidArgument, MissingContentLength, ServiceUnavailable). How long
//     Pinterest's policies last is not documented: one hour here (Options.UploadTTL).
//   - GET /v5/media/{media_id} answers registered until the upload is complete, then
//     processing for Behavior.ProcessingMS (< 0: Options.DefaultProcessing, 3 s),
//     then succeeded or failed. The video is checked with media.Probe after the upload: MP4 or
//     MOV, 4 s to 15 min (Pinterest's video specifications); the reject behavior fails it.
//     Pinterest gives no reason with failed, and neither does this simulator.
//   - POST /v5/pins takes board_id (digits, an existing board of the account: else 404 code
//     40 "Board not found."), title ≤ 100, description ≤ 800, link ≤ 2048 (http or https),
//     alt_text ≤ 500 and media_source {source_type:"video_id", media_id, and a cover}. A video
//     Pin needs a cover (integrators report a 400 without one): exactly one of cover_image_url
//     (fetched with Config.PullClient; it must be a JPEG or PNG), cover_image_data with
//     cover_image_content_type, or cover_image_key_frame_time (seconds, within the video).
//     A media that is not succeeded yet is refused with 400; the message is this simulator's.
//     201 answers the Pin (id, created_at, board_id, title, description, link, media, ...).
//   - GET /v5/boards/{board_id} answers the Board (404 code 40 for another account's or an
//     unknown board). GET /v5/boards and GET /v5/boards/{board_id}/pins page with bookmark and page_size
//     (1–250, default 25) and answer {"items":[...],"bookmark":...}; board Pins come newest
//     first. Each account has two boards unless Options.Boards says otherwise:
//     DefaultBoards derives them (numeric ids) from the account id.
//   - GET /v5/user_account answers account_type, id, username, profile_image, website_url,
//     about, business_name and the counts.
//   - Errors are {"code":N,"message":"...","status":"failure"} (the shape Pinterest sends):
//     401 code 2 "Authentication failed." for an unknown token; 429 code 8 with
//     X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (seconds until the window
//     frees a request; Pinterest sends no Retry-After); faults render as 503 (unavailable),
//     401 code 2 (auth) and 429 code 8 with X-RateLimit-Reset: 1 (rate_limit). Standard access
//     limits per user and minute: org_write (media/create, pins/create) 100, org_read 1000,
//     counted by each process serving the simulator.
//   - Published records Text as the Pin's title and description, separated by a blank line.
//
// A Trial app (Behavior.AppAccess "trial") may not create Pins: this simulator is Pinterest's
// production API, and POST /v5/pins answers 403 code 29 naming the API Sandbox
// (https://developers.pinterest.com/docs/key-concepts/access-tiers/,
// https://developers.pinterest.com/docs/developer-tools/sandbox/).
//
// Not reproduced: image and carousel Pins, board sections (board_section_id is refused),
// Business Access (ad_account_id), Trial access's daily caps. Pin analytics are in
// audience.go.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"mime"
	"mime/multipart"
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
	"github.com/reelay/reelay/internal/platform/sim"
)

// Pinterest's documented limits.
const (
	pinterestMaxVideoBytes = 2 << 30 // "Max file size: 2GB"
	pinterestMinDuration   = 4 * time.Second
	pinterestMaxDuration   = 15 * time.Minute
	// Width/height bounds of a standard width video Pin: from 1:2 to 1.91:1.
	pinterestMinAspect       = 1.0 / 2
	pinterestMaxAspect       = 1.91
	pinterestTitleMax        = 100  // PinCreate.title maxLength
	pinterestDescriptionMax  = 800  // PinCreate.description maxLength
	pinterestLinkMax         = 2048 // PinCreate.link maxLength
	pinterestAltTextMax      = 500  // PinCreate.alt_text maxLength
	pinterestBucket          = "pinterest-media-upload"
	pinterestMaxCoverBytes   = 20 << 20
	pinterestWritesPerMinute = 100
	pinterestReadsPerMinute  = 1000
)

// Media upload statuses of GET /v5/media/{media_id}.
const (
	Registered = "registered"
	Processing = "processing"
	Succeeded  = "succeeded"
	Failed     = "failed"
)

// Board is one board of a simulated account.
type Board struct {
	ID      string
	Name    string
	Privacy string // PUBLIC, PROTECTED or SECRET
}

// Options tunes the simulator; the zero value is Pinterest's documented behaviour.
type Options struct {
	// Boards overrides an account's boards (by account ID); DefaultBoards otherwise.
	Boards map[string][]Board
	// DefaultProcessing is the processing time when Behavior.ProcessingMS < 0 (0: 3 s).
	DefaultProcessing time.Duration
	// UploadTTL is how long an upload policy stays valid (0: 1 h).
	UploadTTL time.Duration
	// MaxVideoBytes is the policy's content-length-range maximum (0: 2 GiB).
	MaxVideoBytes int64
	// WritesPerMinute and ReadsPerMinute are the per-user limits of the org_write and
	// org_read categories (0: 100 and 1000).
	WritesPerMinute, ReadsPerMinute int
	// NoBetaAccess is an app without access to Pinterest's beta endpoints: multi-Pin analytics
	// answer 403.
	NoBetaAccess bool
}

// DefaultBoards returns the boards a sandbox account has: two, with numeric ids
// derived from the account id, so that they are the same on every server start.
func DefaultBoards(accountID string) []Board {
	id := func(n int) string {
		h := fnv.New64a()
		fmt.Fprintf(h, "pinterest-board|%s|%d", accountID, n)
		return strconv.FormatUint(100_000_000_000_000_000+h.Sum64()%800_000_000_000_000_000, 10)
	}
	return []Board{
		{ID: id(1), Name: "Videos", Privacy: "PUBLIC"},
		{ID: id(2), Name: "Drafts", Privacy: "SECRET"},
	}
}

// Pin is what the simulator knows of one Pin (for tests).
type Pin struct {
	ID, Account, BoardID, Title, Description, Link, AltText, MediaID string
	CoverImageURL                                                    string
	CoverKeyFrame                                                    *float64
	CreatedAt                                                        time.Time
	SHA256                                                           string
}

// Sim simulates Pinterest API v5. It implements http.Handler.
//
// Its media registrations and Pins are records of Config.State, so that any process serving
// the simulator goes on with them; an upload is one request, whose bytes are checked as they
// arrive and kept nowhere after. The per-minute rate limits are counted in this process: a
// deviation (several processes allow a user its limits each), as they refill within the
// minute.
type Sim struct {
	cfg      sim.Config
	opts     Options
	basePath string

	mu    sync.Mutex
	calls map[string][]time.Time // account|category → request times within the last minute
}

// The kinds of the Pinterest simulator's records.
const (
	// pinterestMediaKind is a media registration (pinterestMedia) by its media_id, kept until
	// retention: Pinterest documents no end to a media_id (its upload policy ends on its own).
	pinterestMediaKind = "media"
	// pinterestPinKind is a Pin (pinterestPin) by its id, kept until retention.
	pinterestPinKind = "pin"
)

func pinterestKey(kind, id string) sim.Key {
	return sim.Key{Platform: platform.Pinterest, Kind: kind, ID: id}
}

// pinterestMedia is what the simulator keeps of a media registration.
type pinterestMedia struct {
	ID         string      `json:"id"`
	Key        string      `json:"key"` // the S3 key its upload policy names
	Account    sim.Account `json:"account"`
	Registered time.Time   `json:"registered"`
	// PolicySHA is the SHA-256 of the upload policy handed out and of its signature: the
	// signature is a credential, good with that policy only (see pinterestPolicySHA).
	PolicySHA []byte `json:"policy_sha"`

	Uploaded   bool          `json:"uploaded,omitempty"`
	UploadedAt time.Time     `json:"uploaded_at,omitzero"`
	Processing time.Duration `json:"processing,omitempty"`
	Verdict    string        `json:"verdict,omitempty"` // "" when the video passes
	SHA        string        `json:"sha,omitempty"`
	Size       int64         `json:"size,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	Width      int           `json:"width,omitempty"`
	Height     int           `json:"height,omitempty"`
}

// pinterestPin is what the simulator keeps of a Pin: what it was created with, and the
// picture of its video.
type pinterestPin struct {
	ID            string        `json:"id"`
	Account       string        `json:"account"`
	BoardID       string        `json:"board_id"`
	Title         string        `json:"title,omitempty"`
	Description   string        `json:"description,omitempty"`
	Link          string        `json:"link,omitempty"`
	AltText       string        `json:"alt_text,omitempty"`
	MediaID       string        `json:"media_id"`
	CoverImageURL string        `json:"cover_image_url,omitempty"`
	CoverKeyFrame *float64      `json:"cover_key_frame,omitempty"`
	CreatedAt     time.Time     `json:"created_at"`
	SHA256        string        `json:"sha256"`
	Duration      time.Duration `json:"duration"`
	Width         int           `json:"width"`
	Height        int           `json:"height"`
}

func (pin pinterestPin) report() Pin {
	return Pin{ID: pin.ID, Account: pin.Account, BoardID: pin.BoardID, Title: pin.Title, Description: pin.Description,
		Link: pin.Link, AltText: pin.AltText, MediaID: pin.MediaID, CoverImageURL: pin.CoverImageURL,
		CoverKeyFrame: pin.CoverKeyFrame, CreatedAt: pin.CreatedAt, SHA256: pin.SHA256}
}

// New returns the Pinterest simulator with Pinterest's documented behaviour.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the Pinterest simulator with options.
func NewSim(cfg sim.Config, opts Options) *Sim {
	cfg.Normalize()
	if opts.DefaultProcessing <= 0 {
		opts.DefaultProcessing = 3 * time.Second
	}
	if opts.UploadTTL <= 0 {
		opts.UploadTTL = time.Hour
	}
	if opts.MaxVideoBytes <= 0 {
		opts.MaxVideoBytes = pinterestMaxVideoBytes
	}
	if opts.WritesPerMinute <= 0 {
		opts.WritesPerMinute = pinterestWritesPerMinute
	}
	if opts.ReadsPerMinute <= 0 {
		opts.ReadsPerMinute = pinterestReadsPerMinute
	}
	basePath := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		basePath = strings.TrimRight(u.Path, "/")
	}
	return &Sim{cfg: cfg, opts: opts, basePath: basePath, calls: map[string][]time.Time{}}
}

// Recorder returns the record of what the simulator received.
func (p *Sim) Recorder() *sim.Recorder { return p.cfg.Recorder }

// Pins lists the Pins of an account, oldest first (an error of its State panics: it is for
// tests).
func (p *Sim) Pins(accountID string) []Pin {
	pins, err := p.accountPins(context.Background(), accountID)
	if err != nil {
		panic(err)
	}
	out := make([]Pin, len(pins))
	for i, pin := range pins {
		out[i] = pin.report()
	}
	return out
}

// accountPins reads an account's Pins, oldest first.
func (p *Sim) accountPins(ctx context.Context, accountID string) ([]pinterestPin, error) {
	pins, err := sim.ListJSON[pinterestPin](ctx, p.cfg.State, pinterestKey(pinterestPinKind, ""), accountID)
	slices.SortStableFunc(pins, func(a, b pinterestPin) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return pins, err
}

// MediaStatus reports the status of a media upload ("" when unknown; an error of its State
// panics).
func (p *Sim) MediaStatus(mediaID string) string {
	m, _, found, err := sim.Load[pinterestMedia](context.Background(), p.cfg.State, pinterestKey(pinterestMediaKind, mediaID))
	if err != nil {
		panic(err)
	}
	if !found {
		return ""
	}
	return pinterestStatus(m, p.cfg.Now())
}

// pinterestInternal answers a failure of the simulator's own (its State) as Pinterest answers
// its internal errors.
func pinterestInternal(w http.ResponseWriter) {
	pinterestError(w, http.StatusInternalServerError, 500, "Something went wrong on our end. Sorry about that.")
}

// ServeHTTP implements http.Handler. Paths are the platform's, below Config.BaseURL, with or
// without BaseURL's path in front.
func (p *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if p.basePath != "" {
		if rest, ok := strings.CutPrefix(path, p.basePath); ok && (rest == "" || rest[0] == '/') {
			path = rest
		}
	}
	if path == "/_upload/" || path == "/_upload" {
		p.upload(w, r)
		return
	}
	rest, ok := strings.CutPrefix(path, "/v5/")
	if !ok {
		pinterestError(w, http.StatusNotFound, 404, "Not found.")
		return
	}
	seg := strings.Split(rest, "/")
	switch {
	case r.Method == http.MethodGet && rest == "user_account":
		p.api(w, r, "org_read", p.userAccount)
	case r.Method == http.MethodGet && rest == "boards":
		p.api(w, r, "org_read", p.listBoards)
	case r.Method == http.MethodGet && len(seg) == 2 && seg[0] == "boards":
		p.api(w, r, "org_read", func(w http.ResponseWriter, r *http.Request, acc sim.Account) { p.getBoard(w, r, acc, seg[1]) })
	case r.Method == http.MethodGet && len(seg) == 3 && seg[0] == "boards" && seg[2] == "pins":
		p.api(w, r, "org_read", func(w http.ResponseWriter, r *http.Request, acc sim.Account) { p.listBoardPins(w, r, acc, seg[1]) })
	case r.Method == http.MethodPost && rest == "media":
		p.api(w, r, "org_write", p.registerMedia)
	case r.Method == http.MethodGet && len(seg) == 2 && seg[0] == "media":
		p.api(w, r, "org_read", func(w http.ResponseWriter, r *http.Request, acc sim.Account) { p.getMedia(w, r, acc, seg[1]) })
	case r.Method == http.MethodPost && rest == "pins":
		p.api(w, r, "org_write", p.createPin)
	case r.Method == http.MethodGet && rest == "pins/analytics":
		p.api(w, r, "org_read", p.multiPinAnalytics)
	case r.Method == http.MethodGet && len(seg) == 3 && seg[0] == "pins" && seg[2] == "analytics":
		p.api(w, r, "org_read", func(w http.ResponseWriter, r *http.Request, acc sim.Account) { p.pinAnalytics(w, r, acc, seg[1]) })
	case r.Method == http.MethodGet && len(seg) == 2 && seg[0] == "pins":
		p.api(w, r, "org_read", func(w http.ResponseWriter, r *http.Request, acc sim.Account) { p.getPin(w, r, acc, seg[1]) })
	default:
		pinterestError(w, http.StatusNotFound, 404, "Not found.")
	}
}

// api does what every API endpoint shares: the bearer token, the account's faults and the
// per-user rate limit of the endpoint's category.
func (p *Sim) api(w http.ResponseWriter, r *http.Request, category string, h func(http.ResponseWriter, *http.Request, sim.Account)) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	var acc sim.Account
	if ok && token != "" && p.cfg.Accounts != nil {
		acc, ok = p.cfg.Accounts.Resolve(r.Context(), token)
	} else {
		ok = false
	}
	if !ok {
		pinterestError(w, http.StatusUnauthorized, 2, "Authentication failed.")
		return
	}
	switch sim.CallFault(acc.Behavior, p.cfg.Rand) {
	case sim.FailUnavailable:
		pinterestError(w, http.StatusServiceUnavailable, 503, "Pinterest is temporarily unavailable. Please try again later.")
		return
	case sim.FailAuth:
		pinterestError(w, http.StatusUnauthorized, 2, "Authentication failed.")
		return
	case sim.FailRateLimit:
		pinterestRateLimited(w, 1, p.opts.WritesPerMinute)
		return
	}
	limit := p.opts.ReadsPerMinute
	if category == "org_write" {
		limit = p.opts.WritesPerMinute
	}
	now := p.cfg.Now()
	p.mu.Lock()
	k := acc.ID + "|" + category
	times := sim.PruneBefore(p.calls[k], now.Add(-time.Minute))
	if len(times) >= limit {
		p.calls[k] = times
		wait := times[0].Add(time.Minute).Sub(now)
		p.mu.Unlock()
		pinterestRateLimited(w, max(int((wait+time.Second-1)/time.Second), 1), limit)
		return
	}
	p.calls[k] = append(times, now)
	p.mu.Unlock()
	h(w, r, acc)
}

func pinterestRateLimited(w http.ResponseWriter, resetSeconds, limit int) {
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(limit))
	w.Header().Set("X-RateLimit-Remaining", "0")
	w.Header().Set("X-RateLimit-Reset", strconv.Itoa(resetSeconds))
	pinterestError(w, http.StatusTooManyRequests, 8,
		"This request exceeded a rate limit. This can happen if the client exceeds one of the published rate limits or if multiple write operations are applied to an object within a short time window.")
}

func pinterestError(w http.ResponseWriter, status, code int, msg string) {
	writePinterestJSON(w, status, map[string]any{"code": code, "message": msg, "status": "failure"})
}

func writePinterestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (p *Sim) boardsOf(acc sim.Account) []Board {
	if b, ok := p.opts.Boards[acc.ID]; ok {
		return b
	}
	return DefaultBoards(acc.ID)
}

func (p *Sim) usernameOf(acc sim.Account) string {
	if acc.Username != "" {
		return acc.Username
	}
	return strings.ToLower(strings.ReplaceAll(acc.ID, "_", ""))
}

func (p *Sim) userAccount(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	pins, err := p.cfg.State.Count(r.Context(), platform.Pinterest, pinterestPinKind, acc.ID)
	if err != nil {
		pinterestInternal(w)
		return
	}
	writePinterestJSON(w, http.StatusOK, map[string]any{
		"account_type":    "BUSINESS",
		"id":              acc.ID,
		"username":        p.usernameOf(acc),
		"profile_image":   p.cfg.BaseURL + "/_avatar/" + url.PathEscape(acc.ID) + ".jpg",
		"website_url":     "",
		"about":           "",
		"business_name":   p.usernameOf(acc),
		"board_count":     len(p.boardsOf(acc)),
		"pin_count":       pins,
		"follower_count":  0,
		"following_count": 0,
		"monthly_views":   0,
	})
}

// page reads bookmark and page_size: the bookmark is the offset, base64-encoded, as opaque as
// Pinterest's. It answers false after writing a 400.
func pinterestPage(w http.ResponseWriter, q url.Values) (offset, size int, ok bool) {
	size = 25
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 250 {
			pinterestError(w, http.StatusBadRequest, 1, "Invalid parameters: page_size must be an integer from 1 to 250.")
			return 0, 0, false
		}
		size = n
	}
	if b := q.Get("bookmark"); b != "" {
		raw, err := base64.RawURLEncoding.DecodeString(b)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), "o:"))
		if err != nil || err2 != nil || n < 0 || !strings.HasPrefix(string(raw), "o:") {
			pinterestError(w, http.StatusBadRequest, 1, "Invalid bookmark.")
			return 0, 0, false
		}
		offset = n
	}
	return offset, size, true
}

func pinterestBookmark(next, total int) any {
	if next >= total {
		return nil
	}
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(next)))
}

// boardPinCounts counts an account's Pins on each of its boards.
func (p *Sim) boardPinCounts(ctx context.Context, acc sim.Account) (map[string]int, error) {
	pins, err := p.accountPins(ctx, acc.ID)
	counts := map[string]int{}
	for _, pin := range pins {
		counts[pin.BoardID]++
	}
	return counts, err
}

// boardJSON is the Board object, with its count of Pins.
func (p *Sim) boardJSON(acc sim.Account, b Board, count int) map[string]any {
	return map[string]any{
		"id": b.ID, "name": b.Name, "description": "", "privacy": b.Privacy,
		"owner":              map[string]any{"username": p.usernameOf(acc)},
		"created_at":         "2024-01-01T00:00:00-00:00",
		"pin_count":          count,
		"follower_count":     0,
		"collaborator_count": 0,
		"media":              map[string]any{"image_cover_url": nil, "pin_thumbnail_urls": []string{}},
	}
}

func (p *Sim) getBoard(w http.ResponseWriter, r *http.Request, acc sim.Account, id string) {
	b, ok := p.findBoard(acc, id)
	if !ok {
		pinterestError(w, http.StatusNotFound, 40, "Board not found.")
		return
	}
	counts, err := p.boardPinCounts(r.Context(), acc)
	if err != nil {
		pinterestInternal(w)
		return
	}
	writePinterestJSON(w, http.StatusOK, p.boardJSON(acc, b, counts[b.ID]))
}

func (p *Sim) listBoards(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	q := r.URL.Query()
	offset, size, ok := pinterestPage(w, q)
	if !ok {
		return
	}
	privacy := q.Get("privacy")
	if privacy != "" && !slices.Contains([]string{"ALL", "PROTECTED", "PUBLIC", "SECRET", "PUBLIC_AND_SECRET"}, privacy) {
		pinterestError(w, http.StatusBadRequest, 1, "Invalid parameters: privacy must be one of ALL, PROTECTED, PUBLIC, SECRET, PUBLIC_AND_SECRET.")
		return
	}
	var boards []Board
	for _, b := range p.boardsOf(acc) {
		if privacy == "" || privacy == "ALL" || b.Privacy == privacy || (privacy == "PUBLIC_AND_SECRET" && b.Privacy != "PROTECTED") {
			boards = append(boards, b)
		}
	}
	counts, err := p.boardPinCounts(r.Context(), acc)
	if err != nil {
		pinterestInternal(w)
		return
	}
	items := []any{}
	for i := offset; i < len(boards) && i < offset+size; i++ {
		items = append(items, p.boardJSON(acc, boards[i], counts[boards[i].ID]))
	}
	writePinterestJSON(w, http.StatusOK, map[string]any{"items": items, "bookmark": pinterestBookmark(offset+size, len(boards))})
}

func (p *Sim) findBoard(acc sim.Account, id string) (Board, bool) {
	for _, b := range p.boardsOf(acc) {
		if b.ID == id {
			return b, true
		}
	}
	return Board{}, false
}

func (p *Sim) listBoardPins(w http.ResponseWriter, r *http.Request, acc sim.Account, boardID string) {
	if _, ok := p.findBoard(acc, boardID); !ok {
		pinterestError(w, http.StatusNotFound, 40, "Board not found.")
		return
	}
	offset, size, ok := pinterestPage(w, r.URL.Query())
	if !ok {
		return
	}
	pins, err := p.accountPins(r.Context(), acc.ID)
	if err != nil {
		pinterestInternal(w)
		return
	}
	pins = slices.DeleteFunc(pins, func(pin pinterestPin) bool { return pin.BoardID != boardID })
	slices.Reverse(pins) // newest first
	items := []any{}
	for i := offset; i < len(pins) && i < offset+size; i++ {
		items = append(items, p.pinJSON(acc, pins[i]))
	}
	writePinterestJSON(w, http.StatusOK, map[string]any{"items": items, "bookmark": pinterestBookmark(offset+size, len(pins))})
}

// decodePinterestJSON reads a JSON body strictly: Content-Type application/json, one object,
// known fields only where the schema closes them (it does not; unknown fields are ignored).
func decodePinterestJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		pinterestError(w, http.StatusUnsupportedMediaType, 1, "Content-Type must be application/json.")
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		pinterestError(w, http.StatusBadRequest, 1, "The request body could not be read.")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		pinterestError(w, http.StatusBadRequest, 1, "Invalid request body: "+err.Error())
		return false
	}
	return true
}

func (p *Sim) registerMedia(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	var req struct {
		MediaType *string `json:"media_type"`
	}
	if !decodePinterestJSON(w, r, &req) {
		return
	}
	if req.MediaType == nil {
		pinterestError(w, http.StatusBadRequest, 1, "Invalid parameters: 'media_type' is a required property.")
		return
	}
	if *req.MediaType != "video" {
		pinterestError(w, http.StatusBadRequest, 1, fmt.Sprintf("Invalid parameters: '%s' is not one of ['video'].", *req.MediaType))
		return
	}
	now := p.cfg.Now()
	m := pinterestMedia{ID: sim.RandomDigits(18), Account: acc, Registered: now}
	// The key ends with the media_id: an upload finds its registration by the key its policy
	// names (pinterestPolicyMedia).
	m.Key = fmt.Sprintf("uploads/%s/%s/%s/%d:video:%s:%s", sim.RandomHex(1), sim.RandomHex(1), sim.RandomHex(1),
		binary.BigEndian.Uint16(sim.RandomBytes(2))%16, sim.RandomDigits(18), m.ID)
	date := now.UTC().Format("20060102T150405Z")
	credential := "ASIA" + strings.ToUpper(sim.RandomHex(8)) + "/" + now.UTC().Format("20060102") + "/us-east-1/s3/aws4_request"
	token := base64.StdEncoding.EncodeToString(sim.RandomBytes(48))
	policy := pinterestPolicy{
		Expiration: now.Add(p.opts.UploadTTL).UTC().Format("2006-01-02T15:04:05.000Z"),
		Conditions: []any{
			map[string]string{"bucket": pinterestBucket},
			map[string]string{"key": m.Key},
			map[string]string{"Content-Type": "multipart/form-data"},
			[]any{"content-length-range", 1, p.opts.MaxVideoBytes},
			map[string]string{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
			map[string]string{"x-amz-credential": credential},
			map[string]string{"x-amz-date": date},
			map[string]string{"x-amz-security-token": token},
		},
	}
	raw, _ := json.Marshal(policy)
	encoded := base64.StdEncoding.EncodeToString(raw)
	// The policy is signed under a key of its own, thrown away: what the simulator keeps is
	// the hash of the policy and its signature, which an upload must present together.
	mac := hmac.New(sha256.New, sim.RandomBytes(32))
	mac.Write([]byte(encoded))
	signature := hex.EncodeToString(mac.Sum(nil))
	m.PolicySHA = pinterestPolicySHA(encoded, signature)
	err := p.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		return sim.Save(tx, sim.Record{Key: pinterestKey(pinterestMediaKind, m.ID), Account: acc.ID}, m)
	})
	if err != nil {
		pinterestInternal(w)
		return
	}
	writePinterestJSON(w, http.StatusCreated, map[string]any{
		"media_id":   m.ID,
		"media_type": "video",
		"upload_url": p.cfg.BaseURL + "/_upload/",
		"upload_parameters": map[string]string{
			"x-amz-date":           date,
			"x-amz-signature":      signature,
			"x-amz-security-token": token,
			"x-amz-algorithm":      "AWS4-HMAC-SHA256",
			"key":                  m.Key,
			"policy":               encoded,
			"x-amz-credential":     credential,
			"Content-Type":         "multipart/form-data",
		},
	})
}

type pinterestPolicy struct {
	Expiration string `json:"expiration"`
	Conditions []any  `json:"conditions"`
}

// pinterestPolicySHA is the hash of an upload policy (base64, as sent) and its signature.
func pinterestPolicySHA(policy, signature string) []byte {
	sum := sha256.Sum256([]byte(policy + "\n" + signature))
	return sum[:]
}

// pinterestPolicyMedia is the media_id of the registration a policy's conditions name: the end
// of their key ("" when they name none).
func pinterestPolicyMedia(conditions []json.RawMessage) string {
	for _, c := range conditions {
		var eq map[string]string
		if json.Unmarshal(c, &eq) != nil {
			continue
		}
		if key, ok := eq["key"]; ok {
			if id := key[strings.LastIndexByte(key, ':')+1:]; pinterestDigits(id) {
				return id
			}
		}
	}
	return ""
}

// pinterestStatus is a media's status at now.
func pinterestStatus(m pinterestMedia, now time.Time) string {
	switch {
	case !m.Uploaded:
		return Registered
	case now.Before(m.UploadedAt.Add(m.Processing)):
		return Processing
	case m.Verdict != "":
		return Failed
	}
	return Succeeded
}

// ownMedia reads acc's media registration with the id; it answers 404, or a failure of the
// State, itself.
func (p *Sim) ownMedia(w http.ResponseWriter, r *http.Request, acc sim.Account, id string) (pinterestMedia, bool) {
	m, _, found, err := sim.Load[pinterestMedia](r.Context(), p.cfg.State, pinterestKey(pinterestMediaKind, id))
	switch {
	case err != nil:
		pinterestInternal(w)
		return m, false
	case !found || m.Account.ID != acc.ID:
		pinterestError(w, http.StatusNotFound, 404, "Media upload not found")
		return m, false
	}
	return m, true
}

func (p *Sim) getMedia(w http.ResponseWriter, r *http.Request, acc sim.Account, id string) {
	m, ok := p.ownMedia(w, r, acc, id)
	if !ok {
		return
	}
	writePinterestJSON(w, http.StatusOK, map[string]any{"media_id": id, "media_type": "video", "status": pinterestStatus(m, p.cfg.Now())})
}

// s3Error answers an S3 error document.
func s3Error(w http.ResponseWriter, status int, code, msg string) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	_ = xml.NewEncoder(&b).Encode(struct {
		XMLName   xml.Name `xml:"Error"`
		Code      string   `xml:"Code"`
		Message   string   `xml:"Message"`
		RequestID string   `xml:"RequestId"`
	}{Code: code, Message: msg, RequestID: strings.ToUpper(sim.RandomHex(8))})
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// upload serves the S3 browser POST to upload_url.
func (p *Sim) upload(w http.ResponseWriter, r *http.Request) {
	defer sim.Drain(r.Body)
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
		return
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed", "Bucket POST must be of the enclosure-type multipart/form-data")
		return
	}
	if r.ContentLength < 0 {
		s3Error(w, http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header.")
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	fields := map[string]string{}
	pre := 0 // bytes of the fields before the file: S3 takes at most 20 KB
	var file *multipart.Part
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s3Error(w, http.StatusBadRequest, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data.")
			return
		}
		name := part.FormName()
		if name == "file" {
			file = part
			break // S3 ignores whatever follows the file
		}
		v, err := io.ReadAll(io.LimitReader(part, int64(20<<10-pre+1)))
		if err != nil {
			s3Error(w, http.StatusBadRequest, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data.")
			return
		}
		if pre += len(name) + len(v); pre > 20<<10 {
			s3Error(w, http.StatusBadRequest, "MaxPostPreDataLengthExceeded", "Your POST request fields preceeding the upload file was too large.")
			return
		}
		if _, dup := fields[strings.ToLower(name)]; dup {
			s3Error(w, http.StatusBadRequest, "InvalidArgument", "POST requires exactly one value for each form field: "+name)
			return
		}
		fields[strings.ToLower(name)] = string(v)
	}
	key, hasKey := fields["key"]
	if file == nil {
		s3Error(w, http.StatusBadRequest, "InvalidArgument", "POST requires exactly one file upload per request.")
		return
	}
	if !hasKey {
		s3Error(w, http.StatusBadRequest, "InvalidArgument", "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
		return
	}
	policyB64, hasPolicy := fields["policy"]
	if !hasPolicy {
		s3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied")
		return
	}
	for _, f := range []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"} {
		if _, ok := fields[f]; !ok {
			s3Error(w, http.StatusBadRequest, "InvalidArgument", "Bucket POST must contain a field named '"+f+"'.  If it is specified, please check the order of the fields.")
			return
		}
	}
	// The registration is the one the policy's key names; a policy the simulator did not
	// hand out, or a signature not made for it, does not match.
	var pol struct {
		Expiration string            `json:"expiration"`
		Conditions []json.RawMessage `json:"conditions"`
	}
	var m pinterestMedia
	found := false
	if raw, err := base64.StdEncoding.DecodeString(policyB64); err == nil && json.Unmarshal(raw, &pol) == nil {
		if id := pinterestPolicyMedia(pol.Conditions); id != "" {
			if m, _, found, err = sim.Load[pinterestMedia](r.Context(), p.cfg.State, pinterestKey(pinterestMediaKind, id)); err != nil {
				s3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
				return
			}
		}
	}
	if !found || subtle.ConstantTimeCompare(pinterestPolicySHA(policyB64, fields["x-amz-signature"]), m.PolicySHA) != 1 {
		s3Error(w, http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
		return
	}
	exp, err := time.Parse("2006-01-02T15:04:05.000Z", pol.Expiration)
	if err != nil || !p.cfg.Now().Before(exp) {
		s3Error(w, http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Policy expired.")
		return
	}
	// Every field the policy names must be sent with its value; every field sent (but the
	// signature, the policy and the file) must be named by the policy.
	var minSize, maxSize int64 = 0, -1
	named := map[string]bool{"policy": true, "x-amz-signature": true, "bucket": true}
	for _, c := range pol.Conditions {
		var eq map[string]string
		if json.Unmarshal(c, &eq) == nil {
			for k, want := range eq {
				k = strings.ToLower(k)
				named[k] = true
				if k == "bucket" {
					continue
				}
				got, ok := fields[k]
				if !ok || got != want {
					s3Error(w, http.StatusForbidden, "AccessDenied", fmt.Sprintf("Invalid according to Policy: Policy Condition failed: [\"eq\", \"$%s\", %q]", k, want))
					return
				}
			}
			continue
		}
		var arr []any
		if json.Unmarshal(c, &arr) == nil && len(arr) == 3 && arr[0] == "content-length-range" {
			lo, _ := arr[1].(float64)
			hi, _ := arr[2].(float64)
			minSize, maxSize = int64(lo), int64(hi)
		}
	}
	for k := range fields {
		if !named[k] && !strings.HasPrefix(k, "x-ignore-") {
			s3Error(w, http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Extra input fields: "+k)
			return
		}
	}
	// The upload URL takes S3's credentials, not the Pinterest token: only server faults apply.
	if sim.CallFault(m.Account.Behavior, p.cfg.Rand) == sim.FailUnavailable {
		s3Error(w, http.StatusServiceUnavailable, "ServiceUnavailable", "Please reduce your request rate.")
		return
	}

	f, err := os.CreateTemp("", "reelay-pinterest-sim-*.upload")
	if err != nil {
		s3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
		return
	}
	defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
	h := sha256.New()
	limit := maxSize
	if limit < 0 {
		limit = pinterestMaxVideoBytes
	}
	n, err := io.CopyBuffer(io.MultiWriter(f, h), io.LimitReader(file, limit+1), make([]byte, 256<<10))
	if err != nil {
		// A file part that does not arrive whole leaves nothing behind.
		s3Error(w, http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
		return
	}
	if n > limit {
		s3Error(w, http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
		return
	}
	if n < minSize || n == 0 {
		s3Error(w, http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
		return
	}
	// The multipart body must end properly after the file (a truncated request does not count).
	if _, err := mr.NextPart(); err != nil && err != io.EOF {
		s3Error(w, http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
		return
	}
	sha := hex.EncodeToString(h.Sum(nil))
	verdict, info := pinterestCheckVideo(f, n)
	processing := p.opts.DefaultProcessing
	if ms := m.Account.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	if m.Account.Behavior.Fail == sim.FailReject && verdict == "" {
		verdict = "rejected"
	}
	now := p.cfg.Now()
	err = p.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		cur, rec, found, err := sim.LoadTx[pinterestMedia](tx, pinterestKey(pinterestMediaKind, m.ID))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("sim: pinterest media %s is gone", m.ID)
		}
		// S3 overwrites the object on a second POST; Pinterest processes the first it saw.
		if !cur.Uploaded {
			cur.Uploaded, cur.UploadedAt, cur.Processing = true, now, processing
			cur.Verdict, cur.SHA, cur.Size = verdict, sha, n
			cur.Duration, cur.Width, cur.Height = info.Duration, info.Width, info.Height
			if err := sim.Save(tx, rec, cur); err != nil {
				return err
			}
		}
		return sim.RecordTx(tx, platform.Pinterest, sim.Upload{Account: m.Account.ID, Bytes: n, SHA256: sha})
	})
	if err != nil {
		s3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
		return
	}
	w.Header().Set("ETag", `"`+sha[:32]+`"`)
	w.Header().Set("Location", p.cfg.BaseURL+"/_upload/"+url.PathEscape(key))
	w.WriteHeader(http.StatusNoContent)
}

// pinterestCheckVideo applies Pinterest's video specifications for standard width video Pins
// (help.pinterest.com/en/business/article/pinterest-product-specs): MP4 or MOV, "Encoding:
// H.264 or H.265", 4 s to 15 min, and an aspect ratio "Shorter than 1:2 (width:height), taller
// than 1.91:1", read from the picture's own width and height. It returns the verdict ("" when
// the video passes) and what the probe learnt.
func pinterestCheckVideo(f io.ReaderAt, size int64) (string, media.Info) {
	info, err := media.Probe(f, size)
	if err != nil || (info.Kind.Name != "mp4" && info.Kind.Name != "mov") {
		return "unsupported format", info
	}
	if info.VideoCodec != "h264" && info.VideoCodec != "hevc" {
		return "unsupported encoding", info
	}
	if info.Duration < pinterestMinDuration || info.Duration > pinterestMaxDuration {
		return "duration", info
	}
	if info.Width <= 0 || info.Height <= 0 {
		return "unsupported format", info
	}
	// A hundredth of slack: encoders round a frame to even sizes.
	if r := float64(info.Width) / float64(info.Height); r < pinterestMinAspect-0.01 || r > pinterestMaxAspect+0.01 {
		return "aspect ratio", info
	}
	return "", info
}

type pinterestPinRequest struct {
	BoardID        *string         `json:"board_id"`
	BoardSectionID *string         `json:"board_section_id"`
	Title          *string         `json:"title"`
	Description    *string         `json:"description"`
	Link           *string         `json:"link"`
	AltText        *string         `json:"alt_text"`
	Note           *string         `json:"note"`
	DominantColor  *string         `json:"dominant_color"`
	ParentPinID    *string         `json:"parent_pin_id"`
	MediaSource    json.RawMessage `json:"media_source"`
}

type pinterestVideoSource struct {
	SourceType            string   `json:"source_type"`
	MediaID               *string  `json:"media_id"`
	CoverImageURL         *string  `json:"cover_image_url"`
	CoverImageContentType *string  `json:"cover_image_content_type"`
	CoverImageData        *string  `json:"cover_image_data"`
	CoverImageKeyFrame    *float64 `json:"cover_image_key_frame_time"`
	IsStandard            *bool    `json:"is_standard"`
}

func pinterestDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func (p *Sim) createPin(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	var req pinterestPinRequest
	if !decodePinterestJSON(w, r, &req) {
		return
	}
	if acc.Behavior.AppAccess == sim.AppAccessTrial {
		// Pinterest's words to a Trial app on api.pinterest.com (code 29, as reported in
		// gitroomhq/postiz-app#1084); the access tiers page says Trial Pins are "visible only
		// to creator" and the Sandbox page lists Create Pin for Trial apps.
		pinterestError(w, http.StatusForbidden, 29, "Apps with Trial access may not create Pins in production "+
			"https://api.pinterest.com - use API Sandbox https://api-sandbox.pinterest.com instead.")
		return
	}
	bad := func(msg string) { pinterestError(w, http.StatusBadRequest, 1, "Invalid parameters: "+msg) }
	if req.BoardID == nil {
		bad("'board_id' is a required property.")
		return
	}
	if !pinterestDigits(*req.BoardID) {
		bad(fmt.Sprintf("'%s' does not match '^\\d+$' (board_id).", *req.BoardID))
		return
	}
	if req.BoardSectionID != nil {
		bad("board_section_id is not supported by this simulator.")
		return
	}
	str := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	for _, c := range []struct {
		name string
		v    *string
		max  int
	}{{"title", req.Title, pinterestTitleMax}, {"description", req.Description, pinterestDescriptionMax},
		{"link", req.Link, pinterestLinkMax}, {"alt_text", req.AltText, pinterestAltTextMax}} {
		if c.v != nil && utf8.RuneCountInString(*c.v) > c.max {
			bad(fmt.Sprintf("'%s' is too long (%d characters; the maximum is %d).", c.name, utf8.RuneCountInString(*c.v), c.max))
			return
		}
	}
	if l := str(req.Link); l != "" {
		if u, err := url.Parse(l); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			pinterestError(w, http.StatusBadRequest, 1, "Whoops! It looks like you entered an invalid URL. Try creating a Pin again with a valid URL.")
			return
		}
	}
	if len(req.MediaSource) == 0 || string(req.MediaSource) == "null" {
		bad("'media_source' is a required property.")
		return
	}
	var src pinterestVideoSource
	if err := json.Unmarshal(req.MediaSource, &src); err != nil {
		bad("media_source: " + err.Error())
		return
	}
	if src.SourceType != "video_id" {
		bad(fmt.Sprintf("media_source.source_type '%s' is not supported by this simulator (video_id only).", src.SourceType))
		return
	}
	if src.MediaID == nil || !pinterestDigits(*src.MediaID) {
		bad("media_source.media_id is required and must match '^\\d+$'.")
		return
	}
	covers := 0
	for _, set := range []bool{src.CoverImageURL != nil, src.CoverImageData != nil, src.CoverImageKeyFrame != nil} {
		if set {
			covers++
		}
	}
	if covers != 1 {
		bad("a video Pin needs exactly one cover: media_source.cover_image_url, cover_image_data (with cover_image_content_type) or cover_image_key_frame_time.")
		return
	}
	board, ok := p.findBoard(acc, *req.BoardID)
	if !ok {
		pinterestError(w, http.StatusNotFound, 40, "Board not found.")
		return
	}
	now := p.cfg.Now()
	m, ok := p.ownMedia(w, r, acc, *src.MediaID)
	if !ok {
		return
	}
	switch status := pinterestStatus(m, now); status {
	case Registered, Processing:
		bad(fmt.Sprintf("media %s is not ready (status %s): create the Pin once GET /v5/media/%s answers succeeded.", m.ID, status, m.ID))
		return
	case Failed:
		bad(fmt.Sprintf("media %s failed processing and cannot be used.", m.ID))
		return
	}
	dur := m.Duration
	switch {
	case src.CoverImageKeyFrame != nil:
		if t := *src.CoverImageKeyFrame; t < 0 || time.Duration(t*float64(time.Second)) > dur {
			bad(fmt.Sprintf("media_source.cover_image_key_frame_time %g is outside the video (0 to %g seconds).", t, dur.Seconds()))
			return
		}
	case src.CoverImageData != nil:
		ct := str(src.CoverImageContentType)
		data, err := base64.StdEncoding.DecodeString(*src.CoverImageData)
		if (ct != "image/jpeg" && ct != "image/png") || err != nil || !pinterestImage(data) {
			pinterestError(w, http.StatusForbidden, 235, "Sorry, this image is broken. Please pick a different image.")
			return
		}
	default:
		if !p.fetchCover(r, *src.CoverImageURL) {
			pinterestError(w, http.StatusForbidden, 235, "Sorry, this image is broken. Please pick a different image.")
			return
		}
	}
	pin := pinterestPin{
		ID: sim.RandomDigits(18), Account: acc.ID, BoardID: board.ID, Title: str(req.Title),
		Description: str(req.Description), Link: str(req.Link), AltText: str(req.AltText), MediaID: m.ID,
		CoverImageURL: str(src.CoverImageURL), CoverKeyFrame: src.CoverImageKeyFrame, CreatedAt: now, SHA256: m.SHA,
		Duration: m.Duration, Width: m.Width, Height: m.Height,
	}
	text := pin.Title
	if pin.Description != "" {
		if text != "" {
			text += "\n\n"
		}
		text += pin.Description
	}
	err := p.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		if err := sim.Save(tx, sim.Record{Key: pinterestKey(pinterestPinKind, pin.ID), Account: acc.ID}, pin); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Pinterest, sim.Published{Account: acc.ID, ID: pin.ID, URL: PinURL(pin.ID), SHA256: pin.SHA256, Text: text})
	})
	if err != nil {
		pinterestInternal(w)
		return
	}
	writePinterestJSON(w, http.StatusCreated, p.pinJSON(acc, pin))
}

// PinURL is the public URL of a Pin.
func PinURL(id string) string { return "https://www.pinterest.com/pin/" + id + "/" }

// fetchCover fetches a cover image URL and checks it is a JPEG or PNG.
func (p *Sim) fetchCover(r *http.Request, u string) bool {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return false
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	resp, err := p.cfg.PullClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(resp.Body, head)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, pinterestMaxCoverBytes))
	return pinterestImage(head[:n])
}

func pinterestImage(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}) || bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n"))
}

// pinJSON is the Pin object of acc's Pin.
func (p *Sim) pinJSON(acc sim.Account, pin pinterestPin) map[string]any {
	cover := pin.CoverImageURL
	if cover == "" {
		cover = p.cfg.BaseURL + "/_covers/" + pin.ID + ".jpg"
	}
	return map[string]any{
		"id":                pin.ID,
		"created_at":        pin.CreatedAt.UTC().Format("2006-01-02T15:04:05"),
		"link":              nullable(pin.Link),
		"title":             pin.Title,
		"description":       pin.Description,
		"alt_text":          nullable(pin.AltText),
		"board_id":          pin.BoardID,
		"board_section_id":  nil,
		"board_owner":       map[string]any{"username": p.usernameOf(acc)},
		"is_owner":          true,
		"is_standard":       true,
		"has_been_promoted": false,
		"creative_type":     "VIDEO",
		"dominant_color":    "#6E7874",
		"parent_pin_id":     nil,
		"note":              nil,
		"pin_metrics":       nil,
		"media": map[string]any{
			"media_type":      "video",
			"cover_image_url": cover,
			"video_url":       nil,
			"duration":        float64(pin.Duration.Milliseconds()),
			"height":          pin.Height,
			"width":           pin.Width,
		},
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (p *Sim) getPin(w http.ResponseWriter, r *http.Request, acc sim.Account, id string) {
	pin, found, err := p.ownPin(r.Context(), acc, id)
	switch {
	case err != nil:
		pinterestInternal(w)
	case !found:
		pinterestError(w, http.StatusNotFound, 50, "Pin not found.")
	default:
		writePinterestJSON(w, http.StatusOK, p.pinJSON(acc, pin))
	}
}

var _ http.Handler = (*Sim)(nil)
