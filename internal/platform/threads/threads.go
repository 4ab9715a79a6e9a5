// Package threads publishes video posts through the Threads API (graph.threads.net).
//
// Threads pulls the video: reelay hands it the signed public link of the stored media
// (Destination.Video.URL) and Meta downloads it. A destination goes through these steps, one
// per Step call, and the returned State is stored before the next:
//
//  1. GET /{threads-user-id}/threads_publishing_limit (unless disabled): a spent quota fails at
//     once with quota_exceeded. POST /{threads-user-id}/threads with media_type=VIDEO,
//     video_url and text → State{container_id, created_at}.
//  2. GET /{container}?fields=status,error_message, polled with a growing, capped interval
//     (Outcome.After): IN_PROGRESS waits; ERROR fails (media_rejected, with Meta's
//     error_message explained); EXPIRED fails (a container lives 24 hours); FINISHED →
//     POST /{threads-user-id}/threads_publish creation_id={container} → State{media_id},
//     returned at once so that the media id is stored before anything else happens.
//  3. GET /{media-id}?fields=permalink → published, with the permalink.
//
// Crash safety. The container's status is read before every threads_publish, and Threads
// reports PUBLISHED for a container whose threads_publish went through (the troubleshooting
// guide's answer to "publishing does not return a media ID"). So if threads_publish answered
// but the process died before the media id was stored, the next Step sees PUBLISHED and does
// not publish again. No field leads from a container to its post, so the post is looked up
// among the profile's own recent threads: GET /{threads-user-id}/threads?since={container
// creation - 5 min}&fields=id,text,media_type,timestamp,permalink, keeping video posts made at
// or after the container whose text is exactly the one sent. One match is taken; none or
// several are retried a few times, then the destination is reported published without an id
// or link, with a message saying why. Never the newest post blindly: it could be another one.
//
// A crash between container creation and storing its id leaves an orphan container that is
// never published and expires after 24 hours; the next Step creates a new one.
//
// Errors map from Graph's codes: 190/102/104/10/2xx/25 → auth_expired; 4/17/32/613/341/368 →
// transient rate_limited (the wait from X-Business-Use-Case-Usage); 9 (a spent publishing
// quota) → quota_exceeded; 1, 2, -1, -2 and HTTP 5xx → transient upstream_unavailable; 100 →
// invalid_options; 24 and 352 → media_rejected; a container in ERROR → media_rejected.
package threads

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

// APIVersion is the Threads API version the provider speaks.
const APIVersion = "v1.0"

// DefaultBaseURL is the Threads API root, version included.
const DefaultBaseURL = "https://graph.threads.net/" + APIVersion

// Platform is the provider's platform identifier.
const Platform = "threads"

// Config configures the provider. The zero value is usable.
type Config struct {
	// BaseURL is the API root including the version segment (DefaultBaseURL when empty). A
	// destination's BaseURL, when set, overrides it (sandbox channels, tests).
	BaseURL string
	// HTTPClient makes the calls (a client with a 60-second timeout when nil).
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// SkipPublishingLimitCheck leaves out the threads_publishing_limit call before a container
	// is created; threads_publish still fails with quota_exceeded when the quota is spent.
	SkipPublishingLimitCheck bool
	// PollInterval is the first wait before reading a container's status (1 s when 0); the
	// waits grow from it as provider.PollDelay says, up to MaxPollInterval (1 min when 0, the
	// once-a-minute pace Meta recommends).
	PollInterval, MaxPollInterval time.Duration
	// FindAttempts is how many times the post of a container found PUBLISHED is looked for
	// before the destination is reported published without its id (5 when 0).
	FindAttempts int
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider publishes video posts to Threads. It implements provider.Provider.
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

// New returns a provider.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = provider.NewHTTPClient(60 * time.Second)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.MaxPollInterval <= 0 {
		cfg.MaxPollInterval = time.Minute
	}
	if cfg.FindAttempts <= 0 {
		cfg.FindAttempts = 5
	}
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return Platform }

