package aivideo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/videogen"
)

// QueueName is the River queue of AI video jobs, apart from publishing's: a few renders at a
// time keep ffmpeg from starving the rest of the process.
const QueueName = "ai_video"

// Concurrency is how many AI video jobs a worker process runs at once: ffmpeg keeps every core
// of a small machine busy on its own.
const Concurrency = 2

// MaxAttempts bounds how often a job is tried: it is retried only after a crash or a shutdown
// cut it off, and resumes from its saved progress.
const MaxAttempts = 3

// MaxResultBytes bounds a stored result. A stitch of 60 scenes stays far below; publishing's own
// 100 MB limit then applies when the video is published.
const MaxResultBytes = 1 << 30

// JobArgs names the ai_jobs row a River job works.
type JobArgs struct {
	AIJobID string `json:"ai_job_id"`
}

// Kind is the River job kind.
func (JobArgs) Kind() string { return "ai_video" }

// InsertOpts puts the job on its own queue.
func (JobArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: MaxAttempts}
}

// Worker works AI video jobs with the Service's parts.
type Worker struct {
	river.WorkerDefaults[JobArgs]
	*Service
	// TempDir holds each job's working files ("" = the system's).
	TempDir string
	// JobTimeout bounds one attempt.
	JobTimeout time.Duration
}

// Timeout is one attempt's time limit.
func (w *Worker) Timeout(*river.Job[JobArgs]) time.Duration { return w.JobTimeout }

// progress is what a job has done that must survive a restart: the requests submitted to the
// hosted model, by scene (0 for generate-video), so that a resumed job waits for them instead
// of paying for them again.
type progress struct {
	Submitted map[int]videogen.Job `json:"submitted,omitempty"`
}

// Work runs a job to its end: settled with its result, or refunded with its error.
func (w *Worker) Work(ctx context.Context, job *river.Job[JobArgs]) error {
	j, err := w.Store.AIJobByID(ctx, job.Args.AIJobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the account was deleted with its jobs
	}
	if err != nil {
		return err
	}
	if j.Status != store.AIJobRunning {
		return nil
	}
	var key string
	if j.ProviderKey != nil {
		plain, err := w.Box.Open(j.ProviderKey, KeyContext(j.ID))
		if err != nil {
			return w.fail(ctx, j, fmt.Errorf("opening the job's provider key: %w", err))
		}
		key = string(plain)
	}
	dir, err := os.MkdirTemp(w.TempDir, "reelay-ai-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var res Result
	if j.Kind == store.AIJobStoryboardStitch {
		res, err = w.stitch(ctx, j, key, dir)
	} else {
		res, err = w.generate(ctx, j, key, dir)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil && job.Attempt < job.MaxAttempts {
			return err // the process is stopping: the next attempt resumes from the progress
		}
		return w.fail(ctx, j, err)
	}
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = w.Store.FinishAIJob(context.WithoutCancel(ctx), j.ID, body, nil, "")
	return err
}

// fail ends a job with err as its answer and refunds its credits.
func (w *Worker) fail(ctx context.Context, j store.AIJob, err error) error {
	e := w.apiError(err)
	if e.Status >= 500 && w.Log != nil {
		w.Log.Error("AI video job failed", "job", j.ID, "kind", j.Kind, "error", err)
	}
	body, _ := json.Marshal(storedError{Status: e.Status, Code: e.Code, Message: e.Message, Fields: e.Fields,
		RetryAfter: e.RetryAfter.Seconds()})
	_, ferr := w.Store.FinishAIJob(context.WithoutCancel(ctx), j.ID, nil, body, purpose(j.Kind)+" failed: "+e.Code)
	return ferr
}

// apiError is the answer a job's failure gets.
func (w *Worker) apiError(err error) *apierr.Error {
	var e *apierr.Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, render.ErrUnavailable):
		var a *apierr.Error
		errors.As(errNoFFmpeg(err), &a)
		return a
	case errors.Is(err, context.DeadlineExceeded):
		return apierr.Newf(http.StatusBadGateway, apierr.CodeUpstreamError,
			"the video was not ready within %s; nothing was charged", w.JobTimeout).Wrap(err)
	}
	return apierr.Internal(err)
}

