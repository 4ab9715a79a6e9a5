package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// Enqueuer inserts jobs inside a store transaction (internal/jobs.Queue).
type Enqueuer interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Service takes publish requests: it validates them completely, takes the media in, and
// writes the post, its destinations and their jobs in one transaction.
type Service struct {
	Store   *store.Store
	Media   *media.Store
	Fetcher *media.Fetcher
	Queue   Enqueuer
	Hub     *Hub
	Log     *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// ListeningPoll is how often Wait reads a post while the Hub hears other processes'
	// settled posts (2 s when 0).
	ListeningPoll time.Duration
	// Converter makes the renditions of videos that a platform would refuse as they are; nil
	// refuses such a publish, as a server without ffmpeg does.
	Converter Converter
}

// converterReady says why a conversion cannot run (nil when it can), asking the converter at
// most once per request.
func (s *Service) converterReady(ctx context.Context) func() error {
	var checked bool
	var err error
	return func() error {
		if !checked {
			checked = true
			if s.Converter == nil {
				err = errors.New("no converter is configured")
			} else {
				err = s.Converter.Check(ctx)
			}
		}
		return err
	}
}

// Submission is one publish request as it arrived.
type Submission struct {
	AccountID string
	Request   Request
	// Video and Thumbnail are files uploaded with the request (multipart), already in
	// storage; nil means the request names a URL (or has no thumbnail).
	Video, Thumbnail *media.Stored
	// IdempotencyKey is the client's Idempotency-Key; RequestHash fingerprints the request as
	// sent, so that a reused key with another body is recognised.
	IdempotencyKey string
	RequestHash    string
	DryRun         bool
	// CRLFLineEnds: the form came from a browser, whose textareas end lines with CRLF; ReadForm
	// takes them as LF (Request.NormalizeNewlines) instead of refusing the carriage returns.
	CRLFLineEnds bool
}

// Result is the outcome of Submit.
type Result struct {
	Post store.Post
	// Replayed: the idempotency key was used before with the same request; Post is that
	// request's post and nothing new was stored or sent.
	Replayed bool
	// DryRun is set instead of Post for a dry run.
	DryRun *DryRun
}

// DryRun is what a publish would send, computed without storing or sending anything.
type DryRun struct {
	Status       string
	Video        media.Info
	VideoBytes   int64
	Destinations []DryRunDestination
}

// DryRunDestination is what one destination would receive.
type DryRunDestination struct {
	Platform     string
	ChannelID    string
	ChannelTitle string
	Payload      json.RawMessage
	// Derived names the texts of Payload that reelay filled in, and where each came from.
	Derived Derived
	// Conversion is what the video would need for the platform.
	Conversion conform.Plan
}

// PublishArgs is the job that takes one destination through its steps.
type PublishArgs struct {
	DestinationID string `json:"destination_id"`
	// Seq is the destination's job number when the job was inserted; a job whose number is
	// no longer current (the post was rescheduled, canceled or retried) does nothing.
	Seq int `json:"seq"`
}

// Kind names the job for River.
func (PublishArgs) Kind() string { return "publish_destination" }

// InsertOpts puts publish jobs on their own queue, with the retry budget the worker manages
// itself (transient platform errors snooze, they do not fail the job).
func (PublishArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: 10}
}

