// Package linkedinsim is the simulator of LinkedIn's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package linkedinsim

// LinkedIn simulator: the Videos API (/rest/videos), the Posts API (/rest/posts), member
// statistics and the Comments API (see audience.go) and OpenID
// Connect userinfo (/v2/userinfo), below https://api.linkedin.com.
//
// Sources: learn.microsoft.com/linkedin/marketing/community-management/shares/videos-api,
// …/posts-api, …/little-text-format, …/shared/api-guide/versioning and
// …/consumer/integrations/self-serve/sign-in-with-linkedin-v2 (copies read through the search
// tool), and LinkedIn's answers as API users report them (error bodies quoted in public issue
// threads). What the pages leave open, and how it is decided here:
//
//   - Every /rest call needs LinkedIn-Version (YYYYMM or YYYYMM.RR) and X-Restli-Protocol-Version
//     2.0.0. A missing version answers 400 VERSION_MISSING; a version that is not active answers
//     426 NONEXISTENT_VERSION "Requested version 20240901 is not active" (LinkedIn's words). A
//     version is active from the month after its own for twelve months (on Config.Now): in April
//     2026 LinkedIn served 202504 to 202603. The months LinkedIn never released are never
//     active (neverReleased: the migrations page goes from 202511 to 202601). A missing or
//     other protocol version answers 400
//     (this simulator's wording). /v2/userinfo is unversioned and needs neither.
//   - initializeUpload takes 75 KiB to 200 MB (the Videos API pages give 75 KB and 200 MB or
//     500 MB depending on their version: the stricter of each) and answers one upload URL per
//     4 MiB part (the documented example's first part ends at byte 4194303), the last one taking
//     the rest, plus uploadToken and uploadUrlsExpireAt. Upload URLs are signed (sau=…), expire
//     after UploadURLTTL (24 h) and answer 201 with an ETag per part; a part may be sent again
//     (after a crash) and keeps an ETag of its content; a PUT whose body was cut short
//     changes nothing. Content-Type must be application/octet-stream and the body exactly the
//     part's bytes. The parts are kept as long as their URLs take bytes: a video not finalized
//     by uploadUrlsExpireAt cannot be any more (400; the pages say nothing of it).
//   - finalizeUpload needs the upload token and every part's ETag in order; a video already
//     finalized is refused (400): a client must not finalize twice. The complete upload is
//     recorded at finalizing. Processing is timed by Config.Now: Behavior.ProcessingMS (< 0:
//     5 s) after finalizing, the video is AVAILABLE, or PROCESSING_FAILED when it is not an MP4
//     of 3 s to 30 min with an aspect ratio between 1:2.4 and 2.4:1 (media.Probe), or when the
//     account's behavior is reject. processingFailureReason says why; the Videos API pages do
//     not promise that field.
//   - GET /rest/videos/{urn} takes the URN URL-encoded (Rest.li 2.0 keys: urn%3Ali%3Avideo%3A…),
//     and answers WAITING_UPLOAD before finalizing, PROCESSING, then AVAILABLE (with a
//     downloadUrl) or PROCESSING_FAILED.
//   - POST /rest/posts checks author (the token's member: urn:li:person:{id}), visibility,
//     distribution.feedDistribution, lifecycleState and content.media.id (a video of the author
//     that is AVAILABLE), and answers 201 with x-restli-id (urn:li:share:…). Commentary is little
//     text: an unescaped reserved character that starts no element (@[name](urn),
//     #word, {hashtag|\#|word}) ends the published text there, silently, as LinkedIn does. The
//     shown text may have 3000 UTF-16 units ("ShareCommentary text length (N characters) exceeded
//     the maximum allowed (3000 characters)", LinkedIn's words). The same author posting the
//     same commentary with the same media again answers 422 DUPLICATE_POST "Content is a
//     duplicate of urn:li:share:…" (LinkedIn's words). More than PostsPerDay (150) posts per
//     member and rolling day answer 429 with a DAY throttle message.
//   - Errors are LinkedIn's JSON {"status","serviceErrorCode","code","message"}: an unknown
//     token 401 INVALID_ACCESS_TOKEN (65600); call faults: unavailable → 503, auth → 401
//     EXPIRED_ACCESS_TOKEN (65602), rate_limit → 429 TOO_MANY_REQUESTS (serviceErrorCode 101,
//     "Resource level throttle limit for calls to this resource is reached.", no Retry-After:
//     LinkedIn documents none). Upload URLs take their signature, not the token: only the
//     unavailable fault applies to them.
//
// Member statistics and comments are in audience.go.
//
// Not reproduced: organization authors, captions, image and document uploads, reading posts.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"gocloud.dev/blob"

	"github.com/reelay/reelay/internal/fileperm"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// LinkedIn video statuses.
const (
	WaitingUpload    = "WAITING_UPLOAD"
	Processing       = "PROCESSING"
	Available        = "AVAILABLE"
	ProcessingFailed = "PROCESSING_FAILED"
)

const (
	linkedinPartSize       = 4 << 20 // 4,194,304 bytes, as in the documented example
	linkedinMinVideoBytes  = 75 << 10
	linkedinMaxVideoBytes  = 200_000_000
	linkedinMinDuration    = 3 * time.Second
	linkedinMaxDuration    = 30 * time.Minute
	linkedinMinAspect      = 1 / 2.4
	linkedinMaxAspect      = 2.4
	linkedinVersionMonths  = 12
	linkedinMaxThumbBytes  = 10 << 20
	linkedinCommentaryUnit = "ShareCommentary"
)

// linkedinCommentaryLimit and linkedinTitleLimit are the Posts API's limits of commentary
// (3,000) and of a video's title (200), counted in UTF-16 units, the stricter reading of an
// unstated unit. The simulator states them itself: it stands for LinkedIn, not for reelay's
// description of it.
var (
	linkedinCommentaryLimit = platform.TextLimit{Max: 3000, Unit: platform.UnitUTF16}
	linkedinTitleLimit      = platform.TextLimit{Max: 200, Unit: platform.UnitUTF16}
)

// Options tunes the simulator; the zero value is LinkedIn's documented behaviour.
type Options struct {
	// DefaultProcessing is the processing time when the account's Behavior.ProcessingMS < 0
	// (0: 5 s).
	DefaultProcessing time.Duration
	// PartSize is the size of each upload part but the last (0: 4 MiB).
	PartSize int64
	// UploadURLTTL is how long upload URLs take bytes (0: 24 h).
	UploadURLTTL time.Duration
	// PostsPerDay is the posts a member may create per rolling 24 h (0: 150).
	PostsPerDay int
}

// Video is what the simulator knows of a video (for tests).
type Video struct {
	URN       string
	Account   string
	Size      int64
	Parts     int
	Status    string
	Finalizes int
	SHA256    string
	Thumbnail bool
}

