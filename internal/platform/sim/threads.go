package sim

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
// in threads_audience.go.
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
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
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
)

var thReplyControls = []string{"everyone", "accounts_you_follow", "mentioned_only", "parent_post_author_only", "followers_only"}

type thContainer struct {
	id           string
	account      string
	text         string
	replyControl string
	created      time.Time
	ready        time.Time     // FINISHED (or ERROR for checks) not before this instant
	done         chan struct{} // closed when the download and the checks are over
	errMsg       string        // error_message once done; "" = the video passed
	errAtOnce    bool          // the error shows at once (download failures)
	sha          string
	mediaID      string // set when published
	replyTo      string // the post or reply a TEXT reply container answers
}

type thMedia struct {
	id        string
	account   string
	username  string
	text      string
	shortcode string
	timestamp time.Time
}

type thSim struct {
	cfg    Config
	prefix string
	caps   platform.Capabilities

	mu         sync.Mutex
	seq        uint64
	containers map[string]*thContainer
	media      map[string]*thMedia
	order      []string               // media ids, oldest first
	published  map[string][]time.Time // publishes per account
	replies    map[string]*thReply    // replies the accounts published, by id
	replyOrder []string               // reply ids, oldest first
	replied    map[string][]time.Time // reply publishes per account
}

// NewThreads returns the simulator of the Threads API (video posts).
func NewThreads(cfg Config) http.Handler {
	cfg.Normalize()
	caps, _ := platform.CapabilitiesOf(platform.Threads)
	s := &thSim{
		cfg:        cfg,
		caps:       caps,
		containers: map[string]*thContainer{},
		media:      map[string]*thMedia{},
		published:  map[string][]time.Time{},
		replies:    map[string]*thReply{},
		replied:    map[string][]time.Time{},
		// Ids start from the clock so that a restarted simulator does not hand out a previous
		// run's ids again.
		seq: uint64(cfg.Now().UnixMilli()%1_000_000_000) * 1000,
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		s.prefix = u.Path
	}
	return s
}

func (s *thSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := metaSegments(s.prefix, r.URL.Path)
	acct, params, id, edge, ok := metaRequest(s.cfg, w, r, segs, 17)
	if !ok {
		return
	}
	var res any
	var gerr *igError
	switch {
	case r.Method == http.MethodPost && edge == "threads":
		res, gerr = s.create(acct, id, params)
	case r.Method == http.MethodPost && edge == "threads_publish":
		res, gerr = s.publish(acct, id, params)
	case r.Method == http.MethodGet && edge == "threads":
		res, gerr = s.list(acct, id, params)
	case r.Method == http.MethodGet && edge == "threads_publishing_limit":
		res, gerr = s.limit(acct, id, params)
	case r.Method == http.MethodGet && edge == "insights":
		res, gerr = s.insights(acct, id, params)
	case r.Method == http.MethodGet && (edge == "replies" || edge == "conversation"):
		res, gerr = s.conversation(acct, id, params, edge == "conversation")
	case r.Method == http.MethodGet && edge == "":
		res, gerr = s.node(acct, id, params)
	default:
		gerr = metaNoRoute(r.Method, id, edge, "ThreadsUser")
	}
	metaAnswer(w, res, gerr)
}

