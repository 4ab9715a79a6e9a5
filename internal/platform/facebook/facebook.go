// Package facebook publishes Reels to Facebook Pages through the Reels Publishing API
// (graph.facebook.com, with the bytes sent to rupload.facebook.com), with a Page access token.
//
// A destination goes through these steps, one per Step call, and the returned State is
// stored before the next:
//
//  1. POST /{page-id}/video_reels upload_phase=start → State{video_id, upload_url}.
//  2. GET /{video-id}?fields=status, then POST {upload_url} with "Authorization: OAuth
//     {token}", "offset" and "file_size" headers and the bytes from the offset to the end as
//     the body, streamed from the stored video → State{uploaded}. The offset is the platform's
//     own count of the bytes it holds (uploading_phase.bytes_transferred), so an upload broken
//     by a crash or a network failure resumes where it stopped and is never sent again whole;
//     an upload the status reports complete is not sent at all.
//  3. GET /{video-id}?fields=status, then POST /{page-id}/video_reels upload_phase=finish,
//     video_id, video_state=PUBLISHED, description, title → State{finished}. A publishing
//     phase already under way or complete means a finish went through before a crash: it is
//     not sent again. A processing error fails the destination before any finish.
//  4. GET /{video-id}?fields=status, polled with a growing, capped interval, until the
//     publishing phase is complete → published, with the video id and
//     https://www.facebook.com/reel/{video-id}; a processing or publishing error fails it
//     (media_rejected, with Meta's message).
//
// An upload session that expired before its bytes all arrived is started anew (twice at
// most): nothing was published from it.
//
// Errors map from Graph's codes: 190/102/104/10/2xx/25 → auth_expired; 4/17/32/613/341/368 →
// transient rate_limited (the wait from X-Business-Use-Case-Usage); 9 (the 30 reels a day) →
// quota_exceeded; 1, 2, -1, -2 and HTTP 5xx → transient upstream_unavailable; 100 →
// invalid_options; 6000 (with the reels subcodes 1363040 aspect ratio, 1363127 resolution,
// 1363128 duration, 1363129 frame rate), 352 and 24 → media_rejected. The upload host's
// OffsetInvalidError and PartialRequestError are transient (the next Step reads the offset
// again); its ProcessingFailedError is media_rejected.
package facebook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

// APIVersion is the Graph API version the provider speaks (the one the Instagram provider
// speaks: one Meta app, one version).
const APIVersion = "v26.0"

// DefaultBaseURL is the Graph API root, version included.
const DefaultBaseURL = APIHost + "/" + APIVersion

// APIHost is the API's host; calls go below it and the version (Config.APIVersion).
const APIHost = "https://graph.facebook.com"

// UploadHost is the host of the upload URLs Meta hands out. The Page token goes to an upload
// URL only on this host or on the API's own host (a simulator).
const UploadHost = "rupload.facebook.com"

// Platform is the provider's platform identifier.
const Platform = "facebook"

// ReelURL is the public address of a published reel.
func ReelURL(videoID string) string { return "https://www.facebook.com/reel/" + videoID }

// Config configures the provider. The zero value is usable.
type Config struct {
	// APIVersion replaces APIVersion in the API root when BaseURL is empty
	// (REELAY_FACEBOOK_API_VERSION).
	APIVersion string
	// BaseURL is the Graph API root including the version segment (DefaultBaseURL when
	// empty). A destination's BaseURL, when set, overrides it (sandbox channels, tests).
	BaseURL string
	// HTTPClient makes every request (one without an overall timeout when nil: uploads are
	// large; APITimeout bounds each API call, the context the upload).
	HTTPClient *http.Client
	// APITimeout bounds each Graph call (30 s when 0).
	APITimeout time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// PollInitial is the first wait before reading the status after finishing (2 s when 0);
	// the waits grow from it as provider.PollDelay says, up to PollMax (1 min when 0).
	PollInitial, PollMax time.Duration
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider publishes Reels to Facebook Pages. It implements provider.Provider.
type Provider struct {
	cfg Config
}

// The contract the Provider keeps (internal/provider), checked by the compiler: app.New
// finds these abilities by asking.
var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.Identifier    = (*Provider)(nil)
	_ provider.MetricsSource = (*Provider)(nil)
	_ provider.CommentSource = (*Provider)(nil)
)

