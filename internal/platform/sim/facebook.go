package sim

// Facebook Pages Reels simulator (graph.facebook.com and rupload.facebook.com). Sources:
// developers.facebook.com/docs/video-api/guides/reels-publishing (start, upload, status,
// resume, finish, error codes, video specifications, the 30 reels a day limit), the Graph
// API error-handling guide, and a live status answer quoted in fbsamples/reels_publishing_apis
// issue 47 (which spells bytes_transferred as the API does; the guide writes
// "bytes_transfered").
//
// What it reproduces:
//   - Graph paths below the simulator's base URL with an optional version segment; the Page
//     access token as "Authorization: Bearer|OAuth T" or an access_token parameter;
//   - POST /{page-id}/video_reels upload_phase=start → {video_id, upload_url}, the upload URL
//     being the simulator's own: {base}/video-upload/{version}/{video_id};
//   - POST {upload_url} with "Authorization: OAuth T", "offset" and "file_size" headers and
//     the bytes from offset to the end of the file as the body, streamed to a temporary file
//     while hashing. A broken body keeps the bytes that arrived, so an upload resumes at the
//     offset the status reports (uploading_phase.bytes_transferred); a wrong offset is
//     OffsetInvalidError (412), a body of the wrong length PartialRequestError, as
//     {"debug_info":{"retriable","type","message"}};
//   - GET /{video-id}?fields=status → status.video_status (uploading, processing, ready,
//     error, expired), uploading_phase (with bytes_transferred), processing_phase,
//     publishing_phase (publish_status, publish_time), processing_progress;
//   - processing after the account's processing time, checking the reels specifications:
//     MP4, 3 to 90 seconds, 9:16, at least 540x960 (the frame rate is not checked: the
//     prober does not read it); a refusal shows in processing_phase.error.message with Meta's
//     words, and a finish after it answers code 6000 with the error subcode (1363040,
//     1363127, 1363128);
//   - POST /{page-id}/video_reels upload_phase=finish, video_id, video_state (PUBLISHED, DRAFT,
//     SCHEDULED with scheduled_publish_time), description, title → {"success":true}; the reel
//     is published once it is processed; 30 PUBLISHED or SCHEDULED reels per Page per rolling
//     24 hours;
//   - GET /{page-id}/video_reels; GET /me (the Page) with id, name, username, category, link,
//     picture;
//   - the published reels' insights and comments, and the Page's replies
//     (facebook_audience.go).
//
// Answers Meta does not document are the simulator's own and say so in the code: a second
// finish, a finish before the upload is complete, the spent daily limit, an unknown video on
// the upload host, and a bad token on the upload host (answered with Graph's error object).
// Hosted-file uploads (a file_url header) are refused: reelay uploads the bytes.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"image"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
)

const (
	fbDefaultProcessing = 5 * time.Second
	// fbSessionLifetime is how long an upload session waits for its bytes before it expires.
	// Meta documents expiry (video_status "expired") but not the delay: the day is the
	// simulator's choice.
	fbSessionLifetime = 24 * time.Hour
	fbWindow          = 24 * time.Hour
	fbMinWidth        = 540
	fbMinHeight       = 960
	fbVersion         = "v26.0" // of upload URLs handed out for unversioned start requests
)

// Error subcodes of the reels publishing guide, with Meta's messages.
const (
	fbSubAspect     = 1363040
	fbSubResolution = 1363127
	fbSubDuration   = 1363128
)

var fbRefusals = map[int]string{
	fbSubAspect:     "The video you tried to upload has an aspect ratio that isn't supported on Facebook. Aspect ratios for videos need to be between 16x9 and 9x16. Please try uploading a video in a supported aspect ratio.",
	fbSubResolution: "The video you tried to upload has resolution that isn't supported on Facebook for this product. Please try uploading a video with a supported resolution",
	fbSubDuration:   "The video you tried to upload has a duration that isn't supported on Facebook for this product. Please try uploading a video with a supported duration.",
}

// fbProcessingFailed is the message of a video the account's reject behavior refuses (the
// guide's ProcessingFailedError).
const fbProcessingFailed = "Request processing failed"

