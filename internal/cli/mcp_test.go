package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/mcpserver"
	"github.com/reelay/reelay/internal/media/mediatest"
)

// mcpCommand runs `reelay mcp` in-process on pipes, the way a desktop agent runs it on the
// process's stdin and stdout, and connects the SDK's own client to it. It returns the
// session and the command's stderr.
func mcpCommand(t *testing.T, args ...string) (*mcp.ClientSession, *apptest.SyncBuffer) {
	t.Helper()
	cmdIn, agentOut := io.Pipe()
	agentIn, cmdOut := io.Pipe()
	stderr := &apptest.SyncBuffer{}
	root := newRoot(cmdOut, stderr)
	root.SetIn(cmdIn)
	root.SetArgs(append([]string{"mcp"}, args...))
	done := make(chan error, 1)
	go func() {
		done <- root.ExecuteContext(context.Background())
		cmdOut.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: agentIn, Writer: agentOut}, nil)
	if err != nil {
		t.Fatalf("connect to reelay mcp: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		// The agent going away ends the command, cleanly.
		cs.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("reelay mcp ended with %v\nstderr: %s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("reelay mcp did not end when its stdin closed")
		}
	})
	return cs, stderr
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

func toolError(t *testing.T, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got: %s", resultText(res))
	}
	for _, w := range want {
		if !strings.Contains(resultText(res), w) {
			t.Errorf("tool error does not say %q:\n%s", w, resultText(res))
		}
	}
}

// startServerForMCP starts `reelay serve` and answers its URL, the key it printed, a client
// with that key and the first-start account's project.
func startServerForMCP(t *testing.T) (url, key string, api *client.Client, project string) {
	t.Helper()
	url, serverLog := startServer(t, t.TempDir())
	key = keyPattern.FindString(serverLog.String())
	api, err := client.New(url, key)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := api.ListProjects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url, key, api, projects[0].ID
}

// TestMCPCommand runs `reelay mcp` against a running `reelay serve`, as a desktop agent
// would: it uploads a local file, reads the post back, answers failures as tool errors, and
// makes a revoked key plain.
func TestMCPCommand(t *testing.T) {
	url, key, api, project := startServerForMCP(t)
	ctx := context.Background()
	youtube, err := api.CreateChannel(ctx, client.CreateChannelRequest{ProjectID: project, Platform: client.YouTube,
		Sandbox: true, SandboxBehavior: &client.SandboxBehavior{ProcessingMS: new(0)}})
	if err != nil {
		t.Fatal(err)
	}
	clip := mediatest.MP4Bytes(t, mediatest.Options{Duration: 2 * time.Second, Width: 1080, Height: 1920})
	path := filepath.Join(t.TempDir(), "clip.mp4")
	if err := os.WriteFile(path, clip, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Setenv("REELAY_API_KEY", key)
	cs, stderr := mcpCommand(t, "--url", url)

	args := map[string]any{"project_id": project, "video_path": path, "channel_ids": []string{youtube.ID},
		"title": "Cold brew", "caption": "Coarse beans, 16 hours #coffee", "wait_seconds": 10}
	var pub mcpserver.PublishResult
	structured(t, callTool(t, cs, mcpserver.ToolPublishPost, args), &pub)
	if pub.PostID == "" || len(pub.Platforms) != 1 || pub.Replayed {
		t.Fatalf("publish: %+v", pub)
	}
	var post client.Post
	structured(t, callTool(t, cs, mcpserver.ToolGetPost, map[string]any{"post_id": pub.PostID, "wait_seconds": 30}), &post)
	if post.Status != client.PostPublished || post.PublishResults[0].URL == "" {
		t.Fatalf("post: %+v", post)
	}
	// The simulator received the file's bytes, once; the same call again answers the same post.
	structured(t, callTool(t, cs, mcpserver.ToolPublishPost, args), &pub)
	if pub.PostID != post.ID || !pub.Replayed {
		t.Errorf("repeat: %+v", pub)
	}
	seen, err := api.SandboxIntrospect(ctx, client.YouTube)
	sum := sha256.Sum256(clip)
	if err != nil || len(seen.Uploads) != 1 || seen.Uploads[0].SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("youtube received %+v (%v), want the file once", seen, err)
	}

	toolError(t, callTool(t, cs, mcpserver.ToolGetPost, map[string]any{"post_id": "00000000-0000-4000-8000-000000000000"}),
		"404 not_found")
	toolError(t, callTool(t, cs, mcpserver.ToolPublishPost, map[string]any{"project_id": project, "video_path": path + ".missing"}),
		"invalid argument video_path", "no such file")
	toolError(t, callTool(t, cs, mcpserver.ToolPublishPost, map[string]any{"project_id": project, "video_path": path,
		"video_url": "https://example.com/a.mp4"}), "invalid argument video_path", "not both")
	toolError(t, callTool(t, cs, mcpserver.ToolPublishPost, map[string]any{"project_id": project, "video_path": path,
		"thumbnail_path": path + ".jpg"}), "invalid argument thumbnail_path", "no such file")

	// A key revoked while the agent runs: every call says so, and what to do.
	other, err := api.CreateAPIKey(ctx, client.CreateAPIKeyRequest{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	revoked, revokedLog := mcpCommand(t, "--url", url, "--api-key", other.Key)
	if res := callTool(t, revoked, mcpserver.ToolListProjects, map[string]any{}); res.IsError {
		t.Fatalf("live key: %s", resultText(res))
	}
	if err := api.RevokeAPIKey(ctx, other.APIKey.ID); err != nil {
		t.Fatal(err)
	}
	toolError(t, callTool(t, revoked, mcpserver.ToolListProjects, map[string]any{}),
		"401 unauthorized", "revoked", "REELAY_API_KEY")

	for _, log := range []string{stderr.String(), revokedLog.String()} {
		if strings.Contains(log, key) || strings.Contains(log, other.Key) {
			t.Errorf("reelay mcp logged a key:\n%s", log)
		}
	}
}

// TestMCPCommandWarnsAtStart: a server that refuses the key is reported on stderr at start,
// and the tools still answer (with the error).
func TestMCPCommandWarnsAtStart(t *testing.T) {
	url, _ := startServer(t, t.TempDir())
	bogus := "rly_live_" + strings.Repeat("x", 43)
	cs, stderr := mcpCommand(t, "--url", url, "--api-key", bogus)
	if !strings.Contains(stderr.String(), "refuses the API key") || strings.Contains(stderr.String(), bogus) {
		t.Errorf("stderr: %s", stderr.String())
	}
	toolError(t, callTool(t, cs, mcpserver.ToolListChannels, map[string]any{}), "401 unauthorized")

	if _, err := run(t, "mcp", "--url", url, "--api-key", ""); err == nil || !strings.Contains(err.Error(), "REELAY_API_KEY") {
		t.Errorf("without a key: %v", err)
	}
}
