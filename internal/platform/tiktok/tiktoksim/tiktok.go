// Package tiktoksim is the simulator of TikTok's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package tiktoksim

// TikTok Content Posting API simulator.
//
// Sources: developers.tiktok.com/doc/content-posting-api-reference-direct-post,
// …-reference-upload-video, …-media-transfer-guide, …-reference-get-video-status,
// …-reference-query-creator-info and /doc/tiktok-api-v2-error-handling (copies of these pages
// were read through the search tool). What the pages leave open, and how it is decided here:
//
//   - "MB" in the chunk rules is not said to be decimal or binary. The simulator enforces the
//     stricter reading of each bound: chunks at least 5 MiB (5,242,880 bytes), at most
//     64,000,000 bytes, a final chunk at most 128,000,000 bytes, whole-file upload below 5 MiB,
//     several chunks above 64,000,000 bytes, videos up to 4,000,000,000 bytes. A client that
//     passes here passes under either reading.
//   - A single chunk must declare chunk_size equal to video_size (field reports of "The chunk
//     size is invalid" otherwise; the docs' own single-chunk example does so).
//   - invalid_params messages "The chunk size is invalid" and "The total chunk count is
//     invalid" are TikTok's own, as reported by API users; the other messages are this
//     simulator's wording.
//   - The upload URL answers 206 per accepted chunk and 201 when all bytes are in, with
//     "Content-Range: bytes 0-{LAST}/{TOTAL}" (the docs write 0-{UPLOADED_BYTES}; this
//     simulator sends the index of the last byte received, as HTTP does), 400 for malformed
//     headers or a byte count that does not match, 403 once the URL's hour is over, 404 for an
//     unknown upload, 416 for a range that is not the next one (a chunk sent again after a crash
//     included), 5xx for faults.
//   - Processing is timed by Config.Now: Behavior.ProcessingMS (< 0: 2 s) after the last chunk,
//     the post is PUBLISH_COMPLETE (direct) or SEND_TO_USER_INBOX (inbox), or FAILED with a
//     fail_reason. publicaly_available_post_id is filled only for PUBLIC_TO_EVERYONE posts and
//     only after a further moderation delay, as the status reference says. An inbox post stays
//     SEND_TO_USER_INBOX until CompleteInbox plays the creator finishing it in the app.
//   - After the upload the video is checked with media.Probe: MP4/MOV/WebM, H.264/H.265/VP8/VP9,
//     3 s to the creator's max_video_post_duration_sec (direct) or 600 s (inbox), 360–4096 px
//     a side, 23–60 fps; the reject behavior fails it with file_format_check_failed.
//   - Limits per token and sliding minute (creator_info 20, each init 6, status 30) → 429
//     rate_limit_exceeded with Retry-After; 15 direct posts per creator and rolling day →
//     spam_risk_too_many_posts (creator_info says so with HTTP 200, as documented); 5 pending
//     inbox uploads per day → spam_risk_too_many_pending_share.
//   - Call faults in TikTok's error shape: unavailable → 503 internal_error (the upload URL too),
//     auth → 401 access_token_invalid, rate_limit → 429 rate_limit_exceeded, Retry-After: 1.
//   - GET /v2/user/info/?fields=... (tiktok-api-v2-get-user-info): data.user with exactly the
//     fields asked for; fields is required, and a name outside the documented User Object is
//     refused with invalid_params (the simulator's choice: the page lists the fields, not
//     what TikTok does with others). Each field needs its scope: open_id, union_id,
//     avatar_url, avatar_url_100, avatar_large_url and display_name user.info.basic; username,
//     bio_description, profile_deep_link and is_verified user.info.profile; the counts
//     user.info.stats (the 2024 scope migration bulletin); one missing scope fails the whole
//     request with 401 scope_not_authorized, as API users report. open_id is the account's ID,
//     so that a sandbox channel named by it is the channel that publishes. 600 requests per
//     minute (the rate-limits page; TikTok counts per app, the simulator per token).
//   - Scopes (Options.Scopes, all by default): creator_info and the direct post init
//     need video.publish, the inbox init video.upload, the status fetch either, the video
//     query (audience.go) video.list.
//
//   - Unaudited apps (Behavior.AppAccess not "audited", the default: a new TikTok app is not
//     audited). TikTok's Content Sharing Guidelines (developers.tiktok.com/doc/
//     content-sharing-guidelines/, "Direct Post API - Developer Guidelines") say an API client
//     that has not passed TikTok's audit "can only post contents in SELF_ONLY viewership", and
//     the Direct Post reference says all content it posts "will be restricted to private
//     viewing mode". A direct post init with any other privacy_level is refused with 403
//     unaudited_client_can_only_post_to_private_accounts (the code TikTok answers, as API users
//     report it; the message is this simulator's). creator_info still answers the account's
//     own privacy_level_options: its reference ties them to whether the account is public or
//     private and says nothing of the app's audit. Inbox uploads are not Direct Posts and are
//     not restricted.
//     The same guidelines cap the users: an unaudited client "can allow up to 5 users to post
//     in a 24 hour window". The direct post init of a sixth creator is refused with 403
//     reached_active_user_cap (TikTok's code for it, as API users report it) while the five
//     post on; a creator counts until a day after their last direct post. The cap is per app
//     (sim.Account.App; Options.UnauditedPostersPerDay).
//
// Not reproduced: PULL_FROM_URL (no URL prefix is ever verified: 403 url_ownership_unverified),
// the unaudited clients' rule that accounts be set to private at posting time (the simulated
// creators have no visibility of their own), photo posts and /publish/cancel/.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// TikTok's documented limits, in the strictest reading (see the file comment).
const (
	tiktokMinChunk       = 5 << 20       // "at least 5 MB": 5 MiB is the stricter minimum
	tiktokMaxChunk       = 64_000_000    // "no greater than 64 MB"
	tiktokMaxFinalChunk  = 128_000_000   // "up to 128 MB"
	tiktokMaxChunks      = 1000          // "a maximum of 1000 chunks"
	tiktokMaxVideoBytes  = 4_000_000_000 // "Maximum of 4GB"
	tiktokUploadURLTTL   = time.Hour     // "The upload_url is valid for one hour after issuance."
	tiktokMinDuration    = 3 * time.Second
	tiktokDevMaxDuration = 600 * time.Second // longest video a developer can send
	tiktokMinSide        = 360
	tiktokMinFPS         = 23
	tiktokMaxFPS         = 60
	tiktokMaxSide        = 4096
)

// tiktokTitleLimit is TikTok's limit of post_info.title: 2,200 UTF-16 units (Content Posting
// API, Direct Post reference).
var tiktokTitleLimit = platform.TextLimit{Max: 2200, Unit: platform.UnitUTF16}

// Privacy levels of TikTok posts.
const (
	Public    = "PUBLIC_TO_EVERYONE"
	Friends   = "MUTUAL_FOLLOW_FRIENDS"
	Followers = "FOLLOWER_OF_CREATOR"
	SelfOnly  = "SELF_ONLY"
)

