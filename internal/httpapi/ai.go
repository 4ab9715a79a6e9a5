package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
)

// AIEngine writes copy and storyboards: the built-in engine, or a configured language model.
type AIEngine interface {
	// Name is what answers give as `model`.
	Name() string
	Adapt(ctx context.Context, req ai.AdaptRequest) (ai.Adapted, error)
	Storyboard(ctx context.Context, req ai.StoryboardRequest) (ai.Storyboard, error)
}

// Bounds of the AI requests' texts: a script for a short video is a few hundred words, and a
// style or camera note a phrase.
const (
	maxScriptChars = 10000
	maxNoteChars   = 200
)

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
	var f apierr.Fields
	checkScript(&f, "prompt", in.Prompt)
	if in.Tone == "" {
		in.Tone = ai.DefaultTone
	} else if !ai.ValidTone(in.Tone) {
		f.Addf("tone", "must be one of %s", strings.Join(ai.Tones, ", "))
	}
	platforms := in.Platforms
	if len(platforms) == 0 {
		platforms = ai.DefaultPlatforms
	}
	seen := map[string]bool{}
	for i, p := range platforms {
		field := fmt.Sprintf("platforms[%d]", i)
		switch {
		case !platform.Valid(p):
			f.Addf(field, "unknown platform %q; platforms are %s", p, strings.Join(platform.All, ", "))
		case seen[p]:
			f.Addf(field, "%s is listed twice", p)
		}
		seen[p] = true
	}
	if err := f.Err(); err != nil {
		return err
	}
	adapted, err := s.ai.Adapt(r.Context(), ai.AdaptRequest{Prompt: in.Prompt, Platforms: platforms, Tone: in.Tone, IncludeJEV: in.IncludeJev})
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
	var f apierr.Fields
	checkScript(&f, "topic", in.Topic)
	duration := ai.DefaultDurationSeconds
	if in.DurationSeconds != nil {
		duration = *in.DurationSeconds
		if duration < ai.MinDurationSeconds || duration > ai.MaxDurationSeconds {
			f.Addf("durationSeconds", "must be between %d and %d seconds, got %d", ai.MinDurationSeconds, ai.MaxDurationSeconds, duration)
		}
	}
	checkNote(&f, "style", in.Style)
	checkNote(&f, "camera", in.Camera)
	if err := f.Err(); err != nil {
		return err
	}
	sb, err := s.ai.Storyboard(r.Context(), ai.StoryboardRequest{Topic: in.Topic, DurationSeconds: ai.RoundDuration(duration),
		Style: in.Style, Camera: in.Camera})
	if err != nil {
		return fmt.Errorf("storyboard: %w", err)
	}
	writeJSON(w, http.StatusOK, storyboardResponse{Success: true, Storyboard: sb, Model: s.ai.Name()})
	return nil
}

// checkScript validates a required script or topic.
func checkScript(f *apierr.Fields, field, v string) {
	switch {
	case !utf8.ValidString(v):
		f.Add(field, "must be valid UTF-8")
	case strings.TrimSpace(v) == "":
		f.Add(field, "is required")
	case utf8.RuneCountInString(v) > maxScriptChars:
		f.Addf(field, "must be at most %d characters, got %d", maxScriptChars, utf8.RuneCountInString(v))
	}
}

// checkNote validates an optional one-line note (style, camera).
func checkNote(f *apierr.Fields, field, v string) {
	switch {
	case utf8.RuneCountInString(v) > maxNoteChars:
		f.Addf(field, "must be at most %d characters, got %d", maxNoteChars, utf8.RuneCountInString(v))
	case strings.ContainsFunc(v, isControl):
		f.Add(field, "must be one line without control characters")
	}
}