type fbVideo struct {
	id      string
	page    string
	created time.Time

	size      int64 // declared file_size; 0 until the first upload request
	received  int64
	hash      hash.Hash
	file      *os.File // the bytes so far; nil before the first byte and once complete
	uploading bool     // an upload request is streaming
	complete  bool
	sha       string

	uploaded time.Time // the upload completed
	ready    time.Time // processing ends
	errSub   int       // refusal subcode; 0 = accepted
	errMsg   string    // refusal message
	length   float64   // seconds
	finishd  bool
	state    string // PUBLISHED, DRAFT or SCHEDULED
	desc     string
	title    string
	at       time.Time // finish time, or the scheduled time
	done     bool      // published and recorded
}

type fbSim struct {
	cfg    Config
	prefix string
	caps   platform.Capabilities
	png    []byte

	mu        sync.Mutex
	seq       uint64
	videos    map[string]*fbVideo
	order     []string
	published map[string][]time.Time // PUBLISHED and SCHEDULED finishes per Page
	comments  map[string]*fbComment  // comments the Pages posted, by id
	ownOrder  []string               // their ids, oldest first
}

// NewFacebook returns the simulator of Facebook Pages Reels publishing.
func NewFacebook(cfg Config) http.Handler {
	cfg.Normalize()
	caps, _ := platform.CapabilitiesOf(platform.Facebook)
	s := &fbSim{
		cfg:       cfg,
		caps:      caps,
		videos:    map[string]*fbVideo{},
		published: map[string][]time.Time{},
		comments:  map[string]*fbComment{},
		seq:       uint64(cfg.Now().UnixMilli()%1_000_000_000) * 1000,
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil {
		s.prefix = u.Path
	}
	img := image.NewGray(image.Rect(0, 0, 50, 50))
	for i := range img.Pix {
		img.Pix[i] = 0xc8
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	s.png = b.Bytes()
	return s
}

func (s *fbSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := metaSegments(s.prefix, r.URL.Path)
	if len(segs) > 0 && segs[0] == "video-upload" {
		s.upload(w, r, segs[1:])
		return
	}
	if len(segs) == 2 && segs[0] == "_static" && segs[1] == "page-picture.png" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(s.png)
		return
	}
	acct, params, id, edge, ok := metaRequest(s.cfg, w, r, segs, 32)
	if !ok {
		return
	}
	version := fbVersion
	if v := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, s.prefix), "/"), "/")[0]; igVersionSegment.MatchString(v) {
		version = v
	}
	var res any
	var gerr *igError
	switch {
	case r.Method == http.MethodPost && edge == "video_reels":
		res, gerr = s.reels(acct, id, params, version)
	case r.Method == http.MethodGet && edge == "video_reels":
		res, gerr = s.list(acct, id, params)
	case r.Method == http.MethodGet && edge == "accounts" && segs[0] == "me":
		res = s.accounts(acct, igToken(r, params))
	case r.Method == http.MethodGet && edge == "video_insights":
		res, gerr = s.insights(acct, id, params)
	case r.Method == http.MethodGet && edge == "comments":
		res, gerr = s.listComments(acct, id, params)
	case r.Method == http.MethodPost && edge == "comments":
		res, gerr = s.comment(acct, id, params)
	case r.Method == http.MethodGet && edge == "":
		res, gerr = s.node(acct, id, params)
	default:
		gerr = metaNoRoute(r.Method, id, edge, "Page")
	}
	metaAnswer(w, res, gerr)
}

// reels is POST /{page-id}/video_reels: the start and finish phases.
func (s *fbSim) reels(acct Account, page string, p url.Values, version string) (any, *igError) {
	if page != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodPost, page))
	}
	switch ph := p.Get("upload_phase"); ph {
	case "start":
		return s.start(acct, version), nil
	case "finish":
		return s.finish(acct, p)
	case "":
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Missing parameter: upload_phase")
	default:
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param upload_phase must be one of {start, finish}, got %q", ph))
	}
}

