package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/store"
)

// RenditionArgs is the job that makes one rendition. The destinations that need it wait for
// it (Worker.RenditionPoll) before they start on their platform.
type RenditionArgs struct {
	Key string `json:"key"`
}

// Kind names the job for River.
func (RenditionArgs) Kind() string { return "make_rendition" }

// InsertOpts puts conversions on their own queue, whose worker count bounds the ffmpeg
// processes running at once.
func (RenditionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ConvertQueue, MaxAttempts: 3}
}

// ConvertQueue is the River queue of conversions.
const ConvertQueue = "convert"

// RenditionTimeout is River's limit for one run of a conversion job; each conversion has its
// own, shorter limit (ConversionLimit).
const RenditionTimeout = 2 * time.Hour

// ConversionLimit is how long converting a video of duration d may take: two minutes, and
// ten seconds a second of video, which leaves a two-pass 1080p encode on two cores (about
// real time a pass) five times the time it needs; at most RenditionTimeout.
func ConversionLimit(d time.Duration) time.Duration {
	return min(2*time.Minute+10*d, RenditionTimeout-time.Minute)
}

// RenditionWorker makes renditions with ffmpeg: it reads the post's video as a local file (the
// stored file itself on a local disk, a temporary copy from S3), converts it into a temporary
// file, checks the result against the rules of every platform waiting for it, and stores it.
// A run that dies converts again from the start; nothing is uploaded before the rendition is
// stored whole.
type RenditionWorker struct {
	river.WorkerDefaults[RenditionArgs]

	Store     *store.Store
	Media     *media.Store
	Converter Converter
	Hub       *Hub
	Log       *slog.Logger
	// TempDir holds the temporary files of conversions with S3 storage (os.TempDir when "").
	TempDir string
}

// Timeout is River's limit for one run.
func (w *RenditionWorker) Timeout(*river.Job[RenditionArgs]) time.Duration { return RenditionTimeout }

// Work makes one rendition. A failure that trying again cannot mend (a file ffmpeg cannot
// decode, a result that still breaks a rule, no ffmpeg) fails the rendition at once, and with
// it the destinations waiting for it; others are retried by River, and fail it after the last
// attempt.
func (w *RenditionWorker) Work(ctx context.Context, job *river.Job[RenditionArgs]) error {
	err := w.make(ctx, job.Args.Key)
	var final *finalError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &final), ctx.Err() == nil && job.Attempt >= job.MaxAttempts:
		w.log().Warn("conversion failed", "rendition", job.Args.Key, "error", err)
		if ferr := w.Store.FailRendition(context.WithoutCancel(ctx), job.Args.Key, err.Error()); ferr != nil && !errors.Is(ferr, store.ErrStale) {
			return ferr
		}
		if _, posts, err := w.Store.RenditionPlatforms(context.WithoutCancel(ctx), job.Args.Key); err == nil {
			w.notify(posts)
		}
		return nil
	}
	return err
}

// finalError is a failure that another attempt would meet again.
type finalError struct{ msg string }

func (e *finalError) Error() string { return e.msg }

func final(format string, args ...any) error { return &finalError{fmt.Sprintf(format, args...)} }

func (w *RenditionWorker) make(ctx context.Context, key string) error {
	r, err := w.Store.GetRendition(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted with its source
	}
	if err != nil || r.Status != store.RenditionPending {
		return err
	}
	var c render.Conversion
	if err := json.Unmarshal([]byte(r.Conversion), &c); err != nil {
		return final("reading the conversion: %v", err)
	}
	src, err := w.Store.GetMedia(ctx, r.SourceSHA256)
	if err != nil {
		return fmt.Errorf("publish: rendition source: %w", err)
	}
	limit := ConversionLimit(src.Duration)
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	dir := w.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	if dir, err = w.Media.TempDir(dir); err != nil {
		return err
	}
	sweep(dir, time.Now().Add(-RenditionTimeout))
	in, done, err := w.Media.LocalFile(cctx, src.BlobKey, dir)
	if errors.Is(err, media.ErrNotFound) {
		return final("the post's video is no longer stored on this server")
	}
	if err != nil {
		return err
	}
	defer done()
	// The posts told of the progress are read once, not at each tick; one that comes to share
	// the rendition meanwhile sees its progress at its next poll, and is told of the end.
	_, waiting, err := w.Store.RenditionPlatforms(ctx, key)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, ".rendition-"+key[:16]+".mp4")
	defer os.Remove(out)
	err = w.Converter.Convert(cctx, out, in, c, w.progress(ctx, key, waiting))
	switch {
	case err == nil:
	case ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return final("converting the video took longer than its limit of %s", limit.Round(time.Second))
	case errors.Is(err, render.ErrInput), errors.Is(err, render.ErrUnavailable):
		return final("%v", err)
	default:
		return err
	}

	info, size, err := media.ProbeFile(out)
	if err != nil {
		return final("the converted file cannot be read: %v", err)
	}
	platforms, posts, err := w.Store.RenditionPlatforms(ctx, key)
	if err != nil {
		return err
	}
	// The check after: a conversion aimed at a limit (a size) may miss it.
	for _, p := range platforms {
		d, _ := registry.Describe(p)
		if broken := conform.Check(d, size, info); len(broken) > 0 {
			return final("the converted video still does not fit: it %s", strings.Join(broken, "; "))
		}
	}
	// Stored under its own name, which is not its bytes' hash: that would mean reading the
	// whole file once more (a third of a remux's time on a local disk).
	b, err := w.Media.PutFileAt(ctx, media.KeyForRendition(key), out, media.KindMP4)
	if err != nil {
		return err
	}
	err = w.Store.FinishRendition(ctx, key, store.Media{SHA256: b.SHA256, BlobKey: b.Key, Size: b.Size,
		Width: info.Width, Height: info.Height, Duration: info.Duration})
	if errors.Is(err, store.ErrStale) {
		return nil // deleted with its source meanwhile
	}
	if err != nil {
		return err
	}
	w.log().Info("rendition made", "rendition", key, "bytes", b.Size)
	w.notify(posts)
	return nil
}

// progress shows a conversion's progress on the destinations that wait for it, at most once a
// second and only when the whole percentage moves.
func (w *RenditionWorker) progress(ctx context.Context, key string, posts []string) func(float64) {
	last, lastAt := -1, time.Time{}
	return func(fraction float64) {
		pct := int(fraction * 100)
		if pct <= last || time.Since(lastAt) < time.Second {
			return
		}
		last, lastAt = pct, time.Now()
		if err := w.Store.SaveRenditionProgress(ctx, key, fraction, fmt.Sprintf("converting the video: %d%%", pct)); err != nil {
			w.log().Warn("could not record a conversion's progress", "rendition", key, "error", err)
			return
		}
		w.notify(posts)
	}
}

// notify wakes those who wait on the posts whose destinations wait for the rendition.
func (w *RenditionWorker) notify(posts []string) {
	if w.Hub == nil {
		return
	}
	for _, id := range posts {
		w.Hub.Notify(id)
	}
}

func (w *RenditionWorker) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// Names of the temporary files of a conversion: the rendition on its way, ffmpeg's own (see
// render), and a copy of the source from S3.
var tempPrefixes = []string{".rendition-", ".render-", ".source-"}

// sweep deletes from dir the temporary files of conversions that died (a process killed
// mid-way removes nothing) last written before cutoff, which no running conversion still
// writes.
func sweep(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !slices.ContainsFunc(tempPrefixes, func(p string) bool { return strings.HasPrefix(e.Name(), p) }) {
			continue
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
