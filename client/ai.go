package client

import (
	"context"
	"net/http"
	"time"
)

// AdaptRequest asks for per-platform copy of one script.
type AdaptRequest struct {
	// Prompt is the script or concept, at most 10,000 characters.
	Prompt string `json:"prompt"`
	// Platforms default to tiktok, instagram, youtube, threads and bluesky.
	Platforms []Platform `json:"platforms,omitempty"`
	// Tone is "viral" (default), "engaging", "educational", "humorous" or "professional".
	Tone string `json:"tone,omitempty"`
	// IncludeJev adds Jev, the on-screen text lines of a jump-cut edit, to each copy.
	IncludeJev bool `json:"includeJev,omitempty"`
}

// AdaptResponse is the copy for each platform.
type AdaptResponse struct {
	Adapted map[Platform]AdaptedCopy `json:"adapted"`
	// Model is the engine that wrote it ("reelay-builtin" without a language model).
	Model string `json:"model"`
}

// AdaptedCopy is one platform's copy, within its limits counted its way.
type AdaptedCopy struct {
	// Text is ready to post: hook, body, call to action, hashtags.
	Text     string   `json:"text"`
	Hook     string   `json:"hook"`
	Hashtags []string `json:"hashtags"`
	// Title is set for platforms whose posts have one (youtube, linkedin, pinterest,
	// facebook, reddit).
	Title string   `json:"title"`
	Jev   []string `json:"jev"`
}

// StoryboardRequest asks for a storyboard of 5-second scenes.
type StoryboardRequest struct {
	Topic string `json:"topic"`
	// DurationSeconds is 5 to 300 (default 30), rounded up to whole scenes.
	DurationSeconds int    `json:"durationSeconds,omitempty"`
	Style           string `json:"style,omitempty"`
	Camera          string `json:"camera,omitempty"`
}

// StoryboardResponse is a storyboard and the engine that wrote it.
type StoryboardResponse struct {
	Storyboard Storyboard `json:"storyboard"`
	Model      string     `json:"model"`
}

// Storyboard is consecutive 5-second scenes.
type Storyboard struct {
	Scenes []StoryboardScene `json:"scenes"`
}

// StoryboardScene is one scene; Timecode is its span, such as "00:05-00:10".
type StoryboardScene struct {
	Title    string `json:"title"`
	Prompt   string `json:"prompt"`
	Timecode string `json:"timecode"`
	AudioCue string `json:"audioCue"`
	Camera   string `json:"camera"`
}

// StitchScenes turns the storyboard into the scenes of a StitchRequest, each generated from
// its prompt.
func (s Storyboard) StitchScenes() []StitchScene {
	out := make([]StitchScene, len(s.Scenes))
	for i, sc := range s.Scenes {
		out[i] = StitchScene{Prompt: sc.Prompt, Title: sc.Title}
	}
	return out
}

// Aspect ratios of generated video.
const (
	AspectVertical   = "9:16"
	AspectHorizontal = "16:9"
)

// GenerateVideoRequest asks for a 5-second clip from a prompt, or from an image.
type GenerateVideoRequest struct {
	Prompt string `json:"prompt"`
	// ImageURL is a picture to animate (public http(s), JPEG, PNG or WebP, at most 10 MB).
	ImageURL string `json:"imageUrl,omitempty"`
	// AspectRatio is AspectVertical (default) or AspectHorizontal.
	AspectRatio string `json:"aspectRatio,omitempty"`
	// APIKey is the hosted video model's key, for this call only.
	APIKey string `json:"apiKey,omitempty"`
}

// StitchRequest joins scenes into one video, generating the scenes without a VideoURL.
type StitchRequest struct {
	Scenes      []StitchScene `json:"scenes"`
	AspectRatio string        `json:"aspectRatio,omitempty"`
	APIKey      string        `json:"apiKey,omitempty"`
}

// StitchScene is a scene to join: its VideoURL as it is, or generated from Prompt.
type StitchScene struct {
	Prompt   string `json:"prompt"`
	VideoURL string `json:"videoUrl,omitempty"`
	Title    string `json:"title,omitempty"`
}

// AI job kinds and statuses.
const (
	AIJobGenerateVideo    = "generate_video"
	AIJobStoryboardStitch = "storyboard_stitch"

	AIJobRunning   = "running"
	AIJobSucceeded = "succeeded"
	AIJobFailed    = "failed"
)

