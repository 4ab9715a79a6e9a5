// Package mastodon publishes video to a Mastodon instance through its REST API: the video
// is uploaded as a media attachment, processed by the instance, then attached to a new status.
//
// A destination goes through these steps, one per Step call, each returning the State to store
// before the next:
//
//  1. GET /api/v2/instance (GET /api/v1/instance on Mastodon 3.x; cached per instance for
//     Config.InstanceTTL): what the instance refuses is refused here before any byte is sent,
//     naming the instance and its limit: text over configuration.statuses.max_characters as
//     Mastodon counts it (graphemes, each URL as characters_reserved_per_url, mentions without
//     their domain, the content warning included) → invalid_options; a video type not in
//     supported_mime_types, a video over video_size_limit or over video_matrix_limit pixels, a
//     thumbnail that is no supported image or over image_size_limit → media_rejected.
//     → State{phase upload, upload_started_at}: from here on an upload may reach the instance.
//  2. POST /api/v2/media, multipart/form-data with the video streamed from the stored media
//     (and the thumbnail, and a description when the options carry one) → 202 with url null
//     while the instance processes it (or 200 when done) → State{media_id}.
//  3. GET /api/v1/media/:id, polled with a doubling, capped interval (Outcome.After): 206
//     while processing, 200 with url when processed, 422 when processing failed
//     (media_rejected, with the instance's message).
//  4. POST /api/v1/statuses with Idempotency-Key = Destination.ID, {status, media_ids,
//     visibility, sensitive, spoiler_text, language} → the Status: published, with its id and
//     url.
//
// Crash safety. After step 2 the media id is in State and the video is never sent again while
// the instance has it. A crash during step 2, before the media id is stored, cannot be
// recovered: Mastodon has no way to list a user's unattached media, so the next Step uploads
// again and the first upload stays on the instance as an orphan that no status uses, which
// Mastodon's media cleanup deletes after a day. State.UploadStartedAt records that an upload
// may have begun. The status is never posted twice: a repeated POST /api/v1/statuses with the
// same Idempotency-Key answers the status the first one created, for an hour ("Idempotency keys
// are stored for up to 1 hour"). A post step resumed later than that first asks the instance:
// GET /api/v1/media/:id answers 404 once the media is attached, and the account's own recent
// media statuses are then searched for the one carrying it. Media gone without any status
// carrying it (cleaned up after a day) is uploaded again, a bounded number of times.
//
// Errors: {"error": "..."} with 401/403 → auth_expired; 422 → media_rejected for media,
// invalid_options for the status (except "not finished processing", which goes back to
// polling); 413 → media_rejected; 429 → rate_limited with the wait from Retry-After or
// X-RateLimit-Reset (30 media uploads per 30 minutes, 300 statuses per 3 hours, 300 calls per
// 5 minutes); 5xx, 408 and network failures → upstream_unavailable, transient.
package mastodon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// Config configures the provider. Zero fields take the defaults in their comments. There is no
// default base URL: each channel names its instance (credentials instance_url), and a
// Destination's BaseURL, when set (sandbox channels), wins over it.
type Config struct {
	// HTTPClient makes every request (a client without an overall timeout: uploads are large;
	// contexts bound each call).
	HTTPClient *http.Client
	// Now is the clock (time.Now).
	Now func() time.Time
	// APITimeout bounds each call other than the upload (30 s).
	APITimeout time.Duration
	// PollInitial and PollMax bound the wait between media status polls (1 s doubling every
	// second poll, at most 15 s).
	PollInitial, PollMax time.Duration
	// InstanceTTL is how long an instance's configuration is reused (10 min).
	InstanceTTL time.Duration
	// MinServerVersion is the oldest Mastodon the channel check accepts (Description.API.Version;
	// REELAY_MASTODON_API_VERSION).
	MinServerVersion string
	// IdempotencyWindow is how long after the post step began a repeated post relies on the
	// Idempotency-Key alone (55 min; Mastodon keeps keys for an hour). Later, the instance is
	// asked whether the media is attached already.
	IdempotencyWindow time.Duration
	// MaxUploads bounds the uploads of one destination when the instance lost the media
	// before it was posted (3).
	MaxUploads int
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider is Mastodon's provider.Provider.
type Provider struct {
	cfg       Config
	instances instanceCache
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

// New returns a Mastodon provider.
func New(cfg Config) *Provider {
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.Now = provider.Clock(cfg.Now)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, time.Second)
	cfg.PollMax = provider.Positive(cfg.PollMax, 15*time.Second)
	cfg.InstanceTTL = provider.Positive(cfg.InstanceTTL, 10*time.Minute)
	cfg.MinServerVersion = cmp.Or(cfg.MinServerVersion, Description.API.Version)
	cfg.IdempotencyWindow = provider.Positive(cfg.IdempotencyWindow, 55*time.Minute)
	cfg.MaxUploads = provider.Positive(cfg.MaxUploads, 3)
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.Mastodon }

// Phases of State.
const (
	phaseStart      = ""
	phaseUpload     = "upload"
	phaseProcessing = "processing"
	phasePost       = "post"
	phaseDone       = "done"
)

// State is what the publisher stores between Steps. It holds no secret.
type State struct {
	Phase string `json:"phase,omitempty"`
	// Instance is the instance's host, for messages.
	Instance string `json:"instance,omitempty"`
	// UploadStartedAt is when the upload phase began: from then on an upload may have reached
	// the instance, and one cut off before its media id was stored is an orphan there.
	UploadStartedAt time.Time `json:"upload_started_at,omitzero"`
	// Uploads counts the uploads sent (more than one when the instance lost the media).
	Uploads int `json:"uploads,omitempty"`
	// MediaID is the instance's media attachment; once set, the video is not sent again.
	MediaID string `json:"media_id,omitempty"`
	Polls   int    `json:"polls,omitempty"`
	// PostStartedAt is when the post phase began: the Idempotency-Key of any post attempt is
	// younger than that.
	PostStartedAt time.Time `json:"post_started_at,omitzero"`
	Lookups       int       `json:"lookups,omitempty"`
	// The outcome, once done.
	StatusID string `json:"status_id,omitempty"`
	URL      string `json:"url,omitempty"`
	Message  string `json:"message,omitempty"`
}

func parseOptions(raw json.RawMessage) (Options, error) {
	var o Options
	if err := provider.UnmarshalStored(raw, &o); err != nil {
		return o, fmt.Errorf("mastodon options: %w", err)
	}
	if o.Visibility == "" {
		o.Visibility = "public"
	}
	if !slices.Contains(visibilities, o.Visibility) {
		return o, fmt.Errorf("mastodon.visibility %q is not one of public, unlisted, private, direct", o.Visibility)
	}
	if o.Language != "" && !validLanguageCode(o.Language) {
		return o, fmt.Errorf("mastodon.language %q is not an ISO 639-1 language code", o.Language)
	}
	if n := utf8.RuneCountInString(o.Description); n > altTextMax {
		return o, fmt.Errorf("mastodon.description is %d characters; Mastodon allows %d", n, altTextMax)
	}
	return o, nil
}

// text is the status text: the options' own, else the caption, else the title.
func (o Options) text(d *provider.Destination) string {
	return d.Text(o.Text)
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "Mastodon", &st); err != nil {
		return provider.Outcome{}, err
	}
	c, err := p.client(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	opts, err := parseOptions(d.Options)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, c, d, opts)
	case phaseUpload:
		return p.upload(ctx, c, d, opts, st)
	case phaseProcessing:
		return p.poll(ctx, c, st)
	case phasePost:
		return p.post(ctx, c, d, opts, st)
	case phaseDone:
		return st.outcome(), nil
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored Mastodon state has unknown phase %q", st.Phase)
}