// New returns a provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = cmp.Or(cfg.BaseURL, APIHost+"/"+cmp.Or(cfg.APIVersion, APIVersion))
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.Now = provider.Clock(cfg.Now)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, 2*time.Second)
	cfg.PollMax = provider.Positive(cfg.PollMax, time.Minute)
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return Platform }

// State is what the provider stores between steps. It holds the platform's references only,
// never a token: the upload URL carries none (the token travels in a header).
type State struct {
	// VideoID is the reel's video, from the start phase; it is also the published reel's id.
	VideoID string `json:"video_id,omitempty"`
	// UploadURL is where the bytes go.
	UploadURL string `json:"upload_url,omitempty"`
	// Uploaded is set once the platform holds every byte.
	Uploaded bool `json:"uploaded,omitempty"`
	// Finished is set once the finish phase went through.
	Finished bool `json:"finished,omitempty"`
	// Polls counts the status reads after finishing that found the reel not yet published.
	Polls int `json:"polls,omitempty"`
	// Restarts counts the upload sessions started anew after one expired.
	Restarts int `json:"restarts,omitempty"`
}

const maxRestarts = 2

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	token, err := metagraph.AccessToken("Facebook", "Page access token", d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	var st State
	var opts Options
	if err := metagraph.Decode("Facebook", d, &st, &opts); err != nil {
		return provider.Outcome{}, err
	}
	if d.Account == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "Facebook: the channel has no Page id")
	}
	g := p.graph(d.BaseURL, token)
	switch {
	case st.VideoID == "":
		return p.start(ctx, g, d, st.Restarts)
	case !st.Uploaded:
		return p.upload(ctx, g, d, st)
	case !st.Finished:
		return p.finish(ctx, g, d, st, opts)
	default:
		return p.poll(ctx, g, st)
	}
}

func (p *Provider) graph(baseURL, token string) metagraph.Client {
	if baseURL == "" {
		baseURL = p.cfg.BaseURL
	}
	return metagraph.New("Facebook", baseURL, token, p.cfg.HTTPClient)
}

func (p *Provider) apiContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.cfg.APITimeout)
}

// start opens an upload session.
func (p *Provider) start(ctx context.Context, g metagraph.Client, d *provider.Destination, restarts int) (provider.Outcome, error) {
	ctx, cancel := p.apiContext(ctx)
	defer cancel()
	var res struct {
		VideoID   string `json:"video_id"`
		UploadURL string `json:"upload_url"`
	}
	// A session started twice is harmless: a reel is published only by the finish phase of its
	// own video_id (developers.facebook.com/docs/video-api/guides/reels-publishing), and the
	// other session never gets a byte.
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		return g.Post(ctx, "/"+url.PathEscape(d.Account)+"/video_reels", url.Values{"upload_phase": {"start"}}, &res)
	})
	if err != nil {
		return provider.Outcome{}, classify(err)
	}
	if res.VideoID == "" || res.UploadURL == "" {
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Facebook: the start phase answered no video id or upload URL")
	}
	if err := checkUploadURL(res.UploadURL, g.BaseURL); err != nil {
		return provider.Outcome{}, err
	}
	return p.outcome(provider.StatusUploading, State{VideoID: res.VideoID, UploadURL: res.UploadURL, Restarts: restarts}, 0)
}

// checkUploadURL refuses an upload URL on a host the Page token must not go to.
func checkUploadURL(raw, base string) error {
	u, err := url.Parse(raw)
	if err == nil {
		b, berr := url.Parse(base)
		switch {
		case u.Scheme == "https" && u.Host == UploadHost:
			return nil
		case berr == nil && u.Host == b.Host && u.Scheme == b.Scheme:
			return nil
		}
	}
	return provider.Permanent(provider.CategoryInternal, 0, "Facebook: the upload URL %q is not on %s; the Page token is not sent there", raw, UploadHost)
}

