package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/jobs"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/store"
)

// Worker takes destinations through their provider's steps, as River jobs. Each step's
// outcome (the platform's own references) is stored before the next step, so a job that
// dies anywhere resumes from the last stored state. Transient platform errors snooze the job
// with exponential back-off and jitter (honouring Retry-After) up to RetryAttempts in a row;
// permanent ones fail the destination at once with the platform's message. A Step's error is
// what is left after the provider repeated the failing call in place (Repeat).
type Worker struct {
	river.WorkerDefaults[PublishArgs]

	Store     *store.Store
	Media     *media.Store
	Providers map[string]provider.Provider
	Access    ChannelAccess
	Hub       *Hub
	Log       *slog.Logger
	// Metrics counts steps and settled destinations; nil counts nothing.
	Metrics *Metrics
	// Tokens renews channels' OAuth tokens: before a step when they are about to expire, and
	// once when the platform refuses one. nil never renews.
	Tokens TokenRefresher

	// RetryAttempts bounds the transient failures of one step in a row (default 5);
	// RetryBaseDelay is the first back-off (default 2 s), doubled per failure (see backoff).
	RetryAttempts  int
	RetryBaseDelay time.Duration
	// StepTimeout bounds one step (default 10 min: a chunk of a slow upload).
	StepTimeout time.Duration
	// RunBudget is how long a job keeps stepping before it yields its worker slot (default 1 min).
	RunBudget time.Duration
	// SleepUnder: waits a provider asks for that are shorter than this are slept in the job;
	// longer ones snooze it (default 2 s).
	SleepUnder time.Duration
	// MediaLinkTTL is the lifetime of the signed media links pull-based platforms fetch
	// (default 24 h).
	MediaLinkTTL time.Duration
	// RenditionPoll is how often a destination whose rendition is being made looks whether it
	// is ready (default 2 s).
	RenditionPoll time.Duration

	// once fills the defaults before the first job; jobs run concurrently and only read.
	once sync.Once
}

