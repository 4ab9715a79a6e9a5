// Package linkedin publishes video to a LinkedIn member's feed through the Videos API and the
// Posts API (learn.microsoft.com/linkedin/marketing/community-management/shares/videos-api and
// …/posts-api), speaking plain HTTP to https://api.linkedin.com.
//
// A destination goes through these steps, one per Step call; the returned State is stored
// before the next:
//
//  1. POST /rest/videos?action=initializeUpload {owner: urn:li:person:{account}, fileSizeBytes,
//     uploadCaptions: false, uploadThumbnail} → the video URN, the upload token and one upload
//     URL per part (byte ranges of about 4 MB). Nothing is uploaded in this step.
//  2. Each part is PUT to its URL (application/octet-stream) and its ETag kept in State, one part
//     per Step (Config.StepBytes for more); then the thumbnail, when there is one.
//  3. GET /rest/videos/{urn}: only a video still WAITING_UPLOAD is finalized,
//     POST /rest/videos?action=finalizeUpload {video, uploadToken, uploadedPartIds: the ETags in
//     order}. A Step that died after finalizing therefore never finalizes again.
//  4. GET /rest/videos/{urn}, polled with a doubling, capped wait, until AVAILABLE
//     (PROCESSING_FAILED fails the destination with media_rejected).
//  5. POST /rest/posts {author, commentary, visibility PUBLIC, distribution MAIN_FEED,
//     content.media {title, id}, lifecycleState PUBLISHED} → 201 with the post URN in
//     x-restli-id; the post is https://www.linkedin.com/feed/update/{urn}/.
//
// Crash safety. Parts already ETagged are not sent again; a part whose PUT was cut is sent
// again whole (the upload URL takes it again). Finalizing is guarded by the video's status. A
// post call whose answer was lost is made again: LinkedIn refuses content it already has with
// 422 DUPLICATE_POST naming the existing post ("Content is a duplicate of urn:li:share:…"), and
// since the content carries this destination's own video URN, that post is this destination's
// and is taken as its outcome. (Reading posts back would need r_member_social, a private
// permission, so the duplicate answer is the member-level way to tell.) Upload URLs that
// expired, or a video LinkedIn no longer knows before it was finalized, start the upload over
// with a new initializeUpload: an unfinalized video can never be posted, so nothing is
// published twice.
//
// Every /rest call carries LinkedIn-Version (Config.APIVersion, by default the month pinned in
// Description.API) and X-Restli-Protocol-Version: 2.0.0. Commentary is sent in little text format
// (see Little).
package linkedin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is LinkedIn's API host; the paths (/rest/..., /v2/userinfo) are below it.
const DefaultBaseURL = "https://api.linkedin.com"

// PostURL is the public address of a post.
func PostURL(urn string) string { return "https://www.linkedin.com/feed/update/" + urn + "/" }

// maxRestarts bounds how often an upload starts over with a new initializeUpload.
const maxRestarts = 2

// maxFinalizes bounds the finalize calls of one upload (a video found WAITING_UPLOAD again).
const maxFinalizes = 3

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the API host (DefaultBaseURL); a destination's BaseURL wins over it.
	BaseURL string
	// HTTPClient makes every request (a client of its own without an overall timeout: parts
	// are bounded by their context, API calls by APITimeout).
	HTTPClient *http.Client
	// Now is the clock (time.Now).
	Now func() time.Time
	// APIVersion is the LinkedIn-Version header, YYYYMM (Description.API.Version). It is a
	// month LinkedIn released, pinned: computing one from the date fails in the months LinkedIn
	// skipped (it released no 202512), and every call then answers 426.
	APIVersion string
	// StepBytes is how many bytes one Step uploads before it returns its State (0: one part).
	StepBytes int64
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
	// APITimeout bounds each API call (30 s).
	APITimeout time.Duration
	// PollInitial and PollMax bound the wait between video status reads (500 ms doubling, at
	// most 30 s).
	PollInitial, PollMax time.Duration
	// ThrottleWait is the wait after a 429 without Retry-After (1 min; LinkedIn documents no
	// Retry-After).
	ThrottleWait time.Duration
}

