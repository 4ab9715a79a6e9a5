// Package youtubesim is the simulator of YouTube's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package youtubesim

// YouTube Data API v3 simulator: videos.insert by the resumable upload protocol (and the
// multipart form the Google client libraries use for small files), videos.list,
// thumbnails.set, videoCategories.list and channels.list?mine=true; the statistics part of
// videos.list, commentThreads.list, comments.list and comments.insert are in
// audience.go. Sources:
// developers.google.com/youtube/v3 guides/using_resumable_upload_protocol, docs/videos/insert,
// docs/videos/update (error table), docs/thumbnails/set, docs/channels/list,
// docs/core_errors, determine_quota_cost, and the discovery
// document shipped with google.golang.org/api/youtube/v3 (enums of status.uploadStatus,
// failureReason, rejectionReason, processingDetails.processingStatus).
//
// What it reproduces:
//   - POST /upload/youtube/v3/videos?uploadType=resumable&part=... with a video resource as
//     JSON, X-Upload-Content-Length and X-Upload-Content-Type → 200 with the session URI in
//     Location (below Config.BaseURL, with upload_id); the snippet is checked as YouTube
//     checks it (title required, at most 100 characters, no < or >; description at most 5000
//     bytes, no < or >; tags at most 500 characters; a known assignable categoryId;
//     privacyStatus public|unlisted|private; publishAt only with private);
//   - PUT (or POST) on the session URI with Content-Range "bytes a-b/total" or "a-b/*": a
//     chunk must start at the byte after the last one received, its length must match
//     Content-Length, and every chunk but the last must be a multiple of 256 KiB, else 400;
//     308 Resume Incomplete with "Range: bytes=0-N" (no Range when nothing arrived), or, when
//     the client sends "X-GUploader-No-308: yes" as the Go client library does, 200 with
//     "X-HTTP-Status-Code-Override: 308"; the status query (empty PUT with "bytes */total");
//     201 Created with the video resource when the last byte arrives, and the same answer to
//     any later request on that session; a chunk cut off mid-body keeps what arrived, rounded
//     down to 256 KiB ("do not assume that the server received all (or none) of the bytes");
//     sessions expire a week after they start (Google's upload servers keep a resumable
//     session URI 7 days: developers.google.com/streetview/publish/resumable-uploads; the
//     YouTube guide names no lifetime) → 404;
//   - bytes are hashed as they arrive and spooled (see spool: an MP4's media data is not
//     kept, and nothing large is held in memory), what a session kept going to blob storage
//     between its requests; of two requests receiving bytes for one session at once, the
//     first to keep them moves the session on, and the other is answered as if it had come
//     after it; every complete upload is recorded; a file that media.Sniff and media.Probe
//     do not take for an MP4, MOV or WebM video fails processing (uploadStatus failed,
//     failureReason invalidFile), and a video longer than the capabilities' maximum (15
//     minutes for an unverified channel) is rejected with rejectionReason length;
//   - processing: status.uploadStatus uploaded → processed and processingDetails.
//     processingStatus processing → succeeded after the account's processing time measured
//     with Config.Now; the reject behavior ends in uploadStatus rejected with a
//     rejectionReason; a processed video is recorded as published, with its /shorts/ URL when
//     it is vertical or square and at most 3 minutes long, its /watch?v= URL otherwise. YouTube
//     processes in the background; here the end of processing is written by the first request
//     to see it due: a read of the video, or any request of its account;
//   - channels.list?part=...&mine=true: the token's channel (a stable "UC…" id derived from the
//     account, titled with its username, "@handle" customUrl, thumbnails); exactly one filter
//     (forHandle, forUsername, id, managedByMe or mine) is required, and this simulator serves
//     mine=true only. A Google account without a channel (Options.NoChannel) answers
//     an empty items list there, and 401 youtubeSignupRequired to videos.insert;
//   - quota per account and per day (days end at midnight Pacific Time, as Google's do), in
//     two buckets as YouTube has charged it since 1 June 2026: videos.insert in a bucket of
//     its own, 100 calls a day at 1 each, and every other method in the general bucket of
//     10,000 units (thumbnails.set 50, commentThreads.insert 50, list calls 1); a spent bucket
//     answers 403 quotaExceeded and leaves the other usable (see ytInsertQuota);
//     optionally a cap of uploads per day → 400 uploadLimitExceeded;
//   - the parameters declared repeated (part, id) comma-separated, repeated, or both, as
//     Google takes them; the system parameters the client libraries send (alt=json,
//     prettyPrint, the x-goog-api-client header) change nothing, and any other alt (media,
//     proto) is refused with 400 invalidParameter: the simulator answers JSON only;
//   - errors as Google renders them: {"error":{"code","message","errors":[{"message",
//     "domain","reason"}],"status"}}; the account's call faults as 503 backendError, 401
//     authError and 429 rateLimitExceeded with Retry-After.
//
// Its upload sessions, videos (with the replies posted to their comments), each account's
// videos in processing and its quota of the day are records of Config.State, and the bytes an
// upload session received blobs of Config.Blobs, so that any process serving the simulator, or
// the one after a restart, goes on with them.
//
// An upload keeps the privacy it asked for whether or not the API project is verified: YouTube
// stopped locking unverified projects' uploads to private on 2 November 2026 (the Data API
// revision history, https://developers.google.com/youtube/data/revision_history, reversing
// the rule of 28 July 2020), so the simulator has no such behaviour.
//
// Not reproduced: the quota belongs to the Google Cloud project in reality (here: to the
// account); "the chunk size must be the same for each request" is not enforced, because a
// resume after a partial chunk legitimately shifts the chunk boundaries.

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Options tunes the YouTube simulator. Zero values take the defaults.
type Options struct {
	// Scopes overrides, per account ID, the scopes tokeninfo answers (all those a sandbox
	// consent grants by default).
	Scopes map[string][]string
	// DailyQuota is each account's general quota in units per day, the bucket of every method
	// but videos.insert; 0 means 10,000 and a negative value disables it.
	DailyQuota int
	// InsertQuota is each account's videos.insert bucket in calls per day; 0 means
	// ytInsertQuota (100) and a negative value disables it.
	InsertQuota int
	// DailyUploads caps the uploads an account may start per day (400 uploadLimitExceeded,
	// the newer per-channel bucket); 0 means no cap.
	DailyUploads int
	// SessionTTL is how long a resumable session URI lives; 0 means a week.
	SessionTTL time.Duration
	// Processing is the processing time of accounts whose Behavior.ProcessingMS is negative;
	// 0 means 2 s.
	Processing time.Duration
	// RetryAfter is what the rate_limit fault sends in Retry-After; 0 means 10 s.
	RetryAfter time.Duration
	// MaxThumbnailBytes is the largest thumbnail thumbnails.set accepts; 0 means 2 MB.
	MaxThumbnailBytes int64
	// SpoolDir holds the bytes of an upload request while they arrive, past what a spool keeps
	// in memory (between requests they are in Config.Blobs); "" means os.TempDir().
	SpoolDir string
	// NoChannel names the accounts (by Account.ID) whose Google account has no YouTube
	// channel: channels.list?mine=true answers no items, videos.insert 401
	// youtubeSignupRequired.
	NoChannel map[string]bool
	// HiddenLikes names the accounts (by Account.ID) whose videos hide their like count (the
	// "show how many viewers like this video" setting off): statistics leave likeCount out.
	HiddenLikes map[string]bool
}

const (
	ytChunkQuantum     = 256 << 10 // chunks are multiples of 256 KiB
	ytMaxShort         = 3 * time.Minute
	ytMaxTagsChars     = 500
	ytMaxMetadataBytes = 1 << 20
	ytDefaultCategory  = "22" // People & Blogs
	ytSystemChannel    = "UCBR8-60-B28hp2BmDPdntcQ"
	// ytSessionTTL is how long a resumable session URI lives (see the file comment).
	ytSessionTTL = 7 * 24 * time.Hour
	// ytKeepTimeout bounds the work that keeps what an upload request received once its body
	// ended.
	ytKeepTimeout = 30 * time.Second
)

// Upload statuses, processing statuses and reasons (youtube/v3 discovery document).
const (
	ytUploaded  = "uploaded"
	ytProcessed = "processed"
	ytFailed    = "failed"
	ytRejected  = "rejected"

	ytProcessing = "processing"
	ytSucceeded  = "succeeded"
	ytTerminated = "terminated"

	ytRejectReason  = "termsOfUse"
	ytFailureReason = "invalidFile"
)

// YouTube's documented limits: the largest file (256 GB), the longest video of a channel
// without phone verification (15 minutes), and the videos resource's title (100 characters)
// and description (5,000 bytes), neither with < or >. The simulator states them itself: it
// stands for YouTube, not for reelay's description of it.
var (
	ytMaxVideoBytes int64 = 256 * platform.GB
	ytMaxDuration         = 15 * time.Minute
	ytTitleLimit          = platform.TextLimit{Max: 100, Unit: platform.UnitCharacters, Forbidden: "<>"}
	ytDescLimit           = platform.TextLimit{Max: 5000, Unit: platform.UnitBytes, Forbidden: "<>"}
)

// ytCategory is a video category of region US, as videoCategories.list returns it.
type ytCategory struct {
	id, title  string
	assignable bool
}