// providerError is the answer to a hosted model's refusal or failure; field names the prompt
// it was about, keyGiven whether the request brought its own key.
func providerError(err error, field string, keyGiven bool) error {
	var ve *videogen.Error
	if !errors.As(err, &ve) {
		return err
	}
	var e *apierr.Error
	switch ve.Kind {
	case videogen.InputRefused:
		e = apierr.Field(field, "the video model refused it: "+ve.Message)
	case videogen.KeyRefused:
		if keyGiven {
			e = apierr.Field("apiKey", "the video model refused this key")
		} else {
			e = apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "the video model refused this server's key; tell its operator")
		}
	case videogen.RateLimited:
		e = apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimited, "the video model is rate limiting requests; try again later")
		e.RetryAfter = ve.RetryAfter
	case videogen.Timeout:
		e = apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "the video model did not finish in time")
	default:
		e = apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError, "the video model failed: "+ve.Message)
	}
	return e.Wrap(err)
}

// generate makes one clip, working in dir.
func (w *Worker) generate(ctx context.Context, j store.AIJob, key, dir string) (Result, error) {
	var in GenerateInput
	if err := json.Unmarshal(j.Input, &in); err != nil {
		return Result{}, fmt.Errorf("job input: %w", err)
	}
	clip := filepath.Join(dir, "clip.mp4")
	requestID := j.ID
	if w.Generator != nil {
		prog, err := w.submit(ctx, j, map[int]videogen.Request{0: {Prompt: in.Prompt, ImageURL: in.ImageURL, AspectRatio: in.AspectRatio}}, key)
		if err != nil {
			return Result{}, providerError(err, "prompt", key != "")
		}
		requestID = prog.Submitted[0].RequestID
		if err := w.fetchGenerated(ctx, prog.Submitted[0], key, clip, "prompt"); err != nil {
			return Result{}, err
		}
	} else {
		if err := w.render(ctx, dir, clip, in.Prompt, in.ImageKey, in.AspectRatio); err != nil {
			return Result{}, err
		}
	}
	return w.keep(ctx, clip, requestID, in.AspectRatio)
}

// stitch makes the missing scenes and joins all, working in dir.
func (w *Worker) stitch(ctx context.Context, j store.AIJob, key, dir string) (Result, error) {
	var in StitchInput
	if err := json.Unmarshal(j.Input, &in); err != nil {
		return Result{}, fmt.Errorf("job input: %w", err)
	}
	// A hosted model gets every missing scene at once: its queue works them in parallel, and
	// the stitch then takes about as long as one clip.
	var prog progress
	var err error
	if w.Generator != nil {
		asks := map[int]videogen.Request{}
		for i, sc := range in.Scenes {
			if sc.VideoURL == "" {
				asks[i] = videogen.Request{Prompt: sc.Prompt, AspectRatio: in.AspectRatio}
			}
		}
		if prog, err = w.submit(ctx, j, asks, key); err != nil {
			return Result{}, providerError(err, "scenes", key != "")
		}
	}
	inputs := make([]string, len(in.Scenes))
	for i, sc := range in.Scenes {
		inputs[i] = filepath.Join(dir, fmt.Sprintf("scene-%03d.mp4", i))
		switch {
		case sc.VideoURL != "":
			if err := w.download(ctx, sc.VideoURL, inputs[i]); err != nil {
				return Result{}, media.FieldError(fmt.Sprintf("scenes[%d].videoUrl", i), err)
			}
		case w.Generator != nil:
			err = w.fetchGenerated(ctx, prog.Submitted[i], key, inputs[i], fmt.Sprintf("scenes[%d].prompt", i))
		default:
			err = w.render(ctx, dir, inputs[i], sc.Prompt, "", in.AspectRatio)
		}
		if err != nil {
			return Result{}, err
		}
	}
	out := filepath.Join(dir, "stitched.mp4")
	if err := w.Renderer.Join(ctx, out, inputs, in.AspectRatio); err != nil {
		if errors.Is(err, render.ErrInput) {
			return Result{}, apierr.Field("scenes", "a scene's video cannot be decoded: "+err.Error()).Wrap(err)
		}
		return Result{}, err
	}
	return w.keep(ctx, out, "", in.AspectRatio)
}

// submit sends the hosted model the requests not sent yet, saving each as it goes, and returns
// the progress with every request submitted.
func (w *Worker) submit(ctx context.Context, j store.AIJob, asks map[int]videogen.Request, key string) (progress, error) {
	var prog progress
	if err := json.Unmarshal(j.Progress, &prog); err != nil {
		return prog, fmt.Errorf("job progress: %w", err)
	}
	if prog.Submitted == nil {
		prog.Submitted = map[int]videogen.Job{}
	}
	for _, i := range slices.Sorted(maps.Keys(asks)) {
		if _, done := prog.Submitted[i]; done {
			continue
		}
		sub, err := w.Generator.Submit(ctx, key, asks[i])
		if err != nil {
			return prog, err
		}
		prog.Submitted[i] = sub
		body, _ := json.Marshal(prog)
		// Saved before waiting: a restart from here waits for this request, never sends it again.
		if err := w.Store.SaveAIJobProgress(context.WithoutCancel(ctx), j.ID, body); err != nil {
			return prog, err
		}
	}
	return prog, nil
}

