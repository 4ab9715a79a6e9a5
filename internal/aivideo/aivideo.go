// Package aivideo makes videos for POST /ai/generate-video and POST /ai/storyboard/stitch. A
// request is validated, charged and queued in one transaction (credits reserved, an ai_jobs row,
// a River job); the worker then generates each clip with a hosted video model (internal/videogen)
// or, without one, with the local ffmpeg renderer (internal/render), joins storyboard scenes,
// stores the result in blob storage and settles the credits, or refunds them when anything
// fails. The HTTP call waits for the job a while and otherwise hands out the job to read.
package aivideo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/videogen"
)

// Aspect ratios of generated video; DefaultAspect when a request names none.
const (
	Vertical      = "9:16"
	Horizontal    = "16:9"
	DefaultAspect = Vertical
)

// Prices in AI credits. A hosted model costs its operator real money per clip, the local renderer
// only CPU time; joining is one more render.
const (
	LocalClipCredits  = 1
	HostedClipCredits = 5
	JoinCredits       = 1
)

// MaxScenes bounds a stitch: 60 scenes of 5 seconds, the longest storyboard.
const MaxScenes = 60

// LinkTTL is how long the videoUrl of an answer works; reading the job again signs a new one.
const LinkTTL = 7 * 24 * time.Hour

// Renderer renders clips and joins videos with ffmpeg (internal/render).
type Renderer interface {
	Check(ctx context.Context) error
	TextClip(ctx context.Context, dst, prompt, aspect string) error
	ImageClip(ctx context.Context, dst, imagePath, aspect string) error
	Join(ctx context.Context, dst string, inputs []string, aspect string) error
}

// Generator is a hosted video model reached by the queue pattern (internal/videogen).
type Generator interface {
	Submit(ctx context.Context, key string, req videogen.Request) (videogen.Job, error)
	Wait(ctx context.Context, key string, job videogen.Job) (string, error)
}

// Inserter queues a River job in a store transaction (internal/jobs).
type Inserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// GenerateInput is a validated POST /ai/generate-video, as stored in the job.
type GenerateInput struct {
	Prompt      string `json:"prompt"`
	AspectRatio string `json:"aspectRatio"`
	// ImageURL is the picture asked for, and ImageKey where its copy lies in blob storage.
	ImageURL string `json:"imageUrl,omitempty"`
	ImageKey string `json:"imageKey,omitempty"`
}

// Scene is one scene of a stitch: its video when it has one, else what to generate.
type Scene struct {
	Prompt   string `json:"prompt"`
	VideoURL string `json:"videoUrl,omitempty"`
	Title    string `json:"title,omitempty"`
}

// StitchInput is a validated POST /ai/storyboard/stitch.
type StitchInput struct {
	Scenes      []Scene `json:"scenes"`
	AspectRatio string  `json:"aspectRatio"`
}

// Result is what a succeeded job made.
type Result struct {
	VideoKey    string  `json:"videoKey"`
	RequestID   string  `json:"requestId,omitempty"`
	AspectRatio string  `json:"aspectRatio"`
	Duration    float64 `json:"duration"`
}

// Service starts jobs and reads them back for the HTTP API.
type Service struct {
	Store   *store.Store
	Queue   Inserter
	Media   *media.Store
	Fetcher *media.Fetcher
	Box     *secret.Box
	// Generator is the hosted video model; nil renders every clip with Renderer.
	Generator Generator
	Renderer  Renderer
	// Discard deletes media a refused request stored (publish.Service.Discard).
	Discard func(...*media.Stored)
	Log     *slog.Logger
}

// ClipPrice is what one generated clip costs here, in AI credits.
func (s *Service) ClipPrice() int64 { return s.clipPrice() }

// clipPrice is what one generated clip costs here.
func (s *Service) clipPrice() int64 {
	if s.Generator != nil {
		return HostedClipCredits
	}
	return LocalClipCredits
}

// errNoFFmpeg is the 503 of a request that needs ffmpeg on a server without it.
func errNoFFmpeg(cause error) error {
	return apierr.Newf(http.StatusServiceUnavailable, apierr.CodeUnavailable,
		"video rendering needs ffmpeg, which this server cannot run (%v); its operator can install ffmpeg or configure a video model (REELAY_VIDEO_URL)",
		cause).Wrap(cause)
}

// Generate charges and queues a generation. apiKey, when given, is the provider key for this
// call only: it is sealed in the job row until the job ends and never logged.
func (s *Service) Generate(ctx context.Context, accountID string, in GenerateInput, apiKey string) (store.AIJob, error) {
	if s.Generator == nil {
		if err := s.Renderer.Check(ctx); err != nil {
			return store.AIJob{}, errNoFFmpeg(err)
		}
	}
	var image *media.Stored
	if in.ImageURL != "" {
		// Taken in now, so that a URL that is refused or is not a picture costs nothing and
		// answers at once.
		st, ok, err := s.Media.Linked(ctx, in.ImageURL, media.ImageKinds)
		if !ok {
			st, err = media.IngestURL(ctx, s.Fetcher, s.Media, in.ImageURL, media.MaxImageBytes, media.ImageKinds)
		}
		if err != nil {
			return store.AIJob{}, media.FieldError("imageUrl", err)
		}
		image = &st
		in.ImageKey = st.Blob.Key
	}
	j, err := s.start(ctx, accountID, store.AIJobGenerateVideo, in, s.clipPrice(), apiKey)
	if err != nil && image != nil {
		s.Discard(image)
	}
	return j, err
}