var ytCategories = []ytCategory{
	{"1", "Film & Animation", true}, {"2", "Autos & Vehicles", true}, {"10", "Music", true},
	{"15", "Pets & Animals", true}, {"17", "Sports", true}, {"18", "Short Movies", false},
	{"19", "Travel & Events", true}, {"20", "Gaming", true}, {"21", "Videoblogging", false},
	{"22", "People & Blogs", true}, {"23", "Comedy", true}, {"24", "Entertainment", true},
	{"25", "News & Politics", true}, {"26", "Howto & Style", true}, {"27", "Education", true},
	{"28", "Science & Technology", true}, {"29", "Nonprofits & Activism", true},
	{"30", "Movies", false}, {"31", "Anime/Animation", false}, {"32", "Action/Adventure", false},
	{"33", "Classics", false}, {"34", "Comedy", false}, {"35", "Documentary", false},
	{"36", "Drama", false}, {"37", "Family", false}, {"38", "Foreign", false},
	{"39", "Horror", false}, {"40", "Sci-Fi/Fantasy", false}, {"41", "Thriller", false},
	{"42", "Shorts", false}, {"43", "Shows", false}, {"44", "Trailers", false},
}

// ytChannelParts are the parts of a channel resource (channels.list reference).
var ytChannelParts = map[string]bool{
	"auditDetails": true, "brandingSettings": true, "contentDetails": true, "contentOwnerDetails": true,
	"id": true, "localizations": true, "snippet": true, "statistics": true, "status": true, "topicDetails": true,
}

var ytVideoParts = map[string]bool{
	"id": true, "snippet": true, "status": true, "processingDetails": true, "contentDetails": true,
	"statistics": true, "player": true, "topicDetails": true, "recordingDetails": true,
	"fileDetails": true, "suggestions": true, "liveStreamingDetails": true, "localizations": true,
	"paidProductPlacementDetails": true,
}

// ytQuotaReset is when the quota day of now ends: the next midnight Pacific Time.
func ytQuotaReset(now time.Time) time.Time {
	y, m, d := now.In(ytPacific).Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, ytPacific)
}

// ytPacific is where YouTube's quota day ends.
var ytPacific = func() *time.Location {
	if l, err := time.LoadLocation("America/Los_Angeles"); err == nil {
		return l
	}
	return time.FixedZone("PST", -8*3600)
}()

// The kinds of the YouTube simulator's records.
const (
	// ytSessionKind is a resumable upload session (ytSession), with the blobs of the bytes it
	// received; it ends with its session URI.
	ytSessionKind = "session"
	// ytVideoKind is a video (ytVideo), with the replies posted to its comments, kept until
	// retention.
	ytVideoKind = "video"
	// ytChannelKind is an account's channel (ytChannelState), by account: its videos still
	// processing and how many were processed.
	ytChannelKind = "channel"
	// ytCommentKind names the video of an audience comment (ytCommentRef), by the comment's
	// id, so that a reply or a listing of replies finds its thread without a look at every
	// video.
	ytCommentKind = "comment"
	// ytQuotaKind is an account's usage of the quota day (ytUsage), ending with the day at
	// midnight Pacific Time.
	ytQuotaKind = "quota"
)

func ytKey(kind, id string) sim.Key { return sim.Key{Platform: platform.YouTube, Kind: kind, ID: id} }

// ytMeta is the writable part of a video resource that videos.insert takes.
type ytMeta struct {
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	CategoryID  string   `json:"category_id"`
	Tags        []string `json:"tags,omitempty"`
	Privacy     string   `json:"privacy"`
	MadeForKids bool     `json:"made_for_kids,omitempty"`
	PublishAt   string   `json:"publish_at,omitempty"`
}

// ytSession is a resumable upload session.
type ytSession struct {
	ID          string    `json:"id"`
	Account     string    `json:"account"`
	Channel     ytChannel `json:"channel"`
	Created     time.Time `json:"created"`
	Parts       []string  `json:"parts"`
	Meta        ytMeta    `json:"meta"`
	ContentType string    `json:"content_type,omitempty"`
	Total       int64     `json:"total"` // -1 until known
	Received    int64     `json:"received,omitempty"`
	// Spool is the state of what was received, its bytes in blobs; Hash the SHA-256 state of
	// those bytes.
	Spool sim.SpoolState `json:"spool"`
	Hash  []byte         `json:"hash,omitempty"`
	// Video is the video the upload became, once it completed.
	Video string `json:"video,omitempty"`
}

type ytChannel struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type ytVideo struct {
	ID          string        `json:"id"`
	Account     string        `json:"account"`
	Channel     ytChannel     `json:"channel"`
	Meta        ytMeta        `json:"meta"`
	Bytes       int64         `json:"bytes"`
	SHA         string        `json:"sha"`
	ContentType string        `json:"content_type,omitempty"`
	Uploaded    time.Time     `json:"uploaded"`
	Ready       time.Time     `json:"ready"` // processing ends
	ProcessTime time.Duration `json:"process_time"`
	// Outcome is status.uploadStatus once processing ends: processed, rejected or failed;
	// Rejection the rejectionReason when rejected.
	Outcome   string `json:"outcome"`
	Rejection string `json:"rejection,omitempty"`
	State     string `json:"state"`               // status.uploadStatus now
	Thumbnail bool   `json:"thumbnail,omitempty"` // a custom thumbnail is set
	Short     bool   `json:"short,omitempty"`     // vertical or square, at most 3 minutes
	// Replies are the replies accounts posted to the video's comments, oldest first.
	Replies []ytReply `json:"replies,omitempty"`
}

// ytChannelState is what an account's channel keeps across its videos.
type ytChannelState struct {
	// Pending are the videos still processing, which the account's next request settles
	// once due.
	Pending []ytPending `json:"pending,omitempty"`
	// Videos counts the processed videos (statistics.videoCount).
	Videos int `json:"videos,omitempty"`
}

type ytPending struct {
	ID    string    `json:"id"`
	Ready time.Time `json:"ready"`
}

// ytCommentRef is the video an audience comment is on.
type ytCommentRef struct {
	Video string `json:"video"`
}

// ytUsage is an account's usage of its quota day: Units of the general bucket, and Uploads,
// the videos.insert calls charged to their own bucket (and counted against Options.DailyUploads).
type ytUsage struct {
	Units   int `json:"units,omitempty"`
	Uploads int `json:"uploads,omitempty"`
}

// ytInsertQuota is the default daily bucket of videos.insert: 100 calls, each costing 1, apart
// from the 10,000 units all other methods share. YouTube's quota calculator
// (https://developers.google.com/youtube/v3/determine_quota_cost) gives a project 100
// search.list calls, 100 videos.insert calls and 10,000 units a day for the rest; the revision
// history (https://developers.google.com/youtube/v3/revision_history) dates the move of
// videos.insert and search.list to buckets of their own to 1 June 2026, after the upload's
// cost had gone from about 1,600 units to about 100 on 4 December 2025. An upload therefore no
// longer spends the general quota, and the general quota no longer limits uploads.
const ytInsertQuota = 100

type ytSim struct {
	cfg    sim.Config
	opt    Options
	prefix string
}

// New returns the simulator of the YouTube Data API v3 with default options.
func New(cfg sim.Config) http.Handler {
	return NewWith(cfg, Options{})
}

// NewWith returns the simulator of the YouTube Data API v3 tuned by opt.
func NewWith(cfg sim.Config, opt Options) http.Handler {
	cfg.Normalize()
	if opt.DailyQuota == 0 {
		opt.DailyQuota = 10_000
	}
	if opt.InsertQuota == 0 {
		opt.InsertQuota = ytInsertQuota
	}
	if opt.SessionTTL == 0 {
		opt.SessionTTL = ytSessionTTL
	}
	if opt.Processing == 0 {
		opt.Processing = 2 * time.Second
	}
	if opt.RetryAfter == 0 {
		opt.RetryAfter = 10 * time.Second
	}
	if opt.MaxThumbnailBytes == 0 {
		opt.MaxThumbnailBytes = 2 << 20
	}
	s := &ytSim{cfg: cfg, opt: opt}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		s.prefix = strings.TrimRight(u.Path, "/")
	}
	return s
}

// ytErr is a Google API error.
type ytErr struct {
	code    int
	domain  string
	reason  string
	message string
	header  map[string]string
}

func ytError(code int, domain, reason, format string, args ...any) *ytErr {
	return &ytErr{code: code, domain: domain, reason: reason, message: fmt.Sprintf(format, args...)}
}

// ytInternal answers a failure of the simulator's own (its State, its spool) as Google answers
// its internal errors.
func ytInternal() *ytErr {
	return ytError(500, "global", "internalError", "The request failed due to an internal error.")
}

var ytStatusNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	405: "METHOD_NOT_ALLOWED", 413: "FAILED_PRECONDITION", 429: "RESOURCE_EXHAUSTED",
	500: "INTERNAL", 503: "UNAVAILABLE",
}

func ytWriteErr(w http.ResponseWriter, e *ytErr) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	body := map[string]any{"error": map[string]any{
		"code":    e.code,
		"message": e.message,
		"errors":  []map[string]string{{"message": e.message, "domain": e.domain, "reason": e.reason}},
		"status":  ytStatusNames[e.code],
	}}
	ytWriteJSON(w, e.code, body)
}

func ytWriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *ytSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	p := r.URL.Path
	if s.prefix != "" {
		p = strings.TrimPrefix(p, s.prefix)
	}
	q := r.URL.Query()
	var route func(http.ResponseWriter, *http.Request, sim.Account, url.Values, time.Time) *ytErr
	switch {
	case p == "/tokeninfo":
		s.tokeninfo(w, r)
		return
	case p == "/upload/youtube/v3/videos" && q.Get("upload_id") != "" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		route = s.chunk
	case p == "/upload/youtube/v3/videos" && r.Method == http.MethodPost:
		route = s.insert
	case p == "/upload/youtube/v3/thumbnails/set" && r.Method == http.MethodPost:
		route = s.setThumbnail
	case p == "/youtube/v3/videos" && r.Method == http.MethodGet:
		route = s.listVideos
	case p == "/youtube/v3/videoCategories" && r.Method == http.MethodGet:
		route = s.listCategories
	case p == "/youtube/v3/channels" && r.Method == http.MethodGet:
		route = s.listChannels
	case p == "/youtube/v3/commentThreads" && r.Method == http.MethodGet:
		route = s.listCommentThreads
	case p == "/youtube/v3/comments" && r.Method == http.MethodGet:
		route = s.listComments
	case p == "/youtube/v3/comments" && r.Method == http.MethodPost:
		route = s.insertComment
	case p == "/youtube/v3/videos" && r.Method == http.MethodPost:
		ytWriteErr(w, ytError(400, "global", "wrongUrlForUpload",
			"Uploads must be sent to the upload URL. Re-send this request to https://www.googleapis.com/upload/youtube/v3/videos"))
		return
	case p == "/upload/youtube/v3/videos" || p == "/upload/youtube/v3/thumbnails/set" ||
		p == "/youtube/v3/videos" || p == "/youtube/v3/videoCategories" || p == "/youtube/v3/channels" ||
		p == "/youtube/v3/commentThreads" || p == "/youtube/v3/comments":
		ytWriteErr(w, ytError(405, "global", "httpMethodNotAllowed", "Method %s is not allowed for %s.", r.Method, p))
		return
	default:
		ytWriteErr(w, ytError(404, "global", "notFound", "Not Found"))
		return
	}

	if alt := q.Get("alt"); alt != "" && alt != "json" {
		ytWriteErr(w, ytError(400, "global", "invalidParameter", "Invalid value %q for alt: this simulator answers json only.", alt))
		return
	}
	acct, e := s.authenticate(r)
	if e == nil && s.settleDue(r.Context(), acct.ID, now) != nil {
		e = ytInternal()
	}
	if e == nil {
		e = s.fault(acct)
	}
	if e == nil {
		e = route(w, r, acct, q, now)
	}
	if e != nil {
		ytWriteErr(w, e)
	}
}

// authenticate resolves the Bearer token, answering 401 as Google does.
func (s *ytSim) authenticate(r *http.Request) (sim.Account, *ytErr) {
	h := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if h == "" || !strings.EqualFold(scheme, "Bearer") || token == "" {
		e := ytError(401, "global", "required",
			"Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
		e.header = map[string]string{"WWW-Authenticate": `Bearer realm="https://accounts.google.com/"`}
		return sim.Account{}, e
	}
	acct, ok := s.cfg.Accounts.Resolve(r.Context(), token)
	if !ok {
		return sim.Account{}, ytAuthError()
	}
	return acct, nil
}

func ytAuthError() *ytErr {
	e := ytError(401, "global", "authError",
		"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.")
	e.header = map[string]string{"WWW-Authenticate": `Bearer realm="https://accounts.google.com/", error="invalid_token"`}
	return e
}

// fault renders the account's call fault, if this call draws one.
func (s *ytSim) fault(acct sim.Account) *ytErr {
	switch sim.CallFault(acct.Behavior, s.cfg.Rand) {
	case sim.FailUnavailable:
		return ytError(503, "global", "backendError", "Backend Error")
	case sim.FailAuth:
		return ytAuthError()
	case sim.FailRateLimit:
		e := ytError(429, "youtube.quota", "rateLimitExceeded", "Too many requests have been sent within a given time span.")
		e.header = map[string]string{"Retry-After": strconv.Itoa(int(s.opt.RetryAfter.Round(time.Second) / time.Second))}
		return e
	}
	return nil
}

// charge takes units of the account's general quota for today within tx. A refusal writes
// nothing.
func (s *ytSim) charge(tx sim.Tx, acct sim.Account, units int, now time.Time) (*ytErr, error) {
	key := ytKey(ytQuotaKind, acct.ID)
	// The record ends at midnight Pacific Time: past it, the day starts from nothing.
	u, _, _, err := sim.LoadTx[ytUsage](tx, key)
	if err != nil {
		return nil, err
	}
	quota := s.opt.DailyQuota
	if acct.Behavior.DailyQuotaUnits != nil {
		quota = *acct.Behavior.DailyQuotaUnits
	}
	if quota >= 0 && u.Units+units > quota {
		// Google's own sentence, then what a sandbox user needs and Google would not say:
		// that the quota is simulated, when it comes back, and how to change it.
		return ytQuotaExceeded(now,
			"reelay's sandbox simulates YouTube's daily quota: %d units for this channel, of which %d are left; this call costs %d (uploads are charged to a bucket of their own). "+
				"It resets at midnight Pacific Time, %s (in %s). Set sandbox_behavior.daily_quota_units on the channel to change it, or a negative number for none.",
			quota, max(quota-u.Units, 0), units), nil
	}
	u.Units += units
	return nil, sim.Save(tx, sim.Record{Key: key, Account: acct.ID, Expires: ytQuotaReset(now)}, u)
}

// chargeInsert takes one call of the account's videos.insert bucket for today within tx, and
// counts the upload against the daily upload cap. A refusal writes nothing.
func (s *ytSim) chargeInsert(tx sim.Tx, acct sim.Account, now time.Time) (*ytErr, error) {
	key := ytKey(ytQuotaKind, acct.ID)
	u, _, _, err := sim.LoadTx[ytUsage](tx, key)
	if err != nil {
		return nil, err
	}
	if s.opt.DailyUploads > 0 && u.Uploads >= s.opt.DailyUploads {
		return ytError(400, "youtube.video", "uploadLimitExceeded", "The user has exceeded the number of videos they may upload."), nil
	}
	if s.opt.InsertQuota >= 0 && u.Uploads >= s.opt.InsertQuota {
		return ytQuotaExceeded(now,
			"reelay's sandbox simulates YouTube's videos.insert quota bucket: %d uploads a day for this channel, all used; other calls draw on the general quota of units, which is apart. "+
				"It resets at midnight Pacific Time, %s (in %s).",
			s.opt.InsertQuota), nil
	}
	u.Uploads++
	return nil, sim.Save(tx, sim.Record{Key: key, Account: acct.ID, Expires: ytQuotaReset(now)}, u)
}

// ytQuotaExceeded is Google's 403 quotaExceeded, its sentence followed by the sandbox's note
// (format and args), to which the time of the reset is appended.
func ytQuotaExceeded(now time.Time, format string, args ...any) *ytErr {
	reset := ytQuotaReset(now)
	args = append(args, reset.UTC().Format(time.RFC3339), reset.Sub(now).Round(time.Minute))
	return ytError(403, "youtube.quota", "quotaExceeded",
		`The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>. (`+format+`)`, args...)
}

// chargeCall takes the units of a call that changes nothing else, in a transaction of its own.
func (s *ytSim) chargeCall(ctx context.Context, acct sim.Account, units int, now time.Time) *ytErr {
	var e *ytErr
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		var err error
		e, err = s.charge(tx, acct, units, now)
		return err
	})
	if err != nil {
		return ytInternal()
	}
	return e
}

// insert is POST /upload/youtube/v3/videos: a resumable session start or a multipart upload.
func (s *ytSim) insert(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	parts, e := ytParts(ytParam(q, "part"))
	if e != nil {
		return e
	}
	if s.opt.NoChannel[acct.ID] {
		return ytError(401, "youtube.header", "youtubeSignupRequired",
			"The user has an unlinked Google Account: the account has no YouTube channel, so it cannot upload videos.")
	}
	switch q.Get("uploadType") {
	case "resumable":
		return s.startSession(w, r, acct, parts, now)
	case "multipart":
		return s.multipartInsert(w, r, acct, parts, now)
	case "":
		return ytError(400, "global", "badRequest", "Media upload requires the uploadType parameter.")
	default:
		return ytError(400, "global", "invalidParameter", "Invalid value %q for uploadType: this simulator takes resumable or multipart.", q.Get("uploadType"))
	}
}

// ytParam reads a parameter the API declares repeated (part, id) as one comma-separated list.
// Google takes it in either form, one comma-separated value ("part=snippet,status") or the
// parameter repeated ("part=snippet&part=status"), which is what the Go client library sends,
// or a mix of the two.
func ytParam(q url.Values, name string) string {
	return strings.Join(q[name], ",")
}

func ytParts(part string) ([]string, *ytErr) {
	if strings.TrimSpace(part) == "" {
		return nil, ytError(400, "global", "required", "Required parameter: part")
	}
	var out []string
	for _, p := range strings.Split(part, ",") {
		p = strings.TrimSpace(p)
		if !ytVideoParts[p] {
			return nil, ytError(400, "youtube.part", "unknownPart", "%q", p)
		}
		out = append(out, p)
	}
	return out, nil
}

