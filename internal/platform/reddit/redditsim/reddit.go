// Package redditsim is the simulator of Reddit's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package redditsim

// Reddit simulator: the OAuth API at oauth.reddit.com, the S3 buckets Reddit leases uploads
// into, and the websocket that reports a media post's result.
//
// Sources: Reddit's API documentation (www.reddit.com/dev/api: listings, /api/v1/me,
// /api/submit, /api/v1/{subreddit}/post_requirements, /r/{subreddit}/api/link_flair_v2,
// /subreddits/mine/subscriber), the Reddit API rules (OAuth only, a descriptive User-Agent,
// X-Ratelimit-Used/Remaining/Reset), PRAW's subreddit.py (_upload_media, _submit_media,
// submit_video) and the HTTP interactions PRAW recorded for its submit_video test
// (test cassette TestSubreddit.test_submit_video), read through the search tool. Video posts
// are not in Reddit's documented API: this follows what PRAW does and what its recording shows.
//
//   - POST /api/media/asset.json (form filepath, mimetype) leases one S3 object: {"args":
//     {"action":"//<bucket host>","fields":[{name,value}...]},"asset":{"asset_id",
//     "processing_state":"incomplete","payload":{"filepath"},"websocket_url"}}. Videos go to the
//     bucket reddit-uploaded-video under the key {asset_id}, images to reddit-uploaded-media
//     under rte_images/{asset_id}. The fields are S3's POST-policy fields in Reddit's order (acl,
//     key, X-Amz-Credential, X-Amz-Algorithm, X-Amz-Date, success_action_status=201,
//     content-type, x-amz-storage-class, x-amz-meta-ext, policy, X-Amz-Signature,
//     x-amz-security-token); the policy expires one minute after it is issued and limits the
//     size with content-length-range (2 GiB for video, 20 MiB for images), as recorded.
//   - Here the action is "//<host of Config.BaseURL><path>/s3/<bucket>": protocol-relative like
//     Reddit's, on the simulator. The upload is a multipart POST with every field, then the file
//     as the last part; S3 checks it against the policy (signature, expiry, every field a
//     condition, every condition met, size) and answers 201 with <PostResponse> XML, or S3's
//     <Error> XML (AccessDenied, SignatureDoesNotMatch, EntityTooLarge, MissingContentLength,
//     IncompleteBody, ...). A POST either stores the whole object or nothing. HEAD on
//     {action}/{key} tells whether the object exists (the acl is public-read); the simulator
//     keeps hashes, not bytes, so GET is refused.
//   - POST /api/submit with api_type=json, kind=video, sr, title, url (the video object's URL),
//     video_poster_url (an uploaded image's URL), nsfw, spoiler, sendreplies, resubmit,
//     flair_id, flair_text answers {"json":{"errors":[[CODE, message, field]...],"data":
//     {"user_submitted_page","websocket_url"}}}. Error codes: SUBREDDIT_REQUIRED,
//     SUBREDDIT_NOEXIST (a malformed name, or with Options.OnlyListed one not listed:
//     every other well-formed name is an open community that takes video, see sub), NO_TEXT, TOO_LONG (title over 300), NO_VIDEOS (the subreddit does not
//     allow video), SUBMIT_VALIDATION_FLAIR_REQUIRED (field "flair", "Your post must contain
//     post flair."), BAD_FLAIR_TEMPLATE_ID, BAD_URL (url or video_poster_url not an object
//     this account uploaded), INVALID_OPTION (a kind other than video: the simulator only
//     does video). The codes and the flair message are Reddit's; other messages are this
//     simulator's wording.
//   - Processing takes Behavior.ProcessingMS (< 0: Options.DefaultProcessing, 5 s) on
//     Config.Now after the submit. Then the post exists (in /user/{name}/submitted, its url
//     https://v.redd.it/{asset_id} as Reddit lists hosted video) and the websocket sends
//     {"type":"success","payload":{"redirect":"https://www.reddit.com/r/{sr}/comments/{id}/{slug}/"}}
//     and closes; or, when the video is not MP4/MOV H.264/HEVC of at most 15 minutes, the poster
//     is not a JPEG or PNG, or the account's behavior is reject, no post is made and the
//     websocket sends {"type":"failed"}.
//   - The websocket (/ws/{asset_id}?m=<token>, on Config.BaseURL's host) is a broadcast, as
//     Reddit's is: a result is delivered only to connections that were open when it happened
//     (cfg.Now at connect <= the processing end); a client that connects later hears nothing
//     and has to look in /user/{name}/submitted. Because tests move Config.Now by hand, each
//     open connection checks the clock every Options.Tick (10 ms) of real time and
//     sends the result as soon as the clock has passed the processing end; every API call
//     that shows posts also settles the processing that is due. The lease's answer and each
//     submit's carry a websocket URL of its own token; any of them listens to the asset.
//   - Auth: "Authorization: bearer <token>" (any case of bearer), resolved with
//     Config.Accounts; otherwise 401 {"message":"Unauthorized","error":401} with
//     WWW-Authenticate. A User-Agent is required and Go's default one is refused (403; the
//     API rules say default agents are drastically limited). Every API answer carries
//     X-Ratelimit-Used/Remaining/Reset for the token's ten-minute window (1000 requests by
//     default, 100 a minute); over it: 429 {"message":"Too Many Requests","error":429}.
//   - Call faults: unavailable → 503 {"message":"Service Unavailable","error":503} (and S3's
//     503 ServiceUnavailable on uploads), auth → 401, rate_limit → 429 with
//     X-Ratelimit-Remaining 0 and X-Ratelimit-Reset 1 (Reddit's equivalent of Retry-After).
//   - Identity and choices: GET /api/v1/me; GET /subreddits/mine/subscriber (a Listing of t5,
//     limit up to 100, after = the last fullname); GET /r/{sr}/about (t5 with allow_videos,
//     submission_type, over18; 404 {"message":"Not Found","error":404} for none);
//     GET /api/v1/{sr}/post_requirements; GET /r/{sr}/api/link_flair_v2; GET
//     /user/{name}/submitted (a Listing of t3, newest first).
//
// Uploads recorded in the introspection are the videos only (the poster image is part of
// the post, not the video); one published entry per post, with the video's hash.
//
// A post's figures and comments (GET /api/info, GET /comments/{article}, POST /api/comment)
// are in audience.go.
//
// Leases, uploaded objects, submissions, posts and comments are records of Config.State, so
// that any process serving the simulator goes on with them and a restart forgets none; the
// uploaded bytes are hashed and probed while they stream in, and never kept. The ten-minute
// request window is counted in the process: a deviation (each process allows a token its
// 1000), as it refills within minutes.
//
// Not reproduced: link, self, image, gallery and videogif posts; crossposts; the per-account
// posting cooldown (RATELIMIT); subreddit bans and karma rules.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
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

	"github.com/coder/websocket"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Reddit's limits as recorded and documented.
const (
	redditVideoBucket   = "reddit-uploaded-video"
	redditImageBucket   = "reddit-uploaded-media"
	redditMaxVideoBytes = 2 << 30  // content-length-range of a video lease
	redditMaxImageBytes = 20 << 20 // content-length-range of an image lease
	redditLeaseTTL      = time.Minute
	redditMaxDuration   = 15 * time.Minute
	redditRateWindow    = 10 * time.Minute
)

// redditTitleLimit is Reddit's limit of a post title: 300 characters, counted in UTF-16 units.
var redditTitleLimit = platform.TextLimit{Max: 300, Unit: platform.UnitUTF16}

// Flair is one link flair template of a subreddit.
type Flair struct {
	ID           string
	Text         string
	TextEditable bool
	ModOnly      bool
}

// Subreddit is one community of the simulator.
type Subreddit struct {
	Name  string
	Title string
	// AllowVideos false refuses video posts (NO_VIDEOS).
	AllowVideos bool
	Over18      bool
	// SubmissionType is any, link or self ("" = any).
	SubmissionType string
	// FlairRequired refuses posts without a flair template (SUBMIT_VALIDATION_FLAIR_REQUIRED).
	FlairRequired bool
	Flairs        []Flair
	// TitleMinLength and TitleMaxLength are post requirements (0 = none).
	TitleMinLength, TitleMaxLength int
}