// Provider is LinkedIn's provider.Provider.
type Provider struct {
	cfg Config
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

// New returns a LinkedIn provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, DefaultBaseURL)
	cfg.APIVersion = cmp.Or(cfg.APIVersion, Description.API.Version)
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.Now = provider.Clock(cfg.Now)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, 500*time.Millisecond)
	cfg.PollMax = provider.Positive(cfg.PollMax, 30*time.Second)
	cfg.ThrottleWait = provider.Positive(cfg.ThrottleWait, time.Minute)
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.LinkedIn }

// Phases of State.
const (
	phaseStart      = ""
	phaseUploading  = "uploading"
	phaseFinalizing = "finalizing"
	phaseProcessing = "processing"
	phasePosting    = "posting"
	phaseDone       = "done"
)

// State is what the publisher stores between Steps. It holds no credential: the upload URLs
// are LinkedIn's per-video signed links and the upload token only names the upload session;
// both are useless without the member's access token for finalizing.
type State struct {
	Phase       string `json:"phase,omitempty"`
	Video       string `json:"video,omitempty"` // urn:li:video:…
	UploadToken string `json:"upload_token,omitempty"`
	VideoSize   int64  `json:"video_size,omitempty"`
	// Parts are the upload instructions with the ETag of each part LinkedIn accepted.
	Parts              []Part    `json:"parts,omitempty"`
	UploadURLsExpireAt time.Time `json:"upload_urls_expire_at,omitzero"`
	ThumbnailURL       string    `json:"thumbnail_url,omitempty"`
	ThumbnailDone      bool      `json:"thumbnail_done,omitempty"`
	Finalizes          int       `json:"finalizes,omitempty"`
	Polls              int       `json:"polls,omitempty"`
	Restarts           int       `json:"restarts,omitempty"`
	// Notes are remarks for the final Message.
	Notes []string `json:"notes,omitempty"`
	// The outcome, once done.
	PostURN string `json:"post_urn,omitempty"`
	URL     string `json:"url,omitempty"`
	Message string `json:"message,omitempty"`
}

// Part is one upload instruction and its ETag once LinkedIn accepted it.
type Part struct {
	URL   string `json:"url"`
	First int64  `json:"first"`
	Last  int64  `json:"last"`
	ETag  string `json:"etag,omitempty"`
}

// texts returns the commentary (plain text, before little escaping) and the video title.
func texts(d *provider.Destination) (commentary, title string, err error) {
	var o Options
	if err := provider.UnmarshalStored(d.Options, &o); err != nil {
		return "", "", fmt.Errorf("linkedin options: %w", err)
	}
	commentary = d.Text(o.Commentary)
	title = o.Title
	if title == "" {
		title = d.Title
	}
	caps := Description.Capabilities
	if lim := caps.Text["commentary"]; !lim.Check(commentary) {
		return "", "", fmt.Errorf("the LinkedIn commentary is %d UTF-16 units long; LinkedIn accepts at most %d", lim.Count(commentary), lim.Max)
	}
	if lim := caps.Text["title"]; !lim.Check(title) {
		return "", "", fmt.Errorf("the LinkedIn video title is %d UTF-16 units long; LinkedIn accepts at most %d", lim.Count(title), lim.Max)
	}
	return commentary, title, nil
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "LinkedIn", &st); err != nil {
		return provider.Outcome{}, err
	}
	if st.Phase == phaseDone {
		return st.outcome(), nil
	}
	c, err := p.client(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	if d.Account == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "the LinkedIn channel has no member id")
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, c, d, st)
	case phaseUploading:
		return p.upload(ctx, c, d, st)
	case phaseFinalizing:
		return p.finalize(ctx, c, st)
	case phaseProcessing:
		return p.poll(ctx, c, st)
	case phasePosting:
		return p.post(ctx, c, d, st)
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored LinkedIn state has unknown phase %q", st.Phase)
}

// client resolves the API base and the access token of a channel.
func (p *Provider) client(baseURL string, credentials map[string]string) (client, error) {
	token := credentials["access_token"]
	if token == "" {
		return client{}, provider.Permanent(provider.CategoryAuthExpired, 0, "the LinkedIn channel has no access token")
	}
	base := strings.TrimRight(baseURL, "/")
	if base == "" {
		base = p.cfg.BaseURL
	}
	return client{p: p, base: base, token: token}, nil
}

func authorURN(account string) string { return "urn:li:person:" + account }

