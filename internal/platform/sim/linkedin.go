package sim

// LinkedIn simulator: the Videos API (/rest/videos), the Posts API (/rest/posts), member
// statistics and the Comments API (see linkedin_audience.go) and OpenID
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
//     2026 LinkedIn served 202504 to 202603. A missing or other protocol version answers 400
//     (this simulator's wording). /v2/userinfo is unversioned and needs neither.
//   - initializeUpload takes 75 KiB to 200 MB (the Videos API pages give 75 KB and 200 MB or
//     500 MB depending on their version: the stricter of each) and answers one upload URL per
//     4 MiB part (the documented example's first part ends at byte 4194303), the last one taking
//     the rest, plus uploadToken and uploadUrlsExpireAt. Upload URLs are signed (sau=…), expire
//     after UploadURLTTL (24 h) and answer 201 with an ETag per part; a part may be sent again
//     (after a crash) and keeps an ETag of its content; a PUT whose body was cut short
//     changes nothing. Content-Type must be application/octet-stream and the body exactly the
//     part's bytes.
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
// Member statistics and comments are in linkedin_audience.go.
//
// Not reproduced: organization authors, captions, image and document uploads, reading posts.

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
)

// LinkedIn video statuses.
const (
	LinkedInWaitingUpload    = "WAITING_UPLOAD"
	LinkedInProcessing       = "PROCESSING"
	LinkedInAvailable        = "AVAILABLE"
	LinkedInProcessingFailed = "PROCESSING_FAILED"
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

// linkedinCommentaryLimit is the registry's limit of commentary (3000 UTF-16 units).
var linkedinCommentaryLimit = func() platform.TextLimit {
	c, _ := platform.CapabilitiesOf(platform.LinkedIn)
	return c.Text["commentary"]
}()

var linkedinTitleLimit = func() platform.TextLimit {
	c, _ := platform.CapabilitiesOf(platform.LinkedIn)
	return c.Text["title"]
}()

// LinkedInOptions tunes the simulator; the zero value is LinkedIn's documented behaviour.
type LinkedInOptions struct {
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

// LinkedInVideo is what the simulator knows of a video (for tests).
type LinkedInVideo struct {
	URN       string
	Account   string
	Size      int64
	Parts     int
	Status    string
	Finalizes int
	SHA256    string
	Thumbnail bool
}

// LinkedInPost is a post the simulator created (for tests).
type LinkedInPost struct {
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

// LinkedIn simulates LinkedIn's Videos and Posts APIs. It implements http.Handler.
type LinkedIn struct {
	cfg      Config
	opts     LinkedInOptions
	basePath string

	mu        sync.Mutex
	videos    map[string]*linkedinVideo // by URN
	byKey     map[string]*linkedinVideo // by the key in upload URLs
	posts     []*LinkedInPost
	postTimes map[string][]time.Time        // account → post times within the last day
	comments  map[string][]*linkedinComment // post URN → comments the members wrote, oldest first
}

type linkedinVideo struct {
	urn, key    string
	account     Account
	size        int64
	parts       []linkedinPart
	sig         string
	uploadToken string
	expires     time.Time
	thumbnail   bool

	// upMu serializes the writes to one upload's file, and its finalizing; file belongs to it.
	upMu sync.Mutex
	file *os.File

	// Guarded by LinkedIn.mu.
	thumbDone   bool
	finalizes   int
	finalizedAt time.Time
	processing  time.Duration
	sha         string
	verdict     string // processing failure reason, "" when the video passes
	duration    time.Duration
	width       int
	height      int
}

type linkedinPart struct {
	first, last int64
	etag        string // guarded by LinkedIn.mu
}

// NewLinkedIn returns the LinkedIn simulator with LinkedIn's documented behaviour.
func NewLinkedIn(cfg Config) http.Handler { return NewLinkedInSim(cfg, LinkedInOptions{}) }

// NewLinkedInSim returns the LinkedIn simulator with options.
func NewLinkedInSim(cfg Config, opts LinkedInOptions) *LinkedIn {
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
	return &LinkedIn{
		cfg: cfg, opts: opts, basePath: basePath,
		videos: map[string]*linkedinVideo{}, byKey: map[string]*linkedinVideo{}, postTimes: map[string][]time.Time{},
		comments: map[string][]*linkedinComment{},
	}
}

// Recorder returns the record of what the simulator received.
func (l *LinkedIn) Recorder() *Recorder { return l.cfg.Recorder }

// Video reports what the simulator knows of a video.
func (l *LinkedIn) Video(urn string) (LinkedInVideo, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.videos[urn]
	if !ok {
		return LinkedInVideo{}, false
	}
	return LinkedInVideo{URN: v.urn, Account: v.account.ID, Size: v.size, Parts: len(v.parts),
		Status: l.statusOf(v, l.cfg.Now()), Finalizes: v.finalizes, SHA256: v.sha, Thumbnail: v.thumbDone}, true
}

// Videos lists the videos of an account, in creation order.
func (l *LinkedIn) Videos(account string) []LinkedInVideo {
	l.mu.Lock()
	var urns []string
	for _, v := range l.videos {
		if v.account.ID == account {
			urns = append(urns, v.urn)
		}
	}
	l.mu.Unlock()
	out := make([]LinkedInVideo, 0, len(urns))
	for _, u := range urns {
		if v, ok := l.Video(u); ok {
			out = append(out, v)
		}
	}
	return out
}

// Posts lists the posts created, oldest first.
func (l *LinkedIn) Posts() []LinkedInPost {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LinkedInPost, len(l.posts))
	for i, p := range l.posts {
		out[i] = *p
	}
	return out
}

// ServeHTTP implements http.Handler. Paths are the platform's, below Config.BaseURL, with or
// without BaseURL's path in front.
func (l *LinkedIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
		l.rest(w, r, http.MethodGet, func(w http.ResponseWriter, r *http.Request, acc Account, version string) {
			l.getVideo(w, acc, strings.TrimPrefix(raw, "/rest/videos/"))
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
func (l *LinkedIn) auth(w http.ResponseWriter, r *http.Request) (Account, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	var acc Account
	if ok && token != "" && l.cfg.Accounts != nil {
		acc, ok = l.cfg.Accounts.Resolve(r.Context(), token)
	} else {
		ok = false
	}
	if !ok {
		linkedinError(w, http.StatusUnauthorized, 65600, "INVALID_ACCESS_TOKEN", "Invalid access token")
		return Account{}, false
	}
	return acc, true
}

// linkedinFault renders a call fault in LinkedIn's error shape; it reports whether it answered.
func linkedinFault(w http.ResponseWriter, fault string) bool {
	switch fault {
	case FailUnavailable:
		linkedinError(w, http.StatusServiceUnavailable, 0, "", "Service Unavailable")
	case FailAuth:
		linkedinError(w, http.StatusUnauthorized, 65602, "EXPIRED_ACCESS_TOKEN", "The token used in the request has expired")
	case FailRateLimit:
		linkedinError(w, http.StatusTooManyRequests, 101, "TOO_MANY_REQUESTS", "Resource level throttle limit for calls to this resource is reached.")
	default:
		return false
	}
	return true
}

var linkedinVersionRE = regexp.MustCompile(`^([0-9]{4})([0-9]{2})(?:\.([0-9]{2}))?$`)

// checkVersion applies LinkedIn's versioning; it answers the refusal itself.
func (l *LinkedIn) checkVersion(w http.ResponseWriter, v string) bool {
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
		if month >= 1 && month <= 12 && age >= 1 && age <= linkedinVersionMonths {
			return true
		}
	}
	linkedinError(w, http.StatusUpgradeRequired, 0, "NONEXISTENT_VERSION", "Requested version "+shown+" is not active")
	return false
}

// rest does what every /rest endpoint shares: method, token, versions and the account's faults.
func (l *LinkedIn) rest(w http.ResponseWriter, r *http.Request, method string,
	h func(http.ResponseWriter, *http.Request, Account, string)) {
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
	if linkedinFault(w, CallFault(acc.Behavior, l.cfg.Rand)) {
		return
	}
	h(w, r, acc, version)
}

func (l *LinkedIn) userinfo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		linkedinError(w, http.StatusMethodNotAllowed, 0, "", "Method "+r.Method+" is not allowed on this resource")
		return
	}
	acc, ok := l.auth(w, r)
	if !ok || linkedinFault(w, CallFault(acc.Behavior, l.cfg.Rand)) {
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

func (l *LinkedIn) videoAction(w http.ResponseWriter, r *http.Request, acc Account, version string) {
	switch r.URL.Query().Get("action") {
	case "initializeUpload":
		l.initializeUpload(w, r, acc)
	case "finalizeUpload":
		l.finalizeUpload(w, r, acc)
	default:
		linkedinError(w, http.StatusBadRequest, 0, "", "Unsupported action "+strconv.Quote(r.URL.Query().Get("action")))
	}
}

func (l *LinkedIn) forbidden(w http.ResponseWriter, what string) {
	linkedinError(w, http.StatusForbidden, 100, "ACCESS_DENIED", "Not enough permissions to access: "+what)
}

func (l *LinkedIn) initializeUpload(w http.ResponseWriter, r *http.Request, acc Account) {
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
	id := "C4E05AQ" + strings.ToUpper(randomHex(6)) + "-" + randomHex(4)
	v := &linkedinVideo{
		urn: "urn:li:video:" + id, key: id, account: acc, size: size, sig: randomHex(16),
		uploadToken: randomHex(12), expires: now.Add(l.opts.UploadURLTTL), thumbnail: in.UploadThumbnail,
	}
	for first := int64(0); first < size; first += l.opts.PartSize {
		last := min(first+l.opts.PartSize, size) - 1
		v.parts = append(v.parts, linkedinPart{first: first, last: last})
	}
	l.mu.Lock()
	l.sweep(now)
	l.videos[v.urn] = v
	l.byKey[v.key] = v
	l.mu.Unlock()

	ins := make([]map[string]any, len(v.parts))
	for i, p := range v.parts {
		ins[i] = map[string]any{
			"uploadUrl": l.cfg.BaseURL + "/dms-uploads/sp/v2/" + v.key + "/uploadedVideo?part=" + strconv.Itoa(i) + "&sau=" + v.sig,
			"firstByte": p.first,
			"lastByte":  p.last,
		}
	}
	value := map[string]any{
		"uploadUrlsExpireAt": v.expires.UnixMilli(),
		"video":              v.urn,
		"uploadInstructions": ins,
		"uploadToken":        v.uploadToken,
	}
	if v.thumbnail {
		value["thumbnailUploadUrl"] = l.cfg.BaseURL + "/dms-uploads/sp/v2/" + v.key + "/uploadedThumbnail?sau=" + v.sig
	}
	writeLinkedInJSON(w, http.StatusOK, map[string]any{"value": value})
}

// sweep removes the temporary files of uploads whose URLs expired unfinalized (under l.mu).
func (l *LinkedIn) sweep(now time.Time) {
	for _, v := range l.videos {
		if v.finalizes > 0 || now.Before(v.expires) || !v.upMu.TryLock() {
			continue
		}
		if v.file != nil {
			_ = v.file.Close()
			_ = os.Remove(v.file.Name())
			v.file = nil
		}
		v.upMu.Unlock()
	}
}

// upload serves PUT on the upload URLs: video parts and thumbnails.
func (l *LinkedIn) upload(w http.ResponseWriter, r *http.Request, rest string) {
	defer drain(r.Body)
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPut)
		uploadError(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	key, kind, ok := strings.Cut(strings.TrimPrefix(rest, "sp/v2/"), "/")
	l.mu.Lock()
	v, found := l.byKey[key]
	l.mu.Unlock()
	q := r.URL.Query()
	if !ok || !found || subtle.ConstantTimeCompare([]byte(q.Get("sau")), []byte(v.sig)) != 1 {
		uploadError(w, http.StatusForbidden, "Signature verification failed")
		return
	}
	if fault := CallFault(v.account.Behavior, l.cfg.Rand); fault == FailUnavailable {
		uploadError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	}
	if !l.cfg.Now().Before(v.expires) {
		uploadError(w, http.StatusForbidden, "The upload URL has expired")
		return
	}
	switch kind {
	case "uploadedVideo":
		l.uploadPart(w, r, v)
	case "uploadedThumbnail":
		l.uploadThumbnail(w, r, v)
	default:
		uploadError(w, http.StatusNotFound, "Unknown upload")
	}
}

func (l *LinkedIn) uploadPart(w http.ResponseWriter, r *http.Request, v *linkedinVideo) {
	i, err := strconv.Atoi(r.URL.Query().Get("part"))
	l.mu.Lock()
	known := err == nil && i >= 0 && i < len(v.parts)
	var p linkedinPart
	if known {
		p = v.parts[i] // parts' etags change under l.mu, while other parts upload
	}
	l.mu.Unlock()
	if !known {
		uploadError(w, http.StatusNotFound, "Unknown upload part")
		return
	}
	n := p.last - p.first + 1
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/octet-stream" {
		uploadError(w, http.StatusBadRequest, "Content-Type must be application/octet-stream")
		return
	}
	if r.ContentLength != n {
		uploadError(w, http.StatusBadRequest, fmt.Sprintf("Content-Length must be %d for bytes %d-%d", n, p.first, p.last))
		return
	}
	// The part is received whole before it touches the upload, as a storage service commits
	// a PUT only once its body is complete. A PUT cut short (its client gave up) is often
	// still being read when the client has already sent the part again; written straight into
	// the file, it would overwrite the bytes of that later, complete copy and drop its ETag,
	// and finalizing would refuse an upload the client rightly holds every ETag of. The part
	// is at most PartSize, so memory stays bounded by the parts in flight.
	body := make([]byte, n)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		uploadError(w, http.StatusBadRequest, "The request body is shorter than Content-Length")
		return
	}
	sum := sha256.Sum256(body)
	etag := "/" + hex.EncodeToString(sum[:18]) + "/"

	v.upMu.Lock()
	defer v.upMu.Unlock()
	l.mu.Lock()
	finalized := v.finalizes > 0
	l.mu.Unlock()
	if finalized {
		uploadError(w, http.StatusBadRequest, "The upload was already finalized")
		return
	}
	if v.file == nil {
		f, err := os.CreateTemp("", "reelay-linkedin-sim-*.upload")
		if err != nil {
			uploadError(w, http.StatusInternalServerError, "Internal Server Error")
			return
		}
		v.file = f
	}
	if _, err := v.file.WriteAt(body, p.first); err != nil {
		l.mu.Lock()
		v.parts[i].etag = "" // the part's bytes are no longer the ones an old ETag named
		l.mu.Unlock()
		uploadError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	l.mu.Lock()
	v.parts[i].etag = etag
	l.mu.Unlock()
	w.Header().Set("ETag", etag)
	w.WriteHeader(http.StatusCreated)
}

func (l *LinkedIn) uploadThumbnail(w http.ResponseWriter, r *http.Request, v *linkedinVideo) {
	if !v.thumbnail {
		uploadError(w, http.StatusNotFound, "No thumbnail upload was requested for this video")
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "image/jpeg" && mt != "image/png" && mt != "application/octet-stream") {
		uploadError(w, http.StatusBadRequest, "Content-Type must be image/jpeg, image/png or application/octet-stream")
		return
	}
	head := make([]byte, 8)
	k, _ := io.ReadFull(r.Body, head)
	head = head[:k]
	rest, err := io.Copy(io.Discard, io.LimitReader(r.Body, linkedinMaxThumbBytes))
	if err != nil {
		uploadError(w, http.StatusBadRequest, "The request body could not be read")
		return
	}
	isJPEG := bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF})
	isPNG := bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n"))
	if !isJPEG && !isPNG || int64(k)+rest > linkedinMaxThumbBytes {
		uploadError(w, http.StatusBadRequest, "The thumbnail must be a JPEG or PNG image of at most 10 MB")
		return
	}
	l.mu.Lock()
	v.thumbDone = true
	l.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (l *LinkedIn) finalizeUpload(w http.ResponseWriter, r *http.Request, acc Account) {
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
	l.mu.Lock()
	v, ok := l.videos[in.Video]
	l.mu.Unlock()
	if !ok {
		linkedinError(w, http.StatusNotFound, 0, "", "Video "+in.Video+" does not exist")
		return
	}
	if v.account.ID != acc.ID {
		l.forbidden(w, "videos.finalizeUpload for "+in.Video)
		return
	}
	if *in.UploadToken != v.uploadToken {
		linkedinError(w, http.StatusBadRequest, 0, "", "uploadToken does not match the upload of "+in.Video)
		return
	}
	v.upMu.Lock()
	defer v.upMu.Unlock()
	l.mu.Lock()
	if v.finalizes > 0 {
		l.mu.Unlock()
		linkedinError(w, http.StatusBadRequest, 0, "", "The upload of "+in.Video+" was already finalized")
		return
	}
	var missing []int
	bad := len(in.UploadedPartIDs) != len(v.parts)
	for i, p := range v.parts {
		if p.etag == "" {
			missing = append(missing, i+1)
		} else if !bad && in.UploadedPartIDs[i] != p.etag {
			bad = true
		}
	}
	l.mu.Unlock()
	if len(missing) > 0 || bad || v.file == nil {
		linkedinError(w, http.StatusBadRequest, 0, "", fmt.Sprintf(
			"uploadedPartIds must be the ETags of all %d parts in order (parts not uploaded: %v)", len(v.parts), missing))
		return
	}

	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(v.file, 0, v.size)); err != nil {
		linkedinError(w, http.StatusInternalServerError, 0, "", "Internal Server Error")
		return
	}
	sha := hex.EncodeToString(h.Sum(nil))
	verdict, dur, width, height := checkLinkedInVideo(v.file, v.size)
	_ = v.file.Close()
	_ = os.Remove(v.file.Name())
	v.file = nil
	l.cfg.Recorder.RecordUpload(Upload{Account: acc.ID, Bytes: v.size, SHA256: sha})
	if v.account.Behavior.Fail == FailReject && verdict == "" {
		verdict = "The video could not be processed: its format is not supported"
	}
	processing := l.opts.DefaultProcessing
	if ms := v.account.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	l.mu.Lock()
	v.finalizes++
	v.finalizedAt, v.processing = l.cfg.Now(), processing
	v.sha, v.verdict, v.duration, v.width, v.height = sha, verdict, dur, width, height
	l.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// checkLinkedInVideo applies the Videos API's video specifications; it returns the processing
// failure reason ("" when the video passes) and what it learned.
func checkLinkedInVideo(f io.ReaderAt, size int64) (reason string, dur time.Duration, w, h int) {
	info, err := media.Probe(f, size)
	if err != nil || info.Kind.Name != "mp4" {
		return "The video format is not supported: LinkedIn takes MP4", 0, 0, 0
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

// statusOf is a video's status at now (under l.mu).
func (l *LinkedIn) statusOf(v *linkedinVideo, now time.Time) string {
	switch {
	case v.finalizes == 0:
		return LinkedInWaitingUpload
	case now.Before(v.finalizedAt.Add(v.processing)):
		return LinkedInProcessing
	case v.verdict != "":
		return LinkedInProcessingFailed
	}
	return LinkedInAvailable
}

func (l *LinkedIn) getVideo(w http.ResponseWriter, acc Account, rawKey string) {
	key, err := url.PathUnescape(rawKey)
	if err != nil || !strings.HasPrefix(key, "urn:li:video:") || strings.Contains(rawKey, ":") {
		linkedinError(w, http.StatusBadRequest, 0, "",
			"Invalid key "+strconv.Quote(rawKey)+": a video URN must be URL-encoded (urn%3Ali%3Avideo%3A...)")
		return
	}
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.videos[key]
	if !ok {
		linkedinError(w, http.StatusNotFound, 0, "", "Video "+key+" does not exist")
		return
	}
	if v.account.ID != acc.ID {
		linkedinError(w, http.StatusForbidden, 0, "", "Accessing this video resource is forbidden. Please check your permissions for this resource")
		return
	}
	status := l.statusOf(v, now)
	out := map[string]any{"id": v.urn, "owner": "urn:li:person:" + v.account.ID, "status": status}
	switch status {
	case LinkedInAvailable:
		out["duration"] = v.duration.Milliseconds()
		out["aspectRatioWidth"] = float64(v.width)
		out["aspectRatioHeight"] = float64(v.height)
		out["downloadUrl"] = l.cfg.BaseURL + "/dms/playlist/" + v.key + ".mp4"
		out["downloadUrlExpiresAt"] = now.Add(time.Hour).UnixMilli()
	case LinkedInProcessingFailed:
		out["processingFailureReason"] = v.verdict
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

func (l *LinkedIn) createPost(w http.ResponseWriter, r *http.Request, acc Account, version string) {
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
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.videos[m.ID]
	if !ok || v.account.ID != acc.ID {
		linkedinError(w, http.StatusBadRequest, 0, "", "com.linkedin.content.common.exception.BadRequestResponseException: Invalid media "+m.ID)
		return
	}
	if status := l.statusOf(v, now); status != LinkedInAvailable {
		linkedinError(w, http.StatusBadRequest, 0, "",
			"com.linkedin.content.common.exception.BadRequestResponseException: Media "+m.ID+" is not AVAILABLE (status "+status+")")
		return
	}
	for _, p := range l.posts {
		if p.Account == acc.ID && p.Commentary == commentary && p.Video == m.ID {
			linkedinInputError(w, http.StatusUnprocessableEntity, "DUPLICATE_POST", "Duplicate post is detected",
				"com.linkedin.content.common.exception.BadRequestResponseException: Content is a duplicate of "+p.URN)
			return
		}
	}
	recent := pruneBefore(l.postTimes[acc.ID], now.Add(-24*time.Hour))
	if len(recent) >= l.opts.PostsPerDay {
		l.postTimes[acc.ID] = recent
		linkedinError(w, http.StatusTooManyRequests, 101, "TOO_MANY_REQUESTS", "Resource level throttle MEMBER DAY limit for calls to this resource is reached.")
		return
	}
	l.postTimes[acc.ID] = append(recent, now)
	post := &LinkedInPost{
		URN: "urn:li:share:" + randomDigits(19), Account: acc.ID, Commentary: commentary, Text: text, Truncated: truncated,
		Title: m.Title, Video: m.ID, Visibility: *req.Visibility, Lifecycle: *req.LifecycleState,
		Activity: "urn:li:activity:" + randomDigits(19), Created: now,
	}
	l.posts = append(l.posts, post)
	if post.Lifecycle == "PUBLISHED" {
		l.cfg.Recorder.RecordPublished(Published{
			Account: acc.ID, ID: post.URN, URL: "https://www.linkedin.com/feed/update/" + post.URN + "/", SHA256: v.sha, Text: text,
		})
	}
	w.Header().Set("X-RestLi-Id", post.URN)
	w.WriteHeader(http.StatusCreated)
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

var _ http.Handler = (*LinkedIn)(nil)