func (w *Worker) defaults() {
	if w.RetryAttempts <= 0 {
		w.RetryAttempts = 5
	}
	if w.RetryBaseDelay <= 0 {
		w.RetryBaseDelay = 2 * time.Second
	}
	if w.StepTimeout <= 0 {
		w.StepTimeout = 10 * time.Minute
	}
	if w.RunBudget <= 0 {
		w.RunBudget = time.Minute
	}
	if w.SleepUnder <= 0 {
		w.SleepUnder = 2 * time.Second
	}
	if w.MediaLinkTTL <= 0 {
		w.MediaLinkTTL = 24 * time.Hour
	}
	if w.RenditionPoll <= 0 {
		w.RenditionPoll = 2 * time.Second
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
}

// TokenRefresher renews a channel's access token when it is due (or at once when force) and
// returns the channel as stored afterwards; a refusal is a permanent auth_expired *Error.
type TokenRefresher interface {
	Refresh(ctx context.Context, ch store.Channel, force bool) (store.Channel, error)
}

// Timeout is River's limit for one run of the job: the run budget plus one step, with room.
func (w *Worker) Timeout(*river.Job[PublishArgs]) time.Duration {
	w.once.Do(w.defaults)
	return w.RunBudget + w.StepTimeout + time.Minute
}

// Work runs one destination job.
func (w *Worker) Work(ctx context.Context, job *river.Job[PublishArgs]) error {
	w.once.Do(w.defaults)
	err := w.work(ctx, job.Args)
	if errors.Is(err, errStop) {
		return nil
	}
	if err != nil && jobs.CutByStop(ctx) {
		// The process stopped in the middle of a step, past its shutdown timeout: the step
		// says nothing of the platform, and the job resumes from the last stored step
		// without an attempt spent (nor the destination failed on a last one).
		w.Log.Info("stopping: a step was cut; the destination resumes from its last stored step", "destination", job.Args.DestinationID)
		return river.JobSnooze(0)
	}
	var snooze *river.JobSnoozeError
	if err != nil && !errors.As(err, &snooze) && job.Attempt >= job.MaxAttempts {
		// River gives up on the job after this; the destination must not stay open forever.
		w.fail(context.WithoutCancel(ctx), job.Args, "", "", provider.Permanent(provider.CategoryInternal, 0, "reelay could not process this destination: %v", err))
	}
	return err
}

func (w *Worker) work(ctx context.Context, args PublishArgs) error {
	dl, err := w.Store.LoadDelivery(ctx, args.DestinationID, args.Seq)
	if err == nil && dl.Post.Status == store.PostScheduled {
		// The first job of a scheduled post fires it, under the post's lock, so that a cancel
		// or an edit cannot slip in. Once the post is processing neither can happen any more,
		// and the read above is enough.
		err = w.Store.StartDelivery(ctx, args.DestinationID, args.Seq)
	}
	if errors.Is(err, store.ErrStale) || errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	log := w.Log.With("destination", dl.Destination.ID, "post", dl.Post.ID, "platform", dl.Destination.Platform)
	prov := w.Providers[dl.Destination.Platform]
	if prov == nil {
		return w.fail(ctx, args, dl.Destination.Platform, dl.Channel.ID, provider.Permanent(provider.CategoryInternal, 0, "this server has no %s provider", dl.Destination.Platform))
	}
	if dl.Channel.Status == store.ChannelReauthRequired {
		return w.fail(ctx, args, dl.Destination.Platform, "", provider.Permanent(provider.CategoryAuthExpired, 0, "%s refused the channel's credentials earlier; reconnect the channel", dl.Destination.Platform))
	}
	if dl.Destination.RenditionKey != "" {
		if err := w.useRendition(ctx, args, &dl); err != nil {
			return err
		}
	}
	if w.Tokens != nil {
		ch, err := w.Tokens.Refresh(ctx, dl.Channel, false)
		switch {
		case err == nil:
			dl.Channel = ch
		case !provider.AsError(err).Transient:
			return w.fail(ctx, args, dl.Destination.Platform, dl.Channel.ID, provider.AsError(err))
		}
		// A transient failure leaves the old token, which may well still work.
	}
	d, err := w.destination(dl)
	if err != nil {
		return w.fail(ctx, args, dl.Destination.Platform, dl.Channel.ID, provider.Permanent(provider.CategoryAuthExpired, 0, "%v; reconnect the channel", err))
	}

	started := time.Now()
	attempts := dl.Destination.Attempts
	status := dl.Destination.Status
	renewed := false
	for {
		if jobs.IsStopping(ctx) {
			// The process is stopping: the state stored after the last step is where
			// another worker, or this one restarted, takes the destination on at once.
			log.Info("stopping: the destination resumes after its last step")
			return river.JobSnooze(0)
		}
		stepCtx, cancel := context.WithTimeout(ctx, w.StepTimeout)
		stepStarted := time.Now()
		out, err := prov.Step(stepCtx, d)
		cancel()
		if err == nil || ctx.Err() == nil { // a step cut by shutdown says nothing of the platform
			w.Metrics.step(dl.Destination.Platform, time.Since(stepStarted), err)
		}
		d.Continued = err == nil
		if err != nil {
			if ctx.Err() != nil {
				// Shutdown or the job's time limit: River runs the job again, from the last
				// stored state.
				return ctx.Err()
			}
			pe := provider.AsError(err)
			if gone := w.missingMedia(ctx, dl); gone != "" {
				// Whatever the platform or the provider made of it, the cause is ours, and
				// retrying cannot bring the bytes back.
				pe = provider.Permanent(provider.CategoryInternal, 0, "the post's %s is no longer stored on this server; publish it again", gone)
			}
			if pe.Category == provider.CategoryAuthExpired && w.Tokens != nil && !renewed {
				// The platform refused the token: renew it once and repeat the step (a
				// refused request changed nothing on the platform).
				renewed = true
				if ch, rerr := w.Tokens.Refresh(ctx, dl.Channel, true); rerr == nil {
					dl.Channel = ch
					if _, creds, oerr := w.Access.Open(ch); oerr == nil {
						log.Info("platform refused the token; renewed it")
						d.Credentials = creds
						continue
					}
				} else if rpe := provider.AsError(rerr); rpe.Transient {
					pe = rpe
				}
			}
			attempts++
			if !pe.Transient || attempts >= w.RetryAttempts {
				log.Warn("destination failed", "category", pe.Category, "attempts", attempts, "error", pe.Message)
				return w.fail(ctx, args, dl.Destination.Platform, dl.Channel.ID, pe)
			}
			delay := w.backoff(attempts, pe.RetryAfter)
			log.Info("transient platform error; retrying", "category", pe.Category, "attempt", attempts, "in", delay, "error", pe.Message)
			msg := fmt.Sprintf("retrying in %s (attempt %d of %d) after: %s", delay.Round(time.Second), attempts+1, w.RetryAttempts, pe.Message)
			if err := w.save(ctx, args, store.StepUpdate{Status: status, Message: msg, Attempts: attempts}); err != nil {
				return err
			}
			return river.JobSnooze(delay)
		}
		attempts = 0
		if out.Status != "" {
			status = out.Status
		}
		u := store.StepUpdate{Status: status, State: out.State, ExternalID: out.ExternalID, URL: out.URL, Message: out.Message}
		// Stored even when the run is being cut meanwhile: the platform did the step, and the
		// next run must not do it again (a second upload, a second post).
		saveCtx, cancelSave := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
		err = w.save(saveCtx, args, u)
		cancelSave()
		if err != nil {
			return err
		}
		if out.Done() {
			log.Info("destination settled", "status", out.Status, "external_id", out.ExternalID)
			w.Metrics.settle(dl.Destination.Platform, out.Status, "")
			return nil
		}
		if out.State != nil {
			d.State = out.State
		}
		if out.After >= w.SleepUnder || time.Since(started) > w.RunBudget {
			return river.JobSnooze(out.After)
		}
		if out.After > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-jobs.Stopping(ctx):
				return river.JobSnooze(out.After)
			case <-time.After(out.After):
			}
		}
	}
}