func (s *ytSim) startSession(w http.ResponseWriter, r *http.Request, acct sim.Account, parts []string, now time.Time) *ytErr {
	total := int64(-1)
	if v := r.Header.Get("X-Upload-Content-Length"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return ytError(400, "global", "invalidHeader", "Invalid X-Upload-Content-Length header: %q", v)
		}
		if n == 0 {
			return ytError(400, "youtube.video", "mediaBodyRequired", "The request does not include the video content.")
		}
		if ytMaxVideoBytes > 0 && n > ytMaxVideoBytes {
			return ytError(413, "global", "uploadTooLarge", "The request failed because the data sent in the request is too large.")
		}
		total = n
	}
	ctype := r.Header.Get("X-Upload-Content-Type")
	if e := ytCheckVideoType(ctype); e != nil {
		return e
	}
	meta, e := ytReadMeta(io.LimitReader(r.Body, ytMaxMetadataBytes+1), r.Header.Get("Content-Type"))
	if e != nil {
		return e
	}
	sess := ytSession{
		ID: ytRandomID(24), Account: acct.ID, Channel: ytChannelOf(acct), Created: now,
		Parts: parts, Meta: meta, ContentType: ctype, Total: total,
	}
	err := s.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		var err error
		if e, err = s.chargeInsert(tx, acct, now); err != nil || e != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: ytKey(ytSessionKind, sess.ID), Account: acct.ID,
			Expires: now.Add(s.opt.SessionTTL), Blobs: true}, sess)
	})
	switch {
	case err != nil:
		return ytInternal()
	case e != nil:
		return e
	}

	v := url.Values{"uploadType": {"resumable"}, "upload_id": {sess.ID}, "part": {strings.Join(parts, ",")}}
	w.Header().Set("Location", s.cfg.BaseURL+"/upload/youtube/v3/videos?"+v.Encode())
	w.Header().Set("X-GUploader-UploadID", sess.ID)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

func ytCheckVideoType(ctype string) *ytErr {
	if ctype == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ctype)
	if err == nil && (strings.HasPrefix(mt, "video/") || mt == "application/octet-stream") {
		return nil
	}
	return ytError(400, "global", "badContent",
		"Media type '%s' is not supported. Valid media types: [video/*, application/octet-stream]", ctype)
}

// ytReadMeta parses and checks the video resource of an insert.
func ytReadMeta(body io.Reader, ctype string) (ytMeta, *ytErr) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return ytMeta{}, ytError(400, "global", "badRequest", "The request body could not be read.")
	}
	if len(raw) > ytMaxMetadataBytes {
		return ytMeta{}, ytError(413, "global", "backendRequestTooLarge", "The request is too large.")
	}
	var in struct {
		Snippet *struct {
			Title       *string         `json:"title"`
			Description string          `json:"description"`
			Tags        []string        `json:"tags"`
			CategoryID  json.RawMessage `json:"categoryId"`
		} `json:"snippet"`
		Status *struct {
			PrivacyStatus           string `json:"privacyStatus"`
			SelfDeclaredMadeForKids *bool  `json:"selfDeclaredMadeForKids"`
			PublishAt               string `json:"publishAt"`
		} `json:"status"`
	}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if mt, _, _ := mime.ParseMediaType(ctype); ctype != "" && mt != "application/json" {
			return ytMeta{}, ytError(400, "global", "badContent", "Unsupported content with type: %s", ctype)
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return ytMeta{}, ytError(400, "global", "parseError", "Parse Error")
		}
	}
	m := ytMeta{Privacy: "public", CategoryID: ytDefaultCategory}
	if in.Snippet != nil {
		if in.Snippet.Title != nil {
			m.Title = *in.Snippet.Title
		}
		m.Description = in.Snippet.Description
		m.Tags = in.Snippet.Tags
		if c := strings.Trim(strings.TrimSpace(string(in.Snippet.CategoryID)), `"`); c != "" && c != "null" {
			m.CategoryID = c
		}
	}
	if in.Status != nil {
		if in.Status.PrivacyStatus != "" {
			m.Privacy = in.Status.PrivacyStatus
		}
		if in.Status.SelfDeclaredMadeForKids != nil {
			m.MadeForKids = *in.Status.SelfDeclaredMadeForKids
		}
		m.PublishAt = in.Status.PublishAt
	}
	return m, ytCheckMeta(m)
}

func ytCheckMeta(m ytMeta) *ytErr {
	invalidTitle := ytError(400, "youtube.video", "invalidTitle", "The request metadata specifies an invalid or empty video title.")
	switch {
	case strings.TrimSpace(m.Title) == "":
		return invalidTitle
	case !ytTitleLimit.Check(m.Title), strings.ContainsAny(m.Title, "<>"), !utf8.ValidString(m.Title):
		return invalidTitle
	case !ytDescLimit.Check(m.Description), strings.ContainsAny(m.Description, "<>"), !utf8.ValidString(m.Description):
		return ytError(400, "youtube.video", "invalidDescription", "The request metadata specifies an invalid video description.")
	}
	tagChars := 0
	for _, t := range m.Tags {
		tagChars += utf8.RuneCountInString(t)
		if strings.Contains(t, " ") {
			tagChars += 2 // a tag with a space counts with its quotes
		}
		if strings.ContainsAny(t, "<>") {
			tagChars = ytMaxTagsChars + 1
		}
	}
	if tagChars > ytMaxTagsChars {
		return ytError(400, "youtube.video", "invalidTags", "The request metadata specifies invalid video keywords.")
	}
	known := false
	for _, c := range ytCategories {
		if c.id == m.CategoryID && c.assignable {
			known = true
		}
	}
	if !known {
		return ytError(400, "youtube.video", "invalidCategoryId", "The <code>snippet.categoryId</code> property specifies an invalid category ID.")
	}
	switch m.Privacy {
	case "public", "unlisted", "private":
	default:
		return ytError(400, "youtube.video", "invalidVideoMetadata", "The request metadata is invalid: unknown status.privacyStatus %q.", m.Privacy)
	}
	if m.PublishAt != "" {
		t, err := time.Parse(time.RFC3339, m.PublishAt)
		if err != nil || m.Privacy != "private" || t.IsZero() {
			return ytError(400, "youtube.video", "invalidPublishAt", "The request metadata specifies an invalid scheduled publishing time.")
		}
	}
	return nil
}

// ytRange is a parsed Content-Range of an upload request.
type ytRange struct {
	query       bool  // "bytes */total"
	first, last int64 // when !query
	total       int64 // -1 for "*"
}

func ytParseRange(h string) (ytRange, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !ok {
		return ytRange{}, false
	}
	span, tot, ok := strings.Cut(strings.TrimSpace(rest), "/")
	if !ok {
		return ytRange{}, false
	}
	r := ytRange{total: -1}
	if tot != "*" {
		n, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || n < 0 {
			return ytRange{}, false
		}
		r.total = n
	}
	if span == "*" {
		r.query = true
		return r, r.total >= 0
	}
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return ytRange{}, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first || (r.total >= 0 && last >= r.total) {
		return ytRange{}, false
	}
	r.first, r.last = first, last
	return r, true
}

// errYTMoved: another request moved the session on (or completed it) while this one received
// its chunk; the answer is the one it would have had after that request.
var errYTMoved = errors.New("the upload session moved on")

