// Package instagram publishes Reels through the Instagram Graph API (Instagram API with
// Facebook Login, graph.facebook.com; Instagram Login's graph.instagram.com speaks the same
// protocol and works with BaseURL pointed at it).
//
// Instagram pulls the video: reelay hands it the signed public link of the stored media
// (Destination.Video.URL) and Meta downloads it. A destination goes through these steps, one
// per Step call, and the returned State is stored before the next:
//
//  1. GET /{ig-user-id}/content_publishing_limit (unless disabled): a spent quota fails at once
//     with quota_exceeded. POST /{ig-user-id}/media with media_type=REELS, video_url, caption,
//     share_to_feed and cover_url → State{container_id, created_at}.
//  2. GET /{container}?fields=status_code,status, polled with a growing, capped interval
//     (Outcome.After): IN_PROGRESS waits; ERROR fails (media_rejected, with the subcode's
//     meaning); EXPIRED fails (a container lives 24 hours); FINISHED →
//     POST /{ig-user-id}/media_publish creation_id={container} → State{media_id}, returned at
//     once so that the media id is stored before anything else happens.
//  3. GET /{media-id}?fields=permalink,shortcode → published, with the permalink.
//
// Crash safety. The container's status is read before every media_publish, and Graph reports
// PUBLISHED for a container whose media_publish went through. So if media_publish answered but
// the process died before the media id was stored, the next Step sees PUBLISHED and does not
// publish again. Graph has no field leading from a container to its media (the IG Container
// node has only id, status, status_code and copyright_check_status), so the media is looked
// up among the account's own recent media: GET /{ig-user-id}/media?since={container creation
// - 5 min}&fields=id,caption,media_product_type,timestamp,permalink,shortcode, keeping Reels
// created at or after the container whose caption is exactly the one sent. One match is
// taken; none or several (another Reel with the same caption at the same time) are retried
// a few times, then the destination is reported published without an id or link, with a
// message saying why. Never the newest media blindly: it could be another post.
//
// A crash between container creation and storing its id leaves an orphan container that is
// never published and expires after 24 hours; the next Step creates a new one (Meta fetches
// the video again).
//
// Errors map from Graph's codes: 190/102/104/10/2xx (token, permissions) and 25 (restricted
// account) → auth_expired; 4/17/32/613/341/368/80002 → transient rate_limited (4 with subcode
// 2207051, suspected spam, is permanent media_rejected); 9 (2207042, the 24-hour publishing
// limit) → quota_exceeded; 1, 2, -1, -2, 2207008 and HTTP 5xx → transient
// upstream_unavailable; 100 and 36004 (caption) → invalid_options; 352, 9004, 24, 36000-36003
// and 2207020 → media_rejected.
package instagram

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/metagraph"
	"github.com/reelay/reelay/internal/provider"
)

// APIVersion is the Graph API version the provider speaks (the newest in Meta's changelog when
// this was written: v26.0, introduced July 29, 2026).
const APIVersion = "v26.0"

// DefaultBaseURL is the Graph API root for Instagram API with Facebook Login, version included.
const DefaultBaseURL = APIHost + "/" + APIVersion

// APIHost is the API's host; calls go below it and the version (Config.APIVersion).
const APIHost = "https://graph.facebook.com"

// Platform is the provider's platform identifier.
const Platform = "instagram"

