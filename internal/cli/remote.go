package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

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
}

// remoteCommand gives cmd the --url and --api-key flags (REELAY_URL, REELAY_API_KEY) and
// applies the environment before it runs. Persistent flags, so that a command group (posts,
// channels, ...) sets them once for all its subcommands.
func remoteCommand(cmd *cobra.Command, r *remote) {
	fs := cmd.PersistentFlags()
	fs.StringVar(&r.url, "url", defaultServerURL, "address of the reelay server")
	fs.StringVar(&r.apiKey, "api-key", "", "API key (prefer REELAY_API_KEY: a flag shows in the process list)")
	// Cobra merges the inherited persistent flags into the running command's Flags(), so one
	// pass applies the environment to all of them.
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		return config.ApplyEnv(cmd.Flags())
	}
}

// client returns an API client for the settings, refusing to start without a key: every
// call but the health check needs one, and "401" from the server says less than this.
func (r *remote) client() (*client.Client, error) {
	if r.apiKey == "" {
		return nil, errors.New("no API key: set REELAY_API_KEY (or --api-key); `reelay serve` prints one on its first start, `reelay keys create` makes more")
	}
	c, err := client.New(r.url, r.apiKey, client.WithUserAgent("reelay-cli/"+Version))
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	return c, nil
}
