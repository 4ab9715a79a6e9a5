// Package instagramsim is the simulator of Instagram's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package instagramsim

// Instagram Graph API simulator: Reels publishing by container (Instagram API with Facebook
// Login, graph.facebook.com). Sources: developers.facebook.com/docs/instagram-platform
// content-publishing guide, reference/ig-user/media, ig-container, ig-user/media_publish,
// ig-user/content_publishing_limit, reference/error-codes, graph-api/guides/error-handling.
//
// What it reproduces:
//   - paths below the simulator's base URL, with an optional version segment (/v26.0/...);
//     parameters in the query string, a form body or a JSON body, as Graph accepts them;
//   - the access token as "Authorization: Bearer|OAuth T" or an access_token parameter;
//   - POST /{ig-user-id}/media (media_type=REELS only) → {"id": container}; the container then
//     fetches video_url with Config.PullClient (Meta cURLs the URL), streams it to a temporary
//     file while hashing, checks it as Reels require (media.Probe) and moves IN_PROGRESS →
//     FINISHED after the account's processing time, or → ERROR with "Error: Media upload has
//     failed with error code N" in status; an unpublished container is EXPIRED after 24 hours;
//   - GET /{container}?fields=status_code,status; POST /{ig-user-id}/media_publish?creation_id=
//     → {"id": media}; GET /{media}?fields=permalink,shortcode,...; GET /{ig-user-id}/media;
//     GET /{ig-user-id}/content_publishing_limit; GET /{ig-user-id}?fields=id,username,name;
//   - GET /me/accounts: the Facebook Pages the token's user manages, with field expansion
//     (fields=instagram_business_account{id,username,name,profile_picture_url}) and cursor
//     paging (limit, after). By default each account's user manages one Page, linked to the
//     Instagram professional account whose id is the account's ID; Options.Pages
//     changes that per account (Pages without a linked account, no Page at all). Without a
//     fields parameter a Page has its default fields, less access_token (the simulator has no
//     Page tokens);
//   - limits: 100 published posts and 400 containers per account per rolling 24 hours;
//   - insights, comments and replies of the published Reels (audience.go);
//   - errors as Graph renders them: {"error":{"message","type","code","error_subcode",
//     "is_transient","error_user_title","error_user_msg","fbtrace_id"}}.
//
// Error wording that Meta does not document (the answer to a second media_publish of the same
// container, and to the 400-container cap) is the simulator's own and says so in the code.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/metagraph/metasim"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Instagram limits that the simulator enforces. Numbers that platform.Capabilities holds
// (size, duration, width, caption, posts per day) are read from there.
const (
	igDefaultProcessing = 3 * time.Second
	igContainerLifetime = 24 * time.Hour
	igWindow            = 24 * time.Hour
	igMaxContainers     = 400 // containers per account per rolling 24 h (content publishing guide)
	igFetchTimeout      = 5 * time.Minute
)

// Container status codes (IG Container reference).
const (
	igStInProgress = "IN_PROGRESS"
	igStFinished   = "FINISHED"
	igStError      = "ERROR"
	igStExpired    = "EXPIRED"
	igStPublished  = "PUBLISHED"
)

// Error subcodes of the Instagram error-codes reference that the container status reports.
const (
	igSubTimeout     = 2207003 // -2: It takes too long to download the media.
	igSubFormat      = 2207026 // 352: The video format is not supported.
	igSubFetchFailed = 2207052 // 9004: The media could not be fetched from this uri.
	igSubThumbOffset = 2207057 // Thumbnail offset must be at least 0 and less than the video's duration.
)

// The kinds of the Instagram simulator's records.
const (
	// igContainerKind is a container (igContainer). It is kept a day past its lifetime, so
	// that it answers EXPIRED, as Meta's do, before it is gone.
	igContainerKind = "container"
	// igMediaKind is a published Reel (igMedia), with the replies the account posted under
	// its comments, kept until retention.
	igMediaKind = "media"
	// igCreatedKind and igPublishedKind are an account's container creations and publishes of
	// the last 24 hours ([]time.Time), for the caps.
	igCreatedKind   = "containers_created"
	igPublishedKind = "published"
)

func igKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Instagram, Kind: kind, ID: id} }