// Post statuses of /v2/post/publish/status/fetch/.
const (
	ProcessingUpload = "PROCESSING_UPLOAD"
	SendToUserInbox  = "SEND_TO_USER_INBOX"
	PublishComplete  = "PUBLISH_COMPLETE"
	Failed           = "FAILED"
)

// Creator is what creator_info answers for one account.
type Creator struct {
	Username  string
	Nickname  string
	AvatarURL string
	// PrivacyLevelOptions defaults to PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, SELF_ONLY (a
	// public account). Whether the app is audited does not change them (Behavior.AppAccess).
	PrivacyLevelOptions []string
	CommentDisabled     bool
	DuetDisabled        bool
	StitchDisabled      bool
	// MaxVideoPostDurationSec defaults to 600.
	MaxVideoPostDurationSec int
}

// Options tunes the simulator; the zero value is TikTok's documented behaviour.
type Options struct {
	// Creators overrides creator_info per account ID.
	Creators map[string]Creator
	// DefaultProcessing is the processing time when the account's Behavior.ProcessingMS < 0
	// (0: 2 s).
	DefaultProcessing time.Duration
	// ModerationDelay is how long after PUBLISH_COMPLETE a public post gets its
	// publicaly_available_post_id (0: 3 s; < 0: at once).
	ModerationDelay time.Duration
	// PostsPerDay is the direct posts a creator may start per rolling 24 h (0: 15).
	PostsPerDay int
	// PendingSharesPerDay is the inbox uploads a creator may have pending per rolling 24 h
	// (0: 5).
	PendingSharesPerDay int
	// UnauditedPostersPerDay is how many creators an unaudited app lets start direct posts
	// per rolling 24 h (0: 5).
	UnauditedPostersPerDay int
	// Per-token requests per minute: creator_info (0: 20), each init endpoint (0: 6),
	// status fetch (0: 30), user info (0: 600), video query (0: 600).
	CreatorInfoPerMinute, InitPerMinute, StatusPerMinute, UserInfoPerMinute, VideoQueryPerMinute int
	// Scopes are the scopes each account (by ID) granted the app; an account without an entry
	// granted them all (Scopes).
	Scopes map[string][]string
}

// Scopes are the scopes the simulator knows.
var Scopes = []string{"user.info.basic", "user.info.profile", "user.info.stats", "video.list", "video.publish", "video.upload"}

// tiktokUserFields are the fields of the User Object of /v2/user/info/ and the scope each needs.
var tiktokUserFields = map[string]string{
	"open_id": "user.info.basic", "union_id": "user.info.basic", "avatar_url": "user.info.basic",
	"avatar_url_100": "user.info.basic", "avatar_large_url": "user.info.basic", "display_name": "user.info.basic",
	"bio_description": "user.info.profile", "profile_deep_link": "user.info.profile", "is_verified": "user.info.profile",
	"username": "user.info.profile", "follower_count": "user.info.stats", "following_count": "user.info.stats",
	"likes_count": "user.info.stats", "video_count": "user.info.stats",
}

// Post is what the simulator knows of one publish_id (for tests and introspection).
type Post struct {
	PublishID      string
	Account        string
	Mode           string // direct or inbox
	Title          string
	PrivacyLevel   string
	DisableComment bool
	DisableDuet    bool
	DisableStitch  bool
	IsAIGC         bool
	VideoSize      int64
	ChunkSize      int64
	TotalChunks    int
	UploadedBytes  int64
	SHA256         string
	Status         string
	FailReason     string
	PostID         string
}

// Sim simulates TikTok's Content Posting API. It implements http.Handler.
//
// Its publish_ids, upload sessions and daily caps are records of Config.State, and the bytes
// of an upload in progress blobs of Config.Blobs, so that any process serving the simulator
// goes on with them. The per-minute rate limits are counted in this process: a deviation
// (several processes allow a token their limit each), as they refill within the minute.
type Sim struct {
	cfg      sim.Config
	opts     Options
	basePath string

	mu       sync.Mutex
	creators map[string]Creator
	calls    map[string][]time.Time // token|endpoint → request times within the last minute
}

// The kinds of the TikTok simulator's records.
const (
	// tiktokPostKind is a publish_id's post (tiktokPost), kept until retention.
	tiktokPostKind = "post"
	// tiktokUploadKind is an upload URL's session (tiktokUpload), with the upload's blobs. It
	// lives an hour past the URL's, so that a late chunk is told the URL expired (403), not
	// that it never existed.
	tiktokUploadKind = "upload"
	// tiktokDirectKind is an account's direct post inits of the last 24 hours ([]time.Time),
	// for the daily cap.
	tiktokDirectKind = "direct_inits"
	// tiktokPostersKind is, per app (sim.Account.App), the creators who started a direct post
	// through it while it was unaudited, with the time of their last one (map[string]time.Time),
	// for the cap on posting users.
	tiktokPostersKind = "unaudited_posters"
)

func tiktokKey(kind, id string) sim.Key {
	return sim.Key{Platform: platform.TikTok, Kind: kind, ID: id}
}