// Post is a post the simulator created (for tests).
type Post struct {
	URN        string
	Account    string
	Commentary string // as sent (little text)
	Text       string // as shown
	Truncated  bool   // an unescaped reserved character cut the text
	Title      string
	Video      string
	Visibility string
	Lifecycle  string
	// Activity is the post's activity URN (urn:li:activity:…), which its comments' URNs name.
	Activity string
	// Created is when the post was created, on the simulator's clock: its audience counts from
	// then.
	Created time.Time
}

// Sim simulates LinkedIn's Videos and Posts APIs. It implements http.Handler.
//
// Its videos, uploaded parts, posts, comments and daily caps are records of Config.State, and
// the bytes of the parts blobs of Config.Blobs, so that any process serving the simulator goes
// on with them.
type Sim struct {
	cfg      sim.Config
	opts     Options
	basePath string
}

// The kinds of the LinkedIn simulator's records.
const (
	// linkedinVideoKind is a video (linkedinVideo), by the id its URN and its upload URLs
	// share, kept until retention.
	linkedinVideoKind = "video"
	// linkedinUploadKind is what arrived of a video's parts (linkedinUpload), under the
	// video's id, with the parts' blobs. It ends with the upload URLs (uploadUrlsExpireAt, see
	// the file comment), whose bytes are of no use after, or once the video is finalized.
	linkedinUploadKind = "upload"
	// linkedinPostKind is a post (linkedinPost) by its share URN, with the comments members
	// wrote on it, kept until retention.
	linkedinPostKind = "post"
	// linkedinActivityKind names the share URN (a string) of the post an activity URN is of.
	linkedinActivityKind = "activity"
	// linkedinContentKind names the share URN (a string) of the post an author made of one
	// commentary and one video, by their hash: the next is a DUPLICATE_POST.
	linkedinContentKind = "content"
	// linkedinDailyKind is a member's posts of the last 24 hours ([]time.Time), for the daily
	// cap.
	linkedinDailyKind = "daily_posts"
)

func linkedinKey(kind, id string) sim.Key {
	return sim.Key{Platform: platform.LinkedIn, Kind: kind, ID: id}
}

