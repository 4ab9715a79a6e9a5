// Package threadssim is the simulator of Threads's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package threadssim

// Threads API simulator: video posts by container (graph.threads.net). Sources:
// developers.facebook.com/documentation/threads: posts (publishing), reference/publishing,
// reference/user (threads, threads_publishing_limit, profile), troubleshooting (container
// statuses and error messages), retrieve-posts (media fields), overview (limits).
//
// What it reproduces:
//   - paths below the simulator's base URL with an optional version segment (/v1.0/...);
//     parameters in the query string, a form body or a JSON body; the access token as
//     "Authorization: Bearer T" or an access_token parameter;
//   - POST /{threads-user-id}/threads with media_type=VIDEO, video_url, text (500, emoji counted
//     in UTF-8 bytes), reply_control → {"id": container}; the container fetches video_url with
//     Config.PullClient, streams it to a temporary file while hashing, checks it as Threads
//     requires and moves IN_PROGRESS → FINISHED after the account's processing time, or →
//     ERROR with error_message FAILED_DOWNLOADING_VIDEO, FAILED_PROCESSING_VIDEO,
//     FAILED_PROCESSING_AUDIO, INVALID_DURATION or INVALID_ASPEC_RATIO (Meta's spelling); a
//     container not published within 24 hours is EXPIRED;
//   - GET /{container}?fields=status,error_message; POST /{threads-user-id}/threads_publish
//     creation_id → {"id": media} (the container becomes PUBLISHED); GET /{media}?fields=
//     permalink,...; GET /{threads-user-id}/threads (since, until, limit, after);
//     GET /{threads-user-id}/threads_publishing_limit; GET /me?fields=id,username,name,...;
//   - limits: 250 published posts per account per rolling 24 hours;
//   - errors as Graph renders them: {"error":{"message","type","code","error_subcode",
//     "fbtrace_id",...}}.
//
// Insights, replies and conversations of the published posts, and TEXT reply containers, are
// in audience.go.
//
// Error wording Meta does not document (too long a text, a spent publishing quota, publishing
// a container twice or before it is ready) is the simulator's own and says so in the code.
// Only video posts and text replies are simulated: root TEXT posts, IMAGE and CAROUSEL
// containers are refused.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/metagraph/metasim"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Threads limits the simulator enforces; size, duration, width, text and posts per day come
// from platform.Capabilities.
const (
	thDefaultProcessing = 3 * time.Second
	thContainerLifetime = 24 * time.Hour
	thWindow            = 24 * time.Hour
	thReplyQuota        = 1000
	thFetchTimeout      = 5 * time.Minute
	// thFetchWait is how long a status read waits for a download still in flight once the
	// processing time is over, so that processing is measured on the clock, not on the
	// network.
	thFetchWait = 30 * time.Second
	// Aspect ratio bounds of the video specifications (0.01:1 to 10:1).
	thMinAspect = 0.01
	thMaxAspect = 10.0
	// Frame rate and audio bounds of the video specifications ("Frame rate: 23-60 FPS",
	// "AAC, 48khz sample rate maximum, 1 or 2 channels").
	thMinFPS, thMaxFPS = 23, 60
	thMaxSampleRate    = 48000
	thMaxChannels      = 2
)

// Container statuses (troubleshooting guide).
const (
	thStInProgress = "IN_PROGRESS"
	thStFinished   = "FINISHED"
	thStError      = "ERROR"
	thStExpired    = "EXPIRED"
	thStPublished  = "PUBLISHED"
)

// Error messages of a container in ERROR (troubleshooting guide; the aspect ratio's is
// spelled as Meta spells it).
const (
	thErrDownload        = "FAILED_DOWNLOADING_VIDEO"
	thErrProcessing      = "FAILED_PROCESSING_VIDEO"
	thErrProcessingAudio = "FAILED_PROCESSING_AUDIO"
	thErrDuration        = "INVALID_DURATION"
	thErrAspect          = "INVALID_ASPEC_RATIO"
	thErrFrameRate       = "INVALID_FRAME_RATE"
	thErrAudioChannels   = "INVALID_AUDIO_CHANNELS"
)

var thReplyControls = []string{"everyone", "accounts_you_follow", "mentioned_only", "parent_post_author_only", "followers_only"}

