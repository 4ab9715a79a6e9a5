package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reelay/reelay/internal/bench"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/platform/sim/simhost"
	"github.com/reelay/reelay/internal/platform/sim/simset"
	"github.com/reelay/reelay/internal/secret"
)

// The publishing scenarios of `reelay bench`: ingest, burst, throughput and reads. They share
// how the server under test is found or started, the CPU profile, and how results are printed
// (scenarioFlags and runScenario below); each adds only its own knobs.

// scenarioFlags are the flags every publishing scenario has.
type scenarioFlags struct {
	url, key          string
	databaseURL       string
	blobURL           string
	serverLog         string
	profile           string
	trace             string
	settleTimeout     time.Duration
	platformsInServer bool
}

func (s *scenarioFlags) register(f *pflag.FlagSet) {
	f.StringVar(&s.url, "url", "", "base URL of a running server with sandbox channels enabled (default: start one on a fresh database)")
	f.StringVar(&s.key, "key", "", "API key for --url (default $REELAY_API_KEY); sent in the X-API-Key header")
	f.StringVar(&s.databaseURL, "database-url", "", "postgres:// URL for the self-contained server, which then works in a fresh schema "+
		"there, dropped afterwards (default: a fresh SQLite database in a temporary folder)")
	f.StringVar(&s.blobURL, "blob-url", "", "media storage of the self-contained server (REELAY_BLOB_URL), such as "+
		"s3://bucket?endpoint=...; credentials from the AWS environment, which its process inherits (default: a temporary folder)")
	f.StringVar(&s.serverLog, "server-log-level", "error", "log level of the self-contained server (its logs go nowhere)")
	f.StringVar(&s.profile, "cpuprofile", "", "write a CPU profile to this file: of this process (server and clients) while measuring, "+
		"or of the whole server process when it runs apart (ingest)")
	f.StringVar(&s.trace, "trace", "", "write an execution trace of this process while measuring, or of the whole server process "+
		"when it runs apart (ingest) (go tool trace; -pprof=sync or syscall shows where goroutines wait, which a CPU profile does not)")
	f.DurationVar(&s.settleTimeout, "settle-timeout", 5*time.Minute, "how long to wait for posts to settle")
	f.BoolVar(&s.platformsInServer, "platforms-in-server", false, "publish to the self-contained server's own platform "+
		"simulators (its sandbox, which keeps their state in its database) instead of simulators apart, in a process "+
		"of the bench's own, with their state in memory, as real platforms are apart")
}

// scenarioResult is what a scenario returns.
type scenarioResult interface {
	Summary() string
}

// scenarioRun is what a scenario gets: a client of the server, the server's process when it
// runs apart, the platform simulators' when they do, and the function that brackets the
// measured part (the CPU profile).
type scenarioRun struct {
	client *bench.Client
	pid    int
	// serverPID is the process the server runs in when it is self-contained: the child, or
	// this one (whose CPU figure then includes the bench's own clients).
	serverPID int
	// platformsPID is the process of the simulators apart from the server, and simulators
	// reads what they received; 0 and nil when the server's own serve the sandbox channels.
	platformsPID int
	simulators   *bench.Client
	measure      func() func()
	// stderr is where the scenario's processes write, shared with the bench's summary.
	stderr io.Writer
}