// thumbnailType returns the thumbnail's content type when it can go to LinkedIn ("" when there
// is none or LinkedIn would not take it).
func thumbnailType(t *provider.Media) string {
	if t == nil || t.Open == nil || t.Size <= 0 {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(t.ContentType)
	if mt == "image/jpeg" || mt == "image/png" {
		return mt
	}
	return ""
}

// start checks what can be checked before LinkedIn is asked and initializes the upload.
func (p *Provider) start(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	if _, _, err := texts(d); err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	v := d.Video
	if v.Size <= 0 || v.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	caps := Description.Capabilities
	if v.Size < caps.MinVideoBytes || (caps.MaxVideoBytes > 0 && v.Size > caps.MaxVideoBytes) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %d bytes; LinkedIn takes %d to %d", v.Size, caps.MinVideoBytes, caps.MaxVideoBytes)
	}
	if mt, _, _ := mime.ParseMediaType(v.ContentType); v.ContentType != "" && mt != "video/mp4" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "LinkedIn takes MP4 video, not %s", v.ContentType)
	}
	minDur := time.Duration(caps.MinDurationSeconds * float64(time.Second))
	maxDur := time.Duration(caps.MaxDurationSeconds * float64(time.Second))
	if v.Duration > 0 && (v.Duration < minDur || v.Duration > maxDur) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video lasts %s; LinkedIn takes %s to %s", v.Duration, minDur, maxDur)
	}
	notes := st.Notes
	thumb := thumbnailType(d.Thumbnail) != ""
	if d.Thumbnail != nil && !thumb && st.Restarts == 0 {
		notes = append(notes, "the thumbnail was not sent: LinkedIn takes JPEG or PNG thumbnails")
	}

	var res initializeUploadResponse
	req := map[string]initializeUploadRequest{"initializeUploadRequest": {
		Owner: authorURN(d.Account), FileSizeBytes: v.Size, UploadCaptions: false, UploadThumbnail: thumb,
	}}
	// An upload initialized twice leaves a video that gets no part and is never finalized:
	// LinkedIn cannot post a video before finalizeUpload, and the upload URLs of the orphan
	// lapse (uploadUrlsExpireAt).
	err := p.cfg.Repeat.Do(ctx, p.classify, func() error {
		_, err := c.do(ctx, http.MethodPost, pathVideos+"?action=initializeUpload", req, &res, true)
		return err
	})
	if err != nil {
		return provider.Outcome{}, p.classify(err)
	}
	val := res.Value
	parts, err := checkInstructions(val.UploadInstructions, v.Size)
	if err != nil || !strings.HasPrefix(val.Video, "urn:li:video:") || (thumb && val.ThumbnailUploadURL == "") {
		if err == nil {
			err = errors.New("no video URN or thumbnail URL")
		}
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusOK,
			"LinkedIn's initializeUpload answered unusable upload instructions: %v", err)
	}
	st = State{
		Phase:        phaseUploading,
		Video:        val.Video,
		UploadToken:  val.UploadToken,
		VideoSize:    v.Size,
		Parts:        parts,
		ThumbnailURL: val.ThumbnailUploadURL,
		Restarts:     st.Restarts,
		Notes:        notes,
	}
	if !thumb {
		st.ThumbnailURL = ""
	}
	if val.UploadURLsExpireAt > 0 {
		st.UploadURLsExpireAt = time.UnixMilli(val.UploadURLsExpireAt).UTC()
	}
	return st.next(provider.StatusUploading, 0), nil
}

// checkInstructions verifies that the parts cover the file once, in order.
func checkInstructions(ins []uploadInstruction, size int64) ([]Part, error) {
	if len(ins) == 0 {
		return nil, errors.New("no upload instructions")
	}
	parts := make([]Part, 0, len(ins))
	var next int64
	for i, in := range ins {
		u, err := url.Parse(in.UploadURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("part %d has no usable upload URL", i+1)
		}
		if in.FirstByte != next || in.LastByte < in.FirstByte {
			return nil, fmt.Errorf("part %d covers bytes %d-%d, expected to start at %d", i+1, in.FirstByte, in.LastByte, next)
		}
		next = in.LastByte + 1
		parts = append(parts, Part{URL: in.UploadURL, First: in.FirstByte, Last: in.LastByte})
	}
	if next != size {
		return nil, fmt.Errorf("the parts cover %d of %d bytes", next, size)
	}
	return parts, nil
}