func (s *fbSim) start(acct Account, version string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	v := &fbVideo{id: strconv.FormatUint(1_200_000_000_000_000+s.seq, 10), page: acct.ID, created: s.cfg.Now()}
	s.videos[v.id] = v
	s.order = append(s.order, v.id)
	return map[string]string{"video_id": v.id, "upload_url": s.cfg.BaseURL + "/video-upload/" + version + "/" + v.id}
}

// fbUploadError is an error of the upload host.
func fbUploadError(w http.ResponseWriter, status int, typ, msg string, retriable bool) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"debug_info": map[string]any{"retriable": retriable, "type": typ, "message": msg}})
	_, _ = w.Write(b)
}

// upload is POST /video-upload/[{version}/]{video-id} on the upload host.
func (s *fbSim) upload(w http.ResponseWriter, r *http.Request, rest []string) {
	if len(rest) == 2 && igVersionSegment.MatchString(rest[0]) {
		rest = rest[1:]
	}
	if len(rest) != 1 || rest[0] == "" {
		fbUploadError(w, http.StatusNotFound, "NotFoundError", "Unknown upload path", false)
		return
	}
	if r.Method != http.MethodPost {
		fbUploadError(w, http.StatusMethodNotAllowed, "MethodNotAllowedError", "Only POST is supported", false)
		return
	}
	// The upload host reads the token from the Authorization header only, as "OAuth T".
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "OAuth") || strings.TrimSpace(token) == "" {
		igWrite(w, igErr(http.StatusBadRequest, 104, 0, "An access token is required to request this resource."))
		return
	}
	acct, ok := s.cfg.Accounts.Resolve(r.Context(), strings.TrimSpace(token))
	if !ok {
		igWrite(w, igErr(http.StatusBadRequest, 190, 0, "Invalid OAuth access token - Cannot parse access token"))
		return
	}
	if e := metaFault(s.cfg, acct, 32); e != nil {
		igWrite(w, e)
		return
	}
	if r.Header.Get("file_url") != "" {
		fbUploadError(w, http.StatusBadRequest, "ParameterValidationError", "Hosted-file uploads (file_url) are not supported by this simulator", false)
		return
	}
	offset, err := strconv.ParseUint(r.Header.Get("offset"), 10, 63)
	if err != nil {
		fbUploadError(w, http.StatusBadRequest, "ParameterValidationError", "HeaderValuePredicate: Header Offset not convertable to unsigned long", false)
		return
	}
	size, err := strconv.ParseUint(r.Header.Get("file_size"), 10, 63)
	if err != nil || size == 0 {
		fbUploadError(w, http.StatusBadRequest, "ParameterValidationError", "HeaderValuePredicate: Header File_size not convertable to unsigned long", false)
		return
	}
	if int64(size) > s.caps.MaxVideoBytes {
		fbUploadError(w, http.StatusBadRequest, "ParameterValidationError", fmt.Sprintf("file_size %d is larger than the %d bytes allowed", size, s.caps.MaxVideoBytes), false)
		return
	}

	now := s.cfg.Now()
	s.mu.Lock()
	v, ok := s.videos[rest[0]]
	switch {
	case !ok || v.page != acct.ID:
		s.mu.Unlock()
		fbUploadError(w, http.StatusNotFound, "NotFoundError", "No upload session for video "+rest[0], false)
		return
	case !v.complete && now.Sub(v.created) >= fbSessionLifetime:
		s.mu.Unlock()
		fbUploadError(w, http.StatusBadRequest, "ExpiredSessionError", "The upload session has expired: start a new one", false)
		return
	case v.size != 0 && int64(size) != v.size:
		s.mu.Unlock()
		fbUploadError(w, http.StatusBadRequest, "ParameterValidationError", fmt.Sprintf("file_size %d differs from the %d bytes of this upload", size, v.size), false)
		return
	case v.complete && int64(offset) == v.size && r.ContentLength == 0:
		s.mu.Unlock()
		metaJSON(w, map[string]bool{"success": true})
		return
	case v.uploading || int64(offset) != v.received || v.complete:
		s.mu.Unlock()
		fbUploadError(w, http.StatusPreconditionFailed, "OffsetInvalidError", "Request starting offset is invalid", true)
		return
	case r.ContentLength >= 0 && r.ContentLength != int64(size)-int64(offset):
		s.mu.Unlock()
		fbUploadError(w, http.StatusBadRequest, "PartialRequestError", "Partial request (did not match length of file)", true)
		return
	}
	if v.file == nil {
		f, err := os.CreateTemp("", "reelay-sim-facebook-*")
		if err != nil {
			s.mu.Unlock()
			fbUploadError(w, http.StatusInternalServerError, "ProcessingFailedError", "Request processing failed", true)
			return
		}
		v.file, v.hash, v.size = f, sha256.New(), int64(size)
	}
	v.uploading = true
	f, h, at, want := v.file, v.hash, v.received, v.size-v.received
	s.mu.Unlock()

	// Stream the body to the file at the offset, hashing as it goes; the bytes written count
	// even if the body breaks, which is what makes the upload resumable.
	_, _ = fbCopy(f, h, at, io.LimitReader(r.Body, want), func(m int64) {
		s.mu.Lock()
		v.received += m // the status shows the bytes as they arrive
		s.mu.Unlock()
	})

	s.mu.Lock()
	v.uploading = false
	if v.received < v.size {
		s.mu.Unlock()
		fbUploadError(w, http.StatusBadRequest, "PartialRequestError", "Partial request (did not match length of file)", true)
		return
	}
	s.completeLocked(v, acct)
	s.mu.Unlock()
	metaJSON(w, map[string]bool{"success": true})
}