// create is POST /{threads-user-id}/threads.
func (s *thSim) create(acct Account, userID string, p url.Values) (any, *igError) {
	if userID != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodPost, userID))
	}
	switch mt := p.Get("media_type"); mt {
	case "VIDEO":
	case "TEXT":
		return s.createReply(acct, p)
	case "":
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The parameter media_type is required")
	case "IMAGE", "CAROUSEL":
		// Reelay posts video only; the other kinds are refused rather than half-simulated.
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) media_type %s is not supported by this simulator: it publishes VIDEO posts only", mt))
	default:
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}, got %q", mt))
	}
	if v := p.Get("is_carousel_item"); v == "true" || v == "1" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Carousel items are not supported by this simulator")
	}
	if p.Get("reply_to_id") != "" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Video replies are not supported by this simulator: replies are TEXT")
	}
	videoURL := p.Get("video_url")
	if videoURL == "" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The parameter video_url is required for media_type VIDEO")
	}
	if !igHTTPURL(videoURL) {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Param video_url must be a valid http or https URL")
	}
	rc := p.Get("reply_control")
	if rc != "" && !slices.Contains(thReplyControls, rc) {
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param reply_control must be one of %v", thReplyControls))
	}
	text := p.Get("text")
	if limit := s.caps.Text["text"]; !limit.Check(text) {
		// Threads counts characters, emoji as their UTF-8 bytes; the wording is the simulator's.
		return nil, igErr(http.StatusBadRequest, 100, 0,
			fmt.Sprintf("(#100) Param text is too long: %d of at most %d characters (emoji count as their UTF-8 bytes)", limit.Count(text), limit.Max))
	}

	now := s.cfg.Now()
	processing := thDefaultProcessing
	if acct.Behavior.ProcessingMS >= 0 {
		processing = time.Duration(acct.Behavior.ProcessingMS) * time.Millisecond
	}
	s.mu.Lock()
	c := &thContainer{
		id:           s.nextID(17890000000000000),
		account:      acct.ID,
		text:         text,
		replyControl: rc,
		created:      now,
		ready:        now.Add(processing),
		done:         make(chan struct{}),
	}
	s.containers[c.id] = c
	s.mu.Unlock()

	// Meta answers with the container id at once and fetches the video in the background.
	go s.fetch(c, videoURL, acct.Behavior.Fail == FailReject)
	return map[string]string{"id": c.id}, nil
}

// fetch downloads the container's video as Meta does, then checks it.
func (s *thSim) fetch(c *thContainer, videoURL string, reject bool) {
	msg, atOnce, sum := s.download(c.account, videoURL)
	if msg == "" && reject {
		msg = thErrProcessing
	}
	s.mu.Lock()
	c.errMsg, c.errAtOnce, c.sha = msg, atOnce, sum
	s.mu.Unlock()
	close(c.done)
}

// download streams the video to a temporary file while hashing it, records the upload and
// checks the file. It answers the ERROR message ("" when the video is acceptable), whether it
// shows at once, and the hash of what arrived.
func (s *thSim) download(account, videoURL string) (msg string, atOnce bool, sum string) {
	ctx, cancel := context.WithTimeout(context.Background(), thFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, videoURL, nil)
	if err != nil {
		return thErrDownload, true, ""
	}
	resp, err := s.cfg.PullClient.Do(req)
	if err != nil {
		return thErrDownload, true, ""
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return thErrDownload, true, ""
	}
	f, err := os.CreateTemp("", "reelay-sim-threads-*")
	if err != nil {
		return thErrDownload, true, ""
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	h := sha256.New()
	limit := s.caps.MaxVideoBytes
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return thErrDownload, true, ""
	}
	if n > limit {
		return thErrProcessing, false, "" // the simulator stopped reading at the cap
	}
	sum = hex.EncodeToString(h.Sum(nil))
	s.cfg.Recorder.RecordUpload(Upload{Account: account, Bytes: n, SHA256: sum})
	return s.check(f, n), false, sum
}

