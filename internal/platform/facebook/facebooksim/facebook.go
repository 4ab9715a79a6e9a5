// Package facebooksim is the simulator of Facebook's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package facebooksim

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
//     MP4, 3 to 90 seconds, 9:16, at least 540x960, 24 to 60 fps (the probe's average); a
//     refusal shows in processing_phase.error.message with Meta's words, and a finish after
//     it answers code 6000 with the error subcode (1363040, 1363127, 1363128, 1363129);
//   - POST /{page-id}/video_reels upload_phase=finish, video_id, video_state (PUBLISHED, DRAFT,
//     SCHEDULED with scheduled_publish_time), description, title → {"success":true}; the reel
//     is published once it is processed; 30 PUBLISHED or SCHEDULED reels per Page per rolling
//     24 hours;
//   - GET /{page-id}/video_reels; GET /me (the Page) with id, name, username, category, link,
//     picture;
//   - the published reels' insights and comments, and the Page's replies
//     (audience.go).
//
// Answers Meta does not document are the simulator's own and say so in the code: a second
// finish, a finish before the upload is complete, the spent daily limit, an unknown video on
// the upload host, and a bad token on the upload host (answered with Graph's error object).
// Hosted-file uploads (a file_url header) are refused: reelay uploads the bytes.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
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
	fbSubFrameRate  = 1363129
)

var fbRefusals = map[int]string{
	fbSubAspect:     "The video you tried to upload has an aspect ratio that isn't supported on Facebook. Aspect ratios for videos need to be between 16x9 and 9x16. Please try uploading a video in a supported aspect ratio.",
	fbSubResolution: "The video you tried to upload has resolution that isn't supported on Facebook for this product. Please try uploading a video with a supported resolution",
	fbSubDuration:   "The video you tried to upload has a duration that isn't supported on Facebook for this product. Please try uploading a video with a supported duration.",
	// The guide names 1363129 for the frame rate; no stored copy quotes its message, so this
	// one follows the wording of its siblings.
	fbSubFrameRate: "The video you tried to upload has a frame rate that isn't supported on Facebook for this product. Please try uploading a video with a supported frame rate.",
}

// fbProcessingFailed is the message of a video the account's reject behavior refuses (the
// guide's ProcessingFailedError).
const fbProcessingFailed = "Request processing failed"

// The kinds of the Facebook simulator's records.
const (
	// fbVideoKind is a reel (fbVideo), with the comments the Page posted on it, kept until
	// retention.
	fbVideoKind = "video"
	// fbUploadKind is the upload session of a reel (fbUpload), with its blobs; it ends an hour
	// after the session's lifetime.
	fbUploadKind = "upload"
	// fbPublishedKind is a Page's PUBLISHED and SCHEDULED finishes of the last 24 hours
	// ([]time.Time), for the daily limit.
	fbPublishedKind = "published"
)

func fbKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Facebook, Kind: kind, ID: id} }

type fbVideo struct {
	ID      string    `json:"id"`
	Page    string    `json:"page"`
	Created time.Time `json:"created"`

	Size     int64  `json:"size,omitempty"` // declared file_size; 0 until the first upload request
	Received int64  `json:"received,omitempty"`
	Complete bool   `json:"complete,omitempty"`
	SHA      string `json:"sha,omitempty"`
	// UploadAttempt names the upload request streaming bytes, which holds UploadLease (on the
	// wall clock) while it does: another request is refused meanwhile, and one at a process
	// that died is forgotten once the lease runs out.
	UploadAttempt string    `json:"upload_attempt,omitempty"`
	UploadLease   time.Time `json:"upload_lease,omitzero"`

	Uploaded time.Time `json:"uploaded,omitzero"` // the upload completed
	Ready    time.Time `json:"ready,omitzero"`    // processing ends
	ErrSub   int       `json:"err_sub,omitempty"` // refusal subcode; 0 = accepted
	ErrMsg   string    `json:"err_msg,omitempty"` // refusal message
	Length   float64   `json:"length,omitempty"`  // seconds
	Finished bool      `json:"finished,omitempty"`
	State    string    `json:"state,omitempty"` // PUBLISHED, DRAFT or SCHEDULED
	Desc     string    `json:"desc,omitempty"`
	Title    string    `json:"title,omitempty"`
	At       time.Time `json:"at,omitzero"`    // finish time, or the scheduled time
	Done     bool      `json:"done,omitempty"` // published and recorded
	// Comments are the comments the Page posted on the reel, oldest first.
	Comments []fbComment `json:"comments,omitempty"`
}

