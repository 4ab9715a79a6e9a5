// Package youtube publishes videos to YouTube through the Data API v3: videos.insert by the
// resumable upload protocol, processing polled with videos.list, an optional custom thumbnail
// with thumbnails.set, the channel's options (video categories) from videoCategories.list,
// and the token's channel (Identify) from channels.list?mine=true.
//
// Each Step does one thing and returns the State to store before the next:
//
//  1. start: POST {base}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status
//     with the snippet and status as JSON → State{session_uri}.
//  2. upload: ask the session how much it holds (empty PUT, "Content-Range: bytes */SIZE" →
//     308 with Range, or 200/201 when the upload is already complete; not asked when the
//     previous step of the same run opened it, Destination.Continued), then stream the rest
//     from Media.Open(offset) in chunks of Config.ChunkSize (a multiple of 256 KiB), each PUT
//     with "Content-Range: bytes a-b/SIZE". YouTube keeps every confirmed chunk, so a crash
//     loses at most the chunk in flight. 404/410 on the session means it expired: the State is
//     reset and the next step starts a new session (nothing was created on YouTube). The final
//     200/201 carries the video → State{video_id}, Outcome processing. A transient failure
//     after the step got bytes confirmed is returned as progress (Outcome uploading with After),
//     not as an error, so a long upload that keeps advancing never runs out of retries; a 400
//     on a chunk (the session's offset moved under it) makes the step ask the session again.
//  3. process: thumbnails.set once when a thumbnail was given (its failure is reported in
//     Outcome.Message, never fails the post), then videos.list?part=status,processingDetails
//     until status.uploadStatus is processed → published, with a /shorts/ URL for a vertical
//     or square video of at most 3 minutes and /watch?v= otherwise; failed, rejected or deleted
//     → a permanent media_rejected error with YouTube's reason. Polls back off through
//     Outcome.After, from Config.PollInitial doubling up to Config.PollMax.
//
// The metadata calls go through the official client, google.golang.org/api/youtube/v3: a
// youtube.Service per call (see call.api) on reelay's HTTP client and transport, with the
// channel's token added by an oauth2.Transport (no Application Default Credentials are looked
// up), answers bounded to maxAnswerBytes, the library's own logger off, and
// option.WithEndpoint(base+"/"): the library resolves "youtube/v3/..." against it, so a base
// with a path, such as the sandbox's /sandbox/youtube, keeps that path. Those calls are
// videos.list?part=status,processingDetails (step 3), videoCategories.list (Options),
// channels.list?mine=true (Identify), and commentThreads.list, comments.list and
// comments.insert (audience.go). Their errors (*googleapi.Error) are classified by the same
// rules as the hand-written calls' (errors.go). The module is at v0.312.0, one release after
// the v0.311.0 first pinned: the newest the module proxy served when the client was written.
//
// Three calls stay on plain net/http, each for a reason that holds in v0.312.0:
//   - videos.insert's resumable session: the library's resumable upload
//     (internal/gensupport.ResumableUpload) lives inside one Do call. It cannot be handed a
//     stored session URI, ask the session what it holds ("Content-Range: bytes */SIZE") and
//     continue in another process, which is exactly what Step must do after a crash; it also
//     buffers each chunk in memory and assumes the server kept every byte it sent.
//   - thumbnails.set: its media upload URL is resolved from the absolute path
//     "/upload/youtube/v3/thumbnails/set", which drops the path of the endpoint (the request
//     for a base of http://host/sandbox/youtube goes to http://host/upload/...);
//     option.WithEndpoint does not cover it.
//   - videos.list?part=statistics (Metrics, audience.go): the library's VideoStatistics holds
//     the counts as uint64 with omitempty, so a count YouTube leaves out (comments turned
//     off, likes hidden) decodes as 0, and reelay must keep a figure it is not given null.
//
// The simulator (internal/platform/sim) accepts both dialects: the library's (alt=json,
// prettyPrint=false, repeated part and id parameters, chunks by POST, "bytes a-b/*",
// X-GUploader-No-308, multipart uploads) and the one written here.
package youtube

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/option"
	ytapi "google.golang.org/api/youtube/v3"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is the Google API host that Destination.BaseURL overrides.
const DefaultBaseURL = "https://www.googleapis.com"

// Limits of YouTube that the provider checks before spending quota. The text limits are the
// registry's (platform.Capabilities).
const (
	chunkQuantum      = 256 << 10 // resumable chunks are multiples of 256 KiB
	maxThumbnailBytes = 2 << 20   // thumbnails.set: maximum file size 2 MB
	maxShort          = 3 * time.Minute
	// maxAnswerBytes bounds what is read of an answer: a page of 100 comment threads with
	// their inline replies can pass 1 MB.
	maxAnswerBytes  = 8 << 20
	thumbnailTries  = 3
	defaultCategory = "22" // People & Blogs
)