// check applies the video specifications: MOV or MP4, H.264 or HEVC, AAC audio, longer than
// 0 and at most 5 minutes, at most 1920 pixels wide, aspect ratio 0.01:1 to 10:1. The frame
// rate (23-60 fps) is not checked: the prober does not read it.
func (s *thSim) check(r io.ReaderAt, size int64) string {
	info, err := media.Probe(r, size)
	if err != nil || !slices.Contains(s.caps.VideoFormats, info.Kind.Name) {
		return thErrProcessing
	}
	if info.VideoCodec != "h264" && info.VideoCodec != "hevc" {
		return thErrProcessing
	}
	if info.AudioCodec != "" && info.AudioCodec != "aac" {
		return thErrProcessingAudio
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

// status answers a container's status and error_message at now. The caller holds s.mu.
func (s *thSim) status(c *thContainer, now time.Time) (status, errMsg string) {
	fetched := false
	select {
	case <-c.done:
		fetched = true
	default:
	}
	switch {
	case c.mediaID != "":
		return thStPublished, ""
	case fetched && c.errMsg != "" && (c.errAtOnce || !now.Before(c.ready)):
		return thStError, c.errMsg
	case now.Sub(c.created) >= thContainerLifetime:
		return thStExpired, ""
	case !fetched || now.Before(c.ready):
		return thStInProgress, ""
	default:
		return thStFinished, ""
	}
}

// awaitFetch waits (a bounded time) for the download of a container whose processing time is
// over, so that its status depends on the clock only.
func (s *thSim) awaitFetch(id string) {
	s.mu.Lock()
	c, ok := s.containers[id]
	s.mu.Unlock()
	if !ok || s.cfg.Now().Before(c.ready) {
		return
	}
	t := time.NewTimer(thFetchWait)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
}

// publish is POST /{threads-user-id}/threads_publish.
func (s *thSim) publish(acct Account, userID string, p url.Values) (any, *igError) {
	if userID != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodPost, userID))
	}
	cid := p.Get("creation_id")
	if cid == "" {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The parameter creation_id is required")
	}
	s.awaitFetch(cid)
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.containers[cid]
	if !ok || c.account != acct.ID {
		return nil, igErr(http.StatusBadRequest, 24, 0, fmt.Sprintf("The media with id %s cannot be found", cid)).user("Media not found",
			"The media with the given id cannot be found.")
	}
	switch st, _ := s.status(c, now); st {
	case thStPublished:
		// Meta does not document this answer; the container is not published twice.
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The media container has already been published")
	case thStExpired:
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) The media container has expired: it was not published within 24 hours")
	case thStInProgress, thStError:
		return nil, igErr(http.StatusBadRequest, 9007, 0, "Media ID is not available").user(
			"Media Not Ready For Publishing", "The media is not ready for publishing, please wait for a moment")
	}
	if c.replyTo != "" {
		return s.publishReplyLocked(acct, c, now)
	}
	recent := igPrune(s.published[acct.ID], now)
	if len(recent) >= s.caps.PostsPerDay {
		s.published[acct.ID] = recent
		// The limit is documented, the answer is not: this wording is the simulator's.
		return nil, igErr(http.StatusBadRequest, 9, 0, "Application request limit reached").user("Maximum number of posts reached",
			fmt.Sprintf("You reached the maximum of %d posts that can be published through the API in 24 hours.", s.caps.PostsPerDay))
	}
	s.published[acct.ID] = append(recent, now)
	m := &thMedia{id: s.nextID(18000000000000000), account: acct.ID, username: thUsername(acct), text: c.text, timestamp: now}
	m.shortcode = thShortcode(m.id)
	s.media[m.id] = m
	s.order = append(s.order, m.id)
	c.mediaID = m.id
	s.cfg.Recorder.RecordPublished(Published{Account: acct.ID, ID: m.id, URL: m.permalink(), SHA256: c.sha, Text: c.text})
	return map[string]string{"id": m.id}, nil
}

// node is GET /{id}: the Threads user, one of its containers or one of its posts.
func (s *thSim) node(acct Account, id string, p url.Values) (any, *igError) {
	s.awaitFetch(id)
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var all map[string]any
	var typ string
	if id == acct.ID {
		typ = "ThreadsUser"
		// Fields the simulated account has no value for are known but left out.
		all = map[string]any{"id": acct.ID, "username": thUsername(acct), "name": thUsername(acct),
			"threads_profile_picture_url": nil, "threads_biography": nil, "is_verified": false}
	} else if c, ok := s.containers[id]; ok && c.account == acct.ID {
		typ = "ThreadsMediaContainer"
		st, msg := s.status(c, now)
		all = map[string]any{"id": c.id, "status": st, "error_message": nil}
		if msg != "" {
			all["error_message"] = msg
		}
	} else if m, ok := s.media[id]; ok && m.account == acct.ID {
		typ = "ThreadsMedia"
		all = s.mediaFieldsLocked(m, now)
	} else if r, ok := s.replyLocked(acct, id, now); ok {
		return metaSelect(s.replyFieldsLocked(r, now), "ThreadsMedia", p.Get("fields"), "id")
	} else {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, id))
	}
	return igSelect(all, typ, p.Get("fields"), "id")
}

