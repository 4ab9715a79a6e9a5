// Package bluesky publishes video to Bluesky (AT Protocol) with an app password.
//
// It speaks XRPC over plain net/http. The official Go SDK (github.com/bluesky-social/indigo)
// would bring a very large dependency tree for the handful of JSON calls used here:
// com.atproto.server.createSession / refreshSession / getServiceAuth,
// com.atproto.repo.createRecord / getRecord / uploadBlob, app.bsky.actor.getProfile and the
// video service's app.bsky.video.getUploadLimits / uploadVideo / getJobStatus.
//
// A destination goes through these steps, one per Step call; the State returned is stored
// before the next, and it never holds a token or password:
//
//  1. start: the text (bluesky.text, else the caption, else the title) and the video are checked
//     against Bluesky's limits; the session is opened (or reused, see xrpc.go); the video
//     service's getUploadLimits (with a service token for the video service) refuses a spent
//     daily allowance (quota_exceeded) or an account that may not upload video
//     (invalid_options, e.g. an unverified e-mail address).
//  2. upload: a service token for the account's PDS (lxm com.atproto.repo.uploadBlob, 30
//     minutes) authorizes POST {video service}/xrpc/app.bsky.video.uploadVideo?did=&name= with
//     the raw video streamed from storage → the job id. The video service knows every video an
//     account sent it: the same bytes again answer 409 already_exists with the first job's id.
//     That is how a Step repeated after a crash during the upload resumes without a second
//     job. Without a video service (Config.Upload = UploadBlob, Config.VideoServiceURL "none",
//     a service that answers that nothing serves the video methods, or one that cannot be
//     reached) the video goes to com.atproto.repo.uploadBlob on the PDS, which answers the blob
//     at once. The choice is stored in State.Upload, so a Step repeated after a crash keeps it.
//  3. processing: app.bsky.video.getJobStatus?jobId= is polled with a capped, doubling interval
//     until the job has its blob (JOB_STATE_COMPLETED, or any state carrying a blob, as the
//     docs advise for already_exists) or fails (JOB_STATE_FAILED → media_rejected with the
//     service's message). The record key (a TID) and createdAt of the post are chosen then, and
//     stored before the post is attempted.
//  4. post: com.atproto.repo.createRecord with that rkey. A PDS refuses a second record under
//     the same key, so a create repeated after a crash cannot post twice; whenever a create
//     fails or its answer is lost, com.atproto.repo.getRecord tells whether the post is there
//     with this blob and text, and if so that is the outcome.
//
// The outcome's ExternalID is the post's at:// URI; its URL is
// https://bsky.app/profile/{handle}/post/{rkey}.
//
// Where things live: the PDS is the channel's pds_url (default https://bsky.social), the video
// service Config.VideoServiceURL (default https://video.bsky.app, did:web:video.bsky.app;
// "none" for none). A destination with BaseURL (a sandbox channel) has both at BaseURL: the
// XRPC method names do not collide.
//
// A self-hosted PDS may have neither an AppView nor a video service (the reference PDS,
// @atproto/pds, proxies app.bsky.* calls to the AppView of its PDS_BSKY_APP_VIEW_URL and, with
// none, answers 400 InvalidRequest "No service configured for <method>": packages/pds/src/
// pipethrough.ts in github.com/bluesky-social/atproto). Then the account is named from its
// session (createSession answers the DID and handle) and the video goes to uploadBlob, which
// the PDS bounds by its blob limit (PDS_BLOB_UPLOAD_LIMIT, 5 MiB by default: packages/pds/src/
// config/config.ts; beyond it 413 PayloadTooLarge).
//
// Errors: XRPC answers {"error","message"}. ExpiredToken renews the session (refreshSession,
// else createSession) once; a refused app password or token after that is auth_expired; 429 or
// RateLimitExceeded is rate_limited with the wait from Retry-After or ratelimit-reset; 5xx and
// network failures are transient upstream_unavailable; a refused video is media_rejected, a
// refused record invalid_options.
package bluesky

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// Defaults of Config.
const (
	DefaultPDS             = "https://bsky.social"
	DefaultVideoServiceURL = "https://video.bsky.app"
	DefaultVideoServiceDID = "did:web:video.bsky.app"
	DefaultAppURL          = "https://bsky.app"
)

// NoVideoService as Config.VideoServiceURL says that there is no video service.
const NoVideoService = "none"

// ReferenceBlobLimit is the reference PDS's default blob upload limit, 5 MiB
// (PDS_BLOB_UPLOAD_LIMIT; packages/pds/src/config/config.ts in github.com/bluesky-social/atproto).
const ReferenceBlobLimit = 5 << 20

