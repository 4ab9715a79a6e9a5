package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/reelay/reelay/internal/ai"
)

// AIEngine writes copy and storyboards: the built-in engine, or a configured language model.
type AIEngine interface {
	// Name is what answers give as `model`.
	Name() string
	Adapt(ctx context.Context, req ai.AdaptRequest) (ai.Adapted, error)
	Storyboard(ctx context.Context, req ai.StoryboardRequest) (ai.Storyboard, error)
}

type adaptRequest struct {
	Prompt     string   `json:"prompt"`
	Platforms  []string `json:"platforms"`
	Tone       string   `json:"tone"`
	IncludeJev bool     `json:"includeJev"`
}

type adaptResponse struct {
	Success bool       `json:"success"`
	Adapted ai.Adapted `json:"adapted"`
	Model   string     `json:"model"`
}

// adaptScript is POST /ai/adapt. It answers synchronously: the built-in engine takes
// milliseconds and a model's two calls at most are bounded by the LLM timeout.
func (s *Server) adaptScript(w http.ResponseWriter, r *http.Request) error {
	var in adaptRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	req := ai.AdaptRequest{Prompt: in.Prompt, Platforms: in.Platforms, Tone: in.Tone, IncludeJEV: in.IncludeJev}
	if err := ai.CheckAdapt(&req); err != nil {
		return err
	}
	adapted, err := s.ai.Adapt(r.Context(), req)
	if err != nil {
		return fmt.Errorf("adapt: %w", err)
	}
	writeJSON(w, http.StatusOK, adaptResponse{Success: true, Adapted: adapted, Model: s.ai.Name()})
	return nil
}

type storyboardRequest struct {
	Topic           string `json:"topic"`
	DurationSeconds *int   `json:"durationSeconds"`
	Style           string `json:"style"`
	Camera          string `json:"camera"`
}

type storyboardResponse struct {
	Success    bool          `json:"success"`
	Storyboard ai.Storyboard `json:"storyboard"`
	Model      string        `json:"model"`
}

// createStoryboard is POST /ai/storyboard/create.
func (s *Server) createStoryboard(w http.ResponseWriter, r *http.Request) error {
	var in storyboardRequest
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	req, err := ai.CheckStoryboard(in.Topic, in.DurationSeconds, in.Style, in.Camera)
	if err != nil {
		return err
	}
	sb, err := s.ai.Storyboard(r.Context(), req)
	if err != nil {
		return fmt.Errorf("storyboard: %w", err)
	}
	writeJSON(w, http.StatusOK, storyboardResponse{Success: true, Storyboard: sb, Model: s.ai.Name()})
	return nil
}