// chunk is a request on a session URI: a chunk of bytes or the status query. The chunk is
// received into a spool resumed from the session, whose kept bytes go to a blob unless they
// complete the upload; the session then moves on in one transaction, unless another request
// moved it first.
func (s *ytSim) chunk(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	key := ytKey(ytSessionKind, q.Get("upload_id"))
	sess, _, found, err := sim.Load[ytSession](r.Context(), s.cfg.State, key)
	switch {
	case err != nil:
		return ytInternal()
	case !found: // never started, or its week is over
		return ytError(404, "global", "notFound", "Not Found: the upload session does not exist or has expired.")
	case sess.Account != acct.ID:
		return ytError(403, "global", "forbidden", "The upload session belongs to another user.")
	case sess.Video != "":
		return s.writeStoredVideo(r.Context(), w, http.StatusCreated, sess.Video, sess.Parts, acct.ID, now)
	}

	var rg ytRange
	if h := r.Header.Get("Content-Range"); h != "" {
		var ok bool
		if rg, ok = ytParseRange(h); !ok {
			return ytError(400, "global", "badRequest", "Failed to parse Content-Range header.")
		}
	} else {
		// A whole-file upload in one request: the body is the file.
		if r.ContentLength <= 0 {
			return ytError(400, "global", "badRequest", "Content-Range or a non-empty body with Content-Length is required.")
		}
		rg = ytRange{first: 0, last: r.ContentLength - 1, total: r.ContentLength}
	}
	// The total becomes known from X-Upload-Content-Length or from the first Content-Range
	// that states it; it is kept only once the request is accepted.
	total := sess.Total
	if rg.total >= 0 {
		switch {
		case total >= 0 && rg.total != total:
			return ytError(400, "global", "badRequest",
				"Content-Range total %d does not match the upload's length %d (X-Upload-Content-Length).", rg.total, total)
		case rg.total < sess.Received:
			return ytError(400, "global", "badRequest", "Content-Range total %d is less than the %d bytes already received.", rg.total, sess.Received)
		}
		total = rg.total
	}

	// What arrived is kept whatever happens to the request (a broken body cancels its
	// context), on a context of its own, given ytKeepTimeout once the body ended.
	keep, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	up := ytUpload{key: key, sess: sess, total: total, received: sess.Received}
	if rg.query {
		defer time.AfterFunc(ytKeepTimeout, cancel).Stop()
		if r.ContentLength > 0 {
			return ytError(400, "global", "badRequest", "A status query (Content-Range: bytes */%d) must have an empty body.", rg.total)
		}
		if sess.Received == total {
			if err := up.resume(keep, s); err != nil {
				return ytInternal()
			}
			defer up.sp.Close()
			return s.complete(keep, w, up, acct, now)
		}
		return s.moveOn(keep, w, r, up, nil)
	}

	n := rg.last - rg.first + 1
	switch {
	case rg.first != sess.Received:
		return ytOffsetError(rg.first, sess.Received)
	case r.ContentLength >= 0 && r.ContentLength != n:
		return ytError(400, "global", "badRequest", "Content-Length %d does not match Content-Range %d-%d (%d bytes).", r.ContentLength, rg.first, rg.last, n)
	case total >= 0 && rg.last >= total:
		return ytError(400, "global", "badRequest", "Content-Range %d-%d reaches past the upload's length %d.", rg.first, rg.last, total)
	case ytMaxVideoBytes > 0 && rg.last >= ytMaxVideoBytes:
		return ytError(413, "global", "uploadTooLarge", "The request failed because the data sent in the request is too large.")
	}
	final := total >= 0 && rg.last+1 == total
	if !final && n%ytChunkQuantum != 0 {
		return ytError(400, "global", "badRequest",
			"Invalid chunk size %d: every chunk except the last must be a multiple of 262144 bytes (256 KiB).", n)
	}

	if err := up.resume(keep, s); err != nil {
		return ytInternal()
	}
	defer up.sp.Close()
	kept, err := ytReceive(up.sp, up.hash, sess.Received, r.Body, n)
	defer time.AfterFunc(ytKeepTimeout, cancel).Stop()
	if errors.Is(err, sim.ErrSpoolFile) {
		return ytInternal()
	}
	up.received += kept
	if err != nil {
		cut := ytError(400, "global", "badRequest", "The chunk ended before Content-Range %d-%d was complete; %d bytes are kept.", rg.first, rg.last, up.received)
		return s.moveOn(keep, w, r, up, cut)
	}
	if final || up.received == total {
		return s.complete(keep, w, up, acct, now)
	}
	return s.moveOn(keep, w, r, up, nil)
}

func ytOffsetError(first, received int64) *ytErr {
	return ytError(400, "global", "badRequest",
		"Content-Range starts at byte %d but the upload has received %d bytes: the next chunk must start at byte %d.", first, received, received)
}

// ytUpload is one request's work on a session: what it read of the session, and what the
// session is to become.
type ytUpload struct {
	key      sim.Key
	sess     ytSession // as read when the request began
	total    int64
	received int64
	sp       *sim.Spool
	hash     hash.Hash // SHA-256 of the bytes received
}

// resume takes up the session's bytes (their chunks read with ctx) and their hash.
func (u *ytUpload) resume(ctx context.Context, s *ytSim) error {
	u.sp = sim.ResumeSpool(ctx, s.cfg.Blobs, u.sess.Spool, "reelay-sim-youtube-*")
	u.sp.Dir = s.opt.SpoolDir
	u.hash = sha256.New()
	if len(u.sess.Hash) > 0 {
		if err := u.hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(u.sess.Hash); err != nil {
			u.sp.Close()
			return fmt.Errorf("%w: %v", sim.ErrSpoolFile, err)
		}
	}
	return nil
}

// commit changes the session by fn in one transaction, unless another request moved it on
// since u's began (errYTMoved); it answers the session as fn left it, or as it was found.
func (u *ytUpload) commit(ctx context.Context, st sim.State, fn func(tx sim.Tx, cur *ytSession) error) (ytSession, error) {
	var cur ytSession
	err := st.Update(ctx, func(tx sim.Tx) error {
		var rec sim.Record
		var found bool
		var err error
		cur, rec, found, err = sim.LoadTx[ytSession](tx, u.key)
		switch {
		case err != nil:
			return err
		case !found || cur.Received != u.sess.Received || cur.Video != "":
			return errYTMoved
		}
		if err := fn(tx, &cur); err != nil {
			return err
		}
		return sim.Save(tx, rec, cur)
	})
	return cur, err
}

// ytReceive appends n bytes of body to sp at offset at, hashing them into h on the way
// (media.CopyHashed: large writes, the hash on a goroutine of its own), and answers how many
// it kept. A body cut short keeps what arrived, rounded down to 256 KiB, as Google's upload
// servers may keep part of a chunk, and answers the error with it.
func ytReceive(sp *sim.Spool, h hash.Hash, at int64, body io.Reader, n int64) (int64, error) {
	qh, err := newQuantumHash(h)
	if err != nil {
		return 0, err
	}
	got, err := media.CopyHashed(io.NewOffsetWriter(sp, at), io.LimitReader(body, n), qh)
	if errors.Is(err, sim.ErrSpoolFile) {
		return 0, err
	}
	if err == nil && got < n {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		// Content-Length matched, but a chunked body could carry more than the range.
		var one [1]byte
		if m, _ := io.ReadFull(body, one[:]); m > 0 {
			err = errors.New("body longer than Content-Range")
			got = 0
		}
	}
	if err == nil {
		return n, nil
	}
	kept := got / ytChunkQuantum * ytChunkQuantum
	// The hash went past what is kept: take it back (the spool keeps no media data to hash
	// again).
	if uerr := qh.rewind(kept); uerr != nil {
		return 0, uerr
	}
	if terr := sp.Truncate(at + kept); terr != nil {
		return 0, fmt.Errorf("%w: %v", sim.ErrSpoolFile, terr)
	}
	return kept, err
}

// moveOn keeps what a request that did not complete the upload changed (bytes it received, a
// total it stated) and answers 308 with the session's progress, or answer when it has one.
func (s *ytSim) moveOn(ctx context.Context, w http.ResponseWriter, r *http.Request, u ytUpload, answer *ytErr) *ytErr {
	if u.received == u.sess.Received && u.total == u.sess.Total {
		if answer != nil {
			return answer
		}
		s.resumeIncomplete(w, r, u.sess.ID, u.received)
		return nil
	}
	var st sim.SpoolState
	var hashState []byte
	if u.received > u.sess.Received {
		var err error
		if st, err = u.sp.Save(ctx, sim.BlobPrefix(u.key)); err != nil {
			return ytInternal()
		}
		if hashState, err = u.hash.(encoding.BinaryMarshaler).MarshalBinary(); err != nil {
			return ytInternal()
		}
	}
	cur, err := u.commit(ctx, s.cfg.State, func(_ sim.Tx, cur *ytSession) error {
		cur.Total = u.total
		if u.received > u.sess.Received {
			cur.Received, cur.Spool, cur.Hash = u.received, st, hashState
		}
		return nil
	})
	switch {
	case errors.Is(err, errYTMoved):
		return s.afterMove(ctx, w, u, cur)
	case err != nil:
		return ytInternal()
	case answer != nil:
		return answer
	}
	s.resumeIncomplete(w, r, u.sess.ID, u.received)
	return nil
}

// afterMove answers a request whose session another request moved on meanwhile, as it would
// have been answered after that request: 201 with the video once the upload completed, 404
// once the session ended, else the refusal of a chunk that does not start where the session
// stands.
func (s *ytSim) afterMove(ctx context.Context, w http.ResponseWriter, u ytUpload, cur ytSession) *ytErr {
	switch {
	case cur.Video != "":
		return s.writeStoredVideo(ctx, w, http.StatusCreated, cur.Video, cur.Parts, cur.Account, s.cfg.Now())
	case cur.ID == "":
		return ytError(404, "global", "notFound", "Not Found: the upload session does not exist or has expired.")
	}
	return ytOffsetError(u.sess.Received, cur.Received)
}

// resumeIncomplete answers 308 Resume Incomplete with the Range received so far.
func (s *ytSim) resumeIncomplete(w http.ResponseWriter, r *http.Request, id string, received int64) {
	if received > 0 {
		w.Header().Set("Range", fmt.Sprintf("bytes=0-%d", received-1))
	}
	w.Header().Set("X-GUploader-UploadID", id)
	w.Header().Set("Content-Length", "0")
	if strings.EqualFold(r.Header.Get("X-GUploader-No-308"), "yes") {
		w.Header().Set("X-HTTP-Status-Code-Override", "308")
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusPermanentRedirect) // 308, "Resume Incomplete" in Google's wording
}

