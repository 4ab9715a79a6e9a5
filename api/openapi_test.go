package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// loadDoc parses and validates the embedded document.
func loadDoc(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPIYAML)
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	return doc
}

func TestDocumentIsValid(t *testing.T) {
	doc := loadDoc(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %q, want 3.0.3", doc.OpenAPI)
	}
	if doc.Info.Title != "reelay" || doc.Info.Version != "1.0.0" {
		t.Errorf("info = %q %q, want reelay 1.0.0", doc.Info.Title, doc.Info.Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/api/v1" {
		t.Errorf("servers = %v, want [/api/v1]", doc.Servers)
	}
}

// seedOperations are the endpoints the interface itself defines (docs/CONTRACT.md).
// Dropping one of them from the document must fail this test.
var seedOperations = []struct{ method, path string }{
	{http.MethodPost, "/publish"},
	{http.MethodPost, "/posts/publish"},
	{http.MethodGet, "/channels"},
	{http.MethodGet, "/channels/{id}/options"},
	{http.MethodGet, "/projects"},
	{http.MethodGet, "/posts/{id}"},
	{http.MethodGet, "/api-keys"},
	{http.MethodPost, "/api-keys"},
	{http.MethodDelete, "/api-keys/{id}"},
	{http.MethodPost, "/ai/adapt"},
	{http.MethodPost, "/ai/generate-video"},
	{http.MethodPost, "/ai/storyboard/create"},
	{http.MethodPost, "/ai/storyboard/stitch"},
	{http.MethodGet, "/analytics/overview"},
	{http.MethodGet, "/analytics/metrics"},
	{http.MethodPost, "/analytics/sync"},
	{http.MethodGet, "/inbox/comments"},
	{http.MethodPost, "/inbox/reply"},
}

// extensionOperations are the endpoints reelay adds to the interface (docs/CONTRACT.md, from
// Channels and connecting to Other endpoints).
var extensionOperations = []struct{ method, path string }{
	{http.MethodPost, "/projects"},
	{http.MethodPost, "/channels"},
	{http.MethodDelete, "/channels/{id}"},
	{http.MethodGet, "/channels/connect/{platform}"},
	{http.MethodGet, "/oauth/{platform}/start"},
	{http.MethodGet, "/oauth/{platform}/callback"},
	{http.MethodGet, "/account/usage"},
	{http.MethodGet, "/posts"},
	{http.MethodPatch, "/posts/{id}"},
	{http.MethodDelete, "/posts/{id}"},
	{http.MethodPost, "/posts/{id}/retry"},
	{http.MethodGet, "/media/{id}"},
	{http.MethodGet, "/ai/jobs/{id}"},
	{http.MethodPost, "/webhooks"},
	{http.MethodGet, "/webhooks"},
	{http.MethodDelete, "/webhooks/{id}"},
	{http.MethodGet, "/webhooks/{id}/deliveries"},
	{http.MethodPost, "/mcp"},
	{http.MethodGet, "/sandbox/{platform}/_introspect"},
	{http.MethodGet, "/openapi.json"},
	{http.MethodGet, "/healthz"},
	{http.MethodGet, "/readyz"},
	{http.MethodGet, "/metrics"},
}

func TestSeedOperationsPresent(t *testing.T) {
	doc := loadDoc(t)
	for _, op := range seedOperations {
		item := doc.Paths.Value(op.path)
		if item == nil || item.GetOperation(op.method) == nil {
			t.Errorf("seed operation %s %s is missing from openapi.yaml", op.method, op.path)
		}
	}
}

func TestExtensionOperationsPresent(t *testing.T) {
	doc := loadDoc(t)
	for _, op := range extensionOperations {
		item := doc.Paths.Value(op.path)
		if item == nil || item.GetOperation(op.method) == nil {
			t.Errorf("operation %s %s is missing from openapi.yaml", op.method, op.path)
		}
	}
}

// TestOperationsAreComplete checks the rules every operation follows: an id,
// a summary and description, and the error answers it can give.
func TestOperationsAreComplete(t *testing.T) {
	doc := loadDoc(t)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.OperationID == "" || op.Summary == "" || op.Description == "" {
				t.Errorf("%s: operationId, summary and description are required", name)
			}
			has := func(codes ...int) {
				t.Helper()
				for _, c := range codes {
					if op.Responses.Status(c) == nil {
						t.Errorf("%s: response %d is not listed", name, c)
					}
				}
			}
			authenticated := op.Security == nil || len(*op.Security) > 0
			if authenticated {
				// 400 credentials_in_url, 401, 429, 500, and 503 when the identity
				// provider cannot be reached.
				has(400, 401, 429, 500, 503)
			}
			if op.RequestBody != nil && op.RequestBody.Value.Content.Get("application/json") != nil {
				has(400, 413, 415)
			}
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value.In == openapi3.ParameterInPath && p.Value.Name == "id" {
					has(400, 404)
				}
			}
		}
	}
}

