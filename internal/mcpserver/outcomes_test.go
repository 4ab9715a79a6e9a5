package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	st      *store.Store
	account string
	project string
	tools   *mcp.ClientSession
	media   string // base URL of a server of test videos
	clip    []byte // the video it serves
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

	return &reelay{api: api, st: st, account: tn.AccountID, project: tn.ProjectID,
		tools: connect(t, api, mcpserver.Options{LocalFiles: true}), media: media.URL, clip: clip}
}

// connect serves the tools with o on the SDK's in-memory transport: with LocalFiles, as
// `reelay mcp` does over stdio; without, as POST /api/v1/mcp does.
func connect(t *testing.T, api *client.Client, o mcpserver.Options) *mcp.ClientSession {
	t.Helper()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	go mcpserver.New(api, o).Run(context.Background(), serverSide)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
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
	return callOn(t, r.tools, name, args)
}

func callOn(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
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

// TestPublishLocalThumbnail: thumbnail_path uploads the cover image from this machine with the
// video, whether that is a video_path or a video_url, and YouTube gets it; where the tools
// cannot read local files, and with thumbnail_url, it is refused before anything is sent.
func TestPublishLocalThumbnail(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			r := start(t, d)
			yt := r.channel(t, client.YouTube, client.SandboxBehavior{ProcessingMS: new(0)})
			dir := t.TempDir()
			clip := filepath.Join(dir, "clip.mp4")
			if err := os.WriteFile(clip, r.clip, 0o600); err != nil {
				t.Fatal(err)
			}
			covers := map[string][]byte{}
			for i, name := range []string{"cover.jpg", "other.jpg"} {
				covers[name] = mediatest.JPEG(t, 1280+16*i, 720)
				if err := os.WriteFile(filepath.Join(dir, name), covers[name], 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cover := filepath.Join(dir, "cover.jpg")

			refusals := []struct {
				name  string
				tools *mcp.ClientSession
				args  map[string]any
				want  []string
			}{
				{"over HTTP", connect(t, r.api, mcpserver.Options{}), map[string]any{"video_url": r.media + "/a.mp4", "thumbnail_path": cover},
					[]string{"invalid argument thumbnail_path", "give thumbnail_url", "reelay mcp"}},
				{"with thumbnail_url", r.tools, map[string]any{"video_path": clip, "thumbnail_path": cover, "thumbnail_url": r.media + "/cover.jpg"},
					[]string{"invalid argument thumbnail_path", "give thumbnail_url or thumbnail_path, not both"}},
				{"missing", r.tools, map[string]any{"video_path": clip, "thumbnail_path": cover + ".missing"},
					[]string{"invalid argument thumbnail_path", "no such file"}},
				{"a directory", r.tools, map[string]any{"video_path": clip, "thumbnail_path": dir},
					[]string{"invalid argument thumbnail_path", "not a regular file"}},
			}
			for _, c := range refusals {
				t.Run(c.name, func(t *testing.T) {
					c.args["project_id"], c.args["channel_ids"], c.args["title"] = r.project, []string{yt}, "Refused "+c.name
					res, text := callOn(t, c.tools, mcpserver.ToolPublishPost, c.args)
					if !res.IsError {
						t.Fatalf("published: %s", text)
					}
					for _, w := range c.want {
						if !strings.Contains(text, w) {
							t.Errorf("does not say %q:\n%s", w, text)
						}
					}
				})
			}
			if posts, err := r.st.ListPosts(context.Background(), r.account, store.PostFilter{}); err != nil || len(posts) != 0 {
				for _, p := range posts {
					t.Errorf("a refused call made post %q", p.Title)
				}
				t.Fatalf("posts after the refusals: %d (%v)", len(posts), err)
			}

			cases := []struct {
				name, cover string
				args        map[string]any
			}{
				{"with video_path", "cover.jpg", map[string]any{"video_path": clip}},
				{"with video_url", "other.jpg", map[string]any{"video_url": r.media + "/b.mp4"}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.args["project_id"], c.args["channel_ids"], c.args["title"] = r.project, []string{yt}, "Cover "+c.name
					c.args["thumbnail_path"], c.args["wait_seconds"] = filepath.Join(dir, c.cover), 30
					res, text := r.call(t, mcpserver.ToolPublishPost, c.args)
					var pub mcpserver.PublishResult
					decode(t, res, &pub)
					if res.IsError || pub.Status != client.PostPublished {
						t.Fatalf("publish: %s", text)
					}
					post, err := r.st.GetPost(context.Background(), r.account, pub.PostID)
					if err != nil {
						t.Fatal(err)
					}
					if post.ThumbnailSHA256 != sha(covers[c.cover]) || post.VideoSHA256 != sha(r.clip) {
						t.Errorf("stored thumbnail %s and video %s; want the files' %s and %s",
							post.ThumbnailSHA256, post.VideoSHA256, sha(covers[c.cover]), sha(r.clip))
					}
					// YouTube's step state says thumbnails.set took it.
					if len(post.Destinations) != 1 {
						t.Fatalf("%d destinations", len(post.Destinations))
					}
					var state struct{ Thumbnail string }
					if st := post.Destinations[0].State; json.Unmarshal(st, &state) != nil || state.Thumbnail != "set" {
						t.Errorf("youtube's state %s: the thumbnail was not set", st)
					}
				})
			}
			seen, err := r.api.SandboxIntrospect(context.Background(), client.YouTube)
			if err != nil || len(seen.Uploads) != 2 {
				t.Errorf("youtube received %+v (%v), want the two videos", seen, err)
			}
		})
	}
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
