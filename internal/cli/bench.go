package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/bench"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "Measure the server's throughput and latency"}
	cmd.AddCommand(newBenchAPICmd(), newBenchIngestCmd(), newBenchBurstCmd(), newBenchThroughputCmd(), newBenchReadsCmd(),
		newBenchServerCmd(), newBenchSimulatorsCmd(), newBenchPlatformsCmd(), newBenchAnalyticsCmd(), newBenchConvertCmd())
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
				srv, err := startBenchServer(ctx, benchServerOptions{Role: role, LogLevel: serverLog})
				if err != nil {
					return err
				}
				defer srv.stop()
				url, key = srv.url, srv.key
			}
			cfg.URL = url
			cfg.Header = http.Header{"X-Api-Key": {key}}

			stopProfile, err := startCPUProfile(profile)
			if err != nil {
				return err
			}
			res, err := bench.Run(ctx, cfg)
			stopProfile()
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

// benchServer is a server started by `reelay bench` for itself.
type benchServer struct {
	url, key string
	// pid is the server's process when it runs as a child process, else 0.
	pid  int
	stop func()
}

// benchServerOptions are what a bench server may differ in from `reelay serve`'s defaults.
type benchServerOptions struct {
	// Role is all (as serve, with job workers) or api.
	Role string
	// LogLevel of the server's logs, which go nowhere.
	LogLevel string
	// DatabaseURL is "" for a fresh SQLite database in the temporary folder, or a postgres://
	// URL: the server then runs in a fresh schema on that database, dropped when it stops.
	DatabaseURL string
	// SecretKey is the server's secret key (32 bytes); nil makes one for the run.
	SecretKey []byte
	// SandboxURL, when set, is where the server's sandbox channels reach their simulators
	// (REELAY_SANDBOX_URL): a host apart from it. The server still serves its own.
	SandboxURL string
	// BlobURL, when set, is the server's media storage (REELAY_BLOB_URL), such as an s3://
	// bucket whose credentials are in the AWS environment; by default a folder in the
	// temporary one.
	BlobURL string
	// Seed, when set, fills the database for the run's account before the server starts.
	Seed func(ctx context.Context, st *store.Store, account store.CreatedAccount) error
}

// startBenchServer runs serve, with the settings `reelay serve` would use, on a fresh database
// (see benchServerOptions) that holds an account made for the run; media and the rest live in
// a temporary folder. Only the rate limit and the caps on projects and channels (a burst's
// fixture has a project per five posts) are raised out of reach, and logs go nowhere.
func startBenchServer(ctx context.Context, o benchServerOptions) (*benchServer, error) {
	dir, err := os.MkdirTemp("", "reelay-bench-")
	if err != nil {
		return nil, err
	}
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })

	var cfg config.Config
	cfg.RegisterServer(pflag.NewFlagSet("serve", pflag.ContinueOnError)) // serve's defaults
	cfg.Addr = "127.0.0.1:0"
	cfg.DataDir = dir
	cfg.RateLimitRPS = 1e9
	cfg.RateLimitBurst = 1 << 30
	cfg.MaxProjectsPerAccount, cfg.MaxChannelsPerAccount = 0, 0
	cfg.LogLevel = o.LogLevel
	if o.Role != "" {
		cfg.Role = o.Role
	}
	if o.DatabaseURL != "" {
		if !strings.HasPrefix(o.DatabaseURL, "postgres://") && !strings.HasPrefix(o.DatabaseURL, "postgresql://") {
			cleanup()
			return nil, errors.New("--database-url must be a postgres:// URL (the default is a fresh SQLite database)")
		}
		dbURL, drop, err := freshPostgresSchema(ctx, o.DatabaseURL)
		if err != nil {
			cleanup()
			return nil, err
		}
		cleanups = append(cleanups, drop)
		cfg.DatabaseURL = dbURL
	}
	// A server's key is otherwise generated into its data folder; it is given here because
	// simulators apart must know it, and PostgreSQL servers share a configured key.
	if o.SecretKey == nil {
		o.SecretKey = newSecretKey()
	}
	cfg.SecretKey = base64.StdEncoding.EncodeToString(o.SecretKey)
	cfg.SandboxURL = o.SandboxURL
	cfg.BlobURL = o.BlobURL
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
	created, err := st.CreateAccount(ctx, store.NewAccount{Name: "bench", Key: &rec})
	if err == nil && o.Seed != nil {
		err = o.Seed(ctx, st, created)
	}
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

// newSecretKey makes a secret key for a bench server.
func newSecretKey() []byte {
	key := make([]byte, 32)
	rand.Read(key)
	return key
}

// freshPostgresSchema creates a schema of its own for a run on the PostgreSQL server of base,
// as the tests do (internal/store/storetest), and returns base with that schema as its
// search_path, and a function that drops the schema.
func freshPostgresSchema(ctx context.Context, base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	// The schema is made on a plain connection, which knows no pool settings (pool_max_conns).
	admin := *u
	q := admin.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	admin.RawQuery = q.Encode()
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return "", nil, fmt.Errorf("connect to --database-url: %w", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "reelay_bench_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, admin.String())
		if err != nil {
			return
		}
		defer c.Close(ctx)
		c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
	}
	q = u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// startTrace writes an execution trace to path until stop is called; an empty path traces
// nothing.
func startTrace(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { trace.Stop(); f.Close() }, nil
}

// startCPUProfile writes a CPU profile to path until stop is called; an empty path profiles
// nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