var titleLimit, descLimit = func() (platform.TextLimit, platform.TextLimit) {
	caps := Description.Capabilities
	return caps.Text["title"], caps.Text["description"]
}()

// Config tunes the provider. Zero values take the defaults.
type Config struct {
	// HTTPClient makes the requests; a client without a timeout is used when nil (uploads
	// are long: each Step is bounded by its context). Redirects are never followed: Google's
	// 308 means Resume Incomplete.
	HTTPClient *http.Client
	// ChunkSize is the size of each upload request, rounded up to a multiple of 256 KiB;
	// default 8 MiB. A crash loses at most one chunk.
	ChunkSize int64
	// UploadStepDuration, when positive, ends an upload step after the first chunk confirmed
	// past this duration, returning the progress as its own outcome; 0 uploads everything in
	// one step.
	UploadStepDuration time.Duration
	// PollInitial is the wait before the second processing poll; it doubles per poll up to
	// PollMax. Defaults 500 ms and 1 min: a short video is often ready at once, and
	// the doubling keeps a long wait to a handful of calls.
	PollInitial time.Duration
	PollMax     time.Duration
	// Region is the region whose video categories Options lists; default "US".
	Region string
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider publishes to YouTube. It is safe for concurrent use.
type Provider struct {
	cfg    Config
	client *http.Client
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

// New returns a YouTube provider.
func New(cfg Config) *Provider {
	cfg.ChunkSize = provider.Positive(cfg.ChunkSize, 8<<20)
	cfg.ChunkSize = (cfg.ChunkSize + chunkQuantum - 1) / chunkQuantum * chunkQuantum
	cfg.PollInitial = provider.Positive(cfg.PollInitial, 500*time.Millisecond)
	cfg.PollMax = provider.Positive(cfg.PollMax, time.Minute)
	if cfg.PollMax < cfg.PollInitial {
		cfg.PollMax = cfg.PollInitial
	}
	cfg.Region = cmp.Or(cfg.Region, "US")
	client := provider.NewHTTPClient(0)
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Provider{cfg: cfg, client: client}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.YouTube }

// State is what the provider stores between steps.
type State struct {
	// SessionURI is the resumable session of the upload in progress.
	SessionURI string `json:"session_uri,omitempty"`
	// Offset is how many bytes YouTube had confirmed when the last step ended (informative:
	// each upload step asks the session itself).
	Offset int64 `json:"offset,omitempty"`
	// Restarts counts sessions that expired and were started again.
	Restarts int `json:"restarts,omitempty"`
	// VideoID is set once the upload is complete.
	VideoID string `json:"video_id,omitempty"`
	// Thumbnail is "pending" until thumbnails.set succeeded or gave up, then "set" or
	// "failed"; ThumbnailError is the last transient failure, retried at the next poll.
	Thumbnail      string `json:"thumbnail,omitempty"`
	ThumbnailTries int    `json:"thumbnail_tries,omitempty"`
	ThumbnailError string `json:"thumbnail_error,omitempty"`
	// Polls counts processing polls, for the back-off.
	Polls int `json:"polls,omitempty"`
	// Message is feedback carried to every later outcome (a thumbnail that was not set).
	Message string `json:"message,omitempty"`
}

const (
	thumbPending = "pending"
	thumbSet     = "set"
	thumbFailed  = "failed"
)

// metadata is what videos.insert sends, resolved from the options and the post's texts.
type metadata struct {
	title, description, privacy, category string
	madeForKids                           bool
}

// resolve applies the defaults and fallbacks (title → post title → first line of the
// description; description → caption) and checks YouTube's rules, so that a video YouTube
// would refuse spends no quota.
func resolve(d *provider.Destination) (metadata, error) {
	var o Options
	if err := provider.UnmarshalStored(d.Options, &o); err != nil {
		return metadata{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "youtube options: %v", err)
	}
	m := metadata{
		title: strings.TrimSpace(o.Title), description: o.Description,
		privacy: o.PrivacyStatus, madeForKids: o.MadeForKids != nil && *o.MadeForKids, category: defaultCategory,
	}
	if m.description == "" {
		m.description = d.Caption
	}
	if m.title == "" {
		m.title = strings.TrimSpace(d.Title)
	}
	if m.title == "" {
		line, _, _ := strings.Cut(strings.TrimSpace(m.description), "\n")
		m.title = truncateRunes(strings.TrimSpace(line), titleLimit.Max)
	}
	if c := strings.Trim(strings.TrimSpace(string(o.CategoryID)), `"`); c != "" && c != "null" {
		m.category = c
	}
	if m.privacy == "" {
		m.privacy = "public"
	}
	switch {
	case m.title == "":
		return m, provider.Permanent(provider.CategoryInvalidOptions, 0, "YouTube requires a title: set title or youtube.title")
	case !titleLimit.Check(m.title):
		return m, provider.Permanent(provider.CategoryInvalidOptions, 0, "YouTube titles are at most %d %s; this one has %d", titleLimit.Max, titleLimit.Unit, titleLimit.Count(m.title))
	case strings.ContainsAny(m.title, "<>"):
		return m, provider.Permanent(provider.CategoryInvalidOptions, 0, "YouTube titles must not contain < or >")
	case !descLimit.Check(m.description):
		return m, provider.Permanent(provider.CategoryInvalidOptions, 0, "YouTube descriptions are at most %d %s; this one has %d", descLimit.Max, descLimit.Unit, descLimit.Count(m.description))
	case strings.ContainsAny(m.description, "<>"):
		return m, provider.Permanent(provider.CategoryInvalidOptions, 0, "YouTube descriptions must not contain < or >")
	}
	switch m.privacy {
	case "public", "unlisted", "private":
	default:
		return m, provider.Permanent(provider.CategoryInvalidOptions, 0, "youtube.privacy_status must be public, unlisted or private, not %q", m.privacy)
	}
	return m, nil
}

// truncateRunes cuts s to n characters.
func truncateRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return strings.TrimSpace(s[:i])
		}
		n--
	}
	return s
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "youtube", &st); err != nil {
		return provider.Outcome{}, err
	}
	c, err := p.newCall(ctx, d)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch {
	case st.VideoID != "":
		return p.process(c, d, st)
	case st.SessionURI != "":
		return p.upload(c, d, st)
	default:
		return p.start(c, d, st)
	}
}

