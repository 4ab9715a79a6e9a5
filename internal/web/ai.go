package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// AIEngine writes copy and storyboards (the built-in engine or a language model), as the
// API's /ai/adapt and /ai/storyboard/create do.
type AIEngine interface {
	Name() string
	Adapt(ctx context.Context, req ai.AdaptRequest) (ai.Adapted, error)
	Storyboard(ctx context.Context, req ai.StoryboardRequest) (ai.Storyboard, error)
}

type aiData struct {
	Platforms []string
	Tones     []string
	// The adapt form as sent, and its result.
	Prompt     string
	Chosen     map[string]bool
	Tone       string
	IncludeJEV bool
	Copies     []aiCopy
	// The storyboard form as sent, and its result: the scenes as the engine wrote them, or as
	// the render form sent them back.
	Topic, Duration, Style, Camera string
	Scenes                         []sceneForm
	Model                          string
	// The video form as sent.
	VideoPrompt, Aspect, ImageURL string
	Aspects                       []string
	// ClipCredits is what a clip costs (-1: no video here), RenderCredits the scenes' render,
	// Balance the account's credits.
	ClipCredits, RenderCredits, Balance int64
	// The render form as sent; KeyField offers a key for the hosted video model, which is
	// never written back into the page.
	RenderAspect string
	KeyField     bool
	Errors       map[string]string
	// Form names the form the result or the errors belong to ("adapt", "storyboard", "video"
	// or "render").
	Form string
}

// sceneForm is one storyboard scene in the render form, with the messages about its fields.
type sceneForm struct {
	ai.Scene
	// N counts from 1.
	N                       int
	TitleError, PromptError string
}

// aiCopy is one platform's copy with its lengths counted the platform's way.
type aiCopy struct {
	ai.Copy
	Platform, Name    string
	TextField         string
	TitleField        string
	TextCount, TextOf string
	TitleCount        string
}

func (h *Handler) aiForms(r *http.Request, s *session) (aiData, error) {
	d := aiData{Platforms: platform.All, Tones: ai.Tones, Tone: ai.DefaultTone, Chosen: map[string]bool{},
		Duration: strconv.Itoa(ai.DefaultDurationSeconds), Aspects: []string{aivideo.Vertical, aivideo.Horizontal},
		Aspect: aivideo.DefaultAspect, RenderAspect: aivideo.DefaultAspect, ClipCredits: -1}
	if h.o.AIVideo != nil {
		d.ClipCredits = h.o.AIVideo.ClipPrice()
		d.KeyField = h.o.AIVideo.Generator != nil
		acct, err := h.o.Store.GetAccount(r.Context(), s.AccountID)
		if err != nil {
			return d, err
		}
		d.Balance = acct.AICredits
	}
	// The project's platforms are chosen at first; the interface's defaults without channels.
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return d, err
	}
	channels, err := h.channels.List(r.Context(), s.AccountID, p.Project.ID)
	if err != nil {
		return d, err
	}
	for _, c := range channels {
		d.Chosen[c.Platform] = true
	}
	if len(d.Chosen) == 0 {
		for _, name := range ai.DefaultPlatforms {
			d.Chosen[name] = true
		}
	}
	return d, nil
}

func (h *Handler) renderAI(w http.ResponseWriter, r *http.Request, s *session, status int, d aiData) error {
	if h.o.AIVideo != nil && len(d.Scenes) > 0 {
		d.RenderCredits = h.o.AIVideo.StitchPrice(make([]aivideo.Scene, len(d.Scenes)))
	}
	p, err := h.pageFor(r, s, "AI copy and storyboards", "ai", d)
	if err != nil {
		return err
	}
	h.render(w, r, status, "ai", p)
	return nil
}

// aiPage shows the forms that adapt a script into each platform's copy and turn a topic into
// a storyboard.
func (h *Handler) aiPage(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.AI == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the AI helpers are not available on this server")
	}
	d, err := h.aiForms(r, s)
	if err != nil {
		return err
	}
	return h.renderAI(w, r, s, http.StatusOK, d)
}

