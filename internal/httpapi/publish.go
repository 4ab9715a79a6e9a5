package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// maxPublishWait is the longest Prefer: wait=N a client may ask for.
const maxPublishWait = 60 * time.Second

// publish handles POST /publish and POST /posts/publish: JSON with video_url, or multipart
// with the video file streamed to storage.
func (s *Server) publish(w http.ResponseWriter, r *http.Request) error {
	dryRun, err := boolQuery(r, "dry_run")
	if err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	if key != "" && !validIdempotencyKey(key) {
		return apierr.Field("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
	}
	wait := s.publishWait
	if v, ok := preferWait(r.Header.Values("Prefer")); ok {
		wait = v
		w.Header().Set("Preference-Applied", fmt.Sprintf("wait=%d", int(v.Seconds())))
	}

	sub := publish.Submission{AccountID: mustPrincipal(r).AccountID, IdempotencyKey: key, DryRun: dryRun}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
		if err != nil {
			return err
		}
		if err := decodeStrict(bytes.NewReader(body), &sub.Request); err != nil {
			return err
		}
		sub.RequestHash = publish.RequestHash("json", string(body))
	case "multipart/form-data":
		if err := s.readPublishForm(w, r, &sub); err != nil {
			return err
		}
	default:
		return apierr.Newf(http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType,
			"Content-Type must be application/json (with video_url) or multipart/form-data (with a video file), got %q",
			r.Header.Get("Content-Type"))
	}

	res, err := s.publisher.Submit(r.Context(), sub)
	if err != nil {
		return err
	}
	if res.DryRun != nil {
		writeJSON(w, http.StatusOK, dryRunJSON(res.DryRun))
		return nil
	}
	post := res.Post
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if post.Status == store.PostProcessing && wait > 0 {
		if post, err = s.publisher.Wait(r.Context(), sub.AccountID, post.ID, wait); err != nil {
			return err
		}
	}
	status := http.StatusOK
	if upstreamFailure(post) {
		status = http.StatusBadGateway
	}
	writeJSON(w, status, publishResponse(post))
	return nil
}

// upstreamFailure: no destination succeeded and a platform's error is among the causes
// (DESIGN.md section 6 item 4).
func upstreamFailure(p store.Post) bool {
	if p.Status != store.PostFailed {
		return false
	}
	for _, d := range p.Destinations {
		if d.Status == store.DestFailed && d.ErrorCategory != publish.CategoryInternal {
			return true
		}
	}
	return false
}

// Multipart fields of the publish form besides the files: plain strings, JSON arrays, JSON
// objects (the per-platform objects) and one boolean.
var (
	formStrings = []string{"project_id", "video_url", "thumbnail_url", "title", "caption", "scheduled_for"}
	formArrays  = []string{"platforms", "channel_ids"}
	formObjects = []string{"youtube", "instagram", "tiktok", "linkedin", "pinterest", "threads", "facebook",
		"bluesky", "telegram", "discord", "mastodon", "reddit"}
)

// maxFormField bounds one non-file form field (a caption is at most 5000 characters).
const maxFormField = 64 << 10

// readPublishForm streams a multipart publish request: files go straight to media storage
// (sniffed, size-capped, probed) as their parts arrive; the other fields are collected and
// decoded as the JSON request would be. On any error the files taken in are deleted.
func (s *Server) readPublishForm(w http.ResponseWriter, r *http.Request, sub *publish.Submission) (err error) {
	r.Body = http.MaxBytesReader(w, r.Body, media.MaxVideoBytes+media.MaxImageBytes+4<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		return apierr.Field("body", "is not a readable multipart form: "+err.Error())
	}
	defer func() {
		if err != nil {
			s.publisher.Discard(sub.Video, sub.Thumbnail)
			sub.Video, sub.Thumbnail = nil, nil
		}
	}()
	fields := map[string]json.RawMessage{}
	var hashParts []string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return mediaReadError("body", err)
		}
		name := part.FormName()
		switch {
		case name == "video" || name == "thumbnail":
			dst, kinds, limit := &sub.Video, media.VideoKinds, media.MaxVideoBytes
			if name == "thumbnail" {
				dst, kinds, limit = &sub.Thumbnail, media.ImageKinds, media.MaxImageBytes
			}
			if *dst != nil {
				return apierr.Field(name, "is given twice")
			}
			stored, err := media.IngestUpload(r.Context(), s.media, part, limit, kinds)
			if err != nil {
				return mediaReadError(name, err)
			}
			*dst = &stored
			hashParts = append(hashParts, name+"="+stored.Blob.SHA256)
		case slices.Contains(formStrings, name), slices.Contains(formArrays, name), slices.Contains(formObjects, name), name == "allow_duplicate":
			if _, dup := fields[name]; dup {
				return apierr.Field(name, "is given twice")
			}
			raw, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err != nil {
				return mediaReadError(name, err)
			}
			if len(raw) > maxFormField {
				return apierr.Field(name, fmt.Sprintf("must be at most %d bytes", maxFormField))
			}
			v, err := formValue(name, string(raw))
			if err != nil {
				return err
			}
			fields[name] = v
			hashParts = append(hashParts, name+"="+string(raw))
		default:
			return apierr.Field(name, "unknown field")
		}
	}
	body, _ := json.Marshal(fields)
	if err := decodeStrict(bytes.NewReader(body), &sub.Request); err != nil {
		return err
	}
	sort.Strings(hashParts)
	sub.RequestHash = publish.RequestHash(append([]string{"multipart"}, hashParts...)...)
	return nil
}

// formValue turns one form field into the JSON value the JSON request would carry.
func formValue(name, v string) (json.RawMessage, error) {
	switch {
	case slices.Contains(formArrays, name):
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "[") {
			// A comma-separated list is accepted too: platforms=youtube,tiktok.
			var list []string
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" {
					list = append(list, item)
				}
			}
			b, _ := json.Marshal(list)
			return b, nil
		}
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			return nil, apierr.Field(name, "must be a JSON array of strings, e.g. [\"youtube\",\"tiktok\"]")
		}
		return json.RawMessage(v), nil
	case slices.Contains(formObjects, name):
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err != nil || obj == nil {
			return nil, apierr.Field(name, "must be a JSON object, e.g. {\"privacy_status\":\"unlisted\"}")
		}
		return json.RawMessage(v), nil
	case name == "allow_duplicate":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, apierr.Field(name, "must be true or false")
		}
		return json.RawMessage(strconv.FormatBool(b)), nil
	default:
		b, _ := json.Marshal(v)
		return b, nil
	}
}

// mediaReadError maps an error reading or storing a form part.
func mediaReadError(field string, err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return media.FieldError(field, err)
}

// preferWait reads wait=N from Prefer headers (RFC 7240), clamped to 0..60 seconds.
func preferWait(values []string) (time.Duration, bool) {
	for _, header := range values {
		for _, pref := range strings.Split(header, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(pref), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "wait") {
				continue
			}
			n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(v), `"`))
			if err != nil {
				continue
			}
			return min(max(time.Duration(n)*time.Second, 0), maxPublishWait), true
		}
	}
	return 0, false
}

func validIdempotencyKey(k string) bool {
	if len(k) > 255 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

func boolQuery(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apierr.Field(name, "must be true or false")
	}
	return b, nil
}