// Upload methods of Config.Upload.
const (
	// UploadVideoService sends the video to the video service, which processes it and stores
	// the result on the PDS before the post exists (what Bluesky recommends).
	UploadVideoService = "video_service"
	// UploadBlob sends the video to the PDS with com.atproto.repo.uploadBlob (for networks
	// without a video service; the video is processed only once the post is seen).
	UploadBlob = "blob"
)

// Job states of app.bsky.video.defs#jobStatus; any other state means "in progress".
const (
	JobCompleted = "JOB_STATE_COMPLETED"
	JobFailed    = "JOB_STATE_FAILED"
)

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the PDS of channels without pds_url (DefaultPDS). A destination's BaseURL wins
	// over it and over pds_url, and then serves the video service too.
	BaseURL string
	// VideoServiceURL and VideoServiceDID locate the video service of channels that are not
	// sandbox channels (DefaultVideoServiceURL; the DID is the URL's did:web). VideoServiceURL
	// NoVideoService means there is none: their videos go to the PDS with uploadBlob.
	VideoServiceURL string
	VideoServiceDID string
	// AppURL is the web app the post links point to (DefaultAppURL).
	AppURL string
	// Upload is UploadVideoService (default) or UploadBlob.
	Upload string
	// HTTPClient makes every request (provider.NewHTTPClient(0) when nil).
	HTTPClient *http.Client
	// APITimeout bounds each JSON call (30 s); uploads are bounded by their context.
	APITimeout time.Duration
	// PollInitial and PollMax bound the wait between job status polls (1 s doubling every
	// second poll, at most 15 s).
	PollInitial, PollMax time.Duration
	// JobTimeout is how long a video job may stay in progress before the destination fails
	// (30 minutes).
	JobTimeout time.Duration
	// ServiceAuthTTL is the lifetime asked for the upload's service token (30 minutes, as
	// Bluesky's video guide recommends; the PDS allows at most an hour).
	ServiceAuthTTL time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// CheckVideoService checks a Config.VideoServiceURL setting: "" (the default), NoVideoService,
// or an absolute http(s) URL.
func CheckVideoService(s string) error {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, NoVideoService) {
		return nil
	}
	if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is neither an http(s) URL nor %q", s, NoVideoService)
	}
	return nil
}

// Provider is Bluesky's provider.Provider.
type Provider struct {
	cfg Config

	mu       sync.Mutex
	sessions map[string]*session
}

// The contract the Provider keeps (internal/provider), checked by the compiler: app.New
// finds these abilities by asking.
var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.Identifier    = (*Provider)(nil)
	_ provider.OptionsReader = (*Provider)(nil)
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// New returns a Bluesky provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, DefaultPDS)
	if strings.EqualFold(strings.TrimSpace(cfg.VideoServiceURL), NoVideoService) {
		cfg.VideoServiceURL, cfg.VideoServiceDID = NoVideoService, ""
	} else {
		cfg.VideoServiceURL = provider.BaseURL(cfg.VideoServiceURL, DefaultVideoServiceURL)
		cfg.VideoServiceDID = cmp.Or(cfg.VideoServiceDID, didWeb(cfg.VideoServiceURL), DefaultVideoServiceDID)
	}
	cfg.AppURL = provider.BaseURL(cfg.AppURL, DefaultAppURL)
	cfg.Upload = cmp.Or(cfg.Upload, UploadVideoService)
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, time.Second)
	cfg.PollMax = provider.Positive(cfg.PollMax, 15*time.Second)
	cfg.JobTimeout = provider.Positive(cfg.JobTimeout, 30*time.Minute)
	cfg.ServiceAuthTTL = provider.Positive(cfg.ServiceAuthTTL, 30*time.Minute)
	cfg.Now = provider.Clock(cfg.Now)
	return &Provider{cfg: cfg, sessions: map[string]*session{}}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.Bluesky }

// Phases of State.
const (
	phaseStart      = ""
	phaseUpload     = "upload"
	phaseProcessing = "processing"
	phasePost       = "post"
	phaseDone       = "done"
)

// Blob is an atproto blob reference: {"$type":"blob","ref":{"$link":cid},"mimeType","size"}.
type Blob struct {
	Type     string  `json:"$type"`
	Ref      BlobRef `json:"ref"`
	MimeType string  `json:"mimeType"`
	Size     int64   `json:"size"`
}

// BlobRef is a blob's CID link.
type BlobRef struct {
	Link string `json:"$link"`
}