// DefaultSubreddits are the communities every account sees unless Options says
// otherwise: two that take video, one that requires flair, one that refuses video.
func DefaultSubreddits() []Subreddit {
	return []Subreddit{
		{Name: "reelay_sandbox", Title: "reelay sandbox", AllowVideos: true, Flairs: []Flair{
			{ID: "0c3e6a52-2d7f-4c11-9a0e-5f1d7b2c9a01", Text: "Clip"},
			{ID: "0c3e6a52-2d7f-4c11-9a0e-5f1d7b2c9a02", Text: "Tutorial"},
		}},
		{Name: "reelay_shorts", Title: "Short videos", AllowVideos: true},
		{Name: "reelay_flair", Title: "Flair required", AllowVideos: true, FlairRequired: true, Flairs: []Flair{
			{ID: "7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b01", Text: "Original content"},
			{ID: "7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b02", Text: "Meme", TextEditable: true},
			{ID: "7b1f4d90-8e2a-4b6c-b3d5-2a9c6e4f1b03", Text: "Announcement", ModOnly: true},
		}},
		{Name: "reelay_textonly", Title: "No videos here", AllowVideos: false},
	}
}

// Options tunes the simulator; the zero value is the default set of communities and
// Reddit's documented behaviour.
type Options struct {
	// Subreddits are the communities with rules of their own (nil: DefaultSubreddits).
	// Any other well-formed name is an open community that takes video, unless OnlyListed.
	Subreddits []Subreddit
	// OnlyListed makes Subreddits the only communities that exist, for tests of what Reddit
	// answers for a name nobody has taken.
	OnlyListed bool
	// Subscriptions lists, per account ID, the subreddit names the account is subscribed to
	// (what /subreddits/mine/subscriber answers); an account not in it is subscribed to all.
	Subscriptions map[string][]string
	// DefaultProcessing is the processing time when Behavior.ProcessingMS < 0 (0: 5 s).
	DefaultProcessing time.Duration
	// RequestsPerWindow is each token's allowance per ten-minute window (0: 1000).
	RequestsPerWindow int
	// Tick is how often (real time) an open websocket checks Config.Now (0: 10 ms).
	Tick time.Duration
}

// Post is what the simulator knows of one post or submission (for tests).
type Post struct {
	// ID is the post's fullname (t3_...), "" while processing or when it failed.
	ID          string
	Account     string
	Subreddit   string
	Title       string
	NSFW        bool
	Spoiler     bool
	SendReplies bool
	FlairID     string
	FlairText   string
	VideoURL    string
	PosterURL   string
	AssetID     string
	// Status is processing, success or failed.
	Status    string
	Permalink string
	// Listened says a websocket connection for the video was open when the post was
	// submitted (Reddit's result is missed otherwise).
	Listened bool
	// PublishedAt is when processing ended and the post was made (its created_utc); zero
	// while processing or when it failed.
	PublishedAt time.Time
}

// Sim simulates Reddit's API. It implements http.Handler.
type Sim struct {
	cfg        sim.Config
	opts       Options
	basePath   string
	actionBase string                // "//host/path/s3/"
	wsBase     string                // ws(s)://host/path/ws/
	subs       map[string]*Subreddit // by lower-case name

	mu      sync.Mutex
	windows map[string]*redditWindow // by token
}

// The kinds of the Reddit simulator's records.
const (
	// redditObjectKind is an S3 object Reddit leased (redditObject), named by its key (unique
	// across both buckets: images are below rte_images/): the lease, the object once uploaded,
	// the submissions that name it as their video and the websocket connections listening to
	// it. A lease neither uploaded nor submitted ends a day after its policy (the simulator's
	// choice: Reddit documents nothing of leases), so that a submit of it within that day is
	// still told in processing; the others are kept until retention.
	redditObjectKind = "object"
	// redditSubmissionKind is a video submission (redditSubmission), with the comments
	// accounts posted on its post; kept until retention.
	redditSubmissionKind = "submission"
	// redditPostKind is a post id's submission (redditPostRef), written when processing makes
	// the post.
	redditPostKind = "post"
)

// redditLeaseKeep is how long a lease never uploaded nor submitted is kept past its policy.
const redditLeaseKeep = 24 * time.Hour

// A websocket connection says it listens in its object's record, on the wall clock (not
// Config.Now, which tests move by hours): renewed every redditListenRenew while it is open,
// the mark lapses redditListenLapse after its process stopped renewing it (a crash).
const (
	redditListenLapse = 30 * time.Second
	redditListenRenew = redditListenLapse / 3
)

func redditKey(kind, id string) sim.Key {
	return sim.Key{Platform: platform.Reddit, Kind: kind, ID: id}
}

// redditObject is a leased S3 object: what the lease allows and, once uploaded, what the
// simulator keeps of the object (its hashes and its verdict, never its bytes).
type redditObject struct {
	AssetID  string      `json:"asset_id"`
	Account  sim.Account `json:"account"`
	Bucket   string      `json:"bucket"`
	Key      string      `json:"key"`
	Mimetype string      `json:"mimetype"`
	// PolicySHA is the SHA-256 of the policy issued, a NUL and its signature: the two are a
	// credential, kept only as a hash, and a policy changed by a byte no longer matches.
	PolicySHA []byte `json:"policy_sha"`
	// WSTokenSHA is the SHA-256 of the token of the websocket URL the lease answered.
	WSTokenSHA []byte `json:"ws_token_sha"`

	Uploaded bool   `json:"uploaded,omitempty"`
	Size     int64  `json:"size,omitempty"`
	SHA      string `json:"sha,omitempty"`
	ETag     string `json:"etag,omitempty"`
	// Verdict is why processing fails with this object, "" when it is fine.
	Verdict string `json:"verdict,omitempty"`

	// Submissions are the submissions of this object as their video, oldest first.
	Submissions []redditSubmitted `json:"submissions,omitempty"`
	// Listeners are the open websocket connections, by id, with when their mark lapses (wall
	// clock).
	Listeners map[string]time.Time `json:"listeners,omitempty"`
}

// redditSubmitted is what a video's object keeps of a submission of it: what its websockets
// need to know when to look at the submission, and the token of the submit's websocket URL.
type redditSubmitted struct {
	ID         string    `json:"id"`
	ReadyAt    time.Time `json:"ready_at"`
	WSTokenSHA []byte    `json:"ws_token_sha"`
}

// listening reports whether a websocket connection is open on the object at the wall clock's
// now.
func (o redditObject) listening(now time.Time) bool {
	for _, lapse := range o.Listeners {
		if now.Before(lapse) {
			return true
		}
	}
	return false
}

// wsAllowed reports whether token is one of the object's websocket URLs'.
func (o redditObject) wsAllowed(token string) bool {
	sum := sha256.Sum256([]byte(token))
	ok := subtle.ConstantTimeCompare(sum[:], o.WSTokenSHA) == 1
	for _, s := range o.Submissions {
		ok = subtle.ConstantTimeCompare(sum[:], s.WSTokenSHA) == 1 || ok
	}
	return ok
}

// redditSubmission is a video submission: what was submitted, with what the simulator knew of
// its objects then, and what processing made of it.
type redditSubmission struct {
	ID          string      `json:"id"`
	Account     sim.Account `json:"account"`
	Subreddit   string      `json:"subreddit"`
	Title       string      `json:"title"`
	NSFW        bool        `json:"nsfw,omitempty"`
	Spoiler     bool        `json:"spoiler,omitempty"`
	SendReplies bool        `json:"send_replies,omitempty"`
	FlairID     string      `json:"flair_id,omitempty"`
	FlairText   string      `json:"flair_text,omitempty"`
	VideoKey    string      `json:"video_key"`
	AssetID     string      `json:"asset_id"`
	VideoURL    string      `json:"video_url"`
	PosterURL   string      `json:"poster_url"`
	// SHA is the video's as it was at the submit; Verdict why processing fails with the
	// objects as they were then (one never uploaded included), "" when they are fine.
	SHA       string    `json:"sha,omitempty"`
	Verdict   string    `json:"verdict,omitempty"`
	Submitted time.Time `json:"submitted"`
	ReadyAt   time.Time `json:"ready_at"`
	Status    string    `json:"status"` // processing, success, failed
	PostID    string    `json:"post_id,omitempty"`
	Permalink string    `json:"permalink,omitempty"`
	Listened  bool      `json:"listened,omitempty"`
	// Replies are the comments accounts posted on the post, oldest first.
	Replies []redditReply `json:"replies,omitempty"`
}

