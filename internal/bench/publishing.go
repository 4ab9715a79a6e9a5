package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/procstat"
)

// BurstConfig describes `reelay bench burst`.
type BurstConfig struct {
	Client *Client
	// Posts are scheduled for one instant, Lead after their submission starts, by Concurrency
	// clients.
	Posts       int
	Concurrency int
	Lead        time.Duration
	// Platforms each post goes to (one sandbox channel of each).
	Platforms []string
	// Timeout bounds the wait for the posts to settle after the instant.
	Timeout time.Duration
	// Measure brackets the measured part (from the submission to the last post settled).
	Measure func() (stop func())
	// ServerPID, when not 0, is the process the server runs in, whose CPU time during the
	// drain is reported; PlatformsPID, likewise, the platform simulators' when they run apart.
	ServerPID    int
	PlatformsPID int
}

// BurstResult is what `reelay bench burst` measured.
type BurstResult struct {
	Scenario  string   `json:"scenario"`
	Platforms []string `json:"platforms"`
	Projects  int      `json:"projects"`
	Channels  int      `json:"channels"`
	Outcome
	ScheduledFor  time.Time `json:"scheduled_for"`
	SubmitSeconds float64   `json:"submit_seconds"`
	// LatenessFirst is, per post, its published_at (its first destination's) minus its
	// scheduled_for; LatenessAll its last destination's published_at minus scheduled_for.
	LatenessFirst Dist `json:"lateness_first_published"`
	LatenessAll   Dist `json:"lateness_all_published"`
	// SubmitLatency is the publish requests' (scheduled posts are only stored and queued).
	SubmitLatency Dist `json:"submit_latency"`
	// DrainCPUSeconds is the CPU time (user + system) the server's process used from the
	// instant to the last post settled: the work of firing and publishing, steadier from run
	// to run than the lateness. In-process it includes the bench's polling (a few requests).
	DrainCPUSeconds *float64 `json:"drain_cpu_seconds,omitempty"`
	// DrainPlatformsCPUSeconds is the platform simulators' CPU time over the same span, when
	// they run in a process apart from the server.
	DrainPlatformsCPUSeconds *float64 `json:"drain_platforms_cpu_seconds,omitempty"`
	// DrainMachineCPUSeconds is the whole machine's busy CPU time over the same span: the
	// server, its database server when that runs here, and the bench. Next to the drain's wall
	// time and the cores, it tells whether the drain had the machine to itself and used it.
	DrainMachineCPUSeconds *float64 `json:"drain_machine_cpu_seconds,omitempty"`
	// DrainWallSeconds is the span both are measured over: from the instant to the last post
	// settled, as the bench saw it (it polls).
	DrainWallSeconds float64 `json:"drain_wall_seconds"`
	Targets          Targets `json:"targets"`
	MachineReport
	SimulatorsReport
}

// Burst schedules cfg.Posts posts for the same instant, waits for all to publish, and
// measures how late each was.
func Burst(ctx context.Context, cfg BurstConfig) (BurstResult, error) {
	res := BurstResult{Scenario: "burst", Platforms: cfg.Platforms}
	if cfg.Posts < 1 || cfg.Lead <= 0 {
		return res, errors.New("burst: posts and lead must be positive")
	}
	c := cfg.Client
	video, fx, err := setUp(ctx, c, "burst", cfg.Platforms, cfg.Posts, cfg.Concurrency)
	if err != nil {
		return res, err
	}
	res.Projects, res.Channels = fx.Projects(), fx.Channels()
	stop := measure(cfg.Measure)
	defer stop()
	at := time.Now().Add(cfg.Lead).UTC()
	res.ScheduledFor = at
	s := submit(ctx, c, fx, video, submitPlan{Concurrency: cfg.Concurrency, Count: cfg.Posts, ScheduledFor: &at})
	res.SubmitSeconds = round3(s.End.Sub(s.Start).Seconds())
	res.SubmitLatency = distOf(s.Latencies)
	if err := s.err(); err != nil {
		return res, err
	}
	if !s.End.Before(at) {
		return res, fmt.Errorf("submitting %d posts took %.1fs, past their scheduled time: raise --lead", cfg.Posts, res.SubmitSeconds)
	}
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(time.Until(at)):
	}
	serverCPU, platformsCPU := startCPU(cfg.ServerPID), startCPU(cfg.PlatformsPID)
	machineBefore, machineErr := procstat.ReadMachineCPU()
	drainStart := time.Now()
	if err := waitSettled(ctx, c, s.IDs, cfg.Timeout); err != nil {
		return res, err
	}
	res.DrainWallSeconds = round3(time.Since(drainStart).Seconds())
	res.DrainCPUSeconds, res.DrainPlatformsCPUSeconds = serverCPU(), platformsCPU()
	if machineErr == nil {
		if after, err := procstat.ReadMachineCPU(); err == nil {
			cpu := round3(after - machineBefore)
			res.DrainMachineCPUSeconds = &cpu
		}
	}
	stop()
	posts, err := collect(ctx, c, s.IDs)
	if err != nil {
		return res, err
	}
	res.Outcome = outcomeOf(posts)
	var first, all []time.Duration
	for _, p := range posts {
		if p.ScheduledFor == nil {
			continue
		}
		if p.PublishedAt != nil {
			first = append(first, p.PublishedAt.Sub(*p.ScheduledFor))
		}
		if last := p.LastPublished(); last != nil {
			all = append(all, last.Sub(*p.ScheduledFor))
		}
	}
	res.LatenessFirst, res.LatenessAll = distOf(first), distOf(all)
	res.Targets = Targets{"lateness_first_published_p99": {Want: "<= 2 s",
		Met: res.LatenessFirst.N == cfg.Posts && res.LatenessFirst.P99 <= 2000}}
	return res, res.Outcome.err()
}