// client resolves a channel's instance and token: baseURL (a Destination's, the simulator's
// for sandbox channels) wins over the credentials' instance_url.
func (p *Provider) client(baseURL string, creds map[string]string) (*client, error) {
	token := strings.TrimSpace(creds["access_token"])
	if token == "" {
		return nil, provider.Permanent(provider.CategoryAuthExpired, 0, "the Mastodon channel has no access token")
	}
	raw := strings.TrimSpace(baseURL)
	if raw == "" {
		raw = creds["instance_url"]
	}
	base, host, err := instanceBase(raw)
	if err != nil {
		return nil, provider.Permanent(provider.CategoryAuthExpired, 0, "the Mastodon channel's instance: %v", err)
	}
	if _, h, err := instanceBase(creds["instance_url"]); err == nil {
		host = h // the instance's own name, also when a sandbox base stands in for it
	}
	return &client{p: p, base: base, host: host, token: token}, nil
}

// start checks the post against the instance's limits; nothing is uploaded in this step.
func (p *Provider) start(ctx context.Context, c *client, d *provider.Destination, opts Options) (provider.Outcome, error) {
	inst, err := c.instance(ctx)
	if err != nil {
		return provider.Outcome{}, classify(err, "")
	}
	if err := checkPost(inst, c.host, d, opts); err != nil {
		return provider.Outcome{}, err
	}
	st := State{Phase: phaseUpload, Instance: c.host, UploadStartedAt: p.cfg.Now()}
	return st.next(provider.StatusUploading, 0), nil
}

