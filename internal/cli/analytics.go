package cli

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

func newAnalyticsCmd() *cobra.Command {
	var project, from, to, platform string
	var sync bool
	cmd := &cobra.Command{
		Use:   "analytics [--project P] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--platform P] [--sync]",
		Short: "Totals of views, likes, comments and impressions, and each platform's (API)",
		Long: "Show the stored metrics of the posts published in a period (UTC days, both included): totals and " +
			"a per-platform breakdown. A figure a platform does not give shows as \"-\" (null in --json), never 0. " +
			"--sync reads the figures from the platforms first (bounded to 25 s by the server); its summary goes " +
			"to stderr.",
		Args: cobra.NoArgs,
	}
	a := apiCommand(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkDate("from", from); err != nil {
			return err
		}
		if err := checkDate("to", to); err != nil {
			return err
		}
		params := client.AnalyticsParams{StartDate: from, EndDate: to}
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
		ctx := cmd.Context()
		if project != "" {
			if params.ProjectID, err = resolveProject(ctx, c, project); err != nil {
				return err
			}
		}
		if sync {
			sum, err := c.SyncAnalytics(ctx, client.SyncRequest{})
			if err != nil {
				return err
			}
			printSyncSummary(cmd.ErrOrStderr(), "metrics", sum)
		}
		ov, err := c.AnalyticsOverview(ctx, params)
		if err != nil {
			return err
		}
		if a.json {
			return printJSON(cmd.OutOrStdout(), ov)
		}
		return printOverview(cmd.OutOrStdout(), ov)
	}
	f := cmd.Flags()
	f.StringVar(&project, "project", "", "one project (an id or a name); default: every project")
	f.StringVar(&from, "from", "", "first day, YYYY-MM-DD (UTC)")
	f.StringVar(&to, "to", "", "last day, YYYY-MM-DD (UTC)")
	f.StringVar(&platform, "platform", "", "one platform; default: all")
	f.BoolVar(&sync, "sync", false, "read the figures from the platforms first")
	return cmd
}

// printSyncSummary is one line saying what a synchronisation read, and a line per failure.
func printSyncSummary(w io.Writer, what string, s *client.SyncSummary) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "synced %s: %d read, %d failed, %d unavailable, %d left for later\n", what, s.Synced, s.Failed, s.Unavailable, s.Pending)
	for _, e := range s.Errors {
		fmt.Fprintf(w, "  %s channel %s: %s [%s]\n", e.Platform, e.ChannelID, e.Message, e.Category)
	}
}

func printOverview(w io.Writer, ov *client.AnalyticsOverview) error {
	period := "all time"
	switch {
	case ov.StartDate != "" && ov.EndDate != "":
		period = ov.StartDate + " to " + ov.EndDate
	case ov.StartDate != "":
		period = "from " + ov.StartDate
	case ov.EndDate != "":
		period = "until " + ov.EndDate
	}
	fmt.Fprintf(w, "%d posts published, %s\n\n", ov.TotalPosts, period)
	tw := newTable(w)
	fmt.Fprintln(tw, "PLATFORM\tPOSTS\tVIEWS\tLIKES\tCOMMENTS\tSHARES\tIMPRESSIONS\tREACH\tSAVES")
	platforms := make([]string, 0, len(ov.PlatformBreakdown))
	for p := range ov.PlatformBreakdown {
		platforms = append(platforms, string(p))
	}
	sort.Strings(platforms)
	for _, p := range platforms {
		m := ov.PlatformBreakdown[client.Platform(p)]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p, m.Posts, figure(m.Views), figure(m.Likes), figure(m.Comments),
			figure(m.Shares), figure(m.Impressions), figure(m.Reach), figure(m.Saves))
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ov.TotalPosts, figure(ov.TotalViews), figure(ov.TotalLikes),
		figure(ov.TotalComments), figure(ov.TotalShares), figure(ov.TotalImpressions), figure(ov.TotalReach), figure(ov.TotalSaves))
	return tw.Flush()
}
