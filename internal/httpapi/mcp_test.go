package httpapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/mcpserver"
)

// withKey sends an API key with every request of the MCP client, as a desktop agent configured
// with a header does.
type withKey struct {
	key  string
	next http.RoundTripper
}

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.key != "" {
		r.Header.Set("X-API-Key", k.key)
	}
	return k.next.RoundTrip(r)
}

// mcpConnect connects the SDK's own client over streamable HTTP to /api/v1/mcp of a real
// listener serving h.
func mcpConnect(t *testing.T, h http.Handler, key string) (*mcp.ClientSession, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	transport := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/api/v1/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: withKey{key: key, next: http.DefaultTransport}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "reelay-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, transport, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mustConnect(t *testing.T, h http.Handler, key string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(t, h, key)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// call calls a tool; a JSON-RPC error fails the test (tools answer failures as results).
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// text is a result's text content, blocks joined.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// decodeStructured reads a successful result's structured content into out.
func decodeStructured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// wantToolError checks that a result is a tool error whose text has every one of want.
func wantToolError(t *testing.T, res *mcp.CallToolResult, want ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error, got success: %s", text(res))
	}
	if res.StructuredContent != nil {
		t.Errorf("tool error with structured content: %v", res.StructuredContent)
	}
	for _, w := range want {
		if !strings.Contains(text(res), w) {
			t.Errorf("tool error does not say %q:\n%s", w, text(res))
		}
	}
}