type igContainer struct {
	ID          string    `json:"id"`
	Account     string    `json:"account"`
	Caption     string    `json:"caption,omitempty"`
	ShareToFeed bool      `json:"share_to_feed,omitempty"`
	Created     time.Time `json:"created"`
	Ready       time.Time `json:"ready"` // FINISHED (or ERROR for checks) not before this instant
	// The fetch of video_url, and what it is told: the cover's offset (ms, -1 for none) and
	// whether the account's behaviour rejects the video.
	Pull        metasim.Pull `json:"pull"`
	ThumbOffset int64        `json:"thumb_offset"`
	Reject      bool         `json:"reject,omitempty"`
	ErrSub      int          `json:"err_sub,omitempty"`     // ERROR subcode once fetched; 0 = the video passed
	ErrAtOnce   bool         `json:"err_at_once,omitempty"` // the error shows at once (fetch failures), not after processing
	SHA         string       `json:"sha,omitempty"`
	Bytes       int64        `json:"bytes,omitempty"`
	MediaID     string       `json:"media_id,omitempty"` // set when published
}

type igMedia struct {
	ID          string    `json:"id"`
	Account     string    `json:"account"`
	Username    string    `json:"username"`
	Caption     string    `json:"caption,omitempty"`
	Shortcode   string    `json:"shortcode"`
	ShareToFeed bool      `json:"share_to_feed,omitempty"`
	Timestamp   time.Time `json:"timestamp"`
	// Replies are the account's replies under the Reel's comments, oldest first; Hidden the
	// comments the account hid.
	Replies []igComment     `json:"replies,omitempty"`
	Hidden  map[string]bool `json:"hidden,omitempty"`
}

// igSim simulates the Instagram Graph API. Its containers, Reels, replies and caps are records
// of Config.State; a container's fetch is made as metasim's pull.go says.
type igSim struct {
	cfg     sim.Config
	opt     Options
	prefix  string // path of cfg.BaseURL, stripped from request paths
	caps    platform.Capabilities
	fetcher metasim.Fetcher[igContainer, igFetched]
}

// igFetched is what a container's fetch found.
type igFetched struct {
	sub    int
	atOnce bool
	sum    string
	n      int64
}

// Page is a Facebook Page that a simulated account's Facebook user manages.
type Page struct {
	// ID is the Page id (a number derived from the account when "").
	ID   string
	Name string
	// Linked reports whether the account's Instagram professional account is linked to the
	// Page (its instagram_business_account).
	Linked bool
}

// Options tunes the Instagram simulator; the zero value is the default.
type Options struct {
	// Declined lists, per account ID, the permissions its user declined: GET /me/permissions
	// answers them with status "declined", and every other one the sandbox app asks for as
	// "granted".
	Declined map[string][]string
	// Pages overrides, per account ID, the Pages that GET /me/accounts lists, in order. An
	// account without an entry manages one Page, linked to its Instagram account; an empty
	// list manages none.
	Pages map[string][]Page
}

// New returns the simulator of the Instagram Graph API (Reels publishing).
func New(cfg sim.Config) http.Handler {
	return NewWith(cfg, Options{})
}

// igLimits: the simulator states its platform's limits itself rather than reading reelay's description
// of the platform: it stands for the platform, and a description that drifts from the
// documentation is then caught by a refusal here.
// Sources: the Reels specifications of the Graph API's media reference (size, duration,
// width, containers), the caption rules (2,200 characters, 30 hashtags, 20 mentions) and
// content publishing limits (100 API-published posts in 24 hours).
var igLimits = platform.Capabilities{
	MaxVideoBytes: 300 * platform.MB, MinDurationSeconds: 3, MaxDurationSeconds: 15 * 60,
	VideoFormats: []string{platform.FormatMP4, platform.FormatMOV}, MaxWidth: 1920,
	// Reel specifications: HEVC or H.264 video at 23-60 fps, the moov atom at the front, no
	// edit lists, AAC sound of at most 48 kHz and two channels.
	VideoCodecs: []string{"h264", "hevc"}, MinFrameRate: 23, MaxFrameRate: 60, MoovFirst: true, NoEditLists: true,
	AudioCodecs: []string{"aac"}, MaxAudioSampleRate: 48000, MaxAudioChannels: 2,
	// "Required aspect ratio is between 0.01:1 and 10:1", "Video bitrate: VBR, 25Mbps maximum".
	MinAspectRatio: 0.01, MaxAspectRatio: 10, MaxVideoBitrate: 25_000_000,
	Text: map[string]platform.TextLimit{
		"caption": {Max: 2200, Unit: platform.UnitUTF16, MaxHashtags: 30, MaxMentions: 20},
	},
	ReplyText:   platform.TextLimit{Max: 2200, Unit: platform.UnitUTF16},
	PostsPerDay: 100,
}

