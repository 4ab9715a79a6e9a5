// Package tiktok publishes video to TikTok through the Content Posting API: creator_info, then
// a direct post (/v2/post/publish/video/init/) or an inbox upload
// (/v2/post/publish/inbox/video/init/) with FILE_UPLOAD, the chunks PUT to the upload URL in
// order, and the status fetch until the post is published, sent to the creator's inbox, or
// failed.
//
// Each Step does one thing and returns the State to store before the next: the init (State
// holds publish_id and upload_url before any byte is sent), one chunk (or StepBytes worth of
// chunks), or one status fetch. A Step that resumes after a crash may send a chunk TikTok
// already has: the upload URL then answers 416 with the bytes it holds, and the upload goes on
// from there. When the upload URL cannot tell (expired, unknown), the status fetch does: an
// upload TikTok has whole is never sent again; one it has in part is started over with a new
// init, which cannot publish twice because the old publish_id never got all its bytes.
package tiktok

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

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is TikTok's API host.
const DefaultBaseURL = "https://open.tiktokapis.com"

// Modes of the tiktok options object.
const (
	ModeInbox  = "inbox"
	ModeDirect = "direct"
)

// Privacy levels.
const (
	PrivacyPublic    = "PUBLIC_TO_EVERYONE"
	PrivacyFriends   = "MUTUAL_FOLLOW_FRIENDS"
	PrivacyFollowers = "FOLLOWER_OF_CREATOR"
	PrivacySelfOnly  = "SELF_ONLY"
)

// Post statuses of the status fetch.
const (
	statusProcessingUpload   = "PROCESSING_UPLOAD"
	statusProcessingDownload = "PROCESSING_DOWNLOAD"
	statusSendToUserInbox    = "SEND_TO_USER_INBOX"
	statusPublishComplete    = "PUBLISH_COMPLETE"
	statusFailed             = "FAILED"
)

// uploadURLTTL is how long an upload URL is valid: "The upload_url is valid for one hour after
// issuance. The upload must be completed in this time range."
const uploadURLTTL = time.Hour

// maxRestarts bounds how often a publish starts over with a new init.
const maxRestarts = 2

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the API base (DefaultBaseURL); a destination's BaseURL wins over it.
	BaseURL string
	// APIVersion is the first segment of every call's path (Description.API.Version, v2;
	// REELAY_TIKTOK_API_VERSION).
	APIVersion string
	// HTTPClient makes every request (a client without an overall timeout: chunks are large;
	// contexts bound each call).
	HTTPClient *http.Client
	// ChunkSize is the preferred chunk size (10,000,000 bytes), kept within TikTok's rules.
	ChunkSize int64
	// StepBytes is how many bytes one Step uploads before it returns its State (0: one chunk).
	StepBytes int64
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
	// APITimeout bounds each JSON API call (30 s).
	APITimeout time.Duration
	// PollInitial and PollMax bound the wait between status fetches (500 ms doubling every second
	// poll, at most 30 s; the status fetch allows 30 requests per minute and token). The first
	// fetch after the last chunk is made at once: a short video may be ready then, and the
	// schedule stays at 12 fetches in the first minute (0, 0.5, 1.5, 2.5, 4.5, 6.5 s, ...).
	PollInitial, PollMax time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Provider is TikTok's provider.Provider.
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
)

// New returns a TikTok provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, DefaultBaseURL)
	cfg.APIVersion = cmp.Or(cfg.APIVersion, Description.API.Version)
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.ChunkSize = provider.Positive(cfg.ChunkSize, defaultChunk)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, 500*time.Millisecond)
	cfg.PollMax = provider.Positive(cfg.PollMax, 30*time.Second)
	cfg.Now = provider.Clock(cfg.Now)
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.TikTok }

// Phases of State.
const (
	phaseStart      = ""
	phaseUploading  = "uploading"
	phaseProcessing = "processing"
	phaseDone       = "done"
)