// runScenario finds or starts the server, runs the scenario, and prints its result: JSON on
// stdout, a summary on stderr. child runs a self-contained server as a process of its own
// (`reelay bench server`), whose memory can then be measured.
//
// A self-contained server publishes to platform simulators apart from it, as reelay publishes
// to platforms elsewhere: a process of their own (`reelay bench simulators`) with their state
// in memory, which the server reaches at its sandbox URL. Its own simulators keep their state
// in its database, and their work, CPU and database both, is not reelay's; they serve the
// sandbox channels instead with --platforms-in-server.
func runScenario(cmd *cobra.Command, sf *scenarioFlags, conns int, child bool,
	run func(ctx context.Context, r scenarioRun) (scenarioResult, error)) error {
	ctx := cmd.Context()
	// The child server's output and this process's share stderr.
	stderr := &syncWriter{w: cmd.ErrOrStderr()}
	r, target, stop, err := startScenario(ctx, sf, conns, child, stderr)
	if err != nil {
		return err
	}
	defer stop()

	// The yardstick runs while the server is idle: before the scenario sets anything up, and
	// after it has settled.
	machine := &bench.Machine{Workload: bench.Yardstick, Before: bench.MeasureSpeed(ctx, yardstickTime)}
	res, err := run(ctx, r)
	machine.After = bench.MeasureSpeed(ctx, yardstickTime)
	if res != nil {
		if m, ok := res.(interface{ SetMachine(*bench.Machine) }); ok {
			m.SetMachine(machine)
		}
		// Which simulators published the posts: a server that did not reach those apart
		// published through its own.
		var sims *bench.Simulators
		if m, ok := res.(interface{ SetSimulators(*bench.Simulators) }); ok {
			var serr error
			if sims, serr = bench.CountPublished(ctx, r.client, r.simulators, r.platformsPID); serr != nil {
				fmt.Fprintln(stderr, "simulators:", serr)
			} else {
				m.SetSimulators(sims)
			}
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if jerr := enc.Encode(res); jerr != nil && err == nil {
			err = jerr
		}
		fmt.Fprintf(stderr, "%s\n(%s; GOMAXPROCS %d, %d CPUs, %s, %s/%s; %s)\n", res.Summary(), target,
			runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, machine)
		if sims != nil {
			fmt.Fprintln(stderr, sims)
		}
		if t, ok := targetsOf(res); ok && err == nil {
			if missed := t.Missed(); len(missed) > 0 {
				fmt.Fprintf(stderr, "targets missed: %s\n", strings.Join(missed, ", "))
			} else {
				fmt.Fprintln(stderr, "targets met")
			}
		}
	}
	return err
}

// startScenario finds or starts the server a scenario runs against, and the platform
// simulators apart from it, as runScenario says; stop ends what it started. It describes the
// server in target.
func startScenario(ctx context.Context, sf *scenarioFlags, conns int, child bool, stderr io.Writer) (r scenarioRun, target string, stop func(), err error) {
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stopAll()
		}
	}()
	r.stderr = stderr
	target = "self-contained server (SQLite)"
	if sf.databaseURL != "" {
		target = "self-contained server (PostgreSQL)"
	}
	url, key := sf.url, sf.key
	switch {
	case url != "":
		if sf.databaseURL != "" {
			return r, "", nil, errors.New("--database-url is for the self-contained server; leave it out with --url")
		}
		if sf.blobURL != "" {
			return r, "", nil, errors.New("--blob-url is for the self-contained server; leave it out with --url")
		}
		if sf.platformsInServer {
			return r, "", nil, errors.New("--platforms-in-server is for the self-contained server: a running server publishes to the simulators it is configured with")
		}
		if key == "" {
			key = os.Getenv("REELAY_API_KEY")
		}
		if key == "" {
			return r, "", nil, errors.New("--url needs an API key: --key or REELAY_API_KEY")
		}
		target = url
	case key != "":
		return r, "", nil, errors.New("--key needs --url: the self-contained benchmark makes its own key")
	default:
		o := benchServerOptions{LogLevel: sf.serverLog, DatabaseURL: sf.databaseURL, BlobURL: sf.blobURL}
		if !sf.platformsInServer {
			o.SecretKey = newSecretKey()
			sims, err := startChild(ctx, "platform simulators", []string{"bench", "simulators"}, o.SecretKey, stderr)
			if err != nil {
				return r, "", nil, err
			}
			stops = append(stops, func() { sims.stop() })
			o.SandboxURL, r.platformsPID = sims.url, sims.pid
			r.simulators = bench.NewClient(sims.url, sims.key, 4)
			stops = append(stops, func() { r.simulators.Close() })
		}
		var srv *benchServer
		if child {
			srv, err = startChildServer(ctx, o, sf.profile, sf.trace, stderr)
		} else {
			srv, err = startBenchServer(ctx, o)
		}
		if err != nil {
			return r, "", nil, err
		}
		stops = append(stops, func() { srv.stop() })
		url, key, r.pid, r.serverPID = srv.url, srv.key, srv.pid, srv.pid
		if child {
			target += fmt.Sprintf(", as child process %d", srv.pid)
		} else {
			r.serverPID = os.Getpid()
			target += ", in this process"
		}
	}
	r.client = bench.NewClient(url, key, conns)
	stops = append(stops, func() { r.client.Close() })

	var starts []func() (stop func(), err error)
	if sf.profile != "" && r.pid == 0 {
		f, err := os.Create(sf.profile)
		if err != nil {
			return r, "", nil, err
		}
		stops = append(stops, func() { f.Close() })
		starts = append(starts, func() (func(), error) { return pprof.StopCPUProfile, pprof.StartCPUProfile(f) })
	}
	if sf.trace != "" && r.pid == 0 {
		f, err := os.Create(sf.trace)
		if err != nil {
			return r, "", nil, err
		}
		stops = append(stops, func() { f.Close() })
		starts = append(starts, func() (func(), error) { return trace.Stop, trace.Start(f) })
	}
	r.measure = func() func() {
		var stops []func()
		for _, start := range starts {
			stop, err := start()
			if err != nil {
				fmt.Fprintln(stderr, "profile:", err)
				continue
			}
			stops = append(stops, stop)
		}
		return func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
	return r, target, stopAll, nil
}