// Config configures the provider. The zero value is usable.
type Config struct {
	// APIVersion replaces APIVersion in the API root when BaseURL is empty
	// (REELAY_INSTAGRAM_API_VERSION).
	APIVersion string
	// BaseURL is the Graph API root including the version segment (DefaultBaseURL when empty).
	// A destination's BaseURL, when set, overrides it (sandbox channels, tests).
	BaseURL string
	// HTTPClient makes the calls (a client with a 60-second timeout when nil).
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// SkipPublishingLimitCheck leaves out the content_publishing_limit call before a container
	// is created; media_publish still fails with quota_exceeded when the limit is spent.
	SkipPublishingLimitCheck bool
	// PollInitial is the first wait before reading a container's status (100 ms when 0); the
	// waits grow from it as provider.PollDelay says, up to PollMax (1 min when 0). Meta
	// must download the video before the container can finish, which a small video on a fast
	// link does in a fraction of a second; the growth keeps a container that takes minutes at
	// 22 status reads in its first 5 minutes, far inside the 200 calls an hour that Graph
	// allows per user.
	PollInitial, PollMax time.Duration
	// FindAttempts is how many times the media of a container found PUBLISHED is looked for
	// before the destination is reported published without its id (5 when 0).
	FindAttempts int
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
}

// Provider publishes Reels to Instagram. It implements provider.Provider.
type Provider struct {
	cfg Config
	// flow is the container flow with Instagram's edges, fields and words.
	flow *metagraph.Container[Options, mediaNode]
}

// New returns a provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = cmp.Or(cfg.BaseURL, APIHost+"/"+cmp.Or(cfg.APIVersion, APIVersion))
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 60*time.Second)
	cfg.Now = provider.Clock(cfg.Now)
	cfg.PollInitial = provider.Positive(cfg.PollInitial, 100*time.Millisecond)
	cfg.PollMax = provider.Positive(cfg.PollMax, time.Minute)
	cfg.FindAttempts = provider.Positive(cfg.FindAttempts, 5)
	return &Provider{cfg: cfg, flow: &metagraph.Container[Options, mediaNode]{
		Platform:                 "Instagram",
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
		NoAccount:                "the channel has no Instagram account id",
		QuotaEdge:                "content_publishing_limit",
		CreateEdge:               "media",
		PublishEdge:              "media_publish",
		ListEdge:                 "media",
		Form:                     reelsForm,
		Text:                     caption,
		StatusField:              "status_code",
		DetailField:              "status",
		FetchFailed:              fetchFailed,
		Rejected:                 containerError,
		ListFields:               "id,caption,media_product_type,timestamp,permalink,shortcode",
		Kind:                     "REELS",
		LinkFields:               "permalink,shortcode",
		Owner:                    "account",
		Item:                     "Reel",
		Items:                    "Reels",
		TextName:                 "caption",
	}}
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

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return Platform }

// State is what the provider stores between steps (Destination.State / Outcome.State): the
// IG container created for the Reel, then the published IG media.
type State = metagraph.ContainerState

// maxRefetches bounds the new containers made after failed downloads: a link that fails
// three times is not coming back soon.
const maxRefetches = 2

// Step implements provider.Provider: one move of the container flow (see the package comment).
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	return p.flow.Step(ctx, d)
}

// caption is the text sent: the instagram object's caption, else the post's caption, else its
// title.
func caption(d *provider.Destination, o Options) string {
	return d.Text(o.Caption)
}

// reelsForm is the Reels container's creation form (POST /{ig-user-id}/media). A container
// created twice is harmless: only media_publish makes a Reel of one, and the other expires
// unpublished after 24 hours (status_code EXPIRED, "not published within 24 hours",
// developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container).
func reelsForm(d *provider.Destination, o Options) url.Values {
	share := true
	if o.ShareToFeed != nil {
		share = *o.ShareToFeed
	}
	form := url.Values{
		"media_type":    {"REELS"},
		"video_url":     {d.Video.URL},
		"share_to_feed": {strconv.FormatBool(share)},
	}
	if c := caption(d, o); c != "" {
		form.Set("caption", c)
	}
	if d.Thumbnail != nil && d.Thumbnail.URL != "" {
		form.Set("cover_url", d.Thumbnail.URL)
	}
	return form
}

type mediaNode struct {
	ID          string `json:"id"`
	Caption     string `json:"caption"`
	ProductType string `json:"media_product_type"`
	Timestamp   string `json:"timestamp"`
	Permalink   string `json:"permalink"`
	Shortcode   string `json:"shortcode"`
}