// fbCopy writes r to f from offset at, through h, telling each write to wrote, and answers
// the bytes written.
func fbCopy(f *os.File, h hash.Hash, at int64, r io.Reader, wrote func(int64)) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := r.Read(buf)
		if m > 0 {
			if _, werr := f.WriteAt(buf[:m], at+n); werr != nil {
				return n, werr
			}
			h.Write(buf[:m])
			n += int64(m)
			wrote(int64(m))
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// completeLocked records a complete upload and checks the video. The caller holds s.mu.
func (s *fbSim) completeLocked(v *fbVideo, acct Account) {
	v.complete = true
	v.sha = hex.EncodeToString(v.hash.Sum(nil))
	s.cfg.Recorder.RecordUpload(Upload{Account: v.page, Bytes: v.size, SHA256: v.sha})
	v.errSub, v.errMsg, v.length = s.check(v.file, v.size)
	if v.errMsg == "" && acct.Behavior.Fail == FailReject {
		v.errMsg = fbProcessingFailed
	}
	processing := fbDefaultProcessing
	if acct.Behavior.ProcessingMS >= 0 {
		processing = time.Duration(acct.Behavior.ProcessingMS) * time.Millisecond
	}
	v.uploaded = s.cfg.Now()
	v.ready = v.uploaded.Add(processing)
	v.file.Close()
	os.Remove(v.file.Name())
	v.file, v.hash = nil, nil
}

// check applies the reels specifications and answers the refusal's subcode and message.
func (s *fbSim) check(r io.ReaderAt, size int64) (int, string, float64) {
	info, err := media.Probe(r, size)
	if err != nil || !slices.Contains(s.caps.VideoFormats, info.Kind.Name) || info.Width <= 0 || info.Height <= 0 {
		return 0, fbProcessingFailed, 0
	}
	d := info.Duration.Seconds()
	switch {
	case d < s.caps.MinDurationSeconds || d > s.caps.MaxDurationSeconds:
		return fbSubDuration, fbRefusals[fbSubDuration], d
	case math.Abs(float64(info.Width)/float64(info.Height)-9.0/16.0) > 0.01:
		return fbSubAspect, fbRefusals[fbSubAspect], d
	case info.Width < fbMinWidth || info.Height < fbMinHeight:
		return fbSubResolution, fbRefusals[fbSubResolution], d
	}
	return 0, "", d
}

// settleLocked publishes a finished, processed reel once (recording it). The caller holds s.mu.
func (s *fbSim) settleLocked(v *fbVideo, now time.Time) {
	if v.done || !v.finishd || v.errMsg != "" || now.Before(v.ready) || v.state == "DRAFT" || now.Before(v.at) {
		return
	}
	v.done = true
	s.cfg.Recorder.RecordPublished(Published{Account: v.page, ID: v.id, URL: fbReelURL(v.id), SHA256: v.sha, Text: v.desc})
}

func fbReelURL(id string) string { return "https://www.facebook.com/reel/" + id }

// statusLocked is a video's status field at now. The caller holds s.mu.
func (s *fbSim) statusLocked(v *fbVideo, now time.Time) map[string]any {
	phase := func(st string) map[string]any { return map[string]any{"status": st} }
	failed := func(msg string) map[string]any {
		return map[string]any{"status": "error", "error": map[string]any{"message": msg}}
	}
	up := phase("not_started")
	switch {
	case v.complete:
		up = phase("complete")
	case v.received > 0 || v.uploading:
		up = phase("in_progress")
	}
	up["bytes_transferred"] = v.received
	proc, pub := phase("not_started"), phase("not_started")
	videoStatus, progress := "uploading", 0
	switch {
	case !v.complete && now.Sub(v.created) >= fbSessionLifetime:
		videoStatus = "expired"
	case !v.complete:
	case now.Before(v.ready):
		videoStatus = "processing"
		proc = phase("in_progress")
		if total := v.ready.Sub(v.uploaded); total > 0 {
			progress = int(100 * (1 - float64(v.ready.Sub(now))/float64(total)))
		}
	case v.errMsg != "":
		videoStatus, progress = "error", 100
		proc = failed(v.errMsg)
	default:
		videoStatus, progress = "ready", 100
		proc = phase("complete")
	}
	if v.finishd {
		switch {
		case v.errMsg != "" && !now.Before(v.ready):
			pub = failed(v.errMsg)
		case v.done:
			pub = phase("complete")
			pub["publish_status"] = "published"
			pub["publish_time"] = v.at.Unix()
		case v.state == "DRAFT" && !now.Before(v.ready):
			pub = phase("complete")
			pub["publish_status"] = "draft"
		case v.state == "SCHEDULED" && !now.Before(v.ready):
			pub = phase("complete")
			pub["publish_status"] = "scheduled"
			pub["publish_time"] = v.at.Unix()
		default:
			pub = phase("in_progress")
		}
	}
	return map[string]any{
		"video_status": videoStatus, "processing_progress": progress,
		"uploading_phase": up, "processing_phase": proc, "publishing_phase": pub,
	}
}

// finish is POST /{page-id}/video_reels upload_phase=finish.
func (s *fbSim) finish(acct Account, p url.Values) (any, *igError) {
	var missing []string
	for _, k := range []string{"video_id", "video_state"} {
		if p.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Missing parameter: "+strings.Join(missing, ", "))
	}
	state := p.Get("video_state")
	now := s.cfg.Now()
	at := now
	switch state {
	case "PUBLISHED", "DRAFT":
	case "SCHEDULED":
		sec, err := strconv.ParseInt(p.Get("scheduled_publish_time"), 10, 64)
		if err != nil || !time.Unix(sec, 0).After(now) {
			return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) Param scheduled_publish_time must be a Unix time in the future when video_state is SCHEDULED")
		}
		at = time.Unix(sec, 0)
	default:
		return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param video_state must be one of {PUBLISHED, DRAFT, SCHEDULED}, got %q", state))
	}
	desc, title := p.Get("description"), p.Get("title")
	for _, f := range []struct{ name, v string }{{"description", desc}, {"title", title}} {
		if lim := s.caps.Text[f.name]; !lim.Check(f.v) {
			return nil, igErr(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param %s must be at most %d characters long", f.name, lim.Max))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.videos[p.Get("video_id")]
	if !ok || v.page != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodPost, p.Get("video_id")))
	}
	switch {
	case v.finishd:
		// Meta does not document this answer; a reel is not finished twice.
		return nil, igErr(http.StatusBadRequest, 100, 0, "(#100) This video's upload session is already finished")
	case !v.complete:
		return nil, igErr(http.StatusBadRequest, 6000, 0, "Video Upload Is Missing: the video's bytes have not all been uploaded").user(
			"Problem with file", "There was a problem uploading your video file. Please try again.")
	case v.errMsg != "" && !now.Before(v.ready):
		return nil, igErr(http.StatusBadRequest, 6000, v.errSub, v.errMsg).user("Problem with video", v.errMsg)
	}
	if state != "DRAFT" {
		recent := igPrune(s.published[acct.ID], now)
		if len(recent) >= s.caps.PostsPerDay {
			s.published[acct.ID] = recent
			// The limit is documented, the answer is not: this wording is the simulator's.
			return nil, igErr(http.StatusBadRequest, 9, 0, fmt.Sprintf("(#9) The Page has published the %d reels allowed through the API in 24 hours", s.caps.PostsPerDay))
		}
		s.published[acct.ID] = append(recent, now)
	}
	v.finishd, v.state, v.desc, v.title, v.at = true, state, desc, title, at
	s.settleLocked(v, now)
	return map[string]bool{"success": true}, nil
}