// complete turns a fully received session into a video and answers 201 with it: in one
// transaction the video is saved, its upload recorded and the session ends with it; the
// session's blobs are deleted after.
func (s *ytSim) complete(ctx context.Context, w http.ResponseWriter, u ytUpload, acct sim.Account, now time.Time) *ytErr {
	sum := hex.EncodeToString(u.hash.Sum(nil))
	v, e := s.newVideo(u.sp, u.received, sum, u.sess.Account, u.sess.Channel, u.sess.Meta, u.sess.ContentType, acct, now)
	if e != nil {
		return e
	}
	var made ytVideo
	cur, err := u.commit(ctx, s.cfg.State, func(tx sim.Tx, cur *ytSession) error {
		made = v
		if err := s.addVideo(tx, &made, now); err != nil {
			return err
		}
		// The session stays until it expires, so that any later request on it is answered
		// with the video.
		cur.Total, cur.Received, cur.Spool, cur.Hash, cur.Video = u.total, u.received, sim.SpoolState{}, nil, v.ID
		return nil
	})
	switch {
	case errors.Is(err, errYTMoved):
		return s.afterMove(ctx, w, u, cur)
	case err != nil:
		return ytInternal()
	}
	// The chunks are of no use once the video is checked; housekeeping deletes them with the
	// session should this fail, and whatever a request that lost the race stored.
	if len(u.sess.Spool.Chunks) > 0 {
		_ = sim.DeleteBlobs(ctx, s.cfg.Blobs, u.key)
	}
	ytWriteJSON(w, http.StatusCreated, s.resource(made, u.sess.Parts, acct.ID, now))
	return nil
}

// newVideo checks the uploaded bytes, whose SHA-256 is sum, and makes the video they become,
// its processing started at now; it reads back only what media.Sniff and media.Probe look at.
func (s *ytSim) newVideo(f io.ReaderAt, size int64, sum string, account string, ch ytChannel, meta ytMeta, ctype string, acct sim.Account, now time.Time) (ytVideo, *ytErr) {
	if f == nil || size == 0 {
		return ytVideo{}, ytError(400, "youtube.video", "mediaBodyRequired", "The request does not include the video content.")
	}
	head := make([]byte, min(size, media.SniffLen))
	if _, err := f.ReadAt(head, 0); err != nil {
		return ytVideo{}, ytInternal()
	}
	var info media.Info
	kind, isMedia := media.Sniff(head)
	isVideo := isMedia && kind.IsVideo()
	if isVideo {
		var err error
		info, err = media.Probe(f, size)
		isVideo = err == nil
	}
	processing := s.opt.Processing
	if acct.Behavior.ProcessingMS >= 0 {
		processing = time.Duration(acct.Behavior.ProcessingMS) * time.Millisecond
	}
	v := ytVideo{
		ID: ytRandomID(11), Account: account, Channel: ch, Meta: meta,
		Bytes: size, SHA: sum, ContentType: ctype,
		Uploaded: now, Ready: now.Add(processing), ProcessTime: processing,
		State: ytUploaded, Outcome: ytProcessed,
		Short: info.Width > 0 && info.Height >= info.Width && info.Duration > 0 && info.Duration <= ytMaxShort,
	}
	switch {
	case !isVideo:
		v.Outcome = ytFailed
	case ytMaxDuration > 0 && info.Duration > ytMaxDuration:
		v.Outcome, v.Rejection = ytRejected, "length"
	case acct.Behavior.Fail == sim.FailReject:
		v.Outcome, v.Rejection = ytRejected, ytRejectReason
	}
	return v, nil
}

// addVideo saves a new video within tx, recording its upload, and adds it to its channel's
// videos in processing; a processing time of 0 ends at once.
func (s *ytSim) addVideo(tx sim.Tx, v *ytVideo, now time.Time) error {
	if err := sim.RecordTx(tx, platform.YouTube, sim.Upload{Account: v.Account, Bytes: v.Bytes, SHA256: v.SHA}); err != nil {
		return err
	}
	err := s.updateChannel(tx, v.Account, func(ch *ytChannelState) {
		ch.Pending = append(ch.Pending, ytPending{ID: v.ID, Ready: v.Ready})
	})
	if err != nil {
		return err
	}
	if err := s.settle(tx, v, now); err != nil {
		return err
	}
	return sim.Save(tx, sim.Record{Key: ytKey(ytVideoKind, v.ID), Account: v.Account}, *v)
}

// updateChannel changes the channel state of account within tx.
func (s *ytSim) updateChannel(tx sim.Tx, account string, fn func(ch *ytChannelState)) error {
	ch, rec, _, err := sim.LoadTx[ytChannelState](tx, ytKey(ytChannelKind, account))
	if err != nil {
		return err
	}
	fn(&ch)
	rec.Account = account
	return sim.Save(tx, rec, ch)
}

// ytDue reports whether v's processing is over and its final status not yet set.
func ytDue(v ytVideo, now time.Time) bool {
	return v.State == ytUploaded && !now.Before(v.Ready)
}

// settle moves v, whose processing is over, to its final status within tx (the caller saves
// v): it leaves its channel's videos in processing; a processed video counts on the channel,
// gets its audience comments named (ytCommentKind) and is recorded as published.
func (s *ytSim) settle(tx sim.Tx, v *ytVideo, now time.Time) error {
	if !ytDue(*v, now) {
		return nil
	}
	v.State = v.Outcome
	err := s.updateChannel(tx, v.Account, func(ch *ytChannelState) {
		ch.Pending = slices.DeleteFunc(ch.Pending, func(p ytPending) bool { return p.ID == v.ID })
		if v.State == ytProcessed {
			ch.Videos++
		}
	})
	if err != nil || v.State != ytProcessed {
		return err
	}
	for n := 1; n <= sim.MaxAudienceComments; n++ {
		ref := sim.Record{Key: ytKey(ytCommentKind, ytCommentID(v.ID, n)), Account: v.Account}
		if err := sim.Save(tx, ref, ytCommentRef{Video: v.ID}); err != nil {
			return err
		}
	}
	u := "https://www.youtube.com/watch?v=" + v.ID
	if v.Short {
		u = "https://www.youtube.com/shorts/" + v.ID
	}
	return sim.RecordTx(tx, platform.YouTube, sim.Published{Account: v.Account, ID: v.ID, URL: u, SHA256: v.SHA, Text: v.Meta.Title})
}

// video reads a video. One whose processing is over moves to its final status: the change is
// written, with what it publishes recorded, by whichever request sees it first.
func (s *ytSim) video(ctx context.Context, id string, now time.Time) (ytVideo, bool, error) {
	return sim.LoadAdvanced(ctx, s.cfg.State, ytKey(ytVideoKind, id),
		func(v ytVideo) bool { return ytDue(v, now) },
		func(tx sim.Tx, v *ytVideo) error { return s.settle(tx, v, now) })
}