// aiAdapt writes each chosen platform's copy from the script (ai.CheckAdapt and the engine, as
// POST /api/v1/ai/adapt), counted as each platform counts.
func (h *Handler) aiAdapt(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.AI == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the AI helpers are not available on this server")
	}
	d, err := h.aiForms(r, s)
	if err != nil {
		return err
	}
	d.Form, d.Prompt, d.Tone, d.IncludeJEV = "adapt", r.PostFormValue("prompt"), r.PostFormValue("tone"), r.PostFormValue("jev") == "on"
	d.Chosen = map[string]bool{}
	for _, p := range r.PostForm["platforms"] {
		d.Chosen[p] = true
	}
	req := ai.AdaptRequest{Prompt: d.Prompt, Platforms: r.PostForm["platforms"], Tone: d.Tone, IncludeJEV: d.IncludeJEV}
	if len(req.Platforms) == 0 {
		return h.aiRefused(w, r, s, d, apierr.Field("platforms", "choose at least one platform"))
	}
	if err := ai.CheckAdapt(&req); err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	adapted, err := h.o.AI.Adapt(r.Context(), req)
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	d.Model = h.o.AI.Name()
	for _, name := range req.Platforms {
		c, ok := adapted[name]
		if !ok {
			continue
		}
		lim, _ := ai.LimitsOf(name)
		out := aiCopy{Copy: c, Platform: name, Name: registry.DisplayName(name), TextField: lim.TextField, TitleField: lim.TitleField}
		if len(lim.Text) > 0 {
			out.TextCount = countText(c.Text, lim.Text[0])
		}
		if len(lim.Title) > 0 && c.Title != "" {
			out.TitleCount = countText(c.Title, lim.Title[0])
		}
		d.Copies = append(d.Copies, out)
	}
	return h.renderAI(w, r, s, http.StatusOK, d)
}

func countText(s string, l platform.TextLimit) string {
	unit := map[string]string{platform.UnitGraphemes: "characters", platform.UnitUTF16: "UTF-16 units",
		platform.UnitCharacters: "characters", platform.UnitBytes: "bytes", platform.UnitEmojiBytes: "characters"}[l.Unit]
	return fmt.Sprintf("%d / %d %s", l.Count(s), l.Max, unit)
}

// aiStoryboard turns a topic into scenes (ai.CheckStoryboard and the engine, as POST
// /api/v1/ai/storyboard/create).
func (h *Handler) aiStoryboard(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.AI == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "the AI helpers are not available on this server")
	}
	d, err := h.aiForms(r, s)
	if err != nil {
		return err
	}
	d.Form, d.Topic, d.Duration, d.Style, d.Camera = "storyboard", r.PostFormValue("topic"),
		strings.TrimSpace(r.PostFormValue("duration")), r.PostFormValue("style"), r.PostFormValue("camera")
	var duration *int
	if d.Duration != "" {
		n, err := strconv.Atoi(d.Duration)
		if err != nil {
			return h.aiRefused(w, r, s, d, apierr.Field("durationSeconds", "must be a whole number of seconds"))
		}
		duration = &n
	}
	req, err := ai.CheckStoryboard(d.Topic, duration, d.Style, d.Camera)
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	sb, err := h.o.AI.Storyboard(r.Context(), req)
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	for i, sc := range sb.Scenes {
		d.Scenes = append(d.Scenes, sceneForm{Scene: sc, N: i + 1})
	}
	d.Model = h.o.AI.Name()
	return h.renderAI(w, r, s, http.StatusOK, d)
}

// aiRender renders a storyboard's scenes, as edited on the page, into one video
// (aivideo.CheckStitch and Service.Stitch, as POST /api/v1/ai/storyboard/stitch: credits
// reserved first, refunded if it fails), and sends the browser to the job's page, which follows
// it until the video plays. A refusal (a scene to fix, too few credits, no ffmpeg) shows the
// scenes again as they were sent.
func (h *Handler) aiRender(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.AIVideo == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "video generation is not set up on this server")
	}
	d, err := h.aiForms(r, s)
	if err != nil {
		return err
	}
	d.Form, d.RenderAspect = "render", r.PostFormValue("aspect")
	// The storyboard form comes back as it was, for another storyboard from the same topic.
	d.Topic, d.Style, d.Camera = r.PostFormValue("sb_topic"), r.PostFormValue("sb_style"), r.PostFormValue("sb_camera")
	if v := r.PostFormValue("sb_duration"); v != "" {
		d.Duration = v
	}
	nth := func(name string, i int) string {
		if vs := r.PostForm[name]; i < len(vs) {
			return vs[i]
		}
		return ""
	}
	prompts := r.PostForm["scene_prompt"]
	scenes := make([]aivideo.Scene, len(prompts))
	for i, prompt := range prompts {
		sc := ai.Scene{Title: nth("scene_title", i), Prompt: prompt, Timecode: ai.Timecode(i),
			Camera: nth("scene_camera", i), AudioCue: nth("scene_audio", i)}
		d.Scenes = append(d.Scenes, sceneForm{Scene: sc, N: i + 1})
		scenes[i] = aivideo.Scene{Prompt: sc.Prompt, Title: sc.Title}
	}
	// A key is for the hosted model only: without one here, the local renderer needs none.
	var key string
	if d.KeyField {
		key = r.PostFormValue("api_key")
	}
	in, err := aivideo.CheckStitch(scenes, d.RenderAspect, key)
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	j, err := h.o.AIVideo.Stitch(r.Context(), s.AccountID, in, key)
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	http.Redirect(w, r, "/ai/jobs/"+j.ID, http.StatusSeeOther)
	return nil
}