// State is what the publisher stores between Steps.
type State struct {
	Phase              string    `json:"phase,omitempty"`
	Mode               string    `json:"mode,omitempty"`
	PublishID          string    `json:"publish_id,omitempty"`
	UploadURL          string    `json:"upload_url,omitempty"`
	UploadURLExpiresAt time.Time `json:"upload_url_expires_at,omitzero"`
	ContentType        string    `json:"content_type,omitempty"`
	VideoSize          int64     `json:"video_size,omitempty"`
	ChunkSize          int64     `json:"chunk_size,omitempty"`
	TotalChunks        int       `json:"total_chunks,omitempty"`
	// NextChunk is the first chunk TikTok has not confirmed.
	NextChunk    int    `json:"next_chunk"`
	Username     string `json:"username,omitempty"`
	PrivacyLevel string `json:"privacy_level,omitempty"`
	// Notes are remarks for the final Message (settings the creator's account overrode, ...).
	Notes    []string `json:"notes,omitempty"`
	Polls    int      `json:"polls,omitempty"`
	Resyncs  int      `json:"resyncs,omitempty"`
	Restarts int      `json:"restarts,omitempty"`
	// The outcome, once done.
	Status     string `json:"status,omitempty"`
	ExternalID string `json:"external_id,omitempty"`
	URL        string `json:"url,omitempty"`
	Message    string `json:"message,omitempty"`
}

func (st *State) plan() Plan {
	return Plan{VideoSize: st.VideoSize, ChunkSize: st.ChunkSize, ChunkCount: st.TotalChunks}
}

func parseOptions(raw json.RawMessage) (Options, error) {
	var o Options
	if err := provider.UnmarshalStored(raw, &o); err != nil {
		return o, fmt.Errorf("tiktok options: %w", err)
	}
	if o.Mode == "" {
		o.Mode = ModeInbox
	}
	if o.Mode != ModeInbox && o.Mode != ModeDirect {
		return o, fmt.Errorf("tiktok.mode %q is not inbox or direct", o.Mode)
	}
	if o.PrivacyLevel == "" {
		o.PrivacyLevel = PrivacyPublic
	}
	if !slices.Contains([]string{PrivacyPublic, PrivacyFriends, PrivacyFollowers, PrivacySelfOnly}, o.PrivacyLevel) {
		return o, fmt.Errorf("tiktok.privacy_level %q is not one of PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS, FOLLOWER_OF_CREATOR, SELF_ONLY", o.PrivacyLevel)
	}
	return o, nil
}

func allowed(b *bool) bool { return b == nil || *b }

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "TikTok", &st); err != nil {
		return provider.Outcome{}, err
	}
	base, token, err := p.target(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, d, base, token, st)
	case phaseUploading:
		return p.upload(ctx, d, base, token, st)
	case phaseProcessing:
		return p.poll(ctx, base, token, st)
	case phaseDone:
		return st.outcome(), nil
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored TikTok state has unknown phase %q", st.Phase)
}

// target resolves the API base and the access token of a channel.
func (p *Provider) target(baseURL string, credentials map[string]string) (base, token string, err error) {
	token = credentials["access_token"]
	if token == "" {
		return "", "", provider.Permanent(provider.CategoryAuthExpired, 0, "the TikTok channel has no access token")
	}
	base = strings.TrimRight(baseURL, "/")
	if base == "" {
		base = p.cfg.BaseURL
	}
	return base, token, nil
}