// useRendition makes the rendition the destination waits for its video. While the rendition
// is being made the job snoozes (the rendition job shows its progress in the destination's
// message); when it could not be made, the destination fails saying why.
func (w *Worker) useRendition(ctx context.Context, args PublishArgs, dl *store.Delivery) error {
	name := dl.Destination.Platform
	r, err := w.Store.GetRendition(ctx, dl.Destination.RenditionKey)
	var failure *provider.Error
	switch {
	case errors.Is(err, store.ErrNotFound):
		failure = provider.Permanent(provider.CategoryInternal, 0, "the converted video is no longer stored on this server; publish it again")
	case err != nil:
		return err
	case r.Status == store.RenditionFailed:
		failure = provider.Permanent(provider.CategoryMediaRejected, 0, "reelay could not convert the video for %s: %s", registry.DisplayName(name), r.Error)
	case r.Status != store.RenditionReady:
		return river.JobSnooze(w.RenditionPoll)
	default:
		dl.Video = r.Output
		if dl.Video.SHA256 == "" {
			// Moved into storage without being read: its name (a digest of its source and
			// conversion) names its bytes as well.
			dl.Video.SHA256 = r.Key
		}
		return nil
	}
	if err := w.fail(ctx, args, name, "", failure); err != nil {
		return err
	}
	return errStop // settled: nothing is sent
}

// save stores a step's outcome; a destination that moved on meanwhile (canceled) ends the job
// quietly through ErrStale → nil.
func (w *Worker) save(ctx context.Context, args PublishArgs, u store.StepUpdate) error {
	postID, _, err := w.Store.SaveStep(ctx, args.DestinationID, args.Seq, u)
	if errors.Is(err, store.ErrStale) {
		return errStop
	}
	if err == nil && w.Hub != nil {
		w.Hub.Notify(postID)
	}
	return err
}

// missingMedia names the delivery's media whose bytes are gone from storage ("" when none is):
// asked only after a step failed, so it costs nothing on the way that works.
func (w *Worker) missingMedia(ctx context.Context, dl store.Delivery) string {
	if ok, err := w.Media.Exists(ctx, dl.Video.BlobKey); err == nil && !ok {
		return "video"
	}
	if dl.Thumbnail != nil {
		if ok, err := w.Media.Exists(ctx, dl.Thumbnail.BlobKey); err == nil && !ok {
			return "thumbnail"
		}
	}
	return ""
}

// saveTimeout bounds the store write of a step's outcome, which does not end with the run.
const saveTimeout = 10 * time.Second

// errStop ends a job whose destination moved on without it.
var errStop = errors.New("destination moved on")

// fail settles a destination as failed with the platform's message and category. An
// auth_expired failure marks the channel reauth_required.
func (w *Worker) fail(ctx context.Context, args PublishArgs, platformName, channelID string, pe *provider.Error) error {
	err := w.save(ctx, args, store.StepUpdate{Status: provider.StatusFailed, Error: pe.Message, ErrorCategory: pe.Category})
	if errors.Is(err, errStop) {
		return nil
	}
	if err != nil {
		return err
	}
	w.Metrics.settle(platformName, provider.StatusFailed, pe.Category)
	if pe.Category == provider.CategoryAuthExpired && channelID != "" {
		return w.Store.SetChannelStatus(ctx, channelID, store.ChannelReauthRequired)
	}
	return nil
}

// backoff is the wait before retry n (1-based): exponential from RetryBaseDelay with equal
// jitter, capped at 256 times the base or 10 minutes, whichever is less, and never shorter
// than the platform's Retry-After.
func (w *Worker) backoff(n int, retryAfter time.Duration) time.Duration {
	d := w.RetryBaseDelay << min(n-1, 8)
	d = min(d, 10*time.Minute)
	d = d/2 + rand.N(d/2+1)
	return max(d, retryAfter)
}

// destination builds what the provider needs from a delivery: unsealed credentials, the base
// URL, and media readers and links.
func (w *Worker) destination(dl store.Delivery) (*provider.Destination, error) {
	base, creds, err := w.Access.Open(dl.Channel)
	if err != nil {
		return nil, err
	}
	d := &provider.Destination{
		ID: dl.Destination.ID, Account: dl.Channel.ExternalAccountID, Credentials: creds, BaseURL: base,
		Title: dl.Post.Title, Caption: dl.Post.Caption, Options: dl.Destination.Options, State: dl.Destination.State,
		Video: w.mediaOf(dl.Video),
	}
	if dl.Thumbnail != nil {
		m := w.mediaOf(*dl.Thumbnail)
		d.Thumbnail = &m
	}
	return d, nil
}

func (w *Worker) mediaOf(m store.Media) provider.Media {
	key := m.BlobKey
	link, _ := w.Media.SignedURL(key, w.MediaLinkTTL)
	return provider.Media{
		Size: m.Size, SHA256: m.SHA256, ContentType: m.ContentType, Width: m.Width, Height: m.Height, Duration: m.Duration,
		Open: func(ctx context.Context, offset int64) (io.ReadCloser, error) { return w.Media.Open(ctx, key, offset) },
		URL:  link,
	}
}