// TestMCPOverHTTP drives /api/v1/mcp with the SDK's client on the whole process: the tools,
// publishing to sandbox channels, analytics, bad arguments and tenant isolation.
func TestMCPOverHTTP(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		channels := e.defaultChannels(e.a)
		mp4 := video(t, 5)
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": mp4})
		cs := mustConnect(t, e.h, e.a.Key)

		t.Run("tools/list", func(t *testing.T) {
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				if tool.InputSchema == nil || tool.OutputSchema == nil || len(tool.Description) < 100 {
					t.Errorf("%s: schemas or description missing", tool.Name)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, mcpserver.ToolNames) {
				t.Fatalf("tools %v, want %v", names, mcpserver.ToolNames)
			}
			publish := list.Tools[slices.IndexFunc(list.Tools, func(x *mcp.Tool) bool { return x.Name == mcpserver.ToolPublishPost })]
			raw, _ := json.Marshal(publish.InputSchema)
			var schema struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			}
			json.Unmarshal(raw, &schema)
			if !slices.Equal(schema.Required, []string{"project_id"}) {
				t.Errorf("required %v", schema.Required)
			}
			for _, p := range []string{"video_url", "video_path", "channel_ids", "platforms", "scheduled_for", "youtube",
				"instagram", "tiktok", "reddit", "idempotency_key", "allow_duplicate"} {
				if _, ok := schema.Properties[p]; !ok {
					t.Errorf("publish schema lacks %s", p)
				}
			}
			for _, p := range []string{"video_path", "thumbnail_path"} {
				if !strings.Contains(string(schema.Properties[p]), "Not available on this connection") {
					t.Errorf("%s is not said to be unavailable over HTTP: %s", p, schema.Properties[p])
				}
			}
			for _, must := range []string{"sent_to_inbox", "TikTok app", "reelay_get_post", "100 characters", "5000 characters",
				"youtube, instagram, tiktok", "capabilities", "Never call reelay_publish_post again"} {
				if !strings.Contains(publish.Description, must) {
					t.Errorf("publish description does not say %q", must)
				}
			}
		})

		t.Run("list projects and channels", func(t *testing.T) {
			var projects mcpserver.ProjectList
			res := call(t, cs, mcpserver.ToolListProjects, map[string]any{})
			decodeStructured(t, res, &projects)
			if len(projects.Projects) != 1 || projects.Projects[0].ID != e.a.ProjectID || !strings.Contains(text(res), e.a.ProjectID) {
				t.Errorf("projects: %s", text(res))
			}
			var list client.ChannelList
			res = call(t, cs, mcpserver.ToolListChannels, map[string]any{})
			decodeStructured(t, res, &list)
			if list.ProjectID != e.a.ProjectID || len(list.Channels) != 3 {
				t.Fatalf("channels: %s", text(res))
			}
			for _, ch := range list.Channels {
				if ch.ID != channels[string(ch.Platform)] || ch.Capabilities["text"] == nil || !strings.Contains(text(res), ch.ID) {
					t.Errorf("channel %+v", ch)
				}
			}
		})

		var postID string
		args := map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4",
			"title": "Morning run", "caption": "Five seconds of sunrise #run", "youtube": map[string]any{"privacy_status": "unlisted"}}
		t.Run("publish and read back", func(t *testing.T) {
			var pub mcpserver.PublishResult
			res := call(t, cs, mcpserver.ToolPublishPost, args)
			decodeStructured(t, res, &pub)
			postID = pub.PostID
			if pub.PostID == "" || !strings.HasPrefix(pub.IdempotencyKey, "mcp-") || pub.Replayed || len(pub.Platforms) != 3 {
				t.Fatalf("publish: %s", text(res))
			}
			var post client.Post
			res = call(t, cs, mcpserver.ToolGetPost, map[string]any{"post_id": postID, "wait_seconds": 30})
			decodeStructured(t, res, &post)
			if post.ID != postID || post.Status != client.PostPublished || len(post.PublishResults) != 3 {
				t.Fatalf("post: %s", text(res))
			}
			for _, d := range post.PublishResults {
				want := client.UploadPublished
				if d.Platform == client.TikTok {
					want = client.UploadSentToInbox // TikTok's default mode
				}
				if d.UploadStatus != want {
					t.Errorf("%s: %s, want %s", d.Platform, d.UploadStatus, want)
				}
			}
			if !strings.Contains(text(res), "TikTok app") || !strings.Contains(text(res), "published") {
				t.Errorf("summary: %s", text(res))
			}
		})

		t.Run("the same call again answers the same post", func(t *testing.T) {
			var pub mcpserver.PublishResult
			decodeStructured(t, call(t, cs, mcpserver.ToolPublishPost, args), &pub)
			if pub.PostID != postID || !pub.Replayed {
				t.Errorf("repeat: post %s replayed %v, want %s replayed", pub.PostID, pub.Replayed, postID)
			}
			for _, p := range []string{"youtube", "instagram", "tiktok"} {
				if uploads, _ := e.introspect(e.a, p); len(uploads) != 1 {
					t.Errorf("%s received %d uploads, want 1", p, len(uploads))
				}
			}
			if ms.hits.Load() != 1 {
				t.Errorf("video fetched %d times", ms.hits.Load())
			}
		})

		t.Run("analytics", func(t *testing.T) {
			var a mcpserver.AnalyticsResult
			res := call(t, cs, mcpserver.ToolGetAnalytics, map[string]any{"sync": true, "projectId": e.a.ProjectID})
			decodeStructured(t, res, &a)
			if a.Sync == nil || a.Sync.Synced == 0 || a.TotalPosts != 1 || a.ProjectID != e.a.ProjectID || a.PlatformBreakdown["youtube"].Posts != 1 {
				t.Errorf("analytics: %s", text(res))
			}
			var bluesky mcpserver.AnalyticsResult
			res = call(t, cs, mcpserver.ToolGetAnalytics, map[string]any{"platform": "bluesky"})
			decodeStructured(t, res, &bluesky)
			if bluesky.TotalPosts != 0 || bluesky.TotalViews != nil || bluesky.Sync != nil || !strings.Contains(text(res), "views n/a") {
				t.Errorf("bluesky analytics: %s", text(res))
			}
		})

		t.Run("bad arguments name the field", func(t *testing.T) {
			cases := []struct {
				name string
				args map[string]any
				want []string
			}{
				{"enum", map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "tiktok": map[string]any{"mode": "later"}},
					[]string{"invalid argument tiktok.mode", "later"}},
				{"unknown field", map[string]any{"project_id": e.a.ProjectID, "video": "x.mp4"}, []string{"invalid argument video: unknown field"}},
				{"missing", map[string]any{"video_url": ms.URL + "/clip.mp4"}, []string{"invalid argument project_id: required"}},
				{"platform", map[string]any{"project_id": e.a.ProjectID, "platforms": []string{"myspace"}}, []string{"platforms[]", "myspace"}},
				{"time without offset", map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "scheduled_for": "2030-01-01T09:00:00"},
					[]string{"invalid argument scheduled_for", "offset"}},
				{"checked by the API", map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "title": strings.Repeat("t", 101)},
					[]string{"400 validation_failed", "- title:"}},
				{"local file over HTTP", map[string]any{"project_id": e.a.ProjectID, "video_path": "/etc/passwd"},
					[]string{"invalid argument video_path", "give video_url"}},
				{"local thumbnail over HTTP", map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "thumbnail_path": "/etc/passwd"},
					[]string{"invalid argument thumbnail_path", "give thumbnail_url"}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					wantToolError(t, call(t, cs, mcpserver.ToolPublishPost, c.args), c.want...)
				})
			}
			wantToolError(t, call(t, cs, mcpserver.ToolGetPost, map[string]any{"post_id": ""}), "invalid argument post_id")
			wantToolError(t, call(t, cs, mcpserver.ToolGetAnalytics, map[string]any{"startDate": "May 1"}), "invalid argument startDate")
			// None of them published anything.
			if uploads, _ := e.introspect(e.a, "youtube"); len(uploads) != 1 {
				t.Errorf("youtube received %d uploads", len(uploads))
			}
		})

		t.Run("another account's objects are not found", func(t *testing.T) {
			bob := mustConnect(t, e.h, e.b.Key)
			wantToolError(t, call(t, bob, mcpserver.ToolGetPost, map[string]any{"post_id": postID}), "404 not_found", "not found")
			wantToolError(t, call(t, bob, mcpserver.ToolListChannels, map[string]any{"project_id": e.a.ProjectID}), "404 not_found")
			wantToolError(t, call(t, bob, mcpserver.ToolPublishPost, map[string]any{"project_id": e.a.ProjectID,
				"video_url": ms.URL + "/clip.mp4", "channel_ids": []string{channels["youtube"]}}), "not_found")
			var a mcpserver.AnalyticsResult
			decodeStructured(t, call(t, bob, mcpserver.ToolGetAnalytics, map[string]any{}), &a)
			if a.TotalPosts != 0 {
				t.Errorf("bob's analytics count alice's posts: %+v", a)
			}
		})
	})
}