// State is what the publisher stores between Steps. It holds no secrets.
type State struct {
	Phase string `json:"phase,omitempty"`
	// Upload is the upload method chosen at the start (video_service or blob).
	Upload string `json:"upload,omitempty"`
	DID    string `json:"did,omitempty"`
	Handle string `json:"handle,omitempty"`
	// JobID is the video service's job, once the upload was answered.
	JobID      string    `json:"job_id,omitempty"`
	UploadedAt time.Time `json:"uploaded_at,omitzero"`
	Polls      int       `json:"polls,omitempty"`
	// Restarts counts uploads begun again because the video service forgot a job.
	Restarts int   `json:"restarts,omitempty"`
	Blob     *Blob `json:"blob,omitempty"`
	// Rkey and CreatedAt are chosen before the post is created, so that a create repeated after
	// a crash is the same record under the same key.
	Rkey      string `json:"rkey,omitempty"`
	CreatedAt string `json:"created_at,omitempty"`
	// The outcome, once done.
	URI string `json:"uri,omitempty"`
	CID string `json:"cid,omitempty"`
	URL string `json:"url,omitempty"`
}

func parseOptions(raw json.RawMessage) (Options, error) {
	var o Options
	if err := provider.UnmarshalStored(raw, &o); err != nil {
		return o, fmt.Errorf("bluesky options: %w", err)
	}
	return o, nil
}

// postText is the post's text: bluesky.text, else the caption, else the title.
func postText(d *provider.Destination, o Options) string {
	return d.Text(o.Text)
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "Bluesky", &st); err != nil {
		return provider.Outcome{}, err
	}
	if st.Phase == phaseDone {
		return st.outcome(), nil
	}
	opts, err := parseOptions(d.Options)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	text := postText(d, opts)
	c, err := p.channelOf(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, d, c, text)
	case phaseUpload:
		return p.upload(ctx, d, c, st)
	case phaseProcessing:
		return p.poll(ctx, c, st)
	case phasePost:
		return p.post(ctx, d, c, st, text)
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored Bluesky state has unknown phase %q", st.Phase)
}

// checkText applies the post record's limits: 300 graphemes and 3000 UTF-8 bytes.
func checkText(text string) error {
	caps := Description.Capabilities
	lim := caps.Text["text"]
	if n := lim.Count(text); n > lim.Max {
		return provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Bluesky text is %d graphemes long; Bluesky accepts at most %d", n, lim.Max)
	}
	if len(text) > lim.MaxBytes {
		return provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Bluesky text is %d bytes long in UTF-8; Bluesky accepts at most %d", len(text), lim.MaxBytes)
	}
	if !utf8.ValidString(text) {
		return provider.Permanent(provider.CategoryInvalidOptions, 0, "the Bluesky text is not valid UTF-8")
	}
	return nil
}

// videoType returns the Content-Type the video is uploaded with.
func videoType(ct string) (string, error) {
	if ct == "" {
		return "video/mp4", nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "video/mp4" {
		return mt, nil
	}
	return "", fmt.Errorf("Bluesky takes MP4 video (app.bsky.embed.video accepts video/mp4), not %s", ct)
}

// start checks what can be checked before Bluesky is asked, opens the session and reads the
// account's video allowance. Nothing is uploaded in this step.
func (p *Provider) start(ctx context.Context, d *provider.Destination, c channel, text string) (provider.Outcome, error) {
	if err := checkText(text); err != nil {
		return provider.Outcome{}, err
	}
	caps := Description.Capabilities
	v := d.Video
	if v.Size <= 0 || v.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	if caps.MaxVideoBytes > 0 && v.Size > caps.MaxVideoBytes {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %d bytes; Bluesky accepts at most %d", v.Size, caps.MaxVideoBytes)
	}
	if maxDur := time.Duration(caps.MaxDurationSeconds * float64(time.Second)); maxDur > 0 && v.Duration > maxDur {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video lasts %s; Bluesky accepts at most %s", v.Duration, maxDur)
	}
	if _, err := videoType(v.ContentType); err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%v", err)
	}
	s, err := p.session(ctx, c)
	if err != nil {
		return provider.Outcome{}, err
	}
	st := State{Phase: phaseUpload, Upload: p.cfg.Upload}
	if c.video == "" {
		st.Upload = UploadBlob
	}
	st.DID, st.Handle = s.identity()
	if st.Upload == UploadVideoService {
		lim, err := p.uploadLimits(ctx, c, s)
		switch {
		case errors.Is(err, errNoVideoService):
			st.Upload = UploadBlob
		case err != nil:
			return provider.Outcome{}, classifyXRPC(err, provider.CategoryInvalidOptions)
		default:
			if err := lim.check(v.Size); err != nil {
				return provider.Outcome{}, err
			}
		}
	}
	return st.next(provider.StatusUploading, 0), nil
}

func (s *session) identity() (did, handle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.did, s.handle
}