// aiRefused shows the form again with the messages beside its fields; a refusal without fields
// (too few credits, a model that failed, no ffmpeg) says so above the form.
func (h *Handler) aiRefused(w http.ResponseWriter, r *http.Request, s *session, d aiData, err error) error {
	ae := httpapi.ClientError(err) // store errors too: too few AI credits is the API's 402
	if ae.Status >= 500 && ae.Status != http.StatusBadGateway && ae.Status != http.StatusServiceUnavailable {
		return err
	}
	d.Errors = map[string]string{}
	for k, v := range ae.Fields {
		if strings.HasPrefix(k, "platforms") {
			k = "platforms"
		}
		d.Errors[k] = v
	}
	if len(ae.Fields) == 0 {
		d.Errors["form"] = ae.Message
	}
	for i := range d.Scenes {
		d.Scenes[i].TitleError = d.Errors[fmt.Sprintf("scenes[%d].title", i)]
		d.Scenes[i].PromptError = d.Errors[fmt.Sprintf("scenes[%d].prompt", i)]
	}
	if d.Tone == "" {
		d.Tone = ai.DefaultTone
	}
	return h.renderAI(w, r, s, ae.Status, d)
}

// aiVideo starts a 5-second clip from a prompt (aivideo.CheckGenerate and Service.Generate, as
// POST /api/v1/ai/generate-video; the server's own model or ffmpeg, never a key from the page),
// and sends the browser to the job's page, which follows it until the video is there.
func (h *Handler) aiVideo(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.AIVideo == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "video generation is not set up on this server")
	}
	d, err := h.aiForms(r, s)
	if err != nil {
		return err
	}
	d.Form, d.VideoPrompt, d.Aspect, d.ImageURL = "video", r.PostFormValue("prompt"), r.PostFormValue("aspect"), strings.TrimSpace(r.PostFormValue("image_url"))
	in, err := aivideo.CheckGenerate(d.VideoPrompt, d.ImageURL, d.Aspect, "")
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	j, err := h.o.AIVideo.Generate(r.Context(), s.AccountID, in, "")
	if err != nil {
		return h.aiRefused(w, r, s, d, err)
	}
	http.Redirect(w, r, "/ai/jobs/"+j.ID, http.StatusSeeOther)
	return nil
}

type aiJobData struct {
	Job      store.AIJob
	VideoURL string
	Error    string
	Running  bool
	Publish  string
	// Stitch: the job joins a storyboard's scenes; Duration is its video's length, seconds.
	Stitch   bool
	Duration float64
}

// aiJobPage shows one of the account's AI jobs (a clip or a storyboard's video): running (the page reloads itself every few
// seconds, no script needed), its video with a link to publish it, or why it failed.
func (h *Handler) aiJobPage(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.AIVideo == nil {
		return apierr.NotFound("AI job")
	}
	j, err := h.o.Store.GetAIJob(r.Context(), s.AccountID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) || !store.ValidID(r.PathValue("id")) {
		return apierr.NotFound("AI job")
	}
	if err != nil {
		return err
	}
	d := aiJobData{Job: j, Running: j.Status == store.AIJobRunning, Stitch: j.Kind == store.AIJobStoryboardStitch}
	switch j.Status {
	case store.AIJobSucceeded:
		body, err := h.o.AIVideo.Answer(j)
		if err != nil {
			return err
		}
		d.VideoURL, _ = body["videoUrl"].(string)
		d.Duration, _ = body["duration"].(float64)
		d.Publish = "/publish?" + url.Values{"video_url": {d.VideoURL}}.Encode()
	case store.AIJobFailed:
		d.Error = aivideo.ErrorOf(j).Message
	}
	title := "AI video"
	if d.Stitch {
		title = "Storyboard video"
	}
	p, err := h.pageFor(r, s, title, "ai", d)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "aijob", p)
	return nil
}