// The kinds of the Threads simulator's records.
const (
	// thContainerKind is a container (thContainer), kept a day past its lifetime so that it
	// answers EXPIRED before it is gone.
	thContainerKind = "container"
	// thMediaKind is a published post (thMedia), with the replies the profile published in its
	// conversation, kept until retention.
	thMediaKind = "media"
	// thPublishedKind and thRepliedKind are a profile's post and reply publishes of the last 24
	// hours ([]time.Time), for the quotas.
	thPublishedKind = "published"
	thRepliedKind   = "replied"
)

func thKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Threads, Kind: kind, ID: id} }

type thContainer struct {
	ID           string    `json:"id"`
	Account      string    `json:"account"`
	Text         string    `json:"text,omitempty"`
	ReplyControl string    `json:"reply_control,omitempty"`
	Created      time.Time `json:"created"`
	Ready        time.Time `json:"ready"` // FINISHED (or ERROR for checks) not before this instant
	// Pull is the fetch of the video (metasim's pull.go), done from the start for a text reply's;
	// Reject says the account's behaviour refuses the video.
	Pull      metasim.Pull `json:"pull"`
	Reject    bool         `json:"reject,omitempty"`
	ErrMsg    string       `json:"err_msg,omitempty"`     // error_message once fetched; "" = the video passed
	ErrAtOnce bool         `json:"err_at_once,omitempty"` // the error shows at once (download failures)
	SHA       string       `json:"sha,omitempty"`
	MediaID   string       `json:"media_id,omitempty"` // set when published
	ReplyTo   string       `json:"reply_to,omitempty"` // the post or reply a TEXT reply container answers
}

type thMedia struct {
	ID        string    `json:"id"`
	Account   string    `json:"account"`
	Username  string    `json:"username"`
	Text      string    `json:"text,omitempty"`
	Shortcode string    `json:"shortcode"`
	Timestamp time.Time `json:"timestamp"`
	// Replies are the replies the profile published in the post's conversation, oldest first.
	Replies []thReply `json:"replies,omitempty"`
}

// thSim simulates the Threads API. Its containers, posts, replies and quotas are records of
// Config.State; a container's fetch is made as metasim's pull.go says.
type thSim struct {
	cfg     sim.Config
	prefix  string
	caps    platform.Capabilities
	fetcher metasim.Fetcher[thContainer, thFetched]
}

// thFetched is what a container's fetch found.
type thFetched struct {
	msg    string
	atOnce bool
	sum    string
}

// thLimits: the simulator states its platform's limits itself rather than reading reelay's description
// of the platform: it stands for the platform, and a description that drifts from the
// documentation is then caught by a refusal here.
// Sources: the Threads API's media specifications (1 GB, 5 minutes, 1920 px wide, MP4 or
// MOV), its text limit (500 characters, an emoji as its UTF-8 bytes; at most 5 links) and its
// publishing limit (250 posts in 24 hours).
var thLimits = platform.Capabilities{
	MaxVideoBytes: 1 * platform.GB, MaxDurationSeconds: 5 * 60,
	VideoFormats: []string{platform.FormatMP4, platform.FormatMOV}, MaxWidth: 1920,
	Text:        map[string]platform.TextLimit{"text": {Max: 500, Unit: platform.UnitEmojiBytes, MaxLinks: 5}},
	ReplyText:   platform.TextLimit{Max: 500, Unit: platform.UnitEmojiBytes, MaxLinks: 5},
	PostsPerDay: 250,
}

// New returns the simulator of the Threads API (video posts).
func New(cfg sim.Config) http.Handler {
	cfg.Normalize()
	s := &thSim{cfg: cfg, caps: thLimits}
	s.fetcher = metasim.Fetcher[thContainer, thFetched]{Config: cfg, Timeout: thFetchTimeout,
		Pull: func(c *thContainer) *metasim.Pull { return &c.Pull },
		Fetch: func(ctx context.Context, c thContainer) (thFetched, *sim.Upload) {
			f, n := s.download(ctx, c.Pull.URL)
			if f.msg == "" && c.Reject {
				f.msg = thErrProcessing
			}
			if f.sum == "" {
				return f, nil
			}
			return f, &sim.Upload{Account: c.Account, Bytes: n, SHA256: f.sum}
		},
		Apply: func(c *thContainer, f thFetched) { c.ErrMsg, c.ErrAtOnce, c.SHA = f.msg, f.atOnce, f.sum },
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		s.prefix = u.Path
	}
	return s
}