// NewWith returns the simulator of the Instagram Graph API tuned by opt.
func NewWith(cfg sim.Config, opt Options) http.Handler {
	cfg.Normalize()
	s := &igSim{cfg: cfg, opt: opt, caps: igLimits}
	s.fetcher = metasim.Fetcher[igContainer, igFetched]{Config: cfg, Timeout: igFetchTimeout,
		Pull: func(c *igContainer) *metasim.Pull { return &c.Pull },
		Fetch: func(ctx context.Context, c igContainer) (igFetched, *sim.Upload) {
			f := s.download(ctx, c.Pull.URL, c.ThumbOffset)
			if f.sub == 0 && c.Reject {
				f.sub = igSubFormat
			}
			if f.sum == "" {
				return f, nil
			}
			return f, &sim.Upload{Account: c.Account, Bytes: f.n, SHA256: f.sum}
		},
		Apply: func(c *igContainer, f igFetched) {
			c.ErrSub, c.ErrAtOnce, c.SHA, c.Bytes = f.sub, f.atOnce, f.sum, f.n
		},
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		s.prefix = strings.TrimRight(u.Path, "/")
	}
	return s
}

func (s *igSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := metasim.Segments(s.prefix, r.URL.Path)
	params, ok := metasim.Params(w, r, segs)
	if !ok {
		return
	}

	token := metasim.Token(r, params)
	if token == "" {
		metasim.Write(w, metasim.Err(http.StatusBadRequest, 104, 0, "An access token is required to request this resource."))
		return
	}
	acct, ok := s.cfg.Accounts.Resolve(r.Context(), token)
	if !ok {
		metasim.Write(w, metasim.Err(http.StatusBadRequest, 190, 0, "Invalid OAuth access token - Cannot parse access token"))
		return
	}
	switch sim.CallFault(acct.Behavior, s.cfg.Rand) {
	case sim.FailUnavailable:
		e := metasim.Err(http.StatusInternalServerError, 2, 0, "An unexpected error has occurred. Please retry your request later.")
		e.IsTransient = true
		metasim.Write(w, e)
		return
	case sim.FailAuth:
		metasim.Write(w, metasim.Err(http.StatusBadRequest, 190, 463,
			"Error validating access token: Session has expired on "+s.cfg.Now().UTC().Add(-time.Hour).Format("Monday, 02-Jan-06 15:04:05 MST")+"."))
		return
	case sim.FailRateLimit:
		// Graph answers throttling with an error code, not 429 and not Retry-After: code 4
		// (application request limit), HTTP 403, with the usage headers. Calls with an
		// Instagram account's token count against its business use case too, whose header
		// says when access returns.
		e := metasim.Err(http.StatusForbidden, 4, 0, "(#4) Application request limit reached")
		e.IsTransient = true
		e.Header = map[string]string{
			"X-App-Usage":               `{"call_count":100,"total_cputime":12,"total_time":15}`,
			"X-Business-Use-Case-Usage": metasim.Usage(acct.ID, "instagram"),
		}
		metasim.Write(w, e)
		return
	}

	id := segs[0]
	edge := ""
	if len(segs) == 2 {
		edge = segs[1]
	}
	// /me is the token's user: its Pages on the accounts edge (a Facebook User's edge), the
	// IG user elsewhere (as Instagram Login's /me is).
	pagesEdge := id == "me" && edge == "accounts"
	permissionsEdge := id == "me" && edge == "permissions"
	if id == "me" {
		id = acct.ID
	}
	var res any
	var gerr *metasim.Error
	switch {
	case pagesEdge && r.Method == http.MethodGet:
		res, gerr = s.pages(r.Context(), acct, params)
	case pagesEdge:
		gerr = metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(r.Method, "me"))
	case permissionsEdge && r.Method == http.MethodGet:
		res = s.permissions(acct)
	case r.Method == http.MethodPost && edge == "media":
		res, gerr = s.createContainer(r.Context(), acct, id, params)
	case r.Method == http.MethodPost && edge == "media_publish":
		res, gerr = s.publish(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "media":
		res, gerr = s.listMedia(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "content_publishing_limit":
		res, gerr = s.publishingLimit(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "insights":
		res, gerr = s.insights(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "comments":
		res, gerr = s.comments(r.Context(), acct, id, params)
	case r.Method == http.MethodPost && edge == "replies":
		res, gerr = s.reply(r.Context(), acct, id, params)
	case r.Method == http.MethodPost && edge == "" && params.Has("hide"):
		res, gerr = s.hide(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "":
		res, gerr = s.node(r.Context(), acct, id, params)
	default:
		gerr = metasim.NoRoute(r.Method, id, edge, "IGUser")
	}
	metasim.Answer(w, res, gerr)
}

// createContainer is POST /{ig-user-id}/media.
func (s *igSim) createContainer(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	if userID != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, userID))
	}
	switch mt := p.Get("media_type"); mt {
	case "REELS":
	case "VIDEO":
		// VIDEO has not been accepted since November 9, 2023 (Graph API changelog).
		return nil, metasim.Err(http.StatusBadRequest, 100, 2207023,
			"The media type VIDEO is not supported. Use REELS to publish a video.").User("Unknown media type",
			"The media type entered is not one of the expected media types.")
	default:
		// The simulator publishes Reels only: images, carousels and stories are not needed by
		// reelay and are refused rather than half-simulated.
		return nil, metasim.Err(http.StatusBadRequest, 100, 2207023,
			fmt.Sprintf("Unsupported media_type %q: this simulator publishes REELS only", mt)).User("Unknown media type",
			"The media type entered is not one of the expected media types.")
	}
	videoURL := p.Get("video_url")
	if videoURL == "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The parameter video_url is required")
	}
	if !metasim.HTTPURL(videoURL) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param video_url must be a valid http or https URL")
	}
	if c := p.Get("cover_url"); c != "" && !metasim.HTTPURL(c) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param cover_url must be a valid http or https URL")
	}
	share := true
	if v := p.Get("share_to_feed"); v != "" {
		b, ok := metasim.ParseBool(v)
		if !ok {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param share_to_feed must be a boolean")
		}
		share = b
	}
	thumbOffset := int64(-1) // milliseconds into the video; checked against its duration once fetched
	if v := p.Get("thumb_offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err != nil:
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param thumb_offset must be an integer")
		case n < 0:
			return nil, metasim.Err(http.StatusBadRequest, 1, igSubThumbOffset,
				"Thumbnail offset must be greater than or equal to 0 and less than video duration")
		}
		thumbOffset = n
	}
	caption := p.Get("caption")
	if e := s.checkCaption(caption); e != nil {
		return nil, e
	}

	now := s.cfg.Now()
	processing := igDefaultProcessing
	if acct.Behavior.ProcessingMS >= 0 {
		processing = time.Duration(acct.Behavior.ProcessingMS) * time.Millisecond
	}
	c := igContainer{
		Account:     acct.ID,
		Caption:     caption,
		ShareToFeed: share,
		Created:     now,
		Ready:       now.Add(processing),
		Pull:        metasim.NewPull(videoURL),
		ThumbOffset: thumbOffset,
		Reject:      acct.Behavior.Fail == sim.FailReject,
	}
	capped := false
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		ok, err := sim.TakeInWindow(tx, igKey(igCreatedKind, acct.ID), acct.ID, now, igWindow, igMaxContainers)
		if capped = !ok; err != nil || capped {
			return err
		}
		if c.ID, err = metasim.NewID(tx, igKey(igContainerKind, ""), 17890000000000000); err != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: igKey(igContainerKind, c.ID), Account: acct.ID, Expires: now.Add(2 * igContainerLifetime)}, c)
	})
	switch {
	case err != nil:
		return nil, metasim.Internal()
	case capped:
		// Meta documents the cap, not the answer: this wording is the simulator's.
		return nil, metasim.Err(http.StatusBadRequest, 9, 0,
			fmt.Sprintf("(#9) Application request limit reached: at most %d media containers per Instagram account in 24 hours", igMaxContainers))
	}
	// Meta answers with the container id at once and downloads the video in the background.
	s.fetcher.Start(igKey(igContainerKind, c.ID), c.Pull.Attempt)
	return map[string]string{"id": c.ID}, nil
}