// yardstickTime is how long each part of a yardstick measurement runs (compression on one
// core, then on all, then the loopback echo).
const yardstickTime = 500 * time.Millisecond

// syncWriter serialises writes from several goroutines (a child process's output is copied
// by one). It has only Write, so that io.Copy into it never holds on to a buffer's insides.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func targetsOf(res scenarioResult) (bench.Targets, bool) {
	switch r := res.(type) {
	case *bench.IngestResult:
		return r.Targets, true
	case *bench.BurstResult:
		return r.Targets, true
	case *bench.ThroughputResult:
		return r.Targets, true
	case *bench.ReadsResult:
		return r.Targets, true
	}
	return nil, false
}

func platformsFlag(f *pflag.FlagSet, p *string, def string) {
	f.StringVar(p, "platforms", def, "comma-separated sandbox platforms each post goes to, one channel of each (youtube, instagram, tiktok)")
}

func newBenchIngestCmd() *cobra.Command {
	var (
		sf        scenarioFlags
		size      string
		refs      int
		inProcess bool
	)
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Upload one large video to YouTube, Instagram and TikTok sandboxes; compare with plain loopback transfers",
		Long: "Generate an MP4 of --size bytes (streamed to a temporary file), publish it by multipart POST /publish to " +
			"instant sandbox channels of YouTube, Instagram and TikTok, and measure the time from the request's start " +
			"to the last destination published, against --references plain HTTP transfers of the same file over " +
			"loopback to a server that discards it (the upload plus one transfer per platform). The ratio of the two " +
			"is the overhead of reelay and the simulators. The self-contained server runs as a child process " +
			"(`reelay bench server`), so that its peak resident memory (VmHWM) can be read from /proc (Linux). With " +
			"--blob-url the same publish runs first on a server storing on local disk, then on one storing there, and " +
			"both are printed side by side (local_disk in the JSON).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := parseSize(size)
			if err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			child := !inProcess && sf.url == ""
			ingest := func(ctx context.Context, r scenarioRun, storage string) (bench.IngestResult, error) {
				res, err := bench.Ingest(ctx, bench.IngestConfig{Client: r.client, Size: n, References: refs,
					ServerPID: r.pid, PlatformsPID: r.platformsPID, Simulators: r.simulators, Timeout: sf.settleTimeout,
					Measure: r.measure})
				res.Storage = storage
				return res, err
			}
			return runScenario(cmd, &sf, 4, child, func(ctx context.Context, r scenarioRun) (scenarioResult, error) {
				if sf.url != "" {
					res, err := ingest(ctx, r, "")
					return &res, err
				}
				if sf.blobURL == "" {
					res, err := ingest(ctx, r, "local disk")
					return &res, err
				}
				// The same publish to a server of its own on local disk first, for figures
				// side by side; profiles are of the run on --blob-url only.
				local := sf
				local.blobURL, local.profile, local.trace = "", "", ""
				lr, _, stop, err := startScenario(ctx, &local, 4, child, r.stderr)
				if err != nil {
					return nil, fmt.Errorf("the server on local disk: %w", err)
				}
				localRes, lerr := ingest(ctx, lr, "local disk")
				stop()
				storage, _, _ := strings.Cut(sf.blobURL, "://")
				res, err := ingest(ctx, r, storage)
				res.LocalDisk = &localRes
				if err == nil && lerr != nil {
					err = fmt.Errorf("on local disk: %w", lerr)
				}
				return &res, err
			})
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.StringVar(&size, "size", "100MB", "size of the video: bytes, or with a unit (kB, MB, GB; KiB, MiB, GiB)")
	f.IntVar(&refs, "references", 4, "plain loopback transfers of the file that make the reference")
	f.BoolVar(&inProcess, "in-process", false, "run the self-contained server in this process (its memory is then not measured)")
	return cmd
}