// Summary is the line printed on stderr.
func (r BurstResult) Summary() string {
	cpu := ""
	if r.DrainCPUSeconds != nil {
		cpu = fmt.Sprintf("; server CPU from the instant to the last settled %.2f s", *r.DrainCPUSeconds)
		if r.DrainPlatformsCPUSeconds != nil {
			cpu += fmt.Sprintf(", the platforms' (apart) %.2f s", *r.DrainPlatformsCPUSeconds)
		}
	}
	if r.DrainMachineCPUSeconds != nil {
		cpu += fmt.Sprintf(", the machine's %.2f s in %.2f s", *r.DrainMachineCPUSeconds, r.DrainWallSeconds)
	}
	return fmt.Sprintf("burst: %d posts to %v scheduled for one instant, %d published; lateness of the first destination %s; "+
		"of all destinations %s (submitted in %.1f s%s)", r.Posts, r.Platforms, r.Published, r.LatenessFirst, r.LatenessAll, r.SubmitSeconds, cpu)
}

// ThroughputConfig describes `reelay bench throughput`.
type ThroughputConfig struct {
	Client *Client
	// Concurrency clients publish immediately for Duration, or until MaxPosts were sent.
	Concurrency int
	Duration    time.Duration
	MaxPosts    int
	Platforms   []string
	// Timeout bounds the wait for the posts to settle after the submission.
	Timeout time.Duration
	// Measure brackets the measured part (from the submission to the last post settled).
	Measure func() (stop func())
}

// ThroughputResult is what `reelay bench throughput` measured.
type ThroughputResult struct {
	Scenario    string   `json:"scenario"`
	Platforms   []string `json:"platforms"`
	Projects    int      `json:"projects"`
	Channels    int      `json:"channels"`
	Concurrency int      `json:"concurrency"`
	Outcome
	// PostsPerSec is the published posts divided by the time from the first request to the
	// last destination published: the rate at which posts went all the way through.
	PostsPerSec float64 `json:"posts_per_sec"`
	// SubmitSeconds is the submission window, AcceptedPerSec the publish requests answered
	// in it per second; Capped says the window ended at MaxPosts.
	SubmitSeconds  float64 `json:"submit_seconds"`
	AcceptedPerSec float64 `json:"accepted_per_sec"`
	Capped         bool    `json:"capped"`
	// SettleSeconds runs from the first request to the last destination published;
	// DrainSeconds is the part of it after the submission ended.
	SettleSeconds float64 `json:"settle_seconds"`
	DrainSeconds  float64 `json:"drain_seconds"`
	SubmitLatency Dist    `json:"submit_latency"`
	// Completion is, per post, its last destination's published_at minus its created_at.
	Completion Dist    `json:"completion"`
	Targets    Targets `json:"targets"`
	MachineReport
	SimulatorsReport
}

