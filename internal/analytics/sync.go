package analytics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// Syncer reads published items' figures from their platforms into the store: on request
// (POST /analytics/sync) and from the periodic job, which reads young items often and old
// ones rarely (NextRead).
type Syncer struct {
	Store  *store.Store
	Caller publish.ChannelCaller
	// Sources are the providers with an analytics API, by platform. Items on the other
	// platforms are never read (their figures stay null).
	Sources map[string]provider.MetricsSource
	Log     *slog.Logger
}

// Summary is what a sync did.
type Summary struct {
	// Synced counts the destinations whose figures were read and stored.
	Synced int `json:"synced"`
	// Failed counts those whose read failed (their stored figures stay).
	Failed int `json:"failed"`
	// Unavailable counts destinations on platforms without analytics, or of disconnected
	// channels: they are not read again.
	Unavailable int `json:"unavailable"`
	// Pending counts destinations the sync had no time left for.
	Pending int          `json:"pending"`
	Errors  []ChannelErr `json:"errors"`
}

// add counts r in s.
func (s *Summary) add(r Summary) {
	s.Synced += r.Synced
	s.Failed += r.Failed
	s.Unavailable += r.Unavailable
	s.Pending += r.Pending
	s.Errors = append(s.Errors, r.Errors...)
}

// ChannelErr is a failure to read one channel's items.
type ChannelErr struct {
	Platform     string `json:"platform"`
	ChannelID    string `json:"channel_id"`
	Category     string `json:"category"`
	Message      string `json:"message"`
	Destinations int    `json:"destinations"`
}

// Sync reads the figures of the targets f selects (Kind is set here), channel by channel. A
// channel that fails is reported in the summary and the others go on; only a failure of the
// store itself is an error.
func (s *Syncer) Sync(ctx context.Context, f store.AudienceFilter) (Summary, error) {
	f.Kind = store.ReadMetrics
	targets, err := s.Store.AudienceTargets(ctx, f)
	if err != nil {
		return Summary{}, err
	}
	return EachChannel(ctx, targets, s.syncChannel)
}