// node is GET /{id}: the Page or one of its videos.
func (s *fbSim) node(acct Account, id string, p url.Values) (any, *igError) {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == acct.ID {
		all := map[string]any{"id": acct.ID, "name": fbPageName(acct), "username": nil, "category": "Video Creator",
			"link": "https://www.facebook.com/" + acct.ID,
			"picture": map[string]any{"data": map[string]any{"height": 50, "width": 50, "is_silhouette": true,
				"url": s.cfg.BaseURL + "/_static/page-picture.png"}},
		}
		if acct.Username != "" {
			all["username"] = acct.Username
		}
		return igSelect(all, "Page", p.Get("fields"), "id,name")
	}
	if c, thread, ok := s.commentLocked(acct, id, now); ok {
		return metaSelect(s.commentFieldsLocked(c, thread), "Comment", p.Get("fields"), "created_time,from,message,id")
	}
	v, ok := s.videos[id]
	if !ok || v.page != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, id))
	}
	s.settleLocked(v, now)
	return igSelect(s.fieldsLocked(v, now), "Video", p.Get("fields"), "id")
}

func (s *fbSim) fieldsLocked(v *fbVideo, now time.Time) map[string]any {
	all := map[string]any{
		"id": v.id, "status": s.statusLocked(v, now), "description": nil, "title": nil,
		"created_time": metaTimestamp(v.created), "updated_time": metaTimestamp(fbLater(v.created, v.at)),
		"permalink_url": fbReelURL(v.id), "published": v.done, "length": nil,
	}
	if v.desc != "" {
		all["description"] = v.desc
	}
	if v.title != "" {
		all["title"] = v.title
	}
	if v.complete {
		all["length"] = v.length
	}
	return all
}

