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
	"cmp"
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

// APIVersion is the Threads API version the provider speaks.
const APIVersion = "v1.0"

// DefaultBaseURL is the Threads API root, version included.
const DefaultBaseURL = APIHost + "/" + APIVersion

// APIHost is the API's host; calls go below it and the version (Config.APIVersion).
const APIHost = "https://graph.threads.net"

// Platform is the provider's platform identifier.
const Platform = "threads"

// Config configures the provider. The zero value is usable.
type Config struct {
	// APIVersion replaces APIVersion in the API root when BaseURL is empty
	// (REELAY_THREADS_API_VERSION).
	APIVersion string
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
	// PollInitial is the first wait before reading a container's status (1 s when 0); the
	// waits grow from it as provider.PollDelay says, up to PollMax (1 min when 0, the
	// once-a-minute pace Meta recommends).
	PollInitial, PollMax time.Duration
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
	// flow is the container flow with Threads' edges, fields and words.
	flow *metagraph.Container[Options, mediaNode]
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
	cfg.BaseURL = cmp.Or(cfg.BaseURL, APIHost+"/"+cmp.Or(cfg.APIVersion, APIVersion))
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 60*time.Second)
	cfg.Now = provider.Clock(cfg.Now)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, time.Second)
	cfg.PollMax = provider.Positive(cfg.PollMax, time.Minute)
	cfg.FindAttempts = provider.Positive(cfg.FindAttempts, 5)
	return &Provider{cfg: cfg, flow: &metagraph.Container[Options, mediaNode]{
		Platform:                 "Threads",
		BaseURL:                  cfg.BaseURL,
		HTTPClient:               cfg.HTTPClient,
		Now:                      cfg.Now,
		PollInitial:              cfg.PollInitial,
		PollMax:                  cfg.PollMax,
		FindAttempts:             cfg.FindAttempts,
		MaxRefetches:             maxRefetches,
		SkipPublishingLimitCheck: cfg.SkipPublishingLimitCheck,
		Repeat:                   cfg.Repeat,
		Classify:                 classify,
		NotReady:                 notReady,
		NoAccount:                "the channel has no Threads user id",
		QuotaEdge:                "threads_publishing_limit",
		CreateEdge:               "threads",
		PublishEdge:              "threads_publish",
		ListEdge:                 "threads",
		Form:                     videoForm,
		Text:                     text,
		StatusField:              "status",
		DetailField:              "error_message",
		FetchFailed:              fetchFailed,
		Rejected:                 containerError,
		ListFields:               "id,text,media_type,timestamp,permalink",
		Kind:                     "VIDEO",
		LinkFields:               "permalink",
		// Threads omits the permalink of posts flagged for copyrighted material.
		NoLink:   "published; Threads gave no permalink (posts flagged for copyrighted material have none)",
		Owner:    "profile",
		Item:     "post",
		Items:    "posts",
		TextName: "text",
	}}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return Platform }

// State is what the provider stores between steps (Destination.State / Outcome.State): the
// Threads media container created for the post, then the published Threads media.
type State = metagraph.ContainerState

// maxRefetches bounds the new containers made after failed downloads.
const maxRefetches = 2

// Step implements provider.Provider: one move of the container flow (see the package comment).
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	return p.flow.Step(ctx, d)
}

func (p *Provider) graph(baseURL, token string) metagraph.Client {
	if baseURL == "" {
		baseURL = p.cfg.BaseURL
	}
	return metagraph.New("Threads", baseURL, token, p.cfg.HTTPClient)
}

// text is the text sent: the threads object's, else the post's caption, else its title.
func text(d *provider.Destination, o Options) string {
	return d.Text(o.Text)
}

// videoForm is the video container's creation form (POST /{threads-user-id}/threads). A
// container created twice is harmless: only threads_publish makes a post of one, and the other
// expires unpublished after 24 hours (status EXPIRED, "not published within 24 hours",
// developers.facebook.com/docs/threads/troubleshooting).
func videoForm(d *provider.Destination, o Options) url.Values {
	form := url.Values{"media_type": {"VIDEO"}, "video_url": {d.Video.URL}}
	if t := text(d, o); t != "" {
		form.Set("text", t)
	}
	return form
}

// fetchFailed reports whether a container's ERROR message is a failed download of the video.
func fetchFailed(msg string) bool { return msg == "FAILED_DOWNLOADING_VIDEO" }

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

type mediaNode struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	MediaType string `json:"media_type"`
	Timestamp string `json:"timestamp"`
	Permalink string `json:"permalink"`
}

// Published implements metagraph.Media.
func (m mediaNode) Published() metagraph.Published {
	return metagraph.Published{ID: m.ID, Text: m.Text, Kind: m.MediaType, Timestamp: m.Timestamp, Link: m.Permalink}
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
	token, err := metagraph.AccessToken("Threads", "access token", credentials)
	if err != nil {
		return provider.Identity{}, err
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
	token, err := metagraph.AccessToken("Threads", "access token", credentials)
	if err != nil {
		return nil, err
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