func (s *thSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := metasim.Segments(s.prefix, r.URL.Path)
	acct, params, id, edge, ok := metasim.Request(s.cfg, w, r, segs, 17)
	if !ok {
		return
	}
	var res any
	var gerr *metasim.Error
	switch {
	case r.Method == http.MethodPost && edge == "threads":
		res, gerr = s.create(r.Context(), acct, id, params)
	case r.Method == http.MethodPost && edge == "threads_publish":
		res, gerr = s.publish(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "threads":
		res, gerr = s.list(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "threads_publishing_limit":
		res, gerr = s.limit(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "insights":
		res, gerr = s.insights(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && (edge == "replies" || edge == "conversation"):
		res, gerr = s.conversation(r.Context(), acct, id, params, edge == "conversation")
	case r.Method == http.MethodGet && edge == "":
		res, gerr = s.node(r.Context(), acct, id, params)
	default:
		gerr = metasim.NoRoute(r.Method, id, edge, "ThreadsUser")
	}
	metasim.Answer(w, res, gerr)
}

// create is POST /{threads-user-id}/threads.
func (s *thSim) create(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	if userID != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, userID))
	}
	switch mt := p.Get("media_type"); mt {
	case "VIDEO":
	case "TEXT":
		return s.createReply(ctx, acct, p)
	case "":
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The parameter media_type is required")
	case "IMAGE", "CAROUSEL":
		// Reelay posts video only; the other kinds are refused rather than half-simulated.
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) media_type %s is not supported by this simulator: it publishes VIDEO posts only", mt))
	default:
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}, got %q", mt))
	}
	if v := p.Get("is_carousel_item"); v == "true" || v == "1" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Carousel items are not supported by this simulator")
	}
	if p.Get("reply_to_id") != "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Video replies are not supported by this simulator: replies are TEXT")
	}
	videoURL := p.Get("video_url")
	if videoURL == "" {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The parameter video_url is required for media_type VIDEO")
	}
	if !metasim.HTTPURL(videoURL) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param video_url must be a valid http or https URL")
	}
	rc := p.Get("reply_control")
	if rc != "" && !slices.Contains(thReplyControls, rc) {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param reply_control must be one of %v", thReplyControls))
	}
	text := p.Get("text")
	if limit := s.caps.Text["text"]; !limit.Check(text) {
		// Threads counts characters, emoji as their UTF-8 bytes; the wording is the simulator's.
		return nil, metasim.Err(http.StatusBadRequest, 100, 0,
			fmt.Sprintf("(#100) Param text is too long: %d of at most %d characters (emoji count as their UTF-8 bytes)", limit.Count(text), limit.Max))
	}
	if n := platform.CountLinks(text); n > s.caps.Text["text"].MaxLinks {
		// Text attachments' reference: more than 5 links fail at container creation.
		return nil, metasim.Err(http.StatusBadRequest, 100, 0,
			fmt.Sprintf("THREADS_API__LINK_LIMIT_EXCEEDED: the post has %d links; at most %d are allowed", n, s.caps.Text["text"].MaxLinks))
	}

	now := s.cfg.Now()
	processing := thDefaultProcessing
	if acct.Behavior.ProcessingMS >= 0 {
		processing = time.Duration(acct.Behavior.ProcessingMS) * time.Millisecond
	}
	c := thContainer{
		Account:      acct.ID,
		Text:         text,
		ReplyControl: rc,
		Created:      now,
		Ready:        now.Add(processing),
		Pull:         metasim.NewPull(videoURL),
		Reject:       acct.Behavior.Fail == sim.FailReject,
	}
	if err := s.newContainer(ctx, &c); err != nil {
		return nil, metasim.Internal()
	}
	// Meta answers with the container id at once and fetches the video in the background.
	s.fetcher.Start(thKey(thContainerKind, c.ID), c.Pull.Attempt)
	return map[string]string{"id": c.ID}, nil
}

// newContainer stores a new container under a new id.
func (s *thSim) newContainer(ctx context.Context, c *thContainer) error {
	return s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		id, err := metasim.NewID(tx, thKey(thContainerKind, ""), 17890000000000000)
		if err != nil {
			return err
		}
		c.ID = id
		return sim.Save(tx, sim.Record{Key: thKey(thContainerKind, id), Account: c.Account, Expires: c.Created.Add(2 * thContainerLifetime)}, *c)
	})
}

