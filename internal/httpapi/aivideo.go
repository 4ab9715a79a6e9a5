package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/store"
)

type generateVideoRequest struct {
	Prompt      string `json:"prompt"`
	ImageURL    string `json:"imageUrl"`
	AspectRatio string `json:"aspectRatio"`
	APIKey      string `json:"apiKey"`
}

// generateVideo is POST /ai/generate-video.
func (s *Server) generateVideo(w http.ResponseWriter, r *http.Request) error {
	var in generateVideoRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	input, err := aivideo.CheckGenerate(in.Prompt, in.ImageURL, in.AspectRatio, in.APIKey)
	if err != nil {
		return err
	}
	if s.aiVideo == nil {
		return errNoAIVideo
	}
	j, err := s.aiVideo.Generate(r.Context(), mustPrincipal(r).AccountID, input, in.APIKey)
	if err != nil {
		return err
	}
	return s.answerAIJob(w, r, j)
}

type stitchRequest struct {
	Scenes      []aivideo.Scene `json:"scenes"`
	AspectRatio string          `json:"aspectRatio"`
	APIKey      string          `json:"apiKey"`
}

// stitchStoryboard is POST /ai/storyboard/stitch.
func (s *Server) stitchStoryboard(w http.ResponseWriter, r *http.Request) error {
	var in stitchRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	input, err := aivideo.CheckStitch(in.Scenes, in.AspectRatio, in.APIKey)
	if err != nil {
		return err
	}
	if s.aiVideo == nil {
		return errNoAIVideo
	}
	j, err := s.aiVideo.Stitch(r.Context(), mustPrincipal(r).AccountID, input, in.APIKey)
	if err != nil {
		return err
	}
	return s.answerAIJob(w, r, j)
}

var errNoAIVideo = apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "video generation is not set up on this server")

// answerAIJob waits for a job started by this request: its result or its error when it ends in
// time, else 202 with the job to read.
func (s *Server) answerAIJob(w http.ResponseWriter, r *http.Request, j store.AIJob) error {
	j, err := waitUnlessDraining(r, s.aiWait, func(ctx context.Context, d time.Duration) (store.AIJob, error) {
		return s.aiVideo.Await(ctx, j.AccountID, j.ID, d)
	})
	if err != nil {
		return err
	}
	switch j.Status {
	case store.AIJobFailed:
		return aivideo.ErrorOf(j)
	case store.AIJobRunning:
		w.Header().Set("Location", APIPrefix+"/ai/jobs/"+j.ID)
		writeJSON(w, http.StatusAccepted, map[string]any{"success": true, "job_id": j.ID, "status": j.Status})
		return nil
	}
	body, err := s.aiVideo.Answer(j)
	if err != nil {
		return err
	}
	body["success"] = true
	writeJSON(w, http.StatusOK, body)
	return nil
}

// getAIJob is GET /ai/jobs/{id}.
func (s *Server) getAIJob(w http.ResponseWriter, r *http.Request) error {
	if s.aiVideo == nil {
		return apierr.NotFound("AI job")
	}
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	j, err := s.store.GetAIJob(r.Context(), mustPrincipal(r).AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("AI job")
	}
	if err != nil {
		return err
	}
	body, err := s.aiVideo.Answer(j)
	if err != nil {
		return err
	}
	body["success"], body["job_id"], body["kind"], body["status"] = true, j.ID, j.Kind, j.Status
	if j.Status == store.AIJobFailed {
		e := aivideo.ErrorOf(j)
		body["error"] = errorDetail{Code: e.Code, Message: e.Message, Fields: e.Fields}
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}