// start opens a resumable session (step 1).
func (p *Provider) start(c *call, d *provider.Destination, st State) (provider.Outcome, error) {
	m, err := resolve(d)
	if err != nil {
		return provider.Outcome{}, err
	}
	if d.Video.Size <= 0 || d.Video.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	body, _ := json.Marshal(map[string]any{
		"snippet": map[string]any{"title": m.title, "description": m.description, "categoryId": m.category},
		"status":  map[string]any{"privacyStatus": m.privacy, "selfDeclaredMadeForKids": m.madeForKids},
	})
	u := c.base + "/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status"
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("X-Upload-Content-Length", strconv.FormatInt(d.Video.Size, 10))
	h.Set("X-Upload-Content-Type", videoType(d.Video.ContentType))
	// A session opened twice is harmless: a video is created only by the upload that completes
	// its session (developers.google.com/youtube/v3/guides/using_resumable_upload_protocol),
	// and the other session never gets a byte.
	var resp *http.Response
	err = p.cfg.Repeat.Do(c.ctx, nil, func() error {
		r, perr := c.do(http.MethodPost, u, strings.NewReader(string(body)), int64(len(body)), h)
		if perr != nil {
			return perr
		}
		if r.StatusCode != http.StatusOK && r.StatusCode != http.StatusCreated {
			defer drain(r)
			return errorFrom(r)
		}
		resp = r
		return nil
	})
	if err != nil {
		return provider.Outcome{}, err
	}
	defer drain(resp)
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" || (loc.Scheme != "http" && loc.Scheme != "https") {
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0,
			"YouTube started no upload session (no usable Location header)")
	}
	next := State{SessionURI: loc.String(), Restarts: st.Restarts}
	return provider.Outcome{Status: provider.StatusUploading, State: mustJSON(next)}, nil
}

func videoType(ct string) string {
	if strings.HasPrefix(ct, "video/") {
		return ct
	}
	return "application/octet-stream"
}