// UploadLimits is app.bsky.video.getUploadLimits's answer.
type UploadLimits struct {
	CanUpload            bool   `json:"canUpload"`
	RemainingDailyVideos *int64 `json:"remainingDailyVideos,omitempty"`
	RemainingDailyBytes  *int64 `json:"remainingDailyBytes,omitempty"`
	Message              string `json:"message,omitempty"`
	Error                string `json:"error,omitempty"`
}

// check refuses an upload of size bytes that the allowance does not cover.
func (l UploadLimits) check(size int64) error {
	why := strings.TrimSpace(strings.Join(nonEmpty(l.Message, l.Error), ": "))
	spent := (l.RemainingDailyVideos != nil && *l.RemainingDailyVideos <= 0) ||
		(l.RemainingDailyBytes != nil && *l.RemainingDailyBytes < size)
	switch {
	case spent:
		if why == "" {
			why = "the daily video allowance (25 videos or 10 GB) is spent"
		}
		return provider.Permanent(provider.CategoryQuotaExceeded, 0, "Bluesky video upload limit: %s", why)
	case !l.CanUpload:
		if why == "" {
			why = "this account may not upload video now"
		}
		return provider.Permanent(provider.CategoryInvalidOptions, 0,
			"Bluesky refuses video uploads for this account: %s (video needs a verified e-mail address)", why)
	}
	return nil
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// errNoVideoService marks a network without a video service (the method is unknown there).
var errNoVideoService = errors.New("no Bluesky video service")

// noService reports an answer saying that nothing serves the method: unknown there (404, 501
// MethodNotImplemented, XRPCNotSupported), or a PDS without the service it would proxy the
// method to (400 InvalidRequest "No service configured for app.bsky.…", the reference PDS's
// words in packages/pds/src/pipethrough.ts, github.com/bluesky-social/atproto).
func noService(err error) bool {
	var xe *xrpcError
	if !errors.As(err, &xe) {
		return false
	}
	return xe.Status == http.StatusNotFound || xe.Status == http.StatusNotImplemented ||
		xe.Name == "MethodNotImplemented" || xe.Name == "XRPCNotSupported" ||
		(xe.Status == http.StatusBadRequest && strings.HasPrefix(xe.Message, "No service configured for "))
}

// noVideoService reports that the video service is not there: nothing serves its methods
// (noService), or its host cannot be reached at all (its name does not resolve, or nothing
// takes the connection). Only a failure before a connection was made counts: once one was,
// the service may have taken the video, and the error is transient as any other.
func noVideoService(err error) bool {
	if noService(err) {
		return true
	}
	var dns *net.DNSError
	var op *net.OpError
	return errors.As(err, &dns) || (errors.As(err, &op) && op.Op == "dial")
}

// serviceToken asks the PDS for a service token for aud and lxm.
func (p *Provider) serviceToken(ctx context.Context, c channel, s *session, aud, lxm string, ttl time.Duration) (string, error) {
	q := url.Values{"aud": {aud}, "lxm": {lxm}}
	if ttl > 0 {
		q.Set("exp", fmt.Sprint(p.cfg.Now().Add(ttl).Unix()))
	}
	var out struct {
		Token string `json:"token"`
	}
	// A GET: asking again changes nothing (each answer is a token of its own).
	err := p.repeat(ctx, provider.CategoryInternal, func() error {
		return p.authed(ctx, c, s, request{method: http.MethodGet, base: c.pds, nsid: nsidGetServiceAuth, query: q}, &out)
	})
	if err != nil {
		return "", err
	}
	if out.Token == "" {
		return "", provider.Permanent(provider.CategoryInternal, http.StatusOK, "Bluesky getServiceAuth answered without a token")
	}
	return out.Token, nil
}

// uploadLimits reads the account's video allowance from the video service.
func (p *Provider) uploadLimits(ctx context.Context, c channel, s *session) (UploadLimits, error) {
	var l UploadLimits
	tok, err := p.serviceToken(ctx, c, s, c.videoDID, nsidGetUploadLimits, 0)
	if err != nil {
		return l, err
	}
	// A GET: asking again changes nothing.
	err = p.repeat(ctx, provider.CategoryInternal, func() error {
		return p.do(ctx, request{method: http.MethodGet, base: c.video, nsid: nsidGetUploadLimits, bearer: tok}, &l)
	})
	if err != nil && noVideoService(err) {
		return l, errNoVideoService
	}
	return l, err
}

// JobStatus is app.bsky.video.defs#jobStatus.
type JobStatus struct {
	JobID    string `json:"jobId"`
	DID      string `json:"did"`
	State    string `json:"state"`
	Progress int    `json:"progress,omitempty"`
	Blob     *Blob  `json:"blob,omitempty"`
	Error    string `json:"error,omitempty"`
	Message  string `json:"message,omitempty"`
}

// parseJobStatus reads a jobStatus either bare (what video.bsky.app answers uploadVideo with,
// bluesky-social/atproto#3026) or wrapped in {"jobStatus":...} (the lexicon's shape, and
// getJobStatus's).
func parseJobStatus(raw []byte) (JobStatus, bool) {
	var w struct {
		JobStatus *JobStatus `json:"jobStatus"`
	}
	if json.Unmarshal(raw, &w) == nil && w.JobStatus != nil {
		return *w.JobStatus, true
	}
	var js JobStatus
	if json.Unmarshal(raw, &js) == nil && (js.JobID != "" || js.State != "" || js.Error != "") {
		return js, true
	}
	return js, false
}

func (p *Provider) openVideo(ctx context.Context, d *provider.Destination) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := d.Video.Open(ctx, 0)
		if err != nil {
			return nil, err
		}
		// The request must not read past the declared length.
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(rc, d.Video.Size), rc}, nil
	}
}