// checkPost refuses what the instance would refuse, naming the instance and its limit.
func checkPost(inst Instance, host string, d *provider.Destination, opts Options) error {
	text := opts.text(d)
	if n := platform.MastodonLength(text, opts.SpoilerText, inst.CharactersReservedPerURL); n > inst.MaxCharacters {
		what := "text"
		if opts.SpoilerText != "" {
			what = "text with its content warning"
		}
		return provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Mastodon %s is %d characters as %s counts them (each link as %d); %s allows at most %d",
			what, n, host, inst.CharactersReservedPerURL, host, inst.MaxCharacters)
	}
	v := d.Video
	if v.Size <= 0 || v.Open == nil {
		return provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	vt, err := mediaType(v.ContentType, "video/mp4")
	if err != nil || !strings.HasPrefix(vt, "video/") {
		return provider.Permanent(provider.CategoryMediaRejected, 0, "the video's type %q is not a video type", v.ContentType)
	}
	if len(inst.SupportedMimeTypes) > 0 && !slices.Contains(inst.SupportedMimeTypes, vt) {
		return provider.Permanent(provider.CategoryMediaRejected, 0,
			"%s does not accept %s media (it accepts %s)", host, vt, strings.Join(videoTypes(inst.SupportedMimeTypes), ", "))
	}
	if inst.VideoSizeLimit > 0 && v.Size > inst.VideoSizeLimit {
		return provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %d bytes; %s accepts videos up to %d bytes (video_size_limit)", v.Size, host, inst.VideoSizeLimit)
	}
	if px := int64(v.Width) * int64(v.Height); inst.VideoMatrixLimit > 0 && px > inst.VideoMatrixLimit {
		return provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %dx%d (%d pixels); %s accepts at most %d pixels per frame (video_matrix_limit)",
			v.Width, v.Height, px, host, inst.VideoMatrixLimit)
	}
	if t := d.Thumbnail; t != nil {
		tt, err := mediaType(t.ContentType, "")
		if err != nil || !strings.HasPrefix(tt, "image/") ||
			(len(inst.SupportedMimeTypes) > 0 && !slices.Contains(inst.SupportedMimeTypes, tt)) {
			return provider.Permanent(provider.CategoryMediaRejected, 0, "%s does not accept a thumbnail of type %q", host, t.ContentType)
		}
		if t.Open == nil || t.Size <= 0 {
			return provider.Permanent(provider.CategoryMediaRejected, 0, "the thumbnail is empty")
		}
		if inst.ImageSizeLimit > 0 && t.Size > inst.ImageSizeLimit {
			return provider.Permanent(provider.CategoryMediaRejected, 0,
				"the thumbnail is %d bytes; %s accepts images up to %d bytes (image_size_limit)", t.Size, host, inst.ImageSizeLimit)
		}
	}
	return nil
}

