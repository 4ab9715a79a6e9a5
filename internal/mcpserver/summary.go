package mcpserver

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/client"
)

// The summaries are the text half of each answer: short, in the order a model needs them,
// with the ids it will pass on and the next step spelled out.

func publishSummary(r PublishResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Post %s: %s.", r.PostID, r.Status)
	if r.Replayed {
		b.WriteString(" This call repeated an earlier one (same idempotency key): this is that post, nothing new was published.")
	}
	writeDestinations(&b, r.Platforms)
	writeNextStep(&b, r.PostID, r.Status, r.ScheduledFor, r.Platforms)
	return b.String()
}

func postSummary(p *client.Post) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Post %s (project %s): %s.", p.ID, p.ProjectID, p.Status)
	if p.PublishedAt != nil {
		fmt.Fprintf(&b, " First published %s.", p.PublishedAt.UTC().Format(time.RFC3339))
	}
	writeDestinations(&b, p.PublishResults)
	writeNextStep(&b, p.ID, p.Status, p.ScheduledFor, p.PublishResults)
	return b.String()
}

func writeDestinations(b *strings.Builder, ds []client.DestinationResult) {
	for _, d := range ds {
		fmt.Fprintf(b, "\n- %s", d.Platform)
		if d.ChannelTitle != "" {
			fmt.Fprintf(b, " %q", d.ChannelTitle)
		}
		b.WriteString(": ")
		switch d.UploadStatus {
		case client.UploadPublished:
			b.WriteString("published")
			if d.URL != "" {
				b.WriteString(" " + d.URL)
			}
		case client.UploadSentToInbox:
			b.WriteString("sent_to_inbox: delivered to the creator's TikTok inbox, not public until the creator finishes the post in the TikTok app")
		case client.UploadFailed:
			b.WriteString("failed")
			if d.ErrorCategory != "" {
				b.WriteString(" (" + d.ErrorCategory + ")")
			}
			if d.Error != "" {
				b.WriteString(": " + d.Error)
			}
			if d.ErrorCategory == "auth_expired" {
				b.WriteString(". The channel must be reconnected by its owner")
			}
		case client.UploadCanceled:
			b.WriteString("canceled")
		default:
			fmt.Fprintf(b, "%s (not settled yet)", d.UploadStatus)
		}
		if d.Message != "" && d.UploadStatus != client.UploadFailed {
			b.WriteString(". " + d.Message)
		}
		writeDerived(b, d.Derived)
	}
}

// writeDerived notes the texts reelay made rather than copied from the title or caption:
// nobody wrote those for the platform, which is worth a model's notice.
func writeDerived(b *strings.Builder, derived map[string]string) {
	for _, field := range slices.Sorted(maps.Keys(derived)) {
		if from := derived[field]; from != client.DerivedFromTitle && from != client.DerivedFromCaption {
			fmt.Fprintf(b, ". Its %s was made from %s", field, client.DerivedFromWords(from))
		}
	}
}

func writeNextStep(b *strings.Builder, postID string, status client.PostStatus, scheduledFor *time.Time, ds []client.DestinationResult) {
	settled := true
	for _, d := range ds {
		if !d.UploadStatus.Settled() {
			settled = false
		}
	}
	switch {
	case status == client.PostScheduled:
		when := "at its time"
		if scheduledFor != nil {
			when = "at " + scheduledFor.Format(time.RFC3339)
		}
		fmt.Fprintf(b, "\nScheduled: it will be published %s; reelay_get_post with post_id %q shows its progress then.", when, postID)
	case status == client.PostProcessing || !settled:
		fmt.Fprintf(b, "\nNot settled yet: call reelay_get_post with post_id %q (wait_seconds waits up to 60 s) until it is. Do not publish again: the post exists, and publishing again would post twice.", postID)
	case status == client.PostFailed:
		b.WriteString("\nThe post failed on every destination; the errors above are the platforms' own.")
	}
}

func channelsSummary(l *client.ChannelList) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Project %s has %d channel(s).", l.ProjectID, len(l.Channels))
	for _, c := range l.Channels {
		fmt.Fprintf(&b, "\n- %s %s %q", c.ID, c.Platform, c.Name)
		if c.Username != "" && c.Username != c.Name {
			fmt.Fprintf(&b, " (%s)", c.Username)
		}
		b.WriteString(" " + c.Status)
		if c.Status == client.ChannelReauthRequired {
			b.WriteString(": the platform refused its credentials; the owner must reconnect it before it can publish")
		}
		if c.Sandbox {
			b.WriteString(", sandbox (a simulator, not the real platform)")
		}
	}
	if len(l.Channels) == 0 {
		b.WriteString(" Connect channels first (POST /api/v1/channels or the OAuth connect link); nothing can be published to this project until then.")
	} else {
		b.WriteString("\nEach channel's capabilities (in the JSON) give its platform's limits: text lengths per field under capabilities.text, video size, duration and formats.")
	}
	return b.String()
}

func projectsSummary(ps []client.Project) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d project(s).", len(ps))
	for _, p := range ps {
		fmt.Fprintf(&b, "\n- %s %q", p.ID, p.Name)
		if p.Description != "" {
			b.WriteString(": " + p.Description)
		}
	}
	return b.String()
}

func analyticsSummary(a AnalyticsResult) string {
	var b strings.Builder
	if s := a.Sync; s != nil {
		fmt.Fprintf(&b, "Synced from the platforms: %d destination(s) read, %d failed, %d without figures, %d left for later.\n",
			s.Synced, s.Failed, s.Unavailable, s.Pending)
		for _, e := range s.Errors {
			fmt.Fprintf(&b, "- %s channel %s: %s (%s)\n", e.Platform, e.ChannelID, e.Message, e.Category)
		}
	}
	scope := "all projects"
	if a.ProjectID != "" {
		scope = "project " + a.ProjectID
	}
	period := "all time"
	if a.StartDate != "" || a.EndDate != "" {
		period = cmp.Or(a.StartDate, "…") + " to " + cmp.Or(a.EndDate, "…")
	}
	fmt.Fprintf(&b, "%d post(s) published in %s, %s: views %s, likes %s, comments %s, impressions %s, shares %s.",
		a.TotalPosts, scope, period, figure(a.TotalViews), figure(a.TotalLikes), figure(a.TotalComments),
		figure(a.TotalImpressions), figure(a.TotalShares))
	for _, p := range slices.Sorted(maps.Keys(a.PlatformBreakdown)) {
		m := a.PlatformBreakdown[p]
		fmt.Fprintf(&b, "\n- %s: %d post(s), views %s, likes %s, comments %s, impressions %s", p, m.Posts,
			figure(m.Views), figure(m.Likes), figure(m.Comments), figure(m.Impressions))
	}
	b.WriteString("\nn/a: no platform counted gives that figure (unavailable, not zero).")
	return b.String()
}

// figure writes a metric, "n/a" when unavailable.
func figure(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
