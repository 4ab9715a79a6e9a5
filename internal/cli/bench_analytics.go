package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/internal/bench"
	"github.com/reelay/reelay/internal/store"
)

func newBenchAnalyticsCmd() *cobra.Command {
	var (
		cfg         bench.AnalyticsConfig
		databaseURL string
	)
	cmd := &cobra.Command{
		Use:   "analytics",
		Short: "Store published items with figures, then load GET /analytics/overview",
		Long: "Start a server, as `reelay serve` would, on a fresh database (SQLite in a temporary folder, or a " +
			"schema of its own on --database-url) holding --items published destinations of one account, spread " +
			"over 90 days and the twelve platforms, each with its latest figures and one sample; then load " +
			"GET /api/v1/analytics/overview (all, one project, thirty days, one platform, a project's week, in " +
			"turn) with --concurrency closed-loop keep-alive clients over loopback, as `bench api` does.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if cfg.Items < 1 || cfg.Concurrency < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 {
				return errors.New("--items, --concurrency and --duration must be positive, --warmup not negative")
			}
			var projectID string
			var samples int
			seeded := time.Now()
			srv, err := startBenchServer(ctx, benchServerOptions{Role: "api", LogLevel: "error", DatabaseURL: databaseURL,
				Seed: func(ctx context.Context, st *store.Store, a store.CreatedAccount) error {
					projectID = a.Project.ID
					var err error
					samples, err = bench.SeedAnalytics(ctx, st, a.Account.ID, a.Project.ID, cfg.Items)
					return err
				}})
			if err != nil {
				return err
			}
			defer srv.stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "stored %d items in %.1f s\n", cfg.Items, time.Since(seeded).Seconds())
			cfg.URL, cfg.Key = srv.url, srv.key
			res, err := bench.Analytics(ctx, cfg, projectID, samples)
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if eerr := enc.Encode(res); eerr != nil {
				return eerr
			}
			engine := "SQLite"
			if databaseURL != "" {
				engine = "PostgreSQL"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s (%s; concurrency %d, %s after %s warmup; GOMAXPROCS %d, %s)\n",
				res.Summary(), engine, cfg.Concurrency, cfg.Duration, cfg.Warmup, runtime.GOMAXPROCS(0), runtime.Version())
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Items, "items", 100000, "published destinations with figures to store")
	f.IntVar(&cfg.Concurrency, "concurrency", 4, "clients, each with one request in flight")
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to measure")
	f.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "how long to load before measuring")
	f.StringVar(&databaseURL, "database-url", "", "a postgres:// server to run on, in a schema of its own (default: SQLite)")
	return cmd
}