// link is the Reel's permalink; Graph omits permalink for media flagged for copyright, in which
// case the shortcode still gives the Reel's address.
func (m mediaNode) link() string {
	switch {
	case m.Permalink != "":
		return m.Permalink
	case m.Shortcode != "":
		return "https://www.instagram.com/reel/" + m.Shortcode + "/"
	}
	return ""
}

// Published implements metagraph.Media.
func (m mediaNode) Published() metagraph.Published {
	return metagraph.Published{ID: m.ID, Text: m.Caption, Kind: m.ProductType, Timestamp: m.Timestamp, Link: m.link()}
}

// fetchFailed reports whether a container's ERROR status is a failed download of the video
// (2207052) or a download that took too long (2207003).
func fetchFailed(status string) bool {
	return strings.Contains(status, "error code 2207052") || strings.Contains(status, "error code 2207003")
}

// containerError explains a container's ERROR status ("Error: Media upload has failed with
// error code 2207026") with the meaning of its subcode.
func containerError(status string) string {
	msg := "Instagram could not process the video"
	if status == "" {
		return msg + " (container status ERROR)"
	}
	msg += ": " + status
	if i := strings.LastIndex(status, "error code "); i >= 0 {
		digits := strings.TrimRight(status[i+len("error code "):], ". ")
		if n, err := strconv.Atoi(digits); err == nil {
			if t, ok := subcodeText[n]; ok {
				msg += " (" + t + ")"
			}
		}
	}
	return msg
}

// Options returns the publish options of an Instagram channel: the static registry's
// (share_to_feed), plus account, the account's identity and its publishing quota, read live
// with AccountInfo. The signature is the other providers' so that callers treat them alike:
// the Instagram user id, which Graph paths need, comes in credentials["ig_user_id"] next to
// access_token. baseURL "" means the configured one. Errors are *provider.Error values,
// classified as for Step.
func (p *Provider) Options(ctx context.Context, baseURL string, credentials map[string]string) (map[string]any, error) {
	igUserID := strings.TrimSpace(credentials["ig_user_id"])
	if igUserID == "" {
		return nil, provider.Permanent(provider.CategoryInvalidOptions, 0, "Instagram: options need the channel's Instagram user id (ig_user_id)")
	}
	info, err := p.AccountInfo(ctx, baseURL, credentials["access_token"], igUserID)
	if err != nil {
		return nil, err
	}
	account := map[string]any{"id": info.ID, "username": info.Username}
	if info.Name != "" {
		account["name"] = info.Name
	}
	if info.ProfilePictureURL != "" {
		account["avatar_url"] = info.ProfilePictureURL
	}
	// Graph answers an empty list rather than an error for accounts it has no quota for; a
	// zero total would read as "no posts allowed", so the quota is left out instead.
	if info.QuotaTotal > 0 {
		lim := map[string]any{"quota_usage": info.QuotaUsage, "quota_total": info.QuotaTotal}
		if info.QuotaWindow > 0 {
			lim["quota_duration_sec"] = int(info.QuotaWindow / time.Second)
		}
		account["publishing_limit"] = lim
	}
	opts := staticOptions()
	opts["account"] = account
	return opts, nil
}

// AccountInfo is what GET /channels/{id}/options shows of a connected Instagram account.
type AccountInfo struct {
	ID                string `json:"id"`
	Username          string `json:"username"`
	Name              string `json:"name,omitempty"`
	ProfilePictureURL string `json:"profile_picture_url,omitempty"`
	// QuotaUsage and QuotaTotal are the posts published through the API in the rolling
	// window and the limit (content_publishing_limit); QuotaWindow is the window's length.
	QuotaUsage  int           `json:"quota_usage"`
	QuotaTotal  int           `json:"quota_total"`
	QuotaWindow time.Duration `json:"-"`
}

