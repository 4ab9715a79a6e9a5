package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/connect"
)

func newChannelsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "channels",
		Short: "List, connect and inspect a project's channels (API)",
		Long:  "Manage the channels (connected social accounts) of a project through the HTTP API (REELAY_URL, REELAY_API_KEY).",
	}
	a := apiCommand(cmd)
	cmd.AddCommand(newChannelsListCmd(a), newChannelsConnectCmd(a), newChannelsOptionsCmd(a), newChannelsCheckCmd(a), newChannelsDeleteCmd(a))
	return cmd
}

func newChannelsListCmd(a *apiFlags) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "list [--project P]",
		Short: "List a project's channels",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			projectID, err := resolveProject(cmd.Context(), c, project)
			if err != nil {
				return err
			}
			list, err := c.ListChannels(cmd.Context(), projectID)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), list)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tPLATFORM\tNAME\tUSERNAME\tSTATUS\tSANDBOX")
			for _, ch := range list.Channels {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", ch.ID, ch.Platform, dash(ch.Name), dash(ch.Username), ch.Status, ch.Sandbox)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "project id or name (default: the account's only project)")
	return cmd
}

// tokenCredentials names what each token platform's --credentials holds.
var tokenCredentials = map[string]string{
	"bluesky":  `'{"handle":"alice.bsky.social","app_password":"xxxx-xxxx-xxxx-xxxx"}'`,
	"telegram": `'{"bot_token":"123456:ABC...","chat_id":"@mychannel"}'`,
	"discord":  `'{"webhook_url":"https://discord.com/api/webhooks/..."}'`,
	"mastodon": `'{"instance_url":"https://mastodon.social","access_token":"..."}'`,
}

func newChannelsConnectCmd(a *apiFlags) *cobra.Command {
	var project, behavior, credentials, name string
	var sandbox, sandboxConsent, open bool
	cmd := &cobra.Command{
		Use:   "connect PLATFORM [--sandbox | --credentials JSON]",
		Short: "Connect a channel: a sandbox one, one with credentials, or print an OAuth consent link",
		Long: `Connect a channel to a project.

  --sandbox             a channel on the platform's built-in simulator (any platform);
                        --sandbox-behavior sets how it behaves, e.g. '{"processing_ms":2000,"fail":"flaky","fail_rate":0.3}'
  --credentials JSON    token platforms: bluesky {"handle","app_password"}, telegram {"bot_token","chat_id"},
                        discord {"webhook_url"}, mastodon {"instance_url","access_token"}; or an
                        {"access_token","refresh_token"} pair for the others. Checked with the platform first.
  (neither)             OAuth platforms (youtube, instagram, tiktok, linkedin, pinterest, threads,
                        facebook, reddit): prints the link to open in a browser (--open tries to open
                        it); the first browser to open it owns the consent, and the platform sends that
                        browser back to reelay, which stores the channel.`,
		Example: `  reelay channels connect tiktok --sandbox
  reelay channels connect youtube --sandbox --sandbox-behavior '{"fail":"reject"}'
  reelay channels connect bluesky --credentials '{"handle":"alice.bsky.social","app_password":"xxxx-xxxx-xxxx-xxxx"}'
  reelay channels connect youtube --open`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			platform := strings.ToLower(args[0])
			if !knownPlatform(client.Platform(platform)) {
				return usagef("unknown platform %q; one of %s", args[0], platformList())
			}
			req := client.CreateChannelRequest{Platform: client.Platform(platform), Name: name}
			switch {
			case sandbox && credentials != "":
				return usagef("--sandbox and --credentials cannot be used together")
			case behavior != "" && !sandbox:
				return usagef("--sandbox-behavior goes with --sandbox")
			case sandboxConsent && (sandbox || credentials != ""):
				return usagef("--sandbox-consent is for the OAuth consent link, without --sandbox or --credentials")
			case sandbox:
				req.Sandbox = true
				if behavior != "" {
					req.SandboxBehavior = &client.SandboxBehavior{}
					if err := decodeStrict(behavior, req.SandboxBehavior); err != nil {
						return usagef("--sandbox-behavior: %v; fields: processing_ms, fail, fail_rate", err)
					}
				}
			case credentials != "":
				if err := decodeStrict(credentials, &req.Credentials); err != nil {
					return usagef("--credentials: give a JSON object of strings: %v", err)
				}
			case !connect.OAuthPlatform(platform):
				return usagef("%s connects with --credentials %s (or --sandbox)", platform, tokenCredentials[platform])
			}

			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			if req.ProjectID, err = resolveProject(cmd.Context(), c, project); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !req.Sandbox && req.Credentials == nil {
				link, err := c.ConnectURL(cmd.Context(), req.Platform, client.ConnectURLParams{ProjectID: req.ProjectID, Sandbox: sandboxConsent})
				if err != nil {
					return err
				}
				if a.json {
					return printJSON(out, link)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "open this page in a browser to connect %s (valid until %s):\n", platform, timeCell(&link.ExpiresAt))
				fmt.Fprintln(out, link.URL)
				if open {
					if err := openBrowser(link.URL); err != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "could not open a browser (%v): open the link yourself\n", err)
					}
				}
				return nil
			}
			ch, err := c.CreateChannel(cmd.Context(), req)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(out, ch)
			}
			kind := ""
			if ch.Sandbox {
				kind = " sandbox"
			}
			fmt.Fprintf(out, "connected%s %s channel %s (%s)\n", kind, ch.Platform, ch.ID, dash(ch.Name))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&project, "project", "", "project id or name (default: the account's only project)")
	f.BoolVar(&sandbox, "sandbox", false, "connect a channel on the platform's built-in simulator")
	f.StringVar(&behavior, "sandbox-behavior", "", `with --sandbox, how the simulator behaves: {"processing_ms":N,"fail":"none|reject|unavailable|auth|rate_limit|flaky","fail_rate":0.3}`)
	f.StringVar(&credentials, "credentials", "", "token platforms: the account's credentials as a JSON object")
	f.StringVar(&name, "name", "", "the channel's name (default: the account's name on the platform)")
	f.BoolVar(&sandboxConsent, "sandbox-consent", false, "OAuth platforms: a consent link on the simulator, which approves at once")
	f.BoolVar(&open, "open", false, "OAuth platforms: open the consent link in a browser")
	return cmd
}