// fetchGenerated waits for a submitted request and downloads the video it made to dst.
func (w *Worker) fetchGenerated(ctx context.Context, sub videogen.Job, key, dst, field string) error {
	videoURL, err := w.Generator.Wait(ctx, key, sub)
	if err != nil {
		return providerError(err, field, key != "")
	}
	if err := w.download(ctx, videoURL, dst); err != nil {
		return apierr.New(http.StatusBadGateway, apierr.CodeUpstreamError,
			"the video model's result could not be taken in: "+err.Error()).Wrap(err)
	}
	return nil
}

// render makes a clip locally: from the stored picture imageKey, or from the prompt's text.
func (w *Worker) render(ctx context.Context, dir, dst, prompt, imageKey, aspect string) error {
	if imageKey == "" {
		return w.Renderer.TextClip(ctx, dst, prompt, aspect)
	}
	picture := filepath.Join(dir, "picture")
	if err := w.copyBlob(ctx, imageKey, picture); err != nil {
		return err
	}
	err := w.Renderer.ImageClip(ctx, dst, picture, aspect)
	if errors.Is(err, render.ErrInput) {
		return apierr.Field("imageUrl", "the picture cannot be decoded: "+err.Error()).Wrap(err)
	}
	return err
}

// download writes the video at rawURL to dst: from blob storage when it is this server's own
// media link, else fetched through the fetcher's address policy and size limit. Anything but
// a readable video is refused.
func (w *Worker) download(ctx context.Context, rawURL, dst string) error {
	if st, ok, err := w.Media.Linked(ctx, rawURL, media.VideoKinds); ok {
		if err != nil {
			return err
		}
		return w.copyBlob(ctx, st.Blob.Key, dst)
	}
	resp, err := w.Fetcher.Open(ctx, rawURL, media.MaxVideoBytes)
	if err != nil {
		return err
	}
	defer resp.Close()
	if err := writeFile(dst, resp); err != nil {
		return err
	}
	f, err := os.Open(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	head := make([]byte, media.SniffLen)
	n, _ := io.ReadFull(f, head)
	if k, ok := media.Sniff(head[:n]); !ok || !k.IsVideo() {
		return fmt.Errorf("%w: the file is not MP4, MOV or WebM", media.ErrUnsupportedFormat)
	}
	_, err = media.Probe(f, fi.Size())
	return err
}

func (w *Worker) copyBlob(ctx context.Context, key, dst string) error {
	r, err := w.Media.Open(ctx, key, 0)
	if err != nil {
		return err
	}
	defer r.Close()
	return writeFile(dst, r)
}

func writeFile(dst string, r io.Reader) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// keep stores the finished video and describes it.
func (w *Worker) keep(ctx context.Context, path, requestID, aspect string) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	st, err := media.IngestUpload(ctx, w.Media, f, MaxResultBytes, media.VideoKinds)
	if err != nil {
		return Result{}, fmt.Errorf("storing the video: %w", err)
	}
	return Result{VideoKey: st.Blob.Key, RequestID: requestID, AspectRatio: aspect, Duration: st.Info.Duration.Seconds()}, nil
}

// SweepArgs is the periodic job that ends AI jobs River gave up on.
type SweepArgs struct{}

// Kind is the River job kind.
func (SweepArgs) Kind() string { return "ai_video_sweep" }

// SweepJob runs the sweep every ten minutes.
func SweepJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return SweepArgs{}, nil }, nil)
}

// Sweeper fails, and refunds, jobs still running long after every attempt could have ended: a
// job whose last attempt died with its process, which River then discards without running.
type Sweeper struct {
	river.WorkerDefaults[SweepArgs]
	Store *store.Store
	// StaleAfter is how long after its last progress a running job is given up.
	StaleAfter time.Duration
}

// Work ends the stale jobs.
func (s *Sweeper) Work(ctx context.Context, _ *river.Job[SweepArgs]) error {
	ids, err := s.Store.StaleAIJobs(ctx, time.Now().Add(-s.StaleAfter))
	if err != nil {
		return err
	}
	body, _ := json.Marshal(storedError{Status: http.StatusInternalServerError, Code: apierr.CodeInternal,
		Message: "the job stopped with the process running it and could not resume; its credits were refunded"})
	for _, id := range ids {
		if _, err := s.Store.FinishAIJob(ctx, id, nil, body, "abandoned by a stopped process"); err != nil {
			return err
		}
	}
	return nil
}
