package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

// defaultWatchTimeout bounds a live status view; platforms' processing rarely takes longer,
// and a post left processing goes on on the server anyway.
const defaultWatchTimeout = 15 * time.Minute

func newPostsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "posts",
		Short: "List, read, follow, cancel and retry posts (API)",
		Long:  "Read and manage the posts of the account through the HTTP API (REELAY_URL, REELAY_API_KEY).",
	}
	a := apiCommand(cmd)
	cmd.AddCommand(newPostsListCmd(a), newPostsGetCmd(a), newPostsCancelCmd(a), newPostsRetryCmd(a))
	return cmd
}

func newPostsListCmd(a *apiFlags) *cobra.Command {
	var project, status, cursor, platform string
	var bounds [4]string // created since/before, scheduled since/before
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list [--project P] [--status S] [--platform P] [--created-since T] [--scheduled-before T] [--limit N] [--cursor C | --all]",
		Short: "List posts, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 100 {
				return usagef("--limit must be 1 to 100")
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			params := client.ListPostsParams{Status: client.PostStatus(status), ListParams: client.ListParams{Limit: limit, Cursor: cursor}}
			if platform != "" {
				ps, err := parsePlatforms("platform", []string{platform})
				if err != nil {
					return err
				}
				params.Platform = ps[0]
			}
			for i, dst := range []*time.Time{&params.CreatedSince, &params.CreatedBefore, &params.ScheduledSince, &params.ScheduledBefore} {
				if *dst, err = parseBound(postBoundFlags[i], bounds[i]); err != nil {
					return err
				}
			}
			if project != "" {
				if params.ProjectID, err = resolveProject(ctx, c, project); err != nil {
					return err
				}
			}
			var list *client.PostList
			if all {
				list = &client.PostList{Posts: []client.Post{}}
				for p, err := range c.AllPosts(ctx, params) {
					if err != nil {
						return err
					}
					list.Posts = append(list.Posts, p)
				}
			} else if list, err = c.ListPosts(ctx, params); err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), list)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tSTATUS\tCREATED\tSCHEDULED FOR\tPLATFORMS\tTITLE")
			for _, p := range list.Posts {
				platforms := make([]string, len(p.Platforms))
				for i, pl := range p.Platforms {
					platforms[i] = string(pl)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Status, timeCell(&p.CreatedAt), timeCell(p.ScheduledFor),
					dash(strings.Join(platforms, ",")), dash(oneLine(p.Title, 40)))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if list.NextCursor != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more posts: add --cursor %s (or --all)\n", list.NextCursor)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&project, "project", "", "only this project's posts (an id or a name); default: every project")
	f.StringVar(&status, "status", "", "only posts in this status: scheduled, processing, published, partially_published, failed, canceled")
	f.StringVar(&platform, "platform", "", "only posts with a destination on this platform")
	for i, name := range postBoundFlags {
		f.StringVar(&bounds[i], name, "", "a day (YYYY-MM-DD, UTC) or an RFC 3339 time; since is included, before excluded")
	}
	f.IntVar(&limit, "limit", 20, "posts per page, 1 to 100")
	f.StringVar(&cursor, "cursor", "", "start after this cursor (printed after a page)")
	f.BoolVar(&all, "all", false, "list every page")
	return cmd
}

func newPostsGetCmd(a *apiFlags) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "get POST_ID [--watch]",
		Short: "Show a post and each destination; --watch follows it until every destination has settled",
		Long: "Show a post and the state of each destination (platform, channel, status, URL or error). With " +
			"--watch, follow it live on stderr until every destination has settled, then print it; the exit " +
			"code is then 5 when a destination failed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			var post *client.Post
			if !watch {
				if post, err = c.GetPost(cmd.Context(), args[0]); err != nil {
					return err
				}
			}
			return showPost(cmd, a, c, args[0], post, watch, timeout)
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow the post until every destination has settled")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultWatchTimeout, "with --watch, stop following after this long (0: no limit)")
	return cmd
}

func newPostsCancelCmd(a *apiFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel POST_ID",
		Short: "Cancel a scheduled post that has not fired (its allowance unit is refunded)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			post, err := c.CancelPost(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printPost(cmd.OutOrStdout(), a.json, post)
		},
	}
}

func newPostsRetryCmd(a *apiFlags) *cobra.Command {
	var watch bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "retry POST_ID [--watch]",
		Short: "Retry a post's failed destinations (published ones are never sent again)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			post, err := c.RetryPost(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return showPost(cmd, a, c, post.ID, post, watch, timeout)
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "follow the post until every destination has settled")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultWatchTimeout, "with --watch, stop following after this long (0: no limit)")
	return cmd
}

// showPost prints a post (post may be nil when watch is set: it is read then). With watch it
// first follows the post on stderr until every destination has settled, and a post that
// settled with failed destinations makes the command fail.
func showPost(cmd *cobra.Command, a *apiFlags, c *client.Client, id string, post *client.Post, watch bool, timeout time.Duration) error {
	if watch {
		view := newStatusView(cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr()))
		var err error
		if post, err = watchPost(cmd.Context(), c, id, post, view, timeout); err != nil {
			return err
		}
	}
	if err := printPost(cmd.OutOrStdout(), a.json, post); err != nil {
		return err
	}
	if watch {
		return outcome(post)
	}
	return nil
}

// printPost prints a post: as the API's JSON, or its fields and a table of its destinations.
func printPost(w io.Writer, asJSON bool, p *client.Post) error {
	if asJSON {
		return printJSON(w, p)
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "post\t%s\n", p.ID)
	fmt.Fprintf(tw, "status\t%s\n", p.Status)
	fmt.Fprintf(tw, "project\t%s\n", p.ProjectID)
	if p.Title != "" {
		fmt.Fprintf(tw, "title\t%s\n", oneLine(p.Title, 100))
	}
	fmt.Fprintf(tw, "created\t%s\n", timeCell(&p.CreatedAt))
	if p.ScheduledFor != nil {
		fmt.Fprintf(tw, "scheduled for\t%s\n", timeCell(p.ScheduledFor))
	}
	if p.PublishedAt != nil {
		fmt.Fprintf(tw, "published\t%s\n", timeCell(p.PublishedAt))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return printDestinations(w, p.PublishResults)
}

// printDestinations is the table of a post's destinations.
func printDestinations(w io.Writer, ds []client.DestinationResult) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "PLATFORM\tCHANNEL\tSTATUS\tURL / ERROR")
	for _, d := range ds {
		detail := d.URL
		if d.Error != "" {
			detail = d.Error
			if d.ErrorCategory != "" {
				detail += " [" + d.ErrorCategory + "]"
			}
		} else if d.Message != "" {
			detail = strings.TrimSpace(detail + " " + d.Message)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Platform, dash(d.ChannelTitle), d.UploadStatus, dash(detail))
	}
	return tw.Flush()
}

// postBoundFlags are the time filters of posts list, in the order of parseBound's callers.
var postBoundFlags = [4]string{"created-since", "created-before", "scheduled-since", "scheduled-before"}

// parseBound reads a time filter: a UTC day or an RFC 3339 time; empty is no bound.
func parseBound(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--%s %q: give a day (YYYY-MM-DD) or an RFC 3339 time", flag, s)
	}
	return t, nil
}