// decodeStrict reads a JSON flag value, refusing unknown fields.
func decodeStrict(raw string, v any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// openBrowser asks the desktop to open link.
func openBrowser(link string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", link)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", link)
	default:
		cmd = exec.Command("xdg-open", link)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reap it; the browser outlives this command
	return nil
}

func newChannelsOptionsCmd(a *apiFlags) *cobra.Command {
	var subreddit string
	cmd := &cobra.Command{
		Use:   "options CHANNEL_ID [--subreddit NAME]",
		Short: "Show a channel's publish choices, read from its platform (boards, privacy levels, flair, ...)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			opts, err := c.ChannelOptions(cmd.Context(), args[0], client.ChannelOptionsParams{Subreddit: subreddit})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if a.json {
				return printJSON(out, opts)
			}
			fmt.Fprintf(out, "channel %s (%s), options read from the %s\n\n", opts.ChannelID, opts.Platform, dash(opts.Source))
			return printTree(out, opts.Options)
		},
	}
	cmd.Flags().StringVar(&subreddit, "subreddit", "", "Reddit: show this subreddit's requirements and flair")
	return cmd
}

func newChannelsCheckCmd(a *apiFlags) *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "check [CHANNEL_ID] [--project P]",
		Short: "Ask the platforms whether channels work: token, scopes, API version, right to publish",
		Long: `Ask a channel's platform, with harmless read calls only, whether the channel works, and
print one line per check with its status (ok, failed or skipped) and, for a failed one, the
fix. Without CHANNEL_ID, every channel of the project is checked. The exit code is 1 when a
check failed.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			ids := args
			if len(ids) == 0 {
				projectID, err := resolveProject(cmd.Context(), c, project)
				if err != nil {
					return err
				}
				list, err := c.ListChannels(cmd.Context(), projectID)
				if err != nil {
					return err
				}
				for _, ch := range list.Channels {
					ids = append(ids, ch.ID)
				}
			}
			var results []*client.ChannelCheckResult
			failed := 0
			for _, id := range ids {
				r, err := c.CheckChannel(cmd.Context(), id)
				if err != nil {
					return err
				}
				results = append(results, r)
				if !r.OK {
					failed++
				}
			}
			out := cmd.OutOrStdout()
			if a.json {
				if err := printJSON(out, results); err != nil {
					return err
				}
			} else {
				for i, r := range results {
					if i > 0 {
						fmt.Fprintln(out)
					}
					printChannelCheck(out, r)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d channels failed a check", failed, len(results))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "without CHANNEL_ID: the project whose channels to check (default: the account's only project)")
	return cmd
}

// printChannelCheck prints one channel's check: a heading, then a line per check.
func printChannelCheck(w io.Writer, r *client.ChannelCheckResult) {
	ch := r.Channel
	fmt.Fprintf(w, "%s %s (%s, %s)\n", ch.Platform, dash(ch.Name), ch.ID, ch.Status)
	tw := newTable(w)
	for _, k := range r.Checks {
		line := k.Detail
		if k.Fix != "" {
			line += "; fix: " + k.Fix
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Name, k.Status, line)
	}
	_ = tw.Flush()
}

func newChannelsDeleteCmd(a *apiFlags) *cobra.Command {
	return newDeleteCmd(a, "channel", "Disconnect a channel and delete its stored tokens (its posts are kept)",
		(*client.Client).DeleteChannel)
}

// newDeleteCmd is a `delete ID` command: remove deletes the thing named noun by its id.
func newDeleteCmd(a *apiFlags, noun, short string, remove func(*client.Client, context.Context, string) error) *cobra.Command {
	return &cobra.Command{
		Use:   "delete " + strings.ToUpper(noun) + "_ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			if err := remove(c, cmd.Context(), args[0]); err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"success": true, "id": args[0]})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %s %s\n", noun, args[0])
			return nil
		},
	}
}

// printTree prints an open JSON object readably: "path  value" for each scalar, a list of
// scalars on one line, and a table for each list of objects.
func printTree(w io.Writer, v map[string]any) error {
	tw := newTable(w)
	var tables []func() error
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(strings.TrimPrefix(prefix+"."+k, "."), x[k])
			}
		case []any:
			if len(x) > 0 && allObjects(x) {
				tables = append(tables, func() error { return printObjectTable(w, prefix, x) })
				return
			}
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = scalar(e)
			}
			fmt.Fprintf(tw, "%s\t%s\n", prefix, dash(strings.Join(parts, ", ")))
		default:
			fmt.Fprintf(tw, "%s\t%s\n", prefix, scalar(x))
		}
	}
	walk("", v)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range tables {
		fmt.Fprintln(w)
		if err := t(); err != nil {
			return err
		}
	}
	return nil
}

func allObjects(xs []any) bool {
	for _, x := range xs {
		if _, ok := x.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// printObjectTable prints a list of objects as a table of their fields, id and name first.
func printObjectTable(w io.Writer, title string, xs []any) error {
	seen := map[string]bool{}
	var cols []string
	for _, x := range xs {
		for k := range x.(map[string]any) {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	rank := func(k string) int {
		switch k {
		case "id":
			return 0
		case "name", "title", "label":
			return 1
		}
		return 2
	}
	sort.Slice(cols, func(i, j int) bool {
		if rank(cols[i]) != rank(cols[j]) {
			return rank(cols[i]) < rank(cols[j])
		}
		return cols[i] < cols[j]
	})
	fmt.Fprintf(w, "%s:\n", title)
	tw := newTable(w)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(cols, "\t")))
	for _, x := range xs {
		m := x.(map[string]any)
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = oneLine(scalar(m[c]), 60)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// scalar shows one JSON value in a cell.
func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		return dash(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}