// redditPostRef names the submission of a post.
type redditPostRef struct {
	Submission string `json:"submission"`
}

type redditWindow struct {
	start time.Time
	used  int
}

// New returns the Reddit simulator with the default communities.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the Reddit simulator with options.
func NewSim(cfg sim.Config, opts Options) *Sim {
	cfg.Normalize()
	if opts.Subreddits == nil {
		opts.Subreddits = DefaultSubreddits()
	}
	if opts.DefaultProcessing <= 0 {
		opts.DefaultProcessing = 5 * time.Second
	}
	if opts.RequestsPerWindow <= 0 {
		opts.RequestsPerWindow = 1000
	}
	if opts.Tick <= 0 {
		opts.Tick = 10 * time.Millisecond
	}
	rd := &Sim{cfg: cfg, opts: opts, subs: map[string]*Subreddit{}, windows: map[string]*redditWindow{}}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		rd.basePath = strings.TrimRight(u.Path, "/")
		ws := "ws"
		if u.Scheme == "https" {
			ws = "wss"
		}
		rd.actionBase = "//" + u.Host + rd.basePath + "/s3/"
		rd.wsBase = ws + "://" + u.Host + rd.basePath + "/ws/"
	}
	for i := range opts.Subreddits {
		s := opts.Subreddits[i]
		rd.subs[strings.ToLower(s.Name)] = &s
	}
	return rd
}

// Recorder returns the record of what the simulator received.
func (rd *Sim) Recorder() *sim.Recorder { return rd.cfg.Recorder }

// Posts lists the submissions of an account, oldest first, settling those that are due (an
// error of its State panics: it is for tests).
func (rd *Sim) Posts(accountID string) []Post {
	ctx := context.Background()
	subs, err := sim.ListJSON[redditSubmission](ctx, rd.cfg.State, redditKey(redditSubmissionKind, ""), accountID)
	if err != nil {
		panic(err)
	}
	var out []Post
	for _, s := range subs {
		if s, _, err = rd.submission(ctx, s.ID); err != nil {
			panic(err)
		}
		p := Post{Account: s.Account.ID, Subreddit: s.Subreddit, Title: s.Title, NSFW: s.NSFW,
			Spoiler: s.Spoiler, SendReplies: s.SendReplies, FlairID: s.FlairID, FlairText: s.FlairText,
			VideoURL: s.VideoURL, PosterURL: s.PosterURL, AssetID: s.AssetID, Status: s.Status,
			Listened: s.Listened}
		if s.PostID != "" {
			p.ID, p.Permalink, p.PublishedAt = "t3_"+s.PostID, s.Permalink, s.ReadyAt
		}
		out = append(out, p)
	}
	return out
}

// ServeHTTP implements http.Handler. Paths are Reddit's, below Config.BaseURL, with or without
// BaseURL's path in front.
func (rd *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if rd.basePath != "" {
		if rest, ok := strings.CutPrefix(path, rd.basePath); ok && (rest == "" || rest[0] == '/') {
			path = rest
		}
	}
	switch {
	case strings.HasPrefix(path, "/s3/"):
		rd.s3(w, r, strings.TrimPrefix(path, "/s3/"))
		return
	case strings.HasPrefix(path, "/ws/"):
		rd.serveWebsocket(w, r, strings.TrimPrefix(path, "/ws/"))
		return
	}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	route := func(method string, h func(http.ResponseWriter, *http.Request, sim.Account)) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			redditJSON(w, http.StatusMethodNotAllowed, map[string]any{"message": "Method Not Allowed", "error": 405})
			return
		}
		rd.api(w, r, h)
	}
	switch {
	case path == "/api/v1/me":
		route(http.MethodGet, rd.me)
	case path == "/subreddits/mine/subscriber":
		route(http.MethodGet, rd.mine)
	case path == "/api/media/asset.json":
		route(http.MethodPost, rd.lease)
	case path == "/api/submit" || path == "/api/submit/":
		route(http.MethodPost, rd.submit)
	case path == "/api/info" || path == "/api/info/":
		route(http.MethodGet, rd.info)
	case path == "/api/comment" || path == "/api/comment/":
		route(http.MethodPost, rd.comment)
	case len(seg) >= 2 && len(seg) <= 3 && seg[0] == "comments":
		route(http.MethodGet, func(w http.ResponseWriter, r *http.Request, a sim.Account) { rd.comments(w, r, a, seg[1]) })
	case len(seg) >= 4 && len(seg) <= 5 && seg[0] == "r" && seg[2] == "comments":
		route(http.MethodGet, func(w http.ResponseWriter, r *http.Request, a sim.Account) { rd.comments(w, r, a, seg[3]) })
	case len(seg) == 3 && seg[0] == "r" && seg[2] == "about":
		route(http.MethodGet, func(w http.ResponseWriter, r *http.Request, a sim.Account) { rd.about(w, a, seg[1]) })
	case len(seg) == 4 && seg[0] == "api" && seg[1] == "v1" && seg[3] == "post_requirements":
		route(http.MethodGet, func(w http.ResponseWriter, r *http.Request, a sim.Account) { rd.requirements(w, seg[2]) })
	case len(seg) == 4 && seg[0] == "r" && seg[2] == "api" && seg[3] == "link_flair_v2":
		route(http.MethodGet, func(w http.ResponseWriter, r *http.Request, a sim.Account) { rd.flairs(w, seg[1]) })
	case len(seg) == 3 && seg[0] == "user" && seg[2] == "submitted":
		route(http.MethodGet, func(w http.ResponseWriter, r *http.Request, a sim.Account) { rd.submitted(w, r, a, seg[1]) })
	default:
		redditJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "error": 404})
	}
}

// api does what every OAuth endpoint shares: the bearer token, the User-Agent, the account's
// faults and the rate-limit window with its headers.
func (rd *Sim) api(w http.ResponseWriter, r *http.Request, h func(http.ResponseWriter, *http.Request, sim.Account)) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	var acc sim.Account
	ok := strings.EqualFold(scheme, "bearer") && token != "" && rd.cfg.Accounts != nil
	if ok {
		acc, ok = rd.cfg.Accounts.Resolve(r.Context(), token)
	}
	if !ok {
		redditUnauthorized(w)
		return
	}
	if sim.LibraryUserAgent(r.Header.Get("User-Agent")) {
		redditJSON(w, http.StatusForbidden, map[string]any{"message": "Forbidden", "error": 403,
			"reason": "a unique and descriptive User-Agent is required"})
		return
	}
	switch sim.CallFault(acc.Behavior, rd.cfg.Rand) {
	case sim.FailUnavailable:
		redditJSON(w, http.StatusServiceUnavailable, map[string]any{"message": "Service Unavailable", "error": 503})
		return
	case sim.FailAuth:
		redditUnauthorized(w)
		return
	case sim.FailRateLimit:
		w.Header().Set("X-Ratelimit-Used", strconv.Itoa(rd.opts.RequestsPerWindow))
		w.Header().Set("X-Ratelimit-Remaining", "0.0")
		w.Header().Set("X-Ratelimit-Reset", "1")
		redditJSON(w, http.StatusTooManyRequests, map[string]any{"message": "Too Many Requests", "error": 429})
		return
	}
	now := rd.cfg.Now()
	rd.mu.Lock()
	win := rd.windows[token]
	if win == nil || !now.Before(win.start.Add(redditRateWindow)) {
		win = &redditWindow{start: now}
		rd.windows[token] = win
	}
	win.used++
	used := win.used
	reset := int(win.start.Add(redditRateWindow).Sub(now).Seconds())
	rd.mu.Unlock()
	remaining := max(rd.opts.RequestsPerWindow-used, 0)
	w.Header().Set("X-Ratelimit-Used", strconv.Itoa(used))
	w.Header().Set("X-Ratelimit-Remaining", strconv.Itoa(remaining)+".0")
	w.Header().Set("X-Ratelimit-Reset", strconv.Itoa(max(reset, 1)))
	if used > rd.opts.RequestsPerWindow {
		redditJSON(w, http.StatusTooManyRequests, map[string]any{"message": "Too Many Requests", "error": 429})
		return
	}
	h(w, r, acc)
}

func redditUnauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="reddit", error="invalid_token"`)
	redditJSON(w, http.StatusUnauthorized, map[string]any{"message": "Unauthorized", "error": 401})
}

// redditInternal answers a failure of the simulator's own (its State) as Reddit answers its
// internal errors.
func redditInternal(w http.ResponseWriter) {
	redditJSON(w, http.StatusInternalServerError, map[string]any{"message": "Internal Server Error", "error": 500})
}

func redditJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// redditName is the account's Reddit name.
func redditName(a sim.Account) string {
	if a.Username != "" {
		return a.Username
	}
	return a.ID
}

func (rd *Sim) me(w http.ResponseWriter, _ *http.Request, a sim.Account) {
	name := redditName(a)
	redditJSON(w, http.StatusOK, map[string]any{
		"name": name, "id": strings.TrimPrefix(a.ID, "t2_"),
		"icon_img":      "https://www.redditstatic.com/avatars/defaults/v2/avatar_default_1.png",
		"snoovatar_img": "", "created_utc": 1.6e9, "is_suspended": false, "has_verified_email": true,
		"subreddit": map[string]any{"display_name": "u_" + name, "display_name_prefixed": "u/" + name, "title": ""},
	})
}

// t5 renders a subreddit as its listing data.
func redditT5(s *Subreddit) map[string]any {
	st := s.SubmissionType
	if st == "" {
		st = "any"
	}
	return map[string]any{
		"display_name": s.Name, "display_name_prefixed": "r/" + s.Name, "name": "t5_" + redditSubID(s.Name),
		"id": redditSubID(s.Name), "title": s.Title, "url": "/r/" + s.Name + "/", "over18": s.Over18,
		"allow_videos": s.AllowVideos, "allow_videogifs": s.AllowVideos, "allow_images": true,
		"submission_type": st, "subreddit_type": "public", "link_flair_enabled": len(s.Flairs) > 0,
		"user_is_subscriber": true,
	}
}

// redditSubID is a stable base36 id for a subreddit name.
func redditSubID(name string) string {
	h := sha256.Sum256([]byte(strings.ToLower(name)))
	return strconv.FormatUint(uint64(h[0])<<24|uint64(h[1])<<16|uint64(h[2])<<8|uint64(h[3]), 36)
}

func (rd *Sim) mine(w http.ResponseWriter, r *http.Request, a sim.Account) {
	q := r.URL.Query()
	limit := 25
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			n = 25
		}
		limit = min(n, 100)
	}
	var names []string
	if subs, ok := rd.opts.Subscriptions[a.ID]; ok {
		names = subs
	} else {
		for _, s := range rd.opts.Subreddits {
			names = append(names, s.Name)
		}
	}
	var all []*Subreddit
	for _, n := range names {
		if s, ok := rd.subs[strings.ToLower(n)]; ok {
			all = append(all, s)
		}
	}
	start := 0
	if after := q.Get("after"); after != "" {
		start = len(all)
		for i, s := range all {
			if "t5_"+redditSubID(s.Name) == after {
				start = i + 1
				break
			}
		}
	}
	page := all[start:min(start+limit, len(all))]
	children := make([]any, 0, len(page))
	for _, s := range page {
		children = append(children, map[string]any{"kind": "t5", "data": redditT5(s)})
	}
	var next any
	if start+limit < len(all) && len(page) > 0 {
		next = "t5_" + redditSubID(page[len(page)-1].Name)
	}
	redditJSON(w, http.StatusOK, map[string]any{"kind": "Listing", "data": map[string]any{
		"after": next, "before": nil, "dist": len(children), "children": children, "modhash": nil}})
}

// sub is the community of that name: one of Options.Subreddits with its rules, or, for
// any other well-formed name, an open community that takes video. The sandbox's channel
// options tell users that any subreddit name works, as it does on Reddit for the communities
// that exist; a sandbox cannot list every community, so every well-formed name is one. A
// malformed name is no community (SUBREDDIT_NOEXIST, 404).
func (rd *Sim) sub(name string) *Subreddit {
	name = strings.TrimPrefix(strings.TrimPrefix(name, "r/"), "/r/")
	if s, ok := rd.subs[strings.ToLower(name)]; ok {
		return s
	}
	if rd.opts.OnlyListed || !redditValidName(name) {
		return nil
	}
	return &Subreddit{Name: name, Title: name, AllowVideos: true}
}

// redditValidName reports whether name can be a subreddit's: 3 to 21 letters, digits or
// underscores, as Reddit's community creation form requires (two-letter names exist from
// before that rule and are taken too).
func redditValidName(name string) bool {
	if len(name) < 2 || len(name) > 21 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func (rd *Sim) about(w http.ResponseWriter, _ sim.Account, name string) {
	s := rd.sub(name)
	if s == nil {
		redditJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "error": 404})
		return
	}
	redditJSON(w, http.StatusOK, map[string]any{"kind": "t5", "data": redditT5(s)})
}

func (rd *Sim) requirements(w http.ResponseWriter, name string) {
	s := rd.sub(name)
	if s == nil {
		redditJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "error": 404})
		return
	}
	intOrNil := func(n int) any {
		if n <= 0 {
			return nil
		}
		return n
	}
	redditJSON(w, http.StatusOK, map[string]any{
		"title_regexes": []string{}, "body_blacklisted_strings": []string{}, "title_blacklisted_strings": []string{},
		"body_text_max_length": nil, "title_required_strings": []string{}, "guidelines_text": nil,
		"gallery_min_items": nil, "domain_blacklist": []string{}, "domain_whitelist": []string{},
		"title_text_max_length": intOrNil(s.TitleMaxLength), "body_restriction_policy": "none",
		"link_restriction_policy": "none", "guidelines_display_policy": nil, "body_required_strings": []string{},
		"title_text_min_length": intOrNil(s.TitleMinLength), "gallery_captions_requirement": "none",
		"is_flair_required": s.FlairRequired, "gallery_max_items": nil, "gallery_urls_requirement": "none",
		"body_regexes": []string{}, "link_repost_age": nil, "body_text_min_length": nil,
	})
}

func (rd *Sim) flairs(w http.ResponseWriter, name string) {
	s := rd.sub(name)
	if s == nil {
		redditJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "error": 404})
		return
	}
	if len(s.Flairs) == 0 {
		// Reddit answers 403 when link flair is not enabled in the community.
		redditJSON(w, http.StatusForbidden, map[string]any{"message": "Forbidden", "error": 403})
		return
	}
	out := make([]any, 0, len(s.Flairs))
	for _, f := range s.Flairs {
		out = append(out, map[string]any{
			"id": f.ID, "text": f.Text, "text_editable": f.TextEditable, "mod_only": f.ModOnly,
			"type": "text", "allowable_content": "all", "max_emojis": 10, "richtext": []any{},
			"background_color": "", "text_color": "dark", "css_class": "",
		})
	}
	redditJSON(w, http.StatusOK, out)
}

// redditForm parses an application/x-www-form-urlencoded body; it reports whether it could.
func redditForm(r *http.Request) (url.Values, bool) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, false
	}
	v, err := url.ParseQuery(string(body))
	return v, err == nil
}

func redditErrors(w http.ResponseWriter, status int, errs ...[3]string) {
	list := make([]any, 0, len(errs))
	for _, e := range errs {
		list = append(list, []string{e[0], e[1], e[2]})
	}
	redditJSON(w, status, map[string]any{"json": map[string]any{"errors": list}})
}

// redditMimeExt are the media types asset.json leases, with the extension Reddit records.
var redditMimeExt = map[string]string{
	"video/mp4": "mp4", "video/quicktime": "mov", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
}

func (rd *Sim) lease(w http.ResponseWriter, r *http.Request, a sim.Account) {
	form, ok := redditForm(r)
	if !ok {
		redditErrors(w, http.StatusBadRequest, [3]string{"BAD_REQUEST", "the body must be application/x-www-form-urlencoded", ""})
		return
	}
	fp, mt := form.Get("filepath"), form.Get("mimetype")
	if fp == "" {
		redditErrors(w, http.StatusBadRequest, [3]string{"NO_TEXT", "we need something here", "filepath"})
		return
	}
	ext, ok := redditMimeExt[mt]
	if !ok {
		redditErrors(w, http.StatusBadRequest, [3]string{"INVALID_OPTION", "that option is not valid", "mimetype"})
		return
	}
	id := redditBase36(13)
	bucket, key, maxBytes := redditImageBucket, "rte_images/"+id, int64(redditMaxImageBytes)
	if strings.HasPrefix(mt, "video/") {
		bucket, key, maxBytes = redditVideoBucket, id, redditMaxVideoBytes
	}
	now := rd.cfg.Now().UTC()
	date := now.Format("20060102T150405Z")
	cred := "ASIASIMREDDIT" + strings.ToUpper(sim.RandomHex(4)) + "/" + now.Format("20060102") + "/us-east-1/s3/aws4_request"
	token := base64.StdEncoding.EncodeToString(sim.RandomBytes(48))
	expires := now.Add(redditLeaseTTL)
	policy := map[string]any{
		"expiration": expires.Format("2006-01-02T15:04:05Z"),
		"conditions": []any{
			map[string]string{"bucket": bucket}, map[string]string{"key": key},
			map[string]string{"acl": "public-read"}, map[string]string{"x-amz-storage-class": "STANDARD"},
			map[string]string{"x-amz-credential": cred}, map[string]string{"x-amz-algorithm": "AWS4-HMAC-SHA256"},
			map[string]string{"x-amz-date": date}, map[string]string{"x-amz-security-token": token},
			map[string]string{"success_action_status": "201"}, []any{"content-length-range", 0, maxBytes},
			map[string]string{"x-amz-meta-ext": ext}, map[string]string{"content-type": mt},
		},
	}
	raw, _ := json.Marshal(policy)
	policyB64 := base64.StdEncoding.EncodeToString(raw)
	// S3 signs the policy with the bucket's secret; here the signature is drawn at random and
	// the record keeps the hash of the policy with it, which verifies it just as well.
	signature := sim.RandomHex(32)
	wsToken := sim.RandomHex(20)
	wsSHA := sha256.Sum256([]byte(wsToken))
	o := redditObject{AssetID: id, Account: a, Bucket: bucket, Key: key, Mimetype: mt,
		PolicySHA: redditPolicySHA(policyB64, signature), WSTokenSHA: wsSHA[:]}
	err := rd.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		return sim.Save(tx, sim.Record{Key: redditKey(redditObjectKind, key), Account: a.ID, Expires: expires.Add(redditLeaseKeep)}, o)
	})
	if err != nil {
		redditInternal(w)
		return
	}
	fields := [][2]string{
		{"acl", "public-read"}, {"key", key}, {"X-Amz-Credential", cred}, {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
		{"X-Amz-Date", date}, {"success_action_status", "201"}, {"content-type", mt},
		{"x-amz-storage-class", "STANDARD"}, {"x-amz-meta-ext", ext}, {"policy", policyB64},
		{"X-Amz-Signature", signature}, {"x-amz-security-token", token},
	}
	fl := make([]any, 0, len(fields))
	for _, f := range fields {
		fl = append(fl, map[string]string{"name": f[0], "value": f[1]})
	}
	redditJSON(w, http.StatusOK, map[string]any{
		"args": map[string]any{"action": rd.actionBase + bucket, "fields": fl},
		"asset": map[string]any{"asset_id": id, "processing_state": "incomplete",
			"payload": map[string]any{"filepath": fp}, "websocket_url": rd.wsURL(key, wsToken)},
	})
}

// redditPolicySHA is what an object's record keeps of its lease's policy and signature.
func redditPolicySHA(policyB64, signature string) []byte {
	sum := sha256.Sum256([]byte(policyB64 + "\x00" + signature))
	return sum[:]
}

func (rd *Sim) wsURL(key, token string) string {
	return rd.wsBase + key + "?m=" + token
}

// objectURL is the URL of an uploaded object, as clients build it ("https:" + action + "/" +
// key on Reddit; here the scheme is Config.BaseURL's).
func (rd *Sim) objectURL(bucket, key string) string {
	scheme := "https:"
	if strings.HasPrefix(rd.cfg.BaseURL, "http:") {
		scheme = "http:"
	}
	return scheme + rd.actionBase + bucket + "/" + key
}

// s3 serves the upload buckets: POST /s3/{bucket} (a POST-policy form) and HEAD
// /s3/{bucket}/{key}.
func (rd *Sim) s3(w http.ResponseWriter, r *http.Request, rest string) {
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket != redditVideoBucket && bucket != redditImageBucket {
		drainReddit(r.Body)
		redditS3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist", nil)
		return
	}
	if key != "" {
		rd.s3Object(w, r, bucket, key)
		return
	}
	if r.Method != http.MethodPost {
		drainReddit(r.Body)
		w.Header().Set("Allow", http.MethodPost)
		redditS3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", nil)
		return
	}
	rd.s3Post(w, r, bucket)
}

func (rd *Sim) s3Object(w http.ResponseWriter, r *http.Request, bucket, key string) {
	o, _, found, err := sim.Load[redditObject](r.Context(), rd.cfg.State, redditKey(redditObjectKind, key))
	if err != nil {
		drainReddit(r.Body)
		redditS3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.", nil)
		return
	}
	exists := found && o.Bucket == bucket && o.Uploaded
	switch r.Method {
	case http.MethodHead:
		if !exists {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(o.Size, 10))
		w.Header().Set("Content-Type", o.Mimetype)
		w.Header().Set("ETag", `"`+o.ETag+`"`)
		w.WriteHeader(http.StatusOK)
	case http.MethodGet:
		if !exists {
			redditS3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.", map[string]string{"Key": key})
			return
		}
		redditS3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied (the simulator keeps no object bytes)", nil)
	default:
		drainReddit(r.Body)
		redditS3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.", nil)
	}
}

// s3Post checks a POST-policy upload and stores the object whole or not at all.
func (rd *Sim) s3Post(w http.ResponseWriter, r *http.Request, bucket string) {
	defer drainReddit(r.Body)
	if r.ContentLength < 0 {
		redditS3Error(w, http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header.", nil)
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		redditS3Error(w, http.StatusPreconditionFailed, "PreconditionFailed",
			"At least one of the pre-conditions you specified did not hold", map[string]string{"Condition": "Bucket POST must be of the enclosure-type multipart/form-data"})
		return
	}
	fields := map[string]string{} // lower-case names
	var (
		file     *os.File
		size     int64
		sha, md  hash.Hash
		fileSeen bool
		lease    redditObject
	)
	defer func() {
		if file != nil {
			_ = file.Close()
			_ = os.Remove(file.Name())
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			redditS3Error(w, http.StatusBadRequest, "IncompleteBody", "The request body terminated unexpectedly", nil)
			return
		}
		name := strings.ToLower(part.FormName())
		if name != "file" {
			if fileSeen {
				continue // S3 ignores fields after the file
			}
			v, err := io.ReadAll(io.LimitReader(part, 20<<10))
			if err != nil {
				redditS3Error(w, http.StatusBadRequest, "IncompleteBody", "The request body terminated unexpectedly", nil)
				return
			}
			fields[name] = string(v)
			continue
		}
		if fileSeen {
			continue
		}
		fileSeen = true
		// The policy is checked before any byte of the file is taken.
		l, code, status, msg := rd.checkPolicy(r.Context(), bucket, fields)
		if code != "" {
			redditS3Error(w, status, code, msg, nil)
			return
		}
		if sim.CallFault(l.Account.Behavior, rd.cfg.Rand) == sim.FailUnavailable {
			redditS3Error(w, http.StatusServiceUnavailable, "ServiceUnavailable", "Please reduce your request rate.", nil)
			return
		}
		lease = l
		limit := int64(redditMaxImageBytes)
		if bucket == redditVideoBucket {
			limit = redditMaxVideoBytes
		}
		file, err = os.CreateTemp("", "reelay-reddit-sim-*.upload")
		if err != nil {
			redditS3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.", nil)
			return
		}
		sha, md = sha256.New(), md5.New()
		n, err := io.CopyBuffer(io.MultiWriter(file, sha, md), io.LimitReader(part, limit+1), make([]byte, 256<<10))
		if err != nil {
			redditS3Error(w, http.StatusBadRequest, "IncompleteBody", "The request body terminated unexpectedly", nil)
			return
		}
		if n > limit {
			redditS3Error(w, http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size",
				map[string]string{"ProposedSize": strconv.FormatInt(r.ContentLength, 10), "MaxSizeAllowed": strconv.FormatInt(limit, 10)})
			return
		}
		size = n
	}
	if !fileSeen {
		redditS3Error(w, http.StatusBadRequest, "InvalidArgument", "POST requires exactly one file upload per request.",
			map[string]string{"ArgumentName": "file", "ArgumentValue": "0"})
		return
	}
	sum, etag := hex.EncodeToString(sha.Sum(nil)), hex.EncodeToString(md.Sum(nil))
	verdict := redditCheckMedia(file, size, bucket)
	key := redditKey(redditObjectKind, lease.Key)
	// The object is stored, and a video's upload recorded, in one transaction: all or nothing.
	err = rd.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		o, rec, found, err := sim.LoadTx[redditObject](tx, key)
		if err != nil {
			return err
		}
		if !found || !bytes.Equal(o.PolicySHA, lease.PolicySHA) {
			return errRedditLeaseGone
		}
		o.Uploaded, o.Size, o.SHA, o.ETag, o.Verdict = true, size, sum, etag, verdict
		rec.Expires = time.Time{}
		if bucket == redditVideoBucket {
			if err := sim.RecordTx(tx, platform.Reddit, sim.Upload{Account: o.Account.ID, Bytes: size, SHA256: sum}); err != nil {
				return err
			}
		}
		return sim.Save(tx, rec, o)
	})
	switch {
	case errors.Is(err, errRedditLeaseGone):
		redditS3Error(w, http.StatusForbidden, "AccessDenied", "Access Denied", nil)
		return
	case err != nil:
		redditS3Error(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.", nil)
		return
	}
	loc := rd.objectURL(bucket, url.PathEscape(lease.Key))
	w.Header().Set("Location", loc)
	w.Header().Set("ETag", `"`+etag+`"`)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusCreated)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<PostResponse><Location>%s</Location><Bucket>%s</Bucket><Key>%s</Key><ETag>"%s"</ETag></PostResponse>`,
		redditXMLEscape(loc), bucket, redditXMLEscape(lease.Key), etag)
}

