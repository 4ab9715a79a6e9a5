package client_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// reelayServer is the whole process as `reelay serve` assembles it (API, workers, platform
// simulators, media storage) behind a real listener, with one account.
type reelayServer struct {
	URL       string
	Store     *store.Store
	AccountID string
	ProjectID string
	Key       string
}

func newReelayServer(t *testing.T, d store.Dialect, tune ...func(*config.Config)) *reelayServer {
	t.Helper()
	st := storetest.New(t, d)
	srv := apptest.Start(t, st, apptest.WithConfig(tune...))
	tn := apptest.NewTenant(t, st, "client-test", "default")
	return &reelayServer{URL: srv.URL, Store: st, AccountID: tn.AccountID, ProjectID: tn.ProjectID, Key: tn.Key}
}

func (s *reelayServer) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.URL, s.Key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serveFiles serves files at public-looking URLs the server may fetch (private addresses are
// allowed in these tests).
func serveFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const unknownID = "00000000-0000-4000-8000-000000000000"

// TestAgainstServer drives a real server through the client: every resource, the publish
// paths, pagination and error answers.
func TestAgainstServer(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testAgainstServer(t, newReelayServer(t, d))
		})
	}
}

func testAgainstServer(t *testing.T, srv *reelayServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := srv.client(t)
	clip := mediatest.MP4Bytes(t, mediatest.Options{Duration: 2 * time.Second, Width: 1080, Height: 1920})
	// TikTok takes videos of 3 seconds or more.
	longer := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920})
	media := serveFiles(t, map[string][]byte{"/clip.mp4": clip, "/clip5.mp4": longer})

	if err := c.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}

	var project client.Project
	t.Run("projects", func(t *testing.T) {
		projects, err := c.ListProjects(ctx)
		if err != nil || len(projects) != 1 || projects[0].ID != srv.ProjectID || projects[0].Name != "Default" || projects[0].CreatedAt.IsZero() {
			t.Fatalf("projects %+v, %v", projects, err)
		}
		p, err := c.CreateProject(ctx, client.CreateProjectRequest{Name: "Spring launch", Description: "April"})
		if err != nil || p.Name != "Spring launch" || p.Description != "April" || p.ID == "" {
			t.Fatalf("created %+v, %v", p, err)
		}
		project = *p
		if projects, _ := c.ListProjects(ctx); len(projects) != 2 {
			t.Errorf("%d projects after creating one", len(projects))
		}
	})

	var youtube, tiktok client.Channel
	t.Run("channels", func(t *testing.T) {
		for _, ch := range []*client.Channel{&youtube, &tiktok} {
			platform := client.YouTube
			if ch == &tiktok {
				platform = client.TikTok
			}
			got, err := c.CreateChannel(ctx, client.CreateChannelRequest{ProjectID: project.ID, Platform: platform, Sandbox: true,
				SandboxBehavior: &client.SandboxBehavior{ProcessingMS: new(0)}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Platform != platform || !got.Sandbox || got.Status != client.ChannelActive || got.ProjectID != project.ID || got.ExternalAccountID == "" {
				t.Errorf("channel %+v", got)
			}
			if _, ok := got.Capabilities["text"]; !ok {
				t.Errorf("capabilities without text limits: %v", got.Capabilities)
			}
			*ch = *got
		}
		list, err := c.ListChannels(ctx, project.ID)
		if err != nil || list.ProjectID != project.ID || len(list.Channels) != 2 {
			t.Fatalf("channels %+v, %v", list, err)
		}
		opts, err := c.ChannelOptions(ctx, youtube.ID, client.ChannelOptionsParams{})
		if err != nil || opts.ChannelID != youtube.ID || opts.Platform != client.YouTube || len(opts.Options) == 0 {
			t.Errorf("options %+v, %v", opts, err)
		}
		link, err := c.ConnectURL(ctx, client.LinkedIn, client.ConnectURLParams{ProjectID: project.ID, Sandbox: true})
		if err != nil || !strings.HasPrefix(link.URL, "http") || link.Platform != client.LinkedIn || link.ExpiresAt.Before(time.Now()) {
			t.Errorf("connect URL %+v, %v", link, err)
		}
	})

	var hook *client.WebhookCreated
	t.Run("webhooks", func(t *testing.T) {
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		t.Cleanup(receiver.Close)
		var err error
		hook, err = c.CreateWebhook(ctx, client.CreateWebhookRequest{URL: receiver.URL + "/hook",
			Events: []string{client.EventPostPublished, client.EventPostFailed}})
		if err != nil || !strings.HasPrefix(hook.Secret, "whsec_") || hook.Webhook.URL != receiver.URL+"/hook" || len(hook.Webhook.Events) != 2 {
			t.Fatalf("webhook %+v, %v", hook, err)
		}
		hooks, err := c.ListWebhooks(ctx)
		if err != nil || len(hooks) != 1 || hooks[0].ID != hook.Webhook.ID {
			t.Errorf("webhooks %+v, %v", hooks, err)
		}
	})

	var byURL *client.PublishResponse
	t.Run("publish by URL", func(t *testing.T) {
		var err error
		byURL, err = c.Publish(ctx, client.PublishRequest{ProjectID: project.ID, ChannelIDs: []string{youtube.ID},
			VideoURL: media + "/clip.mp4", Title: "Cold brew", Caption: "Coarse beans, 16 hours #coffee",
			YouTube: &client.YouTubeOptions{PrivacyStatus: "unlisted"}})
		if err != nil {
			t.Fatal(err)
		}
		if !byURL.Success || byURL.PostID == "" || byURL.IdempotencyKey == "" || byURL.Replayed || len(byURL.Platforms) != 1 {
			t.Fatalf("publish %+v", byURL)
		}
		post := waitPublished(t, ctx, c, byURL.PostID)
		if post.Title != "Cold brew" || post.PublishResults[0].URL == "" || post.PublishResults[0].ID == "" || post.PublishedAt == nil {
			t.Errorf("post %+v", post)
		}

		// The same key and body again: the first post, nothing new published.
		again, err := c.Publish(ctx, client.PublishRequest{ProjectID: project.ID, ChannelIDs: []string{youtube.ID},
			VideoURL: media + "/clip.mp4", Title: "Cold brew", Caption: "Coarse beans, 16 hours #coffee",
			YouTube:        &client.YouTubeOptions{PrivacyStatus: "unlisted"},
			IdempotencyKey: byURL.IdempotencyKey})
		if err != nil || !again.Replayed || again.PostID != byURL.PostID {
			t.Errorf("replay %+v, %v", again, err)
		}
	})

	t.Run("publish by streamed upload", func(t *testing.T) {
		var mu sync.Mutex
		var sent []int64
		var total int64
		req := client.PublishRequest{ProjectID: project.ID, ChannelIDs: []string{youtube.ID}, Title: "Cold brew",
			Caption: "Coarse beans, 16 hours #coffee",
			Video:   &client.Upload{Reader: oneWay{bytes.NewReader(clip)}, Name: "clip.mp4"},
			Progress: func(s, tot int64) {
				mu.Lock()
				sent, total = append(sent, s), tot
				mu.Unlock()
			}}
		// The same video and text to the same channel within minutes is refused, naming the post.
		_, err := c.Publish(ctx, req)
		if e, ok := client.AsError(err); !ok || e.Code != client.CodeDuplicatePost || e.StatusCode != 409 || e.PostID != byURL.PostID {
			t.Fatalf("duplicate: %v", err)
		}
		sent = nil
		req.Video = &client.Upload{Reader: bytes.NewReader(clip), Name: "clip.mp4"} // a size known from seeking
		req.AllowDuplicate = true
		res, err := c.Publish(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(sent) == 0 || sent[len(sent)-1] != int64(len(clip)) || total != int64(len(clip)) {
			t.Errorf("progress %v of %d, want it to end at %d", sent, total, len(clip))
		}
		for i := 1; i < len(sent); i++ {
			if sent[i] <= sent[i-1] {
				t.Errorf("progress went back: %v", sent)
			}
		}
		waitPublished(t, ctx, c, res.PostID)
	})

	t.Run("dry run", func(t *testing.T) {
		dr, err := c.DryRun(ctx, client.PublishRequest{ProjectID: project.ID, VideoURL: media + "/clip5.mp4",
			Platforms: []client.Platform{client.YouTube, client.TikTok}, Title: "Dry", Caption: "Only a check",
			TikTok: &client.TikTokOptions{Mode: "direct"}})
		if err != nil {
			t.Fatal(err)
		}
		if !dr.DryRun || len(dr.Platforms) != 2 || dr.Video == nil || dr.Video.ContentType != "video/mp4" || dr.Video.Width == nil || *dr.Video.Width != 1080 {
			t.Fatalf("dry run %+v", dr)
		}
		for _, d := range dr.Platforms {
			if len(d.Payload) == 0 {
				t.Errorf("%s: empty payload", d.Platform)
			}
		}
	})

	t.Run("scheduled post: edit, cancel", func(t *testing.T) {
		when := time.Now().Add(time.Hour).Truncate(time.Second)
		res, err := c.Publish(ctx, client.PublishRequest{ProjectID: project.ID, ChannelIDs: []string{tiktok.ID},
			VideoURL: media + "/clip5.mp4", Title: "Later", ScheduledFor: &when})
		if err != nil || res.Status != client.PostScheduled {
			t.Fatalf("scheduled %+v, %v", res, err)
		}
		later := when.Add(time.Hour)
		post, err := c.UpdatePost(ctx, res.PostID, client.UpdatePostRequest{ScheduledFor: &later, Caption: new("A new caption"),
			TikTok: &client.TikTokOptions{Mode: "direct"}})
		if err != nil || post.Caption != "A new caption" || post.ScheduledFor == nil || !post.ScheduledFor.Equal(later) {
			t.Fatalf("updated %+v, %v", post, err)
		}
		post, err = c.CancelPost(ctx, res.PostID)
		if err != nil || post.Status != client.PostCanceled || post.PublishResults[0].UploadStatus != client.UploadCanceled || !post.Settled() {
			t.Fatalf("canceled %+v, %v", post, err)
		}
		if _, err := c.RetryPost(ctx, res.PostID); !client.IsConflict(err) || client.ErrorCode(err) != client.CodeInvalidState {
			t.Errorf("retry of a canceled post: %v", err)
		}
	})

	t.Run("posts, paginated", func(t *testing.T) {
		page, err := c.ListPosts(ctx, client.ListPostsParams{ProjectID: project.ID, ListParams: client.ListParams{Limit: 1}})
		if err != nil || len(page.Posts) != 1 || page.NextCursor == "" {
			t.Fatalf("first page %+v, %v", page, err)
		}
		var ids []string
		for p, err := range c.AllPosts(ctx, client.ListPostsParams{ProjectID: project.ID, ListParams: client.ListParams{Limit: 1}}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		if len(ids) != 3 || ids[0] != page.Posts[0].ID || ids[2] != byURL.PostID {
			t.Errorf("all posts %v (newest first, the first published last)", ids)
		}
		published, err := c.ListPosts(ctx, client.ListPostsParams{Status: client.PostPublished})
		if err != nil || len(published.Posts) != 2 || published.NextCursor != "" {
			t.Errorf("published posts: %d, next %q, %v", len(published.Posts), published.NextCursor, err)
		}
		// Filters by platform and time: the scheduled post went to TikTok, the others to YouTube.
		hourAgo, now := time.Now().Add(-time.Hour), time.Now().Add(time.Minute)
		for _, tc := range []struct {
			name   string
			params client.ListPostsParams
			want   int
		}{
			{"on TikTok", client.ListPostsParams{Platform: client.TikTok}, 1},
			{"on YouTube, created in the last hour", client.ListPostsParams{Platform: client.YouTube, CreatedSince: hourAgo, CreatedBefore: now}, 2},
			{"created later", client.ListPostsParams{CreatedSince: now}, 0},
			{"scheduled from now on", client.ListPostsParams{ScheduledSince: hourAgo}, 1},
			{"scheduled before an hour ago", client.ListPostsParams{ScheduledBefore: hourAgo}, 0},
		} {
			l, err := c.ListPosts(ctx, tc.params)
			if err != nil || len(l.Posts) != tc.want {
				t.Errorf("%s: %+v, %v; want %d posts", tc.name, l, err, tc.want)
			}
		}
		_, err = c.ListPosts(ctx, client.ListPostsParams{CreatedSince: now, CreatedBefore: hourAgo})
		if e, ok := client.AsError(err); !ok || !client.IsValidation(err) || e.Fields["created_before"] == "" {
			t.Errorf("a range the wrong way round: %v", err)
		}
	})

	t.Run("error answers", func(t *testing.T) {
		_, err := c.GetPost(ctx, unknownID)
		if e, ok := client.AsError(err); !ok || e.StatusCode != 404 || e.Code != client.CodeNotFound || e.RequestID == "" || !client.IsNotFound(err) {
			t.Errorf("unknown post: %#v", err)
		}
		_, err = c.ListChannels(ctx, unknownID)
		if e, ok := client.AsError(err); !ok || e.StatusCode != 404 || e.Code != client.CodeNotFound {
			t.Errorf("unknown project: %v", err)
		}
		_, err = c.Publish(ctx, client.PublishRequest{ProjectID: unknownID, VideoURL: media + "/clip.mp4"})
		if !client.IsNotFound(err) {
			t.Errorf("publish to an unknown project: %v", err)
		}
		_, err = c.CreateProject(ctx, client.CreateProjectRequest{Name: strings.Repeat("x", 101)})
		if e, ok := client.AsError(err); !ok || e.Code != client.CodeValidationFailed || e.StatusCode != 400 || e.Fields["name"] == "" {
			t.Errorf("bad field: %#v", err)
		}
		_, err = c.Publish(ctx, client.PublishRequest{ProjectID: project.ID, VideoURL: media + "/clip.mp4",
			Platforms: []client.Platform{client.YouTube}, Caption: strings.Repeat("c", 5001)})
		if e, ok := client.AsError(err); !ok || !client.IsValidation(err) || e.Fields["caption"] == "" {
			t.Errorf("caption too long: %v", err)
		}
		_, err = c.Publish(ctx, client.PublishRequest{ProjectID: project.ID, VideoURL: media + "/clip.mp4",
			Extra: map[string]any{"not_a_field": true}})
		if e, ok := client.AsError(err); !ok || e.Fields["not_a_field"] == "" {
			t.Errorf("an unknown extra field: %v", err)
		}
		stranger, _ := client.New(srv.URL, "rly_live_nobody")
		if _, err := stranger.ListProjects(ctx); !client.IsUnauthorized(err) {
			t.Errorf("an unknown key: %v", err)
		}
	})

	t.Run("AI copy and storyboard", func(t *testing.T) {
		adapted, err := c.Adapt(ctx, client.AdaptRequest{Prompt: "Cold brew is easier than you think. Use coarse beans and 16 hours in the fridge.",
			Platforms: []client.Platform{client.TikTok, client.YouTube}, Tone: "educational", IncludeJev: true})
		if err != nil {
			t.Fatal(err)
		}
		if adapted.Model != "reelay-builtin" || len(adapted.Adapted) != 2 {
			t.Fatalf("adapted %+v", adapted)
		}
		tt, yt := adapted.Adapted[client.TikTok], adapted.Adapted[client.YouTube]
		if tt.Text == "" || tt.Hook == "" || len(tt.Hashtags) == 0 || len(tt.Jev) == 0 || yt.Title == "" {
			t.Errorf("copy: tiktok %+v, youtube %+v", tt, yt)
		}
		sb, err := c.CreateStoryboard(ctx, client.StoryboardRequest{Topic: "How to make cold brew at home", DurationSeconds: 30, Style: "cinematic"})
		if err != nil || len(sb.Storyboard.Scenes) != 6 || sb.Storyboard.Scenes[1].Timecode != "00:05-00:10" {
			t.Fatalf("storyboard %+v, %v", sb, err)
		}
		if scenes := sb.Storyboard.StitchScenes(); len(scenes) != 6 || scenes[0].Prompt == "" {
			t.Errorf("stitch scenes %+v", scenes)
		}
	})

	t.Run("analytics and inbox", func(t *testing.T) {
		sum, err := c.SyncAnalytics(ctx, client.SyncRequest{})
		if err != nil || sum.Synced != 2 || sum.Failed != 0 {
			t.Fatalf("sync %+v, %v", sum, err)
		}
		ov, err := c.AnalyticsOverview(ctx, client.AnalyticsParams{ProjectID: project.ID})
		if err != nil || ov.TotalPosts != 2 || ov.TotalViews == nil || ov.TotalImpressions != nil || ov.ProjectID != project.ID {
			t.Fatalf("overview %+v, %v", ov, err)
		}
		if yt := ov.PlatformBreakdown[client.YouTube]; yt.Posts != 2 || yt.Comments == nil {
			t.Errorf("youtube breakdown %+v", yt)
		}
		metrics, err := c.AnalyticsMetrics(ctx, client.MetricsParams{PostID: byURL.PostID, Samples: true})
		if err != nil || len(metrics.Metrics) != 1 || metrics.Metrics[0].Views == nil || len(metrics.Metrics[0].Samples) == 0 || metrics.Metrics[0].SyncedAt == nil {
			t.Fatalf("metrics %+v, %v", metrics, err)
		}
		n := 0
		for _, err := range c.AllAnalyticsMetrics(ctx, client.MetricsParams{ListParams: client.ListParams{Limit: 1}}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 2 {
			t.Errorf("%d destination metrics over all pages, want 2", n)
		}

		comments, err := c.ListComments(ctx, client.ListCommentsParams{Refresh: true, Platform: client.YouTube})
		if err != nil || len(comments.Comments) == 0 || comments.Sync == nil {
			t.Fatalf("comments %+v, %v", comments, err)
		}
		first := comments.Comments[0]
		replyReq := client.ReplyRequest{CommentID: first.ID, Platform: first.Platform, ReplyText: "Thanks for watching!", IdempotencyKey: "reply-once"}
		reply, err := c.Reply(ctx, replyReq)
		if err != nil || !reply.Own || reply.ParentID != first.ID || reply.Text != "Thanks for watching!" {
			t.Fatalf("reply %+v, %v", reply, err)
		}
		// Sent again under its key, it answers the same reply (the count of own comments below
		// would find a second).
		if again, err := c.Reply(ctx, replyReq); err != nil || again.ID != reply.ID {
			t.Fatalf("the reply again: %+v, %v", again, err)
		}
		var own int
		for cm, err := range c.AllComments(ctx, client.ListCommentsParams{Since: time.Now().Add(-time.Hour), ListParams: client.ListParams{Limit: 1}}) {
			if err != nil {
				t.Fatal(err)
			}
			if cm.Own {
				own++
			}
		}
		if own != 1 {
			t.Errorf("%d own replies listed, want 1", own)
		}
		// The comment replied to is answered now; the others are not, and the reply is never
		// among them.
		open, err := c.ListComments(ctx, client.ListCommentsParams{Unanswered: true, Platform: client.YouTube})
		if err != nil || len(open.Comments) != len(comments.Comments)-1 {
			t.Fatalf("comments not replied to: %+v, %v; want %d", open, err, len(comments.Comments)-1)
		}
		for _, cm := range open.Comments {
			if cm.ID == first.ID || cm.Own {
				t.Errorf("listed as not replied to: %+v", cm)
			}
		}
	})

	t.Run("account, keys, sandbox", func(t *testing.T) {
		u, err := c.Usage(ctx)
		// Three posts, one of them canceled before it fired, which refunds its unit.
		if err != nil || u.AccountID != srv.AccountID || u.PostsThisMonth != 2 || u.MonthlyPostLimit != nil || len(u.Month) != 7 {
			t.Errorf("usage %+v, %v", u, err)
		}
		if _, err := srv.Store.AddCredits(ctx, srv.AccountID, 5, "client test"); err != nil {
			t.Fatal(err)
		}
		ledger, err := c.Credits(ctx, client.ListParams{})
		if err != nil || ledger.AICredits != 5 || len(ledger.Entries) != 1 || ledger.Entries[0].Kind != "grant" || ledger.Entries[0].ReservationID != "" {
			t.Errorf("credits %+v, %v", ledger, err)
		}

		created, err := c.CreateAPIKey(ctx, client.CreateAPIKeyRequest{Name: "ci"})
		if err != nil || !strings.HasPrefix(created.Key, "rly_live_") || created.APIKey.Name != "ci" {
			t.Fatalf("key %+v, %v", created, err)
		}
		ci, _ := client.New(srv.URL, created.Key, client.WithBearerAuth())
		if _, err := ci.ListProjects(ctx); err != nil {
			t.Errorf("the new key: %v", err)
		}
		keys, err := c.ListAPIKeys(ctx)
		if err != nil || len(keys) != 2 {
			t.Errorf("keys %+v, %v", keys, err)
		}
		if err := c.RevokeAPIKey(ctx, created.APIKey.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := ci.ListProjects(ctx); !client.IsUnauthorized(err) {
			t.Errorf("a revoked key: %v", err)
		}

		seen, err := c.SandboxIntrospect(ctx, client.YouTube)
		if err != nil || len(seen.Uploads) != 2 || len(seen.Published) != 2 || len(seen.Replies) != 1 || seen.Uploads[0].Account != youtube.ExternalAccountID {
			t.Errorf("introspection %+v, %v", seen, err)
		}
	})

	t.Run("webhook deliveries, delete", func(t *testing.T) {
		var deliveries []client.WebhookDelivery
		for dl, err := range c.AllWebhookDeliveries(ctx, hook.Webhook.ID, client.ListParams{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			deliveries = append(deliveries, dl)
		}
		if len(deliveries) != 2 || deliveries[0].EventType != client.EventPostPublished || deliveries[0].EventID == "" {
			t.Errorf("deliveries %+v", deliveries)
		}
		if err := c.DeleteWebhook(ctx, hook.Webhook.ID); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteWebhook(ctx, hook.Webhook.ID); !client.IsNotFound(err) {
			t.Errorf("deleting it again: %v", err)
		}
		if hooks, err := c.ListWebhooks(ctx); err != nil || len(hooks) != 0 {
			t.Errorf("webhooks after delete %+v, %v", hooks, err)
		}
	})

	t.Run("delete a channel", func(t *testing.T) {
		if err := c.DeleteChannel(ctx, tiktok.ID); err != nil {
			t.Fatal(err)
		}
		list, err := c.ListChannels(ctx, project.ID)
		if err != nil || len(list.Channels) != 1 {
			t.Errorf("channels after delete %+v, %v", list, err)
		}
	})
}

func waitPublished(t *testing.T, ctx context.Context, c *client.Client, id string) *client.Post {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	post, err := c.WaitPost(ctx, id)
	if err != nil {
		t.Fatalf("wait for post %s: %v (last read %+v)", id, err, post)
	}
	if post.Status != client.PostPublished || !post.PublishResults[0].Published {
		t.Fatalf("post %s settled as %+v", id, post)
	}
	return post
}

// TestAIVideoAgainstServer: a generation that outlasts the server's wait answers 202, and
// WaitAIJob follows it to the video, which publishes by its link.
func TestAIVideoAgainstServer(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	srv := newReelayServer(t, store.SQLite) // AIWait 0: every generation answers 202 at once
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := srv.client(t)

	_, err := c.GenerateVideo(ctx, client.GenerateVideoRequest{Prompt: "Cold brew in 16 hours"})
	if e, ok := client.AsError(err); !ok || e.StatusCode != 402 || e.Code != client.CodeInsufficientCredits {
		t.Fatalf("without credits: %v", err)
	}
	if _, err := srv.Store.AddCredits(ctx, srv.AccountID, 1, "client test"); err != nil {
		t.Fatal(err)
	}
	job, err := c.GenerateVideo(ctx, client.GenerateVideoRequest{Prompt: "Cold brew in 16 hours", AspectRatio: client.AspectVertical})
	if err != nil || job.Status != client.AIJobRunning || job.JobID == "" || job.Kind != client.AIJobGenerateVideo || job.Done() {
		t.Fatalf("accepted %+v, %v", job, err)
	}
	job, err = c.WaitAIJob(ctx, job)
	if err != nil || job.Status != client.AIJobSucceeded || job.VideoURL == "" || job.AspectRatio != "9:16" || job.RequestID != job.JobID {
		t.Fatalf("job %+v, %v", job, err)
	}
	var video bytes.Buffer
	if n, err := c.DownloadMedia(ctx, job.VideoURL, &video); err != nil || n < 1000 || !bytes.Contains(video.Bytes()[:64], []byte("ftyp")) {
		t.Fatalf("download: %d bytes, %v", n, err)
	}

	if _, err := c.CreateChannel(ctx, client.CreateChannelRequest{ProjectID: srv.ProjectID, Platform: client.YouTube, Sandbox: true,
		SandboxBehavior: &client.SandboxBehavior{ProcessingMS: new(0)}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Publish(ctx, client.PublishRequest{ProjectID: srv.ProjectID, VideoURL: job.VideoURL,
		Platforms: []client.Platform{client.YouTube}, Title: "Generated"})
	if err != nil {
		t.Fatal(err)
	}
	waitPublished(t, ctx, c, res.PostID)

	// A stitch without credits fails at once: the error is the call's.
	_, err = c.StitchStoryboard(ctx, client.StitchRequest{Scenes: []client.StitchScene{{Prompt: "one"}, {Prompt: "two"}}})
	if !client.IsCode(err, client.CodeInsufficientCredits) {
		t.Errorf("stitch without credits: %v", err)
	}
}