// list is GET /{page-id}/video_reels: the Page's finished reels, newest first.
func (s *fbSim) list(acct Account, page string, p url.Values) (any, *igError) {
	if page != acct.ID {
		return nil, igErr(http.StatusBadRequest, 100, 33, igUnsupported(http.MethodGet, page))
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	data := []any{}
	for i := len(s.order) - 1; i >= 0; i-- {
		v := s.videos[s.order[i]]
		if v.page != acct.ID || !v.finishd {
			continue
		}
		s.settleLocked(v, now)
		row, gerr := igSelect(s.fieldsLocked(v, now), "Video", p.Get("fields"), "id,description,updated_time")
		if gerr != nil {
			return nil, gerr
		}
		data = append(data, row)
	}
	return map[string]any{"data": data}, nil
}

func fbLater(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// accounts is GET /me/accounts: the Pages the token's user manages, each with its Page token.
// A simulated account is one user managing one Page of the same id, and the Page token is the
// token the user presented (the simulator's tokens name an account, not a kind of token), so a
// consent in the sandbox ends with a Page channel whose token the simulator accepts.
func (s *fbSim) accounts(acct Account, token string) any {
	return map[string]any{
		"data":   []any{map[string]any{"id": acct.ID, "name": fbPageName(acct), "access_token": token, "category": "Video Creator"}},
		"paging": map[string]any{"cursors": map[string]any{"before": "MA==", "after": "MA=="}},
	}
}

// fbPageName is the simulated Page's name: the account's username, else one made of its id.
func fbPageName(acct Account) string {
	if acct.Username != "" {
		return acct.Username
	}
	return "Page " + acct.ID
}