// upload sends what the session does not hold yet (step 2).
func (p *Provider) upload(c *call, d *provider.Destination, st State) (provider.Outcome, error) {
	size := d.Video.Size
	var (
		off int64
		res statusResult
		err error
	)
	// A session the previous step of this run opened has received nothing: asking it would
	// be a round trip to learn 0. Anywhere else it may hold bytes nobody recorded.
	if !d.Continued || st.Offset != 0 {
		if off, res, err = c.sessionStatus(st.SessionURI, size); err != nil {
			return provider.Outcome{}, err
		}
	}
	switch {
	case res.expired:
		return restart(st), nil
	case res.video != "":
		return p.uploaded(d, st, res.video)
	case res.retryAfter > 0:
		st.Offset = off
		return provider.Outcome{Status: provider.StatusUploading, State: mustJSON(st), After: res.retryAfter}, nil
	}

	began, startOff, requeries := time.Now(), off, 0
	var src io.ReadCloser
	drop := func() { // the next chunk is read anew, from wherever the session stands
		if src != nil {
			src.Close()
			src = nil
		}
	}
	defer drop()
	// interrupted reports a transient failure: as an error when this step confirmed nothing,
	// else as progress, so that an upload that advances never runs out of retries.
	interrupted := func(perr *provider.Error) (provider.Outcome, error) {
		if !perr.Transient || off == startOff {
			return provider.Outcome{}, perr
		}
		st.Offset = off
		return provider.Outcome{Status: provider.StatusUploading, State: mustJSON(st), After: max(perr.RetryAfter, time.Second),
			Message: "upload interrupted, resuming: " + perr.Message}, nil
	}
	for off < size {
		if err := c.ctx.Err(); err != nil {
			return interrupted(provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "upload stopped: %v", err))
		}
		if p.cfg.UploadStepDuration > 0 && off > startOff && time.Since(began) >= p.cfg.UploadStepDuration {
			st.Offset = off
			return provider.Outcome{Status: provider.StatusUploading, State: mustJSON(st)}, nil
		}
		// A chunk that failed may have landed in part or whole. Before it is sent again the
		// session says how much it holds ("Resume an interrupted upload": a PUT with
		// Content-Range bytes */SIZE answers the Range received, developers.google.com/youtube/
		// v3/guides/using_resumable_upload_protocol), and the upload goes on from there: no
		// byte the session confirmed is sent twice.
		var resp *http.Response
		var moved statusResult
		from := off
		err := p.cfg.Repeat.DoChecked(c.ctx, nil, func() error {
			r, perr := p.putChunk(c, d, st, &src, off, size)
			if perr != nil {
				return perr
			}
			if r.StatusCode >= 500 {
				defer drain(r)
				drop()
				return errorFrom(r)
			}
			resp = r
			return nil
		}, func() (bool, error) {
			next, res, err := c.sessionStatus(st.SessionURI, size)
			if err != nil {
				return false, err
			}
			off, moved = next, res
			return res.expired || res.video != "" || next != from, nil
		})
		switch {
		case err != nil:
			return interrupted(provider.AsError(err))
		case moved.expired:
			return restart(st), nil
		case moved.video != "":
			return p.uploaded(d, st, moved.video)
		case resp == nil:
			continue // the session holds more than before the failed chunk: on from there
		}
		n := min(p.cfg.ChunkSize, size-off)
		switch code := resp.StatusCode; {
		case code == http.StatusPermanentRedirect: // Resume Incomplete
			next, ok := parseRange(resp.Header.Get("Range"))
			drain(resp)
			if !ok {
				return interrupted(provider.Transient(provider.CategoryUpstreamUnavailable, code, 0, "YouTube answered an unreadable Range %q", resp.Header.Get("Range")))
			}
			if next != off+n {
				// YouTube kept a different amount than was sent: continue from what it holds.
				drop()
			}
			off = next
		case code == http.StatusOK || code == http.StatusCreated:
			id, err := videoID(resp)
			if err != nil {
				return provider.Outcome{}, err
			}
			return p.uploaded(d, st, id)
		case code == http.StatusNotFound || code == http.StatusGone:
			drain(resp)
			return restart(st), nil
		case code == http.StatusBadRequest && requeries < 3:
			// A chunk the session did not expect: its offset moved under us (the last bytes of
			// a dead request arriving late). Ask it where it stands and go on from there.
			perr := errorFrom(resp)
			perr.Transient, perr.Category = true, provider.CategoryUpstreamUnavailable
			drain(resp)
			requeries++
			next, res, err := c.sessionStatus(st.SessionURI, size)
			switch {
			case err != nil:
				return interrupted(provider.AsError(err))
			case res.expired:
				return restart(st), nil
			case res.video != "":
				return p.uploaded(d, st, res.video)
			case next == off:
				return interrupted(perr) // the offset did not move: retried later, then given up
			}
			drop()
			off = next
		default:
			perr := errorFrom(resp)
			drain(resp)
			if code == http.StatusBadRequest { // chunks refused again and again: retried, then given up
				perr.Transient, perr.Category = true, provider.CategoryUpstreamUnavailable
			}
			return interrupted(perr)
		}
	}
	// Every byte was confirmed without a final answer: the next step's status query gets it.
	st.Offset = off
	return provider.Outcome{Status: provider.StatusUploading, State: mustJSON(st)}, nil
}