// uploading reports whether an upload request is streaming bytes.
func (v fbVideo) uploading() bool { return v.UploadAttempt != "" && time.Now().Before(v.UploadLease) }

// fbUpload is what arrived of a reel's bytes: the spool's state (its blobs) and the SHA-256
// state of all of them.
type fbUpload struct {
	Spool sim.SpoolState `json:"spool"`
	Hash  []byte         `json:"hash,omitempty"`
}

// fbSim simulates Facebook Pages Reels publishing. Its reels, upload sessions, comments and
// daily limits are records of Config.State; the bytes of an upload in progress blobs of
// Config.Blobs.
type fbSim struct {
	cfg    sim.Config
	prefix string
	caps   platform.Capabilities
	png    []byte
}

// fbLimits: the simulator states its platform's limits itself rather than reading reelay's description
// of the platform: it stands for the platform, and a description that drifts from the
// documentation is then caught by a refusal here.
// Sources: Facebook's Reels publishing guide (specifications, 30 API-published Reels a Page
// in 24 hours) and the Graph API's video fields.
var fbLimits = platform.Capabilities{
	MaxVideoBytes: 1 * platform.GB, MinDurationSeconds: 3, MaxDurationSeconds: 90,
	VideoFormats: []string{platform.FormatMP4},
	// "Compression – H.264, H.265 (VP9, AV1 are also supported)"; a picture in another codec
	// fails processing like a file that is no MP4.
	VideoCodecs:  []string{"h264", "hevc", "vp9", "av1"},
	MinFrameRate: 24, MaxFrameRate: 60, // "Frame Rate: 24 to 60 frames per second"
	Text: map[string]platform.TextLimit{
		"description": {Max: 5000, Unit: platform.UnitUTF16},
		"title":       {Max: 200, Unit: platform.UnitUTF16},
	},
	ReplyText:   platform.TextLimit{Max: 8000, Unit: platform.UnitUTF16},
	PostsPerDay: 30,
}

// New returns the simulator of Facebook Pages Reels publishing.
func New(cfg sim.Config) http.Handler {
	cfg.Normalize()
	s := &fbSim{cfg: cfg, caps: fbLimits}
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
	segs := metasim.Segments(s.prefix, r.URL.Path)
	if len(segs) > 0 && segs[0] == "video-upload" {
		s.upload(w, r, segs[1:])
		return
	}
	if len(segs) == 2 && segs[0] == "_static" && segs[1] == "page-picture.png" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(s.png)
		return
	}
	acct, params, id, edge, ok := metasim.Request(s.cfg, w, r, segs, 32)
	if !ok {
		return
	}
	version := fbVersion
	if v := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, s.prefix), "/"), "/")[0]; metasim.VersionSegment.MatchString(v) {
		version = v
	}
	var res any
	var gerr *metasim.Error
	switch {
	case r.Method == http.MethodPost && edge == "video_reels":
		res, gerr = s.reels(r.Context(), acct, id, params, version)
	case r.Method == http.MethodGet && edge == "video_reels":
		res, gerr = s.list(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "accounts" && segs[0] == "me":
		res = s.accounts(acct, metasim.Token(r, params))
	case r.Method == http.MethodGet && edge == "video_insights":
		res, gerr = s.insights(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "comments":
		res, gerr = s.listComments(r.Context(), acct, id, params)
	case r.Method == http.MethodPost && edge == "comments":
		res, gerr = s.comment(r.Context(), acct, id, params)
	case r.Method == http.MethodGet && edge == "":
		res, gerr = s.node(r.Context(), acct, id, params)
	default:
		gerr = metasim.NoRoute(r.Method, id, edge, "Page")
	}
	metasim.Answer(w, res, gerr)
}

// reels is POST /{page-id}/video_reels: the start and finish phases.
func (s *fbSim) reels(ctx context.Context, acct sim.Account, page string, p url.Values, version string) (any, *metasim.Error) {
	if page != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, page))
	}
	switch ph := p.Get("upload_phase"); ph {
	case "start":
		return s.start(ctx, acct, version)
	case "finish":
		return s.finish(ctx, acct, p)
	case "":
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Missing parameter: upload_phase")
	default:
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param upload_phase must be one of {start, finish}, got %q", ph))
	}
}