// checkCaption applies the caption limits of the publishing reference: 2,200 characters,
// 30 hashtags, 20 @-mentions. Meta's error is code 36004, subcode 2207010.
func (s *igSim) checkCaption(caption string) *metasim.Error {
	limit := s.caps.Text["caption"]
	var problem string
	hashtags, mentions := platform.CountTags(caption, '#'), platform.CountTags(caption, '@')
	switch {
	case !limit.Check(caption):
		problem = fmt.Sprintf("the caption has %d characters; the maximum is %d", limit.Count(caption), limit.Max)
	case hashtags > limit.MaxHashtags:
		problem = fmt.Sprintf("the caption has %d hashtags; the maximum is %d", hashtags, limit.MaxHashtags)
	case mentions > limit.MaxMentions:
		problem = fmt.Sprintf("the caption has %d @ tags; the maximum is %d", mentions, limit.MaxMentions)
	default:
		return nil
	}
	return metasim.Err(http.StatusBadRequest, 36004, 2207010, "The caption is too long: "+problem+".").User("Caption too long",
		fmt.Sprintf("The caption can have at most %d characters, %d hashtags and %d @ tags.", limit.Max, limit.MaxHashtags, limit.MaxMentions))
}

// download streams the video into a spool while hashing it and checks the file, and the
// cover's offset (ms, -1 for none) against its duration. It answers the ERROR subcode (0 when
// the video is acceptable), whether the error shows at once, and the hash ("" for a download
// that did not complete) and size of what arrived.
func (s *igSim) download(ctx context.Context, videoURL string, thumbOffset int64) igFetched {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, videoURL, nil)
	if err != nil {
		return igFetched{sub: igSubFetchFailed, atOnce: true}
	}
	resp, err := s.cfg.PullClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return igFetched{sub: igSubTimeout, atOnce: true}
		}
		return igFetched{sub: igSubFetchFailed, atOnce: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return igFetched{sub: igSubFetchFailed, atOnce: true}
	}
	f := sim.NewSpool("", "reelay-sim-instagram-*")
	defer f.Close()
	h := sha256.New()
	limit := s.caps.MaxVideoBytes
	n, err := media.CopyHashed(io.NewOffsetWriter(f, 0), io.LimitReader(resp.Body, limit+1), h)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return igFetched{sub: igSubTimeout, atOnce: true, n: n}
		}
		return igFetched{sub: igSubFetchFailed, atOnce: true, n: n}
	}
	if n > limit {
		// Not a complete download: the simulator stopped reading at the cap.
		return igFetched{sub: igSubFormat, n: n}
	}
	sum := hex.EncodeToString(h.Sum(nil))
	d, ok := s.acceptable(f, n)
	switch {
	case !ok:
		return igFetched{sub: igSubFormat, sum: sum, n: n}
	case thumbOffset >= d.Milliseconds():
		return igFetched{sub: igSubThumbOffset, sum: sum, n: n}
	}
	return igFetched{sum: sum, n: n}
}