// State is what the provider stores between steps (Destination.State / Outcome.State). It
// holds the platform's references only, never a token.
type State struct {
	// ContainerID is the Threads media container created for the post.
	ContainerID string `json:"container_id,omitempty"`
	// CreatedAt is when the container was created (reelay's clock): it bounds the search for
	// the post of a container found PUBLISHED.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Polls counts the status reads that found the container not ready (the back-off).
	Polls int `json:"polls,omitempty"`
	// MediaID is the published Threads media; once set, nothing is published again.
	MediaID string `json:"media_id,omitempty"`
	// Searches counts the lookups for the post of a container found PUBLISHED.
	Searches int `json:"searches,omitempty"`
	// Refetches counts the containers dropped because Threads could not download the video
	// (the media link was down, e.g. reelay restarting) and created anew.
	Refetches int `json:"refetches,omitempty"`
}

// maxRefetches bounds the new containers made after failed downloads.
const maxRefetches = 2

// Options is the threads object of a publish request.
type Options struct {
	// Text is the post's text (the request's caption, else its title, when empty).
	Text string `json:"text,omitempty"`
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	token := d.Credentials["access_token"]
	if token == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryAuthExpired, 0, "Threads: the channel has no access token")
	}
	var st State
	var opts Options
	if err := metagraph.Decode("Threads", d, &st, &opts); err != nil {
		return provider.Outcome{}, err
	}
	if d.Account == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "Threads: the channel has no Threads user id")
	}
	g := p.graph(d.BaseURL, token)
	switch {
	case st.MediaID != "":
		return p.finish(ctx, g, st)
	case st.ContainerID != "":
		return p.advance(ctx, g, d, st, opts)
	default:
		return p.create(ctx, g, d, opts, st.Refetches)
	}
}

func (p *Provider) graph(baseURL, token string) metagraph.Client {
	if baseURL == "" {
		baseURL = p.cfg.BaseURL
	}
	return metagraph.New("Threads", baseURL, token, p.cfg.HTTPClient)
}

// text is the text sent: the threads object's, else the post's caption, else its title.
func text(d *provider.Destination, o Options) string {
	switch {
	case o.Text != "":
		return o.Text
	case d.Caption != "":
		return d.Caption
	}
	return d.Title
}

// create checks the publishing quota and creates the video container.
func (p *Provider) create(ctx context.Context, g metagraph.Client, d *provider.Destination, o Options, refetches int) (provider.Outcome, error) {
	if d.Video.URL == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "Threads: the video has no public link for Threads to fetch")
	}
	if !p.cfg.SkipPublishingLimitCheck {
		var lim metagraph.Quota
		// A GET: asking again changes nothing.
		err := p.cfg.Repeat.Do(ctx, classify, func() error {
			var err error
			lim, err = publishingLimit(ctx, g, d.Account)
			return err
		})
		if err != nil {
			return provider.Outcome{}, classify(err)
		}
		if lim.Total > 0 && lim.Usage >= lim.Total {
			return provider.Outcome{}, provider.Permanent(provider.CategoryQuotaExceeded, 0,
				"Threads: the profile has published %d of the %d posts allowed through the API in %s",
				lim.Usage, lim.Total, lim.Window)
		}
	}
	form := url.Values{"media_type": {"VIDEO"}, "video_url": {d.Video.URL}}
	if t := text(d, o); t != "" {
		form.Set("text", t)
	}
	var created struct {
		ID string `json:"id"`
	}
	// A container created twice is harmless: only threads_publish makes a post of one, and the
	// other expires unpublished after 24 hours (status EXPIRED, "not published within 24
	// hours", developers.facebook.com/docs/threads/troubleshooting). Meta then fetches the
	// video once more.
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		return g.Post(ctx, "/"+url.PathEscape(d.Account)+"/threads", form, &created)
	})
	if err != nil {
		return provider.Outcome{}, classify(err)
	}
	if created.ID == "" {
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Threads: container creation answered no id")
	}
	st := State{ContainerID: created.ID, CreatedAt: p.cfg.Now().UTC(), Refetches: refetches}
	return p.outcome(provider.StatusProcessing, st, p.cfg.PollInterval)
}