// linkedinVideo is what the simulator keeps of a video.
type linkedinVideo struct {
	ID      string      `json:"id"`
	Account sim.Account `json:"account"`
	Created time.Time   `json:"created"`
	Size    int64       `json:"size"`
	// Parts are the first and last byte of each part.
	Parts [][2]int64 `json:"parts"`
	// SigSHA and TokenSHA are the SHA-256 of the upload URLs' signature (sau) and of the
	// uploadToken: both are credentials.
	SigSHA    []byte    `json:"sig_sha"`
	TokenSHA  []byte    `json:"token_sha"`
	Expires   time.Time `json:"expires"` // uploadUrlsExpireAt
	Thumbnail bool      `json:"thumbnail,omitempty"`
	ThumbDone bool      `json:"thumb_done,omitempty"`

	Finalizes   int           `json:"finalizes,omitempty"`
	FinalizedAt time.Time     `json:"finalized_at,omitzero"`
	Processing  time.Duration `json:"processing,omitempty"`
	SHA         string        `json:"sha,omitempty"`
	// Verdict is the processing failure reason, "" when the video passes; Duration, Width and
	// Height what media.Probe found.
	Verdict  string        `json:"verdict,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	Width    int           `json:"width,omitempty"`
	Height   int           `json:"height,omitempty"`
}

// urn is the video's URN: its id is the one its upload URLs name.
func (v linkedinVideo) urn() string { return "urn:li:video:" + v.ID }

// linkedinUpload is what arrived of a video's parts, by index.
type linkedinUpload struct {
	Parts []linkedinPart `json:"parts"`
}

// linkedinPart is an uploaded part: its ETag and the blob holding its bytes ("" for both until
// it arrives). A part sent again is a new blob.
type linkedinPart struct {
	ETag string `json:"etag,omitempty"`
	Blob string `json:"blob,omitempty"`
}

// linkedinPost is what the simulator keeps of a post.
type linkedinPost struct {
	URN        string    `json:"urn"`
	Account    string    `json:"account"`
	Commentary string    `json:"commentary"`
	Text       string    `json:"text"`
	Truncated  bool      `json:"truncated,omitempty"`
	Title      string    `json:"title,omitempty"`
	Video      string    `json:"video"`
	Visibility string    `json:"visibility"`
	Lifecycle  string    `json:"lifecycle"`
	Activity   string    `json:"activity"`
	Created    time.Time `json:"created"`
	// Comments are the comments members wrote on the post through the API, oldest first.
	Comments []linkedinComment `json:"comments,omitempty"`
}

// report is what Posts answers of p.
func (p linkedinPost) report() Post {
	return Post{URN: p.URN, Account: p.Account, Commentary: p.Commentary, Text: p.Text, Truncated: p.Truncated,
		Title: p.Title, Video: p.Video, Visibility: p.Visibility, Lifecycle: p.Lifecycle, Activity: p.Activity, Created: p.Created}
}

// New returns the LinkedIn simulator with LinkedIn's documented behaviour.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the LinkedIn simulator with options.
func NewSim(cfg sim.Config, opts Options) *Sim {
	cfg.Normalize()
	if opts.DefaultProcessing <= 0 {
		opts.DefaultProcessing = 5 * time.Second
	}
	if opts.PartSize <= 0 {
		opts.PartSize = linkedinPartSize
	}
	if opts.UploadURLTTL <= 0 {
		opts.UploadURLTTL = 24 * time.Hour
	}
	if opts.PostsPerDay <= 0 {
		opts.PostsPerDay = 150
	}
	basePath := ""
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		basePath = strings.TrimRight(u.Path, "/")
	}
	return &Sim{cfg: cfg, opts: opts, basePath: basePath}
}

// Recorder returns the record of what the simulator received.
func (l *Sim) Recorder() *sim.Recorder { return l.cfg.Recorder }

// Video reports what the simulator knows of a video (an error of its State panics: it is for
// tests).
func (l *Sim) Video(urn string) (Video, bool) {
	v, found, err := l.video(context.Background(), urn)
	if err != nil {
		panic(err)
	}
	if !found {
		return Video{}, false
	}
	return l.reportVideo(v), true
}

// video reads the video a URN names.
func (l *Sim) video(ctx context.Context, urn string) (linkedinVideo, bool, error) {
	id, ok := strings.CutPrefix(urn, "urn:li:video:")
	if !ok {
		return linkedinVideo{}, false, nil
	}
	v, _, found, err := sim.Load[linkedinVideo](ctx, l.cfg.State, linkedinKey(linkedinVideoKind, id))
	return v, found, err
}

func (l *Sim) reportVideo(v linkedinVideo) Video {
	return Video{URN: v.urn(), Account: v.Account.ID, Size: v.Size, Parts: len(v.Parts),
		Status: l.statusOf(v, l.cfg.Now()), Finalizes: v.Finalizes, SHA256: v.SHA, Thumbnail: v.ThumbDone}
}

// Videos lists the videos of an account, in creation order (an error of its State panics).
func (l *Sim) Videos(account string) []Video {
	videos, err := sim.ListJSON[linkedinVideo](context.Background(), l.cfg.State, linkedinKey(linkedinVideoKind, ""), account)
	if err != nil {
		panic(err)
	}
	out := make([]Video, len(videos))
	for i, v := range videos {
		out[i] = l.reportVideo(v)
	}
	return out
}

// Posts lists the posts created, oldest first (an error of its State panics).
func (l *Sim) Posts() []Post {
	posts, err := sim.ListJSON[linkedinPost](context.Background(), l.cfg.State, linkedinKey(linkedinPostKind, ""), "")
	if err != nil {
		panic(err)
	}
	out := make([]Post, len(posts))
	for i, p := range posts {
		out[i] = p.report()
	}
	return out
}

// ServeHTTP implements http.Handler. Paths are the platform's, below Config.BaseURL, with or
// without BaseURL's path in front.
func (l *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, raw := r.URL.Path, r.URL.EscapedPath()
	if l.basePath != "" {
		if rest, ok := strings.CutPrefix(path, l.basePath); ok && (rest == "" || rest[0] == '/') {
			path = rest
			raw = strings.TrimPrefix(raw, l.basePath)
		}
	}
	switch {
	case path == "/v2/userinfo":
		l.userinfo(w, r)
	case path == "/rest/videos":
		l.rest(w, r, http.MethodPost, l.videoAction)
	case strings.HasPrefix(path, "/rest/videos/"):
		l.rest(w, r, http.MethodGet, func(w http.ResponseWriter, r *http.Request, acc sim.Account, version string) {
			l.getVideo(w, r, acc, strings.TrimPrefix(raw, "/rest/videos/"))
		})
	case path == "/rest/posts":
		l.rest(w, r, http.MethodPost, l.createPost)
	case path == "/rest/memberCreatorPostAnalytics":
		l.rest(w, r, http.MethodGet, l.postAnalytics)
	case path == "/rest/memberCreatorVideoAnalytics":
		l.rest(w, r, http.MethodGet, l.videoAnalytics)
	case strings.HasPrefix(path, "/rest/socialActions/") && strings.HasSuffix(path, "/comments"):
		l.socialActions(w, r, strings.TrimSuffix(strings.TrimPrefix(raw, "/rest/socialActions/"), "/comments"))
	case strings.HasPrefix(path, "/dms-uploads/"):
		l.upload(w, r, strings.TrimPrefix(path, "/dms-uploads/"))
	default:
		linkedinError(w, http.StatusNotFound, 0, "", "No virtual resource found")
	}
}

// auth resolves the bearer token; it answers 401 itself when it cannot.
func (l *Sim) auth(w http.ResponseWriter, r *http.Request) (sim.Account, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	var acc sim.Account
	if ok && token != "" && l.cfg.Accounts != nil {
		acc, ok = l.cfg.Accounts.Resolve(r.Context(), token)
	} else {
		ok = false
	}
	if !ok {
		linkedinError(w, http.StatusUnauthorized, 65600, "INVALID_ACCESS_TOKEN", "Invalid access token")
		return sim.Account{}, false
	}
	return acc, true
}

// linkedinFault renders a call fault in LinkedIn's error shape; it reports whether it answered.
func linkedinFault(w http.ResponseWriter, fault string) bool {
	switch fault {
	case sim.FailUnavailable:
		linkedinError(w, http.StatusServiceUnavailable, 0, "", "Service Unavailable")
	case sim.FailAuth:
		linkedinError(w, http.StatusUnauthorized, 65602, "EXPIRED_ACCESS_TOKEN", "The token used in the request has expired")
	case sim.FailRateLimit:
		linkedinError(w, http.StatusTooManyRequests, 101, "TOO_MANY_REQUESTS", "Resource level throttle limit for calls to this resource is reached.")
	default:
		return false
	}
	return true
}

// neverReleased are the months in which LinkedIn released no version: a LinkedIn-Version
// naming one answers 426 like a sunset one. Source: the version table of
// https://learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations, which has no
// 202512 between 202511 and 202601.
var neverReleased = map[string]bool{"202512": true}

var linkedinVersionRE = regexp.MustCompile(`^([0-9]{4})([0-9]{2})(?:\.([0-9]{2}))?$`)

// checkVersion applies LinkedIn's versioning; it answers the refusal itself.
func (l *Sim) checkVersion(w http.ResponseWriter, v string) bool {
	if v == "" {
		linkedinError(w, http.StatusBadRequest, 0, "VERSION_MISSING",
			"A version must be present. Please specify a version by adding the LinkedIn-Version header.")
		return false
	}
	m := linkedinVersionRE.FindStringSubmatch(v)
	shown := v
	if m != nil {
		patch := m[3]
		if patch == "" {
			patch = "01"
		}
		shown = m[1] + m[2] + patch
		year, _ := strconv.Atoi(m[1])
		month, _ := strconv.Atoi(m[2])
		now := l.cfg.Now().UTC()
		age := (now.Year()-year)*12 + int(now.Month()) - month
		if month >= 1 && month <= 12 && age >= 1 && age <= linkedinVersionMonths && !neverReleased[m[1]+m[2]] {
			return true
		}
	}
	linkedinError(w, http.StatusUpgradeRequired, 0, "NONEXISTENT_VERSION", "Requested version "+shown+" is not active")
	return false
}

// rest does what every /rest endpoint shares: method, token, versions and the account's faults.
func (l *Sim) rest(w http.ResponseWriter, r *http.Request, method string,
	h func(http.ResponseWriter, *http.Request, sim.Account, string)) {
	if r.Method != method {
		w.Header().Set("Allow", method)
		linkedinError(w, http.StatusMethodNotAllowed, 0, "", "Method "+r.Method+" is not allowed on this resource")
		return
	}
	acc, ok := l.auth(w, r)
	if !ok {
		return
	}
	version := r.Header.Get("LinkedIn-Version")
	if !l.checkVersion(w, version) {
		return
	}
	if p := r.Header.Get("X-Restli-Protocol-Version"); p != "2.0.0" {
		linkedinError(w, http.StatusBadRequest, 0, "",
			"X-Restli-Protocol-Version must be 2.0.0 on versioned APIs (got "+strconv.Quote(p)+")")
		return
	}
	if linkedinFault(w, sim.CallFault(acc.Behavior, l.cfg.Rand)) {
		return
	}
	h(w, r, acc, version)
}

func (l *Sim) userinfo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		linkedinError(w, http.StatusMethodNotAllowed, 0, "", "Method "+r.Method+" is not allowed on this resource")
		return
	}
	acc, ok := l.auth(w, r)
	if !ok || linkedinFault(w, sim.CallFault(acc.Behavior, l.cfg.Rand)) {
		return
	}
	name := acc.Username
	if name == "" {
		name = acc.ID
	}
	given, family, _ := strings.Cut(name, " ")
	writeLinkedInJSON(w, http.StatusOK, map[string]any{
		"sub":            acc.ID,
		"name":           name,
		"given_name":     given,
		"family_name":    family,
		"picture":        l.cfg.BaseURL + "/media/profile-displayphoto/" + url.PathEscape(acc.ID) + ".jpg",
		"locale":         map[string]string{"country": "US", "language": "en"},
		"email":          strings.ToLower(acc.ID) + "@members.sandbox.invalid",
		"email_verified": true,
	})
}

// decodeLinkedInJSON reads a JSON request body strictly enough: Content-Type and syntax.
func decodeLinkedInJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		linkedinError(w, http.StatusBadRequest, 0, "", "Content-Type must be application/json")
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		linkedinError(w, http.StatusBadRequest, 0, "", "The request body could not be read")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		linkedinError(w, http.StatusBadRequest, 0, "", "Malformed request body: "+err.Error())
		return false
	}
	return true
}

func (l *Sim) videoAction(w http.ResponseWriter, r *http.Request, acc sim.Account, version string) {
	switch r.URL.Query().Get("action") {
	case "initializeUpload":
		l.initializeUpload(w, r, acc)
	case "finalizeUpload":
		l.finalizeUpload(w, r, acc)
	default:
		linkedinError(w, http.StatusBadRequest, 0, "", "Unsupported action "+strconv.Quote(r.URL.Query().Get("action")))
	}
}

func (l *Sim) forbidden(w http.ResponseWriter, what string) {
	linkedinError(w, http.StatusForbidden, 100, "ACCESS_DENIED", "Not enough permissions to access: "+what)
}

// linkedinInternal answers a failure of the simulator's own (its State or blob storage) as
// LinkedIn answers its internal errors.
func linkedinInternal(w http.ResponseWriter) {
	linkedinError(w, http.StatusInternalServerError, 0, "", "Internal Server Error")
}

func (l *Sim) initializeUpload(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	var req struct {
		InitializeUploadRequest *struct {
			Owner           string `json:"owner"`
			FileSizeBytes   *int64 `json:"fileSizeBytes"`
			UploadCaptions  bool   `json:"uploadCaptions"`
			UploadThumbnail bool   `json:"uploadThumbnail"`
		} `json:"initializeUploadRequest"`
	}
	if !decodeLinkedInJSON(w, r, &req) {
		return
	}
	in := req.InitializeUploadRequest
	if in == nil || in.Owner == "" || in.FileSizeBytes == nil {
		linkedinError(w, http.StatusBadRequest, 0, "", "initializeUploadRequest with owner and fileSizeBytes is required")
		return
	}
	if in.Owner != "urn:li:person:"+acc.ID {
		l.forbidden(w, "videos.initializeUpload for owner "+in.Owner)
		return
	}
	size := *in.FileSizeBytes
	if size < linkedinMinVideoBytes || size > linkedinMaxVideoBytes {
		linkedinError(w, http.StatusBadRequest, 0, "",
			fmt.Sprintf("fileSizeBytes %d is outside the allowed range %d to %d", size, linkedinMinVideoBytes, linkedinMaxVideoBytes))
		return
	}
	if in.UploadCaptions {
		linkedinError(w, http.StatusBadRequest, 0, "", "uploadCaptions is not supported by this simulator")
		return
	}
	now := l.cfg.Now()
	sig, token := sim.RandomHex(16), sim.RandomHex(12)
	sigSHA, tokenSHA := sha256.Sum256([]byte(sig)), sha256.Sum256([]byte(token))
	v := linkedinVideo{
		ID: "C4E05AQ" + strings.ToUpper(sim.RandomHex(6)) + "-" + sim.RandomHex(4), Account: acc, Created: now, Size: size,
		SigSHA: sigSHA[:], TokenSHA: tokenSHA[:], Expires: now.Add(l.opts.UploadURLTTL), Thumbnail: in.UploadThumbnail,
	}
	for first := int64(0); first < size; first += l.opts.PartSize {
		v.Parts = append(v.Parts, [2]int64{first, min(first+l.opts.PartSize, size) - 1})
	}
	err := l.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		if err := sim.Save(tx, sim.Record{Key: linkedinKey(linkedinVideoKind, v.ID), Account: acc.ID}, v); err != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: linkedinKey(linkedinUploadKind, v.ID), Account: acc.ID, Expires: v.Expires, Blobs: true},
			linkedinUpload{Parts: make([]linkedinPart, len(v.Parts))})
	})
	if err != nil {
		linkedinInternal(w)
		return
	}

	ins := make([]map[string]any, len(v.Parts))
	for i, p := range v.Parts {
		ins[i] = map[string]any{
			"uploadUrl": l.cfg.BaseURL + "/dms-uploads/sp/v2/" + v.ID + "/uploadedVideo?part=" + strconv.Itoa(i) + "&sau=" + sig,
			"firstByte": p[0],
			"lastByte":  p[1],
		}
	}
	value := map[string]any{
		"uploadUrlsExpireAt": v.Expires.UnixMilli(),
		"video":              v.urn(),
		"uploadInstructions": ins,
		"uploadToken":        token,
	}
	if v.Thumbnail {
		value["thumbnailUploadUrl"] = l.cfg.BaseURL + "/dms-uploads/sp/v2/" + v.ID + "/uploadedThumbnail?sau=" + sig
	}
	writeLinkedInJSON(w, http.StatusOK, map[string]any{"value": value})
}

// upload serves PUT on the upload URLs: video parts and thumbnails.
func (l *Sim) upload(w http.ResponseWriter, r *http.Request, rest string) {
	defer sim.Drain(r.Body)
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPut)
		sim.UploadError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	id, kind, ok := strings.Cut(strings.TrimPrefix(rest, "sp/v2/"), "/")
	var v linkedinVideo
	if ok {
		var err error
		v, _, ok, err = sim.Load[linkedinVideo](r.Context(), l.cfg.State, linkedinKey(linkedinVideoKind, id))
		if err != nil {
			sim.UploadError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
	}
	sig := sha256.Sum256([]byte(r.URL.Query().Get("sau")))
	if !ok || subtle.ConstantTimeCompare(sig[:], v.SigSHA) != 1 {
		sim.UploadError(w, http.StatusForbidden, "Signature verification failed")
		return
	}
	if fault := sim.CallFault(v.Account.Behavior, l.cfg.Rand); fault == sim.FailUnavailable {
		sim.UploadError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	if !l.cfg.Now().Before(v.Expires) {
		sim.UploadError(w, http.StatusForbidden, "The upload URL has expired")
		return
	}
	switch kind {
	case "uploadedVideo":
		l.uploadPart(w, r, v)
	case "uploadedThumbnail":
		l.uploadThumbnail(w, r, v)
	default:
		sim.UploadError(w, http.StatusNotFound, "Unknown upload")
	}
}

var (
	// errLinkedInFinalized: the video was finalized (by another request meanwhile).
	errLinkedInFinalized = errors.New("the upload was already finalized")
	// errLinkedInPartsGone: the upload URLs expired, and the parts' bytes with them.
	errLinkedInPartsGone = errors.New("the upload's parts are gone")
	// errLinkedInPartsChanged: a part was sent again with other bytes while finalizing read them.
	errLinkedInPartsChanged = errors.New("a part changed while the upload was finalized")
)

// uploadPart receives one part whole, keeps its bytes as a new blob and names that blob, and
// the part's ETag, in the upload's record; the blob of the part it replaces, if it was sent
// before, is deleted once the record no longer names it.
func (l *Sim) uploadPart(w http.ResponseWriter, r *http.Request, v linkedinVideo) {
	i, err := strconv.Atoi(r.URL.Query().Get("part"))
	if err != nil || i < 0 || i >= len(v.Parts) {
		sim.UploadError(w, http.StatusNotFound, "Unknown upload part")
		return
	}
	first, last := v.Parts[i][0], v.Parts[i][1]
	n := last - first + 1
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/octet-stream" {
		sim.UploadError(w, http.StatusBadRequest, "Content-Type must be application/octet-stream")
		return
	}
	if r.ContentLength != n {
		sim.UploadError(w, http.StatusBadRequest, fmt.Sprintf("Content-Length must be %d for bytes %d-%d", n, first, last))
		return
	}
	// The part is received whole before it touches the upload, as a storage service commits
	// a PUT only once its body is complete. A PUT cut short (its client gave up) is often
	// still being read when the client has already sent the part again; were it kept, it
	// would replace the bytes of that later, complete copy and drop its ETag, and finalizing
	// would refuse an upload the client rightly holds every ETag of. The part is at most
	// PartSize, so memory stays bounded by the parts in flight.
	body := make([]byte, n)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		sim.UploadError(w, http.StatusBadRequest, "The request body is shorter than Content-Length")
		return
	}
	sum := sha256.Sum256(body)
	etag := "/" + hex.EncodeToString(sum[:18]) + "/"
	if v.Finalizes > 0 {
		sim.UploadError(w, http.StatusBadRequest, "The upload was already finalized")
		return
	}

	ctx := r.Context()
	upKey := linkedinKey(linkedinUploadKind, v.ID)
	blobKey := fmt.Sprintf("%spart-%05d-%s", sim.BlobPrefix(upKey), i, sim.RandomHex(6))
	if err := l.cfg.Blobs.WriteAll(ctx, blobKey, body, &blob.WriterOptions{ContentType: "application/octet-stream", BeforeWrite: fileperm.BeforeWrite}); err != nil {
		sim.UploadError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	var replaced string
	err = l.cfg.State.Update(ctx, func(tx sim.Tx) error {
		cur, _, _, err := sim.LoadTx[linkedinVideo](tx, linkedinKey(linkedinVideoKind, v.ID))
		if err != nil {
			return err
		}
		if cur.Finalizes > 0 {
			return errLinkedInFinalized
		}
		up, rec, found, err := sim.LoadTx[linkedinUpload](tx, upKey)
		if err != nil {
			return err
		}
		if !found || i >= len(up.Parts) {
			return errLinkedInPartsGone
		}
		replaced = up.Parts[i].Blob
		up.Parts[i] = linkedinPart{ETag: etag, Blob: blobKey}
		return sim.Save(tx, rec, up)
	})
	// What is left behind should a delete fail is deleted by housekeeping with the upload's
	// record.
	keep := context.WithoutCancel(ctx)
	if err != nil {
		_ = l.cfg.Blobs.Delete(keep, blobKey)
		switch {
		case errors.Is(err, errLinkedInFinalized):
			sim.UploadError(w, http.StatusBadRequest, "The upload was already finalized")
		case errors.Is(err, errLinkedInPartsGone):
			sim.UploadError(w, http.StatusForbidden, "The upload URL has expired")
		default:
			sim.UploadError(w, http.StatusInternalServerError, "Internal Server Error")
		}
		return
	}
	if replaced != "" {
		_ = l.cfg.Blobs.Delete(keep, replaced)
	}
	w.Header().Set("ETag", etag)
	w.WriteHeader(http.StatusCreated)
}

func (l *Sim) uploadThumbnail(w http.ResponseWriter, r *http.Request, v linkedinVideo) {
	if !v.Thumbnail {
		sim.UploadError(w, http.StatusNotFound, "No thumbnail upload was requested for this video")
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "image/jpeg" && mt != "image/png" && mt != "application/octet-stream") {
		sim.UploadError(w, http.StatusBadRequest, "Content-Type must be image/jpeg, image/png or application/octet-stream")
		return
	}
	head := make([]byte, 8)
	k, _ := io.ReadFull(r.Body, head)
	head = head[:k]
	rest, err := io.Copy(io.Discard, io.LimitReader(r.Body, linkedinMaxThumbBytes))
	if err != nil {
		sim.UploadError(w, http.StatusBadRequest, "The request body could not be read")
		return
	}
	isJPEG := bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF})
	isPNG := bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n"))
	if !isJPEG && !isPNG || int64(k)+rest > linkedinMaxThumbBytes {
		sim.UploadError(w, http.StatusBadRequest, "The thumbnail must be a JPEG or PNG image of at most 10 MB")
		return
	}
	err = l.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		cur, rec, found, err := sim.LoadTx[linkedinVideo](tx, linkedinKey(linkedinVideoKind, v.ID))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("sim: linkedin video %s is gone", v.ID)
		}
		cur.ThumbDone = true
		return sim.Save(tx, rec, cur)
	})
	if err != nil {
		sim.UploadError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	w.WriteHeader(http.StatusCreated)
}

// finalizeUpload checks the request against the upload's parts, reads the parts back from
// their blobs to check the video, and in one transaction finalizes the video, records the
// upload and ends the upload's record; the parts' blobs are deleted after.
func (l *Sim) finalizeUpload(w http.ResponseWriter, r *http.Request, acc sim.Account) {
	var req struct {
		FinalizeUploadRequest *struct {
			Video           string   `json:"video"`
			UploadToken     *string  `json:"uploadToken"`
			UploadedPartIDs []string `json:"uploadedPartIds"`
		} `json:"finalizeUploadRequest"`
	}
	if !decodeLinkedInJSON(w, r, &req) {
		return
	}
	in := req.FinalizeUploadRequest
	if in == nil || in.Video == "" || in.UploadToken == nil || in.UploadedPartIDs == nil {
		linkedinError(w, http.StatusBadRequest, 0, "", "finalizeUploadRequest with video, uploadToken and uploadedPartIds is required")
		return
	}
	ctx := r.Context()
	v, found, err := l.video(ctx, in.Video)
	if err != nil {
		linkedinInternal(w)
		return
	}
	if !found {
		linkedinError(w, http.StatusNotFound, 0, "", "Video "+in.Video+" does not exist")
		return
	}
	if v.Account.ID != acc.ID {
		l.forbidden(w, "videos.finalizeUpload for "+in.Video)
		return
	}
	if token := sha256.Sum256([]byte(*in.UploadToken)); subtle.ConstantTimeCompare(token[:], v.TokenSHA) != 1 {
		linkedinError(w, http.StatusBadRequest, 0, "", "uploadToken does not match the upload of "+in.Video)
		return
	}
	if v.Finalizes > 0 {
		linkedinError(w, http.StatusBadRequest, 0, "", "The upload of "+in.Video+" was already finalized")
		return
	}
	upKey := linkedinKey(linkedinUploadKind, v.ID)
	up, _, found, err := sim.Load[linkedinUpload](ctx, l.cfg.State, upKey)
	if err != nil {
		linkedinInternal(w)
		return
	}
	partsError := func(missing []int) {
		linkedinError(w, http.StatusBadRequest, 0, "", fmt.Sprintf(
			"uploadedPartIds must be the ETags of all %d parts in order (parts not uploaded: %v)", len(v.Parts), missing))
	}
	if !found || len(up.Parts) != len(v.Parts) {
		linkedinError(w, http.StatusBadRequest, 0, "", "The upload URLs of "+in.Video+" expired before it was finalized")
		return
	}
	var missing []int
	bad := len(in.UploadedPartIDs) != len(up.Parts)
	for i, p := range up.Parts {
		if p.ETag == "" {
			missing = append(missing, i+1)
		} else if !bad && in.UploadedPartIDs[i] != p.ETag {
			bad = true
		}
	}
	if len(missing) > 0 || bad {
		partsError(missing)
		return
	}

	// The parts' blobs, in order, are the video.
	parts := sim.SpoolState{Size: v.Size, Whole: new(int64)}
	for i, p := range up.Parts {
		parts.Chunks = append(parts.Chunks, sim.SpoolChunk{Key: p.Blob, Len: v.Parts[i][1] - v.Parts[i][0] + 1})
	}
	sp := sim.ResumeSpool(ctx, l.cfg.Blobs, parts, "reelay-linkedin-sim-*.upload")
	defer sp.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, io.NewSectionReader(sp, 0, v.Size), make([]byte, 1<<20)); err != nil {
		linkedinInternal(w)
		return
	}
	sha := hex.EncodeToString(h.Sum(nil))
	verdict, dur, width, height := checkLinkedInVideo(sp, v.Size)
	if v.Account.Behavior.Fail == sim.FailReject && verdict == "" {
		verdict = "The video could not be processed: its format is not supported"
	}
	processing := l.opts.DefaultProcessing
	if ms := v.Account.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	now := l.cfg.Now()
	err = l.cfg.State.Update(ctx, func(tx sim.Tx) error {
		cur, rec, found, err := sim.LoadTx[linkedinVideo](tx, linkedinKey(linkedinVideoKind, v.ID))
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("sim: linkedin video %s is gone", v.ID)
		}
		if cur.Finalizes > 0 {
			return errLinkedInFinalized
		}
		got, _, found, err := sim.LoadTx[linkedinUpload](tx, upKey)
		if err != nil {
			return err
		}
		if !found || !slices.EqualFunc(got.Parts, up.Parts, func(a, b linkedinPart) bool { return a.ETag == b.ETag }) {
			return errLinkedInPartsChanged
		}
		cur.Finalizes++
		cur.FinalizedAt, cur.Processing = now, processing
		cur.SHA, cur.Verdict, cur.Duration, cur.Width, cur.Height = sha, verdict, dur, width, height
		if err := sim.RecordTx(tx, platform.LinkedIn, sim.Upload{Account: acc.ID, Bytes: v.Size, SHA256: sha}); err != nil {
			return err
		}
		if err := tx.Delete(upKey); err != nil {
			return err
		}
		return sim.Save(tx, rec, cur)
	})
	switch {
	case errors.Is(err, errLinkedInFinalized):
		linkedinError(w, http.StatusBadRequest, 0, "", "The upload of "+in.Video+" was already finalized")
		return
	case errors.Is(err, errLinkedInPartsChanged):
		partsError(nil)
		return
	case err != nil:
		linkedinInternal(w)
		return
	}
	// The parts are of no use once the video is checked; housekeeping deletes them with the
	// upload's record should this fail.
	_ = sim.DeleteBlobs(context.WithoutCancel(ctx), l.cfg.Blobs, upKey)
	w.WriteHeader(http.StatusOK)
}

// checkLinkedInVideo applies the Videos API's video specifications; it returns the processing
// failure reason ("" when the video passes) and what it learned.
func checkLinkedInVideo(f io.ReaderAt, size int64) (reason string, dur time.Duration, w, h int) {
	info, err := media.Probe(f, size)
	if err != nil || info.Kind.Name != "mp4" {
		return "The video format is not supported: LinkedIn takes MP4", 0, 0, 0
	}
	// LinkedIn's video ad specifications (linkedin.com/help/lms/answer/a424737), for videos
	// that go through this same Videos API: "Codec format: H.264 or VP8". HEVC is refused.
	if info.VideoCodec != "h264" && info.VideoCodec != "vp8" {
		return fmt.Sprintf("The video codec %q is not supported: LinkedIn takes H.264 or VP8", info.VideoCodec), info.Duration, info.Width, info.Height
	}
	if info.Duration < linkedinMinDuration || info.Duration > linkedinMaxDuration {
		return fmt.Sprintf("The video lasts %s: LinkedIn takes 3 seconds to 30 minutes", info.Duration), info.Duration, info.Width, info.Height
	}
	if info.Width <= 0 || info.Height <= 0 {
		return "The video has no picture size", info.Duration, 0, 0
	}
	if ar := float64(info.Width) / float64(info.Height); ar < linkedinMinAspect-1e-9 || ar > linkedinMaxAspect+1e-9 {
		return fmt.Sprintf("The aspect ratio %dx%d is outside 1:2.4 to 2.4:1", info.Width, info.Height), info.Duration, info.Width, info.Height
	}
	return "", info.Duration, info.Width, info.Height
}

// statusOf is a video's status at now.
func (l *Sim) statusOf(v linkedinVideo, now time.Time) string {
	switch {
	case v.Finalizes == 0:
		return WaitingUpload
	case now.Before(v.FinalizedAt.Add(v.Processing)):
		return Processing
	case v.Verdict != "":
		return ProcessingFailed
	}
	return Available
}

func (l *Sim) getVideo(w http.ResponseWriter, r *http.Request, acc sim.Account, rawKey string) {
	key, err := url.PathUnescape(rawKey)
	if err != nil || !strings.HasPrefix(key, "urn:li:video:") || strings.Contains(rawKey, ":") {
		linkedinError(w, http.StatusBadRequest, 0, "",
			"Invalid key "+strconv.Quote(rawKey)+": a video URN must be URL-encoded (urn%3Ali%3Avideo%3A...)")
		return
	}
	v, found, err := l.video(r.Context(), key)
	switch {
	case err != nil:
		linkedinInternal(w)
		return
	case !found:
		linkedinError(w, http.StatusNotFound, 0, "", "Video "+key+" does not exist")
		return
	case v.Account.ID != acc.ID:
		linkedinError(w, http.StatusForbidden, 0, "", "Accessing this video resource is forbidden. Please check your permissions for this resource")
		return
	}
	now := l.cfg.Now()
	status := l.statusOf(v, now)
	out := map[string]any{"id": v.urn(), "owner": "urn:li:person:" + v.Account.ID, "status": status}
	switch status {
	case Available:
		out["duration"] = v.Duration.Milliseconds()
		out["aspectRatioWidth"] = float64(v.Width)
		out["aspectRatioHeight"] = float64(v.Height)
		out["downloadUrl"] = l.cfg.BaseURL + "/dms/playlist/" + v.ID + ".mp4"
		out["downloadUrlExpiresAt"] = now.Add(time.Hour).UnixMilli()
	case ProcessingFailed:
		out["processingFailureReason"] = v.Verdict
	}
	writeLinkedInJSON(w, http.StatusOK, out)
}

type linkedinPostRequest struct {
	Author       *string `json:"author"`
	Commentary   *string `json:"commentary"`
	Visibility   *string `json:"visibility"`
	Distribution *struct {
		FeedDistribution               string   `json:"feedDistribution"`
		TargetEntities                 []string `json:"targetEntities"`
		ThirdPartyDistributionChannels []string `json:"thirdPartyDistributionChannels"`
	} `json:"distribution"`
	Content *struct {
		Media *struct {
			Title string `json:"title"`
			ID    string `json:"id"`
		} `json:"media"`
	} `json:"content"`
	LifecycleState            *string `json:"lifecycleState"`
	IsReshareDisabledByAuthor bool    `json:"isReshareDisabledByAuthor"`
}

func (l *Sim) createPost(w http.ResponseWriter, r *http.Request, acc sim.Account, version string) {
	var req linkedinPostRequest
	if !decodeLinkedInJSON(w, r, &req) {
		return
	}
	switch {
	case req.Author == nil || req.Visibility == nil || req.Distribution == nil || req.LifecycleState == nil:
		linkedinInputError(w, http.StatusUnprocessableEntity, "MISSING_FIELD", "Field is required",
			"author, visibility, distribution and lifecycleState are required")
		return
	case *req.Visibility != "PUBLIC" && *req.Visibility != "CONNECTIONS" && *req.Visibility != "LOGGED_IN" && *req.Visibility != "CONTAINER":
		linkedinInputError(w, http.StatusUnprocessableEntity, "INVALID_ENUM_VALUE", "Invalid enum value", "visibility "+strconv.Quote(*req.Visibility)+" is not one of PUBLIC, CONNECTIONS, LOGGED_IN, CONTAINER")
		return
	case req.Distribution.FeedDistribution != "MAIN_FEED" && req.Distribution.FeedDistribution != "NONE":
		linkedinInputError(w, http.StatusUnprocessableEntity, "INVALID_ENUM_VALUE", "Invalid enum value", "distribution.feedDistribution must be MAIN_FEED or NONE")
		return
	case *req.LifecycleState != "PUBLISHED" && *req.LifecycleState != "DRAFT":
		linkedinInputError(w, http.StatusUnprocessableEntity, "INVALID_ENUM_VALUE", "Invalid enum value", "lifecycleState must be PUBLISHED or DRAFT")
		return
	}
	if *req.Author != "urn:li:person:"+acc.ID {
		l.forbidden(w, "partnerApiPostsExternal.CREATE."+version)
		return
	}
	if req.Content == nil || req.Content.Media == nil || req.Content.Media.ID == "" {
		linkedinError(w, http.StatusBadRequest, 0, "", "This simulator takes video posts only: content.media.id is required")
		return
	}
	m := req.Content.Media
	if !linkedinTitleLimit.Check(m.Title) {
		linkedinInputError(w, http.StatusBadRequest, "FIELD_ARRAY_SIZE_TOO_HIGH", "Size of array cannot be higher than the maxLength",
			fmt.Sprintf("com.linkedin.content.common.exception.BadRequestResponseException: Media title length (%d characters) exceeded the maximum allowed (%d characters)", linkedinTitleLimit.Count(m.Title), linkedinTitleLimit.Max))
		return
	}
	commentary := ""
	if req.Commentary != nil {
		commentary = *req.Commentary
	}
	text, truncated := RenderLittle(commentary)
	if !linkedinCommentaryLimit.Check(text) {
		linkedinInputError(w, http.StatusBadRequest, "FIELD_ARRAY_SIZE_TOO_HIGH", "Size of array cannot be higher than the maxLength",
			fmt.Sprintf("com.linkedin.content.common.exception.BadRequestResponseException: %s text length (%d characters) exceeded the maximum allowed (%d characters)",
				linkedinCommentaryUnit, len(utf16.Encode([]rune(text))), linkedinCommentaryLimit.Max))
		return
	}

	now := l.cfg.Now()
	ctx := r.Context()
	v, found, err := l.video(ctx, m.ID)
	if err != nil {
		linkedinInternal(w)
		return
	}
	if !found || v.Account.ID != acc.ID {
		linkedinError(w, http.StatusBadRequest, 0, "", "com.linkedin.content.common.exception.BadRequestResponseException: Invalid media "+m.ID)
		return
	}
	if status := l.statusOf(v, now); status != Available {
		linkedinError(w, http.StatusBadRequest, 0, "",
			"com.linkedin.content.common.exception.BadRequestResponseException: Media "+m.ID+" is not AVAILABLE (status "+status+")")
		return
	}
	post := linkedinPost{
		URN: "urn:li:share:" + sim.RandomDigits(19), Account: acc.ID, Commentary: commentary, Text: text, Truncated: truncated,
		Title: m.Title, Video: m.ID, Visibility: *req.Visibility, Lifecycle: *req.LifecycleState,
		Activity: "urn:li:activity:" + sim.RandomDigits(19), Created: now,
	}
	content := sha256.Sum256([]byte(acc.ID + "\x00" + m.ID + "\x00" + commentary))
	contentKey := linkedinKey(linkedinContentKind, hex.EncodeToString(content[:]))
	var duplicate string
	capped := false
	err = l.cfg.State.Update(ctx, func(tx sim.Tx) error {
		var found bool
		var err error
		capped = false
		if duplicate, _, found, err = sim.LoadTx[string](tx, contentKey); err != nil || found {
			return err
		}
		ok, err := sim.TakeInWindow(tx, linkedinKey(linkedinDailyKind, acc.ID), acc.ID, now, 24*time.Hour, l.opts.PostsPerDay)
		if capped = !ok; err != nil || capped {
			return err
		}
		for _, rec := range []struct {
			key sim.Key
			v   any
		}{{linkedinKey(linkedinPostKind, post.URN), post}, {linkedinKey(linkedinActivityKind, post.Activity), post.URN}, {contentKey, post.URN}} {
			if err := sim.Save(tx, sim.Record{Key: rec.key, Account: acc.ID}, rec.v); err != nil {
				return err
			}
		}
		if post.Lifecycle != "PUBLISHED" {
			return nil
		}
		return sim.RecordTx(tx, platform.LinkedIn, sim.Published{
			Account: acc.ID, ID: post.URN, URL: "https://www.linkedin.com/feed/update/" + post.URN + "/", SHA256: v.SHA, Text: text,
		})
	})
	switch {
	case err != nil:
		linkedinInternal(w)
	case duplicate != "":
		linkedinInputError(w, http.StatusUnprocessableEntity, "DUPLICATE_POST", "Duplicate post is detected",
			"com.linkedin.content.common.exception.BadRequestResponseException: Content is a duplicate of "+duplicate)
	case capped:
		linkedinError(w, http.StatusTooManyRequests, 101, "TOO_MANY_REQUESTS", "Resource level throttle MEMBER DAY limit for calls to this resource is reached.")
	default:
		w.Header().Set("X-RestLi-Id", post.URN)
		w.WriteHeader(http.StatusCreated)
	}
}

// RenderLittle returns the text LinkedIn shows for a commentary in little text format, and
// whether an unescaped reserved character cut it short (LinkedIn then shows the text before
// it). Elements: \X (a reserved character X as text), @[name](urn:li:person|organization:id)
// (shown as name), #word and {hashtag|#|word} or {hashtag|\#|word} (shown as #word).
func RenderLittle(s string) (text string, truncated bool) {
	rs := []rune(s)
	var b strings.Builder
	for i := 0; i < len(rs); {
		r := rs[i]
		if !linkedinReserved(r) {
			b.WriteRune(r)
			i++
			continue
		}
		switch r {
		case '\\':
			if i+1 < len(rs) && linkedinReserved(rs[i+1]) {
				b.WriteRune(rs[i+1])
				i += 2
				continue
			}
		case '#':
			j := i + 1
			for j < len(rs) && linkedinWordRune(rs[j]) {
				j++
			}
			if j > i+1 {
				b.WriteString(string(rs[i:j]))
				i = j
				continue
			}
		case '{':
			if shown, n := linkedinHashtagTemplate(rs[i:]); n > 0 {
				b.WriteString(shown)
				i += n
				continue
			}
		case '@':
			if shown, n := linkedinMention(rs[i:]); n > 0 {
				b.WriteString(shown)
				i += n
				continue
			}
		}
		return b.String(), true
	}
	return b.String(), false
}

func linkedinReserved(r rune) bool { return r < 0x80 && strings.ContainsRune(`\|{}@[]()<>#*_~`, r) }

func linkedinWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// linkedinText reads escaped text up to an unescaped stop rune; n is how many runes it took
// (0 when it met another unescaped reserved character or the end first).
func linkedinText(rs []rune, stop rune) (text string, n int) {
	var b strings.Builder
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == stop:
			return b.String(), i
		case rs[i] == '\\' && i+1 < len(rs) && linkedinReserved(rs[i+1]):
			b.WriteRune(rs[i+1])
			i++
		case linkedinReserved(rs[i]):
			return "", 0
		default:
			b.WriteRune(rs[i])
		}
	}
	return "", 0
}