// QueueName is the River queue of publish jobs.
const QueueName = "publish"

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Submit validates a publish request completely, then (unless it is a dry run) stores it and
// queues its destinations. Validation failures are *apierr.Error values naming the fields;
// nothing is left behind by a refused request, not even the media it uploaded.
func (s *Service) Submit(ctx context.Context, sub Submission) (res Result, err error) {
	// Media taken in by this request are deleted again if the request is refused.
	var fresh []*media.Stored
	for _, m := range []*media.Stored{sub.Video, sub.Thumbnail} {
		if m != nil {
			fresh = append(fresh, m)
		}
	}
	defer func() {
		if err != nil || sub.DryRun || res.Replayed {
			s.Discard(fresh...)
		}
	}()

	req := &sub.Request
	scheduledFor, f := req.CheckStatic(s.now(), sub.Video != nil, sub.Thumbnail != nil)
	if err := f.Err(); err != nil {
		return res, err
	}
	account, err := s.Store.GetAccount(ctx, sub.AccountID)
	if err != nil {
		return res, err
	}
	if account.Suspended {
		return res, errSuspended
	}
	project, err := s.Store.GetProject(ctx, sub.AccountID, req.ProjectID)
	if errors.Is(err, store.ErrNotFound) {
		return res, apierr.NotFound("project")
	}
	if err != nil {
		return res, err
	}
	channels, err := s.destinationChannels(ctx, project, req, &f)
	if err != nil {
		return res, err
	}
	dests := make([]store.Destination, len(channels))
	derived := map[string]Derived{}
	for i, c := range channels {
		dests[i] = store.Destination{ChannelID: c.ID, ChannelName: c.Name, Platform: c.Platform}
		dests[i].Options, derived[c.Platform] = req.EffectiveOptions(c.Platform, &f)
	}
	if err := f.Err(); err != nil {
		return res, err
	}

	// Cheap refusals before a download: a reused key (its post answers a replay), a spent
	// allowance. A dry run meets them too, and the duplicate check below, so that it answers
	// what the request itself would; it only reads, so it claims no key and spends nothing.
	if sub.IdempotencyKey != "" {
		hash, postID, err := s.Store.LookupIdempotencyKey(ctx, sub.AccountID, sub.IdempotencyKey)
		switch {
		case err == nil && hash == sub.RequestHash:
			return s.replay(ctx, sub.AccountID, postID)
		case err == nil:
			return res, errIdempotencyConflict
		case !errors.Is(err, store.ErrNotFound):
			return res, err
		}
	}
	if err := s.checkAllowance(ctx, account); err != nil {
		return res, err
	}

	videoField := "video"
	if sub.Video == nil {
		videoField = "video_url"
		stored, err := s.ingestURL(ctx, req.VideoURL, media.MaxVideoBytes, media.VideoKinds)
		if err != nil {
			return res, media.FieldError(videoField, err)
		}
		sub.Video = &stored
		fresh = append(fresh, sub.Video)
	}
	if sub.Thumbnail == nil && req.ThumbnailURL != "" {
		stored, err := s.ingestURL(ctx, req.ThumbnailURL, media.MaxImageBytes, media.ImageKinds)
		if err != nil {
			return res, media.FieldError("thumbnail_url", err)
		}
		sub.Thumbnail = &stored
		fresh = append(fresh, sub.Thumbnail)
	}
	plans := planConversions(&f, videoField, req, dests, sub.Video.Blob.SHA256, sub.Video.Blob.Size, sub.Video.Info, s.converterReady(ctx))
	if err := f.Err(); err != nil {
		return res, err
	}

	np := store.NewPost{
		AccountID: sub.AccountID, ProjectID: project.ID, Title: req.Title, Caption: req.Caption,
		Video: storedMedia(sub.Video), ContentHash: contentHash(sub.Video.Blob.SHA256, req.Title, req.Caption),
		ScheduledFor: scheduledFor, Destinations: dests, IdempotencyKey: sub.IdempotencyKey,
		RequestHash: sub.RequestHash, AllowDuplicate: req.AllowDuplicate,
	}
	if sub.DryRun {
		if !req.AllowDuplicate {
			if id, err := s.Store.DuplicateOf(ctx, np); err != nil {
				return res, err
			} else if id != "" {
				return res, errDuplicate(id)
			}
		}
		dr := &DryRun{Status: store.PostProcessing, Video: sub.Video.Info, VideoBytes: sub.Video.Blob.Size}
		if scheduledFor != nil {
			dr.Status = store.PostScheduled
		}
		for i, d := range dests {
			dr.Destinations = append(dr.Destinations, DryRunDestination{Platform: d.Platform, ChannelID: d.ChannelID,
				ChannelTitle: channels[i].Name, Payload: d.Options, Derived: derived[d.Platform], Conversion: plans[d.Platform]})
		}
		return Result{DryRun: dr}, nil
	}

	if np.Request, err = req.stored(derived); err != nil {
		return res, err
	}
	if sub.Thumbnail != nil {
		m := storedMedia(sub.Thumbnail)
		np.Thumbnail = &m
	}
	for _, m := range fresh {
		if m.Claim != "" {
			np.Claims = append(np.Claims, m.Claim)
		}
	}
	post, err := s.Store.CreatePost(ctx, np, func(tx *store.Tx, p store.Post) error {
		return EnqueueDestinations(ctx, s.Queue, tx, p)
	})
	var replay *store.ReplayError
	var dup *store.DuplicateError
	switch {
	case errors.As(err, &replay):
		return s.replay(ctx, sub.AccountID, replay.PostID)
	case errors.As(err, &dup):
		return res, errDuplicate(dup.PostID)
	case errors.Is(err, store.ErrIdempotencyConflict):
		return res, errIdempotencyConflict
	case errors.Is(err, store.ErrAccountSuspended):
		return res, errSuspended
	case errors.Is(err, store.ErrMonthlyLimit):
		u, _ := s.Store.GetUsage(ctx, sub.AccountID)
		return res, errMonthlyLimit(u)
	case err != nil:
		return res, err
	}
	fresh = nil // the post owns its media now
	full, err := s.Store.GetPost(ctx, sub.AccountID, post.ID)
	if err != nil {
		return res, err
	}
	return Result{Post: full}, nil
}