// phase is one phase of a video's status.
type phase struct {
	Status           string `json:"status"`
	BytesTransferred *int64 `json:"bytes_transferred"`
	BytesTransfered  *int64 `json:"bytes_transfered"` // the guide's spelling
	PublishStatus    string `json:"publish_status"`
	Error            *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (ph phase) failed() bool { return ph.Status == "error" || ph.Error != nil }

func (ph phase) message() string {
	if ph.Error != nil && ph.Error.Message != "" {
		return ph.Error.Message
	}
	return ""
}

// bytes is how many bytes the platform holds (either spelling).
func (ph phase) bytes() int64 {
	switch {
	case ph.BytesTransferred != nil:
		return *ph.BytesTransferred
	case ph.BytesTransfered != nil:
		return *ph.BytesTransfered
	}
	return 0
}

// videoStatus is GET /{video-id}?fields=status.
type videoStatus struct {
	VideoStatus string `json:"video_status"`
	Uploading   phase  `json:"uploading_phase"`
	Processing  phase  `json:"processing_phase"`
	Publishing  phase  `json:"publishing_phase"`
}

func (p *Provider) status(ctx context.Context, g metagraph.Client, videoID string) (videoStatus, error) {
	ctx, cancel := p.apiContext(ctx)
	defer cancel()
	var res struct {
		Status videoStatus `json:"status"`
	}
	// A GET: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		return g.Get(ctx, "/"+url.PathEscape(videoID), url.Values{"fields": {"status"}}, &res)
	})
	if err != nil {
		return videoStatus{}, classify(err)
	}
	return res.Status, nil
}

// refusal is the media_rejected error of a video whose processing or publishing failed, or
// nil.
func refusal(s videoStatus) error {
	for _, ph := range []phase{s.Uploading, s.Processing, s.Publishing} {
		if ph.failed() {
			msg := ph.message()
			if msg == "" {
				msg = "Facebook could not process the video (status " + s.VideoStatus + ")"
			}
			return provider.Permanent(provider.CategoryMediaRejected, 0, "Facebook: %s", msg)
		}
	}
	if s.VideoStatus == "error" || s.VideoStatus == "upload_failed" {
		return provider.Permanent(provider.CategoryMediaRejected, 0, "Facebook: the video failed (video_status %s)", s.VideoStatus)
	}
	return nil
}

// restart drops an expired upload session for a new one.
func (p *Provider) restart(st State) (provider.Outcome, error) {
	if st.Restarts >= maxRestarts {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"Facebook: upload session %s expired, after %d new sessions", st.VideoID, st.Restarts)
	}
	return p.outcome(provider.StatusUploading, State{Restarts: st.Restarts + 1}, 0)
}

// upload sends the bytes the platform does not hold yet.
func (p *Provider) upload(ctx context.Context, g metagraph.Client, d *provider.Destination, st State) (provider.Outcome, error) {
	s, err := p.status(ctx, g, st.VideoID)
	if err != nil {
		return provider.Outcome{}, err
	}
	if s.VideoStatus == "expired" {
		return p.restart(st)
	}
	if err := refusal(s); err != nil {
		return provider.Outcome{}, err
	}
	if s.Uploading.Status == "complete" {
		// Every byte arrived (the answer to the last upload was lost): nothing is sent again.
		st.Uploaded = true
		return p.outcome(provider.StatusProcessing, st, 0)
	}
	size := d.Video.Size
	offset := s.Uploading.bytes()
	if size <= 0 || d.Video.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "Facebook: the video has no bytes to upload")
	}
	if offset < 0 || offset > size {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "Facebook: the platform holds %d bytes of a %d-byte video", offset, size)
	}
	if err := checkUploadURL(st.UploadURL, g.BaseURL); err != nil {
		return provider.Outcome{}, err
	}
	// An upload that failed may have delivered some or all of its bytes. Before it is made
	// again the status tells how many the platform holds, and the bytes go again from there
	// (the upload host takes them at the offset header): none twice, and none at all once the
	// status reads complete.
	moved := false
	err = p.cfg.Repeat.DoChecked(ctx, nil, func() error {
		return p.send(ctx, g, d, st, offset)
	}, func() (bool, error) {
		s, err := p.status(ctx, g, st.VideoID)
		switch {
		case err != nil:
			return false, err
		case s.Uploading.Status == "complete":
			return true, nil
		case s.VideoStatus == "expired" || refusal(s) != nil || s.Uploading.bytes() < 0 || s.Uploading.bytes() > size:
			moved = true // the next Step reads the status and acts on it
			return true, nil
		}
		offset = s.Uploading.bytes()
		return false, nil
	})
	switch {
	case err != nil:
		return provider.Outcome{}, err
	case moved:
		return p.outcome(provider.StatusUploading, st, 0)
	}
	st.Uploaded = true
	return p.outcome(provider.StatusProcessing, st, 0)
}

