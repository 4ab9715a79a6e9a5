package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/mcpserver"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store/storetest"
)

// connectDefaultPlatforms connects sandbox channels of the default platforms (YouTube,
// Instagram, TikTok) to project.
func connectDefaultPlatforms(t *testing.T, c *client.Client, project string) {
	t.Helper()
	for _, p := range []client.Platform{client.YouTube, client.Instagram, client.TikTok} {
		if _, err := c.CreateChannel(context.Background(), client.CreateChannelRequest{ProjectID: project, Platform: p,
			Sandbox: true, SandboxBehavior: &client.SandboxBehavior{ProcessingMS: new(0)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// writeClip writes a vertical 3-second MP4 named clip.mp4, and answers its path.
func writeClip(t *testing.T) string {
	t.Helper()
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	if err := os.WriteFile(clip, mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 1080, Height: 1920}), 0o600); err != nil {
		t.Fatal(err)
	}
	return clip
}

// TestPublishWithoutTitle: `reelay publish --video clip.mp4 --caption hi`, and with --video
// alone, publish to the default platforms (YouTube, Instagram, TikTok), YouTube's title made
// from the caption's first line, else the file's name; the dry run says so.
func TestPublishWithoutTitle(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, d)
			ctx := context.Background()
			c := srv.client(t)
			connectDefaultPlatforms(t, c, srv.ProjectID)
			clip := writeClip(t)
			youtubeTitles := func() []string {
				seen, err := c.SandboxIntrospect(ctx, client.YouTube)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, p := range seen.Published {
					out = append(out, p.Text)
				}
				return out
			}

			r := srv.cli(t, "publish", "--video", clip, "--caption", "hi", "--dry-run").ok(t)
			if !strings.Contains(r.stdout, "filled in by reelay: ") || !strings.Contains(r.stdout, "youtube title from the caption's first line") {
				t.Errorf("dry run:\n%s", r.stdout)
			}

			for i, tc := range []struct {
				args  []string
				title string
			}{
				{[]string{"--caption", "hi"}, "hi"},
				{nil, "clip"},
			} {
				r := srv.cli(t, append([]string{"publish", "--video", clip, "--json"}, tc.args...)...).ok(t)
				var post client.Post
				decodeJSON(t, r, &post)
				if post.Status != client.PostPublished || len(post.PublishResults) != 3 {
					t.Fatalf("publish %v: %+v", tc.args, post)
				}
				if titles := youtubeTitles(); len(titles) != i+1 || titles[i] != tc.title {
					t.Errorf("publish %v: YouTube received the titles %q, want %q last", tc.args, titles, tc.title)
				}
			}
		})
	}
}

// TestMCPCommandPublishesWithoutTitle: `reelay mcp`'s reelay_publish_post called with a video
// and a caption, or a video alone, publishes to the default platforms, and its answer says
// which texts reelay made.
func TestMCPCommandPublishesWithoutTitle(t *testing.T) {
	url, key, api, project := startServerForMCP(t)
	ctx := context.Background()
	connectDefaultPlatforms(t, api, project)
	clip := writeClip(t)
	t.Setenv("REELAY_API_KEY", key)
	cs, _ := mcpCommand(t, "--url", url)

	for i, tc := range []struct {
		args        map[string]any
		title, from string
		says        string
	}{
		{map[string]any{"project_id": project, "video_path": clip, "caption": "hi"}, "hi", client.DerivedFromCaptionFirstLine,
			"Its title was made from the caption's first line"},
		{map[string]any{"project_id": project, "video_path": clip}, "clip", client.DerivedFromVideoFileName,
			"Its title was made from the video's file name"},
	} {
		tc.args["wait_seconds"] = 30
		res := callTool(t, cs, mcpserver.ToolPublishPost, tc.args)
		var pub mcpserver.PublishResult
		structured(t, res, &pub)
		if pub.Status != client.PostPublished || len(pub.Platforms) != 3 {
			t.Fatalf("publish %v: %s", tc.args, resultText(res))
		}
		for _, d := range pub.Platforms {
			if d.Platform == client.YouTube && d.Derived["title"] != tc.from {
				t.Errorf("publish %v: youtube derived %v, want the title from %s", tc.args, d.Derived, tc.from)
			}
		}
		if !strings.Contains(resultText(res), tc.says) {
			t.Errorf("publish %v: the summary does not say %q:\n%s", tc.args, tc.says, resultText(res))
		}
		seen, err := api.SandboxIntrospect(ctx, client.YouTube)
		if err != nil || len(seen.Published) != i+1 || seen.Published[i].Text != tc.title {
			t.Errorf("publish %v: YouTube received %+v (%v), want the title %q last", tc.args, seen.Published, err, tc.title)
		}
	}
}
