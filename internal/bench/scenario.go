package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/platform/sim"
)

// What the publishing scenarios (ingest, burst, throughput, reads) share: projects of their own
// with sandbox channels, generated videos, a pool of clients submitting multipart publishes,
// waiting for posts to settle, and distributions of durations.

// Platforms the sandbox simulators exist for.
var sandboxPlatforms = []string{"youtube", "instagram", "tiktok"}

// PostsPerChannel is how many posts of one run go to one sandbox channel, so that no
// simulator's per-account limit is reached: YouTube's videos.insert bucket holds 100 uploads
// a day and its 10,000 daily units pay for the polls; TikTok allows a creator 6 inits per minute
// and 15 direct posts per day; Instagram 100 posts and 400 containers per day.
const PostsPerChannel = 5

// ParsePlatforms reads a comma-separated list of sandbox platforms.
func ParsePlatforms(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if !slices.Contains(sandboxPlatforms, p) {
			return nil, fmt.Errorf("platform %q has no sandbox simulator; use %s", p, strings.Join(sandboxPlatforms, ", "))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no platform given")
	}
	return out, nil
}

// SandboxBehavior is how every sandbox channel the scenarios create behaves: instantly
// processed, never failing, and on TikTok an app TikTok has audited (the scenarios post direct
// with the default privacy, PUBLIC_TO_EVERYONE, which TikTok refuses from an unaudited app). A
// simulator host apart from the server is told it (it does not read the behaviour the server
// stores with each channel); the server is sent its ProcessingMS and, for TikTok channels,
// AppAccess, the rest being the defaults.
var SandboxBehavior = sim.Behavior{ProcessingMS: 0, AppAccess: sim.AppAccessAudited}

// Fixture is what a run publishes to: groups of instant sandbox channels (SandboxBehavior),
// one channel of each platform per group, each group in a project of its own (as a customer's
// brand would be), and enough groups for PostsPerChannel posts each.
type Fixture struct {
	Platforms []string
	// Tag is unique to the run; it goes into every post's text, so that no post is a
	// duplicate of an earlier one, and into the projects' names.
	Tag    string
	groups []group
}

type group struct {
	project  string
	channels []string // one per platform, in the order of Platforms
}

// NewFixture creates the projects and channels for posts posts, conns requests at a time.
func NewFixture(ctx context.Context, c *Client, scenario string, platforms []string, posts, conns int) (*Fixture, error) {
	f := &Fixture{Platforms: platforms, Tag: time.Now().UTC().Format("20060102T150405.000"),
		groups: make([]group, (max(posts, 1)+PostsPerChannel-1)/PostsPerChannel)}
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range min(max(conns, 1), 8, len(f.groups)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(f.groups) {
					return
				}
				g, err := newGroup(ctx, c, fmt.Sprintf("bench %s %s #%d", scenario, f.Tag, i), platforms)
				mu.Lock()
				f.groups[i] = g
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return f, firstErr
}

func newGroup(ctx context.Context, c *Client, name string, platforms []string) (group, error) {
	pid, err := c.CreateProject(ctx, name)
	if err != nil {
		return group{}, fmt.Errorf("create a bench project: %w", err)
	}
	g := group{project: pid}
	for _, p := range platforms {
		id, err := c.CreateSandboxChannel(ctx, pid, p)
		if err != nil {
			return g, fmt.Errorf("create a %s sandbox channel: %w", p, err)
		}
		g.channels = append(g.channels, id)
	}
	return g, nil
}

// Projects and Channels count what was created.
func (f *Fixture) Projects() int { return len(f.groups) }

// Channels counts the channels created.
func (f *Fixture) Channels() int { return len(f.groups) * len(f.Platforms) }

// Form is the publish request of post number i: one channel of each platform, a text of its
// own, TikTok as a direct post (so that it ends published, not in the creator's inbox).
func (f *Fixture) Form(i int, video []byte, scheduledFor *time.Time) PublishForm {
	g := f.groups[(i/PostsPerChannel)%len(f.groups)]
	idsJSON, _ := json.Marshal(g.channels)
	fields := map[string]string{
		"project_id":  g.project,
		"channel_ids": string(idsJSON),
		"title":       fmt.Sprintf("reelay bench %s #%d", f.Tag, i),
		"caption":     fmt.Sprintf("Benchmark post %d of run %s #reelay", i, f.Tag),
	}
	if slices.Contains(f.Platforms, "tiktok") {
		fields["tiktok"] = `{"mode":"direct"}`
	}
	if scheduledFor != nil {
		fields["scheduled_for"] = scheduledFor.UTC().Format(time.RFC3339Nano)
	}
	return PublishForm{Fields: fields, Video: bytes.NewReader(video), Size: int64(len(video))}
}

// videoOptions is the generated video: vertical, 5 seconds, accepted by all three platforms
// (TikTok wants at least 3 s).
var videoOptions = mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920}