// AIJob is a video generation or stitch: its result once it has succeeded, its error once it
// has failed. GenerateVideo and StitchStoryboard answer one, finished or still running (see
// WaitAIJob).
type AIJob struct {
	// JobID is empty when the call answered the result at once (the server then has no job
	// to read).
	JobID  string `json:"job_id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	// Error is why a failed job failed (see Err).
	Error *ErrorDetail `json:"error"`
	// VideoURL is a signed link to the stored MP4, valid 7 days; PublishRequest.VideoURL
	// takes it as it is.
	VideoURL string `json:"videoUrl"`
	// RequestID is the hosted model's request id (the job's id for a local render);
	// AspectRatio is the clip's. Both are for generate_video.
	RequestID   string `json:"requestId"`
	AspectRatio string `json:"aspectRatio"`
	// Duration is the stitched video's length in seconds, for storyboard_stitch.
	Duration float64 `json:"duration"`
}

// Done tells whether the job has ended, well or not.
func (j *AIJob) Done() bool { return j.Status == AIJobSucceeded || j.Status == AIJobFailed }

// Err is a failed job's error as an *Error (nil unless the job failed); its credits have
// been refunded.
func (j *AIJob) Err() error {
	if j.Status != AIJobFailed {
		return nil
	}
	return jobError(j.Error, j.JobID)
}

// Adapt writes copy for each platform from one script. It answers synchronously.
func (c *Client) Adapt(ctx context.Context, req AdaptRequest) (*AdaptResponse, error) {
	var out AdaptResponse
	if _, err := c.post(ctx, "/ai/adapt", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateStoryboard breaks a topic into 5-second scenes. It answers synchronously.
func (c *Client) CreateStoryboard(ctx context.Context, req StoryboardRequest) (*StoryboardResponse, error) {
	var out StoryboardResponse
	if _, err := c.post(ctx, "/ai/storyboard/create", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GenerateVideo generates a clip, paying its AI credits. The server waits for it up to its
// AI wait (60 s by default): the answer is the finished job, or a running one (Status
// AIJobRunning) to follow with WaitAIJob. A failure of the generation is the returned error,
// not a job.
func (c *Client) GenerateVideo(ctx context.Context, req GenerateVideoRequest) (*AIJob, error) {
	return c.startAIJob(ctx, "/ai/generate-video", AIJobGenerateVideo, req)
}

// StitchStoryboard joins scenes into one MP4, generating those without a video, as
// GenerateVideo does (and answers likewise).
func (c *Client) StitchStoryboard(ctx context.Context, req StitchRequest) (*AIJob, error) {
	return c.startAIJob(ctx, "/ai/storyboard/stitch", AIJobStoryboardStitch, req)
}

// startAIJob reads both answers into an AIJob: 200 carries the result's fields, 202 the job's.
func (c *Client) startAIJob(ctx context.Context, path, kind string, req any) (*AIJob, error) {
	var job AIJob
	status, err := c.post(ctx, path, req, &job)
	if err != nil {
		return nil, err
	}
	job.Kind = kind
	if status == http.StatusAccepted {
		if job.Status == "" {
			job.Status = AIJobRunning
		}
	} else {
		job.Status = AIJobSucceeded
	}
	return &job, nil
}

// GetAIJob reads a job.
func (c *Client) GetAIJob(ctx context.Context, id string) (*AIJob, error) {
	path, err := idPath("/ai/jobs", id, "")
	if err != nil {
		return nil, err
	}
	var out AIJob
	if err := c.get(ctx, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WaitAIJob follows a job until it ends, reading it with a back-off from 1 s to 10 s; bound
// it with a context deadline. It answers the ended job, with job.Err() as the error when the
// job failed; when ctx ends first, the last job read and ctx's error.
func (c *Client) WaitAIJob(ctx context.Context, job *AIJob) (*AIJob, error) {
	interval := time.Second
	for !job.Done() {
		if err := c.sleep(ctx, interval); err != nil {
			return job, err
		}
		next, err := c.GetAIJob(ctx, job.JobID)
		if err != nil {
			return job, err
		}
		job = next
		interval = min(interval*2, 10*time.Second)
	}
	return job, job.Err()
}