// Throughput publishes posts immediately at a concurrency for a duration and measures how
// many posts per second were published to every destination.
func Throughput(ctx context.Context, cfg ThroughputConfig) (ThroughputResult, error) {
	res := ThroughputResult{Scenario: "throughput", Platforms: cfg.Platforms, Concurrency: cfg.Concurrency}
	if cfg.Duration <= 0 || cfg.MaxPosts < 1 {
		return res, errors.New("throughput: duration and max posts must be positive")
	}
	c := cfg.Client
	video, fx, err := setUp(ctx, c, "throughput", cfg.Platforms, cfg.MaxPosts, cfg.Concurrency)
	if err != nil {
		return res, err
	}
	res.Projects, res.Channels = fx.Projects(), fx.Channels()
	stop := measure(cfg.Measure)
	defer stop()
	until := time.Now().Add(cfg.Duration)
	s := submit(ctx, c, fx, video, submitPlan{Concurrency: cfg.Concurrency, Count: cfg.MaxPosts, Until: until})
	res.SubmitSeconds = round3(s.End.Sub(s.Start).Seconds())
	res.Capped = len(s.IDs)+s.Errors >= cfg.MaxPosts
	if res.SubmitSeconds > 0 {
		res.AcceptedPerSec = round3(float64(len(s.IDs)) / res.SubmitSeconds)
	}
	res.SubmitLatency = distOf(s.Latencies)
	if err := s.err(); err != nil {
		return res, err
	}
	if err := waitSettled(ctx, c, s.IDs, cfg.Timeout); err != nil {
		return res, err
	}
	stop()
	posts, err := collect(ctx, c, s.IDs)
	if err != nil {
		return res, err
	}
	res.Outcome = outcomeOf(posts)
	var done []time.Duration
	var lastAll time.Time
	for _, p := range posts {
		if last := p.LastPublished(); last != nil && p.Status == "published" {
			done = append(done, last.Sub(p.CreatedAt))
			if last.After(lastAll) {
				lastAll = *last
			}
		}
	}
	res.Completion = distOf(done)
	if !lastAll.IsZero() {
		res.SettleSeconds = round3(lastAll.Sub(s.Start).Seconds())
		res.DrainSeconds = round3(max(lastAll.Sub(s.End).Seconds(), 0))
		res.PostsPerSec = round3(float64(res.Published) / lastAll.Sub(s.Start).Seconds())
	}
	res.Targets = Targets{"posts_per_sec": {Want: ">= 200", Met: res.PostsPerSec >= 200}}
	return res, res.Outcome.err()
}

// Summary is the line printed on stderr.
func (r ThroughputResult) Summary() string {
	return fmt.Sprintf("throughput: %.1f posts/s published to %v (%d of %d posts published; %d accepted in %.1f s at concurrency %d, "+
		"%.1f/s; all published %.1f s after the first request); publish request %s; post completion %s",
		r.PostsPerSec, r.Platforms, r.Published, r.Posts, r.Posts, r.SubmitSeconds, r.Concurrency, r.AcceptedPerSec,
		r.SettleSeconds, r.SubmitLatency, r.Completion)
}

// ReadsConfig describes `reelay bench reads`.
type ReadsConfig struct {
	Client *Client
	// Posts are published first (to Platforms) and waited for; then Concurrency clients read
	// them with GET /posts/{id} for Duration after Warmup.
	Posts            int
	Platforms        []string
	Concurrency      int
	Duration, Warmup time.Duration
	// SetupConcurrency is how many clients publish the posts.
	SetupConcurrency int
	Timeout          time.Duration
	// Measure brackets the measured part (the reads, warmup included).
	Measure func() (stop func())
}

// ReadsResult is what `reelay bench reads` measured.
type ReadsResult struct {
	Scenario  string   `json:"scenario"`
	Platforms []string `json:"platforms"`
	Posts     int      `json:"posts"`
	// SetupSeconds is the time taken to publish the posts.
	SetupSeconds float64 `json:"setup_seconds"`
	Result
	Targets Targets `json:"targets"`
	MachineReport
	SimulatorsReport
}