// putChunk sends the chunk of the video at off (ChunkSize bytes, or what is left of size) to
// the session, reading on from *src, which it opens at off when nil and drops after a failure
// (the next chunk is read anew from wherever the session stands).
func (p *Provider) putChunk(c *call, d *provider.Destination, st State, src *io.ReadCloser, off, size int64) (*http.Response, *provider.Error) {
	if *src == nil {
		r, err := d.Video.Open(c.ctx, off)
		if err != nil {
			return nil, provider.Transient(provider.CategoryInternal, 0, 0, "reading the video at byte %d: %v", off, err)
		}
		*src = r
	}
	n := min(p.cfg.ChunkSize, size-off)
	body := &chunkBody{r: io.LimitReader(*src, n)}
	h := http.Header{}
	h.Set("Content-Type", videoType(d.Video.ContentType))
	h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, size))
	resp, perr := c.do(http.MethodPut, st.SessionURI, body, n, h)
	read, rerr := body.stop()
	if rerr == nil && perr == nil && read == n {
		return resp, nil
	}
	(*src).Close()
	*src = nil
	if resp != nil && perr == nil && rerr == nil {
		return resp, nil // the answer says what the session kept of a short read
	}
	if resp != nil {
		drain(resp)
	}
	if rerr != nil {
		return nil, provider.Transient(provider.CategoryInternal, 0, 0, "reading the video at byte %d: %v", off+read, rerr)
	}
	return nil, perr
}

// restart forgets an expired session; the next step starts a new one.
func restart(st State) provider.Outcome {
	next := State{Restarts: st.Restarts + 1}
	return provider.Outcome{Status: provider.StatusUploading, State: mustJSON(next),
		Message: "the YouTube upload session expired; starting a new one"}
}

// uploaded records the video YouTube created.
func (p *Provider) uploaded(d *provider.Destination, st State, id string) (provider.Outcome, error) {
	next := State{VideoID: id, Restarts: st.Restarts}
	if d.Thumbnail != nil {
		next.Thumbnail = thumbPending
	}
	return provider.Outcome{Status: provider.StatusProcessing, State: mustJSON(next), ExternalID: id}, nil
}

// process sets the thumbnail and polls processing (step 3).
func (p *Provider) process(c *call, d *provider.Destination, st State) (provider.Outcome, error) {
	if st.Thumbnail == thumbPending {
		p.setThumbnail(c, d, &st)
	}
	v, err := c.video(st.VideoID)
	if err != nil {
		return provider.Outcome{}, err
	}
	if v == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "YouTube no longer has video %s (it was deleted or removed)", st.VideoID)
	}
	out := provider.Outcome{ExternalID: st.VideoID, Message: st.Message}
	switch v.Status.UploadStatus {
	case "processed":
		if st.Thumbnail == thumbPending { // its retries are cut short by the video being ready
			st.Thumbnail, st.Message = thumbFailed, "thumbnail not set: "+st.ThumbnailError
			out.Message = st.Message
		}
		out.Status = provider.StatusPublished
		out.URL = videoURL(st.VideoID, d.Video)
		out.State = mustJSON(st)
		return out, nil
	case "failed":
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "YouTube could not process the video: %s", describe(failureReasons, v.Status.FailureReason, v.ProcessingDetails.ProcessingFailureReason))
	case "rejected":
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "YouTube rejected the video: %s", describe(rejectionReasons, v.Status.RejectionReason, ""))
	case "deleted":
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video was deleted on YouTube")
	}
	switch v.ProcessingDetails.ProcessingStatus {
	case "failed", "terminated":
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "YouTube could not process the video: processing %s (%s)",
			v.ProcessingDetails.ProcessingStatus, orUnknown(v.ProcessingDetails.ProcessingFailureReason))
	}
	out.Status = provider.StatusProcessing
	out.After = p.pollDelay(st.Polls)
	st.Polls++
	out.State = mustJSON(st)
	return out, nil
}

// pollDelay is the wait before poll n+1: none before the first, then PollInitial doubling up
// to PollMax.
func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.DoublingDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

// videoURL is the Shorts URL for a vertical or square video of at most 3 minutes (YouTube
// classifies those as Shorts; the API has no flag), the watch URL otherwise.
func videoURL(id string, m provider.Media) string {
	if m.Width > 0 && m.Height >= m.Width && m.Duration > 0 && m.Duration <= maxShort {
		return "https://www.youtube.com/shorts/" + id
	}
	return "https://www.youtube.com/watch?v=" + id
}

var rejectionReasons = map[string]string{
	"claim": "a content claim", "copyright": "copyright infringement", "duplicate": "a duplicate of another upload",
	"inappropriate": "inappropriate content", "legal": "legal reasons", "length": "the video is too long",
	"termsOfUse": "a Terms of Service violation", "trademark": "trademark infringement",
	"uploaderAccountClosed": "the uploader's account is closed", "uploaderAccountSuspended": "the uploader's account is suspended",
}