// errRedditLeaseGone: the lease an upload was checked against ended before the object was
// stored.
var errRedditLeaseGone = errors.New("the lease is gone")

// checkPolicy applies S3's POST-policy rules to the fields sent before the file; code is ""
// when they pass, and o the leased object they upload.
func (rd *Sim) checkPolicy(ctx context.Context, bucket string, fields map[string]string) (o redditObject, code string, status int, msg string) {
	policyB64, sig := fields["policy"], fields["x-amz-signature"]
	if policyB64 == "" || sig == "" {
		return o, "AccessDenied", http.StatusForbidden, "Bucket POST must contain a field named 'policy' and 'X-Amz-Signature'"
	}
	// The lease is found by the key the policy names; the policy is the one issued when its
	// hash with the signature is the lease's. One that is not valid JSON was never issued.
	raw, err := base64.StdEncoding.DecodeString(policyB64)
	var policy struct {
		Expiration string            `json:"expiration"`
		Conditions []json.RawMessage `json:"conditions"`
	}
	conds := map[string]string{}
	if err == nil && json.Unmarshal(raw, &policy) == nil {
		for _, c := range policy.Conditions {
			var m map[string]string
			if json.Unmarshal(c, &m) == nil {
				for k, v := range m {
					conds[strings.ToLower(k)] = v
				}
			}
		}
	}
	found := false
	if conds["key"] != "" {
		if o, _, found, err = sim.Load[redditObject](ctx, rd.cfg.State, redditKey(redditObjectKind, conds["key"])); err != nil {
			return o, "InternalError", http.StatusInternalServerError, "We encountered an internal error. Please try again."
		}
	}
	if !found || subtle.ConstantTimeCompare(redditPolicySHA(policyB64, sig), o.PolicySHA) != 1 {
		return o, "SignatureDoesNotMatch", http.StatusForbidden,
			"The request signature we calculated does not match the signature you provided. Check your key and signing method."
	}
	exp, err := time.Parse("2006-01-02T15:04:05Z", policy.Expiration)
	if err != nil || !rd.cfg.Now().Before(exp) {
		return o, "AccessDenied", http.StatusForbidden, "Invalid according to Policy: Policy expired."
	}
	if conds["bucket"] != bucket {
		return o, "AccessDenied", http.StatusForbidden, `Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "` + conds["bucket"] + `"]`
	}
	for k, v := range conds {
		if k == "bucket" {
			continue
		}
		if got, ok := fields[k]; !ok || got != v {
			return o, "AccessDenied", http.StatusForbidden, `Invalid according to Policy: Policy Condition failed: ["eq", "$` + k + `", "` + v + `"]`
		}
	}
	for k := range fields {
		if k == "policy" || k == "x-amz-signature" || strings.HasPrefix(k, "x-ignore-") {
			continue
		}
		if _, ok := conds[k]; !ok {
			return o, "AccessDenied", http.StatusForbidden, "Invalid according to Policy: Extra input fields: " + k
		}
	}
	return o, "", 0, ""
}