// tiktokPost is what the simulator keeps of a publish_id.
type tiktokPost struct {
	PublishID   string        `json:"publish_id"`
	Account     sim.Account   `json:"account"`
	Mode        string        `json:"mode"`
	Title       string        `json:"title,omitempty"`
	Privacy     string        `json:"privacy,omitempty"`
	DisComment  bool          `json:"dis_comment,omitempty"`
	DisDuet     bool          `json:"dis_duet,omitempty"`
	DisStitch   bool          `json:"dis_stitch,omitempty"`
	AIGC        bool          `json:"aigc,omitempty"`
	MaxDuration time.Duration `json:"max_duration"`
	VideoSize   int64         `json:"video_size"`
	ChunkSize   int64         `json:"chunk_size"`
	Chunks      int           `json:"chunks"`
	Issued      time.Time     `json:"issued"`

	Received    int64         `json:"received,omitempty"`
	Completed   bool          `json:"completed,omitempty"`
	CompletedAt time.Time     `json:"completed_at,omitzero"`
	Processing  time.Duration `json:"processing,omitempty"`
	SHA         string        `json:"sha,omitempty"`
	// Verdict is the fail_reason decided at upload completion, "" when the video passes;
	// Duration, Width and Height what media.Probe found in the complete upload.
	Verdict  string        `json:"verdict,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Width    int           `json:"width,omitempty"`
	Height   int           `json:"height,omitempty"`
	// Status is the final status once processing is over, "" before.
	Status       string    `json:"status,omitempty"`
	FinishedAt   time.Time `json:"finished_at,omitzero"`
	PostID       string    `json:"post_id,omitempty"`
	UserPosted   bool      `json:"user_posted,omitempty"`
	RecordedPost bool      `json:"recorded_post,omitempty"`
}

// tiktokUpload is an upload URL's session: the plan of the upload and what arrived so far.
type tiktokUpload struct {
	PublishID string `json:"publish_id"`
	// TokenSHA is the SHA-256 of the URL's upload_token: the URL is a credential.
	TokenSHA    []byte        `json:"token_sha"`
	Behavior    sim.Behavior  `json:"behavior"`
	VideoSize   int64         `json:"video_size"`
	ChunkSize   int64         `json:"chunk_size"`
	Chunks      int           `json:"chunks"`
	MaxDuration time.Duration `json:"max_duration"`
	Issued      time.Time     `json:"issued"`
	Received    int64         `json:"received,omitempty"`
	// Spool is what the kept bytes so far are (their blobs), Hash the SHA-256 state of all of
	// them.
	Spool sim.SpoolState `json:"spool"`
	Hash  []byte         `json:"hash,omitempty"`
}

// New returns the TikTok simulator with TikTok's documented behaviour.
func New(cfg sim.Config) http.Handler {
	return NewSim(cfg, Options{})
}

// NewSim returns the TikTok simulator with options, for tests that need an unaudited
// creator, tighter caps or other timings.
func NewSim(cfg sim.Config, opts Options) *Sim {
	cfg.Normalize()
	if opts.DefaultProcessing <= 0 {
		opts.DefaultProcessing = 2 * time.Second
	}
	if opts.ModerationDelay == 0 {
		opts.ModerationDelay = 3 * time.Second
	}
	if opts.PostsPerDay <= 0 {
		opts.PostsPerDay = 15
	}
	if opts.PendingSharesPerDay <= 0 {
		opts.PendingSharesPerDay = 5
	}
	if opts.UnauditedPostersPerDay <= 0 {
		opts.UnauditedPostersPerDay = 5
	}
	if opts.CreatorInfoPerMinute <= 0 {
		opts.CreatorInfoPerMinute = 20
	}
	if opts.InitPerMinute <= 0 {
		opts.InitPerMinute = 6
	}
	if opts.StatusPerMinute <= 0 {
		opts.StatusPerMinute = 30
	}
	if opts.UserInfoPerMinute <= 0 {
		opts.UserInfoPerMinute = 600
	}
	if opts.VideoQueryPerMinute <= 0 {
		opts.VideoQueryPerMinute = 600
	}
	basePath := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		basePath = strings.TrimRight(u.Path, "/")
	}
	t := &Sim{
		cfg:      cfg,
		opts:     opts,
		basePath: basePath,
		creators: map[string]Creator{},
		calls:    map[string][]time.Time{},
	}
	for id, c := range opts.Creators {
		t.creators[id] = c
	}
	return t
}

// SetCreator replaces what creator_info answers for an account.
func (t *Sim) SetCreator(accountID string, c Creator) {
	t.mu.Lock()
	t.creators[accountID] = c
	t.mu.Unlock()
}

// Recorder returns the record of what the simulator received.
func (t *Sim) Recorder() *sim.Recorder { return t.cfg.Recorder }

// Post reports what the simulator knows of a publish_id (an error of its State panics: it is
// for tests).
func (t *Sim) Post(publishID string) (Post, bool) {
	p, ok, err := t.post(context.Background(), publishID)
	if err != nil {
		panic(err)
	}
	if !ok {
		return Post{}, false
	}
	return t.report(p), true
}

// report is what Post answers of p.
func (t *Sim) report(p tiktokPost) Post {
	status, reason, ids := t.statusOf(p, t.cfg.Now())
	out := Post{
		PublishID: p.PublishID, Account: p.Account.ID, Mode: p.Mode, Title: p.Title,
		PrivacyLevel: p.Privacy, DisableComment: p.DisComment, DisableDuet: p.DisDuet,
		DisableStitch: p.DisStitch, IsAIGC: p.AIGC, VideoSize: p.VideoSize, ChunkSize: p.ChunkSize,
		TotalChunks: p.Chunks, UploadedBytes: p.Received, SHA256: p.SHA, Status: status,
		FailReason: reason,
	}
	if len(ids) > 0 {
		out.PostID = strconv.FormatInt(ids[0], 10)
	}
	return out
}

// Posts lists the publish_ids started by an account, oldest first (an error of its State
// panics: it is for tests).
func (t *Sim) Posts(accountID string) []Post {
	posts, err := t.accountPosts(context.Background(), accountID)
	if err != nil {
		panic(err)
	}
	slices.SortStableFunc(posts, func(a, b tiktokPost) int { return a.Issued.Compare(b.Issued) })
	out := make([]Post, 0, len(posts))
	for _, p := range posts {
		if p, ok, err := t.post(context.Background(), p.PublishID); err == nil && ok {
			out = append(out, t.report(p))
		}
	}
	return out
}

// accountPosts reads an account's posts as they are stored (not advanced).
func (t *Sim) accountPosts(ctx context.Context, account string) ([]tiktokPost, error) {
	recs, err := t.cfg.State.List(ctx, platform.TikTok, tiktokPostKind, account)
	if err != nil {
		return nil, err
	}
	out := make([]tiktokPost, 0, len(recs))
	for _, r := range recs {
		var p tiktokPost
		if err := json.Unmarshal(r.Data, &p); err != nil {
			return nil, fmt.Errorf("sim: tiktok post %s: %w", r.ID, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// post reads a publish_id's post. One whose processing is over moves to its final status: the
// change is written, with what it publishes recorded, by whichever request sees it first.
func (t *Sim) post(ctx context.Context, publishID string) (tiktokPost, bool, error) {
	now := t.cfg.Now()
	return sim.LoadAdvanced(ctx, t.cfg.State, tiktokKey(tiktokPostKind, publishID),
		func(p tiktokPost) bool { return t.due(p, now) },
		func(tx sim.Tx, p *tiktokPost) error { return t.settle(tx, p, now) })
}

// CompleteInbox acts as the creator who opens the inbox notification and posts the video in
// the TikTok app: the inbox post becomes PUBLISH_COMPLETE.
func (t *Sim) CompleteInbox(publishID string) bool {
	now := t.cfg.Now()
	done := false
	err := t.cfg.State.Update(context.Background(), func(tx sim.Tx) error {
		done = false
		p, rec, found, err := sim.LoadTx[tiktokPost](tx, tiktokKey(tiktokPostKind, publishID))
		if err != nil || !found || p.Mode != "inbox" {
			return err
		}
		if err := t.settle(tx, &p, now); err != nil {
			return err
		}
		if p.Status != SendToUserInbox {
			return nil
		}
		p.UserPosted = true
		p.Status = PublishComplete
		p.FinishedAt = now
		if err := t.recordPublished(tx, &p); err != nil {
			return err
		}
		done = true
		return sim.Save(tx, rec, p)
	})
	return err == nil && done
}

// ServeHTTP implements http.Handler. Paths are the platform's, below Config.BaseURL; the
// handler accepts them with or without BaseURL's path in front, so it can be mounted with or
// without http.StripPrefix.
func (t *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if t.basePath != "" {
		if rest, ok := strings.CutPrefix(path, t.basePath); ok && (rest == "" || rest[0] == '/') {
			path = rest
		}
	}
	switch path {
	case "/v2/post/publish/creator_info/query/":
		t.api(w, r, "creator_info", t.creatorInfo)
	case "/v2/post/publish/video/init/":
		t.api(w, r, "video_init", func(w http.ResponseWriter, r *http.Request, acc sim.Account, token string) {
			t.initPost(w, r, acc, token, "direct")
		})
	case "/v2/post/publish/inbox/video/init/":
		t.api(w, r, "inbox_init", func(w http.ResponseWriter, r *http.Request, acc sim.Account, token string) {
			t.initPost(w, r, acc, token, "inbox")
		})
	case "/v2/post/publish/status/fetch/":
		t.api(w, r, "status_fetch", t.statusFetch)
	case "/v2/user/info/":
		t.api(w, r, "user_info", t.userInfo)
	case "/v2/video/query/":
		t.api(w, r, "video_query", t.videoQuery)
	case "/video/":
		t.upload(w, r)
	default:
		tiktokError(w, http.StatusNotFound, "not_found", "The requested path does not exist.", nil)
	}
}

// api does what every JSON endpoint shares: method, token, the account's faults, the
// per-token rate limit and the endpoint's scope.
func (t *Sim) api(w http.ResponseWriter, r *http.Request, endpoint string,
	h func(http.ResponseWriter, *http.Request, sim.Account, string)) {
	method := http.MethodPost
	if endpoint == "user_info" {
		method = http.MethodGet
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		tiktokError(w, http.StatusMethodNotAllowed, "invalid_params", "The HTTP method must be "+method+".", nil)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	var acc sim.Account
	if ok && token != "" && t.cfg.Accounts != nil {
		acc, ok = t.cfg.Accounts.Resolve(r.Context(), token)
	} else {
		ok = false
	}
	if !ok {
		tiktokError(w, http.StatusUnauthorized, "access_token_invalid",
			"The access token is invalid or not found in the request.", nil)
		return
	}
	if tiktokFault(w, sim.CallFault(acc.Behavior, t.cfg.Rand)) {
		return
	}
	limit := map[string]int{
		"creator_info": t.opts.CreatorInfoPerMinute, "video_init": t.opts.InitPerMinute,
		"inbox_init": t.opts.InitPerMinute, "status_fetch": t.opts.StatusPerMinute,
		"user_info": t.opts.UserInfoPerMinute, "video_query": t.opts.VideoQueryPerMinute,
	}[endpoint]
	if wait, limited := t.rateLimit(token+"|"+endpoint, limit); limited {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		tiktokError(w, http.StatusTooManyRequests, "rate_limit_exceeded",
			"Your request is blocked due to exceeding the API rate limit.", nil)
		return
	}
	need := map[string][]string{
		"creator_info": {"video.publish"}, "video_init": {"video.publish"}, "inbox_init": {"video.upload"},
		"status_fetch": {"video.publish", "video.upload"}, "video_query": {"video.list"},
	}[endpoint]
	if len(need) > 0 && !slices.ContainsFunc(need, func(sc string) bool { return t.granted(acc, sc) }) {
		tiktokScopeError(w)
		return
	}
	h(w, r, acc, token)
}

// granted reports whether the account granted the app a scope.
func (t *Sim) granted(acc sim.Account, scope string) bool {
	scopes, ok := t.opts.Scopes[acc.ID]
	return !ok || slices.Contains(scopes, scope)
}

func tiktokScopeError(w http.ResponseWriter) {
	tiktokError(w, http.StatusUnauthorized, "scope_not_authorized",
		"The user did not authorize the scope required for completing this request.", nil)
}

// userInfo is GET /v2/user/info/?fields=...: the token's user, with the fields asked for.
func (t *Sim) userInfo(w http.ResponseWriter, r *http.Request, acc sim.Account, _ string) {
	q := r.URL.Query()
	if strings.TrimSpace(q.Get("fields")) == "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", "The fields parameter is required.", nil)
		return
	}
	var fields []string
	for _, f := range strings.Split(q.Get("fields"), ",") {
		f = strings.TrimSpace(f)
		if _, ok := tiktokUserFields[f]; !ok {
			tiktokError(w, http.StatusBadRequest, "invalid_params", fmt.Sprintf("Unknown user field %q.", f), nil)
			return
		}
		fields = append(fields, f)
	}
	for _, f := range fields {
		if !t.granted(acc, tiktokUserFields[f]) {
			tiktokScopeError(w)
			return
		}
	}
	posts, err := t.accountPosts(r.Context(), acc.ID)
	if err != nil {
		tiktokInternal(w)
		return
	}
	videos := 0
	for _, p := range posts {
		if p.RecordedPost {
			videos++
		}
	}
	c := t.creatorOf(acc)
	union := sha256.Sum256([]byte("reelay-sim-tiktok-union|" + acc.ID))
	all := map[string]any{
		"open_id": acc.ID, "union_id": hex.EncodeToString(union[:16]),
		"avatar_url": c.AvatarURL, "avatar_url_100": c.AvatarURL, "avatar_large_url": c.AvatarURL,
		"display_name": c.Nickname, "bio_description": "", "username": c.Username,
		"profile_deep_link": "https://www.tiktok.com/@" + url.PathEscape(c.Username), "is_verified": false,
		"follower_count": 0, "following_count": 0, "likes_count": 0, "video_count": videos,
	}
	user := map[string]any{}
	for _, f := range fields {
		user[f] = all[f]
	}
	tiktokOK(w, map[string]any{"user": user})
}

// tiktokInternal answers a failure of the simulator's own (its State) as TikTok answers its
// internal errors.
func tiktokInternal(w http.ResponseWriter) {
	tiktokError(w, http.StatusInternalServerError, "internal_error", "TikTok server or network error. Try again later.", nil)
}

// tiktokFault renders a call fault in TikTok's error shape; it reports whether it answered.
func tiktokFault(w http.ResponseWriter, fault string) bool {
	switch fault {
	case sim.FailUnavailable:
		tiktokError(w, http.StatusServiceUnavailable, "internal_error",
			"TikTok server or network error. Try again later.", nil)
	case sim.FailAuth:
		tiktokError(w, http.StatusUnauthorized, "access_token_invalid",
			"The access token is invalid or has expired.", nil)
	case sim.FailRateLimit:
		w.Header().Set("Retry-After", "1")
		tiktokError(w, http.StatusTooManyRequests, "rate_limit_exceeded",
			"Your request is blocked due to exceeding the API rate limit.", nil)
	default:
		return false
	}
	return true
}

// rateLimit counts a request against a sliding one-minute window; when the limit is reached it
// answers how long until a request leaves the window.
func (t *Sim) rateLimit(key string, limit int) (time.Duration, bool) {
	now := t.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	times := sim.PruneBefore(t.calls[key], now.Add(-time.Minute))
	if len(times) >= limit {
		t.calls[key] = times
		return times[0].Add(time.Minute).Sub(now), true
	}
	t.calls[key] = append(times, now)
	return 0, false
}

// creatorOf is what creator_info answers for acc.
func (t *Sim) creatorOf(acc sim.Account) Creator {
	t.mu.Lock()
	c, ok := t.creators[acc.ID]
	t.mu.Unlock()
	if !ok {
		c = Creator{}
	}
	if c.Username == "" {
		c.Username = acc.Username
	}
	if c.Username == "" {
		c.Username = acc.ID
	}
	if c.Nickname == "" {
		c.Nickname = c.Username
	}
	if c.AvatarURL == "" {
		c.AvatarURL = t.cfg.BaseURL + "/avatar/" + url.PathEscape(acc.ID) + ".jpeg"
	}
	if len(c.PrivacyLevelOptions) == 0 {
		c.PrivacyLevelOptions = []string{Public, Friends, SelfOnly}
	}
	if c.MaxVideoPostDurationSec <= 0 {
		c.MaxVideoPostDurationSec = 600
	}
	return c
}

func (t *Sim) creatorInfo(w http.ResponseWriter, r *http.Request, acc sim.Account, _ string) {
	now := t.cfg.Now()
	c := t.creatorOf(acc)
	inits, _, _, err := sim.Load[[]time.Time](r.Context(), t.cfg.State, tiktokKey(tiktokDirectKind, acc.ID))
	if err != nil {
		tiktokInternal(w)
		return
	}
	atCap := len(sim.PruneBefore(inits, now.Add(-24*time.Hour))) >= t.opts.PostsPerDay
	data := map[string]any{
		"creator_avatar_url":          c.AvatarURL,
		"creator_username":            c.Username,
		"creator_nickname":            c.Nickname,
		"privacy_level_options":       c.PrivacyLevelOptions,
		"comment_disabled":            c.CommentDisabled,
		"duet_disabled":               c.DuetDisabled,
		"stitch_disabled":             c.StitchDisabled,
		"max_video_post_duration_sec": c.MaxVideoPostDurationSec,
	}
	if atCap {
		// The creator_info reference lists this code under HTTP 200, "(intentional)".
		tiktokError(w, http.StatusOK, "spam_risk_too_many_posts",
			"The daily post cap from the API is reached for the current user.", data)
		return
	}
	tiktokOK(w, data)
}

type tiktokInitRequest struct {
	PostInfo *struct {
		Title                 *string `json:"title"`
		PrivacyLevel          *string `json:"privacy_level"`
		DisableDuet           bool    `json:"disable_duet"`
		DisableComment        bool    `json:"disable_comment"`
		DisableStitch         bool    `json:"disable_stitch"`
		VideoCoverTimestampMS *int64  `json:"video_cover_timestamp_ms"`
		BrandContentToggle    bool    `json:"brand_content_toggle"`
		BrandOrganicToggle    bool    `json:"brand_organic_toggle"`
		IsAIGC                bool    `json:"is_aigc"`
	} `json:"post_info"`
	SourceInfo *struct {
		Source          string `json:"source"`
		VideoSize       *int64 `json:"video_size"`
		ChunkSize       *int64 `json:"chunk_size"`
		TotalChunkCount *int64 `json:"total_chunk_count"`
		VideoURL        string `json:"video_url"`
	} `json:"source_info"`
}

func (t *Sim) initPost(w http.ResponseWriter, r *http.Request, acc sim.Account, token, mode string) {
	var req tiktokInitRequest
	if msg := decodeTikTokJSON(r, &req); msg != "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", msg, nil)
		return
	}
	si := req.SourceInfo
	if si == nil {
		tiktokError(w, http.StatusBadRequest, "invalid_params", "source_info is required.", nil)
		return
	}
	switch si.Source {
	case "FILE_UPLOAD":
	case "PULL_FROM_URL":
		tiktokError(w, http.StatusForbidden, "url_ownership_unverified",
			"To use PULL_FROM_URL as the video transfer method, the developer must verify the ownership of the URL prefix or domain.", nil)
		return
	default:
		tiktokError(w, http.StatusBadRequest, "invalid_params", "The source is invalid.", nil)
		return
	}
	if si.VideoSize == nil || si.ChunkSize == nil || si.TotalChunkCount == nil {
		tiktokError(w, http.StatusBadRequest, "invalid_params",
			"video_size, chunk_size and total_chunk_count are required for FILE_UPLOAD.", nil)
		return
	}
	if msg := tiktokCheckChunks(*si.VideoSize, *si.ChunkSize, *si.TotalChunkCount); msg != "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", msg, nil)
		return
	}

	now := t.cfg.Now()
	c := t.creatorOf(acc)
	p := tiktokPost{
		Account: acc, Mode: mode, Issued: now,
		VideoSize: *si.VideoSize, ChunkSize: *si.ChunkSize, Chunks: int(*si.TotalChunkCount),
		MaxDuration: tiktokDevMaxDuration,
	}
	if mode == "direct" {
		pi := req.PostInfo
		if pi == nil || pi.PrivacyLevel == nil || !slices.Contains(c.PrivacyLevelOptions, *pi.PrivacyLevel) {
			tiktokError(w, http.StatusForbidden, "privacy_level_option_mismatch",
				"privacy_level is not specified or not among the options from the privacy_level_options returned in /publish/creator_info/query/ API.", nil)
			return
		}
		if pi.Title != nil {
			// "Maximum length: 2200 UTF-16 runes": the registry holds the number and the counting.
			if lim := tiktokTitleLimit; !lim.Check(*pi.Title) {
				tiktokError(w, http.StatusBadRequest, "invalid_params",
					fmt.Sprintf("The title is too long: %d UTF-16 units, the maximum is %d.", lim.Count(*pi.Title), lim.Max), nil)
				return
			}
			p.Title = *pi.Title
		}
		if acc.Behavior.AppAccess != sim.AppAccessAudited && *pi.PrivacyLevel != SelfOnly {
			tiktokError(w, http.StatusForbidden, "unaudited_client_can_only_post_to_private_accounts",
				"This API client has not passed TikTok's audit: its posts can only be SELF_ONLY.", nil)
			return
		}
		p.Privacy = *pi.PrivacyLevel
		// The creator's own settings win: TikTok disables what the creator set to "No one".
		p.DisComment = pi.DisableComment || c.CommentDisabled
		p.DisDuet = pi.DisableDuet || c.DuetDisabled
		p.DisStitch = pi.DisableStitch || c.StitchDisabled
		p.AIGC = pi.IsAIGC
		p.MaxDuration = time.Duration(c.MaxVideoPostDurationSec) * time.Second
	} else {
		// Counted outside the transaction below: two inits of one creator at the same moment
		// may both pass the cap's last place.
		posts, err := t.accountPosts(r.Context(), acc.ID)
		if err != nil {
			tiktokInternal(w)
			return
		}
		pending := 0
		for _, q := range posts {
			if q.Mode == "inbox" && !q.UserPosted && q.Issued.After(now.Add(-24*time.Hour)) {
				t.advance(&q, now)
				if q.Status != Failed {
					pending++
				}
			}
		}
		if pending >= t.opts.PendingSharesPerDay {
			tiktokError(w, http.StatusForbidden, "spam_risk_too_many_pending_share",
				"The daily upload cap from the API is reached for the current user.", nil)
			return
		}
	}
	prefix := "v_pub_file~v2-1."
	if mode == "inbox" {
		prefix = "v_inbox_file~v2."
	}
	p.PublishID = prefix + sim.RandomDigits(18)
	uploadID, uploadToken := sim.RandomDigits(19), sim.RandomHex(16)
	tokenSHA := sha256.Sum256([]byte(uploadToken))
	up := tiktokUpload{PublishID: p.PublishID, TokenSHA: tokenSHA[:], Behavior: acc.Behavior, VideoSize: p.VideoSize,
		ChunkSize: p.ChunkSize, Chunks: p.Chunks, MaxDuration: p.MaxDuration, Issued: now}
	capped := false
	err := t.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		capped = false
		if mode == "direct" {
			ok, err := sim.TakeInWindow(tx, tiktokKey(tiktokDirectKind, acc.ID), acc.ID, now, 24*time.Hour, t.opts.PostsPerDay)
			if capped = !ok; err != nil || capped {
				return err
			}
			if acc.Behavior.AppAccess != sim.AppAccessAudited {
				if err := t.takePoster(tx, acc, now); err != nil {
					return err // errPostersCapped rolls the post counted above back
				}
			}
		}
		if err := sim.Save(tx, sim.Record{Key: tiktokKey(tiktokPostKind, p.PublishID), Account: acc.ID}, p); err != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: tiktokKey(tiktokUploadKind, uploadID), Account: acc.ID,
			Expires: now.Add(2 * tiktokUploadURLTTL), Blobs: true}, up)
	})
	switch {
	case errors.Is(err, errPostersCapped):
		tiktokError(w, http.StatusForbidden, "reached_active_user_cap",
			fmt.Sprintf("This unaudited API client has reached its cap of %d users posting in 24 hours.", t.opts.UnauditedPostersPerDay), nil)
		return
	case err != nil:
		tiktokInternal(w)
		return
	case capped:
		tiktokError(w, http.StatusForbidden, "spam_risk_too_many_posts",
			"The daily post cap from the API is reached for the current user.", nil)
		return
	}
	tiktokOK(w, map[string]any{
		"publish_id": p.PublishID,
		"upload_url": t.cfg.BaseURL + "/video/?upload_id=" + uploadID + "&upload_token=" + uploadToken,
	})
}

// errPostersCapped refuses a direct post init of a new creator through an unaudited app that
// has reached its cap of posting creators.
var errPostersCapped = errors.New("tiktoksim: the unaudited app's posting users are capped")

// takePoster counts acc among the creators posting through its unaudited app, unless the app
// has reached its cap of them: then it answers errPostersCapped. A creator already counted
// posts on (only a new one is refused) and stays counted until a day after their last post.
func (t *Sim) takePoster(tx sim.Tx, acc sim.Account, now time.Time) error {
	key := tiktokKey(tiktokPostersKind, acc.App)
	posters, _, _, err := sim.LoadTx[map[string]time.Time](tx, key)
	if err != nil {
		return err
	}
	if posters == nil {
		posters = make(map[string]time.Time)
	}
	for id, at := range posters {
		if !at.After(now.Add(-24 * time.Hour)) {
			delete(posters, id)
		}
	}
	if _, ok := posters[acc.ID]; !ok && len(posters) >= t.opts.UnauditedPostersPerDay {
		return errPostersCapped
	}
	posters[acc.ID] = now
	return sim.Save(tx, sim.Record{Key: key, Expires: now.Add(24 * time.Hour)}, posters)
}

// tiktokCheckChunks applies the media transfer guide's chunk restrictions; it returns the
// invalid_params message, or "" when the plan is valid.
func tiktokCheckChunks(size, chunk, count int64) string {
	const badChunk, badCount = "The chunk size is invalid", "The total chunk count is invalid"
	if size <= 0 || size > tiktokMaxVideoBytes {
		return "The video size is invalid"
	}
	if chunk <= 0 || chunk > size {
		return badChunk
	}
	if count < 1 || count > tiktokMaxChunks || count != size/chunk {
		return badCount
	}
	if count == 1 {
		// One chunk is the whole file, and the whole file is at most 64 MB.
		if chunk != size || size > tiktokMaxChunk {
			return badChunk
		}
		return ""
	}
	if size < tiktokMinChunk || chunk < tiktokMinChunk || chunk > tiktokMaxChunk {
		return badChunk
	}
	if size-(count-1)*chunk > tiktokMaxFinalChunk {
		return badChunk
	}
	return ""
}

func (t *Sim) statusFetch(w http.ResponseWriter, r *http.Request, acc sim.Account, _ string) {
	var req struct {
		PublishID string `json:"publish_id"`
	}
	if msg := decodeTikTokJSON(r, &req); msg != "" {
		tiktokError(w, http.StatusBadRequest, "invalid_params", msg, nil)
		return
	}
	p, ok, err := t.post(r.Context(), req.PublishID)
	switch {
	case err != nil:
		tiktokInternal(w)
		return
	case !ok:
		tiktokError(w, http.StatusBadRequest, "invalid_publish_id", "The publish_id does not exist.", nil)
		return
	case p.Account.ID != acc.ID:
		tiktokError(w, http.StatusBadRequest, "token_not_authorized_for_specified_publish_id",
			"The access_token does not have authorization for the specified publish_id.", nil)
		return
	}
	status, reason, ids := t.statusOf(p, t.cfg.Now())
	if ids == nil {
		ids = []int64{}
	}
	data := map[string]any{
		"status":                      status,
		"publicaly_available_post_id": ids,
		"uploaded_bytes":              p.Received,
	}
	if reason != "" {
		data["fail_reason"] = reason
	}
	tiktokOK(w, data)
}

// due reports whether p's processing is over and its final status not yet set.
func (t *Sim) due(p tiktokPost, now time.Time) bool {
	return p.Completed && p.Status == "" && !now.Before(p.CompletedAt.Add(p.Processing))
}

// advance moves a post whose processing is over to its final status; it reports whether that
// published it (a direct post), which the caller records.
func (t *Sim) advance(p *tiktokPost, now time.Time) (published bool) {
	if !t.due(*p, now) {
		return false
	}
	p.FinishedAt = p.CompletedAt.Add(p.Processing)
	switch {
	case p.Verdict != "":
		p.Status = Failed
	case p.Mode == "inbox":
		p.Status = SendToUserInbox
	default:
		p.Status = PublishComplete
		return true
	}
	return false
}

// settle is advance within tx, recording what it publishes.
func (t *Sim) settle(tx sim.Tx, p *tiktokPost, now time.Time) error {
	if t.advance(p, now) {
		return t.recordPublished(tx, p)
	}
	return nil
}

// recordPublished records the post as published, once.
func (t *Sim) recordPublished(tx sim.Tx, p *tiktokPost) error {
	if p.RecordedPost {
		return nil
	}
	p.RecordedPost = true
	c := t.creatorOf(p.Account)
	return sim.RecordTx(tx, platform.TikTok, sim.Published{
		Account: p.Account.ID,
		ID:      p.PostID,
		URL:     "https://www.tiktok.com/@" + c.Username + "/video/" + p.PostID,
		SHA256:  p.SHA,
		Text:    p.Title,
	})
}

// statusOf answers the status fetch fields of a post at now (after advance).
func (t *Sim) statusOf(p tiktokPost, now time.Time) (status, failReason string, ids []int64) {
	switch p.Status {
	case "":
		return ProcessingUpload, "", nil
	case Failed:
		return Failed, p.Verdict, nil
	case PublishComplete:
		public := p.Privacy == Public || p.UserPosted
		if public && !now.Before(p.FinishedAt.Add(max(t.opts.ModerationDelay, 0))) {
			id, _ := strconv.ParseInt(p.PostID, 10, 64)
			return PublishComplete, "", []int64{id}
		}
		return PublishComplete, "", nil
	default:
		return p.Status, "", nil
	}
}

// errTikTokRange: another request saved the chunk first; the answer is 416 with the progress.
var errTikTokRange = errors.New("the upload moved on")

// upload serves PUT {upload_url}: one chunk per request, in order. The chunk is received into a
// spool resumed from the session, whose kept bytes go to a blob when the upload is not complete
// yet; the session then moves on in one transaction, unless another request of the same chunk
// got there first.
func (t *Sim) upload(w http.ResponseWriter, r *http.Request) {
	defer sim.Drain(r.Body)
	if r.Method != http.MethodPut {
		w.Header().Set("Allow", http.MethodPut)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	ctx := r.Context()
	q := r.URL.Query()
	key := tiktokKey(tiktokUploadKind, q.Get("upload_id"))
	u, _, ok, err := sim.Load[tiktokUpload](ctx, t.cfg.State, key)
	if err != nil {
		sim.UploadError(w, http.StatusInternalServerError, "TikTok internal error.")
		return
	}
	tokenSHA := sha256.Sum256([]byte(q.Get("upload_token")))
	if !ok || subtle.ConstantTimeCompare(tokenSHA[:], u.TokenSHA) != 1 {
		sim.UploadError(w, http.StatusNotFound, "TikTok cannot find a valid upload task given the upload_url.")
		return
	}
	// The upload URL carries its own token: only server faults apply to it.
	if fault := sim.CallFault(u.Behavior, t.cfg.Rand); fault == sim.FailUnavailable {
		sim.UploadError(w, http.StatusServiceUnavailable, "Gateway connection error or TikTok internal error.")
		return
	}
	if t.cfg.Now().After(u.Issued.Add(tiktokUploadURLTTL)) {
		sim.UploadError(w, http.StatusForbidden, "The upload_url has expired.")
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "video/mp4" && mt != "video/quicktime" && mt != "video/webm") {
		sim.UploadError(w, http.StatusBadRequest, "Content-Type must be video/mp4, video/quicktime or video/webm.")
		return
	}
	first, last, total, ok := parseContentRange(r.Header.Get("Content-Range"))
	if !ok || total != u.VideoSize {
		sim.UploadError(w, http.StatusBadRequest, "Malformed Content-Range: want bytes FIRST-LAST/"+strconv.FormatInt(u.VideoSize, 10)+".")
		return
	}
	n := last - first + 1
	if r.ContentLength != n {
		sim.UploadError(w, http.StatusBadRequest, "Content-Length does not match the Content-Range.")
		return
	}
	// A completed session has received every byte: what follows is a chunk sent again.
	if first != u.Received {
		setProgress(w, u.Received, u.VideoSize)
		sim.UploadError(w, http.StatusRequestedRangeNotSatisfiable, "Content-Range does not reflect the actual upload progress.")
		return
	}
	k := first / u.ChunkSize
	wantLast := first + u.ChunkSize - 1
	if k == int64(u.Chunks-1) {
		wantLast = u.VideoSize - 1
	}
	if k >= int64(u.Chunks) || last != wantLast {
		setProgress(w, u.Received, u.VideoSize)
		sim.UploadError(w, http.StatusBadRequest,
			fmt.Sprintf("Chunk %d must be bytes %d-%d/%d.", k+1, first, wantLast, u.VideoSize))
		return
	}

	sp := sim.ResumeSpool(ctx, t.cfg.Blobs, u.Spool, "reelay-tiktok-sim-*.upload")
	defer sp.Close()
	hasher := sha256.New()
	if len(u.Hash) > 0 {
		if err := hasher.(encoding.BinaryUnmarshaler).UnmarshalBinary(u.Hash); err != nil {
			sim.UploadError(w, http.StatusInternalServerError, "TikTok internal error.")
			return
		}
	}
	// A chunk that does not arrive whole leaves no trace: nothing is saved.
	if got, err := media.CopyHashed(io.NewOffsetWriter(sp, first), io.LimitReader(r.Body, n), hasher); err != nil || got != n {
		setProgress(w, u.Received, u.VideoSize)
		if errors.Is(err, sim.ErrSpoolFile) {
			sim.UploadError(w, http.StatusInternalServerError, "TikTok internal error.")
			return
		}
		sim.UploadError(w, http.StatusBadRequest, "The request body is shorter than Content-Length.")
		return
	}
	if last+1 < u.VideoSize {
		t.saveChunk(w, r, key, sp, hasher, first, last)
		return
	}
	t.completeUpload(w, r, key, u, sp, hex.EncodeToString(hasher.Sum(nil)), first)
}

// saveChunk keeps a chunk that is not the last: its kept bytes in a blob, the session's
// progress in its record.
func (t *Sim) saveChunk(w http.ResponseWriter, r *http.Request, key sim.Key, sp *sim.Spool, hasher hash.Hash, first, last int64) {
	ctx := r.Context()
	st, err := sp.Save(ctx, sim.BlobPrefix(key))
	if err != nil {
		sim.UploadError(w, http.StatusInternalServerError, "TikTok internal error.")
		return
	}
	state, _ := hasher.(encoding.BinaryMarshaler).MarshalBinary()
	var u tiktokUpload
	err = t.cfg.State.Update(ctx, func(tx sim.Tx) error {
		var rec sim.Record
		var found bool
		var err error
		u, rec, found, err = sim.LoadTx[tiktokUpload](tx, key)
		if err != nil || !found {
			return cmp.Or(err, errTikTokRange)
		}
		if u.Received != first {
			return errTikTokRange
		}
		u.Received, u.Spool, u.Hash = last+1, st, state
		if err := sim.Save(tx, rec, u); err != nil {
			return err
		}
		return t.updatePost(tx, u.PublishID, func(p *tiktokPost) error {
			p.Received = u.Received
			return nil
		})
	})
	switch {
	case errors.Is(err, errTikTokRange):
		setProgress(w, u.Received, u.VideoSize)
		sim.UploadError(w, http.StatusRequestedRangeNotSatisfiable, "Content-Range does not reflect the actual upload progress.")
	case err != nil:
		sim.UploadError(w, http.StatusInternalServerError, "TikTok internal error.")
	default:
		setProgress(w, last+1, u.VideoSize)
		w.WriteHeader(http.StatusPartialContent)
	}
}

// updatePost changes a publish_id's post within tx.
func (t *Sim) updatePost(tx sim.Tx, publishID string, fn func(p *tiktokPost) error) error {
	p, rec, found, err := sim.LoadTx[tiktokPost](tx, tiktokKey(tiktokPostKind, publishID))
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("sim: tiktok upload of an unknown post %s", publishID)
	}
	if err := fn(&p); err != nil {
		return err
	}
	return sim.Save(tx, rec, p)
}

// completeUpload checks the complete upload and, in one transaction, records it, starts the
// post's processing and ends the session; the session's blobs are deleted after.
func (t *Sim) completeUpload(w http.ResponseWriter, r *http.Request, key sim.Key, u tiktokUpload, sp *sim.Spool, sha string, first int64) {
	ctx := r.Context()
	verdict, info := checkTikTokVideo(sp, u.VideoSize, u.MaxDuration)
	processing := t.opts.DefaultProcessing
	if ms := u.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	if u.Behavior.Fail == sim.FailReject && verdict == "" {
		verdict = "file_format_check_failed"
	}
	postID := strconv.FormatInt(7_000_000_000_000_000_000+int64(binary.BigEndian.Uint64(sim.RandomBytes(8))>>4), 10)
	now := t.cfg.Now()
	err := t.cfg.State.Update(ctx, func(tx sim.Tx) error {
		cur, rec, found, err := sim.LoadTx[tiktokUpload](tx, key)
		if err != nil || !found {
			return cmp.Or(err, errTikTokRange)
		}
		if cur.Received != first {
			u = cur
			return errTikTokRange
		}
		err = t.updatePost(tx, u.PublishID, func(p *tiktokPost) error {
			p.Received = u.VideoSize
			p.Completed, p.CompletedAt, p.Processing = true, now, processing
			p.SHA, p.Verdict, p.PostID = sha, verdict, postID
			p.Duration, p.Width, p.Height = info.Duration, info.Width, info.Height
			if err := sim.RecordTx(tx, platform.TikTok, sim.Upload{Account: p.Account.ID, Bytes: u.VideoSize, SHA256: sha}); err != nil {
				return err
			}
			return t.settle(tx, p, now)
		})
		if err != nil {
			return err
		}
		// The session stays until it expires, all received, so that the last chunk sent
		// again is told so.
		cur.Received, cur.Spool, cur.Hash = u.VideoSize, sim.SpoolState{}, nil
		return sim.Save(tx, rec, cur)
	})
	switch {
	case errors.Is(err, errTikTokRange):
		setProgress(w, u.Received, u.VideoSize)
		sim.UploadError(w, http.StatusRequestedRangeNotSatisfiable, "Content-Range does not reflect the actual upload progress.")
		return
	case err != nil:
		sim.UploadError(w, http.StatusInternalServerError, "TikTok internal error.")
		return
	}
	// The chunks are of no use once the video is checked; housekeeping deletes them with the
	// session should this fail. (An upload in one request has none.)
	if len(u.Spool.Chunks) > 0 {
		_ = sim.DeleteBlobs(ctx, t.cfg.Blobs, key)
	}
	setProgress(w, u.VideoSize, u.VideoSize)
	w.WriteHeader(http.StatusCreated)
}

func setProgress(w http.ResponseWriter, received, total int64) {
	if received == 0 {
		w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(total, 10))
		return
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", received-1, total))
}

// parseContentRange parses "bytes FIRST-LAST/TOTAL" strictly.
func parseContentRange(s string) (first, last, total int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	first, err1 = sim.ParseDigits(a)
	last, err2 = sim.ParseDigits(b)
	total, err3 = sim.ParseDigits(tot)
	if err1 != nil || err2 != nil || err3 != nil || last < first || last >= total {
		return 0, 0, 0, false
	}
	return first, last, total, true
}

// checkTikTokVideo applies TikTok's video restrictions (media transfer guide) and returns the
// fail_reason, or "" when the video passes, with what the probe found: MP4, WebM or MOV;
// H.264, H.265, VP8 or VP9; 3 s to maxDuration; 360 to 4096 pixels on each side; 23 to 60
// fps ("Framerate restrictions: Minimum of 23 FPS, Maximum of 60 FPS",
// developers.tiktok.com/doc/content-posting-api-media-transfer-guide), the probe's average
// rate, refused as frame_rate_check_failed (the status reference's fail_reason).
func checkTikTokVideo(f io.ReaderAt, size int64, maxDuration time.Duration) (string, media.Info) {
	info, err := media.Probe(f, size)
	if err != nil || !slices.Contains([]string{"mp4", "mov", "webm"}, info.Kind.Name) ||
		!slices.Contains([]string{"h264", "hevc", "vp8", "vp9"}, info.VideoCodec) {
		return "file_format_check_failed", info
	}
	if info.Duration < tiktokMinDuration || info.Duration > maxDuration {
		return "duration_check_failed", info
	}
	if min(info.Width, info.Height) < tiktokMinSide || max(info.Width, info.Height) > tiktokMaxSide {
		return "picture_size_check_failed", info
	}
	if fps := info.FrameRate; fps > 0 && (fps < tiktokMinFPS-0.01 || fps > tiktokMaxFPS+0.01) {
		return "frame_rate_check_failed", info
	}
	return "", info
}

// decodeTikTokJSON reads a JSON request body; it returns the invalid_params message, or "".
func decodeTikTokJSON(r *http.Request, v any) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return "Content-Type must be application/json; charset=UTF-8."
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return "The request body could not be read."
	}
	if err := json.Unmarshal(body, v); err != nil {
		return "The request body is not valid JSON for this endpoint: " + err.Error()
	}
	return ""
}

func tiktokOK(w http.ResponseWriter, data any) {
	writeTikTok(w, http.StatusOK, data, "ok", "")
}

func tiktokError(w http.ResponseWriter, status int, code, msg string, data any) {
	writeTikTok(w, status, data, code, msg)
}

func writeTikTok(w http.ResponseWriter, status int, data any, code, msg string) {
	if data == nil {
		data = map[string]any{}
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"data": data,
		"error": map[string]string{
			"code":    code,
			"message": msg,
			"log_id":  time.Now().UTC().Format("20060102150405") + strings.ToUpper(sim.RandomHex(10)),
		},
	})
}

var _ http.Handler = (*Sim)(nil)
