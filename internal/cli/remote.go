package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/config"
)

// defaultServerURL is where `reelay serve` listens unless told otherwise (REELAY_ADDR).
const defaultServerURL = "http://127.0.0.1:8080"

// remote holds the settings of a command that calls a running server's HTTP API rather than
// opening its database: where the server is and which key to send.
type remote struct {
	url    string
	apiKey string
	// opts are added to the client's options (the CLI's logger of retries, tests' transports).
	opts []client.Option
}

// remoteFlags are the flags remoteCommand adds, the only ones it reads from the environment.
var remoteFlags = []string{"url", "api-key"}

// remoteCommand gives cmd the --url and --api-key flags (REELAY_URL, REELAY_API_KEY) and
// applies the environment before it runs. Persistent flags, so that a command group (posts,
// channels, ...) sets them once for all its subcommands.
func remoteCommand(cmd *cobra.Command, r *remote) {
	fs := cmd.PersistentFlags()
	fs.StringVar(&r.url, "url", defaultServerURL, "address of the reelay server (REELAY_URL)")
	fs.StringVar(&r.apiKey, "api-key", "", "API key (prefer REELAY_API_KEY: a flag shows in the process list)")
	// Only these two flags read the environment: a client command's other flags (--title,
	// --video, --json, ...) must not change with whatever REELAY_* variables a shell that also
	// runs the server happens to hold.
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return applyEnvTo(cmd, remoteFlags...)
	}
}

// applyEnvTo sets the named flags of cmd that were not given from their REELAY_* variables.
func applyEnvTo(cmd *cobra.Command, names ...string) error {
	// Cobra merges the inherited persistent flags into the running command's Flags().
	all := cmd.Flags()
	fs := pflagSubset(all, names)
	return config.ApplyEnv(fs)
}

// client returns an API client for the settings, refusing to start without a key: every
// call but the health check needs one, and "401" from the server says less than this.
func (r *remote) client() (*client.Client, error) {
	if r.apiKey == "" {
		return nil, errors.New("no API key: set REELAY_API_KEY (or --api-key); `reelay serve` prints one on its first start, `reelay keys create` makes more")
	}
	opts := append([]client.Option{client.WithUserAgent("reelay-cli/" + Version)}, r.opts...)
	c, err := client.New(r.url, r.apiKey, opts...)
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	return c, nil
}

// pflagSubset is a flag set holding the named flags of fs (the same flags, not copies).
func pflagSubset(fs *pflag.FlagSet, names []string) *pflag.FlagSet {
	sub := pflag.NewFlagSet("subset", pflag.ContinueOnError)
	for _, n := range names {
		if f := fs.Lookup(n); f != nil {
			sub.AddFlag(f)
		}
	}
	return sub
}