// settleDue ends the processing of the account's videos that is due: YouTube processes in the
// background, and the account's next request sees it done.
func (s *ytSim) settleDue(ctx context.Context, account string, now time.Time) error {
	ch, _, found, err := sim.Load[ytChannelState](ctx, s.cfg.State, ytKey(ytChannelKind, account))
	if err != nil || !found {
		return err
	}
	var due []string
	for _, p := range ch.Pending {
		if !now.Before(p.Ready) {
			due = append(due, p.ID)
		}
	}
	if len(due) == 0 {
		return nil
	}
	return s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		// The videos first, then their channel (in settle), in the order every update takes
		// them.
		videos := make([]ytVideo, len(due))
		recs := make([]sim.Record, len(due))
		for i, id := range due {
			var err error
			if videos[i], recs[i], _, err = sim.LoadTx[ytVideo](tx, ytKey(ytVideoKind, id)); err != nil {
				return err
			}
		}
		for i := range videos {
			if videos[i].ID == "" || !ytDue(videos[i], now) {
				// Gone after retention, or settled by a read since: it leaves the list.
				if err := s.updateChannel(tx, account, func(ch *ytChannelState) {
					ch.Pending = slices.DeleteFunc(ch.Pending, func(p ytPending) bool { return p.ID == due[i] })
				}); err != nil {
					return err
				}
				continue
			}
			if err := s.settle(tx, &videos[i], now); err != nil {
				return err
			}
			if err := sim.Save(tx, recs[i], videos[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// multipartInsert is videos.insert with uploadType=multipart: a multipart/related body of the
// video resource and the media, as client libraries send files smaller than their chunk size.
// The quota is charged before the media is read, as for any request that may fail after.
func (s *ytSim) multipartInsert(w http.ResponseWriter, r *http.Request, acct sim.Account, parts []string, now time.Time) *ytErr {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/related" || params["boundary"] == "" {
		return ytError(400, "global", "badContent", "A multipart upload needs a multipart/related body.")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	metaPart, err := mr.NextPart()
	if err != nil {
		return ytError(400, "global", "badContent", "The multipart body has no metadata part.")
	}
	meta, e := ytReadMeta(io.LimitReader(metaPart, ytMaxMetadataBytes+1), metaPart.Header.Get("Content-Type"))
	if e != nil {
		return e
	}
	part, err := mr.NextPart()
	if err != nil {
		return ytError(400, "youtube.video", "mediaBodyRequired", "The request does not include the video content.")
	}
	ctype := part.Header.Get("Content-Type")
	if e := ytCheckVideoType(ctype); e != nil {
		return e
	}
	err = s.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		var err error
		e, err = s.chargeInsert(tx, acct, now)
		return err
	})
	switch {
	case err != nil:
		return ytInternal()
	case e != nil:
		return e
	}
	f := sim.NewSpool(s.opt.SpoolDir, "reelay-sim-youtube-*")
	defer f.Close()
	h := sha256.New()
	n, err := media.CopyHashed(io.NewOffsetWriter(f, 0), io.LimitReader(part, ytMaxVideoBytes+1), h)
	if errors.Is(err, sim.ErrSpoolFile) {
		return ytInternal()
	}
	if err != nil {
		return ytError(400, "global", "badRequest", "The request body could not be read.")
	}
	if n > ytMaxVideoBytes {
		return ytError(413, "global", "uploadTooLarge", "The request failed because the data sent in the request is too large.")
	}
	v, e := s.newVideo(f, n, hex.EncodeToString(h.Sum(nil)), acct.ID, ytChannelOf(acct), meta, ctype, acct, now)
	if e != nil {
		return e
	}
	var made ytVideo
	if err := s.cfg.State.Update(r.Context(), func(tx sim.Tx) error { made = v; return s.addVideo(tx, &made, now) }); err != nil {
		return ytInternal()
	}
	ytWriteJSON(w, http.StatusOK, s.resource(made, parts, acct.ID, now))
	return nil
}

// listVideos is videos.list with the id filter.
func (s *ytSim) listVideos(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	parts, e := ytParts(ytParam(q, "part"))
	if e != nil {
		return e
	}
	if ytParam(q, "id") == "" {
		if q.Get("chart") != "" || q.Get("myRating") != "" {
			return ytError(400, "global", "invalidParameter", "This simulator lists videos by id only.")
		}
		return ytError(400, "youtube.parameter", "missingRequiredParameter", "No filter selected. Expected one of: myRating, id, chart")
	}
	ids := strings.Split(ytParam(q, "id"), ",")
	if len(ids) > 50 {
		return ytError(400, "youtube.parameter", "invalidParameter", "The id parameter takes at most 50 ids.")
	}
	if e := s.chargeCall(r.Context(), acct, 1, now); e != nil {
		return e
	}
	items := []map[string]any{}
	for _, id := range ids {
		v, ok, err := s.video(r.Context(), strings.TrimSpace(id), now)
		if err != nil {
			return ytInternal()
		}
		if ok && ytVisible(v, acct.ID) {
			items = append(items, s.resource(v, parts, acct.ID, now))
		}
	}
	ytWriteJSON(w, http.StatusOK, map[string]any{
		"kind": "youtube#videoListResponse", "etag": ytEtag(),
		"items":    items,
		"pageInfo": map[string]int{"totalResults": len(items), "resultsPerPage": len(items)},
	})
	return nil
}

// writeStoredVideo answers the video id with the requested parts, as it is now.
func (s *ytSim) writeStoredVideo(ctx context.Context, w http.ResponseWriter, code int, id string, parts []string, viewer string, now time.Time) *ytErr {
	v, ok, err := s.video(ctx, id, now)
	if err != nil || !ok {
		return ytInternal()
	}
	ytWriteJSON(w, code, s.resource(v, parts, viewer, now))
	return nil
}

// resource renders a video resource with the requested parts.
func (s *ytSim) resource(v ytVideo, parts []string, viewer string, now time.Time) map[string]any {
	res := map[string]any{"kind": "youtube#video", "etag": ytEtag(), "id": v.ID}
	owner := viewer == v.Account
	for _, p := range parts {
		switch p {
		case "snippet":
			thumbs := ytThumbnails(v.ID, v.Thumbnail)
			tags := v.Meta.Tags
			if tags == nil {
				tags = []string{}
			}
			res["snippet"] = map[string]any{
				"publishedAt": v.Uploaded.UTC().Format(time.RFC3339), "channelId": v.Channel.ID,
				"title": v.Meta.Title, "description": v.Meta.Description, "thumbnails": thumbs,
				"channelTitle": v.Channel.Title, "tags": tags, "categoryId": v.Meta.CategoryID,
				"liveBroadcastContent": "none",
				"localized":            map[string]any{"title": v.Meta.Title, "description": v.Meta.Description},
			}
		case "status":
			st := map[string]any{
				"uploadStatus": v.State, "privacyStatus": v.Meta.Privacy, "license": "youtube",
				"embeddable": true, "publicStatsViewable": true, "madeForKids": v.Meta.MadeForKids,
			}
			if owner {
				st["selfDeclaredMadeForKids"] = v.Meta.MadeForKids
			}
			if v.Meta.PublishAt != "" {
				st["publishAt"] = v.Meta.PublishAt
			}
			switch v.State {
			case ytFailed:
				st["failureReason"] = ytFailureReason
			case ytRejected:
				st["rejectionReason"] = v.Rejection
			}
			res["status"] = st
		case "processingDetails":
			if !owner {
				continue
			}
			pd := map[string]any{}
			switch v.State {
			case ytUploaded:
				pd["processingStatus"] = ytProcessing
				total := int64(1000)
				done := total
				left := v.Ready.Sub(now)
				if v.ProcessTime > 0 {
					done = total - total*int64(left)/int64(v.ProcessTime)
				}
				pd["processingProgress"] = map[string]any{
					"partsTotal": strconv.FormatInt(total, 10), "partsProcessed": strconv.FormatInt(max(done, 0), 10),
					"timeLeftMs": strconv.FormatInt(max(left.Milliseconds(), 0), 10),
				}
			case ytProcessed:
				pd["processingStatus"] = ytSucceeded
			case ytFailed:
				pd["processingStatus"] = ytFailed
				pd["processingFailureReason"] = "transcodeFailed"
			case ytRejected:
				pd["processingStatus"] = ytTerminated
			}
			res["processingDetails"] = pd
		case "statistics":
			res["statistics"] = s.statistics(v, now)
		case "fileDetails":
			if owner {
				res["fileDetails"] = map[string]any{"fileSize": strconv.FormatInt(v.Bytes, 10), "fileType": "video", "container": v.ContentType}
			}
		}
	}
	return res
}

// quantumHash hashes one chunk, keeping the hash's state at every ytChunkQuantum bytes of
// it, so that a chunk cut short can take the hash back to the part that is kept. It keeps the
// last quantumStates states only: what is kept is what reached the spool, which trails what
// was hashed by at most media.CopyHashed's buffers in flight (1 MiB), so memory does not grow
// with the chunk.
type quantumHash struct {
	hash.Hash
	n      int64
	states [quantumStates][]byte // states[i % quantumStates]: after i quanta of the chunk
	saved  int64                 // quanta whose state was saved, the chunk's start included
	err    error
}

const quantumStates = 16 // 4 MiB of the chunk

func newQuantumHash(h hash.Hash) (*quantumHash, error) {
	q := &quantumHash{Hash: h}
	q.save()
	return q, q.err
}

func (q *quantumHash) save() {
	st, err := q.Hash.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil && q.err == nil {
		q.err = fmt.Errorf("%w: %v", sim.ErrSpoolFile, err)
	}
	q.states[q.saved%quantumStates] = st
	q.saved++
}

func (q *quantumHash) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		k := min(int64(len(p)), ytChunkQuantum-q.n%ytChunkQuantum)
		q.Hash.Write(p[:k])
		q.n += k
		p = p[k:]
		if q.n%ytChunkQuantum == 0 {
			q.save()
		}
	}
	return total, nil
}

// rewind sets the hash to its state after kept bytes of the chunk, a multiple of the
// quantum no larger than what was hashed.
func (q *quantumHash) rewind(kept int64) error {
	i := kept / ytChunkQuantum
	if q.err != nil || kept%ytChunkQuantum != 0 || i >= q.saved || i < q.saved-quantumStates {
		return cmp.Or(q.err, fmt.Errorf("%w: no hash state after %d bytes", sim.ErrSpoolFile, kept))
	}
	if err := q.Hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(q.states[i%quantumStates]); err != nil {
		return fmt.Errorf("%w: %v", sim.ErrSpoolFile, err)
	}
	return nil
}

// setThumbnail is thumbnails.set, with the image as the body (uploadType=media) or as the
// second part of a multipart/related body (uploadType=multipart).
func (s *ytSim) setThumbnail(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	id := q.Get("videoId")
	if id == "" {
		return ytError(400, "global", "required", "Required parameter: videoId")
	}
	var img io.Reader
	ctype := r.Header.Get("Content-Type")
	switch q.Get("uploadType") {
	case "media", "":
		img = r.Body
	case "multipart":
		mt, params, err := mime.ParseMediaType(ctype)
		if err != nil || mt != "multipart/related" || params["boundary"] == "" {
			return ytError(400, "global", "badContent", "A multipart upload needs a multipart/related body.")
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		if _, err := mr.NextPart(); err != nil { // the (empty) metadata part
			return ytError(400, "youtube.thumbnail", "mediaBodyRequired", "The request does not include the image content.")
		}
		part, err := mr.NextPart()
		if err != nil {
			return ytError(400, "youtube.thumbnail", "mediaBodyRequired", "The request does not include the image content.")
		}
		img, ctype = part, part.Header.Get("Content-Type")
	default:
		return ytError(400, "global", "invalidParameter", "Invalid value %q for uploadType: this simulator takes media or multipart.", q.Get("uploadType"))
	}
	if mt, _, _ := mime.ParseMediaType(ctype); ctype != "" && mt != "image/jpeg" && mt != "image/png" && mt != "application/octet-stream" {
		return ytError(400, "global", "badContent",
			"Media type '%s' is not supported. Valid media types: [image/jpeg, image/png, application/octet-stream]", ctype)
	}
	v, found, err := s.video(r.Context(), id, now)
	if err != nil {
		return ytInternal()
	}
	if !found {
		return ytError(404, "youtube.thumbnail", "videoNotFound", "The video that you are trying to insert a thumbnail image for cannot be found.")
	}
	if v.Account != acct.ID {
		return ytError(403, "youtube.thumbnail", "forbidden", "The authenticated user doesn't have permissions for uploading and setting custom thumbnails for this video.")
	}
	// Read at most the limit plus one byte: the image is small and never spooled.
	data, err := io.ReadAll(io.LimitReader(img, s.opt.MaxThumbnailBytes+1))
	if err != nil {
		return ytError(400, "global", "badRequest", "The request body could not be read.")
	}
	switch {
	case int64(len(data)) > s.opt.MaxThumbnailBytes:
		return ytError(413, "global", "uploadTooLarge", "The request failed because the data sent in the request is too large: the thumbnail's maximum file size is %d bytes.", s.opt.MaxThumbnailBytes)
	case len(data) == 0:
		return ytError(400, "youtube.thumbnail", "mediaBodyRequired", "The request does not include the image content.")
	case !ytLooksLikeImage(data):
		return ytError(400, "youtube.thumbnail", "invalidImage", "The provided image content is invalid.")
	}
	var e *ytErr
	err = s.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		var err error
		if e, err = s.charge(tx, acct, 50, now); err != nil || e != nil {
			return err
		}
		v, rec, _, err := sim.LoadTx[ytVideo](tx, ytKey(ytVideoKind, id))
		if err != nil {
			return err
		}
		v.Thumbnail = true
		return sim.Save(tx, rec, v)
	})
	switch {
	case err != nil:
		return ytInternal()
	case e != nil:
		return e
	}
	ytWriteJSON(w, http.StatusOK, map[string]any{
		"kind": "youtube#thumbnailSetResponse", "etag": ytEtag(), "items": []any{ytThumbnails(id, true)},
	})
	return nil
}