// upload sends the video: to the video service (→ job id) or to the PDS (→ blob).
func (p *Provider) upload(ctx context.Context, d *provider.Destination, c channel, st State) (provider.Outcome, error) {
	s, err := p.session(ctx, c)
	if err != nil {
		return provider.Outcome{}, err
	}
	ctype, err := videoType(d.Video.ContentType)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%v", err)
	}
	if c.video == "" {
		// The setting became "none" since the start: there is no service to send to.
		st.Upload = UploadBlob
	}
	if st.Upload == UploadBlob {
		var out struct {
			Blob *Blob `json:"blob"`
		}
		// A blob is stored under the CID of its bytes, so the same video again is the same blob,
		// and one that no record references is deleted after a while ("The blob will be deleted
		// if it is not referenced within a time window", docs.bsky.app/docs/api/
		// com-atproto-repo-upload-blob).
		err := p.repeat(ctx, provider.CategoryMediaRejected, func() error {
			return p.authed(ctx, c, s, request{method: http.MethodPost, base: c.pds, nsid: nsidUploadBlob,
				open: p.openVideo(ctx, d), contentType: ctype, size: d.Video.Size, timeout: -1}, &out)
		})
		var xe *xrpcError
		if errors.As(err, &xe) && (xe.Status == http.StatusRequestEntityTooLarge || xe.Name == "BlobTooLarge") {
			// The PDS does not say its limit; the reference PDS's is PDS_BLOB_UPLOAD_LIMIT, 5 MiB
			// unless its operator set another (packages/pds/src/config/config.ts, env.ts in
			// github.com/bluesky-social/atproto). Sending it again cannot help.
			return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, xe.Status,
				"the PDS at %s refused the %d-byte video as too large (%s): a PDS takes blobs up to its upload limit, "+
					"which on the reference PDS is PDS_BLOB_UPLOAD_LIMIT, %d bytes (5 MiB) unless its operator set it higher; "+
					"send a smaller video, have the limit raised, or use a video service (--bluesky-video-service)",
				c.pds, d.Video.Size, xe.Error(), ReferenceBlobLimit)
		}
		if err != nil {
			return provider.Outcome{}, classifyXRPC(err, provider.CategoryMediaRejected)
		}
		if out.Blob == nil || out.Blob.Ref.Link == "" {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusOK, "Bluesky uploadBlob answered without a blob")
		}
		st.UploadedAt = p.cfg.Now()
		return p.ready(st, out.Blob), nil
	}

	s.mu.Lock()
	aud := "did:web:" + strings.ReplaceAll(s.pdsHost, ":", "%3A")
	s.mu.Unlock()
	tok, err := p.serviceToken(ctx, c, s, aud, nsidUploadBlob, p.cfg.ServiceAuthTTL)
	if err != nil {
		return provider.Outcome{}, classifyXRPC(err, provider.CategoryInvalidOptions)
	}
	// The name is stable across attempts: the same video under the same name.
	name := "reelay-" + d.Video.SHA256
	if len(name) > 23 {
		name = name[:23]
	}
	q := url.Values{"did": {st.DID}, "name": {name + ".mp4"}}
	var raw json.RawMessage
	// The video service answers bytes it already has from this account with 409 already_exists
	// and the job that took them (see the package comment), so an upload sent again after one
	// that went through makes no second job.
	err = p.repeat(ctx, provider.CategoryMediaRejected, func() error {
		return p.do(ctx, request{method: http.MethodPost, base: c.video, nsid: nsidUploadVideo, query: q, bearer: tok,
			open: p.openVideo(ctx, d), contentType: ctype, size: d.Video.Size, timeout: -1}, &raw)
	})
	var xe *xrpcError
	switch {
	case err == nil:
	case errors.As(err, &xe) && xe.Status == http.StatusConflict:
		// already_exists: the video service has these bytes from this account already, and
		// names the job that took them.
		raw = xe.Body
	case noVideoService(err):
		st.Upload = UploadBlob
		return st.next(provider.StatusUploading, 0), nil
	default:
		if errors.As(err, &xe) {
			if j, ok := parseJobStatus(xe.Body); ok && j.Error == "unconfirmed_email" {
				return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, xe.Status,
					"Bluesky refuses video uploads until the account's e-mail address is verified (%s)", j.Error)
			}
		}
		return provider.Outcome{}, classifyXRPC(err, provider.CategoryMediaRejected)
	}
	js, ok := parseJobStatus(raw)
	if !ok || js.JobID == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusOK,
			"Bluesky's video service answered the upload without a job id: %s", truncate(string(raw), 300))
	}
	st.JobID, st.UploadedAt, st.Polls = js.JobID, p.cfg.Now(), 0
	if js.Blob != nil && js.Blob.Ref.Link != "" {
		return p.ready(st, js.Blob), nil
	}
	st.Phase = phaseProcessing
	return st.next(provider.StatusProcessing, p.pollDelay(0)), nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// poll asks the video service how the job is doing.