// download streams the video to a spool while hashing it, and checks the file. It answers the
// ERROR message ("" when the video is acceptable), whether it shows at once, the hash of what
// arrived ("" for a download that did not complete), and its size.
func (s *thSim) download(ctx context.Context, videoURL string) (thFetched, int64) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, videoURL, nil)
	if err != nil {
		return thFetched{msg: thErrDownload, atOnce: true}, 0
	}
	resp, err := s.cfg.PullClient.Do(req)
	if err != nil {
		return thFetched{msg: thErrDownload, atOnce: true}, 0
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return thFetched{msg: thErrDownload, atOnce: true}, 0
	}
	f := sim.NewSpool("", "reelay-sim-threads-*")
	defer f.Close()
	h := sha256.New()
	limit := s.caps.MaxVideoBytes
	n, err := media.CopyHashed(io.NewOffsetWriter(f, 0), io.LimitReader(resp.Body, limit+1), h)
	if err != nil {
		return thFetched{msg: thErrDownload, atOnce: true}, n
	}
	if n > limit {
		return thFetched{msg: thErrProcessing}, n // the simulator stopped reading at the cap
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return thFetched{msg: s.check(f, n), sum: sum}, n
}

// check applies the video specifications: MOV or MP4 with the moov atom at the front and no
// edit lists, H.264 or HEVC at 23-60 fps, AAC audio at most 48 kHz with one or two channels,
// longer than 0 and at most 5 minutes, at most 1920 pixels wide, aspect ratio 0.01:1 to 10:1.
// The frame rate is the probe's average.
func (s *thSim) check(r io.ReaderAt, size int64) string {
	info, err := media.Probe(r, size)
	if err != nil || !slices.Contains(s.caps.VideoFormats, info.Kind.Name) {
		return thErrProcessing
	}
	if info.VideoCodec != "h264" && info.VideoCodec != "hevc" {
		return thErrProcessing
	}
	if info.MoovAfterMdat || info.EditList {
		return thErrProcessing
	}
	if info.AudioCodec != "" && (info.AudioCodec != "aac" || info.AudioSampleRate > thMaxSampleRate) {
		return thErrProcessingAudio
	}
	if info.AudioChannels > thMaxChannels {
		return thErrAudioChannels
	}
	if fps := info.FrameRate; fps > 0 && (fps < thMinFPS-0.01 || fps > thMaxFPS+0.01) {
		return thErrFrameRate
	}
	if d := info.Duration.Seconds(); d <= 0 || d > s.caps.MaxDurationSeconds {
		return thErrDuration
	}
	if info.Width <= 0 || info.Height <= 0 || info.Width > s.caps.MaxWidth {
		return thErrProcessing
	}
	if a := float64(info.Width) / float64(info.Height); a < thMinAspect || a > thMaxAspect {
		return thErrAspect
	}
	return ""
}

// status answers a container's status and error_message at now.
func (s *thSim) status(c thContainer, now time.Time) (status, errMsg string) {
	switch metasim.ContainerPhase(now, c.Created, c.Ready, thContainerLifetime, c.Pull.Done, c.ErrMsg != "", c.ErrAtOnce, c.MediaID != "") {
	case metasim.Published:
		return thStPublished, ""
	case metasim.Failed:
		return thStError, c.ErrMsg
	case metasim.Expired:
		return thStExpired, ""
	case metasim.InProgress:
		return thStInProgress, ""
	default:
		return thStFinished, ""
	}
}