// upload sends the next part (or StepBytes worth of parts), then the thumbnail.
func (p *Provider) upload(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	if !st.UploadURLsExpireAt.IsZero() && !p.cfg.Now().Before(st.UploadURLsExpireAt.Add(-time.Minute)) {
		return p.restart(st, "the upload URLs expired")
	}
	var sent int64
	for i := range st.Parts {
		if st.Parts[i].ETag != "" {
			continue
		}
		if sent > 0 && sent >= p.cfg.StepBytes {
			return st.next(provider.StatusUploading, 0), nil
		}
		part := st.Parts[i]
		n := part.Last - part.First + 1
		status, etag, body, err := p.putRetrying(ctx, c, part.URL, "application/octet-stream", n, func() (io.ReadCloser, error) {
			return d.Video.Open(ctx, part.First)
		}, fmt.Sprintf("part %d of %d", i+1, len(st.Parts)))
		if err != nil {
			if sent > 0 {
				return st.next(provider.StatusUploading, 0), nil // keep the progress; the next Step retries
			}
			return provider.Outcome{}, err
		}
		switch {
		case status/100 == 2 && etag != "":
			st.Parts[i].ETag = etag
			sent += n
		case status/100 == 2:
			return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, status, 0,
				"LinkedIn accepted part %d of %d without an ETag", i+1, len(st.Parts))
		case status == http.StatusForbidden || status == http.StatusNotFound || status == http.StatusGone:
			return p.restart(st, fmt.Sprintf("the upload URL of part %d answered HTTP %d: %s", i+1, status, body))
		case status == http.StatusUnauthorized:
			return provider.Outcome{}, provider.Permanent(provider.CategoryAuthExpired, status, "LinkedIn refused part %d: %s", i+1, body)
		case status == http.StatusTooManyRequests:
			return provider.Outcome{}, provider.Transient(provider.CategoryRateLimited, status, p.cfg.ThrottleWait, "LinkedIn throttled part %d: %s", i+1, body)
		default:
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, status,
				"LinkedIn refused part %d of %d (bytes %d-%d, HTTP %d): %s", i+1, len(st.Parts), part.First, part.Last, status, body)
		}
	}
	if sent > 0 {
		// Store the last part's ETag before anything else happens.
		return st.next(provider.StatusUploading, 0), nil
	}
	if st.ThumbnailURL != "" && !st.ThumbnailDone {
		t := d.Thumbnail
		if ct := thumbnailType(t); ct != "" {
			status, _, body, err := p.putRetrying(ctx, c, st.ThumbnailURL, ct, t.Size, func() (io.ReadCloser, error) {
				return t.Open(ctx, 0)
			}, "the thumbnail")
			if err != nil {
				return provider.Outcome{}, err
			}
			if status/100 != 2 {
				st.Notes = append(st.Notes, fmt.Sprintf("LinkedIn refused the thumbnail (HTTP %d: %s); it chooses one itself", status, body))
			}
		} else {
			st.Notes = append(st.Notes, "the thumbnail was no longer available; LinkedIn chooses one itself")
		}
		st.ThumbnailDone = true
		return st.next(provider.StatusUploading, 0), nil
	}
	st.Phase = phaseFinalizing
	return st.next(provider.StatusUploading, 0), nil
}

// putRetrying PUTs n bytes from open to an upload URL, again after a broken connection or a 5xx.
// A part's upload URL is for that byte range alone and takes it again whole, so a part sent
// twice is the same part; its ETag is the last answer's. It returns the status, the ETag and
// the body of the answer.
func (p *Provider) putRetrying(ctx context.Context, c client, target, ctype string, n int64,
	open func() (io.ReadCloser, error), what string) (int, string, string, error) {
	var status int
	var etag, body string
	err := p.cfg.Repeat.Do(ctx, nil, func() error {
		var err error
		status, etag, body, err = p.put(ctx, c, target, ctype, n, open)
		if err == nil && status >= 500 {
			return provider.Transient(provider.CategoryUpstreamUnavailable, status, 0, "HTTP %d: %s", status, body)
		}
		return err
	})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
		return 0, "", "", provider.Transient(provider.CategoryUpstreamUnavailable, provider.AsError(err).Status, 0, "uploading %s to LinkedIn: %v", what, err)
	}
	return status, etag, body, nil
}

