package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/pinterest/pinterestsim"
	"github.com/reelay/reelay/internal/platform/registry"
)

// PlatformsConfig describes `reelay bench platforms`.
type PlatformsConfig struct {
	Client *Client
	// Platforms are measured one post at a time, round-robin; Posts go to each.
	Platforms []string
	Posts     int
	// Poll is how often a post in flight is read (0: 10 ms).
	Poll time.Duration
	// Timeout bounds the wait for one post to settle (0: 5 minutes).
	Timeout time.Duration
	// Measure brackets the measured part (the posts, not the set-up).
	Measure func() (stop func())
}

// PlatformsResult is what `reelay bench platforms` measured.
type PlatformsResult struct {
	Scenario         string `json:"scenario"`
	PostsPerPlatform int    `json:"posts_per_platform"`
	// PostsPerChannel is how many posts of a platform go to one sandbox channel before the
	// next (TikTok allows 6 inits a minute per creator); ChannelsPerPlatform follows from it.
	PostsPerChannel     int    `json:"posts_per_channel"`
	ChannelsPerPlatform int    `json:"channels_per_platform"`
	VideoBytes          int    `json:"video_bytes"`
	Order               string `json:"order"`
	// WallSeconds is the whole measured part.
	WallSeconds float64           `json:"wall_seconds"`
	Platforms   []PlatformLatency `json:"platforms"`
	MachineReport
	SimulatorsReport
}

// PlatformLatency is one platform's part of a run.
type PlatformLatency struct {
	Platform string `json:"platform"`
	// Posts were sent; Published ended published; Failures did not (a refused request, a
	// post that settled otherwise, or one still in flight at the timeout).
	Posts        int    `json:"posts"`
	Published    int    `json:"published"`
	Failures     int    `json:"failures"`
	FirstFailure string `json:"first_failure,omitempty"`
	// Latency is, per published post, its destination's published_at minus the start of the
	// POST /publish request (both on this machine's clock when the server is self-contained).
	Latency Dist `json:"latency"`
	// Observed runs from the start of the request to when the client saw the post published
	// (Latency plus up to one poll).
	Observed Dist `json:"observed"`
	// Accept is the POST /publish request itself: the multipart upload of the video, stored,
	// probed and queued (Prefer: wait=0).
	Accept Dist `json:"accept"`
}

// platformVideoBytes is the size the video of this scenario is padded to: LinkedIn refuses
// videos under 75 KB.
const platformVideoBytes = 256 << 10

// redditSubreddit is a subreddit every sandbox Reddit account may post videos to.
const redditSubreddit = "reelay_sandbox"