// Stitch charges and queues a stitch: each scene without a video is a clip to generate, and the
// join is one more render.
func (s *Service) Stitch(ctx context.Context, accountID string, in StitchInput, apiKey string) (store.AIJob, error) {
	// Joining is ffmpeg's work whoever makes the clips.
	if err := s.Renderer.Check(ctx); err != nil {
		return store.AIJob{}, errNoFFmpeg(err)
	}
	return s.start(ctx, accountID, store.AIJobStoryboardStitch, in, s.StitchPrice(in.Scenes), apiKey)
}

// StitchPrice is what a stitch of these scenes costs here, in AI credits: a clip for each scene
// without a video, and the join.
func (s *Service) StitchPrice(scenes []Scene) int64 {
	price := int64(JoinCredits)
	for _, sc := range scenes {
		if sc.VideoURL == "" {
			price += s.clipPrice()
		}
	}
	return price
}

// start writes the reservation, the job row and the River job in one transaction.
func (s *Service) start(ctx context.Context, accountID, kind string, input any, price int64, apiKey string) (store.AIJob, error) {
	body, err := json.Marshal(input)
	if err != nil {
		return store.AIJob{}, err
	}
	j := store.AIJob{ID: uuid.NewString(), AccountID: accountID, Kind: kind, Input: body, Credits: price}
	if apiKey != "" {
		j.ProviderKey = s.Box.Seal([]byte(apiKey), KeyContext(j.ID))
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		r, err := tx.ReserveCredits(ctx, accountID, price, purpose(kind))
		if err != nil {
			return err
		}
		j.ReservationID = r.ID
		if j, err = tx.CreateAIJob(ctx, j); err != nil {
			return err
		}
		_, err = s.Queue.InsertTx(ctx, tx, JobArgs{AIJobID: j.ID}, nil)
		return err
	})
	if err != nil {
		return store.AIJob{}, err
	}
	return j, nil
}

// KeyContext binds a sealed provider key to its job, so that it opens nowhere else.
func KeyContext(jobID string) []byte { return []byte("ai job provider key\x00" + jobID) }

func purpose(kind string) string {
	if kind == store.AIJobStoryboardStitch {
		return "storyboard stitch"
	}
	return "generate video"
}

// Await reads the job until it has ended or wait has passed, and returns it as it is then.
func (s *Service) Await(ctx context.Context, accountID, id string, wait time.Duration) (store.AIJob, error) {
	deadline := time.Now().Add(wait)
	// The worker may be another process: the row is the only signal. Polls start fast, for
	// the local renderer's few seconds, and slow down for a hosted model's minutes.
	delay := 50 * time.Millisecond
	for {
		j, err := s.Store.GetAIJob(ctx, accountID, id)
		if err != nil || j.Status != store.AIJobRunning {
			return j, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, nil
		case <-time.After(min(delay, left)):
		}
		delay = min(delay*2, time.Second)
	}
}

// Answer is what a succeeded job answers: the fields of the original endpoint, with a freshly
// signed videoUrl. It is empty for a job that has not succeeded.
func (s *Service) Answer(j store.AIJob) (map[string]any, error) {
	out := map[string]any{}
	if j.Status == store.AIJobSucceeded {
		var r Result
		if err := json.Unmarshal(j.Result, &r); err != nil {
			return nil, fmt.Errorf("ai job %s: result: %w", j.ID, err)
		}
		link, err := s.Media.SignedURL(r.VideoKey, LinkTTL)
		if err != nil {
			return nil, err
		}
		out["videoUrl"] = link
		if j.Kind == store.AIJobGenerateVideo {
			out["requestId"], out["aspectRatio"] = r.RequestID, r.AspectRatio
		} else {
			out["duration"] = r.Duration
		}
	}
	return out, nil
}

// storedError is how a job's failure is kept: enough to answer it again as it was.
type storedError struct {
	Status     int               `json:"status"`
	Code       string            `json:"code"`
	Message    string            `json:"message"`
	Fields     map[string]string `json:"fields,omitempty"`
	RetryAfter float64           `json:"retryAfter,omitempty"`
}

// ErrorOf is a failed job's error, as the API answers it.
func ErrorOf(j store.AIJob) *apierr.Error {
	var e storedError
	if err := json.Unmarshal(j.Error, &e); err != nil || e.Status == 0 {
		return apierr.Internal(errors.New("ai job " + j.ID + " failed without a readable error"))
	}
	return &apierr.Error{Status: e.Status, Code: e.Code, Message: e.Message, Fields: e.Fields,
		RetryAfter: time.Duration(e.RetryAfter * float64(time.Second))}
}
