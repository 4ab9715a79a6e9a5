package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/provider"
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
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	wait, noWait := s.publishWait, false // noWait: Prefer: wait=0, answered 202 while unsettled
	if v, ok := preferWait(r.Header.Values("Prefer")); ok {
		wait, noWait = v, v == 0
		w.Header().Set("Preference-Applied", fmt.Sprintf("wait=%d", int(v.Seconds())))
	}

	sub := publish.Submission{AccountID: mustPrincipal(r).AccountID, IdempotencyKey: key, DryRun: dryRun}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/json":
		if r.ContentLength > maxJSONBody { // answered before the body is sent (Expect: 100-continue)
			return &http.MaxBytesError{Limit: maxJSONBody}
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
		if err != nil {
			return err
		}
		if err := apierr.DecodeJSON(bytes.NewReader(body), &sub.Request); err != nil {
			return err
		}
		sub.RequestHash = publish.RequestHash("json", string(body))
	case "multipart/form-data":
		r.Body = http.MaxBytesReader(w, r.Body, publish.MaxFormBytes)
		if err := s.publisher.ReadRequestForm(r, &sub); err != nil {
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
		post, err = waitUnlessDraining(r, wait, func(ctx context.Context, d time.Duration) (store.Post, error) {
			return s.publisher.Wait(ctx, sub.AccountID, post.ID, d)
		})
		if err != nil {
			return err
		}
	}
	status := http.StatusOK
	switch {
	case upstreamFailure(post):
		status = http.StatusBadGateway
	case noWait && (post.Status == store.PostProcessing || post.Status == store.PostScheduled):
		// The client asked not to wait: the post is accepted, and its page tells how it ends.
		status = http.StatusAccepted
		w.Header().Set("Location", APIPrefix+"/posts/"+post.ID)
	}
	writeJSON(w, status, publishResponse(post))
	return nil
}

// upstreamFailure: no destination succeeded and a platform's error is among the causes
// (docs/CONTRACT.md, Publishing).
func upstreamFailure(p store.Post) bool {
	if p.Status != store.PostFailed {
		return false
	}
	for _, d := range p.Destinations {
		if d.Status == store.DestFailed && d.ErrorCategory != provider.CategoryInternal {
			return true
		}
	}
	return false
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

// idempotencyKey is the request's Idempotency-Key header: "" when there is none, a field
// error when it is not 1 to 255 visible ASCII characters.
func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if key != "" && !validIdempotencyKey(key) {
		return "", apierr.Field("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
	}
	return key, nil
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
