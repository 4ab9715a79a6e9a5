package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/bench"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the server's throughput and latency"}
	cmd.AddCommand(newBenchAPICmd())
	return cmd
}

func newBenchAPICmd() *cobra.Command {
	var (
		cfg       bench.Config
		url, key  string
		serverLog string
		role      string
		profile   string
	)
	cmd := &cobra.Command{
		Use:   "api [--url URL --key KEY]",
		Short: "Load an API endpoint with concurrent keep-alive clients and report requests/s and latency",
		Long: "Send authenticated requests in a closed loop (each of --concurrency clients waits for its " +
			"answer before the next request) and print the result as JSON on stdout and a summary on " +
			"stderr.\n\nWithout --url the command is self-contained: it starts a server, as `reelay serve` " +
			"would, on a fresh SQLite database in a temporary folder, with rate limiting out of the way, " +
			"and loads it over loopback TCP. Client and server then share this machine's CPUs.\n\n" +
			"With --url it loads a running server with the key from --key or REELAY_API_KEY, sent in the " +
			"X-API-Key header. That server's rate limit applies: expect 429s unless it is raised.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if cfg.Concurrency < 1 {
				return errors.New("--concurrency must be at least 1")
			}
			if cfg.Duration <= 0 || cfg.Warmup < 0 {
				return errors.New("--duration must be positive and --warmup not negative")
			}
			if !strings.HasPrefix(cfg.Path, "/") {
				return errors.New("--path must start with /")
			}
			target := "self-contained SQLite server"
			if url != "" {
				if key == "" {
					key = os.Getenv("REELAY_API_KEY")
				}
				if key == "" {
					return errors.New("--url needs an API key: --key or REELAY_API_KEY")
				}
				target = url
			} else {
				if key != "" {
					return errors.New("--key needs --url: the self-contained benchmark makes its own key")
				}
				srv, err := startBenchServer(ctx, role, serverLog)
				if err != nil {
					return err
				}
				defer srv.stop()
				url, key = srv.url, srv.key
			}
			cfg.URL = url
			cfg.Header = http.Header{"X-Api-Key": {key}}

			if profile != "" {
				f, err := os.Create(profile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
			}
			res, err := bench.Run(ctx, cfg)
			if profile != "" {
				pprof.StopCPUProfile()
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if err := enc.Encode(res); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(),
				"%s %s: %.0f req/s, p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms, %d requests, %d errors "+
					"(concurrency %d, %s after %s warmup; %s; GOMAXPROCS %d, %s, %s/%s)\n",
				cfg.Method, cfg.Path, res.RPS, res.P50ms, res.P90ms, res.P99ms, res.MaxMs, res.Requests, res.Errors,
				cfg.Concurrency, cfg.Duration, cfg.Warmup, target, runtime.GOMAXPROCS(0), runtime.Version(),
				runtime.GOOS, runtime.GOARCH)
			if res.Errors > 0 {
				hint := ""
				if res.StatusCounts[http.StatusTooManyRequests] > 0 {
					hint = " (429: the server's rate limit; raise --rate-limit-rps/--rate-limit-burst there)"
				}
				if res.FirstError != "" {
					hint += "; first transport error: " + res.FirstError
				}
				return fmt.Errorf("%d of %d requests failed, statuses %v%s", res.Errors, res.Requests, res.StatusCounts, hint)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&url, "url", "", "base URL of a running server (default: start one in-process on a fresh SQLite database)")
	f.StringVar(&key, "key", "", "API key for --url (default $REELAY_API_KEY); sent in the X-API-Key header")
	f.IntVar(&cfg.Concurrency, "concurrency", 32, "concurrent clients, each with one request in flight")
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to measure")
	f.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "how long to send requests before measuring")
	f.StringVar(&cfg.Method, "method", http.MethodGet, "HTTP method")
	f.StringVar(&cfg.Path, "path", "/api/v1/projects", "path to request")
	f.StringVar(&role, "server-role", config.RoleAll, "role of the self-contained server: all (as serve, with job workers) or api (HTTP only)")
	f.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the run (warmup included) to this file; self-contained, it covers server and clients")
	f.StringVar(&serverLog, "server-log-level", "error", "log level of the self-contained server (info includes the access log, written to nowhere)")
	return cmd
}

// benchServer is a server started by `reelay bench api` for itself.
type benchServer struct {
	url, key string
	stop     func()
}

// startBenchServer runs serve, with the settings `reelay serve` would use, on a fresh SQLite
// database in a temporary folder that holds an account made for the run. Only the rate limit is
// raised out of reach, and logs go nowhere.
func startBenchServer(ctx context.Context, role, logLevel string) (*benchServer, error) {
	dir, err := os.MkdirTemp("", "reelay-bench-")
	if err != nil {
		return nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }

	var cfg config.Config
	cfg.RegisterServer(pflag.NewFlagSet("serve", pflag.ContinueOnError)) // serve's defaults
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.RateLimitRPS = 1e9
	cfg.RateLimitBurst = 1 << 30
	cfg.LogLevel = logLevel
	cfg.Role = role
	if err := cfg.Finish(); err != nil {
		cleanup()
		return nil, err
	}

	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		cleanup()
		return nil, err
	}
	raw, rec := auth.NewKey("bench")
	_, err = st.CreateAccount(ctx, store.NewAccount{Name: "bench", Key: &rec})
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("bench account: %w", err)
	}

	serveCtx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serve(serveCtx, &cfg, io.Discard, ready) }()
	select {
	case addr := <-ready:
		return &benchServer{url: "http://" + addr, key: raw, stop: func() {
			cancel()
			<-done
			cleanup()
		}}, nil
	case err := <-done:
		cancel()
		cleanup()
		if err == nil {
			err = errors.New("the server stopped before listening")
		}
		return nil, fmt.Errorf("bench server: %w", err)
	}
}