func (p *Provider) poll(ctx context.Context, c channel, st State) (provider.Outcome, error) {
	if c.video == "" {
		// The setting became "none" while the job ran: the video goes to the PDS instead.
		return State{Phase: phaseUpload, Upload: UploadBlob, DID: st.DID, Handle: st.Handle}.next(provider.StatusUploading, 0), nil
	}
	var out struct {
		JobStatus *JobStatus `json:"jobStatus"`
	}
	// A GET: asking again changes nothing.
	err := p.repeat(ctx, provider.CategoryMediaRejected, func() error {
		return p.do(ctx, request{method: http.MethodGet, base: c.video, nsid: nsidGetJobStatus, query: url.Values{"jobId": {st.JobID}}}, &out)
	})
	var xe *xrpcError
	if err != nil && errors.As(err, &xe) && xe.Status >= 400 && xe.Status < 500 && !xe.rateLimited() && !xe.authFailure() {
		// The service no longer knows the job. Uploading again is safe: if it still has the
		// video it answers already_exists with a job, otherwise it takes the video anew.
		if st.Restarts >= maxRestarts {
			return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, xe.Status,
				"Bluesky's video service lost job %s again: %s", st.JobID, xe.Error())
		}
		return State{Phase: phaseUpload, Upload: st.Upload, DID: st.DID, Handle: st.Handle, Restarts: st.Restarts + 1}.
			next(provider.StatusUploading, 0), nil
	}
	if err != nil {
		return provider.Outcome{}, classifyXRPC(err, provider.CategoryMediaRejected)
	}
	if out.JobStatus == nil {
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0,
			"Bluesky's video service answered getJobStatus without a jobStatus")
	}
	js := *out.JobStatus
	// The docs: check for a blob whatever the state says (already_exists answers carry one).
	if js.Blob != nil && js.Blob.Ref.Link != "" {
		return p.ready(st, js.Blob), nil
	}
	if js.State == JobFailed {
		why := strings.Join(nonEmpty(js.Message, js.Error), ": ")
		if why == "" {
			why = "the video could not be processed"
		}
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"Bluesky's video service failed job %s: %s", st.JobID, why)
	}
	if p.cfg.Now().Sub(st.UploadedAt) > p.cfg.JobTimeout {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"Bluesky's video service did not finish job %s within %s (state %s)", st.JobID, p.cfg.JobTimeout, js.State)
	}
	st.Polls++
	return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
}

// maxRestarts bounds how often the upload begins again because a job was lost.
const maxRestarts = 2

func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.PollDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

// ready stores the blob and chooses the post's record key and time. The record is not created
// in this step, so that the key is stored before any create is attempted.
func (p *Provider) ready(st State, b *Blob) provider.Outcome {
	st.Blob = b
	if st.Blob.Type == "" {
		st.Blob.Type = "blob"
	}
	st.Phase = phasePost
	now := p.cfg.Now()
	st.Rkey = NewTID(now)
	st.CreatedAt = now.UTC().Format("2006-01-02T15:04:05.000Z")
	return st.next(provider.StatusProcessing, 0)
}

// PostCollection is the collection of posts.
const PostCollection = "app.bsky.feed.post"