// ytThumbnails is a thumbnails object; a custom thumbnail adds the larger sizes.
func ytThumbnails(id string, custom bool) map[string]any {
	sizes := []struct {
		name string
		w, h int
	}{{"default", 120, 90}, {"medium", 320, 180}, {"high", 480, 360}}
	if custom {
		sizes = append(sizes, struct {
			name string
			w, h int
		}{"standard", 640, 480}, struct {
			name string
			w, h int
		}{"maxres", 1280, 720})
	}
	out := map[string]any{}
	for _, t := range sizes {
		out[t.name] = map[string]any{"url": "https://i.ytimg.com/vi/" + id + "/" + t.name + ".jpg", "width": t.w, "height": t.h}
	}
	return out
}

func ytLooksLikeImage(b []byte) bool {
	jpeg := len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF
	png := len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n"
	return jpeg || png
}

// listCategories is videoCategories.list by regionCode or id.
func (s *ytSim) listCategories(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	if strings.TrimSpace(ytParam(q, "part")) == "" {
		return ytError(400, "global", "required", "Required parameter: part")
	}
	for _, p := range strings.Split(ytParam(q, "part"), ",") {
		if p = strings.TrimSpace(p); p != "snippet" && p != "id" {
			return ytError(400, "youtube.part", "unknownPart", "%q", p)
		}
	}
	region, ids := q.Get("regionCode"), ytParam(q, "id")
	switch {
	case region == "" && ids == "":
		return ytError(400, "youtube.parameter", "missingRequiredParameter", "No filter selected. Expected one of: id, regionCode")
	case region != "" && ids != "":
		return ytError(400, "youtube.parameter", "incompatibleParameters", "The request specifies two or more parameters that cannot be used in the same request.")
	case region != "" && (len(region) != 2 || strings.ToUpper(region) != region):
		return ytError(400, "youtube.parameter", "invalidRegionCode", "The regionCode parameter specifies an invalid region code.")
	}
	if e := s.chargeCall(r.Context(), acct, 1, now); e != nil {
		return e
	}
	want := map[string]bool{}
	for _, id := range strings.Split(ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	items := []map[string]any{}
	for _, c := range ytCategories {
		if ids != "" && !want[c.id] {
			continue
		}
		items = append(items, map[string]any{
			"kind": "youtube#videoCategory", "etag": ytEtag(), "id": c.id,
			"snippet": map[string]any{"title": c.title, "assignable": c.assignable, "channelId": ytSystemChannel},
		})
	}
	ytWriteJSON(w, http.StatusOK, map[string]any{"kind": "youtube#videoCategoryListResponse", "etag": ytEtag(), "items": items})
	return nil
}

// listChannels is channels.list. Of its filters (exactly one is required) the simulator serves
// mine=true, the channel of the token's account; an account without a channel answers no
// items, as YouTube does.
func (s *ytSim) listChannels(w http.ResponseWriter, r *http.Request, acct sim.Account, q url.Values, now time.Time) *ytErr {
	if strings.TrimSpace(ytParam(q, "part")) == "" {
		return ytError(400, "global", "required", "Required parameter: part")
	}
	var parts []string
	for _, p := range strings.Split(ytParam(q, "part"), ",") {
		p = strings.TrimSpace(p)
		if !ytChannelParts[p] {
			return ytError(400, "youtube.part", "unknownPart", "%q", p)
		}
		parts = append(parts, p)
	}
	filters := 0
	for _, f := range []string{"forHandle", "forUsername", "id", "managedByMe", "mine"} {
		if q.Has(f) {
			filters++
		}
	}
	switch {
	case filters == 0:
		return ytError(400, "youtube.parameter", "missingRequiredParameter", "No filter selected. Expected one of: forHandle, forUsername, id, managedByMe, mine")
	case filters > 1:
		return ytError(400, "youtube.parameter", "incompatibleParameters", "The request specifies two or more parameters that cannot be used in the same request.")
	case !q.Has("mine"):
		return ytError(400, "global", "invalidParameter", "This simulator lists channels by mine=true only.")
	case q.Get("mine") != "true" && q.Get("mine") != "false":
		return ytError(400, "global", "invalidBoolean", "Invalid boolean value: '%s'.", q.Get("mine"))
	}
	if e := s.chargeCall(r.Context(), acct, 1, now); e != nil {
		return e
	}
	items := []map[string]any{}
	if q.Get("mine") == "true" && !s.opt.NoChannel[acct.ID] {
		ch, _, _, err := sim.Load[ytChannelState](r.Context(), s.cfg.State, ytKey(ytChannelKind, acct.ID))
		if err != nil {
			return ytInternal()
		}
		items = append(items, ytChannelResource(acct, parts, ch.Videos))
	}
	ytWriteJSON(w, http.StatusOK, map[string]any{
		"kind": "youtube#channelListResponse", "etag": ytEtag(),
		"pageInfo": map[string]int{"totalResults": len(items), "resultsPerPage": 5},
		"items":    items,
	})
	return nil
}

// ytChannelResource renders the channel of acct, which has videos processed videos, with the
// requested parts.
func ytChannelResource(acct sim.Account, parts []string, videos int) map[string]any {
	ch := ytChannelOf(acct)
	res := map[string]any{"kind": "youtube#channel", "etag": ytEtag(), "id": ch.ID}
	for _, p := range parts {
		switch p {
		case "snippet":
			thumbs := map[string]any{}
			for _, t := range []struct {
				name string
				size int
			}{{"default", 88}, {"medium", 240}, {"high", 800}} {
				thumbs[t.name] = map[string]any{
					"url":   fmt.Sprintf("https://yt3.ggpht.com/ytc/%s=s%d-c-k-c0x00ffffff-no-rj", ch.ID, t.size),
					"width": t.size, "height": t.size,
				}
			}
			res["snippet"] = map[string]any{
				"title": ch.Title, "description": "", "customUrl": ytHandle(acct, ch),
				"publishedAt": "2020-01-01T00:00:00Z", "thumbnails": thumbs,
				"localized": map[string]any{"title": ch.Title, "description": ""},
			}
		case "contentDetails":
			res["contentDetails"] = map[string]any{"relatedPlaylists": map[string]string{"likes": "LL", "uploads": "UU" + ch.ID[2:]}}
		case "statistics":
			res["statistics"] = map[string]any{"viewCount": "0", "subscriberCount": "0", "hiddenSubscriberCount": false,
				"videoCount": strconv.Itoa(videos)}
		case "status":
			res["status"] = map[string]any{"privacyStatus": "public", "isLinked": true, "longUploadsStatus": "allowed", "madeForKids": false}
		}
	}
	return res
}

// ytHandle is the "@handle" customUrl of a simulated channel: the username, lowercased, kept
// to the characters handles may have; the channel id's tail when nothing is left.
func ytHandle(acct sim.Account, ch ytChannel) string {
	var b strings.Builder
	for _, r := range strings.ToLower(acct.Username) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' || r == '-' || r == '.' {
			b.WriteRune(r)
		}
	}
	h := b.String()
	if len(h) < 3 {
		h = strings.ToLower(ch.ID[2:14])
	}
	return "@" + h
}

// ytChannelOf is the channel of a simulated account: a stable "UC…" id derived from the
// account id, titled with the username.
func ytChannelOf(acct sim.Account) ytChannel {
	sum := sha256.Sum256([]byte("youtube-channel|" + acct.ID))
	id := "UC" + ytEncode(sum[:])[:22]
	title := acct.Username
	if title == "" {
		title = acct.ID
	}
	return ytChannel{ID: id, Title: title}
}

const ytAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func ytEncode(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = ytAlphabet[c&63]
	}
	return string(out)
}

// ytRandomID returns n random characters of YouTube's id alphabet (video ids have 11).
func ytRandomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return ytEncode(b)
}

func ytEtag() string { return ytRandomID(27) }