// redditCheckMedia returns why Reddit's processing would fail on an object, or "".
func redditCheckMedia(f io.ReaderAt, size int64, bucket string) string {
	info, err := media.Probe(f, size)
	if bucket == redditImageBucket {
		if err != nil || (info.Kind.Name != "jpeg" && info.Kind.Name != "png") {
			return "the poster image is not a JPEG or PNG"
		}
		return ""
	}
	if err != nil || (info.Kind.Name != "mp4" && info.Kind.Name != "mov") {
		return "the video is not MP4 or MOV"
	}
	if info.VideoCodec != "h264" && info.VideoCodec != "hevc" {
		return "the video codec " + info.VideoCodec + " is not supported"
	}
	if info.Duration > redditMaxDuration {
		return "the video is longer than 15 minutes"
	}
	return ""
}

func redditS3Error(w http.ResponseWriter, status int, code, msg string, extra map[string]string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>" + code + "</Code><Message>" + redditXMLEscape(msg) + "</Message>")
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// ProposedSize comes before MaxSizeAllowed, as S3 writes them.
	slices.SortFunc(keys, func(a, b string) int {
		if a == "ProposedSize" {
			return -1
		}
		if b == "ProposedSize" {
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		b.WriteString("<" + k + ">" + redditXMLEscape(extra[k]) + "</" + k + ">")
	}
	b.WriteString("<RequestId>" + strings.ToUpper(sim.RandomHex(8)) + "</RequestId><HostId>" + base64.StdEncoding.EncodeToString(sim.RandomBytes(24)) + "</HostId></Error>")
	_, _ = io.WriteString(w, b.String())
}

func redditXMLEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func drainReddit(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, redditMaxVideoBytes+1<<20))
	_ = body.Close()
}