func mediaType(ct, def string) (string, error) {
	if strings.TrimSpace(ct) == "" {
		if def == "" {
			return "", errors.New("no content type")
		}
		return def, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	return mt, err
}

func videoTypes(types []string) []string {
	var out []string
	for _, t := range types {
		if strings.HasPrefix(t, "video/") {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return []string{"no video"}
	}
	return out
}

// upload sends the video as a new media attachment.
func (p *Provider) upload(ctx context.Context, c *client, d *provider.Destination, opts Options, st State) (provider.Outcome, error) {
	if st.Uploads >= p.cfg.MaxUploads {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"%s lost the uploaded video %d times before it could be posted", c.host, st.Uploads)
	}
	vt, _ := mediaType(d.Video.ContentType, "video/mp4")
	tt := ""
	if d.Thumbnail != nil {
		tt, _ = mediaType(d.Thumbnail.ContentType, "")
	}
	var a attachment
	var code int
	// An upload made again after one that reached the instance leaves a media attachment no
	// status uses: it is never shown, and Mastodon deletes unattached media after a day (see the
	// package comment). The instance takes no Idempotency-Key here, and has no way to list
	// unattached media, so this is the one upload that can be sent twice.
	err := p.cfg.Repeat.Do(ctx, func(err error) *provider.Error { return classify(err, provider.CategoryMediaRejected) }, func() error {
		body, err := newUploadBody(ctx, d.Video, vt, d.Thumbnail, tt, opts.Description)
		if err != nil {
			return provider.Transient(provider.CategoryInternal, 0, 0, "Mastodon upload: %v", err)
		}
		// call hands body to the transport, which closes it once done with it (possibly after
		// the answer): closing it here too would race its reads.
		hdr := http.Header{"Content-Type": {body.contentType}}
		code, err = c.call(ctx, http.MethodPost, pathMediaUpload, hdr, body, body.length, &a)
		return err
	})
	if err != nil {
		return provider.Outcome{}, classify(err, provider.CategoryMediaRejected)
	}
	if a.ID == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, code, "%s answered the upload without a media id", c.host)
	}
	st.Uploads++
	st.MediaID, st.Polls = a.ID, 0
	if code == http.StatusOK && a.URL != nil {
		return p.toPost(st), nil // processed synchronously
	}
	st.Phase = phaseProcessing
	return st.next(provider.StatusProcessing, p.pollDelay(0)), nil
}

// toPost moves to the post phase, which runs at once.
func (p *Provider) toPost(st State) provider.Outcome {
	st.Phase, st.PostStartedAt, st.Lookups = phasePost, p.cfg.Now(), 0
	return st.next(provider.StatusProcessing, 0)
}

// reupload starts the upload over after the instance lost the media before it was posted.
func (p *Provider) reupload(st State, why string) (provider.Outcome, error) {
	if st.Uploads >= p.cfg.MaxUploads {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"%s; the video was uploaded %d times and is not sent again", why, st.Uploads)
	}
	ns := State{Phase: phaseUpload, Instance: st.Instance, UploadStartedAt: p.cfg.Now(), Uploads: st.Uploads,
		Message: why + "; the video was uploaded again"}
	return ns.next(provider.StatusUploading, 0), nil
}