// SmallVideo is the video of the burst, throughput and reads scenarios: a few kilobytes.
func SmallVideo() ([]byte, error) {
	var b bytes.Buffer
	if err := mediatest.WriteMP4(&b, videoOptions); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteVideoFile streams an MP4 of about size bytes into a new file in dir and returns its
// path and exact size. The padding is noise, as a real video's compressed frames are.
func WriteVideoFile(dir string, size int64) (string, int64, error) {
	f, err := os.CreateTemp(dir, "reelay-bench-*.mp4")
	if err != nil {
		return "", 0, err
	}
	o := videoOptions
	o.Size, o.NoisyPadding = size, true
	// Long enough that no platform's bitrate rule asks for a conversion: the scenario times an
	// upload of the file itself to each platform.
	if rate := lowestMaxBitrate(); rate > 0 {
		o.Duration = max(o.Duration, time.Duration(float64(size*8)/(0.8*float64(rate))*float64(time.Second)).Round(time.Second))
	}
	err = mediatest.WriteMP4(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	st, err := os.Stat(f.Name())
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return filepath.Clean(f.Name()), st.Size(), nil
}

// lowestMaxBitrate is the lowest MaxVideoBitrate of the sandbox platforms (0: none has one).
func lowestMaxBitrate() int64 {
	var lowest int64
	for _, p := range sandboxPlatforms {
		caps, _ := registry.CapabilitiesOf(p)
		if r := caps.MaxVideoBitrate; r > 0 && (lowest == 0 || r < lowest) {
			lowest = r
		}
	}
	return lowest
}

// submitPlan says which posts a submission sends.
type submitPlan struct {
	Concurrency int
	// Count stops after this many posts (0: no limit); Until stops starting posts at this
	// time (zero: no limit). At least one must be set.
	Count int
	Until time.Time
	// ScheduledFor, when set, schedules every post for that instant.
	ScheduledFor *time.Time
}

// submission is what a pool of clients submitted.
type submission struct {
	// IDs of the posts accepted, in no particular order.
	IDs []string
	// Latencies of the accepted publish requests.
	Latencies []time.Duration
	Errors    int
	FirstErr  error
	// Start and End bound the submission.
	Start, End time.Time
}

// submit sends multipart publishes of video from plan.Concurrency clients, each waiting for
// its answer before the next (closed loop), with Prefer: wait=0: a post is answered once
// stored and queued, and its delivery goes on in the background.
func submit(ctx context.Context, c *Client, f *Fixture, video []byte, plan submitPlan) submission {
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	s := submission{Start: time.Now()}
	for range max(plan.Concurrency, 1) {
		wg.Go(func() {
			var ids []string
			var lats []time.Duration
			var errs int
			var firstErr error
			for ctx.Err() == nil {
				t0 := time.Now()
				if !plan.Until.IsZero() && !t0.Before(plan.Until) {
					break
				}
				i := int(next.Add(1)) - 1
				if plan.Count > 0 && i >= plan.Count {
					break
				}
				id, err := c.Publish(ctx, f.Form(i, video, plan.ScheduledFor))
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					errs++
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				ids = append(ids, id)
				lats = append(lats, time.Since(t0))
			}
			mu.Lock()
			s.IDs = append(s.IDs, ids...)
			s.Latencies = append(s.Latencies, lats...)
			s.Errors += errs
			if s.FirstErr == nil {
				s.FirstErr = firstErr
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	s.End = time.Now()
	return s
}

// err is the submission's failure, if any publish failed.
func (s submission) err() error {
	if s.Errors == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d publish requests failed; first: %w", s.Errors, s.Errors+len(s.IDs), s.FirstErr)
}

// settlePoll is how often waitSettled looks.
const settlePoll = 100 * time.Millisecond

// waitSettled waits until none of the posts ids is scheduled or processing, or timeout. It
// reads the account's open posts, newest first, and stops at the first of ids: on a server of
// its own (self-contained) that is the first one.
func waitSettled(ctx context.Context, c *Client, ids []string, timeout time.Duration) error {
	ours := make(map[string]bool, len(ids))
	for _, id := range ids {
		ours[id] = true
	}
	deadline := time.Now().Add(timeout)
	for {
		open := false
		// Scheduled first: a post that fires between the two reads is then found processing.
		// In the other order it could be in neither list, and a burst whose posts all fired
		// at that moment looked settled before any was published.
		for _, status := range []string{"scheduled", "processing"} {
			cursor := ""
			for !open {
				posts, next, err := c.ListPosts(ctx, status, cursor, 20)
				if err != nil {
					return err
				}
				for _, p := range posts {
					open = open || ours[p.ID]
				}
				if next == "" {
					break
				}
				cursor = next
			}
		}
		if !open {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("posts still unsettled after %s (raise --settle-timeout?)", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(settlePoll):
		}
	}
}

// collect reads the posts ids, paging through the account's posts newest first.
func collect(ctx context.Context, c *Client, ids []string) ([]Post, error) {
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	out := make([]Post, 0, len(ids))
	cursor := ""
	for len(out) < len(ids) {
		page, next, err := c.ListPosts(ctx, "", cursor, 100)
		if err != nil {
			return nil, err
		}
		for _, p := range page {
			if want[p.ID] {
				out = append(out, p)
			}
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(out) != len(ids) {
		return out, fmt.Errorf("found %d of the %d posts submitted", len(out), len(ids))
	}
	return out, nil
}

// waitPost polls one post every interval until it settles, or timeout.
func waitPost(ctx context.Context, c *Client, id string, interval, timeout time.Duration) (Post, time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		p, err := c.GetPost(ctx, id)
		if err != nil {
			return p, time.Time{}, err
		}
		if p.Settled() {
			return p, time.Now(), nil
		}
		if time.Now().After(deadline) {
			return p, time.Time{}, fmt.Errorf("post %s still %s after %s (raise --settle-timeout?)", id, p.Status, timeout)
		}
		select {
		case <-ctx.Done():
			return p, time.Time{}, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// Outcome counts the posts of a run by how they ended.
type Outcome struct {
	Posts     int `json:"posts"`
	Published int `json:"published"`
	// NotPublished counts posts settled otherwise (failed, partially published, canceled).
	NotPublished int `json:"not_published"`
	// FirstProblem describes the first post that did not publish.
	FirstProblem string `json:"first_problem,omitempty"`
}

func outcomeOf(posts []Post) Outcome {
	o := Outcome{Posts: len(posts)}
	for _, p := range posts {
		if p.Status == "published" {
			o.Published++
			continue
		}
		o.NotPublished++
		if o.FirstProblem == "" {
			o.FirstProblem = p.problem()
		}
	}
	return o
}

func (o Outcome) err() error {
	if o.NotPublished == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d posts did not publish; first: %s", o.NotPublished, o.Posts, o.FirstProblem)
}

// Dist is a distribution of durations in milliseconds, nearest-rank percentiles.
type Dist struct {
	N   int     `json:"n"`
	Min float64 `json:"min_ms"`
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func distOf(ds []time.Duration) Dist {
	s := slices.Clone(ds)
	slices.Sort(s)
	d := Dist{N: len(s), P50: ms(percentile(s, 50)), P90: ms(percentile(s, 90)), P99: ms(percentile(s, 99))}
	if len(s) > 0 {
		d.Min, d.Max = ms(s[0]), ms(s[len(s)-1])
	}
	return d
}

func (d Dist) String() string {
	return fmt.Sprintf("p50 %s, p99 %s, max %s", seconds(d.P50), seconds(d.P99), seconds(d.Max))
}

// seconds formats milliseconds for a summary.
func seconds(msec float64) string {
	if msec < 1000 && msec > -1000 {
		return fmt.Sprintf("%.0f ms", msec)
	}
	return fmt.Sprintf("%.2f s", msec/1000)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// measure starts a measured part with m (when set) and returns a function that ends it once,
// however often it is called.
func measure(m func() (stop func())) func() {
	if m == nil {
		return func() {}
	}
	return sync.OnceFunc(m())
}
