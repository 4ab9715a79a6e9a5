package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/fileperm"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

func newServeCmd() *cobra.Command {
	var cfg config.Config
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server, job workers and scheduler",
		Long: "Run reelay. With no settings it keeps everything under ./data (SQLite, media, secret key), " +
			"serves sandbox platforms, and on first start creates an account and prints its API key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), &cfg, cmd.ErrOrStderr(), nil)
		},
	}
	cfg.RegisterServer(cmd.Flags())
	withEnv(cmd, cfg.Finish)
	return cmd
}

// serve runs until ctx ends. ready, when not nil, receives the listening address (tests use it
// with an addr of 127.0.0.1:0).
func serve(ctx context.Context, cfg *config.Config, stderr io.Writer, ready chan<- string) error {
	log, err := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	tightenDataFiles(cfg, log)
	secretKey, err := loadSecretKey(cfg, log)
	if err != nil {
		return err
	}
	previousKeys, err := loadPreviousKeys(cfg, secretKey)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	log.Info("database ready", "dialect", st.Dialect(), "role", cfg.Role)

	jsonLog := strings.EqualFold(cfg.LogFormat, "json")
	if err := firstStart(ctx, st, stderr, log, jsonLog); err != nil {
		return err
	}

	// Listen before anything else is built, so that a server on port 0 (tests) knows the
	// address the simulators and media links must name.
	// A worker listens too, for its health and metrics.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	var metricsLn net.Listener
	if cfg.MetricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
			return fmt.Errorf("%s: %w", config.EnvName("metrics-addr"), err)
		}
		defer metricsLn.Close()
	}
	if cfg.Role != config.RoleWorker && strings.HasSuffix(cfg.PublicURL, ":0") {
		cfg.PublicURL = "http://" + ln.Addr().String()
	}
	// With SQLite one process owns the database, and the lock makes sure of it: jobs found
	// running at start were left by a process that died, and resume at once instead of after
	// River's rescue delay.
	soleWorker := st.Dialect() == store.SQLite && cfg.Role != config.RoleAPI
	if st.Dialect() == store.SQLite {
		unlock, err := lockDatabase(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		defer unlock()
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a, err := app.New(ctx, app.Params{Config: cfg, Store: st, SecretKey: secretKey, PreviousSecretKeys: previousKeys, Logger: log, Registry: reg,
		Version: Version, SoleWorker: soleWorker})
	if err != nil {
		return err
	}
	if err := a.Start(ctx); err != nil {
		a.Close()
		return err
	}

	// Requests do not end with the signal: the drain lets those in flight finish (drain.go),
	// and their context ends only once the servers have shut down.
	drain := httpapi.NewDrain()
	requestCtx, cancelRequests := context.WithCancel(httpapi.WithDrain(context.WithoutCancel(ctx), drain))
	defer cancelRequests()
	srv := httpapi.NewHTTPServer(cfg.Addr, a.Handler, requestCtx)
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	if metricsLn != nil {
		metricsSrv := httpapi.NewHTTPServer(cfg.MetricsAddr, a.MetricsHandler, requestCtx)
		servers = append(servers, metricsSrv)
		go func() { errc <- metricsSrv.Serve(metricsLn) }()
		log.Info("serving metrics", "url", "http://"+metricsLn.Addr().String()+"/metrics", "token", cfg.MetricsToken != "")
	}
	if cfg.Role == config.RoleWorker {
		log.Info("worker running", "health_url", "http://"+ln.Addr().String()+"/healthz")
	} else {
		if jsonLog {
			log.Info("listening", "url", "http://"+ln.Addr().String(), "public_url", cfg.PublicURL,
				"dashboard_url", cfg.PublicURL+"/", "api_url", cfg.PublicURL+"/api/v1")
		} else {
			log.Info("listening", "url", "http://"+ln.Addr().String(), "public_url", cfg.PublicURL)
			// Said plainly, beside the first start's key, so that a new user knows where to go next.
			fmt.Fprintf(stderr, "\n  Dashboard: %s/ (sign in with an API key)\n  API:       %s/api/v1\n\n", cfg.PublicURL, cfg.PublicURL)
		}
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	shutdown(log, cfg, a, drain, servers, cancelRequests)
	return serveErr
}

// tightenDataFiles makes what reelay keeps on local disk private to the user running it again:
// installs made before reelay set the modes itself have a database, journals and media that
// every local user can read. Only reelay's own paths are touched, not whatever else shares the
// data folder: the folder itself, the secret key, the SQLite database with its journals and
// lock, and the whole file:// media folder. A failure is logged, not fatal: the server works
// the same, and the log says what to fix.
func tightenDataFiles(cfg *config.Config, log *slog.Logger) {
	paths := []string{cfg.DataDir, filepath.Join(cfg.DataDir, "secret.key")}
	if !cfg.IsPostgres() {
		db := store.SQLitePath(cfg.DatabaseURL)
		paths = append(paths, db, db+"-wal", db+"-shm", db+"-journal", db+".lock")
	}
	changed, err := fileperm.Tighten(paths...)
	if u, perr := url.Parse(cfg.BlobURL); perr == nil && u.Scheme == "file" && u.Path != "" {
		more, terr := fileperm.TightenTree(filepath.FromSlash(u.Path))
		changed, err = append(changed, more...), errors.Join(err, terr)
	}
	if len(changed) > 0 {
		const shown = 10
		log.Warn("made data files private: other local users could read them (directories now 0700, files 0600)",
			"count", len(changed), "paths", changed[:min(len(changed), shown)])
	}
	if err != nil {
		log.Warn("some data files could not be made private; other local users may read them", "error", err)
	}
}

// loadSecretKey finds the key that seals platform tokens (and from which the keys of sandbox
// tokens and media links derive): the configured one, else the one kept in the data folder,
// which the embedded default creates on first start. With PostgreSQL every process must share
// one key, so none is invented there.
func loadSecretKey(cfg *config.Config, log *slog.Logger) ([]byte, error) {
	key, path, err := configuredOrStoredKey(cfg)
	if err != nil || key != nil {
		return key, err
	}
	if cfg.IsPostgres() {
		return nil, errors.New("REELAY_SECRET_KEY is required with PostgreSQL: every process must seal tokens with the same key (generate one with `openssl rand -base64 32`)")
	}
	key, created, err := secret.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	if created {
		log.Info("generated a secret key for platform tokens", "path", path)
	}
	return key, nil
}

// configuredOrStoredKey is the configured key, else the one kept in the data folder at path
// (nil when there is none yet).
func configuredOrStoredKey(cfg *config.Config) (key []byte, path string, err error) {
	path = filepath.Join(cfg.DataDir, "secret.key")
	if cfg.SecretKey != "" {
		key, err := secret.ParseKey(cfg.SecretKey)
		if err != nil {
			return nil, path, fmt.Errorf("REELAY_SECRET_KEY: %w", err)
		}
		return key, path, nil
	}
	if key, _, err = secret.LoadKeyFile(path); err != nil {
		return nil, path, fmt.Errorf("secret key: %w", err)
	}
	return key, path, nil
}

// loadPreviousKeys reads REELAY_SECRET_KEY_PREVIOUS. The current key among them is refused: an
// operator who forgot to change REELAY_SECRET_KEY would otherwise believe a rotation done.
func loadPreviousKeys(cfg *config.Config, current []byte) ([][]byte, error) {
	keys, err := secret.ParseKeys(cfg.SecretKeyPrevious)
	if err != nil {
		return nil, fmt.Errorf("REELAY_SECRET_KEY_PREVIOUS: %w", err)
	}
	for i, k := range keys {
		if bytes.Equal(k, current) {
			return nil, fmt.Errorf("REELAY_SECRET_KEY_PREVIOUS: key %d is REELAY_SECRET_KEY itself; set REELAY_SECRET_KEY to the new key", i+1)
		}
	}
	return keys, nil
}

// firstStartAICredits are the AI credits of the account made at first start: enough to try
// every AI endpoint, with a hosted video model too (a clip costs 5 there, the stitch of a
// 30-second storyboard 31), several times over. `reelay accounts credits add` gives more.
const firstStartAICredits = 100

// firstStart gives an empty database an account, so that one command yields a working server.
// The key goes to stderr once, and is not logged: with the text log format it is a banner of
// plain lines beside the log; with the json format, where every line of stderr is JSON, it is
// one record of its own with the key in its api_key field, written whatever the log level, and
// the only record that ever carries a secret.
func firstStart(ctx context.Context, st *store.Store, stderr io.Writer, log *slog.Logger, jsonLog bool) error {
	n, err := st.CountAccounts(ctx)
	if err != nil || n > 0 {
		return err
	}
	raw, rec := auth.NewKey("default")
	created, err := st.CreateAccount(ctx, store.NewAccount{Name: "default", Key: &rec, AICredits: firstStartAICredits})
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	more := "reelay accounts credits add " + created.Account.ID + " N"
	if jsonLog {
		slog.New(slog.NewJSONHandler(stderr, nil)).Info("first start: created an account; its API key is shown once, keep it",
			"account_id", created.Account.ID, "project_id", created.Project.ID, "ai_credits", firstStartAICredits,
			"more_ai_credits", more, "api_key", raw)
		return nil
	}
	log.Info("first start: created an account", "account_id", created.Account.ID, "project_id", created.Project.ID)
	fmt.Fprintf(stderr, "\n  First start: account %s with project \"Default\" and %d AI credits\n  (more: %s).\n  API key (shown once, keep it): %s\n\n",
		created.Account.ID, firstStartAICredits, more, raw)
	return nil
}