var failureReasons = map[string]string{
	"codec": "an unsupported codec", "conversion": "the conversion failed", "emptyFile": "the file is empty",
	"invalidFile": "the file is not a valid video", "tooSmall": "the file is too small", "uploadAborted": "the upload was aborted",
}

// describe renders a YouTube reason code with its meaning, e.g. "termsOfUse (a Terms of
// Service violation)".
func describe(meanings map[string]string, reason, detail string) string {
	if reason == "" {
		reason = detail
		detail = ""
	}
	s := orUnknown(reason)
	if m, ok := meanings[reason]; ok {
		s += " (" + m + ")"
	}
	if detail != "" {
		s += ", " + detail
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// setThumbnail tries thumbnails.set; a failure becomes the outcome's message.
func (p *Provider) setThumbnail(c *call, d *provider.Destination, st *State) {
	fail := func(format string, args ...any) {
		st.Thumbnail = thumbFailed
		st.Message = "thumbnail not set: " + fmt.Sprintf(format, args...)
	}
	t := d.Thumbnail
	ct := strings.ToLower(strings.TrimSpace(strings.Split(t.ContentType, ";")[0]))
	switch {
	case t.Open == nil || t.Size <= 0:
		fail("the image is empty")
		return
	case t.Size > maxThumbnailBytes:
		fail("YouTube takes thumbnails of at most 2 MB; this one has %d bytes", t.Size)
		return
	case ct != "image/jpeg" && ct != "image/png":
		fail("YouTube takes JPEG or PNG thumbnails, not %s", orUnknown(t.ContentType))
		return
	}
	st.ThumbnailTries++
	r, err := t.Open(c.ctx, 0)
	if err != nil {
		if st.ThumbnailTries >= thumbnailTries {
			fail("reading the image: %v", err)
		} else {
			st.ThumbnailError = "reading the image: " + err.Error()
		}
		return
	}
	defer r.Close()
	h := http.Header{}
	h.Set("Content-Type", ct)
	u := c.base + "/upload/youtube/v3/thumbnails/set?uploadType=media&videoId=" + url.QueryEscape(st.VideoID)
	resp, perr := c.do(http.MethodPost, u, r, t.Size, h)
	if perr == nil {
		defer drain(resp)
		if resp.StatusCode == http.StatusOK {
			st.Thumbnail = thumbSet
			return
		}
		perr = errorFrom(resp)
	}
	if perr.Transient && st.ThumbnailTries < thumbnailTries {
		st.ThumbnailError = perr.Message // tried again at the next poll
		return
	}
	fail("%s", perr.Message)
}

// videoResource is the part of a video resource the provider reads.
type videoResource struct {
	ID     string `json:"id"`
	Status struct {
		UploadStatus    string `json:"uploadStatus"`
		FailureReason   string `json:"failureReason"`
		RejectionReason string `json:"rejectionReason"`
		PrivacyStatus   string `json:"privacyStatus"`
	} `json:"status"`
	ProcessingDetails struct {
		ProcessingStatus        string `json:"processingStatus"`
		ProcessingFailureReason string `json:"processingFailureReason"`
	} `json:"processingDetails"`
}

func videoID(resp *http.Response) (string, error) {
	defer drain(resp)
	var v videoResource
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil || v.ID == "" {
		return "", provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "YouTube completed the upload without a readable video resource")
	}
	return v.ID, nil
}

// Options returns the publish options of a YouTube channel: privacy and made-for-kids as in
// the static registry, and the video categories assignable in Config.Region, live from
// videoCategories.list (1 quota unit).
func (p *Provider) Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error) {
	c, err := p.newCall(ctx, &provider.Destination{BaseURL: baseURL, Credentials: credentials})
	if err != nil {
		return nil, err
	}
	api, err := c.api()
	if err != nil {
		return nil, err
	}
	list, err := api.VideoCategories.List([]string{"snippet"}).RegionCode(p.cfg.Region).Context(ctx).Do()
	if err != nil {
		return nil, libraryError(ctx, "videoCategories.list", err)
	}
	choices := []any{}
	for _, it := range list.Items {
		if it.Snippet != nil && it.Snippet.Assignable {
			choices = append(choices, map[string]any{"id": it.Id, "title": it.Snippet.Title})
		}
	}
	opts := staticOptions()
	opts["category_id"] = map[string]any{
		"type": "string", "choices": choices, "default": defaultCategory,
		"note": "YouTube videoCategories assignable in region " + p.cfg.Region + "; the default is People & Blogs",
	}
	return opts, nil
}