// acceptable checks a downloaded video against the Reels specifications: a MOV or MP4
// container with the moov atom at the front and no edit lists, H.264 or HEVC video at 23 to
// 60 fps, AAC audio when there is audio (at most 48 kHz, one or two channels), 3 seconds to
// 15 minutes, at most 1920 pixels wide, an aspect ratio from 0.01:1 to 10:1 and at most
// 25 Mbps on average. Meta reports every such refusal as
// subcode 2207026, "The video format is not supported" (error codes reference,
// developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes).
// It answers the video's duration too.
func (s *igSim) acceptable(r io.ReaderAt, size int64) (time.Duration, bool) {
	info, err := media.Probe(r, size)
	if err != nil || !slices.Contains(s.caps.VideoFormats, info.Kind.Name) {
		return 0, false
	}
	c := s.caps
	if !slices.Contains(c.VideoCodecs, info.VideoCodec) {
		return 0, false
	}
	if info.AudioCodec != "" && !slices.Contains(c.AudioCodecs, info.AudioCodec) {
		return 0, false
	}
	if (c.MoovFirst && info.MoovAfterMdat) || (c.NoEditLists && info.EditList) ||
		info.AudioSampleRate > c.MaxAudioSampleRate || info.AudioChannels > c.MaxAudioChannels {
		return 0, false
	}
	// The frame rate as the probe reads it (its average; rounding aside).
	if fps := info.FrameRate; fps > 0 && (fps < c.MinFrameRate-0.01 || fps > c.MaxFrameRate+0.01) {
		return 0, false
	}
	d := info.Duration.Seconds()
	if d <= 0 || info.Width <= 0 || info.Height <= 0 {
		return info.Duration, false
	}
	// The whole file's average bitrate, sound included: what the probe can tell of VBR video.
	if float64(size)*8/d > float64(c.MaxVideoBitrate) {
		return info.Duration, false
	}
	if a := float64(info.Width) / float64(info.Height); a < c.MinAspectRatio || a > c.MaxAspectRatio {
		return info.Duration, false
	}
	return info.Duration, d >= c.MinDurationSeconds && d <= c.MaxDurationSeconds && info.Width <= c.MaxWidth
}