// linkedinHashtagTemplate parses {hashtag|#|word} at the start of rs.
func linkedinHashtagTemplate(rs []rune) (string, int) {
	const head = "{hashtag|"
	if !strings.HasPrefix(string(rs[:min(len(rs), len(head))]), head) {
		return "", 0
	}
	i := len(head)
	var sign rune
	switch {
	case i+1 < len(rs) && rs[i] == '\\' && rs[i+1] == '#':
		sign, i = '#', i+2
	case i < len(rs) && (rs[i] == '#' || rs[i] == '＃'):
		sign, i = rs[i], i+1
	default:
		return "", 0
	}
	if i >= len(rs) || rs[i] != '|' {
		return "", 0
	}
	i++
	word, n := linkedinText(rs[i:], '}')
	if n == 0 || word == "" {
		return "", 0
	}
	return string(sign) + word, i + n + 1
}

var linkedinMentionURN = regexp.MustCompile(`^urn:li:(person|organization):[A-Za-z0-9_-]+$`)

// linkedinMention parses @[name](urn) at the start of rs.
func linkedinMention(rs []rune) (string, int) {
	if len(rs) < 2 || rs[1] != '[' {
		return "", 0
	}
	name, n := linkedinText(rs[2:], ']')
	if n == 0 || name == "" {
		return "", 0
	}
	i := 2 + n + 1
	if i >= len(rs) || rs[i] != '(' {
		return "", 0
	}
	end := -1
	for j := i + 1; j < len(rs); j++ {
		if rs[j] == ')' {
			end = j
			break
		}
	}
	if end < 0 || !linkedinMentionURN.MatchString(string(rs[i+1:end])) {
		return "", 0
	}
	return name, end + 1
}

func linkedinError(w http.ResponseWriter, status, serviceCode int, code, msg string) {
	body := map[string]any{"status": status, "message": msg}
	if serviceCode != 0 {
		body["serviceErrorCode"] = serviceCode
	}
	if code != "" {
		body["code"] = code
	}
	writeLinkedInJSON(w, status, body)
}

// linkedinInputError is the shape of LinkedIn's validation errors.
func linkedinInputError(w http.ResponseWriter, status int, code, description, msg string) {
	writeLinkedInJSON(w, status, map[string]any{
		"errorDetailType": "com.linkedin.common.error.BadRequest",
		"message":         msg,
		"errorDetails": map[string]any{"inputErrors": []map[string]any{{
			"description": description, "input": map[string]any{}, "code": code,
		}}},
		"status": status,
	})
}

func writeLinkedInJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

var _ http.Handler = (*Sim)(nil)