func (s *fbSim) start(ctx context.Context, acct sim.Account, version string) (any, *metasim.Error) {
	v := fbVideo{Page: acct.ID, Created: s.cfg.Now()}
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		var err error
		if v.ID, err = metasim.NewID(tx, fbKey(fbVideoKind, ""), 1_200_000_000_000_000); err != nil {
			return err
		}
		if err := sim.Save(tx, sim.Record{Key: fbKey(fbVideoKind, v.ID), Account: acct.ID}, v); err != nil {
			return err
		}
		return sim.Save(tx, sim.Record{Key: fbKey(fbUploadKind, v.ID), Account: acct.ID,
			Expires: v.Created.Add(fbSessionLifetime + time.Hour), Blobs: true}, fbUpload{})
	})
	if err != nil {
		return nil, metasim.Internal()
	}
	return map[string]string{"video_id": v.ID, "upload_url": s.cfg.BaseURL + "/video-upload/" + version + "/" + v.ID}, nil
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
	if len(rest) == 2 && metasim.VersionSegment.MatchString(rest[0]) {
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
		metasim.Write(w, metasim.Err(http.StatusBadRequest, 104, 0, "An access token is required to request this resource."))
		return
	}
	acct, ok := s.cfg.Accounts.Resolve(r.Context(), strings.TrimSpace(token))
	if !ok {
		metasim.Write(w, metasim.Err(http.StatusBadRequest, 190, 0, "Invalid OAuth access token - Cannot parse access token"))
		return
	}
	if e := metasim.Fault(s.cfg, acct, 32); e != nil {
		metasim.Write(w, e)
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

	ctx := r.Context()
	now := s.cfg.Now()
	key := fbKey(fbVideoKind, rest[0])
	attempt := sim.RandomHex(8)
	var answer func()
	var v fbVideo
	err = s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		var rec sim.Record
		var found bool
		var err error
		answer = nil
		v, rec, found, err = sim.LoadTx[fbVideo](tx, key)
		switch {
		case err != nil:
			return err
		case !found || v.Page != acct.ID:
			answer = func() {
				fbUploadError(w, http.StatusNotFound, "NotFoundError", "No upload session for video "+rest[0], false)
			}
		case !v.Complete && now.Sub(v.Created) >= fbSessionLifetime:
			answer = func() {
				fbUploadError(w, http.StatusBadRequest, "ExpiredSessionError", "The upload session has expired: start a new one", false)
			}
		case v.Size != 0 && int64(size) != v.Size:
			answer = func() {
				fbUploadError(w, http.StatusBadRequest, "ParameterValidationError", fmt.Sprintf("file_size %d differs from the %d bytes of this upload", size, v.Size), false)
			}
		case v.Complete && int64(offset) == v.Size && r.ContentLength == 0:
			answer = func() { metasim.JSON(w, map[string]bool{"success": true}) }
		case v.uploading() || int64(offset) != v.Received || v.Complete:
			answer = func() {
				fbUploadError(w, http.StatusPreconditionFailed, "OffsetInvalidError", "Request starting offset is invalid", true)
			}
		case r.ContentLength >= 0 && r.ContentLength != int64(size)-int64(offset):
			answer = func() {
				fbUploadError(w, http.StatusBadRequest, "PartialRequestError", "Partial request (did not match length of file)", true)
			}
		default:
			v.Size, v.UploadAttempt, v.UploadLease = int64(size), attempt, time.Now().Add(metasim.PullLease)
			return sim.Save(tx, rec, v)
		}
		return nil
	})
	switch {
	case err != nil:
		fbUploadError(w, http.StatusInternalServerError, "ProcessingFailedError", "Request processing failed", true)
		return
	case answer != nil:
		answer()
		return
	}
	s.receive(w, r, acct, v, attempt)
}

