package mcpserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/client"
)

func TestRewriteSchemaError(t *testing.T) {
	cases := []struct{ in, want string }{
		{`validating "arguments": validating root: validating /properties/tiktok: validating /properties/tiktok/properties/mode: enum: bad does not equal any of: [inbox direct]`,
			"invalid argument tiktok.mode: enum: bad does not equal any of: [inbox direct]"},
		{`validating "arguments": validating root: validating /properties/platforms: validating /properties/platforms/items: enum: myspace does not equal any of: [youtube]`,
			"invalid argument platforms[]: enum: myspace does not equal any of: [youtube]"},
		{`validating "arguments": validating root: unexpected additional properties ["video" "file"]`,
			"invalid argument video, file: unknown field; the tool's input schema lists the fields it takes"},
		{`validating "arguments": validating root: validating /properties/youtube: unexpected additional properties ["privacy"]`,
			"invalid argument youtube.privacy: unknown field; the tool's input schema lists the fields it takes"},
		{`validating "arguments": validating root: required: missing properties: ["project_id"]`,
			"invalid argument project_id: required"},
		{`validating "arguments": validating root: validating /properties/wait_seconds: maximum: 61 is greater than 60.000000`,
			"invalid argument wait_seconds: maximum: 61 is greater than 60.000000"},
		{`validating "arguments": validating root: type: [] has type "array", want "object"`,
			`invalid arguments: type: [] has type "array", want "object"`},
	}
	for _, c := range cases {
		got, ok := rewriteSchemaError(c.in)
		if !ok || got != c.want {
			t.Errorf("rewrite(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	// A tool's own error text is left alone.
	if _, ok := rewriteSchemaError("reelay answered 404 not_found: post not found"); ok {
		t.Error("rewrote a text that is not a schema error")
	}
}

func TestErrorResults(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want []string
		not  []string
	}{
		{"validation", &client.Error{StatusCode: 400, Code: client.CodeValidationFailed, Message: "request is invalid",
			Fields: map[string]string{"caption": "is 5001 characters; at most 5000", "Idempotency-Key": "too long"}, RequestID: "r1"},
			[]string{"reelay answered 400 validation_failed: request is invalid", "- caption: is 5001", "- idempotency_key: too long",
				"Correct the fields", "Request id: r1", `"fields":{"caption"`}, []string{"Idempotency-Key"}},
		{"rate limited", &client.Error{StatusCode: 429, Code: client.CodeRateLimited, Message: "rate limit exceeded", RetryAfter: 1500 * time.Millisecond},
			[]string{"429 rate_limited", "wait 2 s", `"retry_after_seconds":2`}, nil},
		{"credits", &client.Error{StatusCode: 402, Code: client.CodeInsufficientCredits, Message: "this needs 5 AI credits and the account has 1"},
			[]string{"402 insufficient_credits: this needs 5", "too few AI credits"}, nil},
		{"upstream", &client.Error{StatusCode: 502, Code: client.CodeUpstreamError, Message: "the model failed"},
			[]string{"502 upstream_error: the model failed", "Try again later"}, nil},
		{"duplicate", &client.Error{StatusCode: 409, Code: client.CodeDuplicatePost, Message: "duplicate", PostID: "p-1"},
			[]string{"409 duplicate_post", "as post p-1: read it with reelay_get_post", "allow_duplicate", `"post_id":"p-1"`}, nil},
		{"key conflict", &client.Error{StatusCode: 409, Code: client.CodeIdempotencyConflict, Message: "reused"},
			[]string{"idempotency_key was used", "new key"}, nil},
		{"revoked", &client.Error{StatusCode: 401, Code: client.CodeUnauthorized, Message: "invalid or revoked API key"},
			[]string{"401 unauthorized: invalid or revoked API key", "REELAY_API_KEY"}, nil},
		{"allowance", &client.Error{StatusCode: 403, Code: client.CodeMonthlyLimitReached, Message: "limit"},
			[]string{"403 monthly_limit_reached", "nothing was published"}, nil},
		{"proxy page", &client.Error{StatusCode: 502, Message: "<html>bad gateway</html>"},
			[]string{"reelay answered 502 Bad Gateway: <html>bad gateway</html>"}, nil},
		{"argument", badArgument("scheduled_for", "needs an offset"),
			[]string{"invalid argument scheduled_for: needs an offset", `"code":"invalid_argument"`, `"fields":{"scheduled_for":"needs an offset"}`}, nil},
		{"unreachable", &client.RequestError{Method: "GET", URL: "http://127.0.0.1:1/api/v1/projects", Err: errors.New("connection refused")},
			[]string{"cannot reach reelay", "connection refused", "REELAY_URL"}, nil},
		{"publish without an answer", publishFailure(&client.RequestError{Method: "POST", URL: "http://x/api/v1/publish", Err: errors.New("EOF")}, "mcp-abc"),
			[]string{"unknown_outcome", "Do not publish different arguments", "Repeat this exact call (idempotency key mcp-abc)"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := errorResult(c.err)
			if !res.IsError || res.StructuredContent != nil || len(res.Content) != 2 {
				t.Fatalf("result: %+v", res)
			}
			got := contentText(res)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("does not say %q:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("says %q:\n%s", n, got)
				}
			}
		})
	}
}

func TestDerivedKey(t *testing.T) {
	base := PublishInput{ProjectID: "p", VideoURL: "https://example.com/a.mp4", Caption: "hello",
		TikTok: &client.TikTokOptions{Mode: "direct"}, Platforms: []client.Platform{client.TikTok}}
	key := derivedKey(base, nil, nil)
	if !strings.HasPrefix(key, "mcp-") || len(key) != 68 || key != derivedKey(base, nil, nil) {
		t.Fatalf("key %q is not stable", key)
	}
	same := base
	same.WaitSeconds = new(30)
	same.IdempotencyKey = "ignored"
	if derivedKey(same, nil, nil) != key {
		t.Error("wait_seconds changed the key; it does not change what is published")
	}
	for name, change := range map[string]func(*PublishInput){
		"caption":  func(in *PublishInput) { in.Caption = "hello!" },
		"option":   func(in *PublishInput) { in.TikTok = &client.TikTokOptions{Mode: "inbox"} },
		"schedule": func(in *PublishInput) { in.ScheduledFor = "2030-01-01T00:00:00Z" },
		"channels": func(in *PublishInput) { in.ChannelIDs = []string{"c"} },
		"allow":    func(in *PublishInput) { in.AllowDuplicate = true },
	} {
		other := base
		change(&other)
		if derivedKey(other, nil, nil) == key {
			t.Errorf("changing %s kept the key", name)
		}
	}

	// A local file counts by path, size and modification time: an edited file is a new post.
	dir := t.TempDir()
	path := filepath.Join(dir, "clip.mp4")
	os.WriteFile(path, []byte("one"), 0o600)
	withFile := PublishInput{ProjectID: "p", VideoPath: path}
	f1, err := openLocal("video_path", path)
	if err != nil {
		t.Fatal(err)
	}
	f1.Close()
	k1 := derivedKey(withFile, f1, nil)
	os.WriteFile(path, []byte("two!"), 0o600)
	os.Chtimes(path, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	f2, _ := openLocal("video_path", path)
	f2.Close()
	if k2 := derivedKey(withFile, f2, nil); k1 == k2 {
		t.Error("an edited file kept the key")
	}

	// So does the thumbnail, the video and the arguments staying the same.
	cover := filepath.Join(dir, "cover.jpg")
	os.WriteFile(cover, []byte("cover"), 0o600)
	withThumb := withFile
	withThumb.ThumbnailPath = cover
	c1, err := openLocal("thumbnail_path", cover)
	if err != nil {
		t.Fatal(err)
	}
	c1.Close()
	k3 := derivedKey(withThumb, f2, c1)
	if k3 == derivedKey(withThumb, f2, nil) {
		t.Error("the thumbnail file does not count in the key")
	}
	if derivedKey(withThumb, c1, nil) == derivedKey(withThumb, nil, c1) {
		t.Error("a file counts the same as video and as thumbnail")
	}
	for name, change := range map[string]func(*localFile){
		"path":              func(l *localFile) { l.path += ".png" },
		"size":              func(l *localFile) { l.size++ },
		"modification time": func(l *localFile) { l.modTime = l.modTime.Add(time.Second) },
	} {
		other := *c1
		change(&other)
		if derivedKey(withThumb, f2, &other) == k3 {
			t.Errorf("another thumbnail %s kept the key", name)
		}
	}
	os.WriteFile(cover, []byte("cover, edited"), 0o600)
	os.Chtimes(cover, time.Now().Add(2*time.Hour), time.Now().Add(2*time.Hour))
	c2, _ := openLocal("thumbnail_path", cover)
	c2.Close()
	if derivedKey(withThumb, f2, c2) == k3 {
		t.Error("an edited thumbnail kept the key")
	}
}

// TestOpenLocal: a file that cannot be uploaded is refused naming the argument that gave it.
func TestOpenLocal(t *testing.T) {
	dir := t.TempDir()
	for _, arg := range []string{"video_path", "thumbnail_path"} {
		for _, c := range []struct{ name, path, want string }{
			{"missing", filepath.Join(dir, "missing.jpg"), "no such file"},
			{"directory", dir, "is not a regular file"},
		} {
			t.Run(arg+" "+c.name, func(t *testing.T) {
				f, err := openLocal(arg, c.path)
				if err == nil {
					f.Close()
					t.Fatal("opened")
				}
				if !strings.HasPrefix(err.Error(), "invalid argument "+arg+": ") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("error %q", err)
				}
			})
		}
	}
}

func TestSummaries(t *testing.T) {
	at := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	views := 120.0
	cases := []struct {
		name string
		got  string
		want []string
		not  []string
	}{
		{"processing", publishSummary(PublishResult{PublishResponse: client.PublishResponse{PostID: "p1", Status: client.PostProcessing,
			Platforms: []client.DestinationResult{{Platform: client.YouTube, ChannelTitle: "Mine", UploadStatus: client.UploadProcessing}}}}),
			[]string{"Post p1: processing.", `youtube "Mine": processing (not settled yet)`, `reelay_get_post with post_id "p1"`, "Do not publish again"}, nil},
		{"inbox", publishSummary(PublishResult{PublishResponse: client.PublishResponse{PostID: "p2", Status: client.PostPublished,
			Platforms: []client.DestinationResult{{Platform: client.TikTok, UploadStatus: client.UploadSentToInbox, Success: true}}}}),
			[]string{"sent_to_inbox", "finishes the post in the TikTok app"}, []string{"Not settled"}},
		{"replayed", publishSummary(PublishResult{PublishResponse: client.PublishResponse{PostID: "p3", Status: client.PostScheduled, ScheduledFor: &at},
			Replayed: true}),
			[]string{"nothing new was published", "published at 2030-01-02T09:00:00Z"}, []string{"Not settled"}},
		{"failed", postSummary(&client.Post{ID: "p4", Status: client.PostFailed, PublishResults: []client.DestinationResult{{Platform: client.Instagram,
			UploadStatus: client.UploadFailed, Error: "token expired", ErrorCategory: "auth_expired"}}}),
			[]string{"instagram: failed (auth_expired): token expired", "must be reconnected", "failed on every destination"}, nil},
		{"analytics", analyticsSummary(AnalyticsResult{AnalyticsOverview: client.AnalyticsOverview{TotalPosts: 2, TotalViews: &views,
			PlatformBreakdown: map[client.Platform]client.PlatformMetrics{client.Bluesky: {Posts: 1}}}}),
			[]string{"2 post(s) published in all projects, all time: views 120, likes n/a", "- bluesky: 1 post(s), views n/a", "not zero"}, nil},
	}
	for _, c := range cases {
		for _, w := range c.want {
			if !strings.Contains(c.got, w) {
				t.Errorf("%s: does not say %q:\n%s", c.name, w, c.got)
			}
		}
		for _, n := range c.not {
			if strings.Contains(c.got, n) {
				t.Errorf("%s: says %q:\n%s", c.name, n, c.got)
			}
		}
	}
}

func contentText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.(*mcp.TextContent).Text)
	}
	return strings.Join(parts, "\n")
}