// Reads publishes posts, then loads GET /posts/{id} over them.
func Reads(ctx context.Context, cfg ReadsConfig) (ReadsResult, error) {
	res := ReadsResult{Scenario: "reads", Platforms: cfg.Platforms}
	if cfg.Posts < 1 {
		return res, errors.New("reads: posts must be positive")
	}
	c := cfg.Client
	start := time.Now()
	video, fx, err := setUp(ctx, c, "reads", cfg.Platforms, cfg.Posts, cfg.SetupConcurrency)
	if err != nil {
		return res, err
	}
	s := submit(ctx, c, fx, video, submitPlan{Concurrency: cfg.SetupConcurrency, Count: cfg.Posts})
	if err := s.err(); err != nil {
		return res, err
	}
	if err := waitSettled(ctx, c, s.IDs, cfg.Timeout); err != nil {
		return res, err
	}
	res.SetupSeconds = round3(time.Since(start).Seconds())
	res.Posts = len(s.IDs)
	paths := make([]string, len(s.IDs))
	for i, id := range s.IDs {
		paths[i] = "/api/v1/posts/" + id
	}
	stop := measure(cfg.Measure)
	r, err := Run(ctx, Config{URL: c.URL, Header: http.Header{"X-Api-Key": {c.Key}}, Concurrency: cfg.Concurrency,
		Duration: cfg.Duration, Warmup: cfg.Warmup, Paths: paths})
	stop()
	res.Result = r
	res.Targets = Targets{
		"rps":    {Want: ">= 5000", Met: r.RPS >= 5000},
		"p99_ms": {Want: "< 20", Met: r.Requests > 0 && r.P99ms < 20},
	}
	if err != nil {
		return res, err
	}
	if r.Errors > 0 {
		return res, fmt.Errorf("%d of %d requests failed, statuses %v %s", r.Errors, r.Requests, r.StatusCounts, r.FirstError)
	}
	return res, nil
}

// Summary is the line printed on stderr.
func (r ReadsResult) Summary() string {
	return fmt.Sprintf("reads: GET /api/v1/posts/{id} over %d posts: %.0f req/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms, %d requests, %d errors",
		r.Posts, r.RPS, r.P50ms, r.P90ms, r.P99ms, r.MaxMs, r.Requests, r.Errors)
}

// Summary is the line printed on stderr.
func (r IngestResult) Summary() string {
	rss := "server memory not measured (not a child process)"
	if r.ServerPeakRSSMB != nil {
		rss = fmt.Sprintf("server peak RSS %.1f MB", *r.ServerPeakRSSMB)
		if r.ServerRSSBeforeMB != nil {
			rss += fmt.Sprintf(" (%.1f MB before the upload)", *r.ServerRSSBeforeMB)
		}
	}
	if r.ServerCPUSeconds != nil {
		rss += fmt.Sprintf("; server CPU %.2f s", *r.ServerCPUSeconds)
	}
	if r.PlatformsCPUSeconds != nil {
		rss += fmt.Sprintf("; the platforms' (apart) CPU %.2f s", *r.PlatformsCPUSeconds)
	}
	dests := ""
	received := 0
	for _, d := range r.Destinations {
		if d.AfterUploadSeconds != nil {
			dests += fmt.Sprintf(" %s +%.2f s", d.Platform, *d.AfterUploadSeconds)
		}
		if d.Received.Uploads == 1 && d.Received.Published == 1 {
			received++
		}
	}
	on := ""
	if r.Storage != "" {
		on = " stored on " + r.Storage
	}
	s := fmt.Sprintf("ingest: %.1f MB%s to YouTube, Instagram and TikTok in %.2f s (upload %.2f s; published after the upload:%s); "+
		"reference %d loopback transfers %.2f s; ratio %.2f; %s; %d of %d simulators recorded the whole video (sha256 %.12s…) and published it",
		float64(r.VideoBytes)/1e6, on, r.WallSeconds, r.UploadSeconds, dests, len(r.ReferenceTransfers), r.ReferenceSeconds, r.Ratio, rss,
		received, len(r.Destinations), r.VideoSHA256)
	if l := r.LocalDisk; l != nil {
		s = l.Summary() + "\n" + s + "\n" + sideBySide(r.Storage, r, *l)
	}
	return s
}

// sideBySide prints the figures of an ingest on storage against those on local disk.
func sideBySide(storage string, on, local IngestResult) string {
	mb := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f MB", *v)
	}
	row := func(name string, r IngestResult) string {
		return fmt.Sprintf("%-12s %14s %14s %10.2f s %10.2f s %7.2f", name, mb(r.ServerPeakRSSMB), mb(r.ServerRSSBeforeMB),
			r.UploadSeconds, r.WallSeconds, r.Ratio)
	}
	return fmt.Sprintf("%-12s %14s %14s %12s %12s %7s\n", "storage", "peak RSS", "RSS before", "upload", "wall", "ratio") +
		row("local disk", local) + "\n" + row(storage, on)
}

// setUp makes what the posting scenarios start from: the small video and the channels.
func setUp(ctx context.Context, c *Client, scenario string, platforms []string, posts, conns int) ([]byte, *Fixture, error) {
	video, err := SmallVideo()
	if err != nil {
		return nil, nil, err
	}
	fx, err := NewFixture(ctx, c, scenario, platforms, posts, conns)
	return video, fx, err
}