// syncChannel reads the figures of one channel's items.
func (s *Syncer) syncChannel(ctx context.Context, group []store.AudienceTarget) (Summary, error) {
	first := group[0]
	ids := make([]string, len(group))
	byExternal := make(map[string]store.AudienceTarget, len(group))
	for i, t := range group {
		ids[i] = t.DestinationID
		byExternal[t.ExternalID] = t
	}
	if ctx.Err() != nil {
		return Summary{Pending: len(group)}, nil
	}
	src := s.Sources[first.Platform]
	if src == nil {
		return Summary{Unavailable: len(group)}, s.Store.SetAudienceSchedule(ctx, store.ReadMetrics, ids, "", nil)
	}
	ch, err := s.Store.ChannelByID(ctx, first.ChannelID)
	if errors.Is(err, store.ErrNotFound) {
		return Summary{Unavailable: len(group)}, s.Store.SetAudienceSchedule(ctx, store.ReadMetrics, ids, "the channel was disconnected", nil)
	}
	if err != nil {
		return Summary{}, err
	}
	externalIDs := make([]string, 0, len(group))
	for _, t := range group {
		externalIDs = append(externalIDs, t.ExternalID)
	}
	var got map[string]provider.Metrics
	callErr := s.Caller.Call(ctx, ch, func(pc provider.Channel) error {
		var err error
		got, err = src.Metrics(ctx, pc, externalIDs)
		return err
	})
	now := time.Now().UTC().Truncate(time.Microsecond)
	var sum Summary
	readings := make([]store.Reading, 0, len(got))
	var missing []string
	for _, t := range group {
		m, ok := got[t.ExternalID]
		switch {
		case ok:
			readings = append(readings, store.Reading{DestinationID: t.DestinationID, Figures: figures(m), At: now, Next: NextRead(t.PublishedAt, now)})
		case callErr == nil:
			missing = append(missing, t.DestinationID)
		}
	}
	if err := s.Store.SaveReadings(ctx, readings); err != nil {
		return sum, err
	}
	sum.Synced = len(readings)
	if len(missing) > 0 {
		// The platform answered without these items: deleted there, or not visible yet.
		sum.Failed += len(missing)
		sum.Errors = append(sum.Errors, ChannelErr{Platform: first.Platform, ChannelID: first.ChannelID, Category: provider.CategoryMediaRejected,
			Message: "the platform has no figures for these items (deleted, or not visible yet)", Destinations: len(missing)})
		next := NextRead(first.PublishedAt, now)
		if err := s.Store.SetAudienceSchedule(ctx, store.ReadMetrics, missing, "the platform has no figures for this item", &next); err != nil {
			return sum, err
		}
	}
	if callErr == nil {
		return sum, nil
	}
	if ctx.Err() != nil && errors.Is(callErr, ctx.Err()) {
		sum.Pending += len(group) - len(readings)
		return sum, nil
	}
	pe := provider.AsError(callErr)
	var unread []string
	for _, t := range group {
		if _, ok := got[t.ExternalID]; !ok {
			unread = append(unread, t.DestinationID)
		}
	}
	sum.Failed += len(unread)
	sum.Errors = append(sum.Errors, ChannelErr{Platform: first.Platform, ChannelID: first.ChannelID, Category: pe.Category, Message: pe.Message, Destinations: len(unread)})
	if s.Log != nil {
		s.Log.Warn("reading figures failed", "platform", first.Platform, "channel", first.ChannelID, "category", pe.Category, "error", pe.Message)
	}
	next := RetryAt(pe, first.PublishedAt, now)
	return sum, s.Store.SetAudienceSchedule(context.WithoutCancel(ctx), store.ReadMetrics, unread, pe.Message, &next)
}

// figures is how m is stored.
func figures(m provider.Metrics) store.Figures {
	return store.Figures{
		Views: m.Views, Likes: m.Likes, Comments: m.Comments, Shares: m.Shares, Impressions: m.Impressions,
		Reach: m.Reach, Saves: m.Saves, WatchTimeSeconds: m.WatchTimeSeconds,
	}
}

// NextRead is when a published item's figures or comments are next read: young items often,
// old ones rarely (their figures barely move), give or take a tenth, so that items published
// together do not all come due together.
func NextRead(publishedAt, now time.Time) time.Time {
	var every time.Duration
	switch age := now.Sub(publishedAt); {
	case age < time.Hour:
		every = 10 * time.Minute
	case age < 24*time.Hour:
		every = 30 * time.Minute
	case age < 7*24*time.Hour:
		every = 2 * time.Hour
	case age < 30*24*time.Hour:
		every = 12 * time.Hour
	case age < 90*24*time.Hour:
		every = 48 * time.Hour
	default:
		every = 7 * 24 * time.Hour
	}
	return now.Add(every - every/10 + rand.N(every/5+1))
}

// RetryAt is when a read that failed with pe is tried again: after the platform's Retry-After
// (at least five minutes) when it limited the rate, after a quarter of an hour when it was
// unavailable, and on the usual schedule when it refused (the refusal will not go away sooner).
func RetryAt(pe *provider.Error, publishedAt, now time.Time) time.Time {
	switch {
	case pe.Category == provider.CategoryRateLimited || pe.Category == provider.CategoryQuotaExceeded:
		return now.Add(max(pe.RetryAfter, 5*time.Minute))
	case pe.Transient:
		return now.Add(15 * time.Minute)
	default:
		return NextRead(publishedAt, now)
	}
}

// Channels read at once by one sync, and of one platform: the platforms' rate limits are per
// app as well as per account, so one platform's channels are not all read at the same moment.
const (
	parallelChannels    = 8
	parallelPerPlatform = 2
)