func TestSecurity(t *testing.T) {
	doc := loadDoc(t)
	schemes := doc.Components.SecuritySchemes
	if s := schemes["apiKeyHeader"]; s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != "X-API-Key" {
		t.Errorf("apiKeyHeader scheme is not an apiKey in header X-API-Key")
	}
	if s := schemes["bearer"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
		t.Errorf("bearer scheme is not http bearer")
	}
	var global []string
	for _, req := range doc.Security {
		for name := range req {
			global = append(global, name)
		}
	}
	slices.Sort(global)
	if !slices.Equal(global, []string{"apiKeyHeader", "bearer"}) || len(doc.Security) != 2 {
		t.Errorf("global security = %v, want either apiKeyHeader or bearer", doc.Security)
	}

	public := map[string]bool{
		"/openapi.json": false, "/healthz": true, "/readyz": true, "/metrics": true,
		"/oauth/{platform}/start": false, "/oauth/{platform}/callback": false, "/media/{id}": false,
	}
	for path, rootServer := range public {
		item := doc.Paths.Value(path)
		op := item.Get
		if op == nil || op.Security == nil || len(*op.Security) != 0 {
			t.Errorf("GET %s must have security: []", path)
		}
		if rootServer && (len(item.Servers) != 1 || item.Servers[0].URL != "/") {
			t.Errorf("%s must override servers with [/]", path)
		}
	}
}

// TestSchemasAcceptServerBodies validates bodies shaped like the server's
// against the schemas, and checks that wrong ones are refused.
func TestSchemasAcceptServerBodies(t *testing.T) {
	doc := loadDoc(t)
	cases := []struct {
		schema, body string
		valid        bool
	}{
		{"Error", `{"success":false,"error":{"code":"validation_failed","message":"bad","fields":{"caption":"too long"}},"request_id":"r1"}`, true},
		{"Error", `{"success":false,"error":{"code":"duplicate_post","message":"dup"},"request_id":"r1","post_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f"}`, true},
		{"Error", `{"success":true,"error":{"code":"x","message":"y"},"request_id":"r1"}`, false},
		{"Error", `{"success":false,"error":{"code":"x","message":"y","fields":{"a":1}},"request_id":"r1"}`, false},
		{"ProjectList", `{"success":true,"projects":[{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","name":"Default","description":"","created_at":"2025-01-02T03:04:05Z"}]}`, true},
		{"ProjectList", `{"success":true,"projects":[{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","name":"Default","created_at":"2025-01-02T03:04:05Z"}]}`, false},
		{"ChannelResponse", `{"success":true,"channel":{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","project_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","platform":"youtube","name":"n","username":"u","avatar_url":"","external_account_id":"UC1","capabilities":{"max_bytes":1},"sandbox":true,"status":"active","created_at":"2025-01-02T03:04:05.123Z"}}`, true},
		{"ChannelResponse", `{"success":true,"channel":{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","project_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","platform":"myspace","name":"n","username":"u","avatar_url":"","external_account_id":"UC1","capabilities":{},"sandbox":true,"status":"active","created_at":"2025-01-02T03:04:05Z"}}`, false},
		{"APIKeyList", `{"success":true,"api_keys":[{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","name":"ci","prefix":"rly_live_ab","created_at":"2025-01-02T03:04:05Z","last_used_at":null}]}`, true},
		{"APIKeyCreated", `{"success":true,"api_key":{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","name":"ci","prefix":"rly_live_ab","created_at":"2025-01-02T03:04:05Z","last_used_at":null},"key":"sk_nope"}`, false},
		{"Usage", `{"success":true,"account_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","month":"2025-07","posts_this_month":3,"monthly_post_limit":null,"ai_credits":10}`, true},
		{"Readiness", `{"status":"unavailable","checks":{"database":"ok","migrations":"pending"}}`, true},
		{"PublishResponse", `{"success":true,"post_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","status":"processing","platforms":[{"platform":"tiktok","channel_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","channel_title":"t","success":true,"published":false,"upload_status":"sent_to_inbox","id":null,"url":null,"error":null,"error_category":null}]}`, true},
		{"PublishResponse", `{"success":true,"post_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","status":"done","platforms":[]}`, false},
		{"PostResponse", `{"success":true,"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","project_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","status":"scheduled","platforms":["youtube"],"title":"","caption":"c","scheduled_for":"2030-01-01T00:00:00+02:00","published_at":null,"created_at":"2025-01-02T03:04:05Z","publish_results":[{"platform":"youtube","channel_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","channel_title":"t","success":false,"published":false,"upload_status":"queued","id":null,"url":null,"error":null}]}`, true},
		{"PostResponse", `{"id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","project_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","status":"scheduled","platforms":[],"title":"","caption":"","scheduled_for":null,"published_at":null,"created_at":"2025-01-02T03:04:05Z","publish_results":[]}`, false},
		{"AnalyticsOverview", `{"success":true,"totalViews":null,"totalLikes":3,"totalComments":0,"totalImpressions":null,"platformBreakdown":{"bluesky":{"posts":1,"destinations":1,"views":null,"likes":3,"comments":0,"impressions":null}}}`, true},
		{"AnalyticsOverview", `{"success":true,"totalLikes":3,"totalComments":0,"totalImpressions":null,"platformBreakdown":{}}`, false},
		{"CommentList", `{"success":true,"comments":[{"id":"c1","platform":"youtube","author":"a","text":"hi","created_at":"2025-01-02T03:04:05Z","parent_id":null,"like_count":null}],"next_cursor":null}`, true},
		{"AdaptResponse", `{"success":true,"adapted":{"bluesky":{"text":"🔥 Hook\n\nBody.\n\n#coffee","hook":"🔥 Hook","hashtags":["#coffee"]},"youtube":{"text":"t","hook":"h","hashtags":[],"title":"T #Shorts","jev":["🔥 Hook","Body."]}},"model":"reelay-builtin"}`, true},
		{"AdaptResponse", `{"success":true,"adapted":{"bluesky":{"text":"t","hook":"h","hashtags":["cold brew"]}},"model":"m"}`, false},
		{"AdaptResponse", `{"success":true,"adapted":{"bluesky":{"text":"t","hashtags":[]}},"model":"m"}`, false},
		{"StoryboardResponse", `{"success":true,"storyboard":{"scenes":[{"title":"Hook: x","prompt":"p","timecode":"00:00-00:05","audioCue":"a","camera":"fast push-in"}]},"model":"reelay-builtin"}`, true},
		{"StoryboardResponse", `{"success":true,"storyboard":{"scenes":[{"title":"x","prompt":"p","timecode":"0:00-0:05","audioCue":"a","camera":"c"}]},"model":"m"}`, false},
		{"StoryboardResponse", `{"success":true,"storyboard":{"scenes":[]},"model":"m"}`, false},
		{"AIJob", `{"success":true,"job_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","kind":"storyboard_stitch","status":"succeeded","videoUrl":"https://example.com/m.mp4","duration":30.04}`, true},
		{"AIJob", `{"success":true,"job_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","kind":"generate_video","status":"failed","error":{"code":"upstream_error","message":"m"}}`, true},
		{"AIJob", `{"success":true,"job_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","kind":"adapt","status":"running"}`, false},
		{"AIJob", `{"success":true,"job_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","kind":"generate_video","status":"succeeded","model":"m"}`, false},
		{"SandboxIntrospection", `{"uploads":[{"account":"UC1","bytes":10,"sha256":"ab"}],"published":[],"replies":[]}`, true},
	}
	for _, c := range cases {
		ref := doc.Components.Schemas[c.schema]
		if ref == nil {
			t.Errorf("schema %s is missing", c.schema)
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatalf("bad test body for %s: %v", c.schema, err)
		}
		err := ref.Value.VisitJSON(v, openapi3.VisitAsResponse(), openapi3.MultiErrors())
		if c.valid && err != nil {
			t.Errorf("%s should accept %s: %v", c.schema, c.body, err)
		}
		if !c.valid && err == nil {
			t.Errorf("%s should refuse %s", c.schema, strings.TrimSpace(c.body))
		}
	}
}