// TestMCPAuthentication: the endpoint is behind the API's authentication, with the contract's
// error body.
func TestMCPAuthentication(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		initialize := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "curl", "version": "1"}}}
		accept := map[string]string{"Accept": "application/json, text/event-stream"}

		r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Body: initialize, Header: accept})
		if r.Code != http.StatusUnauthorized || r.errCode() != "unauthorized" {
			t.Errorf("no key: %d %s", r.Code, r.Body)
		}
		if _, err := mcpConnect(t, e.h, ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("SDK client without a key: %v", err)
		}

		created := e.do(req{Method: "POST", Path: "/api/v1/api-keys", Key: e.a.Key, Body: map[string]any{"name": "agent"}})
		key := created.JSON["key"].(string)
		keyID := created.JSON["api_key"].(map[string]any)["id"].(string)
		cs := mustConnect(t, e.h, key)
		if res := call(t, cs, mcpserver.ToolListProjects, map[string]any{}); res.IsError {
			t.Fatalf("live key: %s", text(res))
		}
		if r := e.do(req{Method: "DELETE", Path: "/api/v1/api-keys/" + keyID, Key: e.a.Key}); r.Code != http.StatusOK {
			t.Fatalf("revoke: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: key, Body: initialize, Header: accept})
		if r.Code != http.StatusUnauthorized || !strings.Contains(string(r.Body), "revoked") {
			t.Errorf("revoked key: %d %s", r.Code, r.Body)
		}
		// A session opened before the key was revoked gets 401 on its next call.
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolListProjects, Arguments: map[string]any{}}); err == nil ||
			!strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("call with a revoked key: %v", err)
		}
		if _, err := mcpConnect(t, e.h, key); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("connect with a revoked key: %v", err)
		}

		r = e.do(req{Method: "POST", Path: "/api/v1/mcp?api_key=" + e.a.Key, Body: initialize, Header: accept})
		if r.Code != http.StatusBadRequest || r.errCode() != "credentials_in_url" {
			t.Errorf("key in the URL: %d %s", r.Code, r.Body)
		}
	})
}