// EachChannel runs fn for the targets of each channel (in the order their channels first
// appear), a few channels at a time, and adds up what they did. It stops starting channels
// once ctx ends, handing each remaining group to fn anyway (fn counts them as pending), and
// returns the first error fn returned.
func EachChannel(ctx context.Context, targets []store.AudienceTarget, fn func(ctx context.Context, group []store.AudienceTarget) (Summary, error)) (Summary, error) {
	var order []string
	groups := map[string][]store.AudienceTarget{}
	for _, t := range targets {
		if _, ok := groups[t.ChannelID]; !ok {
			order = append(order, t.ChannelID)
		}
		groups[t.ChannelID] = append(groups[t.ChannelID], t)
	}
	all := make(chan struct{}, parallelChannels)
	perPlatform := map[string]chan struct{}{}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		sum      Summary
		firstErr error
	)
	run := func(group []store.AudienceTarget) {
		r, err := fn(ctx, group)
		mu.Lock()
		defer mu.Unlock()
		sum.add(r)
		if firstErr == nil && err != nil {
			firstErr = err
		}
	}
	for _, id := range order {
		group := groups[id]
		platform := group[0].Platform
		if perPlatform[platform] == nil {
			perPlatform[platform] = make(chan struct{}, parallelPerPlatform)
		}
		slot := perPlatform[platform]
		if !take(ctx, slot) {
			run(group)
			continue
		}
		if !take(ctx, all) {
			<-slot
			run(group)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-all; <-slot }()
			run(group)
		}()
	}
	wg.Wait()
	// Errors by channel, so that a summary reads the same every time.
	sort.Slice(sum.Errors, func(i, j int) bool { return sum.Errors[i].ChannelID < sum.Errors[j].ChannelID })
	return sum, firstErr
}

// take takes a place in sem, unless ctx ends first.
func take(ctx context.Context, sem chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// DueSync is a sync the periodic job runs over what is due: the Syncer's figures, the inbox's
// comments.
type DueSync interface {
	Sync(ctx context.Context, f store.AudienceFilter) (Summary, error)
}

// SyncArgs is the periodic job that reads the figures and comments that are due.
type SyncArgs struct{}

// Kind names the job for River.
func (SyncArgs) Kind() string { return "audience_sync" }

// SyncWorker works SyncArgs: one bounded round of due reads of each of Syncs, in turn.
type SyncWorker struct {
	river.WorkerDefaults[SyncArgs]
	// Syncs are the reads, by name (for the log): "figures", "comments".
	Syncs map[string]DueSync
	Log   *slog.Logger
	// Batch bounds the destinations one round of each reads (default 500); the rest wait
	// a minute.
	Batch int
}

// Work reads what is due.
func (w *SyncWorker) Work(ctx context.Context, _ *river.Job[SyncArgs]) error {
	batch := w.Batch
	if batch <= 0 {
		batch = 500
	}
	names := make([]string, 0, len(w.Syncs))
	for name := range w.Syncs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		now := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 25*time.Second)
		sum, err := w.Syncs[name].Sync(rctx, store.AudienceFilter{DueBy: &now, Limit: batch})
		cancel()
		if err != nil {
			return fmt.Errorf("sync %s: %w", name, err)
		}
		if w.Log != nil && sum.Synced+sum.Failed > 0 {
			w.Log.Info("audience read", "what", name, "synced", sum.Synced, "failed", sum.Failed, "pending", sum.Pending)
		}
	}
	return nil
}

// SyncJob runs SyncWorker every minute.
func SyncJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return SyncArgs{}, nil },
		&river.PeriodicJobOpts{ID: "audience_sync"})
}

// Bounds of a sync a user asks for (over the API, or with the dashboard's refresh): what is not
// read within OnDemandTimeout is reported pending and read by the periodic job, and at most
// OnDemandDestinations (the most recent) are read.
const (
	OnDemandTimeout      = 25 * time.Second
	OnDemandDestinations = 1000
)