// receive streams an upload request's body into the reel's spool, hashing as it goes, then
// keeps what arrived, as the upload request holding the video's lease: the bytes written count
// even if the body breaks, which is what makes the upload resumable.
func (s *fbSim) receive(w http.ResponseWriter, r *http.Request, acct sim.Account, v fbVideo, attempt string) {
	ctx := r.Context()
	key, upKey := fbKey(fbVideoKind, v.ID), fbKey(fbUploadKind, v.ID)
	fail := func() {
		fbUploadError(w, http.StatusInternalServerError, "ProcessingFailedError", "Request processing failed", true)
	}
	up, _, _, err := sim.Load[fbUpload](ctx, s.cfg.State, upKey)
	if err != nil {
		fail()
		return
	}
	// What arrived is kept whatever happens to the request (a broken body cancels its
	// context): on a context of its own.
	keep, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	sp := sim.ResumeSpool(keep, s.cfg.Blobs, up.Spool, "reelay-sim-facebook-*")
	defer sp.Close()
	h := sha256.New()
	if len(up.Hash) > 0 {
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(up.Hash); err != nil {
			fail()
			return
		}
	}
	stop := metasim.KeepRenewed(ctx, func(ctx context.Context) bool { return s.renewUpload(ctx, key, attempt) })
	n, err := media.CopyHashed(io.NewOffsetWriter(sp, v.Received), io.LimitReader(r.Body, v.Size-v.Received), h)
	stop()
	if errors.Is(err, sim.ErrSpoolFile) {
		fail()
		return
	}
	received := v.Received + n
	complete := received == v.Size
	var st sim.SpoolState
	var sha string
	var check fbCheck
	if complete {
		sha = hex.EncodeToString(h.Sum(nil))
		check = s.check(sp, v.Size)
	} else if st, err = sp.Save(keep, sim.BlobPrefix(upKey)); err != nil {
		fail()
		return
	}
	hashState, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	ours := false
	err = s.cfg.State.Update(keep, func(tx sim.Tx) error {
		ours = false
		v, rec, found, err := sim.LoadTx[fbVideo](tx, key)
		if err != nil || !found || v.UploadAttempt != attempt {
			return err // the lease ran out, and another request took the upload over
		}
		ours = true
		v.Received, v.UploadAttempt, v.UploadLease = received, "", time.Time{}
		if !complete {
			if err := sim.Save(tx, rec, v); err != nil {
				return err
			}
			return sim.Save(tx, sim.Record{Key: upKey, Account: v.Page, Expires: v.Created.Add(fbSessionLifetime + time.Hour), Blobs: true},
				fbUpload{Spool: st, Hash: hashState})
		}
		s.complete(&v, acct, sha, check)
		if err := sim.RecordTx(tx, platform.Facebook, sim.Upload{Account: v.Page, Bytes: v.Size, SHA256: sha}); err != nil {
			return err
		}
		if err := sim.Save(tx, rec, v); err != nil {
			return err
		}
		return tx.Delete(upKey)
	})
	switch {
	case err != nil:
		fail()
	case !ours:
		fbUploadError(w, http.StatusPreconditionFailed, "OffsetInvalidError", "Request starting offset is invalid", true)
	case !complete:
		fbUploadError(w, http.StatusBadRequest, "PartialRequestError", "Partial request (did not match length of file)", true)
	default:
		if len(up.Spool.Chunks) > 0 {
			_ = sim.DeleteBlobs(keep, s.cfg.Blobs, upKey) // else housekeeping, with the session
		}
		metasim.JSON(w, map[string]bool{"success": true})
	}
}

// renewUpload extends the lease of the upload request attempt; false once it is not its.
func (s *fbSim) renewUpload(ctx context.Context, key sim.Key, attempt string) bool {
	ours := false
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		v, rec, found, err := sim.LoadTx[fbVideo](tx, key)
		if ours = found && v.UploadAttempt == attempt; err != nil || !ours {
			return err
		}
		v.UploadLease = time.Now().Add(metasim.PullLease)
		return sim.Save(tx, rec, v)
	})
	return ours || err != nil
}