// AccountInfo reads the account's identity (GET /{ig-user-id}?fields=id,username,name,
// profile_picture_url) and its publishing quota (GET /{ig-user-id}/content_publishing_limit).
// baseURL may be empty (the provider's). Errors are *provider.Error values, classified as for
// Step.
func (p *Provider) AccountInfo(ctx context.Context, baseURL, accessToken, igUserID string) (AccountInfo, error) {
	if baseURL == "" {
		baseURL = p.cfg.BaseURL
	}
	if accessToken == "" {
		return AccountInfo{}, provider.Permanent(provider.CategoryAuthExpired, 0, "Instagram: the channel has no access token")
	}
	g := graph(baseURL, accessToken, p.cfg.HTTPClient)
	acct := "/" + url.PathEscape(igUserID)
	var info AccountInfo
	if err := g.Get(ctx, acct, url.Values{"fields": {"id,username,name,profile_picture_url"}}, &info); err != nil {
		return AccountInfo{}, classify(err)
	}
	lim, err := publishingLimit(ctx, g, igUserID)
	if err != nil {
		return AccountInfo{}, classify(err)
	}
	info.QuotaUsage, info.QuotaTotal, info.QuotaWindow = lim.Usage, lim.Total, lim.Window
	return info, nil
}

// maxPageReads bounds how many pages of the user's Facebook Pages Identify reads looking for a
// linked Instagram account (100 Pages each).
const maxPageReads = 10

// Identify returns the Instagram professional account that an access token of Instagram API
// with Facebook Login reaches: GET /me/accounts?fields=instagram_business_account{id,username,
// name,profile_picture_url} lists the Facebook Pages the user manages, each with the
// Instagram account linked to it, and the first Page that has one names the channel.
// ExternalID is the IG user id, which Step uses as the channel's ig_user_id (Destination.
// Account); Name falls back to the username when the account has no name. A token Graph
// refuses is a permanent auth_expired error; a user none of whose Pages has a linked account
// is a permanent invalid_options error. The token needs pages_show_list and instagram_basic.
// (Instagram Login's tokens have no Pages: their account is GET /me.)
func (p *Provider) Identify(ctx context.Context, baseURL string, credentials map[string]string) (provider.Identity, error) {
	token, err := metagraph.AccessToken("Instagram", "access token", credentials)
	if err != nil {
		return provider.Identity{}, err
	}
	if baseURL == "" {
		baseURL = p.cfg.BaseURL
	}
	g := graph(baseURL, token, p.cfg.HTTPClient)
	q := url.Values{"fields": {"instagram_business_account{id,username,name,profile_picture_url}"}, "limit": {"100"}}
	for range maxPageReads {
		var pages struct {
			Data []struct {
				IG *struct {
					ID                string `json:"id"`
					Username          string `json:"username"`
					Name              string `json:"name"`
					ProfilePictureURL string `json:"profile_picture_url"`
				} `json:"instagram_business_account"`
			} `json:"data"`
			Paging struct {
				Cursors struct {
					After string `json:"after"`
				} `json:"cursors"`
				Next string `json:"next"`
			} `json:"paging"`
		}
		if err := g.Get(ctx, "/me/accounts", q, &pages); err != nil {
			return provider.Identity{}, classify(err)
		}
		for _, pg := range pages.Data {
			if pg.IG == nil || pg.IG.ID == "" {
				continue
			}
			name := pg.IG.Name
			if name == "" {
				name = pg.IG.Username
			}
			return provider.Identity{ExternalID: pg.IG.ID, Name: name, Username: pg.IG.Username, AvatarURL: pg.IG.ProfilePictureURL}, nil
		}
		if pages.Paging.Next == "" || pages.Paging.Cursors.After == "" {
			break
		}
		q.Set("after", pages.Paging.Cursors.After)
	}
	return provider.Identity{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
		"Instagram: no Instagram professional account is linked to a Facebook Page of this user: "+
			"switch the Instagram account to a professional (business or creator) account, link it to a Facebook Page the user manages, then connect again")
}
