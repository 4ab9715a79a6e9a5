package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store/storetest"
)

// decodeJSON parses a --json output, which must be one JSON document and nothing else.
func decodeJSON(t *testing.T, r cliResult, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not the expected JSON: %v\n%s", err, r.stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", r.stdout)
	}
}

var uploadLine = regexp.MustCompile(`(?m)^upload (\d+)% [0-9.]+ [kMG]?B/([0-9.]+ [kMG]?B)$`)

// TestCLIAgainstServer drives every API command of the command line against a real server
// with sandbox channels, reading what it printed and checking on the server what it did.
func TestCLIAgainstServer(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testCLIAgainstServer(t, newAPIServer(t, d))
		})
	}
}

func testCLIAgainstServer(t *testing.T, srv *apiServer) {
	ctx := context.Background()
	c := srv.client(t)
	// TikTok takes videos of 3 seconds or more; 3 MB so that the upload reports progress in steps.
	video := mediatest.MP4(t, mediatest.Options{Duration: 5 * time.Second, Size: 3_000_000})
	other := mediatest.MP4(t, mediatest.Options{Duration: 4 * time.Second})

	t.Run("projects list through the API and from the database", func(t *testing.T) {
		r := srv.cli(t, "projects", "list").ok(t)
		if !regexp.MustCompile(srv.ProjectID + `\s+Default\s`).MatchString(r.stdout) {
			t.Errorf("projects list:\n%s", r.stdout)
		}
		var api struct {
			Projects []client.Project `json:"projects"`
		}
		decodeJSON(t, srv.cli(t, "projects", "list", "--json").ok(t), &api)
		if len(api.Projects) != 1 || api.Projects[0].ID != srv.ProjectID || api.Projects[0].Name != "Default" {
			t.Errorf("projects list --json: %+v", api)
		}
		// With --account the same list comes from the database, in the same shape, without a key.
		var local struct {
			Projects []client.Project `json:"projects"`
		}
		decodeJSON(t, runCLI(t, "", "projects", "list", "--account", srv.AccountID, "--database-url", srv.DatabaseURL, "--json").ok(t), &local)
		if len(local.Projects) != 1 || local.Projects[0].ID != srv.ProjectID || !local.Projects[0].CreatedAt.Equal(api.Projects[0].CreatedAt) {
			t.Errorf("projects list --account --json: %+v, API %+v", local, api)
		}
	})

	var youtube, tiktok, bluesky client.Channel
	t.Run("channels connect, list, options", func(t *testing.T) {
		r := srv.cli(t, "channels", "connect", "youtube", "--sandbox", "--sandbox-behavior", `{"processing_ms":300}`).ok(t)
		if !strings.HasPrefix(r.stdout, "connected sandbox youtube channel ") {
			t.Errorf("connect youtube: %q", r.stdout)
		}
		// The tests publish direct with the default privacy, which TikTok takes only from an audited app.
		decodeJSON(t, srv.cli(t, "channels", "connect", "tiktok", "--sandbox", "--sandbox-behavior", `{"app_access":"audited"}`, "--json").ok(t), &tiktok)
		if tiktok.Platform != client.TikTok || !tiktok.Sandbox || tiktok.ProjectID != srv.ProjectID {
			t.Errorf("connect tiktok --json: %+v", tiktok)
		}
		// A channel whose platform refuses every video, for the failure paths.
		decodeJSON(t, srv.cli(t, "channels", "connect", "bluesky", "--sandbox", "--sandbox-behavior", `{"fail":"reject"}`, "--json").ok(t), &bluesky)

		var list client.ChannelList
		decodeJSON(t, srv.cli(t, "channels", "list", "--json").ok(t), &list)
		if list.ProjectID != srv.ProjectID || len(list.Channels) != 3 {
			t.Fatalf("channels list --json: %+v", list)
		}
		for _, ch := range list.Channels {
			if ch.Platform == client.YouTube {
				youtube = ch
			}
		}
		r = srv.cli(t, "channels", "list").ok(t)
		if !regexp.MustCompile(youtube.ID+`\s+youtube\s+`).MatchString(r.stdout) || !strings.Contains(r.stdout, bluesky.ID) {
			t.Errorf("channels list:\n%s", r.stdout)
		}

		var opts client.ChannelOptions
		decodeJSON(t, srv.cli(t, "channels", "options", youtube.ID, "--json").ok(t), &opts)
		if opts.ChannelID != youtube.ID || opts.Platform != client.YouTube || len(opts.Options) == 0 {
			t.Errorf("options --json: %+v", opts)
		}
		r = srv.cli(t, "channels", "options", youtube.ID).ok(t)
		if !strings.Contains(r.stdout, "channel "+youtube.ID+" (youtube)") || strings.Count(r.stdout, "\n") < 4 {
			t.Errorf("options:\n%s", r.stdout)
		}

		// An OAuth platform prints its consent link; opened in a browser (one that keeps
		// cookies), it goes through the simulator's consent page, which approves at once.
		r = srv.cli(t, "channels", "connect", "linkedin", "--sandbox-consent").ok(t)
		link := strings.TrimSpace(r.stdout)
		if !strings.HasPrefix(link, "http") || strings.Contains(link, "\n") || !strings.Contains(r.stderr, "open this page") {
			t.Fatalf("consent link: %q, stderr %q", r.stdout, r.stderr)
		}
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Get(link)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "is connected as channel") {
			t.Errorf("the consent link in a browser: %d %s", resp.StatusCode, page)
		}
		// That channel goes again, so that the project's channels are the ones counted below.
		connected, err := c.ListChannels(ctx, srv.ProjectID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range connected.Channels {
			if ch.Platform == client.LinkedIn {
				if err := c.DeleteChannel(ctx, ch.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Without an app for it, the server's reason is shown.
		srv.cli(t, "channels", "connect", "linkedin").failed(t, exitError, "400")
		srv.cli(t, "channels", "connect", "telegram").failed(t, exitUsage, "--credentials", "bot_token")
		srv.cli(t, "channels", "connect", "myspace", "--sandbox").failed(t, exitUsage, "unknown platform")
		srv.cli(t, "channels", "connect", "youtube", "--sandbox-behavior", `{"fail":"reject"}`).failed(t, exitUsage, "--sandbox")
		srv.cli(t, "channels", "connect", "youtube", "--sandbox", "--sandbox-behavior", `{"nope":1}`).failed(t, exitUsage, "unknown field")
		srv.cli(t, "channels", "options", "00000000-0000-4000-8000-000000000000").failed(t, exitError, "not_found")
	})

	var published client.Post
	t.Run("publish a file: progress lines, live status, published", func(t *testing.T) {
		r := srv.cli(t, "publish", "--video", video, "--platforms", "youtube,tiktok", "--title", "Cold brew",
			"--caption", "Coarse beans, 16 hours #coffee", "--tiktok-mode", "direct", "--youtube-privacy", "unlisted").ok(t)
		// Progress: a line at each tenth, increasing, of the whole size, then the total.
		lines := uploadLine.FindAllStringSubmatch(r.stderr, -1)
		if len(lines) < 8 {
			t.Fatalf("%d progress lines, want one per tenth:\n%s", len(lines), r.stderr)
		}
		last := 0
		for _, l := range lines {
			pct, _ := strconv.Atoi(l[1])
			if pct <= last || pct >= 100 || l[2] != humanBytes(fileSize(t, video)) {
				t.Errorf("progress line %q after %d%%", l[0], last)
			}
			last = pct
		}
		if !strings.Contains(r.stderr, "uploaded "+humanBytes(fileSize(t, video))+" in ") {
			t.Errorf("no closing upload line:\n%s", r.stderr)
		}
		// Status: a line per change, ending with each destination published.
		if !regexp.MustCompile(`(?m)^youtube\s+YouTube sandbox\s+published\s+https://`).MatchString(r.stderr) ||
			!regexp.MustCompile(`(?m)^tiktok\s+TikTok sandbox\s+published`).MatchString(r.stderr) {
			t.Errorf("status lines:\n%s", r.stderr)
		}
		if strings.Count(r.stderr, "YouTube sandbox           published") != 1 {
			t.Errorf("an unchanged state was printed again:\n%s", r.stderr)
		}
		key := regexp.MustCompile(`idempotency key (\S+)`).FindStringSubmatch(r.stderr)
		if key == nil {
			t.Fatalf("no idempotency key on stderr:\n%s", r.stderr)
		}
		// The final post on stdout.
		id := regexp.MustCompile(`(?m)^post\s+(\S+)$`).FindStringSubmatch(r.stdout)
		if id == nil || !regexp.MustCompile(`(?m)^status\s+published$`).MatchString(r.stdout) ||
			!regexp.MustCompile(`(?m)^youtube\s+YouTube sandbox\s+published\s+https://`).MatchString(r.stdout) {
			t.Fatalf("stdout:\n%s", r.stdout)
		}
		post, err := c.GetPost(ctx, id[1])
		if err != nil || post.Status != client.PostPublished || len(post.PublishResults) != 2 || post.Title != "Cold brew" {
			t.Fatalf("the post on the server: %+v, %v", post, err)
		}
		published = *post
		seen, err := c.SandboxIntrospect(ctx, client.YouTube)
		if err != nil || len(seen.Uploads) != 1 || seen.Uploads[0].Bytes != fileSize(t, video) {
			t.Errorf("youtube received %+v, %v", seen, err)
		}
		// The same key again answers the first post and sends nothing.
		r = srv.cli(t, "publish", "--video", video, "--platforms", "youtube,tiktok", "--title", "Cold brew",
			"--caption", "Coarse beans, 16 hours #coffee", "--tiktok-mode", "direct", "--youtube-privacy", "unlisted",
			"--idempotency-key", key[1], "--json").ok(t)
		var again client.Post
		decodeJSON(t, r, &again)
		if again.ID != published.ID || !strings.Contains(r.stderr, "was used before") {
			t.Errorf("a repeat with the key: %+v\n%s", again, r.stderr)
		}
		if seen, _ := c.SandboxIntrospect(ctx, client.YouTube); len(seen.Uploads) != 1 {
			t.Errorf("a repeat with the same key uploaded again: %d uploads", len(seen.Uploads))
		}
	})

	t.Run("publish --json", func(t *testing.T) {
		r := srv.cli(t, "publish", "--video", other, "--channels", youtube.ID, "--title", "Second", "--json").ok(t)
		var post client.Post
		decodeJSON(t, r, &post)
		if post.Status != client.PostPublished || len(post.PublishResults) != 1 || post.PublishResults[0].URL == "" ||
			post.PublishResults[0].ChannelID != youtube.ID || post.Title != "Second" {
			t.Errorf("publish --json: %+v", post)
		}
		if !uploadLine.MatchString(r.stderr) && !strings.Contains(r.stderr, "uploaded ") {
			t.Errorf("no progress on stderr:\n%s", r.stderr)
		}
	})

	var failedID string
	t.Run("a destination refused: exit 5 with the platform's message; retry", func(t *testing.T) {
		r := srv.cli(t, "publish", "--video", other, "--channels", bluesky.ID, "--title", "Refused")
		r.failed(t, exitNotPublished, "1 of 1 destinations failed")
		m := regexp.MustCompile(`(?m)^bluesky\s+\S.*\s+failed\s+(.+)$`).FindStringSubmatch(r.stderr)
		if m == nil || !strings.Contains(m[1], "[media_rejected]") {
			t.Fatalf("no failure line with the platform's message:\n%s", r.stderr)
		}
		failedID = regexp.MustCompile(`(?m)^post\s+(\S+)$`).FindStringSubmatch(r.stdout)[1]
		r = srv.cli(t, "posts", "retry", failedID, "--watch")
		r.failed(t, exitNotPublished, "failed")
		if !regexp.MustCompile(`(?m)^status\s+failed$`).MatchString(r.stdout) {
			t.Errorf("retry --watch stdout:\n%s", r.stdout)
		}
		var post client.Post
		decodeJSON(t, srv.cli(t, "posts", "retry", failedID, "--json").ok(t), &post)
		if post.ID != failedID {
			t.Errorf("retry --json: %+v", post)
		}
	})

	var scheduledID string
	t.Run("publish --at +2h schedules; posts cancel cancels", func(t *testing.T) {
		before := time.Now()
		r := srv.cli(t, "publish", "--video", other, "--at", "+2h", "--channels", youtube.ID, "--title", "Later", "--json").ok(t)
		var post client.Post
		decodeJSON(t, r, &post)
		want := before.Add(2 * time.Hour)
		if post.Status != client.PostScheduled || post.ScheduledFor == nil || post.ScheduledFor.Before(want.Add(-2*time.Second)) ||
			post.ScheduledFor.After(want.Add(time.Minute)) {
			t.Fatalf("scheduled: %+v (want about %s)", post, want)
		}
		if strings.Contains(r.stderr, "queued") {
			t.Errorf("a scheduled post was watched:\n%s", r.stderr)
		}
		scheduledID = post.ID
		// A watch bounded by --timeout gives up, leaving the post to the server.
		srv.cli(t, "posts", "get", scheduledID, "--watch", "--timeout", "700ms").failed(t, exitError,
			"post "+scheduledID+" has not settled after 700ms", "reelay posts get "+scheduledID+" --watch")
		r = srv.cli(t, "posts", "cancel", scheduledID).ok(t)
		if !regexp.MustCompile(`(?m)^status\s+canceled$`).MatchString(r.stdout) {
			t.Errorf("cancel:\n%s", r.stdout)
		}
		if p, err := c.GetPost(ctx, scheduledID); err != nil || p.Status != client.PostCanceled {
			t.Errorf("on the server: %+v, %v", p, err)
		}
		srv.cli(t, "posts", "cancel", scheduledID).failed(t, exitError, "invalid_state")
	})

	t.Run("publish --dry-run stores nothing", func(t *testing.T) {
		before, err := c.ListPosts(ctx, client.ListPostsParams{ListParams: client.ListParams{Limit: 100}})
		if err != nil {
			t.Fatal(err)
		}
		r := srv.cli(t, "publish", "--video", other, "--platforms", "youtube,tiktok", "--title", "Dry", "--dry-run",
			"--option", "youtube.title=Own title", "--option", "youtube.made_for_kids=true", "--platform-json", `tiktok={"mode":"direct","title":"TT"}`,
			"--youtube-privacy", "private").ok(t)
		if !strings.Contains(r.stdout, "nothing was stored or sent") || !regexp.MustCompile(`(?m)^youtube\s+YouTube sandbox\s+.*title="Own title"`).MatchString(r.stdout) {
			t.Errorf("dry run:\n%s", r.stdout)
		}
		var dr client.DryRunResponse
		decodeJSON(t, srv.cli(t, "publish", "--video", other, "--platforms", "youtube,tiktok", "--title", "Dry", "--dry-run", "--json",
			"--option", "youtube.title=Own title", "--option", "youtube.made_for_kids=true", "--platform-json", `tiktok={"mode":"direct"}`,
			"--youtube-privacy", "private").ok(t), &dr)
		if !dr.DryRun || len(dr.Platforms) != 2 || dr.Video == nil || dr.Video.ContentType != "video/mp4" {
			t.Fatalf("dry run --json: %+v", dr)
		}
		for _, d := range dr.Platforms {
			if d.Platform == client.YouTube && (d.Payload["title"] != "Own title" || d.Payload["privacy_status"] != "private" || d.Payload["made_for_kids"] != true) {
				t.Errorf("youtube would receive %v", d.Payload)
			}
		}
		after, _ := c.ListPosts(ctx, client.ListPostsParams{ListParams: client.ListParams{Limit: 100}})
		if len(after.Posts) != len(before.Posts) {
			t.Errorf("a dry run stored a post: %d posts, then %d", len(before.Posts), len(after.Posts))
		}
	})

	t.Run("posts list and get", func(t *testing.T) {
		var list client.PostList
		decodeJSON(t, srv.cli(t, "posts", "list", "--json").ok(t), &list)
		if len(list.Posts) != 4 || list.Posts[0].ID != scheduledID {
			t.Fatalf("posts list --json: %d posts, first %q", len(list.Posts), list.Posts[0].ID)
		}
		var onlyPublished client.PostList
		decodeJSON(t, srv.cli(t, "posts", "list", "--status", "published", "--json").ok(t), &onlyPublished)
		if len(onlyPublished.Posts) != 2 {
			t.Errorf("published posts: %d", len(onlyPublished.Posts))
		}
		r := srv.cli(t, "posts", "list", "--limit", "1").ok(t)
		if strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stderr, "--cursor ") {
			t.Errorf("one post a page:\n%s\n%s", r.stdout, r.stderr)
		}
		decodeJSON(t, srv.cli(t, "posts", "list", "--limit", "1", "--all", "--json").ok(t), &list)
		if len(list.Posts) != 4 {
			t.Errorf("--all: %d posts", len(list.Posts))
		}
		var filtered client.PostList
		decodeJSON(t, srv.cli(t, "posts", "list", "--scheduled-since", "2000-01-01", "--json").ok(t), &filtered)
		if len(filtered.Posts) != 1 || filtered.Posts[0].ID != scheduledID {
			t.Errorf("--scheduled-since: %+v; want only the scheduled post", filtered.Posts)
		}
		decodeJSON(t, srv.cli(t, "posts", "list", "--platform", "reddit", "--created-since", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "--json").ok(t), &filtered)
		if len(filtered.Posts) != 0 {
			t.Errorf("--platform reddit: %d posts; none went there", len(filtered.Posts))
		}
		srv.cli(t, "posts", "list", "--created-before", "next week").failed(t, exitUsage, "--created-before")
		srv.cli(t, "posts", "list", "--platform", "myspace").failed(t, exitUsage, "unknown platform")
		r = srv.cli(t, "posts", "list").ok(t)
		for _, id := range []string{published.ID, failedID, scheduledID} {
			if !strings.Contains(r.stdout, id) {
				t.Errorf("posts list lacks %s:\n%s", id, r.stdout)
			}
		}

		var got client.Post
		decodeJSON(t, srv.cli(t, "posts", "get", published.ID, "--json").ok(t), &got)
		if got.ID != published.ID || got.Status != client.PostPublished || len(got.PublishResults) != 2 {
			t.Errorf("posts get --json: %+v", got)
		}
		r = srv.cli(t, "posts", "get", published.ID, "--watch").ok(t)
		if !regexp.MustCompile(`(?m)^youtube\s+YouTube sandbox\s+published`).MatchString(r.stderr) || !strings.Contains(r.stdout, published.ID) {
			t.Errorf("posts get --watch:\n%s\n%s", r.stdout, r.stderr)
		}
		srv.cli(t, "posts", "get", failedID, "--watch").failed(t, exitNotPublished)
		srv.cli(t, "posts", "get", "00000000-0000-4000-8000-000000000000").failed(t, exitError, "not_found")
		srv.cli(t, "posts", "get").failed(t, exitUsage, "accepts 1 arg")
	})

	t.Run("analytics", func(t *testing.T) {
		r := srv.cli(t, "analytics", "--sync").ok(t)
		if !regexp.MustCompile(`synced metrics: [1-9]\d* read, 0 failed`).MatchString(r.stderr) {
			t.Errorf("sync summary:\n%s", r.stderr)
		}
		if !regexp.MustCompile(`(?m)^youtube\s+2\s+\d+`).MatchString(r.stdout) || !strings.Contains(r.stdout, "2 posts published, all time") {
			t.Errorf("overview:\n%s", r.stdout)
		}
		var ov client.AnalyticsOverview
		today := time.Now().UTC().Format(time.DateOnly)
		decodeJSON(t, srv.cli(t, "analytics", "--json", "--from", today, "--to", today, "--platform", "youtube", "--project", "Default").ok(t), &ov)
		if ov.TotalPosts != 2 || ov.TotalViews == nil || ov.StartDate != today || ov.ProjectID != srv.ProjectID || len(ov.PlatformBreakdown) != 1 {
			t.Errorf("analytics --json: %+v", ov)
		}
		srv.cli(t, "analytics", "--from", "yesterday").failed(t, exitUsage, "YYYY-MM-DD")
	})

	t.Run("inbox list and reply", func(t *testing.T) {
		var list client.CommentList
		decodeJSON(t, srv.cli(t, "inbox", "list", "--refresh", "--platform", "youtube", "--json").ok(t), &list)
		if len(list.Comments) == 0 || list.Sync == nil {
			t.Fatalf("inbox list --refresh --json: %+v", list)
		}
		first := list.Comments[0]
		r := srv.cli(t, "inbox", "list").ok(t)
		if !strings.Contains(r.stdout, first.ID) {
			t.Errorf("inbox list lacks %s:\n%s", first.ID, r.stdout)
		}
		// The comment's platform is looked up in the inbox.
		r = srv.cli(t, "inbox", "reply", first.ID, "Thanks for watching!").ok(t)
		if !strings.HasPrefix(r.stdout, "replied on youtube") {
			t.Errorf("reply: %q", r.stdout)
		}
		// Run again under the key it printed, the reply is answered, not posted again.
		key := regexp.MustCompile(`--idempotency-key ([^\s)]+)`).FindStringSubmatch(r.stderr)
		if key == nil {
			t.Fatalf("reply printed no idempotency key: %q", r.stderr)
		}
		again := srv.cli(t, "inbox", "reply", first.ID, "Thanks for watching!", "--idempotency-key", key[1]).ok(t)
		if again.stdout != r.stdout {
			t.Errorf("reply repeated under its key: %q, first %q", again.stdout, r.stdout)
		}
		seen, err := c.SandboxIntrospect(ctx, client.YouTube)
		if err != nil || len(seen.Replies) != 1 || seen.Replies[0].Text != "Thanks for watching!" {
			t.Errorf("youtube received replies %+v, %v", seen, err)
		}
		srv.cli(t, "inbox", "reply", "no-such-comment", "Hi").failed(t, exitError, "not in the inbox")
		srv.cli(t, "inbox", "reply", first.ID, "  ").failed(t, exitUsage, "empty")
	})

	t.Run("webhooks create, list, disable, enable, deliveries, delete", func(t *testing.T) {
		srv.cli(t, "webhooks", "create", "https://93.184.215.14/hooks/cli").failed(t, exitUsage, "--event")
		r := srv.cli(t, "webhooks", "create", "https://93.184.215.14/hooks/cli", "--event", "post.failed,post.published").ok(t)
		m := regexp.MustCompile(`^webhook (\S+) for https://93.184.215.14/hooks/cli\nsigning secret \(shown once\): whsec_`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("webhooks create: %q", r.stdout)
		}
		id := m[1]
		var list struct {
			Webhooks []client.Webhook `json:"webhooks"`
		}
		decodeJSON(t, srv.cli(t, "webhooks", "list", "--json").ok(t), &list)
		if len(list.Webhooks) != 1 || list.Webhooks[0].ID != id || list.Webhooks[0].Status != "active" ||
			strings.Join(list.Webhooks[0].Events, ",") != "post.failed,post.published" {
			t.Fatalf("webhooks list --json: %+v", list)
		}
		if r := srv.cli(t, "webhooks", "disable", id).ok(t); r.stdout != "webhook "+id+" is disabled\n" {
			t.Errorf("disable: %q", r.stdout)
		}
		if r := srv.cli(t, "webhooks", "list").ok(t); !strings.Contains(r.stdout, "disabled: disabled by its owner") {
			t.Errorf("webhooks list after disabling:\n%s", r.stdout)
		}
		if r := srv.cli(t, "webhooks", "enable", id).ok(t); r.stdout != "webhook "+id+" is active\n" {
			t.Errorf("enable: %q", r.stdout)
		}
		var page client.DeliveryList
		decodeJSON(t, srv.cli(t, "webhooks", "deliveries", id, "--json").ok(t), &page)
		if page.Deliveries == nil || len(page.Deliveries) != 0 {
			t.Errorf("deliveries of a new webhook: %+v", page)
		}
		srv.cli(t, "webhooks", "enable", "00000000-0000-4000-8000-000000000000").failed(t, exitError, "not found")
		if r := srv.cli(t, "webhooks", "delete", id).ok(t); r.stdout != "deleted webhook "+id+"\n" {
			t.Errorf("delete: %q", r.stdout)
		}
		if r := srv.cli(t, "webhooks", "list").ok(t); strings.Contains(r.stdout, id) {
			t.Errorf("a deleted webhook listed:\n%s", r.stdout)
		}
	})

	t.Run("ai adapt and storyboard", func(t *testing.T) {
		r := srv.cli(t, "ai", "adapt", "--script", "Cold brew is easier than you think. Use coarse beans and 16 hours in the fridge.",
			"--platforms", "tiktok,youtube", "--tone", "educational").ok(t)
		if !strings.Contains(r.stdout, "model reelay-builtin") || !strings.Contains(r.stdout, "== tiktok ==") || !strings.Contains(r.stdout, "== youtube ==") {
			t.Errorf("adapt:\n%s", r.stdout)
		}
		script := filepath.Join(t.TempDir(), "script.txt")
		os.WriteFile(script, []byte("Cold brew is easier than you think. Use coarse beans."), 0o600)
		var adapted client.AdaptResponse
		decodeJSON(t, srv.cli(t, "ai", "adapt", "--script-file", script, "--platforms", "bluesky", "--jev", "--json").ok(t), &adapted)
		if bs := adapted.Adapted[client.Bluesky]; len(adapted.Adapted) != 1 || bs.Text == "" || len(bs.Jev) == 0 {
			t.Errorf("adapt --json: %+v", adapted)
		}
		// From standard input.
		r = runCLI(t, "Coarse beans, 16 hours.", "ai", "adapt", "--script-file", "-", "--platforms", "threads", "--json", "--url", srv.URL, "--api-key", srv.Key).ok(t)
		var fromStdin client.AdaptResponse
		decodeJSON(t, r, &fromStdin)
		if len(fromStdin.Adapted) != 1 || fromStdin.Adapted[client.Threads].Text == "" {
			t.Errorf("adapt from stdin: %+v", fromStdin)
		}

		r = srv.cli(t, "ai", "storyboard", "--topic", "How to make cold brew at home", "--duration", "15").ok(t)
		if !strings.Contains(r.stdout, "3 scenes") || !strings.Contains(r.stdout, "00:05-00:10") {
			t.Errorf("storyboard:\n%s", r.stdout)
		}
		var sb client.StoryboardResponse
		decodeJSON(t, srv.cli(t, "ai", "storyboard", "--topic", "How to make cold brew at home", "--json").ok(t), &sb)
		if len(sb.Storyboard.Scenes) != 6 {
			t.Errorf("storyboard --json: %+v", sb)
		}
		srv.cli(t, "ai", "adapt").failed(t, exitUsage, "--script")
		srv.cli(t, "ai", "storyboard", "--topic", "x", "--duration", "9999").failed(t, exitError, "durationSeconds")
	})

	t.Run("a second project makes --project necessary", func(t *testing.T) {
		var p client.Project
		decodeJSON(t, srv.cli(t, "projects", "create", "--name", "Spring launch", "--description", "April", "--json").ok(t), &p)
		if p.Name != "Spring launch" || p.ID == "" {
			t.Fatalf("projects create --json: %+v", p)
		}
		srv.cli(t, "channels", "list").failed(t, exitError, "choose one with --project", "Spring launch ("+p.ID+")", "Default ("+srv.ProjectID+")")
		srv.cli(t, "publish", "--video", other, "--platforms", "youtube").failed(t, exitError, "choose one with --project")
		r := srv.cli(t, "channels", "list", "--project", "spring LAUNCH").ok(t)
		if strings.Count(r.stdout, "\n") != 1 {
			t.Errorf("the new project's channels:\n%s", r.stdout)
		}
		srv.cli(t, "channels", "list", "--project", "Nope").failed(t, exitError, `no project named "Nope"`)
		r = srv.cli(t, "channels", "connect", "mastodon", "--sandbox", "--project", p.ID).ok(t)
		if list, err := c.ListChannels(ctx, p.ID); err != nil || len(list.Channels) != 1 || list.Channels[0].Platform != client.Mastodon {
			t.Errorf("channel in the new project: %+v, %v", list, err)
		}
		if r := srv.cli(t, "channels", "delete", bluesky.ID).ok(t); !strings.Contains(r.stdout, bluesky.ID) {
			t.Errorf("delete: %q", r.stdout)
		}
		if list, _ := c.ListChannels(ctx, srv.ProjectID); len(list.Channels) != 2 {
			t.Errorf("%d channels after a delete", len(list.Channels))
		}
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}