// status answers a container's status_code and status at now.
func (s *igSim) status(c igContainer, now time.Time) (code, text string) {
	switch metasim.ContainerPhase(now, c.Created, c.Ready, igContainerLifetime, c.Pull.Done, c.ErrSub != 0, c.ErrAtOnce, c.MediaID != "") {
	case metasim.Published:
		return igStPublished, "Published: Media has been successfully published."
	case metasim.Failed:
		return igStError, fmt.Sprintf("Error: Media upload has failed with error code %d", c.ErrSub)
	case metasim.Expired:
		return igStExpired, "Expired: Media has not been published within 24 hours."
	case metasim.InProgress:
		return igStInProgress, "In Progress: Media is still being processed."
	default:
		return igStFinished, "Finished: Media has been uploaded and it is ready to be published."
	}
}

// container reads one of the account's containers; a fetch whose process died is started
// again.
func (s *igSim) container(ctx context.Context, acct sim.Account, id string) (igContainer, bool, error) {
	key := igKey(igContainerKind, id)
	c, _, found, err := sim.Load[igContainer](ctx, s.cfg.State, key)
	if err != nil || !found || c.Account != acct.ID {
		return c, false, err
	}
	return c, true, s.fetcher.Resume(ctx, key, c)
}

// publish is POST /{ig-user-id}/media_publish.
func (s *igSim) publish(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	cid, gerr := metasim.CreationID(acct, userID, p)
	if gerr != nil {
		return nil, gerr
	}
	if _, _, err := s.container(ctx, acct, cid); err != nil {
		return nil, metasim.Internal()
	}
	now := s.cfg.Now()
	var res any
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		res, gerr = nil, nil
		c, crec, found, err := sim.LoadTx[igContainer](tx, igKey(igContainerKind, cid))
		if err != nil {
			return err
		}
		if !found || c.Account != acct.ID {
			gerr = metasim.Err(http.StatusBadRequest, 24, 2207006,
				fmt.Sprintf("The media with id %s cannot be found", cid)).User("Media not found",
				"The media with the given id cannot be found.")
			return nil
		}
		switch code, _ := s.status(c, now); code {
		case igStPublished:
			// Meta does not document this answer; the container is not published twice.
			gerr = metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The media container has already been published")
			return nil
		case igStExpired:
			gerr = metasim.Err(http.StatusBadRequest, -2, 2207020,
				"The media you are trying to access has expired. Please try to upload again.").User("Media expired",
				"The media you are trying to access has expired. Please try to upload again.")
			return nil
		case igStInProgress, igStError:
			gerr = metasim.Err(http.StatusBadRequest, 9007, 2207027, "Media ID is not available").User(
				"Media Not Ready For Publishing", "The media is not ready for publishing, please wait for a moment")
			return nil
		}
		ok, err := sim.TakeInWindow(tx, igKey(igPublishedKind, acct.ID), acct.ID, now, igWindow, s.caps.PostsPerDay)
		if err != nil {
			return err
		}
		if !ok {
			gerr = metasim.Err(http.StatusBadRequest, 9, 2207042,
				"Application request limit reached").User("Maximum number of posts reached",
				"You reached maximum number of posts that is allowed to be published by Content Publishing API.")
			return nil
		}
		m := igMedia{Account: acct.ID, Username: acct.Username, Caption: c.Caption, ShareToFeed: c.ShareToFeed, Timestamp: now}
		if m.ID, err = metasim.NewID(tx, igKey(igMediaKind, ""), 17920000000000000); err != nil {
			return err
		}
		m.Shortcode = igShortcode(m.ID)
		c.MediaID = m.ID
		if err := sim.Save(tx, crec, c); err != nil {
			return err
		}
		if err := sim.Save(tx, sim.Record{Key: igKey(igMediaKind, m.ID), Account: acct.ID}, m); err != nil {
			return err
		}
		res = map[string]string{"id": m.ID}
		return sim.RecordTx(tx, platform.Instagram, sim.Published{Account: acct.ID, ID: m.ID, URL: igPermalink(m.Shortcode), SHA256: c.SHA, Text: c.Caption})
	})
	if err != nil {
		return nil, metasim.Internal()
	}
	return res, gerr
}