// Options returns the publish options of a TikTok channel: the static registry's, with the
// creator's own privacy levels, interaction settings and maximum duration from creator_info
// put in key by key, so the answer has the same keys whether it is live or not. account is
// the creator's identity, for showing which account a post goes to. baseURL "" means the
// configured one; credentials carry access_token. Errors are *provider.Error values, classified
// as for Step.
func (p *Provider) Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error) {
	base, token, err := p.target(baseURL, credentials)
	if err != nil {
		return nil, err
	}
	ci, err := p.creatorInfo(ctx, base, token)
	if err != nil {
		return nil, classify(err)
	}
	opts := staticOptions()

	choices := make([]any, 0, len(ci.PrivacyOptions))
	for _, l := range ci.PrivacyOptions {
		choices = append(choices, l)
	}
	// creator_info answers the account's own levels (its reference ties them to the account
	// being public or private) whether or not TikTok has audited the app; an unaudited app may
	// still only use SELF_ONLY (developers.tiktok.com/doc/content-sharing-guidelines/), which
	// TikTok says only when a post is refused. The note says so beside the choices.
	const auditNote = "; until TikTok has audited the app reelay posts through, TikTok takes direct posts only as " + PrivacySelfOnly
	privacy := map[string]any{"type": "string", "choices": choices,
		"note": "the privacy levels this creator's account allows; direct posts must use one of them" + auditNote}
	if slices.Contains(ci.PrivacyOptions, PrivacyPublic) {
		privacy["default"] = PrivacyPublic
	} else {
		// Step applies PUBLIC_TO_EVERYONE when privacy_level is absent, which this creator
		// would refuse: a direct post has to choose.
		privacy["required"] = true
		privacy["note"] = "this creator's account does not allow " + PrivacyPublic + ": direct posts must set one of these" + auditNote
	}
	opts["privacy_level"] = privacy

	for _, s := range []struct {
		key      string
		disabled bool
		what     string
	}{
		{"allow_comment", ci.CommentDisabled, "comments"},
		{"allow_duet", ci.DuetDisabled, "duets"},
		{"allow_stitch", ci.StitchDisabled, "stitches"},
	} {
		if s.disabled {
			// Step accepts true but TikTok would still turn them off; false is the only
			// outcome, so it is the only choice shown.
			opts[s.key] = map[string]any{"type": "boolean", "choices": []any{false}, "default": false,
				"note": "the creator's TikTok settings turn " + s.what + " off"}
		}
	}

	if ci.MaxDurationSec > 0 {
		caps := Description.Capabilities
		opts["max_video_post_duration_sec"] = map[string]any{"type": "integer", "default": ci.MaxDurationSec,
			"note": fmt.Sprintf("this creator's maximum for direct posts; inbox uploads may last up to %g s", caps.MaxDurationSeconds)}
	}

	opts["account"] = map[string]any{"username": ci.Username, "name": ci.Nickname, "avatar_url": ci.AvatarURL}
	return opts, nil
}

// Fields of /v2/user/info/ that Identify asks for: those of the user.info.basic scope, and
// username, which needs user.info.profile.
const (
	userFieldsBasic = "open_id,union_id,avatar_url,display_name"
	userFieldsAll   = userFieldsBasic + ",username"
)

type userInfo struct {
	OpenID      string `json:"open_id"`
	UnionID     string `json:"union_id"`
	AvatarURL   string `json:"avatar_url"`
	DisplayName string `json:"display_name"`
	Username    string `json:"username"`
}

// Identify returns the TikTok user an access token belongs to, from GET /v2/user/info/:
// ExternalID is the open_id (the user's id for this app, which the token exchange also
// answers), Name the display name, Username the username and AvatarURL the avatar. The token
// needs user.info.basic; username needs user.info.profile as well, and TikTok refuses a
// request for a field whose scope is missing as a whole (401 scope_not_authorized), so a
// token without user.info.profile is asked again for the basic fields alone and the username
// is taken from creator_info when the token has video.publish. A token TikTok refuses
// (access_token_invalid, or no user.info.basic) is a permanent auth_expired error; other
// failures are classified as for Step.
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	base, token, err := p.target(baseURL, credentials)
	if err != nil {
		return provider.Identity{}, err
	}
	u, err := p.userInfo(ctx, base, token, userFieldsAll)
	if ae := (*apiError)(nil); errors.As(err, &ae) && ae.Code == "scope_not_authorized" {
		if u, err = p.userInfo(ctx, base, token, userFieldsBasic); err == nil {
			if ci, cerr := p.creatorInfo(ctx, base, token); cerr == nil {
				u.Username = ci.Username
			}
		}
	}
	if err != nil {
		return provider.Identity{}, classify(err)
	}
	if u.OpenID == "" {
		return provider.Identity{}, provider.Transient(provider.CategoryUpstreamUnavailable, http.StatusOK, 0, "TikTok answered a user without an open_id")
	}
	name := u.DisplayName
	if name == "" {
		name = u.Username
	}
	return provider.Identity{ExternalID: u.OpenID, Name: name, Username: u.Username, AvatarURL: u.AvatarURL}, nil
}

