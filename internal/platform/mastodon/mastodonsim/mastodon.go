// Package mastodonsim is the simulator of Mastodon's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package mastodonsim

// Mastodon REST API simulator: one instance, with the endpoints a video post needs.
//
// Sources: docs.joinmastodon.org methods/media (POST /api/v2/media, GET /api/v1/media/:id),
// methods/statuses (POST /api/v1/statuses, Idempotency-Key "stored for up to 1 hour"),
// methods/instance and entities/Instance (configuration), api/rate-limits; and Mastodon's own
// source where the pages are silent: config/initializers/rack_attack.rb (the throttles and
// their 429 answer), app/lib/rate_limiter.rb (300 statuses per 3 hours),
// app/controllers/api/v1|v2/media_controller.rb (202/206/422 and their messages),
// app/services/post_status_service.rb (idempotency first, then the media checks and their
// messages), app/validators/status_length_validator.rb (grapheme count, URLs as 23
// characters, mentions without their domain, content warning included) and
// app/workers/scheduler/media_cleanup_scheduler.rb (unattached media removed after a day).
// All were read through the search tool.
//
// What it reproduces:
//   - GET /api/v2/instance and GET /api/v1/instance (public) with configuration.statuses
//     (max_characters, max_media_attachments, characters_reserved_per_url) and
//     configuration.media_attachments (supported_mime_types, image/video size limits,
//     video_frame_rate_limit, video_matrix_limit), all set by Options;
//   - Authorization: Bearer tokens resolved through Config.Accounts; a missing or unknown one
//     → 401 {"error":"The access token is invalid"};
//   - GET /api/v1/accounts/verify_credentials → the account;
//   - POST /api/v2/media, multipart/form-data with file (required, with a supported MIME type),
//     thumbnail (an image), description (at most 1500 characters) and focus. The file is
//     spooled to a temporary file and hashed while it streams, checked against the instance's
//     size limit for its type, and probed: a video whose bytes are not the video type it
//     claims → 422, one faster than video_frame_rate_limit → 422 "150fps videos are not
//     supported" (Mastodon's MediaAttachment check). A video answers 202 with url null (Mastodon 4 processes video
//     asynchronously); every accepted upload is recorded;
//   - GET /api/v1/media/:id: 206 while processing, 200 with url when processed, 422 "Error
//     processing thumbnail for uploaded media" when processing failed (the reject behavior,
//     or a picture over video_matrix_limit), 404 "Record not found" for media of another
//     account, media already attached to a status, or media left unattached for a day
//     (Mastodon's cleanup deletes it);
//   - POST /api/v1/statuses as JSON or form data (status, media_ids, visibility, sensitive,
//     spoiler_text, language, in_reply_to_id): a known Idempotency-Key of the same account
//     within an hour of the status answers that status again and creates nothing; then the
//     media checks (more than max_media_attachments, not found or already attached, a video
//     with other media, not finished processing → 422 with Mastodon's messages), the text
//     (blank without media, over max_characters as Mastodon counts → 422 "Validation failed:
//     ..."), the visibility; a created status is recorded as published with its first video's
//     hash, a reply (in_reply_to_id, which must be a status the caller can see, else 404 "The
//     post you are trying to reply to does not appear to exist." before anything else is
//     checked) as a reply to that status;
//   - GET /api/v1/statuses/:id and GET /api/v1/accounts/:id/statuses (limit, max_id,
//     only_media), newest first; GET /api/v1/statuses?id[]= (Mastodon 4.3, so not on a
//     LegacyInstance) and GET /api/v1/statuses/:id/context, with every status's figures and
//     the items' audience comments, are in audience.go. These reads are public; a
//     token, when sent, meets the call faults and the throttle as other calls do;
//   - throttles as rack-attack and RateLimiter count them, in windows aligned on the epoch:
//     300 API calls per token and 5 minutes, 30 media uploads per account and 30 minutes
//     (every POST counts), 300 statuses per account and 3 hours (created statuses count) →
//     429 {"error":"Too many requests"} with X-RateLimit-Limit, X-RateLimit-Remaining 0 and
//     X-RateLimit-Reset (ISO 8601); Mastodon sends no Retry-After;
//   - call faults: unavailable → 502 with nginx's HTML page (what a client meets when the
//     instance's Rails processes are down), auth → 401 {"error":"The access token is
//     invalid"}, rate_limit → 429 as above; processing takes Behavior.ProcessingMS (< 0:
//     Options.DefaultProcessing, 2 s) on Config.Now.
//
// What the instance keeps is in Config.State (state.go), so that a restart or another process
// serving it loses none of it: the media (until the cleanup's day, or with the status they are
// attached to), the statuses and which statuses answer each, the Idempotency-Keys (their hour),
// the statuses each account created in each 3-hour window, and the accounts that called it
// (for their statuses' list and mentions). A processing is the upload's time plus its delay,
// so it ends wherever it is read. The throttles of API calls and media uploads are counted in
// the process's memory: a documented deviation, each process allowing them, harmless over
// windows of minutes. A failure of the State answers 503 "There was a temporary problem
// serving your request, please try again", Mastodon's answer to a failure of its storage
// (docs.joinmastodon.org entities/Error, NetworkingError).
//
// Not reproduced: scheduled statuses and polls (refused with 422 naming the simulator), OAuth
// scopes (every token may do everything), image and audio processing beyond a magic-byte
// check, and the exact URL extraction of twitter-text (a URL here is http:// or https:// up
// to the next space, less trailing punctuation).

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"regexp"
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

// Mastodon's MIME type lists (app/models/media_attachment.rb): what supported_mime_types
// answers on a stock server.
var (
	mastodonImageTypes = []string{"image/avif", "image/gif", "image/heic", "image/heif", "image/jpeg", "image/png", "image/webp"}
	mastodonVideoTypes = []string{"video/mp4", "video/ogg", "video/quicktime", "video/webm"}
	mastodonAudioTypes = []string{"audio/3gpp", "audio/aac", "audio/flac", "audio/m4a", "audio/mp3", "audio/mp4",
		"audio/mpeg", "audio/ogg", "audio/vnd.wave", "audio/vorbis", "audio/wav", "audio/wave", "audio/webm",
		"audio/x-m4a", "audio/x-pn-wave", "audio/x-wav", "video/x-ms-asf"}
)

// Mastodon's messages.
const (
	mastodonInvalidToken   = "The access token is invalid"
	mastodonNotFound       = "Record not found"
	mastodonReplyNotFound  = "The post you are trying to reply to does not appear to exist."
	mastodonTooMany        = "Too many requests"
	mastodonProcessingErr  = "Error processing thumbnail for uploaded media"
	mastodonNotReady       = "Cannot attach files that have not finished processing. Try again in a moment!"
	mastodonImagesAndVideo = "Cannot attach a video to a post that already contains images"
	mastodonDescriptionMax = 1500
)