// node is GET /{id}: the IG user, one of its containers or one of its media.
func (s *igSim) node(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	now := s.cfg.Now()
	var all map[string]any
	var typ string
	if id == acct.ID {
		u, err := s.igUser(ctx, acct)
		if err != nil {
			return nil, metasim.Internal()
		}
		typ, all = "IGUser", u
	} else if c, ok, err := s.container(ctx, acct, id); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		typ = "ShadowIGMediaBuilder"
		code, text := s.status(c, now)
		all = map[string]any{"id": c.ID, "status_code": code, "status": text}
	} else if m, _, ok, err := sim.Load[igMedia](ctx, s.cfg.State, igKey(igMediaKind, id)); err != nil {
		return nil, metasim.Internal()
	} else if ok && m.Account == acct.ID {
		typ = "IGMedia"
		all = m.fields()
	} else if c, m, ok, err := s.comment(ctx, acct, id, now); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		return metasim.Select(s.commentFields(m, c), "IGComment", p.Get("fields"), "id,text,timestamp")
	} else {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	return metasim.SelectFlat(all, typ, p.Get("fields"), "id")
}

// igUser is every field of the account's IG User node. Fields the simulated account has no
// value for are known but nil, left out as Graph leaves out empty fields.
func (s *igSim) igUser(ctx context.Context, acct sim.Account) (map[string]any, error) {
	n, err := s.cfg.State.Count(ctx, platform.Instagram, igMediaKind, acct.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": acct.ID, "username": acct.Username, "name": acct.Username,
		"media_count": n, "followers_count": 0, "follows_count": 0,
		"profile_picture_url": nil, "biography": nil, "website": nil}, nil
}

// pages is GET /me/accounts: the Pages the token's user manages, with field expansion and
// cursor paging.
func (s *igSim) pages(ctx context.Context, acct sim.Account, p url.Values) (any, *metasim.Error) {
	pages, ok := s.opt.Pages[acct.ID]
	if !ok {
		pages = []Page{{Linked: true}}
	}
	fields := p.Get("fields")
	if fields == "" {
		fields = "name,category,category_list,id,tasks"
	}
	want, gerr := metasim.ParseFields(fields)
	if gerr != nil {
		return nil, gerr
	}
	limit := 25
	if v := p.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param limit must be a positive integer")
		}
		limit = min(n, 100)
	}
	start := 0
	if v := p.Get("after"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		n, aerr := strconv.Atoi(string(b))
		if err != nil || aerr != nil || n < 0 {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Invalid after cursor")
		}
		start = n
	}
	user, err := s.igUser(ctx, acct)
	if err != nil {
		return nil, metasim.Internal()
	}
	data := []any{}
	for i := start; i < len(pages) && i < start+limit; i++ {
		pg := pages[i]
		if pg.ID == "" {
			sum := sha256.Sum256([]byte("reelay-sim-instagram-page|" + acct.ID + "|" + strconv.Itoa(i)))
			pg.ID = strconv.FormatUint(100000000000000+binary.BigEndian.Uint64(sum[:8])%900000000000000, 10)
		}
		if pg.Name == "" {
			pg.Name = cmp.Or(acct.Username, acct.ID)
		}
		all := map[string]any{
			"id": pg.ID, "name": pg.Name, "category": "Creator",
			"category_list": []map[string]string{{"id": "2700", "name": "Creator"}},
			"tasks":         []string{"ADVERTISE", "ANALYZE", "CREATE_CONTENT", "MESSAGING", "MODERATE", "MANAGE"},
		}
		// A Page without a linked account has the field, empty: Graph leaves it out.
		all["instagram_business_account"] = nil
		if pg.Linked {
			all["instagram_business_account"] = user
		}
		row, gerr := igExpand(all, "Page", want, map[string]string{"instagram_business_account": "IGUser"})
		if gerr != nil {
			return nil, gerr
		}
		data = append(data, row)
	}
	res := map[string]any{"data": data}
	if len(data) > 0 {
		cursor := func(n int) string { return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(n))) }
		paging := map[string]any{"cursors": map[string]string{"before": cursor(start), "after": cursor(start + len(data))}}
		if start+len(data) < len(pages) {
			q := url.Values{"fields": {fields}, "limit": {strconv.Itoa(limit)}, "after": {cursor(start + len(data))}}
			paging["next"] = s.cfg.BaseURL + "/me/accounts?" + q.Encode()
		}
		res["paging"] = paging
	}
	return res, nil
}