// ParseAnyPlatforms reads a comma-separated list of platforms, any of platform.All.
func ParseAnyPlatforms(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if !platform.Valid(p) {
			return nil, fmt.Errorf("unknown platform %q; use %s", p, strings.Join(platform.All, ", "))
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

// Platforms publishes cfg.Posts posts to each platform alone, one post in flight at a time,
// the platforms taking turns, and measures per platform the time from the publish request to
// the destination published.
func Platforms(ctx context.Context, cfg PlatformsConfig) (PlatformsResult, error) {
	res := PlatformsResult{Scenario: "platforms", PostsPerPlatform: cfg.Posts, PostsPerChannel: PostsPerChannel,
		Order: "one post in flight at a time; the platforms take turns (post 1 to each, then post 2, ...)"}
	if cfg.Posts < 1 || len(cfg.Platforms) == 0 {
		return res, errors.New("platforms: posts and platforms must be given")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 10 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	c := cfg.Client
	var buf bytes.Buffer
	o := videoOptions
	o.Size = platformVideoBytes
	if err := mediatest.WriteMP4(&buf, o); err != nil {
		return res, fmt.Errorf("generate the video: %w", err)
	}
	video := buf.Bytes()
	res.VideoBytes = len(video)

	// Every group is a project with one channel of each platform; a platform's posts move to
	// the next group every PostsPerChannel posts.
	fx, err := NewFixture(ctx, c, "platforms", cfg.Platforms, cfg.Posts, 4)
	if err != nil {
		return res, err
	}
	res.ChannelsPerPlatform = fx.Projects()
	boards, err := pinterestBoards(ctx, c, fx)
	if err != nil {
		return res, err
	}

	type samples struct{ latency, observed, accept []time.Duration }
	all := make([]samples, len(cfg.Platforms))
	res.Platforms = make([]PlatformLatency, len(cfg.Platforms))
	for k, p := range cfg.Platforms {
		res.Platforms[k].Platform = p
	}
	stop := measure(cfg.Measure)
	defer stop()
	start := time.Now()
	for i := range cfg.Posts {
		for k := range cfg.Platforms {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			r := &res.Platforms[k]
			r.Posts++
			form := fx.platformForm(k, i, video, boards)
			t0 := time.Now()
			id, err := c.Publish(ctx, form)
			accepted := time.Since(t0)
			var post Post
			var seen time.Time
			if err == nil {
				post, seen, err = waitPost(ctx, c, id, cfg.Poll, cfg.Timeout)
			}
			if err == nil && post.Status != "published" {
				err = errors.New(post.problem())
			}
			var at *time.Time
			if err == nil {
				if at = post.LastPublished(); at == nil {
					err = fmt.Errorf("post %s is published without a published_at", id)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				r.Failures++
				if r.FirstFailure == "" {
					r.FirstFailure = fmt.Sprintf("post %d: %v", i, err)
				}
				continue
			}
			r.Published++
			all[k].latency = append(all[k].latency, at.Sub(t0))
			all[k].observed = append(all[k].observed, seen.Sub(t0))
			all[k].accept = append(all[k].accept, accepted)
		}
	}
	stop()
	res.WallSeconds = round3(time.Since(start).Seconds())
	var failed []string
	for k := range res.Platforms {
		r := &res.Platforms[k]
		r.Latency, r.Observed, r.Accept = distOf(all[k].latency), distOf(all[k].observed), distOf(all[k].accept)
		if r.Failures > 0 {
			failed = append(failed, fmt.Sprintf("%s %d of %d (first: %s)", r.Platform, r.Failures, r.Posts, r.FirstFailure))
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("posts did not publish: %s", strings.Join(failed, "; "))
	}
	return res, nil
}

// platformForm is the publish request of post i to platform number k of the fixture alone,
// with the per-platform objects that platform needs: TikTok as a direct post (so that it ends
// published, not in the creator's inbox), Pinterest on the account's first board, Reddit in
// the sandbox subreddit.
func (f *Fixture) platformForm(k, i int, video []byte, boards map[string]string) PublishForm {
	g := f.groups[(i/PostsPerChannel)%len(f.groups)]
	p, ch := f.Platforms[k], g.channels[k]
	idsJSON, _ := json.Marshal([]string{ch})
	title := fmt.Sprintf("reelay bench %s %s #%d", f.Tag, p, i)
	fields := map[string]string{
		"project_id":  g.project,
		"channel_ids": string(idsJSON),
		"title":       title,
		"caption":     fmt.Sprintf("Benchmark post %d to %s of run %s #reelay", i, registry.DisplayName(p), f.Tag),
	}
	obj := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	switch p {
	case platform.TikTok:
		fields[p] = obj(map[string]any{"mode": "direct"})
	case platform.Pinterest:
		fields[p] = obj(map[string]any{"board_id": boards[ch]})
	case platform.Reddit:
		fields[p] = obj(map[string]any{"subreddit": redditSubreddit, "title": title})
	}
	return PublishForm{Fields: fields, Video: bytes.NewReader(video), Size: int64(len(video))}
}

// pinterestBoards maps each Pinterest channel of the fixture to the first board of its
// sandbox account, as the simulator makes them (pinterestsim.DefaultBoards).
func pinterestBoards(ctx context.Context, c *Client, f *Fixture) (map[string]string, error) {
	k := slices.Index(f.Platforms, platform.Pinterest)
	if k < 0 {
		return nil, nil
	}
	boards := map[string]string{}
	for _, g := range f.groups {
		accounts, err := c.channelAccounts(ctx, g.project)
		if err != nil {
			return nil, fmt.Errorf("read the channels of a bench project: %w", err)
		}
		account, ok := accounts[g.channels[k]]
		if !ok || account == "" {
			return nil, fmt.Errorf("Pinterest channel %s has no external_account_id", g.channels[k])
		}
		boards[g.channels[k]] = pinterestsim.DefaultBoards(account)[0].ID
	}
	return boards, nil
}

// channelAccounts maps the channels of a project to their external account ids.
func (c *Client) channelAccounts(ctx context.Context, projectID string) (map[string]string, error) {
	var out struct {
		Channels []struct {
			ID                string `json:"id"`
			ExternalAccountID string `json:"external_account_id"`
		} `json:"channels"`
	}
	if err := c.callJSON(ctx, http.MethodGet, "/api/v1/channels?project_id="+url.QueryEscape(projectID), nil, &out); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(out.Channels))
	for _, ch := range out.Channels {
		m[ch.ID] = ch.ExternalAccountID
	}
	return m, nil
}

// Summary is what is printed on stderr: a table, one platform a row.
func (r PlatformsResult) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "platforms: %d posts to each of %d platforms, alone, one post in flight at a time, the platforms taking turns; "+
		"%d sandbox channel(s) per platform, up to %d posts each (TikTok allows 6 inits a minute per creator); a %d-byte 1080x1920 5 s MP4 by multipart; %.1f s in all.\n",
		r.PostsPerPlatform, len(r.Platforms), r.ChannelsPerPlatform, r.PostsPerChannel, r.VideoBytes, r.WallSeconds)
	b.WriteString("latency: from the start of POST /publish to the destination's published_at; accept: the request alone\n")
	fmt.Fprintf(&b, "%-10s %5s %6s %10s %10s %10s %10s %12s\n", "platform", "posts", "failed", "p50", "p90", "p99", "max", "accept p50")
	for _, p := range r.Platforms {
		fmt.Fprintf(&b, "%-10s %5d %6d %10s %10s %10s %10s %12s\n", p.Platform, p.Posts, p.Failures,
			msCell(p.Latency.N, p.Latency.P50), msCell(p.Latency.N, p.Latency.P90), msCell(p.Latency.N, p.Latency.P99),
			msCell(p.Latency.N, p.Latency.Max), msCell(p.Accept.N, p.Accept.P50))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// msCell formats milliseconds for the table ("-" when nothing was measured).
func msCell(n int, msec float64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", msec)
}