// userInfo reads GET /v2/user/info/?fields=... (data.user).
func (p *Provider) userInfo(ctx context.Context, base, token, fields string) (userInfo, error) {
	var data struct {
		User userInfo `json:"user"`
	}
	// A GET: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		return p.send(ctx, http.MethodGet, base, token, pathUserInfo+"?fields="+url.QueryEscape(fields), nil, &data)
	})
	return data.User, err
}

// start checks everything that can be checked before TikTok is asked, queries creator_info,
// and initializes the post. Nothing is uploaded in this step.
func (p *Provider) start(ctx context.Context, d *provider.Destination, base, token string, st State) (provider.Outcome, error) {
	opts, err := parseOptions(d.Options)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	caps := Description.Capabilities

	title := d.Caption
	if title == "" {
		title = d.Title
	}
	if opts.Title != "" {
		title = opts.Title
	}
	if opts.Mode == ModeDirect {
		if lim := caps.Text["title"]; !lim.Check(title) {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
				"the TikTok title is %d UTF-16 units long; TikTok accepts at most %d", lim.Count(title), lim.Max)
		}
	}

	v := d.Video
	if v.Size <= 0 || v.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	if caps.MaxVideoBytes > 0 && v.Size > caps.MaxVideoBytes {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %d bytes; TikTok accepts at most %d", v.Size, caps.MaxVideoBytes)
	}
	ctype, err := contentType(v.ContentType)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%v", err)
	}
	if v.Width > 0 && v.Height > 0 && (min(v.Width, v.Height) < 360 || max(v.Width, v.Height) > caps.MaxWidth) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %dx%d; TikTok needs 360 to %d pixels on each side", v.Width, v.Height, caps.MaxWidth)
	}
	maxDur := time.Duration(caps.MaxDurationSeconds * float64(time.Second))
	if v.Duration > 0 && v.Duration < time.Duration(caps.MinDurationSeconds*float64(time.Second)) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video lasts %s; TikTok needs at least %gs", v.Duration, caps.MinDurationSeconds)
	}
	plan, err := PlanChunks(v.Size, p.cfg.ChunkSize)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%v", err)
	}

	haveCreator := true
	ci, err := p.creatorInfo(ctx, base, token)
	if err != nil {
		var ae *apiError
		// An inbox upload needs only the video.upload scope and does not count as a post:
		// creator_info (video.publish) is then only a courtesy.
		if opts.Mode == ModeInbox && errors.As(err, &ae) &&
			(ae.Code == "scope_not_authorized" || ae.Code == "scope_permission_missed" || ae.Code == "spam_risk_too_many_posts") {
			haveCreator = false
		} else {
			return provider.Outcome{}, classify(err)
		}
	}

	var notes []string
	var pi *postInfo
	if opts.Mode == ModeDirect {
		if !slices.Contains(ci.PrivacyOptions, opts.PrivacyLevel) {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
				"tiktok.privacy_level %s is not available to this TikTok account; it allows %s",
				opts.PrivacyLevel, strings.Join(ci.PrivacyOptions, ", "))
		}
		if ci.MaxDurationSec > 0 {
			maxDur = time.Duration(ci.MaxDurationSec) * time.Second
		}
		pi = &postInfo{
			Title:          title,
			PrivacyLevel:   opts.PrivacyLevel,
			DisableComment: !allowed(opts.AllowComment) || ci.CommentDisabled,
			DisableDuet:    !allowed(opts.AllowDuet) || ci.DuetDisabled,
			DisableStitch:  !allowed(opts.AllowStitch) || ci.StitchDisabled,
			IsAIGC:         opts.IsAIGC != nil && *opts.IsAIGC,
		}
		for _, o := range []struct {
			asked, off bool
			what       string
		}{
			{allowed(opts.AllowComment), ci.CommentDisabled, "comments"},
			{allowed(opts.AllowDuet), ci.DuetDisabled, "duets"},
			{allowed(opts.AllowStitch), ci.StitchDisabled, "stitches"},
		} {
			if o.asked && o.off {
				notes = append(notes, o.what+" are off because the creator's TikTok settings turn them off")
			}
		}
	} else if !haveCreator {
		notes = append(notes, "creator info was not available to this token (video.upload scope only)")
	}
	if v.Duration > maxDur {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video lasts %s; this TikTok account can post at most %s", v.Duration, maxDur)
	}

	path := pathInboxInit
	if opts.Mode == ModeDirect {
		path = pathDirectInit
	}
	req := initRequest{PostInfo: pi, SourceInfo: sourceInfo{
		Source: "FILE_UPLOAD", VideoSize: plan.VideoSize, ChunkSize: plan.ChunkSize, TotalChunkCount: plan.ChunkCount,
	}}
	var data initData
	now := p.cfg.Now()
	// An init repeated after one that took effect but failed leaves a publish_id that never
	// gets a byte: it cannot publish, and its upload_url lapses an hour after issuance ("The
	// upload must be completed in this time range", developers.tiktok.com/doc/
	// content-posting-api-reference-direct-post). It costs one of the 6 inits a minute.
	err = p.cfg.Repeat.Do(ctx, classify, func() error { return p.call(ctx, base, token, path, req, &data) })
	var ae *apiError
	switch {
	case errors.As(err, &ae) && ae.Code == codeUnaudited:
		return provider.Outcome{}, unaudited(opts.PrivacyLevel, ae)
	case errors.As(err, &ae) && ae.Code == codeActiveUserCap:
		return provider.Outcome{}, activeUserCap(ae)
	case err != nil:
		return provider.Outcome{}, classify(err)
	}
	if u, err := url.Parse(data.UploadURL); data.PublishID == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, http.StatusOK,
			"TikTok's init answered without a usable publish_id and upload_url")
	}
	st = State{
		Phase:              phaseUploading,
		Mode:               opts.Mode,
		PublishID:          data.PublishID,
		UploadURL:          data.UploadURL,
		UploadURLExpiresAt: now.Add(uploadURLTTL),
		ContentType:        ctype,
		VideoSize:          plan.VideoSize,
		ChunkSize:          plan.ChunkSize,
		TotalChunks:        plan.ChunkCount,
		Username:           ci.Username,
		PrivacyLevel:       opts.PrivacyLevel,
		Notes:              append(st.Notes, notes...),
		Restarts:           st.Restarts,
	}
	if opts.Mode == ModeInbox {
		st.PrivacyLevel = ""
	}
	return st.next(provider.StatusUploading, 0), nil
}