// redditBool reads Reddit's booleans ("true", "True", "1", "on", "yes").
func redditBool(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "" && v != "off" && v[0] != 'f' && v[0] != 'n' && v != "0"
}

// objectKeyOf resolves a URL the client built from a lease ("https:" + action + "/" + key) to
// the key of an object in bucket, "" when it names none.
func (rd *Sim) objectKeyOf(raw, bucket string) string {
	key, ok := strings.CutPrefix(raw, rd.objectURL(bucket, ""))
	if !ok || key == "" {
		return ""
	}
	if k, err := url.PathUnescape(key); err == nil {
		key = k
	}
	return key
}

// leasedTx reads, within tx, the object under key when the account leased it in bucket.
func leasedTx(tx sim.Tx, a sim.Account, bucket, key string) (redditObject, sim.Record, bool, error) {
	if key == "" {
		return redditObject{}, sim.Record{}, false, nil
	}
	o, rec, found, err := sim.LoadTx[redditObject](tx, redditKey(redditObjectKind, key))
	if err != nil || !found || o.Bucket != bucket || o.Account.ID != a.ID {
		return redditObject{}, rec, false, err
	}
	return o, rec, true, nil
}

// redditVerdict is why processing fails with the video and poster objects as they are, ""
// when it succeeds. Leased but never uploaded, either fails, as Reddit's processing does.
func redditVerdict(video, poster redditObject) string {
	switch {
	case !video.Uploaded:
		return "the video was never uploaded"
	case video.Verdict != "":
		return video.Verdict
	case !poster.Uploaded:
		return "the poster image was never uploaded"
	}
	return poster.Verdict
}

func (rd *Sim) submit(w http.ResponseWriter, r *http.Request, a sim.Account) {
	form, ok := redditForm(r)
	if !ok {
		redditErrors(w, http.StatusBadRequest, [3]string{"BAD_REQUEST", "the body must be application/x-www-form-urlencoded", ""})
		return
	}
	if form.Get("api_type") != "json" {
		redditErrors(w, http.StatusBadRequest, [3]string{"BAD_REQUEST", "this simulator answers api_type=json only", "api_type"})
		return
	}
	var errs [][3]string
	kind := form.Get("kind")
	if kind != "video" {
		errs = append(errs, [3]string{"INVALID_OPTION", "that option is not valid (this simulator takes kind=video)", "kind"})
	}
	sr := form.Get("sr")
	s := rd.sub(sr)
	switch {
	case sr == "":
		errs = append(errs, [3]string{"SUBREDDIT_REQUIRED", "please enter a community", "sr"})
	case s == nil:
		errs = append(errs, [3]string{"SUBREDDIT_NOEXIST", "that community doesn't exist", "sr"})
	}
	title := form.Get("title")
	switch {
	case strings.TrimSpace(title) == "":
		errs = append(errs, [3]string{"NO_TEXT", "we need something here", "title"})
	case !redditTitleLimit.Check(title):
		errs = append(errs, [3]string{"TOO_LONG", fmt.Sprintf("this is too long (max: %d)", redditTitleLimit.Max), "title"})
	case s != nil && s.TitleMaxLength > 0 && redditTitleLimit.Count(title) > s.TitleMaxLength:
		errs = append(errs, [3]string{"SUBMIT_VALIDATION_TITLE_TOO_LONG", fmt.Sprintf("Title must be at most %d characters", s.TitleMaxLength), "title"})
	case s != nil && s.TitleMinLength > 0 && redditTitleLimit.Count(title) < s.TitleMinLength:
		errs = append(errs, [3]string{"SUBMIT_VALIDATION_TITLE_TOO_SHORT", fmt.Sprintf("Title must be at least %d characters", s.TitleMinLength), "title"})
	}
	if s != nil && kind == "video" {
		if !s.AllowVideos || s.SubmissionType == "self" {
			errs = append(errs, [3]string{"NO_VIDEOS", "This community doesn't allow videos", "sr"})
		}
	}
	flairID := form.Get("flair_id")
	if s != nil {
		var tmpl *Flair
		for i := range s.Flairs {
			if s.Flairs[i].ID == flairID && !s.Flairs[i].ModOnly {
				tmpl = &s.Flairs[i]
			}
		}
		switch {
		case flairID != "" && tmpl == nil:
			errs = append(errs, [3]string{"BAD_FLAIR_TEMPLATE_ID", "That flair template is not available in this community", "flair"})
		case flairID == "" && s.FlairRequired:
			errs = append(errs, [3]string{"SUBMIT_VALIDATION_FLAIR_REQUIRED", "Your post must contain post flair.", "flair"})
		}
	}
	videoURL, posterURL := form.Get("url"), form.Get("video_poster_url")
	videoKey, posterKey := rd.objectKeyOf(videoURL, redditVideoBucket), rd.objectKeyOf(posterURL, redditImageBucket)
	now := rd.cfg.Now()
	processing := rd.opts.DefaultProcessing
	if ms := a.Behavior.ProcessingMS; ms >= 0 {
		processing = time.Duration(ms) * time.Millisecond
	}
	sub := redditSubmission{ID: sim.RandomHex(8), Account: a, Title: title, Spoiler: redditBool(form.Get("spoiler")),
		SendReplies: true, FlairID: flairID, VideoKey: videoKey, VideoURL: videoURL, PosterURL: posterURL,
		Submitted: now, ReadyAt: now.Add(processing), Status: "processing"}
	if s != nil {
		sub.Subreddit, sub.NSFW = s.Name, redditBool(form.Get("nsfw")) || s.Over18
		for _, f := range s.Flairs {
			if f.ID == flairID {
				sub.FlairText = f.Text
				if f.TextEditable && form.Get("flair_text") != "" {
					sub.FlairText = form.Get("flair_text")
				}
			}
		}
	}
	if v, ok := form["sendreplies"]; ok {
		sub.SendReplies = redditBool(v[0])
	}
	wsToken := sim.RandomHex(20)
	wsSHA := sha256.Sum256([]byte(wsToken))
	var refused [][3]string
	// The objects are read within the submit's transaction: the submission is added to the
	// video's, where its websockets, at any process, look for it.
	err := rd.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		refused = slices.Clone(errs)
		video, vrec, found, err := leasedTx(tx, a, redditVideoBucket, videoKey)
		if err != nil {
			return err
		}
		if !found {
			refused = append(refused, [3]string{"BAD_URL", "you should check that url", "url"})
		}
		poster, _, found, err := leasedTx(tx, a, redditImageBucket, posterKey)
		if err != nil {
			return err
		}
		if !found {
			refused = append(refused, [3]string{"BAD_URL", "you should check that url", "video_poster_url"})
		}
		if len(refused) > 0 {
			return nil
		}
		s := sub
		s.AssetID, s.SHA, s.Verdict, s.Listened = video.AssetID, video.SHA, redditVerdict(video, poster), video.listening(time.Now())
		video.Submissions = append(video.Submissions, redditSubmitted{ID: s.ID, ReadyAt: s.ReadyAt, WSTokenSHA: wsSHA[:]})
		vrec.Expires = time.Time{}
		if err := sim.Save(tx, vrec, video); err != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: redditKey(redditSubmissionKind, s.ID), Account: a.ID}, s)
	})
	switch {
	case err != nil:
		redditInternal(w)
		return
	case len(refused) > 0:
		redditErrors(w, http.StatusOK, refused...)
		return
	}
	redditJSON(w, http.StatusOK, map[string]any{"json": map[string]any{"errors": []any{}, "data": map[string]any{
		"user_submitted_page": "https://www.reddit.com/user/" + redditName(a) + "/submitted/",
		"websocket_url":       rd.wsURL(videoKey, wsToken),
	}}})
}

// redditDue reports whether a submission's processing is over and its result not yet made.
func redditDue(s redditSubmission, now time.Time) bool {
	return s.Status == "processing" && !now.Before(s.ReadyAt)
}