// advance reads the container's status and publishes it when it is ready.
func (p *Provider) advance(ctx context.Context, g metagraph.Client, d *provider.Destination, st State, o Options) (provider.Outcome, error) {
	var c struct {
		Status       string `json:"status"`
		ErrorMessage string `json:"error_message"`
	}
	// A GET: asking again changes nothing.
	read := func() error {
		return p.cfg.Repeat.Do(ctx, classify, func() error {
			return g.Get(ctx, "/"+url.PathEscape(st.ContainerID), url.Values{"fields": {"status,error_message"}}, &c)
		})
	}
	if err := read(); err != nil {
		return provider.Outcome{}, classify(err)
	}
	switch c.Status {
	case "FINISHED":
		var pub struct {
			ID string `json:"id"`
		}
		// A threads_publish that failed may have gone through. It is made again only after the
		// container's status, read again, is still FINISHED: Threads reports PUBLISHED for a
		// container whose threads_publish went through ("Publishing Does Not Return a Media
		// ID", developers.facebook.com/docs/threads/troubleshooting).
		err := p.cfg.Repeat.DoChecked(ctx, classify, func() error {
			return g.Post(ctx, "/"+url.PathEscape(d.Account)+"/threads_publish", url.Values{"creation_id": {st.ContainerID}}, &pub)
		}, func() (bool, error) {
			if err := read(); err != nil {
				return false, err
			}
			return c.Status != "FINISHED", nil
		})
		if err == nil && c.Status != "FINISHED" {
			// The status moved on under a failed threads_publish: PUBLISHED is found as a
			// crash's would be; anything else is read again at the next poll.
			if c.Status == "PUBLISHED" {
				return p.recover(ctx, g, d, st, o)
			}
			return p.wait(st)
		}
		if notReady(err) {
			return p.wait(st)
		}
		if err != nil {
			// When the call's fate is unknown (timeout), the next Step reads the status
			// first: PUBLISHED leads to the lookup, FINISHED to another threads_publish.
			return provider.Outcome{}, classify(err)
		}
		if pub.ID == "" {
			return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Threads: threads_publish answered no id")
		}
		st.MediaID = pub.ID
		out, err := p.outcome(provider.StatusProcessing, st, 0)
		out.ExternalID = pub.ID
		return out, err
	case "PUBLISHED":
		return p.recover(ctx, g, d, st, o)
	case "ERROR":
		if c.ErrorMessage == "FAILED_DOWNLOADING_VIDEO" && st.Refetches < maxRefetches {
			// Threads could not download the video from reelay's link, which is reelay's side
			// (down or restarting), not a verdict on the video. A container in ERROR can never
			// be published, so a new one cannot publish twice.
			return p.outcome(provider.StatusProcessing, State{Refetches: st.Refetches + 1}, p.cfg.PollInterval)
		}
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "Threads: %s", containerError(c.ErrorMessage))
	case "EXPIRED":
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"Threads: container %s expired: it was not published within 24 hours of its creation", st.ContainerID)
	default: // IN_PROGRESS, or a value this provider does not know: wait.
		return p.wait(st)
	}
}