// send posts the video's bytes from offset to the end to the upload URL, streamed from storage.
func (p *Provider) send(ctx context.Context, g metagraph.Client, d *provider.Destination, st State, offset int64) error {
	size := d.Video.Size
	body, err := d.Video.Open(ctx, offset)
	if err != nil {
		return provider.Transient(provider.CategoryInternal, 0, 0, "Facebook: opening the video at byte %d: %v", offset, err)
	}
	// The transport closes the body once done with it, which may be after Do returned (an
	// answer before the whole body was read): closing it here too would race its reads.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.UploadURL, body)
	if err != nil {
		body.Close()
		return provider.Permanent(provider.CategoryInternal, 0, "Facebook: building the upload: %v", err)
	}
	req.ContentLength = size - offset
	req.Header.Set("Authorization", "OAuth "+g.Token)
	req.Header.Set("offset", strconv.FormatInt(offset, 10))
	req.Header.Set("file_size", strconv.FormatInt(size, 10))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := g.HTTP.Do(req)
	if err != nil {
		err = provider.WithoutURL(err)
		// The next try asks the platform how many bytes arrived and goes on from there.
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Facebook: uploading from byte %d: %v", offset, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var res struct {
		Success   bool `json:"success"`
		DebugInfo *struct {
			Retriable bool   `json:"retriable"`
			Type      string `json:"type"`
			Message   string `json:"message"`
		} `json:"debug_info"`
		Error *metagraph.ErrorBody `json:"error"`
	}
	_ = json.Unmarshal(raw, &res)
	switch {
	case resp.StatusCode/100 == 2 && res.Success:
		return nil
	case res.Error != nil:
		return classify(&metagraph.APIError{Status: resp.StatusCode, Header: resp.Header, Body: *res.Error})
	case res.DebugInfo != nil:
		di := res.DebugInfo
		msg := fmt.Sprintf("Facebook: upload from byte %d: %s: %s", offset, di.Type, di.Message)
		switch di.Type {
		case "OffsetInvalidError", "PartialRequestError":
			return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "%s", msg)
		case "ProcessingFailedError":
			return provider.Permanent(provider.CategoryMediaRejected, resp.StatusCode, "%s", msg)
		}
		if di.Retriable || resp.StatusCode >= 500 {
			return provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0, "%s", msg)
		}
		return provider.Permanent(provider.CategoryInternal, resp.StatusCode, "%s", msg)
	}
	return classify(&metagraph.APIError{Status: resp.StatusCode, Header: resp.Header, Raw: strings.TrimSpace(string(raw[:min(len(raw), 300)]))})
}