func newBenchBurstCmd() *cobra.Command {
	var (
		sf        scenarioFlags
		cfg       bench.BurstConfig
		platforms string
	)
	cmd := &cobra.Command{
		Use:   "burst",
		Short: "Schedule many posts for one instant and measure how late they publish",
		Long: "Schedule --posts posts (a small video, to one sandbox channel of each of --platforms) for the same " +
			"instant, --lead after their submission starts; wait until all have settled, and report per post the " +
			"lateness of its first destination's published_at, and of its last, behind scheduled_for.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Platforms, err = bench.ParsePlatforms(platforms); err != nil {
				return err
			}
			if cfg.Posts < 1 || cfg.Concurrency < 1 || cfg.Lead <= 0 {
				return errors.New("--posts, --concurrency and --lead must be positive")
			}
			return runScenario(cmd, &sf, cfg.Concurrency, false, func(ctx context.Context, r scenarioRun) (scenarioResult, error) {
				c := cfg
				c.Client, c.Timeout, c.Measure, c.ServerPID, c.PlatformsPID = r.client, sf.settleTimeout, r.measure, r.serverPID, r.platformsPID
				res, err := bench.Burst(ctx, c)
				return &res, err
			})
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.IntVar(&cfg.Posts, "posts", 1000, "posts scheduled for the same instant")
	f.IntVar(&cfg.Concurrency, "concurrency", 32, "clients submitting the posts")
	f.DurationVar(&cfg.Lead, "lead", 10*time.Second, "how long after the submission starts the posts are scheduled (must cover the submission)")
	platformsFlag(f, &platforms, "youtube,tiktok")
	return cmd
}

func newBenchThroughputCmd() *cobra.Command {
	var (
		sf        scenarioFlags
		cfg       bench.ThroughputConfig
		platforms string
	)
	cmd := &cobra.Command{
		Use:   "throughput",
		Short: "Publish immediately at a concurrency and measure posts/s published to every destination",
		Long: "For --duration, --concurrency clients publish a small video immediately (multipart, Prefer: wait=0) to " +
			"one sandbox channel of each of --platforms, each client sending its next post when the last is " +
			"accepted; then wait until every post has settled. posts_per_sec is the posts published to all their " +
			"destinations divided by the time from the first request to the last destination published.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Platforms, err = bench.ParsePlatforms(platforms); err != nil {
				return err
			}
			if cfg.Concurrency < 1 || cfg.Duration <= 0 || cfg.MaxPosts < 1 {
				return errors.New("--concurrency, --duration and --max-posts must be positive")
			}
			return runScenario(cmd, &sf, cfg.Concurrency, false, func(ctx context.Context, r scenarioRun) (scenarioResult, error) {
				c := cfg
				c.Client, c.Timeout, c.Measure = r.client, sf.settleTimeout, r.measure
				res, err := bench.Throughput(ctx, c)
				return &res, err
			})
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.IntVar(&cfg.Concurrency, "concurrency", 32, "clients publishing, each with one request in flight")
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to submit posts")
	f.IntVar(&cfg.MaxPosts, "max-posts", 5000, "stop submitting after this many posts (sandbox channels are made for this many)")
	platformsFlag(f, &platforms, "youtube,instagram,tiktok")
	return cmd
}