// containerError explains a container's ERROR message.
func containerError(msg string) string {
	why := map[string]string{
		"FAILED_DOWNLOADING_VIDEO":     "Threads could not download the video from reelay's media link (it must be publicly reachable: check REELAY_PUBLIC_URL)",
		"FAILED_PROCESSING_AUDIO":      "the audio could not be processed (Threads wants AAC, at most 48 kHz, mono or stereo)",
		"FAILED_PROCESSING_VIDEO":      "the video could not be processed (Threads wants MOV or MP4 with H.264 or HEVC, at most 1920 pixels wide, 23-60 fps, at most 1 GB)",
		"INVALID_ASPEC_RATIO":          "the aspect ratio is not supported (it must be between 0.01:1 and 10:1)",
		"INVALID_BIT_RATE":             "the bit rate is not supported (at most 25 Mbps)",
		"INVALID_DURATION":             "the duration is not supported (at most 5 minutes)",
		"INVALID_FRAME_RATE":           "the frame rate is not supported (23-60 fps)",
		"INVALID_AUDIO_CHANNELS":       "the number of audio channels is not supported (mono or stereo)",
		"INVALID_AUDIO_CHANNEL_LAYOUT": "the audio channel layout is not supported",
	}
	if msg == "" {
		return "Threads could not process the video (container status ERROR)"
	}
	if w, ok := why[msg]; ok {
		return msg + ": " + w
	}
	return "Threads could not process the video: " + msg
}

// wait counts a poll and asks to come back after the back-off.
func (p *Provider) wait(st State) (provider.Outcome, error) {
	st.Polls++
	return p.outcome(provider.StatusProcessing, st, p.backoff(st.Polls))
}

// backoff is the wait before status read number n+1 (provider.PollDelay).
func (p *Provider) backoff(n int) time.Duration {
	return provider.PollDelay(p.cfg.PollInterval, p.cfg.MaxPollInterval, n)
}

type mediaNode struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	MediaType string `json:"media_type"`
	Timestamp string `json:"timestamp"`
	Permalink string `json:"permalink"`
}

// recover finds the post of a container that is already PUBLISHED (see the package comment).
func (p *Provider) recover(ctx context.Context, g metagraph.Client, d *provider.Destination, st State, o Options) (provider.Outcome, error) {
	want := text(d, o)
	q := url.Values{
		"fields": {"id,text,media_type,timestamp,permalink"},
		"since":  {strconv.FormatInt(st.CreatedAt.Add(-5*time.Minute).Unix(), 10)},
		"limit":  {"50"},
	}
	var list struct {
		Data []mediaNode `json:"data"`
	}
	// A GET: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, classify, func() error { return g.Get(ctx, "/"+url.PathEscape(d.Account)+"/threads", q, &list) })
	if err != nil {
		return provider.Outcome{}, classify(err)
	}
	var found []mediaNode
	for _, m := range list.Data {
		ts, err := metagraph.ParseTime(m.Timestamp)
		if err != nil || ts.Before(st.CreatedAt.Add(-time.Minute)) {
			continue // posted before our container existed (one minute of clock skew allowed)
		}
		if m.MediaType != "" && m.MediaType != "VIDEO" {
			continue
		}
		if m.Text == want {
			found = append(found, m)
		}
	}
	if len(found) == 1 {
		st.MediaID = found[0].ID
		out, err := p.outcome(provider.StatusPublished, st, 0)
		out.ExternalID, out.URL = found[0].ID, found[0].Permalink
		out.Message = "Threads had already published this post; reelay found it and did not publish it again"
		return out, err
	}
	st.Searches++
	if st.Searches < p.cfg.FindAttempts {
		return p.outcome(provider.StatusProcessing, st, p.backoff(st.Searches))
	}
	out, err := p.outcome(provider.StatusPublished, st, 0)
	how := "none of the profile's recent posts matches it"
	if len(found) > 1 {
		how = fmt.Sprintf("%d recent posts have the same text", len(found))
	}
	out.Message = fmt.Sprintf("Threads reports container %s as published, but its post could not be identified (%s); it was not published again", st.ContainerID, how)
	return out, err
}