var (
	errSuspended = apierr.New(http.StatusForbidden, apierr.CodeAccountSuspended,
		"this account is suspended; contact the operator of this server")
	errIdempotencyConflict = apierr.New(http.StatusConflict, apierr.CodeIdempotencyConflict,
		"this Idempotency-Key was used in the last 24 hours with a different request; use a new key for a new request")
)

// errDuplicate is the 409 for the same video and text to a channel as postID (store.DuplicateError).
func errDuplicate(postID string) error {
	e := apierr.Newf(http.StatusConflict, apierr.CodeDuplicatePost,
		"the same video and text went to the same channel less than %d minutes ago as post %s; set \"allow_duplicate\": true to publish it again",
		int(store.DuplicateWindow.Minutes()), postID)
	e.Extra = map[string]any{"post_id": postID}
	return e
}

// checkAllowance refuses a publish of an account whose monthly allowance is spent: a cheap
// refusal before any media is taken in (CreatePost counts the post in its transaction).
func (s *Service) checkAllowance(ctx context.Context, account store.Account) error {
	u, err := s.Store.UsageOf(ctx, account)
	if err != nil {
		return err
	}
	if u.MonthlyPostLimit != nil && u.Posts >= *u.MonthlyPostLimit {
		return errMonthlyLimit(u)
	}
	return nil
}

func errMonthlyLimit(u store.Usage) error {
	limit := 0
	if u.MonthlyPostLimit != nil {
		limit = *u.MonthlyPostLimit
	}
	e := apierr.Newf(http.StatusForbidden, apierr.CodeMonthlyLimitReached,
		"the monthly post limit of %d is reached for %s; it renews on the first of next month (UTC)", limit, u.Month)
	e.Extra = map[string]any{"monthly_post_limit": limit, "posts_this_month": u.Posts}
	return e
}

func (s *Service) replay(ctx context.Context, accountID, postID string) (Result, error) {
	p, err := s.Store.GetPost(ctx, accountID, postID)
	if err != nil {
		return Result{}, err
	}
	return Result{Post: p, Replayed: true}, nil
}

// EnqueueDestinations inserts one publish job per destination of p: at once, or at the post's
// scheduled time. The renditions they need are made at once, scheduled or not, so that a
// scheduled post's file is ready when it fires.
func EnqueueDestinations(ctx context.Context, q Enqueuer, tx *store.Tx, p store.Post) error {
	if err := ensureRenditions(ctx, q, tx, p); err != nil {
		return err
	}
	for _, d := range p.Destinations {
		opts := PublishArgs{}.InsertOpts()
		if p.ScheduledFor != nil {
			opts.ScheduledAt = *p.ScheduledFor
		}
		if _, err := q.InsertTx(ctx, tx, PublishArgs{DestinationID: d.ID, Seq: d.Seq}, &opts); err != nil {
			return fmt.Errorf("publish: queue destination: %w", err)
		}
	}
	return nil
}