func (p *Provider) put(ctx context.Context, c client, target, ctype string, n int64, open func() (io.ReadCloser, error)) (int, string, string, error) {
	rc, err := open()
	if err != nil {
		return 0, "", "", fmt.Errorf("opening the media: %w", err)
	}
	body := struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, n), rc}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, body)
	if err != nil {
		rc.Close()
		return 0, "", "", err
	}
	req.ContentLength = n
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		err = provider.WithoutURL(err) // keep the signed URL out of messages
		return 0, "", "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, resp.Header.Get("ETag"), strings.TrimSpace(string(raw)), nil
}

// finalize asks where the video stands and finalizes it only when LinkedIn still waits for it.
func (p *Provider) finalize(ctx context.Context, c client, st State) (provider.Outcome, error) {
	v, err := c.getVideo(ctx, st.Video)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.HTTP == http.StatusNotFound {
			return p.restart(st, "LinkedIn no longer knows video "+st.Video)
		}
		return provider.Outcome{}, p.classify(err)
	}
	switch v.Status {
	case videoProcessing, videoAvailable:
		// Finalized already (a Step that died after finalizing).
		st.Phase = phaseProcessing
		return st.next(provider.StatusProcessing, 0), nil
	case videoProcessingFailed:
		return provider.Outcome{}, rejected(st, v)
	}
	if st.Finalizes >= maxFinalizes {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"LinkedIn still reports video %s as %s after %d finalizeUpload calls", st.Video, v.Status, st.Finalizes)
	}
	etags := make([]string, len(st.Parts))
	for i, part := range st.Parts {
		etags[i] = part.ETag
	}
	req := map[string]finalizeUploadRequest{"finalizeUploadRequest": {Video: st.Video, UploadToken: st.UploadToken, UploadedPartIDs: etags}}
	// A finalize that failed may have gone through: before it is made again the video's status
	// tells, as above (anything past WAITING_UPLOAD was finalized).
	finalized := false
	err = p.cfg.Repeat.DoChecked(ctx, p.classify, func() error {
		_, err := c.do(ctx, http.MethodPost, pathVideos+"?action=finalizeUpload", req, nil, true)
		return err
	}, func() (bool, error) {
		v, err := c.getVideo(ctx, st.Video)
		finalized = err == nil && v.Status != videoWaitingUpload
		return finalized, err
	})
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && (ae.HTTP == http.StatusBadRequest || ae.HTTP == http.StatusNotFound) {
			// The upload cannot be completed (parts LinkedIn no longer has, a session it
			// dropped); the video was never finalized, so a new upload cannot post twice.
			return p.restart(st, "finalizeUpload was refused: "+ae.Error())
		}
		return provider.Outcome{}, p.classify(err)
	}
	if !finalized {
		st.Finalizes++
	}
	st.Phase = phaseProcessing
	return st.next(provider.StatusProcessing, p.pollDelay(0)), nil
}

// poll reads the video's status until it is AVAILABLE.
func (p *Provider) poll(ctx context.Context, c client, st State) (provider.Outcome, error) {
	v, err := c.getVideo(ctx, st.Video)
	if err != nil {
		return provider.Outcome{}, p.classify(err)
	}
	switch v.Status {
	case videoAvailable:
		st.Phase = phasePosting
		return st.next(provider.StatusProcessing, 0), nil
	case videoProcessingFailed:
		return provider.Outcome{}, rejected(st, v)
	case videoWaitingUpload:
		st.Phase = phaseFinalizing
		return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
	}
	st.Polls++
	return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
}

func rejected(st State, v video) *provider.Error {
	msg := fmt.Sprintf("LinkedIn could not process video %s (PROCESSING_FAILED)", st.Video)
	if v.ProcessingFailureReason != "" {
		msg += ": " + v.ProcessingFailureReason
	} else {
		msg += "; LinkedIn takes MP4 video of 3 seconds to 30 minutes with an aspect ratio between 1:2.4 and 2.4:1"
	}
	return provider.Permanent(provider.CategoryMediaRejected, 0, "%s", msg)
}

func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.DoublingDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