// finish reads the published post's permalink.
func (p *Provider) finish(ctx context.Context, g metagraph.Client, st State) (provider.Outcome, error) {
	var m mediaNode
	// A GET: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		return g.Get(ctx, "/"+url.PathEscape(st.MediaID), url.Values{"fields": {"permalink"}}, &m)
	})
	if err != nil {
		pe := classify(err)
		if pe.Transient || pe.Category == provider.CategoryAuthExpired {
			return provider.Outcome{}, pe
		}
		// The post is published; only its link is missing.
		out, oerr := p.outcome(provider.StatusPublished, st, 0)
		out.ExternalID = st.MediaID
		out.Message = "published; reading the permalink failed: " + pe.Message
		return out, oerr
	}
	out, err := p.outcome(provider.StatusPublished, st, 0)
	out.ExternalID, out.URL = st.MediaID, m.Permalink
	if m.Permalink == "" {
		// Threads omits the permalink of posts flagged for copyrighted material.
		out.Message = "published; Threads gave no permalink (posts flagged for copyrighted material have none)"
	}
	return out, err
}

func (p *Provider) outcome(status string, st State, after time.Duration) (provider.Outcome, error) {
	return metagraph.Outcome("Threads", status, st, after)
}

// profile is GET /me?fields=id,username,name,threads_profile_picture_url.
type profile struct {
	ID         string `json:"id"`
	Username   string `json:"username"`
	Name       string `json:"name"`
	PictureURL string `json:"threads_profile_picture_url"`
}

func (p *Provider) me(ctx context.Context, g metagraph.Client) (profile, error) {
	var pr profile
	if err := g.Get(ctx, "/me", url.Values{"fields": {"id,username,name,threads_profile_picture_url"}}, &pr); err != nil {
		return profile{}, classify(err)
	}
	if pr.ID == "" {
		return profile{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Threads: /me answered no id")
	}
	return pr, nil
}

// Identify tells whose the credentials are (GET /me with the access token): the Threads user
// id (the channel's external account id), name, username and profile picture. A rejected token
// is an auth_expired *provider.Error. baseURL "" means the configured one.
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	token := credentials["access_token"]
	if token == "" {
		return provider.Identity{}, provider.Permanent(provider.CategoryAuthExpired, 0, "Threads: the channel has no access token")
	}
	pr, err := p.me(ctx, p.graph(baseURL, token))
	if err != nil {
		return provider.Identity{}, err
	}
	return provider.Identity{ExternalID: pr.ID, Name: pr.Name, Username: pr.Username, AvatarURL: pr.PictureURL}, nil
}

// Options returns the publish options of a Threads channel, read live: "text" (the one field
// of the threads object, at most 500 characters, emoji counted as their UTF-8 bytes) and
// "account", the profile with its publishing quota (threads_publishing_limit: posts published
// through the API in the rolling window, the limit and the window). Errors are *provider.Error
// values, classified as for Step. baseURL "" means the configured one.
func (p *Provider) Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error) {
	token := credentials["access_token"]
	if token == "" {
		return nil, provider.Permanent(provider.CategoryAuthExpired, 0, "Threads: the channel has no access token")
	}
	g := p.graph(baseURL, token)
	pr, err := p.me(ctx, g)
	if err != nil {
		return nil, err
	}
	lim, err := publishingLimit(ctx, g, pr.ID)
	if err != nil {
		return nil, classify(err)
	}
	account := map[string]any{"id": pr.ID, "username": pr.Username}
	if pr.Name != "" {
		account["name"] = pr.Name
	}
	if pr.PictureURL != "" {
		account["avatar_url"] = pr.PictureURL
	}
	// An empty answer would read as "no posts allowed" with a zero total: left out instead.
	if lim.Total > 0 {
		account["publishing_limit"] = map[string]any{
			"quota_usage": lim.Usage, "quota_total": lim.Total, "quota_duration_sec": int(lim.Window / time.Second),
			"remaining": max(lim.Total-lim.Usage, 0),
		}
	}
	return map[string]any{
		"text":    map[string]any{"type": "string", "note": "at most 500 characters; emoji count as their UTF-8 bytes"},
		"account": account,
	}, nil
}