// destinationChannels resolves the channels a request goes to (docs/CONTRACT.md, Publishing):
// the listed channel_ids, which must be the project's; else the project's channels on the
// requested platforms (default youtube, instagram, tiktok), each platform needing one.
func (s *Service) destinationChannels(ctx context.Context, project store.Project, req *Request, f *apierr.Fields) ([]store.Channel, error) {
	all, err := s.Store.ListChannels(ctx, project.AccountID, project.ID)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Channel, len(all))
	for _, c := range all {
		byID[c.ID] = c
	}
	var out []store.Channel
	if len(req.ChannelIDs) > 0 {
		for i, id := range req.ChannelIDs {
			c, ok := byID[id]
			if !ok {
				if store.ValidID(id) {
					f.Addf(fmt.Sprintf("channel_ids[%d]", i), "no channel %s in project %s (GET /channels?projectId=%s lists them)", id, project.ID, project.ID)
				}
				continue
			}
			if len(req.Platforms) > 0 && !slices.Contains(req.Platforms, c.Platform) {
				f.Addf(fmt.Sprintf("channel_ids[%d]", i), "is a %s channel, and %s is not in platforms", registry.DisplayName(c.Platform), c.Platform)
				continue
			}
			out = append(out, c)
		}
	} else {
		platforms := req.Platforms
		if len(platforms) == 0 {
			platforms = platform.Defaults
		}
		for _, p := range platforms {
			for _, c := range all {
				if c.Platform == p {
					out = append(out, c)
				}
			}
		}
	}
	// A requested platform with no channel in the project would get nothing, with channel_ids
	// or without; refused either way, it is refused whatever the fields a form sends after
	// its file (checkBeforeFile).
	requested, field := req.Platforms, "platforms"
	if len(requested) == 0 && len(req.ChannelIDs) == 0 {
		requested, field = platform.Defaults, "platforms (default youtube, instagram, tiktok)"
	}
	for _, p := range requested {
		if platform.Valid(p) && !slices.ContainsFunc(all, func(c store.Channel) bool { return c.Platform == p }) {
			f.Addf(field, "project %s has no %s channel; connect one with POST /channels or leave %s out", project.ID, registry.DisplayName(p), p)
		}
	}
	for _, c := range out {
		if c.Status == store.ChannelReauthRequired {
			f.Addf("channel_ids", "the %s channel %q must be reconnected first: the platform refused its token", registry.DisplayName(c.Platform), c.Name)
		}
	}
	return out, nil
}

func storedMedia(m *media.Stored) store.Media {
	i := m.Info
	return store.Media{SHA256: m.Blob.SHA256, BlobKey: m.Blob.Key, Kind: i.Kind.Name, ContentType: m.Blob.ContentType,
		Size: m.Blob.Size, Width: i.Width, Height: i.Height, Duration: i.Duration,
		VideoCodec: i.VideoCodec, AudioCodec: i.AudioCodec, AudioChannels: i.AudioChannels, AudioSampleRate: i.AudioSampleRate,
		FrameRate: i.FrameRate, MaxFrameRate: i.MaxFrameRate, MoovAfterMdat: i.MoovAfterMdat, EditList: i.EditList}
}

// contentHash identifies "the same video with the same text" for duplicate detection.
func contentHash(videoSHA256, title, caption string) string {
	h := sha256.New()
	for _, part := range []string{videoSHA256, title, caption} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ingestURL takes in the media at rawURL: from where it lies when it is this server's own media
// link (a generated video), else downloaded.
func (s *Service) ingestURL(ctx context.Context, rawURL string, limit int64, allowed []string) (media.Stored, error) {
	if st, ok, err := s.Media.Linked(ctx, rawURL, allowed); ok {
		return st, err
	}
	return media.IngestURL(ctx, s.Fetcher, s.Media, rawURL, limit, allowed)
}

// Discard releases the media a refused request took in; those it stored itself are deleted
// when nothing else uses them.
func (s *Service) Discard(list ...*media.Stored) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range list {
		if m == nil || m.Claim == "" {
			continue
		}
		if err := s.Store.ReleaseMedia(ctx, m.Claim, !m.Blob.Deduplicated, s.Media.Delete); err != nil && s.Log != nil {
			s.Log.Warn("could not release media of a refused request", "key", m.Blob.Key, "error", err)
		}
	}
}

// RequestHash fingerprints request parts (the JSON body; or multipart fields and file hashes).
func RequestHash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}