// record builds the post record. Everything in it comes from State and the destination, so a
// create repeated after a crash sends the same record.
func record(d *provider.Destination, st State, text string) map[string]any {
	embed := map[string]any{"$type": "app.bsky.embed.video", "video": st.Blob}
	if w, h := d.Video.Width, d.Video.Height; w > 0 && h > 0 {
		embed["aspectRatio"] = map[string]int{"width": w, "height": h}
	}
	rec := map[string]any{
		"$type":     PostCollection,
		"text":      text,
		"createdAt": st.CreatedAt,
		"embed":     embed,
	}
	if f := Facets(text); len(f) > 0 {
		rec["facets"] = f
	}
	return rec
}

type recordRef struct {
	URI string `json:"uri"`
	CID string `json:"cid"`
}

// post creates the record under the stored key, or finds it there.
func (p *Provider) post(ctx context.Context, d *provider.Destination, c channel, st State, text string) (provider.Outcome, error) {
	if err := checkText(text); err != nil {
		return provider.Outcome{}, err
	}
	s, err := p.session(ctx, c)
	if err != nil {
		return provider.Outcome{}, err
	}
	var ref recordRef
	var found *recordRef
	// The record goes under the key stored before any create, and a PDS holds one record per
	// key: a create repeated after one that went through cannot post twice. Before it is made
	// again, the record under the key tells whether the last one went through.
	err = p.cfg.Repeat.DoChecked(ctx, func(err error) *provider.Error { return classifyXRPC(err, provider.CategoryInvalidOptions) }, func() error {
		return p.authed(ctx, c, s, request{method: http.MethodPost, base: c.pds, nsid: nsidCreateRecord, json: map[string]any{
			"repo": st.DID, "collection": PostCollection, "rkey": st.Rkey, "record": record(d, st, text),
		}}, &ref)
	}, func() (bool, error) {
		var err error
		found, err = p.findPost(ctx, c, st, text)
		return found != nil, err
	})
	if err == nil && found != nil {
		return p.finish(st, *found), nil
	}
	if err == nil && ref.URI != "" {
		return p.finish(st, ref), nil
	}
	perr := classifyXRPC(err, provider.CategoryInvalidOptions)
	if err == nil {
		perr = provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0, "Bluesky createRecord answered without a uri")
	}
	if perr.Category == provider.CategoryAuthExpired || perr.Category == provider.CategoryRateLimited {
		return provider.Outcome{}, perr
	}
	// The create failed, or its answer was lost, or an earlier create (before a crash) made the
	// record already and the PDS refuses the key: the record under our key tells.
	found, ferr := p.findPost(ctx, c, st, text)
	if ferr != nil {
		// Another record under the key is final; a failed look-up is not, and then the
		// create's own error says more.
		if fe := provider.AsError(ferr); !fe.Transient || !perr.Transient {
			return provider.Outcome{}, fe
		}
		return provider.Outcome{}, perr
	}
	if found != nil {
		return p.finish(st, *found), nil
	}
	return provider.Outcome{}, perr
}

// findPost reads the record under st.Rkey: nil when there is none; an error when it is there
// but is not this post (never taken for ours).
func (p *Provider) findPost(ctx context.Context, c channel, st State, text string) (*recordRef, error) {
	var out struct {
		URI   string `json:"uri"`
		CID   string `json:"cid"`
		Value struct {
			Text  string `json:"text"`
			Embed struct {
				Video *Blob `json:"video"`
			} `json:"embed"`
		} `json:"value"`
	}
	q := url.Values{"repo": {st.DID}, "collection": {PostCollection}, "rkey": {st.Rkey}}
	// A GET: asking again changes nothing.
	err := p.repeat(ctx, provider.CategoryInternal, func() error {
		return p.do(ctx, request{method: http.MethodGet, base: c.pds, nsid: nsidGetRecord, query: q}, &out)
	})
	var xe *xrpcError
	if err != nil && errors.As(err, &xe) && (xe.Name == "RecordNotFound" || xe.Status == http.StatusNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classifyXRPC(err, provider.CategoryInternal)
	}
	v := out.Value.Embed.Video
	if out.Value.Text != text || v == nil || st.Blob == nil || v.Ref.Link != st.Blob.Ref.Link {
		return nil, provider.Permanent(provider.CategoryInternal, 0,
			"another record already holds Bluesky record key %s of %s; this post was not created", st.Rkey, st.DID)
	}
	return &recordRef{URI: out.URI, CID: out.CID}, nil
}

func (p *Provider) finish(st State, ref recordRef) provider.Outcome {
	st.Phase = phaseDone
	st.URI, st.CID = ref.URI, ref.CID
	rkey := st.Rkey
	if i := strings.LastIndexByte(ref.URI, '/'); i >= 0 {
		rkey = ref.URI[i+1:]
	}
	actor := st.Handle
	if actor == "" || actor == "handle.invalid" {
		actor = st.DID
	}
	st.URL = p.cfg.AppURL + "/profile/" + actor + "/post/" + rkey
	return st.outcome()
}