// upload sends the next chunk (or StepBytes worth of chunks).
func (p *Provider) upload(ctx context.Context, d *provider.Destination, base, token string, st State) (provider.Outcome, error) {
	// A margin keeps a chunk from starting just before the URL expires.
	if !p.cfg.Now().Before(st.UploadURLExpiresAt.Add(-time.Minute)) {
		return p.recover(ctx, base, token, st, false, "the upload URL expired")
	}
	plan := st.plan()
	var sent int64
	for st.NextChunk < st.TotalChunks {
		i := st.NextChunk
		res, err := p.putChunkRetrying(ctx, d, &st, i)
		if err != nil {
			if sent > 0 {
				return st.next(provider.StatusUploading, 0), nil // keep the progress; the next Step retries
			}
			return provider.Outcome{}, err
		}
		switch {
		case res.status == http.StatusCreated:
			st.NextChunk = st.TotalChunks
			st.Phase = phaseProcessing
			return st.next(provider.StatusProcessing, 0), nil // the first status fetch at once
		case res.status == http.StatusPartialContent:
			_, n := plan.Range(i)
			sent += n
			st.NextChunk = i + 1
			if st.NextChunk == st.TotalChunks {
				// Every chunk was accepted yet TikTok did not say the upload is complete.
				return p.recover(ctx, base, token, st, true, "TikTok accepted the last chunk with 206")
			}
			if sent >= p.cfg.StepBytes {
				return st.next(provider.StatusUploading, 0), nil
			}
		case res.status == http.StatusRequestedRangeNotSatisfiable:
			// TikTok already has other bytes than the ones sent: a chunk sent again after a
			// crash. Go on from what it holds.
			st.Resyncs++
			if st.Resyncs > st.TotalChunks+3 {
				return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, res.status,
					"TikTok keeps refusing the chunk ranges of publish %s: %s", st.PublishID, res.body)
			}
			next := -1
			for _, u := range []int64{res.asLastIndex, res.asCount} {
				if u >= 0 {
					if k := plan.chunkAt(u); k >= 0 {
						next = k
						break
					}
				}
			}
			if next < 0 {
				return p.recover(ctx, base, token, st, true, "TikTok reported an upload position that is no chunk boundary")
			}
			st.NextChunk = next
			if next == st.TotalChunks {
				st.Phase = phaseProcessing
				return st.next(provider.StatusProcessing, p.pollDelay(0)), nil
			}
		case res.status == http.StatusForbidden:
			return p.recover(ctx, base, token, st, false, "the upload URL expired")
		case res.status == http.StatusNotFound:
			return p.recover(ctx, base, token, st, false, "TikTok no longer knows the upload URL")
		default:
			first, n := plan.Range(i)
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, res.status,
				"TikTok refused chunk %d of %d (bytes %d-%d/%d, HTTP %d): %s",
				i+1, st.TotalChunks, first, first+n-1, st.VideoSize, res.status, res.body)
		}
	}
	return p.recover(ctx, base, token, st, true, "all chunks were sent")
}