// settle ends, within tx, the processing of a submission that is due: the post is made, named
// by its id and recorded as published, or the submission fails.
func (rd *Sim) settle(tx sim.Tx, s *redditSubmission, now time.Time) error {
	if !redditDue(*s, now) {
		return nil
	}
	if s.Account.Behavior.Fail == sim.FailReject || s.Verdict != "" {
		s.Status = "failed"
		return nil
	}
	id, err := redditNewPostID(tx)
	if err != nil {
		return err
	}
	s.Status, s.PostID = "success", id
	s.Permalink = "/r/" + s.Subreddit + "/comments/" + id + "/" + redditSlug(s.Title) + "/"
	if err := sim.Save(tx, sim.Record{Key: redditKey(redditPostKind, id), Account: s.Account.ID}, redditPostRef{Submission: s.ID}); err != nil {
		return err
	}
	return sim.RecordTx(tx, platform.Reddit, sim.Published{Account: s.Account.ID, ID: "t3_" + id,
		URL: "https://www.reddit.com" + s.Permalink, SHA256: s.SHA, Text: s.Title})
}

// redditNewPostID draws a post id no post has.
func redditNewPostID(tx sim.Tx) (string, error) {
	for {
		id := redditBase36(7)
		_, found, err := tx.Get(redditKey(redditPostKind, id))
		if err != nil || !found {
			return id, err
		}
	}
}

// submission reads a submission. One whose processing is over gets its result, written by
// whichever request (at any process) sees it first.
func (rd *Sim) submission(ctx context.Context, id string) (redditSubmission, bool, error) {
	now := rd.cfg.Now()
	return sim.LoadAdvanced(ctx, rd.cfg.State, redditKey(redditSubmissionKind, id),
		func(s redditSubmission) bool { return redditDue(s, now) },
		func(tx sim.Tx, s *redditSubmission) error { return rd.settle(tx, s, now) })
}

// redditSlug is the title part of a permalink: lower-case words joined by underscores, at
// most 50 characters.
func redditSlug(title string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(title) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
		} else {
			sep = true
		}
		if b.Len() >= 50 {
			break
		}
	}
	if b.Len() == 0 {
		return "video"
	}
	return b.String()
}

func redditBase36(n int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := sim.RandomBytes(n)
	for i := range b {
		b[i] = digits[int(b[i])%36]
	}
	if b[0] >= '0' && b[0] <= '9' {
		b[0] = 'a' + b[0]%26
	}
	return string(b)
}

func (rd *Sim) submitted(w http.ResponseWriter, r *http.Request, a sim.Account, name string) {
	ctx := r.Context()
	q := r.URL.Query()
	limit := 25
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
		limit = min(n, 100)
	}
	// Reddit's names are unique: the account's own name lists its submissions, any other name
	// those of every account that bears it.
	account := ""
	if strings.EqualFold(redditName(a), name) {
		account = a.ID
	}
	subs, err := sim.ListJSON[redditSubmission](ctx, rd.cfg.State, redditKey(redditSubmissionKind, ""), account)
	if err != nil {
		redditInternal(w)
		return
	}
	now := rd.cfg.Now()
	var posts []redditSubmission // newest first
	for i := len(subs) - 1; i >= 0; i-- {
		s := subs[i]
		if !strings.EqualFold(redditName(s.Account), name) {
			continue
		}
		if redditDue(s, now) {
			if s, _, err = rd.submission(ctx, s.ID); err != nil {
				redditInternal(w)
				return
			}
		}
		if s.Status == "success" {
			posts = append(posts, s)
		}
	}
	start := 0
	if after := q.Get("after"); after != "" {
		start = len(posts)
		for i, s := range posts {
			if "t3_"+s.PostID == after {
				start = i + 1
				break
			}
		}
	}
	page := posts[start:min(start+limit, len(posts))]
	children := make([]any, 0, len(page))
	for i := range page {
		children = append(children, map[string]any{"kind": "t3", "data": redditT3(&page[i], now)})
	}
	var next any
	if start+limit < len(posts) && len(page) > 0 {
		next = "t3_" + page[len(page)-1].PostID
	}
	redditJSON(w, http.StatusOK, map[string]any{"kind": "Listing", "data": map[string]any{
		"after": next, "before": nil, "dist": len(children), "children": children, "modhash": nil}})
}

// serveWebsocket serves /ws/{key}?m=...: it sends the result of the asset's processing to
// connections that were open when it ended, then closes.
func (rd *Sim) serveWebsocket(w http.ResponseWriter, r *http.Request, key string) {
	okey := redditKey(redditObjectKind, key)
	o, _, found, err := sim.Load[redditObject](r.Context(), rd.cfg.State, okey)
	switch {
	case err != nil:
		w.WriteHeader(http.StatusInternalServerError)
		return
	case key == "" || !found || !o.wsAllowed(r.URL.Query().Get("m")):
		w.WriteHeader(http.StatusForbidden)
		return
	}
	connected := rd.cfg.Now()
	// Marked before the handshake completes, so that a submit right after the client's dial,
	// at any process, sees the listener.
	conn := sim.RandomHex(8)
	if err := rd.listen(r.Context(), okey, conn, true); err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rd.listen(ctx, okey, conn, false)
	}()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	// The request's context, which a hijacked connection keeps: the server's shutdown, which
	// does not wait for hijacked connections, ends it when it cancels its requests.
	ctx := c.CloseRead(r.Context())
	tick := time.NewTicker(rd.opts.Tick)
	defer tick.Stop()
	renewed := time.Now()
	for {
		if msg, ok := rd.result(ctx, key, connected); ok {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := c.Write(wctx, websocket.MessageText, msg)
			cancel()
			if err == nil {
				_ = c.Close(websocket.StatusNormalClosure, "")
			}
			return
		}
		if time.Since(renewed) >= redditListenRenew {
			_ = rd.listen(ctx, okey, conn, true)
			renewed = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// listen marks the websocket connection conn as listening to the object under key (on), or
// no longer (off), dropping the marks of connections whose process stopped renewing them.
func (rd *Sim) listen(ctx context.Context, key sim.Key, conn string, on bool) error {
	now := time.Now()
	return rd.cfg.State.Update(ctx, func(tx sim.Tx) error {
		o, rec, found, err := sim.LoadTx[redditObject](tx, key)
		if err != nil || !found {
			return err
		}
		for id, lapse := range o.Listeners {
			if !now.Before(lapse) {
				delete(o.Listeners, id)
			}
		}
		if on {
			if o.Listeners == nil {
				o.Listeners = map[string]time.Time{}
			}
			o.Listeners[conn] = now.Add(redditListenLapse)
		} else {
			delete(o.Listeners, conn)
		}
		return sim.Save(tx, rec, o)
	})
}

// result is the websocket message of the first submission of the asset under key that ended
// after the connection opened, if any.
//
// A connection learns of its asset's submissions from the State at each tick, not from this
// process: the submit, and the end of processing, may be written by any process serving the
// simulator (another API process, or the one before a restart), and the State tells no one of
// a change. The read is one record by its key, made only while a connection waits for a
// processing to end; the submission itself is read once the clock has passed its end, which
// settles it or finds it settled by whichever process saw it first.
func (rd *Sim) result(ctx context.Context, key string, connected time.Time) ([]byte, bool) {
	o, _, found, err := sim.Load[redditObject](ctx, rd.cfg.State, redditKey(redditObjectKind, key))
	if err != nil || !found {
		return nil, false
	}
	now := rd.cfg.Now()
	for _, sm := range o.Submissions {
		if sm.ReadyAt.Before(connected) || now.Before(sm.ReadyAt) {
			continue
		}
		s, found, err := rd.submission(ctx, sm.ID)
		if err != nil || !found || s.Status == "processing" {
			continue
		}
		if s.Status == "failed" {
			b, _ := json.Marshal(map[string]any{"type": "failed"})
			return b, true
		}
		b, _ := json.Marshal(map[string]any{"type": "success", "payload": map[string]any{
			"redirect": "https://www.reddit.com" + s.Permalink}})
		return b, true
	}
	return nil, false
}

var _ http.Handler = (*Sim)(nil)