// next returns the outcome of a step that is not final.
func (st State) next(status string, after time.Duration) provider.Outcome {
	return provider.Next(st, status, after)
}

// outcome returns the final outcome stored in a done State.
func (st State) outcome() provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: provider.StatusPublished, State: raw, ExternalID: st.URI, URL: st.URL}
}

// repeat makes call under Config.Repeat, its errors read by classifyXRPC with other as the
// category of an unrecognised 4xx.
func (p *Provider) repeat(ctx context.Context, other string, call func() error) error {
	return p.cfg.Repeat.Do(ctx, func(err error) *provider.Error { return classifyXRPC(err, other) }, call)
}

// NewTID returns a record key in the TID form (atproto "Timestamp Identifier"): 64 bits with
// the top bit zero, 53 bits of microseconds since the Unix epoch and a 10-bit random clock id,
// in base32-sortable (234567abcdefghijklmnopqrstuvwxyz), 13 characters.
func NewTID(now time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return tidOf(now, uint64(binary.BigEndian.Uint16(b[:])))
}

// tidOf is the TID of time t with the clock identifier clock (its low 10 bits).
func tidOf(t time.Time, clock uint64) string {
	v := uint64(t.UnixMicro())&(1<<53-1)<<10 | clock&0x3FF
	const alphabet = "234567abcdefghijklmnopqrstuvwxyz"
	var out [13]byte
	for i := 12; i >= 0; i-- {
		out[i] = alphabet[v&31]
		v >>= 5
	}
	return string(out[:])
}

// Identify verifies a channel's handle and app password and names the account: its DID
// (ExternalID), display name, handle and avatar. A refused password is auth_expired. baseURL
// "" means the channel's own PDS.
func (p *Provider) Identify(ctx context.Context, baseURL string, creds map[string]string) (provider.Identity, error) {
	c, err := p.channelOf(baseURL, creds)
	if err != nil {
		return provider.Identity{}, err
	}
	s, err := p.session(ctx, c)
	if err != nil {
		return provider.Identity{}, err
	}
	did, handle := s.identity()
	var prof struct {
		DID         string `json:"did"`
		Handle      string `json:"handle"`
		DisplayName string `json:"displayName"`
		Avatar      string `json:"avatar"`
	}
	err = p.authed(ctx, c, s, request{method: http.MethodGet, base: c.pds, nsid: nsidGetProfile, query: url.Values{"actor": {did}}}, &prof)
	switch {
	case err == nil:
	case noService(err):
		// A PDS without an AppView has no profiles to show (see the package comment); the
		// session it opened names the account, by DID and handle, and that is enough.
	default:
		return provider.Identity{}, classifyXRPC(err, provider.CategoryInternal)
	}
	id := provider.Identity{ExternalID: did, Name: prof.DisplayName, Username: handle, AvatarURL: prof.Avatar}
	if prof.Handle != "" {
		id.Username = prof.Handle
	}
	if id.Name == "" {
		id.Name = id.Username
	}
	return id, nil
}

// Options returns the publish options of a Bluesky channel: the registry's, with the account's
// video allowance for today from the video service. Errors are *provider.Error values.
func (p *Provider) Options(ctx context.Context, baseURL string, creds map[string]string) (map[string]any, error) {
	c, err := p.channelOf(baseURL, creds)
	if err != nil {
		return nil, err
	}
	s, err := p.session(ctx, c)
	if err != nil {
		return nil, err
	}
	opts := map[string]any{}
	did, handle := s.identity()
	opts["account"] = map[string]any{"did": did, "handle": handle}
	if p.cfg.Upload != UploadVideoService || c.video == "" {
		return opts, nil
	}
	l, err := p.uploadLimits(ctx, c, s)
	if errors.Is(err, errNoVideoService) {
		return opts, nil
	}
	if err != nil {
		return nil, classifyXRPC(err, provider.CategoryInternal)
	}
	note := "whether this account may upload video now (Bluesky's video service)"
	if why := strings.Join(nonEmpty(l.Message, l.Error), ": "); why != "" {
		note += ": " + why
	}
	opts["can_upload_video"] = map[string]any{"type": "boolean", "default": l.CanUpload, "note": note}
	if l.RemainingDailyVideos != nil {
		opts["remaining_daily_videos"] = map[string]any{"type": "integer", "default": *l.RemainingDailyVideos,
			"note": "videos this account may still upload today"}
	}
	if l.RemainingDailyBytes != nil {
		opts["remaining_daily_bytes"] = map[string]any{"type": "integer", "default": *l.RemainingDailyBytes,
			"note": "bytes of video this account may still upload today"}
	}
	return opts, nil
}