// putChunkRetrying sends chunk i, again after a broken connection or a 5xx ("You should retry
// submitting this chunk", developers.tiktok.com/doc/content-posting-api-media-transfer-guide).
// A chunk is a byte range of the upload URL: sent again it is the same bytes at the same
// place, and one TikTok already took is answered 416 with what it holds (see upload).
func (p *Provider) putChunkRetrying(ctx context.Context, d *provider.Destination, st *State, i int) (chunkResult, error) {
	var res chunkResult
	err := p.cfg.Repeat.Do(ctx, nil, func() error {
		var err error
		res, err = p.putChunk(ctx, d, st, i)
		if err == nil && res.status >= 500 {
			return provider.Transient(provider.CategoryUpstreamUnavailable, res.status, 0, "HTTP %d: %s", res.status, res.body)
		}
		return err
	})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			err = cerr
		}
		return chunkResult{}, provider.Transient(provider.CategoryUpstreamUnavailable, provider.AsError(err).Status, 0,
			"uploading chunk %d of %d to TikTok: %v", i+1, st.TotalChunks, err)
	}
	return res, nil
}

// recover asks the status fetch where the upload stands when the upload URL cannot tell.
// urlUsable says whether the upload URL still takes chunks.
func (p *Provider) recover(ctx context.Context, base, token string, st State, urlUsable bool, why string) (provider.Outcome, error) {
	s, err := p.fetchStatus(ctx, base, token, st.PublishID)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Code == "invalid_publish_id" {
			return p.restart(st, why+"; TikTok no longer knows publish_id "+st.PublishID)
		}
		return provider.Outcome{}, classify(err)
	}
	switch s.Status {
	case statusFailed:
		return p.failed(st, s.FailReason)
	case statusSendToUserInbox, statusPublishComplete:
		return p.finish(st, s), nil
	}
	if s.UploadedBytes >= st.VideoSize {
		st.NextChunk, st.Phase = st.TotalChunks, phaseProcessing
		return st.next(provider.StatusProcessing, p.pollDelay(0)), nil
	}
	if urlUsable {
		if k := st.plan().chunkAt(s.UploadedBytes); k >= 0 {
			st.NextChunk = k
			st.Resyncs++
			if st.Resyncs <= st.TotalChunks+3 {
				return st.next(provider.StatusUploading, 0), nil
			}
		}
	}
	return p.restart(st, fmt.Sprintf("%s with %d of %d bytes uploaded", why, s.UploadedBytes, st.VideoSize))
}