// Identify returns the YouTube channel the access token belongs to, from
// channels.list?part=snippet&mine=true (1 quota unit): the channel id (ExternalID), its title
// (Name), its "@handle" (Username) and its default thumbnail (AvatarURL). A token YouTube
// refuses is a permanent auth_expired error; a Google account without a channel is a
// permanent invalid_options error, since connecting it again changes nothing until the user
// creates a channel. Other failures are classified as for Step.
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	c, err := p.newCall(ctx, &provider.Destination{BaseURL: baseURL, Credentials: credentials})
	if err != nil {
		return provider.Identity{}, err
	}
	api, err := c.api()
	if err != nil {
		return provider.Identity{}, err
	}
	list, err := api.Channels.List([]string{"snippet"}).Mine(true).Context(ctx).Do()
	if err != nil {
		return provider.Identity{}, libraryError(ctx, "channels.list", err)
	}
	if len(list.Items) == 0 {
		return provider.Identity{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
			"this Google account has no YouTube channel: create one on youtube.com, then connect the channel again")
	}
	ch := list.Items[0]
	if ch.Id == "" {
		return provider.Identity{}, provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0, "YouTube answered a channel without an id")
	}
	id := provider.Identity{ExternalID: ch.Id}
	if sn := ch.Snippet; sn != nil {
		id.Name, id.Username = sn.Title, sn.CustomUrl
		if th := sn.Thumbnails; th != nil {
			for _, t := range []*ytapi.Thumbnail{th.Default, th.Medium, th.High} {
				if t != nil && t.Url != "" {
					id.AvatarURL = t.Url
					break
				}
			}
		}
	}
	return id, nil
}

// call is one step's access to the API.
type call struct {
	p     *Provider
	ctx   context.Context
	token string
	base  string
	svc   *ytapi.Service // made by api when first needed
}

// api returns the client library's service for this call's channel and base URL. The token
// rides on the HTTP client (an oauth2.Transport over the provider's transport), so the
// library looks up no credentials of its own and its request log, were it on, would not
// hold the token; its logger is off anyway, as reelay logs its calls itself. The endpoint is
// the base URL with a trailing slash: the library appends "youtube/v3/...".
func (c *call) api() (*ytapi.Service, error) {
	if c.svc != nil {
		return c.svc, nil
	}
	hc := *c.p.client // its timeout and redirect policy
	hc.Transport = &oauth2.Transport{
		Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.token, TokenType: "Bearer"}),
		Base:   boundedTransport{c.p.client.Transport},
	}
	svc, err := ytapi.NewService(c.ctx,
		option.WithEndpoint(c.base+"/"),
		option.WithHTTPClient(&hc),
		option.WithoutAuthentication(),
		option.WithLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		return nil, provider.Permanent(provider.CategoryInternal, 0, "youtube client: %v", err)
	}
	c.svc = svc
	return svc, nil
}

// boundedTransport cuts every answer at maxAnswerBytes: the library reads whole bodies, of
// errors as of successes.
type boundedTransport struct{ base http.RoundTripper }

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(r)
	if err == nil {
		resp.Body = &boundedBody{rc: resp.Body, left: maxAnswerBytes}
	}
	return resp, err
}

// errAnswerTooLarge is what reading past maxAnswerBytes of an answer returns.
var errAnswerTooLarge = fmt.Errorf("the answer is larger than %d MiB", maxAnswerBytes>>20)

type boundedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Only an answer that goes on past the bound is refused, not one that ends on it.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, errAnswerTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