func (m *thMedia) permalink() string {
	return "https://www.threads.net/@" + m.username + "/post/" + m.shortcode
}

func (m *thMedia) fields() map[string]any {
	return map[string]any{
		"id": m.id, "media_product_type": "THREADS", "media_type": "VIDEO", "media_url": nil,
		"permalink": m.permalink(), "owner": map[string]string{"id": m.account}, "username": m.username,
		"text": m.text, "timestamp": metaTimestamp(m.timestamp), "shortcode": m.shortcode,
		"thumbnail_url": nil, "is_quote_post": false, "has_replies": false,
	}
}

// list is GET /{threads-user-id}/threads, newest first, with since/until (Unix seconds),
// limit and an "after" cursor.
func (s *thSim) list(acct Account, userID string, p url.Values) (any, *igError) {
	if userID != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, userID))
	}
	var since, until int64
	var err error
	if v := p.Get("since"); v != "" {
		// Threads also takes strtotime() dates; the simulator takes Unix timestamps only.
		if since, err = strconv.ParseInt(v, 10, 64); err != nil || since < 1688540400 {
			return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Param since must be a Unix timestamp no earlier than 1688540400")
		}
	}
	if v := p.Get("until"); v != "" {
		if until, err = strconv.ParseInt(v, 10, 64); err != nil || (since != 0 && until <= since) {
			return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Param until must be a Unix timestamp after since")
		}
	}
	start, limit, gerr := metaPaging(p)
	if gerr != nil {
		return nil, gerr
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for i := len(s.order) - 1; i >= 0; i-- {
		m := s.media[s.order[i]]
		ts := m.timestamp.Unix()
		if m.account != acct.ID || (since != 0 && ts < since) || (until != 0 && ts > until) {
			continue
		}
		ids = append(ids, m.id)
	}
	return metaPage(ids, start, limit, metaNext(s.cfg.BaseURL, "/"+userID+"/threads", p), func(id string) (map[string]any, *igError) {
		return igSelect(s.mediaFieldsLocked(s.media[id], now), "ThreadsMedia", p.Get("fields"), "id")
	})
}

// limit is GET /{threads-user-id}/threads_publishing_limit.
func (s *thSim) limit(acct Account, userID string, p url.Values) (any, *igError) {
	if userID != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, userID))
	}
	now := s.cfg.Now()
	s.mu.Lock()
	usage := len(igPrune(s.published[acct.ID], now))
	replyUsage := len(igPrune(s.replied[acct.ID], now))
	s.mu.Unlock()
	window := int(thWindow / time.Second)
	all := map[string]any{
		"quota_usage":       usage,
		"config":            map[string]int{"quota_total": s.caps.PostsPerDay, "quota_duration": window},
		"reply_quota_usage": replyUsage,
		"reply_config":      map[string]int{"quota_total": thReplyQuota, "quota_duration": window},
	}
	row, gerr := igSelect(all, "ThreadsPublishingLimit", p.Get("fields"), "quota_usage")
	if gerr != nil {
		return nil, gerr
	}
	return map[string]any{"data": []any{row}}, nil
}

// nextID answers a new Graph-like numeric id. The caller holds s.mu.
func (s *thSim) nextID(base uint64) string {
	s.seq++
	return strconv.FormatUint(base+s.seq, 10)
}

// thUsername is the account's Threads username (its id when the account has none).
func thUsername(a Account) string {
	if a.Username != "" {
		return a.Username
	}
	return a.ID
}

func thShortcode(mediaID string) string {
	sum := sha256.Sum256([]byte("reelay-sim-threads|" + mediaID))
	return "C" + base64.RawURLEncoding.EncodeToString(sum[:])[:10]
}