// restart begins the publish again with a new init. It is only used when TikTok does not have
// the whole video under the old publish_id, so the old one cannot be published.
func (p *Provider) restart(st State, why string) (provider.Outcome, error) {
	if st.Restarts >= maxRestarts {
		return provider.Outcome{}, provider.Permanent(provider.CategoryUpstreamUnavailable, 0,
			"TikTok upload failed after %d new starts: %s", st.Restarts, why)
	}
	ns := State{Restarts: st.Restarts + 1}
	return ns.next(provider.StatusUploading, 0), nil
}

// poll fetches the status of an uploaded video.
func (p *Provider) poll(ctx context.Context, base, token string, st State) (provider.Outcome, error) {
	s, err := p.fetchStatus(ctx, base, token, st.PublishID)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Code == "invalid_publish_id" {
			// The whole video was uploaded under this publish_id: sending it again could
			// publish it twice, so the outcome stays unknown (docs/CONTRACT.md, Publishing, rule 3).
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, ae.HTTP,
				"TikTok no longer knows publish_id %s after the upload completed; the video is not sent again: %v",
				st.PublishID, ae)
		}
		return provider.Outcome{}, classify(err)
	}
	switch s.Status {
	case statusFailed:
		return p.failed(st, s.FailReason)
	case statusSendToUserInbox, statusPublishComplete:
		return p.finish(st, s), nil
	}
	st.Polls++
	return st.next(provider.StatusProcessing, p.pollDelay(st.Polls)), nil
}

func (p *Provider) pollDelay(polls int) time.Duration {
	return provider.PollDelay(p.cfg.PollInitial, p.cfg.PollMax, polls)
}

// codeUnaudited is TikTok's refusal of a direct post whose privacy an unaudited app may not
// use.
const codeUnaudited = "unaudited_client_can_only_post_to_private_accounts"

// unaudited explains TikTok's refusal of a direct post with privacy level asked from an app
// TikTok has not audited, and how to get past it. TikTok's Content Sharing Guidelines
// (https://developers.tiktok.com/doc/content-sharing-guidelines/, "Direct Post API - Developer
// Guidelines"): an API client that has not been audited may post only SELF_ONLY content, for
// at most 5 users a day, whose accounts are set to private when they post; the audit, which
// checks the client against TikTok's terms of service, lifts the restriction. The Direct Post
// reference (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post) says
// the same of all content unaudited clients post. Retrying cannot help: it is invalid_options.
func unaudited(asked string, ae *apiError) *provider.Error {
	return provider.Permanent(provider.CategoryInvalidOptions, ae.HTTP,
		"TikTok refused privacy_level %s because the TikTok app reelay posts through has not passed TikTok's audit: "+
			"until it does, TikTok takes direct posts only as %s, and only for accounts set to private. "+
			"To fix it, submit the app for TikTok's audit in the TikTok for Developers portal, "+
			"or post with tiktok.privacy_level %s (or tiktok.mode inbox, where the creator picks the privacy in the TikTok app). [%s]",
		asked, PrivacySelfOnly, PrivacySelfOnly, ae.Error())
}

// codeActiveUserCap is TikTok's refusal of a direct post by one creator more than an
// unaudited app may let post in a day.
const codeActiveUserCap = "reached_active_user_cap"

// activeUserCap explains TikTok's refusal of a direct post because the unaudited app reelay
// posts through already let as many creators post in the last 24 hours as TikTok allows: "up
// to 5 users" (the Content Sharing Guidelines cited at unaudited). The creators who posted
// keep posting; this one can once a day has passed since one of their posts, or at once
// through the inbox, which is not a Direct Post.
func activeUserCap(ae *apiError) *provider.Error {
	return provider.Permanent(provider.CategoryQuotaExceeded, ae.HTTP,
		"TikTok refused the post because the TikTok app reelay posts through has not passed TikTok's audit: "+
			"until it does, TikTok lets at most 5 accounts direct-post through it in 24 hours, and other accounts have posted in the last 24 hours. "+
			"Publish again later, send the video to the creator's inbox (tiktok.mode inbox), "+
			"or submit the app for TikTok's audit in the TikTok for Developers portal. [%s]", ae.Error())
}