// poll asks whether the instance has processed the media.
func (p *Provider) poll(ctx context.Context, c *client, st State) (provider.Outcome, error) {
	var a attachment
	code, err := c.get(ctx, pathMedia+url.PathEscape(st.MediaID), &a)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			switch ae.Status {
			case http.StatusUnprocessableEntity:
				return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, ae.Status,
					"%s could not process the video: %s", c.host, ae.Message)
			case http.StatusNotFound:
				// Only a post attaches the media, and none was made: the media is gone.
				return p.reupload(st, fmt.Sprintf("%s no longer has media %s", c.host, st.MediaID))
			}
		}
		return provider.Outcome{}, classify(err, provider.CategoryMediaRejected)
	}
	if code == http.StatusOK && a.URL != nil {
		return p.toPost(st), nil
	}
	st.Polls++
	return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
}

func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.PollDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

type statusRequest struct {
	Status      string   `json:"status,omitempty"`
	MediaIDs    []string `json:"media_ids"`
	Visibility  string   `json:"visibility"`
	Sensitive   bool     `json:"sensitive,omitempty"`
	SpoilerText string   `json:"spoiler_text,omitempty"`
	Language    string   `json:"language,omitempty"`
}

// post creates the status, with the destination's id as Idempotency-Key.
func (p *Provider) post(ctx context.Context, c *client, d *provider.Destination, opts Options, st State) (provider.Outcome, error) {
	if p.cfg.Now().Sub(st.PostStartedAt) >= p.cfg.IdempotencyWindow {
		// An earlier attempt's key may have expired: ask whether the media is attached.
		var a attachment
		code, err := c.get(ctx, pathMedia+url.PathEscape(st.MediaID), &a)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
			return p.find(ctx, c, st)
		case errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity:
			return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, ae.Status,
				"%s could not process the video: %s", c.host, ae.Message)
		case err != nil:
			return provider.Outcome{}, classify(err, provider.CategoryMediaRejected)
		case code != http.StatusOK || a.URL == nil:
			st.Phase = phaseProcessing
			return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
		}
		st.PostStartedAt = p.cfg.Now() // unattached: no earlier attempt went through
	}
	req := statusRequest{
		Status: opts.text(d), MediaIDs: []string{st.MediaID}, Visibility: opts.Visibility,
		Sensitive: opts.Sensitive, SpoilerText: opts.SpoilerText, Language: opts.Language,
	}
	hdr := http.Header{"Idempotency-Key": {d.ID}}
	var s status
	// Under the same Idempotency-Key, a post made again answers the status the first one
	// created instead of posting twice ("Idempotency keys are stored for up to 1 hour",
	// docs.joinmastodon.org/methods/statuses/#create); the window check above keeps every
	// attempt inside that hour.
	err := p.cfg.Repeat.Do(ctx, func(err error) *provider.Error { return classify(err, provider.CategoryInvalidOptions) }, func() error {
		_, err := c.callJSON(ctx, http.MethodPost, pathStatuses, hdr, req, &s)
		return err
	})
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity {
			switch {
			case strings.Contains(ae.Message, "not finished processing"):
				st.Phase = phaseProcessing
				return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
			case strings.Contains(ae.Message, "not found or already attached"):
				return p.find(ctx, c, st)
			}
		}
		return provider.Outcome{}, classify(err, provider.CategoryInvalidOptions)
	}
	if s.ID == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusOK, "%s answered the post without a status id", c.host)
	}
	return st.done(s, ""), nil
}

// find looks for the status that carries the media among the account's newest media
// statuses: the media is attached, or gone. Gone without a status carrying it, it is uploaded
// again.
func (p *Provider) find(ctx context.Context, c *client, st State) (provider.Outcome, error) {
	acct, err := c.verifyCredentials(ctx)
	if err != nil {
		return provider.Outcome{}, classify(err, "")
	}
	var list []status
	path := pathAccountsBase + url.PathEscape(acct.ID) + "/statuses?only_media=true&limit=40"
	if _, err := c.get(ctx, path, &list); err != nil {
		return provider.Outcome{}, classify(err, "")
	}
	for _, s := range list {
		for _, m := range s.Media {
			if m.ID == st.MediaID {
				return st.done(s, "Found the status on "+c.host+" after an interrupted post; it was not posted again."), nil
			}
		}
	}
	return p.reupload(st, fmt.Sprintf("%s no longer has media %s and no recent status of the account carries it", c.host, st.MediaID))
}

