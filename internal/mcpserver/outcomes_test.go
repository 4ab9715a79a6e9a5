package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/mcpserver"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// reelay is a whole process (API, workers, simulators) behind a real listener, with an
// account, and the tools of `reelay mcp` connected to it through the SDK's in-memory
// transport.
type reelay struct {
	api     *client.Client
	project string
	tools   *mcp.ClientSession
	media   string // base URL of a server of test videos
}

func start(t *testing.T, d store.Dialect) *reelay {
	t.Helper()
	st := storetest.New(t, d)
	srv := apptest.Start(t, st,
		apptest.WithConfig(func(c *config.Config) { c.RetryAttempts = 2 }),
		apptest.WithParams(func(p *app.Params) { p.SecretKey = bytes.Repeat([]byte{9}, 32) }))
	tn := apptest.NewTenant(t, st, "mcp-test", "mcp")
	api, err := client.New(srv.URL, tn.Key)
	if err != nil {
		t.Fatal(err)
	}
	clip := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920})
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(clip) }))
	t.Cleanup(media.Close)

	serverSide, clientSide := mcp.NewInMemoryTransports()
	server := mcpserver.New(api, mcpserver.Options{LocalFiles: true})
	go server.Run(context.Background(), serverSide)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &reelay{api: api, project: tn.ProjectID, tools: cs, media: media.URL}
}

func (r *reelay) channel(t *testing.T, p client.Platform, b client.SandboxBehavior) string {
	t.Helper()
	ch, err := r.api.CreateChannel(context.Background(), client.CreateChannelRequest{ProjectID: r.project, Platform: p,
		Sandbox: true, SandboxBehavior: &b})
	if err != nil {
		t.Fatal(err)
	}
	return ch.ID
}

func (r *reelay) call(t *testing.T, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := r.tools.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.(*mcp.TextContent).Text)
	}
	return res, strings.Join(parts, "\n")
}

func decode(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// TestPublishOutcomes: what a model is told for each way a publish can end.
func TestPublishOutcomes(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			r := start(t, d)
			ok := r.channel(t, client.YouTube, client.SandboxBehavior{ProcessingMS: new(0)})
			slow := r.channel(t, client.Instagram, client.SandboxBehavior{ProcessingMS: new(1500)})
			rejecting := r.channel(t, client.Threads, client.SandboxBehavior{Fail: "reject", ProcessingMS: new(0)})

			t.Run("failed everywhere", func(t *testing.T) {
				res, text := r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/a.mp4", "caption": "refused", "channel_ids": []string{rejecting}})
				var pub mcpserver.PublishResult
				decode(t, res, &pub)
				// A post that failed on every destination is a failure the model must report,
				// with the post itself as structured content.
				if !res.IsError || pub.Status != client.PostFailed || pub.PostID == "" || pub.Platforms[0].Error == "" ||
					!strings.Contains(text, "threads") || !strings.Contains(text, "failed on every destination") {
					t.Errorf("failed post: isError %v %+v\n%s", res.IsError, pub, text)
				}
			})

			var processing string
			t.Run("not settled when the wait ends", func(t *testing.T) {
				res, text := r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/b.mp4", "caption": "slow", "channel_ids": []string{slow}, "wait_seconds": 0})
				var pub mcpserver.PublishResult
				decode(t, res, &pub)
				processing = pub.PostID
				if res.IsError || pub.Status != client.PostProcessing || !strings.Contains(text, "Do not publish again") ||
					!strings.Contains(text, `reelay_get_post with post_id "`+pub.PostID+`"`) {
					t.Errorf("processing: %+v\n%s", pub, text)
				}
				res, text = r.call(t, mcpserver.ToolGetPost, map[string]any{"post_id": processing, "wait_seconds": 20})
				var post client.Post
				decode(t, res, &post)
				if post.Status != client.PostPublished || strings.Contains(text, "Not settled") {
					t.Errorf("after waiting: %s", text)
				}
			})

			t.Run("duplicate", func(t *testing.T) {
				// Another key on the same content and channel within 10 minutes: refused,
				// naming the existing post.
				res, text := r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/b.mp4", "caption": "slow", "channel_ids": []string{slow}, "idempotency_key": "second-try"})
				if !res.IsError || !strings.Contains(text, "409 duplicate_post") || !strings.Contains(text, "as post "+processing) {
					t.Errorf("duplicate: %s", text)
				}
				// The same key with other arguments is a conflict.
				res, text = r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/c.mp4", "title": "Other", "channel_ids": []string{ok}, "idempotency_key": "second-try"})
				if res.IsError {
					t.Fatalf("new content under a new key: %s", text)
				}
				res, text = r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/c.mp4", "title": "Changed", "channel_ids": []string{ok}, "idempotency_key": "second-try"})
				if !res.IsError || !strings.Contains(text, "409 idempotency_conflict") {
					t.Errorf("reused key: %s", text)
				}
			})

			t.Run("scheduled", func(t *testing.T) {
				at := time.Now().Add(48 * time.Hour).Truncate(time.Second).In(time.FixedZone("CET", 3600))
				res, text := r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/d.mp4", "title": "Later", "channel_ids": []string{ok},
					"scheduled_for": at.Format(time.RFC3339)})
				var pub mcpserver.PublishResult
				decode(t, res, &pub)
				if res.IsError || pub.Status != client.PostScheduled || pub.ScheduledFor == nil || !pub.ScheduledFor.Equal(at) ||
					!strings.Contains(text, "Scheduled: it will be published at") {
					t.Errorf("scheduled: %+v\n%s", pub, text)
				}
				res, text = r.call(t, mcpserver.ToolPublishPost, map[string]any{"project_id": r.project,
					"video_url": r.media + "/e.mp4", "title": "Past", "channel_ids": []string{ok}, "scheduled_for": "2001-01-01T00:00:00Z"})
				if !res.IsError || !strings.Contains(text, "- scheduled_for:") {
					t.Errorf("past time: %s", text)
				}
			})
		})
	}
}