// Options configures the simulated instance. Zero values take a stock server's
// defaults (the values mastodon.social answered in configuration for years).
type Options struct {
	// Domain is the instance's domain (default: the host of Config.BaseURL).
	Domain string
	// MaxCharacters is configuration.statuses.max_characters (500).
	MaxCharacters int
	// CharactersReservedPerURL is what each URL counts for (23).
	CharactersReservedPerURL int
	// MaxMediaAttachments is configuration.statuses.max_media_attachments (4).
	MaxMediaAttachments int
	// SupportedMimeTypes is configuration.media_attachments.supported_mime_types (Mastodon's
	// image, video and audio lists: video/mp4, video/quicktime, video/webm, video/ogg, ...).
	SupportedMimeTypes []string
	// ImageSizeLimit (10 MiB), VideoSizeLimit (99 MiB, a stock Mastodon 4 server) in bytes.
	ImageSizeLimit, VideoSizeLimit int64
	// VideoFrameRateLimit (120, a stock server's) refuses faster videos at upload;
	// VideoMatrixLimit (2,304,000 pixels, e.g.
	// 1920×1200) and ImageMatrixLimit (16,777,216) are width × height maxima.
	VideoFrameRateLimit                int
	VideoMatrixLimit, ImageMatrixLimit int64
	// DefaultProcessing is the processing time of a video when the account's
	// Behavior.ProcessingMS < 0 (2 s).
	DefaultProcessing time.Duration
	// MediaUploadsPerWindow is the media uploads per account per 30 minutes (30);
	// StatusesPerWindow the statuses per account per 3 hours (300); CallsPerWindow the API
	// calls per token per 5 minutes (300).
	MediaUploadsPerWindow, StatusesPerWindow, CallsPerWindow int
	// IdempotencyTTL is how long an Idempotency-Key is kept (1 h).
	IdempotencyTTL time.Duration
	// UnattachedMediaTTL is how long media that no status uses is kept (24 h).
	UnattachedMediaTTL time.Duration
	// LegacyInstance makes the server a Mastodon 3.x: GET /api/v2/instance answers 404 and
	// only /api/v1/instance exists.
	LegacyInstance bool
}

func (o *Options) normalize(baseURL string) {
	if o.Domain == "" {
		if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
			o.Domain = u.Host
		} else {
			o.Domain = "mastodon.example"
		}
	}
	setInt := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	setInt64 := func(p *int64, v int64) {
		if *p <= 0 {
			*p = v
		}
	}
	setInt(&o.MaxCharacters, 500)
	setInt(&o.CharactersReservedPerURL, 23)
	setInt(&o.MaxMediaAttachments, 4)
	if len(o.SupportedMimeTypes) == 0 {
		o.SupportedMimeTypes = slices.Concat(mastodonImageTypes, mastodonVideoTypes, mastodonAudioTypes)
		slices.Sort(o.SupportedMimeTypes)
	}
	setInt64(&o.ImageSizeLimit, 10<<20)
	setInt64(&o.VideoSizeLimit, 99<<20)
	setInt(&o.VideoFrameRateLimit, 120)
	setInt64(&o.VideoMatrixLimit, 2_304_000)
	setInt64(&o.ImageMatrixLimit, 16_777_216)
	if o.DefaultProcessing <= 0 {
		o.DefaultProcessing = 2 * time.Second
	}
	setInt(&o.MediaUploadsPerWindow, 30)
	setInt(&o.StatusesPerWindow, 300)
	setInt(&o.CallsPerWindow, 300)
	if o.IdempotencyTTL <= 0 {
		o.IdempotencyTTL = time.Hour
	}
	if o.UnattachedMediaTTL <= 0 {
		o.UnattachedMediaTTL = 24 * time.Hour
	}
}

// Media is what the simulator knows of one media attachment (for tests).
type Media struct {
	ID, Account, ContentType string
	Bytes                    int64
	SHA256                   string
	Description              string
	// ThumbnailType and ThumbnailBytes describe the custom thumbnail, if one was sent.
	ThumbnailType  string
	ThumbnailBytes int64
	CreatedAt      time.Time
	StatusID       string
}

// Status is what the simulator knows of one status (for tests).
type Status struct {
	ID, Account, URL, URI string
	// InReplyToID is the status answered ("" for a status that answers none: an item, which
	// has an audience).
	InReplyToID          string
	Text, SpoilerText    string
	Visibility, Language string
	Sensitive            bool
	MediaIDs             []string
	IdempotencyKey       string
	CreatedAt            time.Time
}

// The kinds of the Mastodon simulator's records.
const (
	// mdMediaKind is a media attachment (mastodonMedia). Unattached, it ends when Mastodon's
	// cleanup removes it, UnattachedMediaTTL after its upload; attached, it is kept with its
	// status until retention.
	mdMediaKind = "media"
	// mdStatusKind is a status of the instance (mastodonStatus), kept until retention.
	mdStatusKind = "status"
	// mdRepliesKind lists the ids of the instance's statuses answering a status (one of the
	// instance's or an audience comment), by that status's id.
	mdRepliesKind = "replies"
	// mdIdemKind is an account's Idempotency-Key (mastodonIdem), by account and the key's hash;
	// it ends IdempotencyTTL after the status it created.
	mdIdemKind = "idempotency"
	// mdStatusesKind is the statuses an account created in one 3-hour window of RateLimiter
	// ([]time.Time), by account and window.
	mdStatusesKind = "statuses"
	// mdAccountKind is an account that called the instance (mastodonAccount), by id, and
	// mdUsernameKind the same by its lower-case username (mentions).
	mdAccountKind  = "account"
	mdUsernameKind = "username"
)

func mdKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Mastodon, Kind: kind, ID: id} }

// Sim simulates one Mastodon instance. It implements http.Handler. Its media, statuses,
// Idempotency-Keys, statuses' windows and the accounts that called it are records of
// Config.State; the throttles of API calls and media uploads are counted in the process.
type Sim struct {
	cfg      sim.Config
	opts     Options
	basePath string

	mu      sync.Mutex
	windows map[string]int // bucket|who|window → count, of this process's throttles
}