// fbCheck is what the checks of a complete upload found.
type fbCheck struct {
	sub    int
	msg    string
	length float64
}

// complete marks a reel's upload complete, with its checks, and starts its processing.
func (s *fbSim) complete(v *fbVideo, acct sim.Account, sha string, c fbCheck) {
	v.Complete, v.SHA = true, sha
	v.ErrSub, v.ErrMsg, v.Length = c.sub, c.msg, c.length
	if v.ErrMsg == "" && acct.Behavior.Fail == sim.FailReject {
		v.ErrMsg = fbProcessingFailed
	}
	processing := fbDefaultProcessing
	if acct.Behavior.ProcessingMS >= 0 {
		processing = time.Duration(acct.Behavior.ProcessingMS) * time.Millisecond
	}
	v.Uploaded = s.cfg.Now()
	v.Ready = v.Uploaded.Add(processing)
}

// check applies the reels specifications and answers the refusal's subcode and message.
func (s *fbSim) check(r io.ReaderAt, size int64) fbCheck {
	info, err := media.Probe(r, size)
	if err != nil || !slices.Contains(s.caps.VideoFormats, info.Kind.Name) || !slices.Contains(s.caps.VideoCodecs, info.VideoCodec) ||
		info.Width <= 0 || info.Height <= 0 {
		return fbCheck{msg: fbProcessingFailed}
	}
	d := info.Duration.Seconds()
	switch {
	case d < s.caps.MinDurationSeconds || d > s.caps.MaxDurationSeconds:
		return fbCheck{fbSubDuration, fbRefusals[fbSubDuration], d}
	case math.Abs(float64(info.Width)/float64(info.Height)-9.0/16.0) > 0.01:
		return fbCheck{fbSubAspect, fbRefusals[fbSubAspect], d}
	case info.Width < fbMinWidth || info.Height < fbMinHeight:
		return fbCheck{fbSubResolution, fbRefusals[fbSubResolution], d}
	case info.FrameRate > 0 && (info.FrameRate < s.caps.MinFrameRate-0.01 || info.FrameRate > s.caps.MaxFrameRate+0.01):
		return fbCheck{fbSubFrameRate, fbRefusals[fbSubFrameRate], d}
	}
	return fbCheck{length: d}
}

// due reports whether a finished, processed reel is to be published.
func (s *fbSim) due(v fbVideo, now time.Time) bool {
	return !v.Done && v.Finished && v.ErrMsg == "" && !now.Before(v.Ready) && v.State != "DRAFT" && !now.Before(v.At)
}

// settle publishes a finished, processed reel once, recording it within tx.
func (s *fbSim) settle(tx sim.Tx, v *fbVideo, now time.Time) error {
	if !s.due(*v, now) {
		return nil
	}
	v.Done = true
	return sim.RecordTx(tx, platform.Facebook, sim.Published{Account: v.Page, ID: v.ID, URL: fbReelURL(v.ID), SHA256: v.SHA, Text: v.Desc})
}

// video reads one of the Page's reels. One due to be published is, by whichever request sees
// it first.
func (s *fbSim) video(ctx context.Context, acct sim.Account, id string) (fbVideo, bool, error) {
	now := s.cfg.Now()
	v, found, err := sim.LoadAdvanced(ctx, s.cfg.State, fbKey(fbVideoKind, id),
		func(v fbVideo) bool { return v.Page == acct.ID && s.due(v, now) },
		func(tx sim.Tx, v *fbVideo) error { return s.settle(tx, v, now) })
	return v, found && v.Page == acct.ID, err
}

func fbReelURL(id string) string { return "https://www.facebook.com/reel/" + id }