// igExpand keeps the requested fields of a node, always with its id, expanding the fields
// that hold nodes (edges names their node types) with their own selection, or with their id
// alone. An unknown field, or the expansion of a field that holds no node, is Graph's error
// 100.
func igExpand(all map[string]any, typ string, want []metasim.Field, edges map[string]string) (map[string]any, *metasim.Error) {
	out := map[string]any{}
	if id, ok := all["id"]; ok {
		out["id"] = id
	}
	for _, f := range want {
		v, ok := all[f.Name]
		if !ok {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Tried accessing nonexisting field (%s) on node type (%s)", f.Name, typ))
		}
		subType, isEdge := edges[f.Name]
		if f.Expanded && !isEdge {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Field %s of node type (%s) has no subfields", f.Name, typ))
		}
		if v == nil {
			continue
		}
		if isEdge {
			sub := []metasim.Field{{Name: "id"}}
			if f.Expanded {
				sub = f.Sub
			}
			row, gerr := igExpand(v.(map[string]any), subType, sub, nil)
			if gerr != nil {
				return nil, gerr
			}
			v = row
		}
		out[f.Name] = v
	}
	return out, nil
}

func (m igMedia) fields() map[string]any {
	return map[string]any{
		"id": m.ID, "caption": m.Caption, "media_type": "VIDEO", "media_product_type": "REELS",
		"permalink": igPermalink(m.Shortcode), "shortcode": m.Shortcode, "username": m.Username,
		"timestamp": m.Timestamp.UTC().Format("2006-01-02T15:04:05-0700"), "is_shared_to_feed": m.ShareToFeed,
	}
}

// accountMedia reads the account's Reels, oldest first.
func (s *igSim) accountMedia(ctx context.Context, account string) ([]igMedia, error) {
	return sim.ListJSON[igMedia](ctx, s.cfg.State, igKey(igMediaKind, ""), account)
}

// listMedia is GET /{ig-user-id}/media, newest first, with since/until (Unix seconds), limit
// and an "after" cursor.
func (s *igSim) listMedia(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	if userID != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, userID))
	}
	var since, until int64
	var err error
	if v := p.Get("since"); v != "" {
		if since, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param since must be a Unix timestamp")
		}
	}
	if v := p.Get("until"); v != "" {
		if until, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param until must be a Unix timestamp")
		}
	}
	start, limit, gerr := metasim.Paging(p)
	if gerr != nil {
		return nil, gerr
	}
	all, err := s.accountMedia(ctx, acct.ID)
	if err != nil {
		return nil, metasim.Internal()
	}
	var list []igMedia
	for i := len(all) - 1; i >= 0; i-- {
		ts := all[i].Timestamp.Unix()
		if (since != 0 && ts < since) || (until != 0 && ts > until) {
			continue
		}
		list = append(list, all[i])
	}
	return metasim.Page(list, start, limit, metasim.Next(s.cfg.BaseURL, "/"+userID+"/media", p), func(m igMedia) (map[string]any, *metasim.Error) {
		return metasim.SelectFlat(m.fields(), "IGMedia", p.Get("fields"), "id")
	})
}

// publishingLimit is GET /{ig-user-id}/content_publishing_limit.
func (s *igSim) publishingLimit(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	if userID != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, userID))
	}
	now := s.cfg.Now()
	var since time.Time
	if v := p.Get("since"); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil || now.Sub(time.Unix(sec, 0)) > igWindow {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param since must be a Unix timestamp no older than 24 hours")
		}
		since = time.Unix(sec, 0)
	}
	published, _, _, err := sim.Load[[]time.Time](ctx, s.cfg.State, igKey(igPublishedKind, acct.ID))
	if err != nil {
		return nil, metasim.Internal()
	}
	usage := 0
	for _, t := range metasim.Prune(published, now) {
		if !t.Before(since) {
			usage++
		}
	}
	all := map[string]any{
		"quota_usage": usage,
		"config":      map[string]int{"quota_total": s.caps.PostsPerDay, "quota_duration": int(igWindow / time.Second)},
	}
	row, gerr := metasim.SelectFlat(all, "ShadowIGUserContentPublishingLimit", p.Get("fields"), "quota_usage")
	if gerr != nil {
		return nil, gerr
	}
	delete(row, "id")
	return map[string]any{"data": []any{row}}, nil
}

func igPermalink(shortcode string) string {
	return "https://www.instagram.com/reel/" + shortcode + "/"
}

func igShortcode(mediaID string) string {
	sum := sha256.Sum256([]byte("reelay-sim-instagram|" + mediaID))
	return "D" + base64.RawURLEncoding.EncodeToString(sum[:])[:10]
}