type mastodonMedia struct {
	Media
	Username   string        `json:"username"`
	Kind       string        `json:"kind"` // video, image, audio
	Width      int           `json:"width,omitempty"`
	Height     int           `json:"height,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	ReadyAt    time.Time     `json:"ready_at"`
	Failed     bool          `json:"failed,omitempty"`
	PreviewURL string        `json:"preview_url"`
	FileURL    string        `json:"file_url"`
}

type mastodonStatus struct {
	Status
	// Username is the author's.
	Username string `json:"username"`
	// audience is set for an audience comment (a status of a remote account; see
	// audience.go), which is drawn on each read, never stored.
	audience *sim.AudienceComment
}

// author is the account that wrote the status.
func (s *mastodonStatus) author() sim.Account {
	return sim.Account{ID: s.Account, Username: s.Username}
}

// mastodonIdem is what an Idempotency-Key made: the status created under it.
type mastodonIdem struct {
	StatusID string `json:"status_id"`
}

// mastodonAccount is an account the instance knows.
type mastodonAccount struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

// New returns the Mastodon simulator with a stock instance's configuration.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the Mastodon simulator with an instance configured by opts (a stricter
// instance, other timings, a Mastodon 3.x).
func NewSim(cfg sim.Config, opts Options) *Sim {
	cfg.Normalize()
	opts.normalize(cfg.BaseURL)
	basePath := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		basePath = strings.TrimRight(u.Path, "/")
	}
	return &Sim{cfg: cfg, opts: opts, basePath: basePath, windows: map[string]int{}}
}

// Recorder returns the record of what the simulator received.
func (m *Sim) Recorder() *sim.Recorder { return m.cfg.Recorder }

// Options returns the instance's configuration, defaults filled in.
func (m *Sim) Options() Options { return m.opts }

// Media reports what the simulator knows of a media attachment (until Mastodon's cleanup
// removes it unattached). It is for tests: an error of the State panics.
func (m *Sim) Media(id string) (Media, bool) {
	md, _, found, err := sim.Load[mastodonMedia](context.Background(), m.cfg.State, mdKey(mdMediaKind, id))
	if err != nil {
		panic(err)
	}
	return md.Media, found
}

// MediaOf lists the media an account uploaded, oldest first. It is for tests: an error of the
// State panics.
func (m *Sim) MediaOf(account string) []Media {
	all, err := sim.ListJSON[mastodonMedia](context.Background(), m.cfg.State, mdKey(mdMediaKind, ""), account)
	if err != nil {
		panic(err)
	}
	out := make([]Media, len(all))
	for i, md := range all {
		out[i] = md.Media
	}
	return out
}

// Statuses lists the statuses of an account, oldest first. It is for tests: an error of the
// State panics.
func (m *Sim) Statuses(account string) []Status {
	all, err := sim.ListJSON[mastodonStatus](context.Background(), m.cfg.State, mdKey(mdStatusKind, ""), account)
	if err != nil {
		panic(err)
	}
	out := make([]Status, len(all))
	for i, s := range all {
		out[i] = s.Status
	}
	return out
}

// mdView reads from the State what one answer needs, each record once, at one clock. The
// first failure of the State is kept in err; what was read after it is incomplete, and the
// answer is then Mastodon's internal error (mastodonInternal).
type mdView struct {
	m   *Sim
	ctx context.Context
	now time.Time
	// statuses and mediaRead are the records read, nil for an id not found; replies the ids of
	// the statuses answering a status.
	statuses  map[string]*mastodonStatus
	mediaRead map[string]*mastodonMedia
	replies   map[string][]string
	counts    map[string]int // statuses by account
	// items are the instance's statuses that answer none, read once for an audience comment.
	items     []*mastodonStatus
	itemsRead bool
	err       error
}

func (m *Sim) view(ctx context.Context, now time.Time) *mdView {
	return &mdView{m: m, ctx: ctx, now: now, statuses: map[string]*mastodonStatus{},
		mediaRead: map[string]*mastodonMedia{}, replies: map[string][]string{}, counts: map[string]int{}}
}

func (v *mdView) fail(err error) {
	if v.err == nil {
		v.err = err
	}
}

// media reads a media attachment; nil when there is none.
func (v *mdView) media(id string) *mastodonMedia {
	if md, ok := v.mediaRead[id]; ok {
		return md
	}
	md, _, found, err := sim.Load[mastodonMedia](v.ctx, v.m.cfg.State, mdKey(mdMediaKind, id))
	if err != nil {
		v.fail(err)
		return nil
	}
	var out *mastodonMedia
	if found {
		out = &md
	}
	v.mediaRead[id] = out
	return out
}

// statusCount counts an account's statuses.
func (v *mdView) statusCount(account string) int {
	if n, ok := v.counts[account]; ok {
		return n
	}
	n, err := v.m.cfg.State.Count(v.ctx, platform.Mastodon, mdStatusKind, account)
	if err != nil {
		v.fail(err)
	}
	v.counts[account] = n
	return n
}

// ServeHTTP implements http.Handler. Paths are Mastodon's, below Config.BaseURL; they are
// accepted with or without BaseURL's path in front.
func (m *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if m.basePath != "" {
		if rest, ok := strings.CutPrefix(path, m.basePath); ok && (rest == "" || rest[0] == '/') {
			path = rest
		}
	}
	get, post := r.Method == http.MethodGet || r.Method == http.MethodHead, r.Method == http.MethodPost
	switch {
	case path == "/api/v2/instance" && get && !m.opts.LegacyInstance:
		m.instanceV2(w)
	case path == "/api/v1/instance" && get:
		m.instanceV1(w)
	case path == "/api/v1/accounts/verify_credentials" && get:
		m.authed(w, r, m.verifyCredentials)
	case path == "/api/v2/media" && post:
		m.authed(w, r, m.uploadMedia)
	case strings.HasPrefix(path, "/api/v1/media/") && get:
		id := strings.TrimPrefix(path, "/api/v1/media/")
		m.authed(w, r, func(w http.ResponseWriter, r *http.Request, acc sim.Account) { m.getMedia(w, r, acc, id) })
	case path == "/api/v1/statuses" && post:
		m.authed(w, r, m.postStatus)
	case path == "/api/v1/statuses" && get && !m.opts.LegacyInstance: // Mastodon 4.3
		m.getStatuses(w, r)
	case strings.HasPrefix(path, "/api/v1/statuses/") && strings.HasSuffix(path, "/context") && get:
		m.statusContext(w, r, strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/statuses/"), "/context"))
	case strings.HasPrefix(path, "/api/v1/statuses/") && get:
		m.getStatus(w, r, strings.TrimPrefix(path, "/api/v1/statuses/"))
	case strings.HasPrefix(path, "/api/v1/accounts/") && strings.HasSuffix(path, "/statuses") && get:
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v1/accounts/"), "/statuses")
		m.accountStatuses(w, r, id)
	default:
		mastodonError(w, http.StatusNotFound, mastodonNotFound)
	}
}

// token returns the Bearer token of a request, "" when there is none.
func mastodonToken(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// authed resolves the token, applies the account's call faults and the per-token throttle.
func (m *Sim) authed(w http.ResponseWriter, r *http.Request, h func(http.ResponseWriter, *http.Request, sim.Account)) {
	tok := mastodonToken(r)
	var acc sim.Account
	ok := tok != "" && m.cfg.Accounts != nil
	if ok {
		acc, ok = m.cfg.Accounts.Resolve(r.Context(), tok)
	}
	if !ok {
		mastodonError(w, http.StatusUnauthorized, mastodonInvalidToken)
		return
	}
	if m.refused(w, r, tok, acc) {
		return
	}
	h(w, r, acc)
}

// refused answers the account's call fault or the per-token throttle, and reports whether it
// answered; otherwise it notes the account as seen.
func (m *Sim) refused(w http.ResponseWriter, r *http.Request, tok string, acc sim.Account) bool {
	switch sim.CallFault(acc.Behavior, m.cfg.Rand) {
	case sim.FailUnavailable:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
		return true
	case sim.FailAuth:
		mastodonError(w, http.StatusUnauthorized, mastodonInvalidToken)
		return true
	case sim.FailRateLimit:
		m.tooMany(w, m.opts.CallsPerWindow, m.windowEnd(5*time.Minute))
		return true
	}
	if err := m.noteAccount(r.Context(), acc); err != nil {
		mastodonInternal(w)
		return true
	}
	if end, limited := m.throttle("api", tok, 5*time.Minute, m.opts.CallsPerWindow); limited {
		m.tooMany(w, m.opts.CallsPerWindow, end)
		return true
	}
	return false
}

// noteAccount keeps acc as an account the instance knows (its statuses' list, mentions of it):
// written when it first calls, and again when its username changed.
func (m *Sim) noteAccount(ctx context.Context, acc sim.Account) error {
	want := mastodonAccount{ID: acc.ID, Username: m.username(acc)}
	key := mdKey(mdAccountKind, acc.ID)
	known, _, found, err := sim.Load[mastodonAccount](ctx, m.cfg.State, key)
	if err != nil || (found && known == want) {
		return err
	}
	return m.cfg.State.Update(ctx, func(tx sim.Tx) error {
		old, rec, found, err := sim.LoadTx[mastodonAccount](tx, key)
		if err != nil {
			return err
		}
		if found && !strings.EqualFold(old.Username, want.Username) {
			// The old name no longer mentions the account.
			byName := mdKey(mdUsernameKind, strings.ToLower(old.Username))
			if other, _, found, err := sim.LoadTx[mastodonAccount](tx, byName); err != nil {
				return err
			} else if found && other.ID == acc.ID {
				if err := tx.Delete(byName); err != nil {
					return err
				}
			}
		}
		rec.Account = acc.ID
		if err := sim.Save(tx, rec, want); err != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: mdKey(mdUsernameKind, strings.ToLower(want.Username)), Account: acc.ID}, want)
	})
}

// throttle counts a request in a window aligned on the epoch, as rack-attack does, in this
// process's memory (a deviation: each process allows the limit; the windows are minutes
// long). It reports the window's end and whether the limit was already reached.
func (m *Sim) throttle(bucket, who string, period time.Duration, limit int) (time.Time, bool) {
	idx, end := mastodonWindow(m.cfg.Now(), period)
	key := bucket + "|" + who + "|" + strconv.FormatInt(idx, 10)
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.windows) > 10_000 {
		clear(m.windows)
	}
	n := m.windows[key]
	if n >= limit {
		return end, true
	}
	m.windows[key] = n + 1
	return end, false
}

// mastodonWindow is the index of the window of period, aligned on the epoch, that now is in,
// and its end: how rack-attack and RateLimiter cut time.
func mastodonWindow(now time.Time, period time.Duration) (int64, time.Time) {
	secs := int64(period / time.Second)
	idx := now.Unix() / secs
	return idx, time.Unix((idx+1)*secs, 0).UTC()
}

func (m *Sim) windowEnd(period time.Duration) time.Time {
	_, end := mastodonWindow(m.cfg.Now(), period)
	return end
}

// mastodonInternal answers a failure of the simulator's State as Mastodon answers a failure of
// its storage: 503 with the message of docs.joinmastodon.org entities/Error (NetworkingError).
func mastodonInternal(w http.ResponseWriter) {
	mastodonError(w, http.StatusServiceUnavailable, "There was a temporary problem serving your request, please try again")
}

// tooMany answers 429 as rack-attack's throttled_responder does.
func (m *Sim) tooMany(w http.ResponseWriter, limit int, reset time.Time) {
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(limit))
	w.Header().Set("X-RateLimit-Remaining", "0")
	w.Header().Set("X-RateLimit-Reset", reset.UTC().Format("2006-01-02T15:04:05.000000Z"))
	mastodonError(w, http.StatusTooManyRequests, mastodonTooMany)
}

func (m *Sim) configuration(v2 bool) map[string]any {
	o := m.opts
	media := map[string]any{
		"supported_mime_types":   o.SupportedMimeTypes,
		"image_size_limit":       o.ImageSizeLimit,
		"image_matrix_limit":     o.ImageMatrixLimit,
		"video_size_limit":       o.VideoSizeLimit,
		"video_frame_rate_limit": o.VideoFrameRateLimit,
		"video_matrix_limit":     o.VideoMatrixLimit,
	}
	c := map[string]any{
		"accounts": map[string]any{"max_featured_tags": 10},
		"statuses": map[string]any{
			"max_characters":              o.MaxCharacters,
			"max_media_attachments":       o.MaxMediaAttachments,
			"characters_reserved_per_url": o.CharactersReservedPerURL,
		},
		"media_attachments": media,
		"polls": map[string]any{"max_options": 4, "max_characters_per_option": 50,
			"min_expiration": 300, "max_expiration": 2629746},
	}
	if v2 {
		media["description_limit"] = mastodonDescriptionMax
		c["urls"] = map[string]any{"streaming": "wss://" + o.Domain}
		c["translation"] = map[string]any{"enabled": false}
	}
	return c
}

func (m *Sim) instanceV2(w http.ResponseWriter) {
	mastodonJSON(w, http.StatusOK, map[string]any{
		"domain":        m.opts.Domain,
		"title":         "reelay Mastodon simulator",
		"version":       "4.3.0",
		"source_url":    "https://github.com/mastodon/mastodon",
		"description":   "A simulated Mastodon instance for reelay's sandbox channels.",
		"usage":         map[string]any{"users": map[string]any{"active_month": 1}},
		"thumbnail":     map[string]any{"url": m.cfg.BaseURL + "/packs/media/images/preview.png"},
		"languages":     []string{"en"},
		"configuration": m.configuration(true),
		"registrations": map[string]any{"enabled": false, "approval_required": false, "message": nil},
		"contact":       map[string]any{"email": "", "account": nil},
		"rules":         []any{},
	})
}

func (m *Sim) instanceV1(w http.ResponseWriter) {
	mastodonJSON(w, http.StatusOK, map[string]any{
		"uri":               m.opts.Domain,
		"title":             "reelay Mastodon simulator",
		"short_description": "A simulated Mastodon instance.",
		"description":       "A simulated Mastodon instance for reelay's sandbox channels.",
		"email":             "",
		"version":           "3.5.3",
		"urls":              map[string]any{"streaming_api": "wss://" + m.opts.Domain},
		"stats":             map[string]any{"user_count": 1, "status_count": 0, "domain_count": 0},
		"thumbnail":         m.cfg.BaseURL + "/packs/media/images/preview.png",
		"languages":         []string{"en"},
		"registrations":     false,
		"approval_required": false,
		"invites_enabled":   false,
		"configuration":     m.configuration(false),
		"contact_account":   nil,
		"rules":             []any{},
	})
}

func (m *Sim) username(acc sim.Account) string {
	if acc.Username != "" {
		return acc.Username
	}
	return acc.ID
}

// accountJSON renders an Account.
func (v *mdView) accountJSON(acc sim.Account) map[string]any {
	m := v.m
	u := m.username(acc)
	avatar := m.cfg.BaseURL + "/system/accounts/avatars/" + url.PathEscape(acc.ID) + "/original/avatar.png"
	return map[string]any{
		"id": acc.ID, "username": u, "acct": u, "display_name": u, "locked": false, "bot": false,
		"created_at": "2024-01-01T00:00:00.000Z", "note": "", "url": m.cfg.BaseURL + "/@" + u,
		"avatar": avatar, "avatar_static": avatar,
		"header": m.cfg.BaseURL + "/headers/original/missing.png", "header_static": m.cfg.BaseURL + "/headers/original/missing.png",
		"followers_count": 0, "following_count": 0, "statuses_count": v.statusCount(acc.ID),
		"emojis": []any{}, "fields": []any{},
	}
}

func (m *Sim) verifyCredentials(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	v := m.view(r.Context(), m.cfg.Now())
	a := v.accountJSON(acc)
	if v.err != nil {
		mastodonInternal(w)
		return
	}
	a["source"] = map[string]any{"privacy": "public", "sensitive": false, "language": "", "note": "", "fields": []any{}}
	mastodonJSON(w, http.StatusOK, a)
}

// mastodonNewID returns an unused id for a record of kind, made as Mastodon makes its ids: the
// milliseconds of now in the high bits, and in the low 16 bits a random number whose top bit
// is clear (audience comments set it, AudienceID). Random, not counted: another
// process, or the one before a restart, must not hand out the same.
func mastodonNewID(tx sim.Tx, kind string, now time.Time) (string, error) {
	for {
		low := int64(binary.BigEndian.Uint16(sim.RandomBytes(2)) & 0x7fff)
		id := strconv.FormatInt(now.UnixMilli()<<16|low, 10)
		_, found, err := tx.Get(mdKey(kind, id))
		if err != nil || !found {
			return id, err
		}
	}
}

func mastodonCompareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// uploadMedia serves POST /api/v2/media.
func (m *Sim) uploadMedia(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	if end, limited := m.throttle("media", acc.ID, 30*time.Minute, m.opts.MediaUploadsPerWindow); limited {
		m.tooMany(w, m.opts.MediaUploadsPerWindow, end)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, m.opts.VideoSizeLimit+2*m.opts.ImageSizeLimit+1<<20)
	defer drainMastodon(r.Body)
	mr, err := r.MultipartReader()
	if err != nil {
		mastodonError(w, http.StatusUnprocessableEntity, "Validation failed: File can't be blank")
		return
	}
	md := &mastodonMedia{}
	var file *os.File
	defer func() {
		if file != nil {
			_ = file.Close()
			_ = os.Remove(file.Name())
		}
	}()
	var fileErr, thumbErr string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			mastodonBrokenBody(w, err)
			return
		}
		switch part.FormName() {
		case "file":
			if file != nil {
				break // Rails keeps one value per name; the first is used here.
			}
			var refusal string
			file, fileErr, refusal, err = m.receiveFile(part, md)
			if err != nil {
				mastodonBrokenBody(w, err)
				return
			}
			if refusal != "" {
				// Raised by a callback, not a record error: rendered as it is.
				mastodonError(w, http.StatusUnprocessableEntity, refusal)
				return
			}
		case "thumbnail":
			thumbErr, err = m.receiveThumbnail(part, md)
			if err != nil {
				mastodonBrokenBody(w, err)
				return
			}
		case "description":
			b, _ := io.ReadAll(io.LimitReader(part, 64<<10))
			md.Description = string(b)
		}
		_ = part.Close()
	}
	var errs []string
	switch {
	case file == nil && fileErr == "":
		errs = append(errs, "File can't be blank")
	case fileErr != "":
		errs = append(errs, fileErr)
	}
	if thumbErr != "" {
		errs = append(errs, thumbErr)
	}
	if n := utf8.RuneCountInString(md.Description); n > mastodonDescriptionMax {
		errs = append(errs, fmt.Sprintf("Description is too long (maximum is %d characters)", mastodonDescriptionMax))
	}
	if len(errs) > 0 {
		mastodonError(w, http.StatusUnprocessableEntity, "Validation failed: "+strings.Join(errs, ", "))
		return
	}

	now := m.cfg.Now()
	processing := m.opts.DefaultProcessing
	if ms := acc.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	if md.Kind == "image" {
		processing = 0 // images are processed synchronously (Mastodon 4.0)
	}
	md.Failed = md.Failed || acc.Behavior.Fail == sim.FailReject
	md.Account = acc.ID
	md.Username = m.username(acc)
	md.CreatedAt = now
	md.ReadyAt = now.Add(processing)
	ext := map[string]string{"video": ".mp4", "image": ".png", "audio": ".mp3"}[md.Kind]
	// Unattached media is Mastodon's cleanup's a day after its upload
	// (app/workers/scheduler/media_cleanup_scheduler.rb): the record ends then.
	expires := now.Add(m.opts.UnattachedMediaTTL)
	err = m.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		id, err := mastodonNewID(tx, mdMediaKind, now)
		if err != nil {
			return err
		}
		md.ID = id
		md.FileURL = m.cfg.BaseURL + "/system/media_attachments/files/" + id + "/original/" + md.SHA256[:16] + ext
		md.PreviewURL = m.cfg.BaseURL + "/system/media_attachments/files/" + id + "/small/" + md.SHA256[:16] + ".png"
		if err := sim.Save(tx, sim.Record{Key: mdKey(mdMediaKind, id), Account: acc.ID, Expires: expires}, md); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Mastodon, sim.Upload{Account: acc.ID, Bytes: md.Bytes, SHA256: md.SHA256})
	})
	if err != nil {
		mastodonInternal(w)
		return
	}
	body := mediaJSON(md, now)
	status := http.StatusOK
	if md.Kind != "image" {
		status = http.StatusAccepted // video and audio are processed in the background
	}
	mastodonJSON(w, status, body)
}

// receiveFile spools the file part to a temporary file, hashing it, and checks its type and
// size. A non-empty fileErr is a validation error; a non-empty refusal is an error a
// callback raises, which Mastodon renders as it is; err means the body broke off.
func (m *Sim) receiveFile(part *multipart.Part, md *mastodonMedia) (file *os.File, fileErr, refusal string, err error) {
	ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
	md.ContentType = ct
	if !slices.Contains(m.opts.SupportedMimeTypes, ct) {
		_, err := io.Copy(io.Discard, part)
		return nil, "File content type is invalid, File is invalid", "", err
	}
	switch {
	case slices.Contains(mastodonVideoTypes, ct):
		md.Kind = "video"
	case slices.Contains(mastodonImageTypes, ct):
		md.Kind = "image"
	default:
		md.Kind = "audio"
	}
	limit := m.opts.VideoSizeLimit
	if md.Kind == "image" {
		limit = m.opts.ImageSizeLimit
	}
	f, err := os.CreateTemp("", "reelay-mastodon-sim-*.upload")
	if err != nil {
		return nil, "", "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(part, limit+1))
	if err != nil {
		return f, "", "", err
	}
	if n > limit {
		_, err := io.Copy(io.Discard, part)
		return f, fmt.Sprintf("File file size must be less than %s", mastodonHumanSize(limit)), "", err
	}
	if n == 0 {
		return f, "File can't be blank", "", nil
	}
	md.Bytes, md.SHA256 = n, hex.EncodeToString(h.Sum(nil))
	const spoofed = "File has contents that are not what they are reported to be"
	switch md.Kind {
	case "video":
		info, err := media.Probe(f, n)
		want := map[string][]string{"video/mp4": {"mp4", "mov"}, "video/quicktime": {"mov", "mp4"}, "video/webm": {"webm"}}[ct]
		if err != nil || (want != nil && !slices.Contains(want, info.Kind.Name)) || !info.Kind.IsVideo() {
			return f, spoofed, "", nil
		}
		// MediaAttachment#check_video_dimensions raises DimensionsValidationError when the
		// whole frames per second exceed the limit the instance announces (a stock server's
		// MAX_VIDEO_FRAME_RATE); the API answers it as 422 with its message alone.
		if fps := math.Floor(info.FrameRate); fps > float64(m.opts.VideoFrameRateLimit) {
			return f, "", fmt.Sprintf("%dfps videos are not supported", int(fps)), nil
		}
		md.Width, md.Height, md.Duration = info.Width, info.Height, info.Duration
		// The transcoder refuses pictures over the matrix limit: processing fails.
		md.Failed = int64(info.Width)*int64(info.Height) > m.opts.VideoMatrixLimit
	case "image":
		head := make([]byte, 16)
		k, _ := f.ReadAt(head, 0)
		if _, ok := media.Sniff(head[:k]); !ok {
			return f, spoofed, "", nil
		}
	}
	return f, "", "", nil
}

// receiveThumbnail reads the thumbnail part, hashing and counting it without keeping it.
func (m *Sim) receiveThumbnail(part *multipart.Part, md *mastodonMedia) (string, error) {
	ct, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
	md.ThumbnailType = ct
	head := make([]byte, 16)
	k, _ := io.ReadFull(part, head)
	n, err := io.Copy(io.Discard, io.LimitReader(part, m.opts.ImageSizeLimit+1))
	if err != nil {
		return "", err
	}
	md.ThumbnailBytes = int64(k) + n
	if !slices.Contains(mastodonImageTypes, ct) || !slices.Contains(m.opts.SupportedMimeTypes, ct) {
		return "Thumbnail content type is invalid, Thumbnail is invalid", nil
	}
	if md.ThumbnailBytes > m.opts.ImageSizeLimit {
		_, err := io.Copy(io.Discard, part)
		return "Thumbnail file size must be less than " + mastodonHumanSize(m.opts.ImageSizeLimit), err
	}
	if _, ok := media.Sniff(head[:k]); !ok {
		return "Thumbnail has contents that are not what they are reported to be", nil
	}
	return "", nil
}

// mastodonHumanSize writes a size as Rails' number_to_human_size does for whole units.
func mastodonHumanSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " Bytes"
}

// usable reports whether media can still be fetched or attached: owned by acc, not attached,
// not cleaned up.
func (m *Sim) usable(md *mastodonMedia, accountID string, now time.Time) bool {
	return md != nil && md.Account == accountID && md.StatusID == "" &&
		now.Before(md.CreatedAt.Add(m.opts.UnattachedMediaTTL))
}

func (m *Sim) getMedia(w http.ResponseWriter, r *http.Request, acc sim.Account, id string) {
	now := m.cfg.Now()
	md, _, found, err := sim.Load[mastodonMedia](r.Context(), m.cfg.State, mdKey(mdMediaKind, id))
	switch {
	case err != nil:
		mastodonInternal(w)
	case !found || !m.usable(&md, acc.ID, now):
		mastodonError(w, http.StatusNotFound, mastodonNotFound)
	case now.Before(md.ReadyAt):
		mastodonJSON(w, http.StatusPartialContent, mediaJSON(&md, now))
	case md.Failed:
		mastodonError(w, http.StatusUnprocessableEntity, mastodonProcessingErr)
	default:
		mastodonJSON(w, http.StatusOK, mediaJSON(&md, now))
	}
}

// mediaJSON renders a MediaAttachment; url is null until processed.
func mediaJSON(md *mastodonMedia, now time.Time) map[string]any {
	typ := md.Kind
	if typ == "" {
		typ = "unknown"
	}
	out := map[string]any{
		"id": md.ID, "type": typ, "url": nil, "preview_url": md.PreviewURL, "remote_url": nil,
		"preview_remote_url": nil, "text_url": nil, "meta": map[string]any{}, "blurhash": nil,
		"description": nil,
	}
	if md.Description != "" {
		out["description"] = md.Description
	}
	if !now.Before(md.ReadyAt) && !md.Failed {
		out["url"] = md.FileURL
		if md.Width > 0 && md.Height > 0 {
			orig := map[string]any{"width": md.Width, "height": md.Height,
				"size":   fmt.Sprintf("%dx%d", md.Width, md.Height),
				"aspect": float64(md.Width) / float64(md.Height)}
			if md.Duration > 0 {
				orig["duration"] = md.Duration.Seconds()
			}
			out["meta"] = map[string]any{"original": orig}
		}
	}
	return out
}

// mastodonStatusParams are the parameters of POST /api/v1/statuses.
type mastodonStatusParams struct {
	status, visibility, spoiler, language, inReplyTo, scheduledAt string
	sensitive                                                     bool
	mediaIDs                                                      []string
	poll                                                          bool
}

// parseStatusParams reads JSON, form-urlencoded or multipart parameters, as Rails does.
func parseStatusParams(r *http.Request) (mastodonStatusParams, error) {
	var p mastodonStatusParams
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		var raw map[string]json.RawMessage
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return p, err
		}
		str := func(k string) string {
			var v any
			if b, ok := raw[k]; ok && json.Unmarshal(b, &v) == nil && v != nil {
				return fmt.Sprint(v)
			}
			return ""
		}
		p.status, p.visibility, p.spoiler = str("status"), str("visibility"), str("spoiler_text")
		p.language, p.inReplyTo, p.scheduledAt = str("language"), str("in_reply_to_id"), str("scheduled_at")
		p.sensitive = mastodonBool(str("sensitive"))
		if b, ok := raw["media_ids"]; ok {
			var ids []any
			if err := json.Unmarshal(b, &ids); err != nil {
				return p, errors.New("media_ids must be an array")
			}
			for _, id := range ids {
				p.mediaIDs = append(p.mediaIDs, fmt.Sprint(id))
			}
		}
		_, p.poll = raw["poll"]
		return p, nil
	}
	if mt == "multipart/form-data" {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			return p, err
		}
	} else if err := r.ParseForm(); err != nil {
		return p, err
	}
	f := r.Form
	p.status, p.visibility, p.spoiler = f.Get("status"), f.Get("visibility"), f.Get("spoiler_text")
	p.language, p.inReplyTo, p.scheduledAt = f.Get("language"), f.Get("in_reply_to_id"), f.Get("scheduled_at")
	p.sensitive = mastodonBool(f.Get("sensitive"))
	p.mediaIDs = f["media_ids[]"]
	for k := range f {
		if strings.HasPrefix(k, "poll[") {
			p.poll = true
		}
	}
	return p, nil
}

// mastodonBool casts as ActiveModel::Type::Boolean: "", "0", "f", "false", "off" are false.
func mastodonBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "0", "f", "false", "off":
		return false
	}
	return true
}

// postStatus serves POST /api/v1/statuses.
func (m *Sim) postStatus(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	p, err := parseStatusParams(r)
	if err != nil {
		mastodonError(w, http.StatusBadRequest, "Invalid parameters: "+err.Error())
		return
	}
	ctx := r.Context()
	now := m.cfg.Now()
	v := m.view(ctx, now)
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	idemKey := mdKey(mdIdemKind, mastodonIdemID(acc.ID, key))
	// answer renders the status with id, read after the change that made it.
	answer := func(id string) {
		var body map[string]any
		if s := v.status(id); s != nil {
			body = v.statusJSON(s)
		}
		if v.err != nil || body == nil {
			mastodonInternal(w)
			return
		}
		mastodonJSON(w, http.StatusOK, body)
	}
	// The controller finds the status answered before PostStatusService runs.
	var parent *mastodonStatus
	if p.inReplyTo != "" {
		parent = v.status(p.inReplyTo)
		if v.err != nil {
			mastodonInternal(w)
			return
		}
		if parent == nil || !visibleTo(parent, acc.ID) {
			mastodonError(w, http.StatusNotFound, mastodonReplyNotFound)
			return
		}
	}
	// PostStatusService answers a known key before anything else is checked.
	if key != "" {
		e, _, found, err := sim.Load[mastodonIdem](ctx, m.cfg.State, idemKey)
		if err != nil {
			mastodonInternal(w)
			return
		}
		if found {
			s := v.status(e.StatusID)
			if v.err != nil {
				mastodonInternal(w)
				return
			}
			if s != nil {
				answer(e.StatusID)
				return
			}
		}
	}
	if p.scheduledAt != "" {
		mastodonError(w, http.StatusUnprocessableEntity, "scheduled_at is not supported by the reelay simulator")
		return
	}
	var attached []*mastodonMedia
	if len(p.mediaIDs) > 0 {
		if len(p.mediaIDs) > m.opts.MaxMediaAttachments || p.poll {
			mastodonError(w, http.StatusUnprocessableEntity, fmt.Sprintf("Cannot attach more than %d files", m.opts.MaxMediaAttachments))
			return
		}
		var missing []string
		for _, id := range p.mediaIDs {
			md := v.media(id)
			if !m.usable(md, acc.ID, now) || slices.Contains(attached, md) {
				missing = append(missing, id)
				continue
			}
			attached = append(attached, md)
		}
		if v.err != nil {
			mastodonInternal(w)
			return
		}
		if len(missing) > 0 {
			mastodonError(w, http.StatusUnprocessableEntity, mastodonMediaMissing(missing))
			return
		}
		if len(attached) > 1 && slices.ContainsFunc(attached, func(md *mastodonMedia) bool { return md.Kind != "image" }) {
			mastodonError(w, http.StatusUnprocessableEntity, mastodonImagesAndVideo)
			return
		}
		for _, md := range attached {
			if now.Before(md.ReadyAt) || md.Failed {
				mastodonError(w, http.StatusUnprocessableEntity, mastodonNotReady)
				return
			}
		}
	} else if p.poll {
		mastodonError(w, http.StatusUnprocessableEntity, "polls are not supported by the reelay simulator")
		return
	}
	visibility := p.visibility
	if visibility == "" {
		visibility = "public" // the account's default privacy
	}
	var errs []string
	if strings.TrimSpace(p.status) == "" && len(attached) == 0 {
		if strings.TrimSpace(p.spoiler) != "" {
			p.status, p.spoiler = p.spoiler, "" // PostStatusService uses a lone content warning as text
		} else {
			errs = append(errs, "Text can't be blank")
		}
	}
	if n := platform.MastodonLength(p.status, p.spoiler, m.opts.CharactersReservedPerURL); n > m.opts.MaxCharacters {
		errs = append(errs, fmt.Sprintf("Text character limit of %d exceeded", m.opts.MaxCharacters))
	}
	if !slices.Contains([]string{"public", "unlisted", "private", "direct"}, visibility) {
		errs = append(errs, "Visibility is not included in the list")
	}
	if len(errs) > 0 {
		mastodonError(w, http.StatusUnprocessableEntity, "Validation failed: "+strings.Join(errs, ", "))
		return
	}
	language := p.language
	if !mastodonLanguageRe.MatchString(language) {
		language = "en" // valid_locale_cascade falls back to the default locale
	}
	u := m.username(acc)
	// RateLimiter counts the statuses an account created in windows of 3 hours aligned on the
	// epoch (app/lib/rate_limiter.rb), kept in the State: every process counts the same.
	window, windowEnd := mastodonWindow(now, 3*time.Hour)
	windowKey := mdKey(mdStatusesKind, acc.ID+"|"+strconv.FormatInt(window, 10))
	var created, repeated string
	var missing []string
	var limited bool
	err = m.cfg.State.Update(ctx, func(tx sim.Tx) error {
		created, repeated, missing, limited = "", "", nil, false
		if key != "" {
			e, _, found, err := sim.LoadTx[mastodonIdem](tx, idemKey)
			if err != nil {
				return err
			}
			if found {
				repeated = e.StatusID // made by a request that ran meanwhile
				return nil
			}
		}
		// The media read above, locked: a request that ran meanwhile may have attached it.
		mds := make([]mastodonMedia, len(attached))
		for i, md := range attached {
			cur, _, found, err := sim.LoadTx[mastodonMedia](tx, mdKey(mdMediaKind, md.ID))
			if err != nil {
				return err
			}
			if !found || !m.usable(&cur, acc.ID, now) {
				missing = append(missing, md.ID)
			}
			mds[i] = cur
		}
		if len(missing) > 0 {
			return nil
		}
		ok, err := sim.TakeInWindow(tx, windowKey, acc.ID, now, 3*time.Hour, m.opts.StatusesPerWindow)
		if limited = !ok; err != nil || limited {
			return err
		}
		id, err := mastodonNewID(tx, mdStatusKind, now)
		if err != nil {
			return err
		}
		s := mastodonStatus{Username: u, Status: Status{
			ID: id, Account: acc.ID, Text: p.status, SpoilerText: p.spoiler, Visibility: visibility,
			Language: language, Sensitive: p.sensitive || p.spoiler != "", IdempotencyKey: key, CreatedAt: now,
			InReplyToID: p.inReplyTo, URL: m.cfg.BaseURL + "/@" + u + "/" + id,
			URI: m.cfg.BaseURL + "/users/" + u + "/statuses/" + id,
		}}
		sha := ""
		for _, md := range mds {
			// Attached, the media is no longer the cleanup's: it is kept with its status.
			md.StatusID = id
			if err := sim.Save(tx, sim.Record{Key: mdKey(mdMediaKind, md.ID), Account: acc.ID}, md); err != nil {
				return err
			}
			s.MediaIDs = append(s.MediaIDs, md.ID)
			if sha == "" && md.Kind == "video" {
				sha = md.SHA256
			}
		}
		if err := sim.Save(tx, sim.Record{Key: mdKey(mdStatusKind, id), Account: acc.ID}, s); err != nil {
			return err
		}
		if key != "" {
			// "Stored for up to 1 hour" (docs.joinmastodon.org methods/statuses, Idempotency-Key).
			rec := sim.Record{Key: idemKey, Account: acc.ID, Expires: now.Add(m.opts.IdempotencyTTL)}
			if err := sim.Save(tx, rec, mastodonIdem{StatusID: id}); err != nil {
				return err
			}
		}
		created = id
		if parent == nil {
			return sim.RecordTx(tx, platform.Mastodon, sim.Published{Account: acc.ID, ID: id, URL: s.URL, SHA256: sha, Text: s.Text})
		}
		repliesKey := mdKey(mdRepliesKind, parent.ID)
		replies, rec, _, err := sim.LoadTx[[]string](tx, repliesKey)
		if err != nil {
			return err
		}
		if err := sim.Save(tx, rec, append(replies, id)); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Mastodon, sim.Reply{Account: acc.ID, CommentID: parent.ID, Text: s.Text})
	})
	switch {
	case err != nil:
		mastodonInternal(w)
	case repeated != "":
		answer(repeated)
	case len(missing) > 0:
		mastodonError(w, http.StatusUnprocessableEntity, mastodonMediaMissing(missing))
	case limited:
		m.tooMany(w, m.opts.StatusesPerWindow, windowEnd)
	default:
		// The view read the media before they were attached.
		clear(v.mediaRead)
		answer(created)
	}
}

// mastodonMediaMissing is PostStatusService's message for media ids it cannot attach.
func mastodonMediaMissing(ids []string) string {
	return "Media " + strings.Join(ids, ", ") + " not found or already attached to another post"
}

// mastodonIdemID names an account's Idempotency-Key by its hash: a key is whatever the client
// sends, of any length.
func mastodonIdemID(account, key string) string {
	sum := sha256.Sum256([]byte(key))
	return account + "|" + hex.EncodeToString(sum[:16])
}

// statusJSON renders a Status, with its figures at the view's clock.
func (v *mdView) statusJSON(s *mastodonStatus) map[string]any {
	attachments := make([]any, 0, len(s.MediaIDs))
	for _, id := range s.MediaIDs {
		if md := v.media(id); md != nil {
			attachments = append(attachments, mediaJSON(md, v.now))
		}
	}
	content, mentions := v.content(s.Text)
	var inReplyTo, inReplyToAccount any
	if s.InReplyToID != "" {
		inReplyTo = s.InReplyToID
		if p := v.status(s.InReplyToID); p != nil {
			inReplyToAccount = p.Account
		}
	}
	favourites, reblogs := reactions(s, v.now)
	application := any(map[string]any{"name": "reelay", "website": nil})
	if s.audience != nil {
		application = nil // not shown for statuses of other servers
	}
	return map[string]any{
		"id": s.ID, "created_at": s.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
		"in_reply_to_id": inReplyTo, "in_reply_to_account_id": inReplyToAccount, "sensitive": s.Sensitive,
		"spoiler_text": s.SpoilerText, "visibility": s.Visibility, "language": s.Language,
		"uri": s.URI, "url": s.URL, "replies_count": len(v.children(s)),
		"reblogs_count": reblogs, "favourites_count": favourites,
		"edited_at": nil, "content": content, "reblog": nil,
		"application":       application,
		"account":           v.authorJSON(s),
		"media_attachments": attachments, "mentions": mentions, "tags": []any{}, "emojis": []any{},
		"card": nil, "poll": nil,
	}
}

// visibleTo reports whether a status may be shown to the caller.
func visibleTo(s *mastodonStatus, callerID string) bool {
	return s.Visibility == "public" || s.Visibility == "unlisted" || s.Account == callerID
}

// caller resolves an optional token; public endpoints answer 401 to a token that is invalid,
// and a call with a valid one meets the account's call faults and the per-token throttle.
func (m *Sim) caller(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok := mastodonToken(r)
	if tok == "" {
		return "", true
	}
	if m.cfg.Accounts != nil {
		if acc, ok := m.cfg.Accounts.Resolve(r.Context(), tok); ok {
			return acc.ID, !m.refused(w, r, tok, acc)
		}
	}
	mastodonError(w, http.StatusUnauthorized, mastodonInvalidToken)
	return "", false
}

func (m *Sim) getStatus(w http.ResponseWriter, r *http.Request, id string) {
	callerID, ok := m.caller(w, r)
	if !ok {
		return
	}
	v := m.view(r.Context(), m.cfg.Now())
	var body map[string]any
	if s := v.status(id); s != nil && visibleTo(s, callerID) {
		body = v.statusJSON(s)
	}
	switch {
	case v.err != nil:
		mastodonInternal(w)
	case body == nil:
		mastodonError(w, http.StatusNotFound, mastodonNotFound)
	default:
		mastodonJSON(w, http.StatusOK, body)
	}
}

func (m *Sim) accountStatuses(w http.ResponseWriter, r *http.Request, id string) {
	callerID, ok := m.caller(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit := 20
	if v, err := strconv.Atoi(q.Get("limit")); err == nil && v > 0 {
		limit = min(v, 40)
	}
	onlyMedia := mastodonBool(q.Get("only_media"))
	maxID := q.Get("max_id")
	ctx := r.Context()
	_, _, known, err := sim.Load[mastodonAccount](ctx, m.cfg.State, mdKey(mdAccountKind, id))
	if err != nil {
		mastodonInternal(w)
		return
	}
	if !known {
		mastodonError(w, http.StatusNotFound, mastodonNotFound)
		return
	}
	all, err := sim.ListJSON[mastodonStatus](ctx, m.cfg.State, mdKey(mdStatusKind, ""), id)
	if err != nil {
		mastodonInternal(w)
		return
	}
	v := m.view(ctx, m.cfg.Now())
	out := []any{}
	for i := len(all) - 1; i >= 0 && len(out) < limit; i-- {
		s := &all[i]
		if !visibleTo(s, callerID) || (onlyMedia && len(s.MediaIDs) == 0) ||
			(maxID != "" && mastodonCompareIDs(s.ID, maxID) >= 0) {
			continue
		}
		v.statuses[s.ID] = s
		out = append(out, v.statusJSON(s))
	}
	if v.err != nil {
		mastodonInternal(w)
		return
	}
	mastodonJSON(w, http.StatusOK, out)
}

var mastodonLanguageRe = regexp.MustCompile(`^[a-z]{2,3}$`)

func mastodonJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func mastodonError(w http.ResponseWriter, status int, msg string) {
	mastodonJSON(w, status, map[string]string{"error": msg})
}

// mastodonBrokenBody answers a request body that broke off or grew too large.
func mastodonBrokenBody(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		mastodonError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	mastodonError(w, http.StatusBadRequest, "The request body is incomplete: "+err.Error())
}

func drainMastodon(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, body)
	_ = body.Close()
}

var _ http.Handler = (*Sim)(nil)