// status is a video's status field at now.
func (s *fbSim) status(v fbVideo, now time.Time) map[string]any {
	phase := func(st string) map[string]any { return map[string]any{"status": st} }
	failed := func(msg string) map[string]any {
		return map[string]any{"status": "error", "error": map[string]any{"message": msg}}
	}
	up := phase("not_started")
	switch {
	case v.Complete:
		up = phase("complete")
	case v.Received > 0 || v.uploading():
		up = phase("in_progress")
	}
	up["bytes_transferred"] = v.Received
	proc, pub := phase("not_started"), phase("not_started")
	videoStatus, progress := "uploading", 0
	switch {
	case !v.Complete && now.Sub(v.Created) >= fbSessionLifetime:
		videoStatus = "expired"
	case !v.Complete:
	case now.Before(v.Ready):
		videoStatus = "processing"
		proc = phase("in_progress")
		if total := v.Ready.Sub(v.Uploaded); total > 0 {
			progress = int(100 * (1 - float64(v.Ready.Sub(now))/float64(total)))
		}
	case v.ErrMsg != "":
		videoStatus, progress = "error", 100
		proc = failed(v.ErrMsg)
	default:
		videoStatus, progress = "ready", 100
		proc = phase("complete")
	}
	if v.Finished {
		switch {
		case v.ErrMsg != "" && !now.Before(v.Ready):
			pub = failed(v.ErrMsg)
		case v.Done:
			pub = phase("complete")
			pub["publish_status"] = "published"
			pub["publish_time"] = v.At.Unix()
		case v.State == "DRAFT" && !now.Before(v.Ready):
			pub = phase("complete")
			pub["publish_status"] = "draft"
		case v.State == "SCHEDULED" && !now.Before(v.Ready):
			pub = phase("complete")
			pub["publish_status"] = "scheduled"
			pub["publish_time"] = v.At.Unix()
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
func (s *fbSim) finish(ctx context.Context, acct sim.Account, p url.Values) (any, *metasim.Error) {
	var missing []string
	for _, k := range []string{"video_id", "video_state"} {
		if p.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Missing parameter: "+strings.Join(missing, ", "))
	}
	state := p.Get("video_state")
	now := s.cfg.Now()
	at := now
	switch state {
	case "PUBLISHED", "DRAFT":
	case "SCHEDULED":
		sec, err := strconv.ParseInt(p.Get("scheduled_publish_time"), 10, 64)
		if err != nil || !time.Unix(sec, 0).After(now) {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, "(#100) Param scheduled_publish_time must be a Unix time in the future when video_state is SCHEDULED")
		}
		at = time.Unix(sec, 0)
	default:
		return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param video_state must be one of {PUBLISHED, DRAFT, SCHEDULED}, got %q", state))
	}
	desc, title := p.Get("description"), p.Get("title")
	for _, f := range []struct{ name, v string }{{"description", desc}, {"title", title}} {
		if lim := s.caps.Text[f.name]; !lim.Check(f.v) {
			return nil, metasim.Err(http.StatusBadRequest, 100, 0, fmt.Sprintf("(#100) Param %s must be at most %d characters long", f.name, lim.Max))
		}
	}
	var gerr *metasim.Error
	err := s.cfg.State.Update(ctx, func(tx sim.Tx) error {
		gerr = nil
		v, rec, found, err := sim.LoadTx[fbVideo](tx, fbKey(fbVideoKind, p.Get("video_id")))
		switch {
		case err != nil:
			return err
		case !found || v.Page != acct.ID:
			gerr = metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodPost, p.Get("video_id")))
		case v.Finished:
			// Meta does not document this answer; a reel is not finished twice.
			gerr = metasim.Err(http.StatusBadRequest, 100, 0, "(#100) This video's upload session is already finished")
		case !v.Complete:
			gerr = metasim.Err(http.StatusBadRequest, 6000, 0, "Video Upload Is Missing: the video's bytes have not all been uploaded").User(
				"Problem with file", "There was a problem uploading your video file. Please try again.")
		case v.ErrMsg != "" && !now.Before(v.Ready):
			gerr = metasim.Err(http.StatusBadRequest, 6000, v.ErrSub, v.ErrMsg).User("Problem with video", v.ErrMsg)
		}
		if gerr != nil {
			return nil
		}
		if state != "DRAFT" {
			ok, err := sim.TakeInWindow(tx, fbKey(fbPublishedKind, acct.ID), acct.ID, now, fbWindow, s.caps.PostsPerDay)
			if err != nil {
				return err
			}
			if !ok {
				// The limit is documented, the answer is not: this wording is the simulator's.
				gerr = metasim.Err(http.StatusBadRequest, 9, 0, fmt.Sprintf("(#9) The Page has published the %d reels allowed through the API in 24 hours", s.caps.PostsPerDay))
				return nil
			}
		}
		v.Finished, v.State, v.Desc, v.Title, v.At = true, state, desc, title, at
		if err := s.settle(tx, &v, now); err != nil {
			return err
		}
		return sim.Save(tx, rec, v)
	})
	if err != nil {
		return nil, metasim.Internal()
	}
	if gerr != nil {
		return nil, gerr
	}
	return map[string]bool{"success": true}, nil
}

