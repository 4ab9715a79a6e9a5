package cli

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/internal/bench"
	"github.com/reelay/reelay/internal/platform"
)

func newBenchPlatformsCmd() *cobra.Command {
	var (
		sf        scenarioFlags
		cfg       bench.PlatformsConfig
		platforms string
	)
	cmd := &cobra.Command{
		Use:   "platforms",
		Short: "Publish to each platform's simulator alone and report the publish latency per platform",
		Long: "For each of --platforms (default all twelve), publish --posts posts of a 256 KB 1080x1920 5-second MP4 " +
			"(multipart, Prefer: wait=0) to one instant sandbox channel of that platform alone, one post in flight at " +
			"a time, the platforms taking turns; poll GET /api/v1/posts/{id} every --poll until the post settles, and " +
			"report per platform the time from the start of the publish request to the destination's published_at " +
			"(count, failures, p50, p90, p99, max). A platform's posts move to a fresh channel every 5 posts: TikTok " +
			"allows 6 inits a minute per creator.\n\n" +
			"The simulators run apart from the server, in a process of the bench's own (in the server with " +
			"--platforms-in-server): this measures reelay's own work plus each provider's " +
			"steps and poll waits against them, not the real platforms.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Platforms, err = bench.ParseAnyPlatforms(platforms); err != nil {
				return err
			}
			if cfg.Posts < 1 || cfg.Poll <= 0 {
				return errors.New("--posts and --poll must be positive")
			}
			return runScenario(cmd, &sf, 2, false, func(ctx context.Context, r scenarioRun) (scenarioResult, error) {
				c := cfg
				c.Client, c.Timeout, c.Measure = r.client, sf.settleTimeout, r.measure
				res, err := bench.Platforms(ctx, c)
				return &res, err
			})
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.IntVar(&cfg.Posts, "posts", 20, "posts to each platform")
	f.StringVar(&platforms, "platforms", strings.Join(platform.All, ","), "comma-separated platforms to measure")
	f.DurationVar(&cfg.Poll, "poll", 10*time.Millisecond, "how often a post in flight is read")
	return cmd
}