// done stores a posted status as the final outcome.
func (st State) done(s status, msg string) provider.Outcome {
	st.Phase, st.StatusID, st.URL = phaseDone, s.ID, s.link()
	if msg != "" {
		st.Message = strings.TrimSpace(st.Message + ". " + msg)
		st.Message = strings.TrimPrefix(st.Message, ". ")
	}
	return st.outcome()
}

// next returns the outcome of a step that is not final.
func (st State) next(status string, after time.Duration) provider.Outcome {
	return provider.Next(st, status, after)
}

// outcome returns the final outcome stored in a done State.
func (st State) outcome() provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: provider.StatusPublished, State: raw, ExternalID: st.StatusID, URL: st.URL, Message: st.Message}
}

// Identify verifies a channel's credentials (GET /api/v1/accounts/verify_credentials) and
// names the account: ExternalID is "{host}:{account id}" (account ids are only unique within
// their instance), Username "{username}@{host}", Name the display name. baseURL, when set,
// wins over the credentials' instance_url. A rejected token is an auth_expired *provider.Error.
func (p *Provider) Identify(ctx context.Context, baseURL string, creds map[string]string) (provider.Identity, error) {
	c, err := p.client(baseURL, creds)
	if err != nil {
		return provider.Identity{}, err
	}
	a, err := c.verifyCredentials(ctx)
	if err != nil {
		return provider.Identity{}, classify(err, "")
	}
	return provider.Identity{ExternalID: c.host + ":" + a.ID, Name: cmpOr(a.DisplayName, a.Username),
		Username: a.Username + "@" + c.host, AvatarURL: a.Avatar}, nil
}

func cmpOr(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// Options returns the publish options of a Mastodon channel, read live from its instance:
// text (its limit as the instance counts it), instance (the limits a post must meet) and
// account (who posts, verifying the token). Errors are *provider.Error values, as for Step.
func (p *Provider) Options(ctx context.Context, baseURL string, creds map[string]string) (map[string]any, error) {
	c, err := p.client(baseURL, creds)
	if err != nil {
		return nil, err
	}
	inst, err := c.instance(ctx)
	if err != nil {
		return nil, classify(err, "")
	}
	a, err := c.verifyCredentials(ctx)
	if err != nil {
		return nil, classify(err, "")
	}
	opts := map[string]any{}
	opts["text"] = map[string]any{"type": "string", "max_length": inst.MaxCharacters, "unit": platform.UnitGraphemes,
		"note": fmt.Sprintf("%s allows %d characters; each link counts as %d and a mention @user@domain as @user",
			c.host, inst.MaxCharacters, inst.CharactersReservedPerURL)}
	instance := map[string]any{
		"domain": inst.Domain, "max_characters": inst.MaxCharacters,
		"characters_reserved_per_url": inst.CharactersReservedPerURL,
		"supported_video_types":       videoTypes(inst.SupportedMimeTypes),
	}
	for k, v := range map[string]int64{"max_media_attachments": int64(inst.MaxMediaAttachments),
		"video_size_limit": inst.VideoSizeLimit, "video_frame_rate_limit": int64(inst.VideoFrameRateLimit),
		"video_matrix_limit": inst.VideoMatrixLimit, "image_size_limit": inst.ImageSizeLimit} {
		if v > 0 {
			instance[k] = v
		}
	}
	if inst.Version != "" {
		instance["version"] = inst.Version
	}
	opts["instance"] = instance
	opts["account"] = map[string]any{"id": a.ID, "username": a.Username + "@" + c.host,
		"name": cmpOr(a.DisplayName, a.Username), "avatar_url": a.Avatar}
	return opts, nil
}
