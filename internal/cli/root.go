// Package cli is the reelay command: the server, the local administration commands that work
// on its database, and the client of its HTTP API (publish, posts, channels, projects,
// analytics, inbox, ai), built on the public Go client.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// Version is the release, set at build time with -ldflags "-X .../internal/cli.Version=v1.2.3".
var Version = "dev"

// Main runs the command line and returns the exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal asks for a graceful stop (serve's drain, bounded by
	// REELAY_SHUTDOWN_TIMEOUT); a second one ends the process at once, as it would without
	// reelay catching signals.
	context.AfterFunc(ctx, stop)
	return execute(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// execute runs the command line with the given streams, prints an error for a person on
// stderr, and returns the exit code (see the exit* constants).
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetIn(stdin)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return reportError(stderr, err)
	}
	return exitOK
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "reelay",
		Short:         "Publish and schedule short vertical video to twelve social platforms",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// A flag cobra cannot parse is a usage error (exit code 2), told apart from a failure.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(newServeCmd(), newAccountsCmd(), newKeysCmd(), newProjectsCmd(), newVersionCmd(), newBenchCmd(), newSecretKeyCmd())
	root.AddCommand(newPublishCmd(), newPostsCmd(), newChannelsCmd(), newAnalyticsCmd(), newInboxCmd(), newWebhooksCmd(), newAICmd(), newMCPCmd())
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command group below root (posts, channels, keys, ...)
// refuse an unknown subcommand as a usage error; cobra would print the group's help and
// succeed, so that a typo in a script would go unnoticed.
func refuseUnknownSubcommands(root *cobra.Command) {
	for _, cmd := range root.Commands() {
		if cmd.HasSubCommands() && cmd.Run == nil && cmd.RunE == nil {
			cmd.Args = cobra.ArbitraryArgs
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
				}
				return cmd.Help()
			}
		}
		refuseUnknownSubcommands(cmd)
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "reelay", Version)
			return nil
		},
	}
}

// withEnv applies REELAY_* variables to the flags of cmd before it runs, so that every command
// reads the same settings the same way.
func withEnv(cmd *cobra.Command, finish func() error) {
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := config.ApplyEnv(settingFlags(cmd.Flags())); err != nil {
			return err
		}
		if finish != nil {
			return finish()
		}
		return nil
	}
}

// settingFlags are the flags of fs that are settings, which the environment may set: not the
// ones that choose an output (--json, --verbose), nor --url and --api-key, which
// remoteCommand reads.
func settingFlags(fs *pflag.FlagSet) *pflag.FlagSet {
	sub := pflag.NewFlagSet("settings", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "json", "verbose", "url", "api-key":
			return
		}
		sub.AddFlag(f)
	})
	return sub
}

// storageCommand is a local administration command: it opens the database named by the
// storage flags (the same one a running server uses).
func storageCommand(cmd *cobra.Command, cfg *config.Config) {
	cfg.RegisterStorage(cmd.Flags())
	withEnv(cmd, cfg.FinishStorage)
}

// withStore runs fn on the database named by cfg, closed afterwards.
func withStore(ctx context.Context, cfg *config.Config, fn func(*store.Store) error) error {
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// requireAccount checks that the --account flag names an existing account.
func requireAccount(ctx context.Context, st *store.Store, id string) error {
	if id == "" {
		return errors.New("--account is required")
	}
	if _, err := st.GetAccount(ctx, id); err != nil {
		return fmt.Errorf("account %s: %w", id, err)
	}
	return nil
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	default:
		return nil, errors.New("log format must be text or json")
	}
}

// flagInt reads an optional int flag: nil when the flag was not given.
func flagInt(fs *pflag.FlagSet, name string) *int {
	if !fs.Changed(name) {
		return nil
	}
	v, _ := fs.GetInt(name)
	return &v
}