// finish turns a final status into the destination's outcome.
func (p *Provider) finish(st State, s statusData) provider.Outcome {
	st.Phase = phaseDone
	st.ExternalID = st.PublishID
	var msg []string
	if s.Status == statusSendToUserInbox {
		st.Status = provider.StatusSentToInbox
		msg = append(msg, "Sent to the creator's TikTok inbox: it is not published until the creator opens the notification in the TikTok app and finishes the post there (caption and privacy are chosen in the app).")
	} else {
		st.Status = provider.StatusPublished
		if len(s.PostIDs) > 0 && s.PostIDs[0].String() != "" {
			id := s.PostIDs[0].String()
			st.ExternalID = id
			if st.Username != "" {
				st.URL = "https://www.tiktok.com/@" + st.Username + "/video/" + id
			}
		} else if st.Mode == ModeInbox || st.PrivacyLevel == PrivacyPublic {
			msg = append(msg, "Published on TikTok; its public link appears once TikTok's moderation has approved it (usually within a minute, sometimes hours).")
		} else {
			msg = append(msg, "Published on TikTok with privacy "+st.PrivacyLevel+"; TikTok gives no public link for posts that are not public.")
		}
	}
	for _, n := range st.Notes {
		msg = append(msg, strings.ToUpper(n[:1])+n[1:]+".")
	}
	st.Message = strings.Join(msg, " ")
	return st.outcome()
}

// failed turns a FAILED status into an error, or a new start for TikTok's retryable reason.
func (p *Provider) failed(st State, reason string) (provider.Outcome, error) {
	msg := "TikTok failed the post: " + reason
	if g := failGuidance[reason]; g != "" {
		msg += " (" + g + ")"
	}
	switch reason {
	case "internal":
		// "This is a retryable error": the failed publish_id is not published, so a new
		// start cannot publish twice.
		return p.restart(st, msg)
	case "spam_risk_too_many_posts":
		return provider.Outcome{}, provider.Permanent(provider.CategoryQuotaExceeded, 0, "%s", msg)
	case "auth_removed":
		return provider.Outcome{}, provider.Permanent(provider.CategoryAuthExpired, 0, "%s", msg)
	case "spam_risk_user_banned_from_posting", "publish_cancelled":
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%s", msg)
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%s", msg)
}

// failGuidance is the fail_reason table of the status reference.
var failGuidance = map[string]string{
	"file_format_check_failed":           "unsupported media format: TikTok takes MP4, WebM or MOV with H.264, H.265, VP8 or VP9",
	"duration_check_failed":              "the video does not meet TikTok's duration restrictions",
	"frame_rate_check_failed":            "unsupported frame rate: TikTok takes 23 to 60 fps",
	"picture_size_check_failed":          "unsupported picture size: TikTok takes 360 to 4096 pixels on each side",
	"internal":                           "some parts of the TikTok server are unavailable",
	"spam_risk_too_many_posts":           "the creator made too many posts through the API in the last 24 hours",
	"spam_risk_user_banned_from_posting": "TikTok banned the creator from making new posts",
	"spam_risk_text":                     "TikTok found the description text risky or spammy",
	"spam_risk":                          "TikTok found the publishing request risky",
	"auth_removed":                       "the creator removed this app's access during the upload",
	"publish_cancelled":                  "the publish was cancelled",
}

// next returns the outcome of a step that is not final.
func (st State) next(status string, after time.Duration) provider.Outcome {
	return provider.Next(st, status, after)
}

// outcome returns the final outcome stored in a done State.
func (st State) outcome() provider.Outcome {
	raw, _ := json.Marshal(st)
	return provider.Outcome{Status: st.Status, State: raw, ExternalID: st.ExternalID, URL: st.URL, Message: st.Message}
}

// classify turns a call's error into a *provider.Error.
func classify(err error) *provider.Error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.publishError()
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe
	}
	return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "TikTok: %v", err)
}

// contentType checks the video's type against the upload URL's accepted Content-Types.
func contentType(ct string) (string, error) {
	if ct == "" {
		return "video/mp4", nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil {
		switch mt {
		case "video/mp4", "video/quicktime", "video/webm":
			return mt, nil
		}
	}
	return "", fmt.Errorf("TikTok takes MP4, MOV or WebM video, not %s", ct)
}