func newBenchReadsCmd() *cobra.Command {
	var (
		sf        scenarioFlags
		cfg       bench.ReadsConfig
		platforms string
	)
	cmd := &cobra.Command{
		Use:   "reads",
		Short: "Publish posts, then load GET /posts/{id} over them",
		Long: "Publish --posts posts (a small video to one sandbox channel of each of --platforms) and wait until they " +
			"are published; then --concurrency closed-loop keep-alive clients read them round-robin with GET " +
			"/api/v1/posts/{id} for --duration after --warmup, as `reelay bench api` does for one path.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Platforms, err = bench.ParsePlatforms(platforms); err != nil {
				return err
			}
			if cfg.Posts < 1 || cfg.Concurrency < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 {
				return errors.New("--posts, --concurrency and --duration must be positive, --warmup not negative")
			}
			return runScenario(cmd, &sf, cfg.Concurrency, false, func(ctx context.Context, r scenarioRun) (scenarioResult, error) {
				c := cfg
				c.Client, c.Timeout, c.Measure, c.SetupConcurrency = r.client, sf.settleTimeout, r.measure, 32
				res, err := bench.Reads(ctx, c)
				return &res, err
			})
		},
	}
	f := cmd.Flags()
	sf.register(f)
	f.IntVar(&cfg.Posts, "posts", 500, "posts to publish, then read")
	f.IntVar(&cfg.Concurrency, "concurrency", 32, "concurrent readers, each with one request in flight")
	f.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to measure")
	f.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "how long to read before measuring")
	platformsFlag(f, &platforms, "youtube,instagram,tiktok")
	return cmd
}