// container reads one of the account's containers. Once its processing time is over, it waits
// (a bounded time) for a fetch still in flight, at whichever process, so that its status
// depends on the clock only; a fetch whose process died is started again.
func (s *thSim) container(ctx context.Context, acct sim.Account, id string) (thContainer, bool, error) {
	key := thKey(thContainerKind, id)
	deadline := time.Now().Add(thFetchWait)
	for {
		c, _, found, err := sim.Load[thContainer](ctx, s.cfg.State, key)
		if err != nil || !found || c.Account != acct.ID {
			return c, false, err
		}
		if err := s.fetcher.Resume(ctx, key, c); err != nil {
			return c, true, err
		}
		if c.Pull.Done || s.cfg.Now().Before(c.Ready) || time.Now().After(deadline) {
			return c, true, nil
		}
		select {
		case <-ctx.Done():
			return c, true, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// publish is POST /{threads-user-id}/threads_publish.
func (s *thSim) publish(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	cid, gerr := metasim.CreationID(acct, userID, p)
	if gerr != nil {
		return nil, gerr
	}
	if _, _, err := s.container(ctx, acct, cid); err != nil {
		return nil, metasim.Internal()
	}
	now := s.cfg.Now()
	var root thMedia
	var rootFound bool
	if c, _, found, err := sim.Load[thContainer](ctx, s.cfg.State, thKey(thContainerKind, cid)); err != nil {
		return nil, metasim.Internal()
	} else if found && c.ReplyTo != "" {
		// The post the reply's conversation is under, found before the transaction: replies are
		// found by searching the profile's posts.
		if root, rootFound, err = s.root(ctx, acct, c.ReplyTo, now); err != nil {
			return nil, metasim.Internal()
		}
	}
	var res any
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		res, gerr = nil, nil
		c, crec, found, err := sim.LoadTx[thContainer](tx, thKey(thContainerKind, cid))
		if err != nil {
			return err
		}
		if !found || c.Account != acct.ID {
			gerr = metasim.Err(http.StatusBadRequest, 24, 0, fmt.Sprintf("The media with id %s cannot be found", cid)).User("Media not found",
				"The media with the given id cannot be found.")
			return nil
		}
		switch st, _ := s.status(c, now); st {
		case thStPublished:
			// Meta does not document this answer; the container is not published twice.
			gerr = metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The media container has already been published")
			return nil
		case thStExpired:
			gerr = metasim.Err(http.StatusBadRequest, 100, 0, "(#100) The media container has expired: it was not published within 24 hours")
			return nil
		case thStInProgress, thStError:
			gerr = metasim.Err(http.StatusBadRequest, 9007, 0, "Media ID is not available").User(
				"Media Not Ready For Publishing", "The media is not ready for publishing, please wait for a moment")
			return nil
		}
		if c.ReplyTo != "" {
			res, gerr, err = s.publishReply(tx, acct, &c, root, rootFound, now)
		} else {
			res, gerr, err = s.publishPost(tx, acct, &c, now)
		}
		if err != nil || gerr != nil {
			return err
		}
		return sim.Save(tx, crec, c)
	})
	if err != nil {
		return nil, metasim.Internal()
	}
	return res, gerr
}

// publishPost publishes a video container as a post within tx.
func (s *thSim) publishPost(tx sim.Tx, acct sim.Account, c *thContainer, now time.Time) (any, *metasim.Error, error) {
	ok, err := sim.TakeInWindow(tx, thKey(thPublishedKind, acct.ID), acct.ID, now, thWindow, s.caps.PostsPerDay)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		// The limit is documented, the answer is not: this wording is the simulator's.
		return nil, metasim.Err(http.StatusBadRequest, 9, 0, "Application request limit reached").User("Maximum number of posts reached",
			fmt.Sprintf("You reached the maximum of %d posts that can be published through the API in 24 hours.", s.caps.PostsPerDay)), nil
	}
	m := thMedia{Account: acct.ID, Username: thUsername(acct), Text: c.Text, Timestamp: now}
	if m.ID, err = metasim.NewID(tx, thKey(thMediaKind, ""), 18000000000000000); err != nil {
		return nil, nil, err
	}
	m.Shortcode = thShortcode(m.ID)
	c.MediaID = m.ID
	if err := sim.Save(tx, sim.Record{Key: thKey(thMediaKind, m.ID), Account: acct.ID}, m); err != nil {
		return nil, nil, err
	}
	err = sim.RecordTx(tx, platform.Threads, sim.Published{Account: acct.ID, ID: m.ID, URL: m.permalink(), SHA256: c.SHA, Text: c.Text})
	return map[string]string{"id": m.ID}, nil, err
}

// node is GET /{id}: the Threads user, one of its containers or one of its posts.
func (s *thSim) node(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	now := s.cfg.Now()
	var all map[string]any
	var typ string
	if id == acct.ID {
		typ = "ThreadsUser"
		// Fields the simulated account has no value for are known but left out.
		all = map[string]any{"id": acct.ID, "username": thUsername(acct), "name": thUsername(acct),
			"threads_profile_picture_url": nil, "threads_biography": nil, "is_verified": false}
	} else if c, ok, err := s.container(ctx, acct, id); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		typ = "ThreadsMediaContainer"
		st, msg := s.status(c, now)
		all = map[string]any{"id": c.ID, "status": st, "error_message": nil}
		if msg != "" {
			all["error_message"] = msg
		}
	} else if m, ok, err := s.ownedPost(ctx, acct, id); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		typ = "ThreadsMedia"
		all = s.mediaFields(m, now)
	} else if r, m, ok, err := s.reply(ctx, acct, id, now); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		return metasim.Select(s.replyFields(m, r, now), "ThreadsMedia", p.Get("fields"), "id")
	} else {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	return metasim.SelectFlat(all, typ, p.Get("fields"), "id")
}