// finish publishes the uploaded reel, unless a finish already went through.
func (p *Provider) finish(ctx context.Context, g metagraph.Client, d *provider.Destination, st State, o Options) (provider.Outcome, error) {
	s, err := p.status(ctx, g, st.VideoID)
	if err != nil {
		return provider.Outcome{}, err
	}
	if err := refusal(s); err != nil {
		return provider.Outcome{}, err
	}
	if finished(s) {
		// A finish went through before the process died: it is not sent twice.
		st.Finished = true
		return p.outcome(provider.StatusProcessing, st, p.cfg.PollInitial)
	}
	form := url.Values{"upload_phase": {"finish"}, "video_id": {st.VideoID}, "video_state": {"PUBLISHED"}}
	desc := o.Description
	if desc == "" {
		desc = d.Caption
	}
	title := o.Title
	if title == "" {
		title = d.Title
	}
	if desc != "" {
		form.Set("description", desc)
	}
	if title != "" {
		form.Set("title", title)
	}
	actx, cancel := p.apiContext(ctx)
	defer cancel()
	var res struct {
		Success bool `json:"success"`
	}
	// A finish that failed may have gone through: before it is made again the status tells, as
	// above (a publishing phase under way or complete), and a finish found there is not sent
	// twice. A finish whose answer was lost for good is found the same way by the next Step.
	err = p.cfg.Repeat.DoChecked(ctx, classify, func() error {
		return g.Post(actx, "/"+url.PathEscape(d.Account)+"/video_reels", form, &res)
	}, func() (bool, error) {
		s, err := p.status(ctx, g, st.VideoID)
		if err != nil {
			return false, err
		}
		res.Success = finished(s)
		return res.Success, nil
	})
	if err != nil {
		return provider.Outcome{}, classify(err)
	}
	if !res.Success {
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Facebook: the finish phase did not answer success")
	}
	st.Finished = true
	return p.outcome(provider.StatusProcessing, st, p.cfg.PollInitial)
}

// finished reports whether a finish went through: its publishing phase is under way or done.
func finished(s videoStatus) bool {
	return s.Publishing.Status == "in_progress" || s.Publishing.Status == "complete" ||
		s.Publishing.PublishStatus == "published" || s.Publishing.PublishStatus == "scheduled"
}

// poll waits for the reel to be published.
func (p *Provider) poll(ctx context.Context, g metagraph.Client, st State) (provider.Outcome, error) {
	s, err := p.status(ctx, g, st.VideoID)
	if err != nil {
		return provider.Outcome{}, err
	}
	if err := refusal(s); err != nil {
		return provider.Outcome{}, err
	}
	if s.Publishing.Status == "complete" || s.Publishing.PublishStatus == "published" {
		out, err := p.outcome(provider.StatusPublished, st, 0)
		out.ExternalID, out.URL = st.VideoID, ReelURL(st.VideoID)
		return out, err
	}
	st.Polls++
	return p.outcome(provider.StatusProcessing, st, p.backoff(st.Polls))
}

// backoff is the wait before status read number n+1 (provider.PollDelay).
func (p *Provider) backoff(n int) time.Duration {
	return provider.PollDelay(p.cfg.PollInitial, p.cfg.PollMax, n)
}

func (p *Provider) outcome(status string, st State, after time.Duration) (provider.Outcome, error) {
	return metagraph.Outcome("Facebook", status, st, after)
}

// Identify tells whose the credentials are: GET /me?fields=id,name,username,category,picture
// with the Page access token answers the Page (its id is the channel's external account id).
// A user access token is refused (Reels publish as the Page), as is a rejected token: both
// are auth_expired *provider.Error values. baseURL "" means the configured one.
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	token, err := metagraph.AccessToken("Facebook", "Page access token", credentials)
	if err != nil {
		return provider.Identity{}, err
	}
	g := p.graph(baseURL, token)
	ctx, cancel := p.apiContext(ctx)
	defer cancel()
	var page struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Username string `json:"username"`
		Category string `json:"category"`
		Picture  struct {
			Data struct {
				URL string `json:"url"`
			} `json:"data"`
		} `json:"picture"`
	}
	// category exists on Pages only: with a user token, Graph refuses the field.
	err = g.Get(ctx, "/me", url.Values{"fields": {"id,name,username,category,picture"}}, &page)
	if ae := (*metagraph.APIError)(nil); errors.As(err, &ae) && (ae.Body.Code == metagraph.CodeInvalidParameter || ae.Body.Code == 12) &&
		strings.Contains(ae.Body.Message, "(User)") {
		return provider.Identity{}, provider.Permanent(provider.CategoryAuthExpired, ae.Status,
			"Facebook: the access token is a user token; Reels are published with the Page's access token (from /me/accounts)")
	}
	if err != nil {
		return provider.Identity{}, classify(err)
	}
	if page.ID == "" {
		return provider.Identity{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Facebook: /me answered no id")
	}
	return provider.Identity{ExternalID: page.ID, Name: page.Name, Username: page.Username, AvatarURL: page.Picture.Data.URL}, nil
}