// newBenchServerCmd is the server a scenario runs as a child process: startBenchServer in a
// process of its own, with the secret key in $REELAY_BENCH_SECRET_KEY when it is set. It
// prints one JSON line, {"url","key"}, once it listens, and stops when its standard input ends
// (the parent closed it, or died) or on a signal.
func newBenchServerCmd() *cobra.Command {
	var (
		o              benchServerOptions
		profile, trace string
	)
	cmd := &cobra.Command{
		Use:    "server",
		Short:  "Run a self-contained bench server until standard input ends (used by the scenarios)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stopProfile, err := startCPUProfile(profile)
			if err != nil {
				return err
			}
			defer stopProfile()
			stopTrace, err := startTrace(trace)
			if err != nil {
				return err
			}
			defer stopTrace()
			if v := os.Getenv(benchSecretKeyEnv); v != "" {
				if o.SecretKey, err = secret.ParseKey(v); err != nil {
					return fmt.Errorf("%s: %w", benchSecretKeyEnv, err)
				}
			}
			srv, err := startBenchServer(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer srv.stop()
			announceAndWait(cmd.Context(), cmd, srv.url, srv.key)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DatabaseURL, "database-url", "", "postgres:// URL (a fresh schema there); default a fresh SQLite database")
	f.StringVar(&o.LogLevel, "server-log-level", "error", "log level (logs go nowhere)")
	f.StringVar(&o.Role, "server-role", config.RoleAll, "all or api")
	f.StringVar(&o.SandboxURL, "sandbox-url", "", "where sandbox channels reach their simulators (default: the server's own)")
	f.StringVar(&o.BlobURL, "blob-url", "", "media storage (REELAY_BLOB_URL; s3:// credentials from the AWS environment); default a temporary folder")
	f.StringVar(&profile, "cpuprofile", "", "write a CPU profile of this process to this file")
	f.StringVar(&trace, "trace", "", "write an execution trace of this process to this file")
	return cmd
}

// benchExecutable is the binary that runs child processes.
var benchExecutable = os.Executable

// benchSecretKeyEnv passes the run's secret key to the child processes (base64): in the
// environment, which other users cannot read, rather than on the command line, which they can.
// A name of the bench's own, so that a REELAY_SECRET_KEY of the shell is never taken for it.
const benchSecretKeyEnv = "REELAY_BENCH_SECRET_KEY"

// childProcess is a process of the bench: `reelay bench server` or `reelay bench simulators`.
// It printed one JSON line, {"url","key"}, once it listened; it stops when its standard
// input ends.
type childProcess struct {
	url, key string
	pid      int
	stop     func()
}

// startChild runs reelay with args as a child process, with secretKey (when not nil) in its
// environment, and waits until it listens. what names it in errors.
func startChild(ctx context.Context, what string, args []string, secretKey []byte, stderr io.Writer) (*childProcess, error) {
	exe, err := benchExecutable()
	if err != nil {
		return nil, fmt.Errorf("find the reelay binary for the %s process: %w", what, err)
	}
	cmd := exec.Command(exe, args...)
	if secretKey != nil {
		cmd.Env = append(os.Environ(), benchSecretKeyEnv+"="+base64.StdEncoding.EncodeToString(secretKey))
	}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	stop := func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	var info struct{ URL, Key string }
	select {
	case line, ok := <-lines:
		if !ok || json.Unmarshal([]byte(line), &info) != nil || info.URL == "" {
			stop()
			return nil, fmt.Errorf("the %s process did not start (it printed %q)", what, line)
		}
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	case <-time.After(2 * time.Minute):
		stop()
		return nil, fmt.Errorf("the %s process did not listen within 2 minutes", what)
	}
	return &childProcess{url: info.URL, key: info.Key, pid: cmd.Process.Pid, stop: stop}, nil
}

// startChildServer runs `reelay bench server` as a child process and waits until it listens.
func startChildServer(ctx context.Context, o benchServerOptions, profile, traceFile string, stderr io.Writer) (*benchServer, error) {
	args := []string{"bench", "server", "--server-log-level", o.LogLevel}
	if o.DatabaseURL != "" {
		args = append(args, "--database-url", o.DatabaseURL)
	}
	if o.SandboxURL != "" {
		args = append(args, "--sandbox-url", o.SandboxURL)
	}
	if o.BlobURL != "" {
		args = append(args, "--blob-url", o.BlobURL)
	}
	if profile != "" {
		args = append(args, "--cpuprofile", profile)
	}
	if traceFile != "" {
		args = append(args, "--trace", traceFile)
	}
	p, err := startChild(ctx, "server", args, o.SecretKey, stderr)
	if err != nil {
		return nil, err
	}
	return &benchServer{url: p.url, key: p.key, pid: p.pid, stop: p.stop}, nil
}

// newBenchSimulatorsCmd is the platform simulators apart from the server under test: every
// simulator at /sandbox/{platform}/ of a loopback listener of its own, with its state in
// memory, for the sandbox tokens of the server whose key is in $REELAY_BENCH_SECRET_KEY; every
// account behaves as the scenarios' channels do. It prints one JSON line, {"url","key"}, once
// it listens (key opens GET /sandbox/{platform}/_introspect), and stops when its standard input
// ends or on a signal.
func newBenchSimulatorsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "simulators",
		Short:  "Serve the platform simulators apart from a bench server until standard input ends (used by the scenarios)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := secret.ParseKey(os.Getenv(benchSecretKeyEnv))
			if err != nil {
				return fmt.Errorf("%s: %w", benchSecretKeyEnv, err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			introspectKey := make([]byte, 16)
			rand.Read(introspectKey)
			hostURL := "http://" + ln.Addr().String()
			host, err := simhost.New(simhost.Config{URL: hostURL, SecretKey: key, Simulators: simset.All,
				Behavior: bench.SandboxBehavior, IntrospectKey: hex.EncodeToString(introspectKey)})
			if err != nil {
				ln.Close()
				return err
			}
			srv := &http.Server{Handler: host, ReadHeaderTimeout: 10 * time.Second}
			go srv.Serve(ln)
			defer srv.Close()
			announceAndWait(cmd.Context(), cmd, hostURL, hex.EncodeToString(introspectKey))
			return nil
		},
	}
}

// announceAndWait tells the parent (startChild) where this child process listens, with the
// key it answers to, and waits until the parent closes standard input (or dies), or ctx ends.
func announceAndWait(ctx context.Context, cmd *cobra.Command, url, key string) {
	line, _ := json.Marshal(map[string]string{"url": url, "key": key})
	fmt.Fprintf(cmd.OutOrStdout(), "%s\n", line)
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, cmd.InOrStdin())
		close(ended)
	}()
	select {
	case <-ended:
	case <-ctx.Done():
	}
}

// parseSize reads a byte count: digits, optionally with a decimal (kB, MB, GB) or binary (KiB,
// MiB, GiB) unit.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   float64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"b", 1}}
	mult := 1.0
	lower := strings.ToLower(s)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult, s = u.mult, strings.TrimSpace(s[:len(s)-len(u.suffix)])
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	return int64(v * mult), nil
}