// TestPublishAnswer checks that the publish answer takes both the publish
// result and the dry-run report, and that the 502 answer has the same body as
// the publish result.
func TestPublishAnswer(t *testing.T) {
	doc := loadDoc(t)
	op := doc.Paths.Value("/publish").Post
	schemaOf := func(status int) *openapi3.Schema {
		t.Helper()
		r := op.Responses.Status(status)
		if r == nil {
			t.Fatalf("POST /publish lists no %d", status)
		}
		return r.Value.Content.Get("application/json").Schema.Value
	}
	result := `{"success":false,"post_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","status":"failed","platforms":[{"platform":"youtube","channel_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","channel_title":"t","success":false,"published":false,"upload_status":"failed","id":null,"url":null,"error":"Backend Error","error_category":"upstream_unavailable"}]}`
	dryRun := `{"success":true,"dry_run":true,"status":"processing","platforms":[{"platform":"tiktok","channel_id":"3f0c2a0e-9f4b-4c1d-8f3e-2b7a6d5c4e1f","channel_title":"t","payload":{"mode":"inbox"}}]}`
	for _, c := range []struct {
		status int
		body   string
		valid  bool
	}{
		{200, result, true},
		{200, dryRun, true},
		{200, `{"success":true}`, false},
		{502, result, true},
		{502, dryRun, false},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatal(err)
		}
		err := schemaOf(c.status).VisitJSON(v, openapi3.VisitAsResponse())
		if c.valid != (err == nil) {
			t.Errorf("POST /publish %d with %s: valid=%v, got err %v", c.status, c.body, c.valid, err)
		}
	}
	for _, name := range []string{"Idempotency-Key", "Prefer", "dry_run"} {
		found := false
		for _, p := range op.Parameters {
			found = found || p.Value.Name == name
		}
		if !found {
			t.Errorf("POST /publish lacks parameter %s", name)
		}
	}
	body := op.RequestBody.Value
	if body.Content.Get("application/json") == nil || body.Content.Get("multipart/form-data") == nil {
		t.Errorf("POST /publish must take JSON and multipart/form-data")
	}
}