func (p *Provider) newCall(ctx context.Context, d *provider.Destination) (*call, error) {
	token := strings.TrimSpace(d.Credentials["access_token"])
	if token == "" {
		return nil, provider.Permanent(provider.CategoryAuthExpired, 0, "the channel has no YouTube access token: reconnect it")
	}
	base := strings.TrimRight(d.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	return &call{p: p, ctx: ctx, token: token, base: base}, nil
}

// do sends one request; a failure to get an answer is a transient error.
func (c *call) do(method, u string, body io.Reader, length int64, h http.Header) (*http.Response, *provider.Error) {
	if body == nil {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(c.ctx, method, u, body)
	if err != nil {
		return nil, provider.Permanent(provider.CategoryInternal, 0, "youtube request: %v", err)
	}
	req.ContentLength = length
	if length == 0 {
		req.Body = http.NoBody
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.p.client.Do(req)
	if err != nil {
		if cerr := c.ctx.Err(); cerr != nil {
			err = cerr
		}
		return nil, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "YouTube did not answer: %v", err)
	}
	return resp, nil
}

// statusResult is what a session's status query found.
type statusResult struct {
	expired    bool
	video      string // the upload is complete
	retryAfter time.Duration
}

// sessionStatus asks a resumable session how many bytes it holds. The query sends no byte and
// changes nothing ("Content-Range: bytes */SIZE"): it is asked again after a failure.
func (c *call) sessionStatus(session string, size int64) (int64, statusResult, error) {
	var off int64
	var res statusResult
	err := c.p.cfg.Repeat.Do(c.ctx, nil, func() error {
		var err error
		off, res, err = c.sessionStatusOnce(session, size)
		return err
	})
	return off, res, err
}

func (c *call) sessionStatusOnce(session string, size int64) (int64, statusResult, error) {
	h := http.Header{}
	h.Set("Content-Range", fmt.Sprintf("bytes */%d", size))
	resp, perr := c.do(http.MethodPut, session, nil, 0, h)
	if perr != nil {
		return 0, statusResult{}, perr
	}
	switch resp.StatusCode {
	case http.StatusPermanentRedirect:
		drain(resp)
		off, ok := parseRange(resp.Header.Get("Range"))
		if !ok {
			return 0, statusResult{}, provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "YouTube answered an unreadable Range %q", resp.Header.Get("Range"))
		}
		return off, statusResult{retryAfter: retryAfter(resp.Header)}, nil
	case http.StatusOK, http.StatusCreated:
		id, err := videoID(resp)
		return size, statusResult{video: id}, err
	case http.StatusNotFound, http.StatusGone:
		drain(resp)
		return 0, statusResult{expired: true}, nil
	}
	defer drain(resp)
	return 0, statusResult{}, errorFrom(resp)
}

// list calls a resource's list method by hand (GET /youtube/v3/{resource}?{query}) and
// decodes its answer into out; only videos.list?part=statistics needs it (see the package
// comment).
func (c *call) list(resource, query string, out any) error {
	resp, perr := c.do(http.MethodGet, c.base+"/youtube/v3/"+resource+"?"+query, nil, 0, nil)
	if perr != nil {
		return perr
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return errorFrom(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswerBytes)).Decode(out); err != nil {
		return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "unreadable %s.list answer: %v", resource, err)
	}
	return nil
}

// video is videos.list?part=status,processingDetails&id=; nil when YouTube has no such video.
func (c *call) video(id string) (*videoResource, error) {
	api, err := c.api()
	if err != nil {
		return nil, err
	}
	// videos.list reads: asking again changes nothing.
	var list *ytapi.VideoListResponse
	err = c.p.cfg.Repeat.Do(c.ctx, nil, func() error {
		var err error
		if list, err = api.Videos.List([]string{"status", "processingDetails"}).Id(id).Context(c.ctx).Do(); err != nil {
			return libraryError(c.ctx, "videos.list", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, it := range list.Items {
		if it == nil || it.Id != id {
			continue
		}
		v := &videoResource{ID: it.Id}
		if st := it.Status; st != nil {
			v.Status.UploadStatus, v.Status.FailureReason = st.UploadStatus, st.FailureReason
			v.Status.RejectionReason, v.Status.PrivacyStatus = st.RejectionReason, st.PrivacyStatus
		}
		if pd := it.ProcessingDetails; pd != nil {
			v.ProcessingDetails.ProcessingStatus, v.ProcessingDetails.ProcessingFailureReason = pd.ProcessingStatus, pd.ProcessingFailureReason
		}
		return v, nil
	}
	return nil, nil
}

// parseRange reads "bytes=0-N" into the next offset N+1; no header means nothing was received.
func parseRange(h string) (int64, bool) {
	if h == "" {
		return 0, true
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !ok {
		return 0, false
	}
	first, last, ok := strings.Cut(rest, "-")
	if !ok || first != "0" {
		return 0, false
	}
	n, err := strconv.ParseInt(last, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n + 1, true
}

// chunkBody is a chunk's request body, read from the video's reader. It counts what the HTTP
// client read and keeps the reader's own error apart from the network's. The transport may
// go on reading it after Do returned (a server that answers before it read the whole chunk,
// as a 503 does): stop waits out a read in flight and makes every later one fail, so that the
// video's reader can then be read on or closed, and the counts read, without a race.
type chunkBody struct {
	mu      sync.Mutex
	r       io.Reader
	n       int64
	err     error
	stopped bool
}

var errChunkStopped = errors.New("the chunk's request is over")

func (c *chunkBody) Read(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return 0, errChunkStopped
	}
	n, err := c.r.Read(b)
	c.n += int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// stop ends the reads and returns how many bytes were read and the reader's own error.
func (c *chunkBody) stop() (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	return c.n, c.err
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