// TestMCPProtocolAnswers checks the endpoint's raw answers against the contract: JSON-RPC
// results, and the contract's errors for what is refused before the protocol starts.
func TestMCPProtocolAnswers(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		accept := map[string]string{"Accept": "application/json, text/event-stream"}
		r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: accept, Body: map[string]any{
			"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18",
				"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "curl", "version": "1"}}}})
		result, _ := r.JSON["result"].(map[string]any)
		info, _ := result["serverInfo"].(map[string]any)
		if r.Code != http.StatusOK || info["name"] != "reelay" || result["instructions"] == nil {
			t.Errorf("initialize: %d %s", r.Code, r.Body)
		}
		// Stateless: a tools/call needs no session from the initialize above.
		r = e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: accept, Body: map[string]any{
			"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "reelay_get_post",
				"arguments": map[string]any{"post_id": "00000000-0000-4000-8000-000000000000"}}}})
		result, _ = r.JSON["result"].(map[string]any)
		if r.Code != http.StatusOK || result["isError"] != true || r.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("tools/call of a missing post: %d %v %s", r.Code, r.Header, r.Body)
		}

		if r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: map[string]string{"Content-Type": "text/plain"},
			Body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`}); r.Code != http.StatusUnsupportedMediaType || r.errCode() != "unsupported_media_type" {
			t.Errorf("text/plain: %d %s", r.Code, r.Body)
		}
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
		if r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: accept, Body: big}); r.Code != http.StatusRequestEntityTooLarge || r.errCode() != "payload_too_large" {
			t.Errorf("2 MB body: %d %.200s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: map[string]string{"Accept": "application/json"},
			Body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`}); r.Code != http.StatusBadRequest || !strings.Contains(string(r.Body), "text/event-stream") {
			t.Errorf("Accept without event streams: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: accept,
			Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}); r.Code != http.StatusAccepted || len(r.Body) != 0 {
			t.Errorf("notification: %d %s", r.Code, r.Body)
		}
		// An unknown tool is a protocol error (the tool does not exist); a failing tool is not.
		r = e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: accept,
			Body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"reelay_delete_everything","arguments":{}}}`})
		if rpcErr, _ := r.JSON["error"].(map[string]any); r.Code != http.StatusOK || rpcErr["code"] != float64(-32602) {
			t.Errorf("unknown tool: %d %s", r.Code, r.Body)
		}
		// A batch is answered with an array, as the contract says.
		batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
		hr := httptest.NewRequest("POST", "http://reelay.test/api/v1/mcp", strings.NewReader(batch))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("X-API-Key", e.a.Key)
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, hr)
		var answers []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &answers); rec.Code != http.StatusOK || err != nil || len(answers) != 2 {
			t.Errorf("batch: %d %.300s", rec.Code, rec.Body)
		}
		e.checkContract(hr, []byte(batch), &resp{Code: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()})

		// No standalone event stream and no sessions to delete: 405, as the protocol expects.
		for _, m := range []string{"GET", "DELETE"} {
			if r := e.do(req{Method: m, Path: "/api/v1/mcp", Key: e.a.Key}); r.Code != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "POST" {
				t.Errorf("%s: %d %v", m, r.Code, r.Header)
			}
		}
	})
}

// TestMCPRateLimitIsTheAPIs: the tools' API calls count against the caller's own rate limit,
// and a refused one comes back as a tool error with the wait.
func TestMCPRateLimitIsTheAPIs(t *testing.T) {
	// One token: the MCP request takes it, so the tool's API call is refused.
	e := newEnv(t, "sqlite", func(o *httpapi.Options) { o.RateLimitRPS, o.RateLimitBurst = 0.01, 1 })
	r := e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: map[string]string{"Accept": "application/json, text/event-stream"},
		Body: map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
			"params": map[string]any{"name": "reelay_list_projects", "arguments": map[string]any{}}}})
	result, _ := r.JSON["result"].(map[string]any)
	raw, _ := json.Marshal(result["content"])
	if r.Code != http.StatusOK || result["isError"] != true || !strings.Contains(string(raw), "429 rate_limited") ||
		!strings.Contains(string(raw), "Rate limited: wait 100 s") {
		t.Errorf("tool call over the limit: %d %s", r.Code, r.Body)
	}
	// The next MCP request is refused at the door, as any API request would be.
	r = e.do(req{Method: "POST", Path: "/api/v1/mcp", Key: e.a.Key, Header: map[string]string{"Accept": "application/json, text/event-stream"},
		Body: map[string]any{"jsonrpc": "2.0", "id": 8, "method": "ping"}})
	if r.Code != http.StatusTooManyRequests || r.errCode() != "rate_limited" || r.Header.Get("Retry-After") == "" {
		t.Errorf("MCP request over the limit: %d %s", r.Code, r.Body)
	}
}

// TestMCPKeepsKeysOutOfLogs: the caller's key is never logged, though every tool call is an
// API request carrying it; the API requests are logged under the MCP request's id.
func TestMCPKeepsKeysOutOfLogs(t *testing.T) {
	var logs apptest.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEnv(t, "sqlite", func(o *httpapi.Options) { o.Logger = logger })
	cs := mustConnect(t, e.h, e.a.Key)
	call(t, cs, mcpserver.ToolListProjects, map[string]any{})
	wantToolError(t, call(t, cs, mcpserver.ToolGetPost, map[string]any{"post_id": "00000000-0000-4000-8000-000000000000"}), "not_found")
	out := logs.String()
	if strings.Contains(out, e.a.Key) || strings.Contains(out, e.a.Key[len("rly_live_"):]) {
		t.Fatalf("the key is in the log:\n%s", out)
	}
	if !strings.Contains(out, "path=/api/v1/projects") || !strings.Contains(out, "path=/api/v1/posts/00000000-0000-4000-8000-000000000000") {
		t.Errorf("the tools' API calls are not in the access log:\n%s", out)
	}
	if !strings.Contains(out, ".1 ") && !strings.Contains(out, `.1"`) {
		t.Errorf("API calls are not logged under the MCP request's id:\n%s", out)
	}
}
