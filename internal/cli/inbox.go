package cli

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

func newInboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "Read the comments on your posts and reply on their platforms (API)",
	}
	a := apiCommand(cmd)
	cmd.AddCommand(newInboxListCmd(a), newInboxReplyCmd(a))
	return cmd
}

func newInboxListCmd(a *apiFlags) *cobra.Command {
	var platform, post, project, cursor string
	var limit int
	var refresh bool
	cmd := &cobra.Command{
		Use:   "list [--platform P] [--post ID] [--project P] [--refresh]",
		Short: "List comments, newest first",
		Long: "List the comments on the account's published posts, newest first, from what is stored. " +
			"--refresh reads them from the platforms first (its summary goes to stderr).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 100 {
				return usagef("--limit must be 1 to 100")
			}
			params := client.ListCommentsParams{PostID: post, Refresh: refresh, ListParams: client.ListParams{Limit: limit, Cursor: cursor}}
			if platform != "" && platform != "all" {
				ps, err := parsePlatforms("platform", []string{platform})
				if err != nil {
					return err
				}
				params.Platform = ps[0]
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			if project != "" {
				if params.ProjectID, err = resolveProject(cmd.Context(), c, project); err != nil {
					return err
				}
			}
			list, err := c.ListComments(cmd.Context(), params)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), list)
			}
			printSyncSummary(cmd.ErrOrStderr(), "comments", list.Sync)
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tPLATFORM\tAUTHOR\tWRITTEN\tPOST\tTEXT")
			for _, cm := range list.Comments {
				text := oneLine(cm.Text, 70)
				if cm.Own {
					text = "(you) " + text
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cm.ID, cm.Platform, dash(oneLine(cm.Author, 24)), timeCell(&cm.CreatedAt),
					dash(cm.PostID), dash(text))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if list.NextCursor != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more comments: add --cursor %s\n", list.NextCursor)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&platform, "platform", "", "one platform; default: all")
	f.StringVar(&post, "post", "", "only this post's comments")
	f.StringVar(&project, "project", "", "only this project's (an id or a name)")
	f.BoolVar(&refresh, "refresh", false, "read the comments from the platforms first")
	f.IntVar(&limit, "limit", 20, "comments per page, 1 to 100")
	f.StringVar(&cursor, "cursor", "", "start after this cursor (printed after a page)")
	return cmd
}

func newInboxReplyCmd(a *apiFlags) *cobra.Command {
	var platform, key string
	cmd := &cobra.Command{
		Use:   "reply COMMENT_ID TEXT [--platform P] [--idempotency-key K]",
		Short: "Reply to a comment on its platform, as the channel it came through",
		Long: "Reply to a comment on its origin platform. The comment's platform is found in the inbox unless " +
			"--platform names it. Every reply carries an Idempotency-Key (printed on stderr; set one with " +
			"--idempotency-key): run the command again with the same key and the server answers the reply it " +
			"posted instead of posting another, or refuses when the platform never said whether it took it.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, text := args[0], args[1]
			if strings.TrimSpace(text) == "" {
				return usagef("the reply's TEXT is empty")
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			p := client.Platform(platform)
			if platform != "" {
				ps, err := parsePlatforms("platform", []string{platform})
				if err != nil {
					return err
				}
				p = ps[0]
			} else if p, err = commentPlatform(cmd, c, id); err != nil {
				return err
			}
			if key == "" {
				key = uuid.NewString()
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "idempotency key %s (to repeat this reply safely, run it again with --idempotency-key %s)\n", key, key)
			reply, err := c.Reply(cmd.Context(), client.ReplyRequest{CommentID: id, Platform: p, ReplyText: text, IdempotencyKey: key})
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"success": true, "reply": reply})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "replied on %s: comment %s\n", reply.Platform, reply.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&platform, "platform", "", "the comment's platform (default: looked up in the inbox)")
	cmd.Flags().StringVar(&key, "idempotency-key", "", "the reply's Idempotency-Key (default: a new random one, printed on stderr)")
	return cmd
}

// commentPlatform finds a comment's platform in the stored inbox, which the reply needs.
func commentPlatform(cmd *cobra.Command, c *client.Client, id string) (client.Platform, error) {
	for cm, err := range c.AllComments(cmd.Context(), client.ListCommentsParams{ListParams: client.ListParams{Limit: 100}}) {
		if err != nil {
			return "", err
		}
		if cm.ID == id {
			return cm.Platform, nil
		}
	}
	return "", fmt.Errorf("comment %s is not in the inbox; check the id with `reelay inbox list`, or give --platform", id)
}
