package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

func newWebhooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Register, list and inspect webhooks (API)",
		Long: "Manage the account's webhook endpoints through the HTTP API (REELAY_URL, REELAY_API_KEY): " +
			"events are POSTed to them signed the Standard Webhooks way.",
	}
	a := apiCommand(cmd)
	cmd.AddCommand(newWebhooksListCmd(a), newWebhooksCreateCmd(a), newWebhooksEnableCmd(a, true), newWebhooksEnableCmd(a, false),
		newWebhooksDeleteCmd(a), newWebhooksDeliveriesCmd(a))
	return cmd
}

// webhookEvents are the event types a webhook can be registered for.
var webhookEvents = []string{client.EventPostScheduled, client.EventPostPublished, client.EventPostPartiallyPublished,
	client.EventPostFailed, client.EventChannelReauthRequired, client.EventChannelCheckFailed}

func newWebhooksListCmd(a *apiFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the account's webhooks (without their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			hooks, err := c.ListWebhooks(cmd.Context())
			if err != nil {
				return err
			}
			if a.json {
				if hooks == nil {
					hooks = []client.Webhook{}
				}
				return printJSON(cmd.OutOrStdout(), map[string]any{"webhooks": hooks})
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tURL\tEVENTS\tSTATUS\tCREATED")
			for _, h := range hooks {
				status := h.Status
				if h.DisabledReason != nil {
					status += ": " + *h.DisabledReason
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.ID, h.URL, strings.Join(h.Events, ","), status, timeCell(&h.CreatedAt))
			}
			return tw.Flush()
		},
	}
}

func newWebhooksCreateCmd(a *apiFlags) *cobra.Command {
	var events []string
	cmd := &cobra.Command{
		Use:   "create URL --event TYPE [--event TYPE ...]",
		Short: "Register a public http(s) URL for events; prints its signing secret, once",
		Long: "Register a webhook. Events: " + strings.Join(webhookEvents, ", ") + ". The signing secret " +
			"(whsec_...) is printed this once: keep it to verify the webhook-signature header.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(events) == 0 {
				return usagef("name at least one --event (%s)", strings.Join(webhookEvents, ", "))
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			created, err := c.CreateWebhook(cmd.Context(), client.CreateWebhookRequest{URL: args[0], Events: events})
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), created)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "webhook %s for %s\nsigning secret (shown once): %s\n",
				created.Webhook.ID, created.Webhook.URL, created.Secret)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&events, "event", nil, "an event type to send (repeat, or separate with commas)")
	return cmd
}

// newWebhooksEnableCmd is `enable` (a webhook reelay disabled, or its owner) or `disable`.
func newWebhooksEnableCmd(a *apiFlags, enable bool) *cobra.Command {
	use, short := "enable WEBHOOK_ID", "Enable a disabled webhook for the events from now on"
	if !enable {
		use, short = "disable WEBHOOK_ID", "Disable a webhook: no events are recorded for it until it is enabled"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			hook, err := c.SetWebhookEnabled(cmd.Context(), args[0], enable)
			if err != nil {
				return err
			}
			if a.json {
				return printJSON(cmd.OutOrStdout(), map[string]any{"success": true, "webhook": hook})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "webhook %s is %s\n", hook.ID, hook.Status)
			return nil
		},
	}
}

func newWebhooksDeleteCmd(a *apiFlags) *cobra.Command {
	return newDeleteCmd(a, "webhook", "Delete a webhook and its delivery log", (*client.Client).DeleteWebhook)
}

func newWebhooksDeliveriesCmd(a *apiFlags) *cobra.Command {
	var limit int
	var cursor string
	cmd := &cobra.Command{
		Use:   "deliveries WEBHOOK_ID [--limit N] [--cursor C]",
		Short: "A page of a webhook's delivery log, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			page, err := c.WebhookDeliveries(cmd.Context(), args[0], client.ListParams{Limit: limit, Cursor: cursor})
			if err != nil {
				return err
			}
			if a.json {
				if page.Deliveries == nil {
					page.Deliveries = []client.WebhookDelivery{}
				}
				return printJSON(cmd.OutOrStdout(), page)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tEVENT\tSTATUS\tATTEMPTS\tLAST ANSWER\tCREATED")
			for _, d := range page.Deliveries {
				answer := "-"
				if d.LastStatusCode != nil {
					answer = "HTTP " + strconv.Itoa(*d.LastStatusCode)
				}
				if d.LastError != "" {
					answer += " " + d.LastError
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.EventType, d.Status, d.Attempts, answer, timeCell(&d.CreatedAt))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if page.NextCursor != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more deliveries: add --cursor %s\n", page.NextCursor)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "deliveries per page, 1 to 100")
	cmd.Flags().StringVar(&cursor, "cursor", "", "start after this cursor (printed after a page)")
	return cmd
}
