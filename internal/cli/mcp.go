package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/mcpserver"
)

func newMCPCmd() *cobra.Command {
	var r remote
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the agent tools (Model Context Protocol) on stdin/stdout, calling a running server",
		Long: `Serve reelay's agent tools (reelay_publish_post, reelay_get_post, reelay_list_channels,
reelay_list_projects, reelay_get_analytics) over the Model Context Protocol's stdio transport,
for a desktop agent that starts this command. The tools call the reelay server at --url
(REELAY_URL) with the API key REELAY_API_KEY; reelay_publish_post also takes video_path and
thumbnail_path, files on this machine, uploaded to that server. stdout carries only the
protocol; logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			api, err := r.client()
			if err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			return serveMCPStdio(cmd.Context(), api, cmd.InOrStdin(), cmd.OutOrStdout(), log)
		},
	}
	remoteCommand(cmd, &r)
	return cmd
}

// serveMCPStdio serves the tools on in/out until the agent closes in or ctx ends. Problems
// with the server or the key are only warned about at start: the agent still gets its tools,
// and each call answers the problem as a tool error, where the model can read it.
func serveMCPStdio(ctx context.Context, api *client.Client, in io.Reader, out io.Writer, log *slog.Logger) error {
	checkMCPRemote(ctx, api, log)
	srv := mcpserver.New(api, mcpserver.Options{LocalFiles: true, Version: Version, Logger: log})
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	err := srv.Run(ctx, &mcp.IOTransport{Reader: rc, Writer: nopWriteCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// checkMCPRemote reads the projects once, to warn on stderr (which agents show in their MCP
// logs) when the server cannot be reached or refuses the key.
func checkMCPRemote(ctx context.Context, api *client.Client, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := api.ListProjects(ctx)
	switch {
	case err == nil:
	case client.IsUnauthorized(err):
		log.Warn("reelay mcp: the server refuses the API key; set REELAY_API_KEY to a live key", "server", api.BaseURL(), "error", err)
	default:
		log.Warn("reelay mcp: the server cannot be read now; the tools will report it", "server", api.BaseURL(), "error", err)
	}
}

// nopWriteCloser keeps the protocol from closing stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