func (m thMedia) permalink() string {
	return "https://www.threads.net/@" + m.Username + "/post/" + m.Shortcode
}

func (m thMedia) fields() map[string]any {
	return map[string]any{
		"id": m.ID, "media_product_type": "THREADS", "media_type": "VIDEO", "media_url": nil,
		"permalink": m.permalink(), "owner": map[string]string{"id": m.Account}, "username": m.Username,
		"text": m.Text, "timestamp": metasim.Timestamp(m.Timestamp), "shortcode": m.Shortcode,
		"thumbnail_url": nil, "is_quote_post": false, "has_replies": false,
	}
}

// posts reads the profile's posts, oldest first.
func (s *thSim) posts(ctx context.Context, account string) ([]thMedia, error) {
	return sim.ListJSON[thMedia](ctx, s.cfg.State, thKey(thMediaKind, ""), account)
}

// list is GET /{threads-user-id}/threads, newest first, with since/until (Unix seconds),
// limit and an "after" cursor.
func (s *thSim) list(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	if userID != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, userID))
	}
	var since, until int64
	var err error
	if v := p.Get("since"); v != "" {
		// Threads also takes strtotime() dates; the simulator takes Unix timestamps only.
		if since, err = strconv.ParseInt(v, 10, 64); err != nil || since < 1688540400 {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param since must be a Unix timestamp no earlier than 1688540400")
		}
	}
	if v := p.Get("until"); v != "" {
		if until, err = strconv.ParseInt(v, 10, 64); err != nil || (since != 0 && until <= since) {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param until must be a Unix timestamp after since")
		}
	}
	start, limit, gerr := metasim.Paging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	all, err := s.posts(ctx, acct.ID)
	if err != nil {
		return nil, metasim.Internal()
	}
	var list []thMedia
	for i := len(all) - 1; i >= 0; i-- {
		ts := all[i].Timestamp.Unix()
		if (since != 0 && ts < since) || (until != 0 && ts > until) {
			continue
		}
		list = append(list, all[i])
	}
	return metasim.Page(list, start, limit, metasim.Next(s.cfg.BaseURL, "/"+userID+"/threads", p), func(m thMedia) (map[string]any, *metasim.Error) {
		return metasim.SelectFlat(s.mediaFields(m, now), "ThreadsMedia", p.Get("fields"), "id")
	})
}

// limit is GET /{threads-user-id}/threads_publishing_limit.
func (s *thSim) limit(ctx context.Context, acct sim.Account, userID string, p url.Values) (any, *metasim.Error) {
	if userID != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, userID))
	}
	now := s.cfg.Now()
	published, _, _, err := sim.Load[[]time.Time](ctx, s.cfg.State, thKey(thPublishedKind, acct.ID))
	if err != nil {
		return nil, metasim.Internal()
	}
	replied, _, _, err := sim.Load[[]time.Time](ctx, s.cfg.State, thKey(thRepliedKind, acct.ID))
	if err != nil {
		return nil, metasim.Internal()
	}
	usage, replyUsage := len(metasim.Prune(published, now)), len(metasim.Prune(replied, now))
	window := int(thWindow / time.Second)
	all := map[string]any{
		"quota_usage":       usage,
		"config":            map[string]int{"quota_total": s.caps.PostsPerDay, "quota_duration": window},
		"reply_quota_usage": replyUsage,
		"reply_config":      map[string]int{"quota_total": thReplyQuota, "quota_duration": window},
	}
	row, gerr := metasim.SelectFlat(all, "ThreadsPublishingLimit", p.Get("fields"), "quota_usage")
	if gerr != nil {
		return nil, gerr
	}
	return map[string]any{"data": []any{row}}, nil
}

// thUsername is the account's Threads username (its id when the account has none).
func thUsername(a sim.Account) string {
	if a.Username != "" {
		return a.Username
	}
	return a.ID
}

func thShortcode(mediaID string) string {
	sum := sha256.Sum256([]byte("reelay-sim-threads|" + mediaID))
	return "C" + base64.RawURLEncoding.EncodeToString(sum[:])[:10]
}