// node is GET /{id}: the Page or one of its videos.
func (s *fbSim) node(ctx context.Context, acct sim.Account, id string, p url.Values) (any, *metasim.Error) {
	now := s.cfg.Now()
	if id == acct.ID {
		all := map[string]any{"id": acct.ID, "name": fbPageName(acct), "username": nil, "category": "Video Creator",
			"link": "https://www.facebook.com/" + acct.ID,
			"picture": map[string]any{"data": map[string]any{"height": 50, "width": 50, "is_silhouette": true,
				"url": s.cfg.BaseURL + "/_static/page-picture.png"}},
		}
		if acct.Username != "" {
			all["username"] = acct.Username
		}
		return metasim.SelectFlat(all, "Page", p.Get("fields"), "id,name")
	}
	if c, thread, ok, err := s.findComment(ctx, acct, id, now); err != nil {
		return nil, metasim.Internal()
	} else if ok {
		return metasim.Select(s.commentFields(c, thread), "Comment", p.Get("fields"), "created_time,from,message,id")
	}
	v, ok, err := s.video(ctx, acct, id)
	if err != nil {
		return nil, metasim.Internal()
	}
	if !ok {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, id))
	}
	return metasim.SelectFlat(s.fields(v, now), "Video", p.Get("fields"), "id")
}

func (s *fbSim) fields(v fbVideo, now time.Time) map[string]any {
	all := map[string]any{
		"id": v.ID, "status": s.status(v, now), "description": nil, "title": nil,
		"created_time": metasim.Timestamp(v.Created), "updated_time": metasim.Timestamp(fbLater(v.Created, v.At)),
		"permalink_url": fbReelURL(v.ID), "published": v.Done, "length": nil,
	}
	if v.Desc != "" {
		all["description"] = v.Desc
	}
	if v.Title != "" {
		all["title"] = v.Title
	}
	if v.Complete {
		all["length"] = v.Length
	}
	return all
}

// list is GET /{page-id}/video_reels: the Page's finished reels, newest first.
func (s *fbSim) list(ctx context.Context, acct sim.Account, page string, p url.Values) (any, *metasim.Error) {
	if page != acct.ID {
		return nil, metasim.Err(http.StatusBadRequest, 100, 33, metasim.Unsupported(http.MethodGet, page))
	}
	now := s.cfg.Now()
	videos, err := sim.ListJSON[fbVideo](ctx, s.cfg.State, fbKey(fbVideoKind, ""), acct.ID)
	if err != nil {
		return nil, metasim.Internal()
	}
	data := []any{}
	for i := len(videos) - 1; i >= 0; i-- {
		if !videos[i].Finished {
			continue
		}
		v, _, err := s.video(ctx, acct, videos[i].ID)
		if err != nil {
			return nil, metasim.Internal()
		}
		row, gerr := metasim.SelectFlat(s.fields(v, now), "Video", p.Get("fields"), "id,description,updated_time")
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
func (s *fbSim) accounts(acct sim.Account, token string) any {
	return map[string]any{
		"data":   []any{map[string]any{"id": acct.ID, "name": fbPageName(acct), "access_token": token, "category": "Video Creator"}},
		"paging": map[string]any{"cursors": map[string]any{"before": "MA==", "after": "MA=="}},
	}
}

// fbPageName is the simulated Page's name: the account's username, else one made of its id.
func fbPageName(acct sim.Account) string {
	if acct.Username != "" {
		return acct.Username
	}
	return "Page " + acct.ID
}