// post creates the post. A call whose answer was lost is made again; LinkedIn then answers
// DUPLICATE_POST naming the post it made (see the package comment).
func (p *Provider) post(ctx context.Context, c client, d *provider.Destination, st State) (provider.Outcome, error) {
	commentary, title, err := texts(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	req := postRequest{
		Author:     authorURN(d.Account),
		Commentary: Little(commentary),
		Visibility: "PUBLIC",
		Distribution: distribution{
			FeedDistribution: "MAIN_FEED", TargetEntities: []string{}, ThirdPartyDistributionChannels: []string{},
		},
		Content:        postContent{Media: postMedia{Title: title, ID: st.Video}},
		LifecycleState: "PUBLISHED",
	}
	// A post repeated after one that went through is refused with DUPLICATE_POST naming the
	// post the first made (see the package comment), taken below as this destination's.
	var h http.Header
	err = p.cfg.Repeat.Do(ctx, p.classify, func() error {
		var err error
		h, err = c.do(ctx, http.MethodPost, pathPosts, req, nil, true)
		return err
	})
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			if urn := ae.duplicateOf(); urn != "" {
				st.Notes = append(st.Notes, "LinkedIn already had this post (its content carries this upload's video); reelay did not post it again")
				return st.finish(urn), nil
			}
			if ae.HTTP == http.StatusBadRequest || ae.HTTP == http.StatusUnprocessableEntity {
				lower := strings.ToLower(ae.Message)
				if strings.Contains(lower, "commentary") || strings.Contains(lower, "title") {
					return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, ae.HTTP, "%s", ae.Error())
				}
			}
		}
		return provider.Outcome{}, p.classify(err)
	}
	urn := h.Get("X-RestLi-Id")
	if urn == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusCreated,
			"LinkedIn created the post but answered no x-restli-id; it is not posted again")
	}
	return st.finish(urn), nil
}

// finish records the published post.
func (st State) finish(urn string) provider.Outcome {
	st.Phase = phaseDone
	st.PostURN = urn
	st.URL = PostURL(urn)
	var msg []string
	for _, n := range st.Notes {
		msg = append(msg, strings.ToUpper(n[:1])+n[1:]+".")
	}
	st.Message = strings.Join(msg, " ")
	return st.outcome()
}

// restart begins the upload again with a new initializeUpload; only used while the video was
// never finalized, so it cannot be posted twice.
func (p *Provider) restart(st State, why string) (provider.Outcome, error) {
	if st.Restarts >= maxRestarts {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"LinkedIn upload failed after %d new starts: %s", st.Restarts, why)
	}
	ns := State{Restarts: st.Restarts + 1, Notes: st.Notes}
	return ns.next(provider.StatusUploading, 0), nil
}

// next returns the outcome of a step that is not final.
func (st State) next(status string, after time.Duration) provider.Outcome {
	return provider.Next(st, status, after)
}

// outcome returns the final outcome stored in a done State.
func (st State) outcome() provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: provider.StatusPublished, State: raw, ExternalID: st.PostURN, URL: st.URL, Message: st.Message}
}

// Identify returns who the access token belongs to: GET /v2/userinfo (OpenID Connect), whose
// sub is the member id the author URN urn:li:person:{sub} is built from. baseURL "" means the
// configured one. A rejected token is an auth_expired *provider.Error.
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	c, err := p.client(baseURL, credentials)
	if err != nil {
		return provider.Identity{}, err
	}
	var ui userinfo
	if _, err := c.do(ctx, http.MethodGet, pathUserinfo, nil, &ui, false); err != nil {
		return provider.Identity{}, p.classify(err)
	}
	if ui.Sub == "" {
		return provider.Identity{}, provider.Permanent(provider.CategoryInternal, http.StatusOK, "LinkedIn's userinfo answered no sub")
	}
	return provider.Identity{ExternalID: ui.Sub, Name: ui.Name, AvatarURL: ui.Picture}, nil
}

// Options returns the publish options of a LinkedIn channel: the static registry's, plus the
// member the posts go to, read live from userinfo (which also verifies the token).
func (p *Provider) Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error) {
	id, err := p.Identify(ctx, baseURL, credentials)
	if err != nil {
		return nil, err
	}
	opts := map[string]any{}
	account := map[string]any{"id": id.ExternalID, "author": authorURN(id.ExternalID), "name": id.Name}
	if id.AvatarURL != "" {
		account["avatar_url"] = id.AvatarURL
	}
	opts["account"] = account
	return opts, nil
}
