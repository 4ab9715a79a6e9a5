package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/mcpserver"
)

// mcpAccept is the Accept header the agent-tool endpoint requires.
var mcpAccept = map[string]string{"Accept": "application/json, text/event-stream"}

// mcpCall is a JSON-RPC tools/call message whose arguments object is args, verbatim.
func mcpCall(args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + mcpserver.ToolPublishPost + `","arguments":` + args + `}}`
}

// rawForm builds a multipart form from parts given verbatim (bytes that are not UTF-8 stay
// as they are); fileName, when set, adds a "video" file part of that name.
func rawForm(t *testing.T, fields [][2]string, fileName string) (body []byte, contentType string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if fileName != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="video"; filename="`+fileName+`"`)
		h.Set("Content-Type", "video/mp4")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("not read"))
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// A JSON body whose object gives a member twice (at any depth, in every JSON request the API
// takes) is a 400 naming the member's path: encoding/json would keep the last silently. Nothing
// is left behind.
func TestDuplicateJSONMembers(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		const someID = "0b7f6f3e-3a6b-4f6e-9a59-3f0d2b1c4e5a"
		pid := e.a.ProjectID
		cases := []struct {
			name, method, path, body, field string
		}{
			{"publish, top level", "POST", "/api/v1/publish", `{"project_id":"` + pid + `","video_url":"https://example.com/a.mp4","caption":"a","caption":"b"}`, "caption"},
			{"publish, names differing in case", "POST", "/api/v1/publish", `{"project_id":"` + pid + `","video_url":"https://example.com/a.mp4","caption":"a","Caption":"b"}`, "Caption"},
			{"publish, platform object", "POST", "/api/v1/posts/publish", `{"project_id":"` + pid + `","video_url":"https://example.com/a.mp4","youtube":{"title":"a","privacy_status":"private","title":"b"}}`, "youtube.title"},
			{"publish, array", "POST", "/api/v1/publish", `{"project_id":"` + pid + `","video_url":"https://example.com/a.mp4","platforms":["youtube"],"platforms":["tiktok"]}`, "platforms"},
			{"publish, dry run", "POST", "/api/v1/publish?dry_run=true", `{"project_id":"` + pid + `","project_id":"` + pid + `","video_url":"https://example.com/a.mp4"}`, "project_id"},
			{"edit a post", "PATCH", "/api/v1/posts/" + someID, `{"caption":"a","tiktok":{"mode":"direct","mode":"inbox"}}`, "tiktok.mode"},
			{"project", "POST", "/api/v1/projects", `{"name":"Spring","name":"Autumn"}`, "name"},
			{"channel", "POST", "/api/v1/channels", `{"project_id":"` + pid + `","platform":"tiktok","sandbox":true,"sandbox_behavior":{"fail":"none","fail":"reject"}}`, "sandbox_behavior.fail"},
			{"channel credentials", "POST", "/api/v1/channels", `{"project_id":"` + pid + `","platform":"bluesky","credentials":{"handle":"a.bsky.social","app_password":"x","handle":"b.bsky.social"}}`, "credentials.handle"},
			{"API key", "POST", "/api/v1/api-keys", `{"name":"ci","name":"cd"}`, "name"},
			{"webhook", "POST", "/api/v1/webhooks", `{"url":"https://example.com/hook","events":["post.published"],"url":"https://example.org/hook"}`, "url"},
			{"webhook update", "PATCH", "/api/v1/webhooks/" + someID, `{"enabled":true,"enabled":false}`, "enabled"},
			{"reply", "POST", "/api/v1/inbox/reply", `{"commentId":"c1","platform":"youtube","replyText":"a","replyText":"b"}`, "replyText"},
			{"analytics sync", "POST", "/api/v1/analytics/sync", `{"projectId":"` + pid + `","projectId":"` + pid + `"}`, "projectId"},
			{"AI copy", "POST", "/api/v1/ai/adapt", `{"prompt":"Cold brew.","prompt":"Hot tea."}`, "prompt"},
			{"AI storyboard", "POST", "/api/v1/ai/storyboard/create", `{"topic":"a","topic":"b"}`, "topic"},
			{"AI video", "POST", "/api/v1/ai/generate-video", `{"prompt":"a","aspect_ratio":"9:16","prompt":"b"}`, "prompt"},
			{"AI stitch, in an array element", "POST", "/api/v1/ai/storyboard/stitch", `{"scenes":[{"prompt":"a"},{"prompt":"b","prompt":"c"}]}`, "scenes[1].prompt"},
			{"MCP tool arguments", "POST", "/api/v1/mcp", mcpCall(`{"project_id":"` + pid + `","caption":"a","caption":"b"}`), "params.arguments.caption"},
			{"MCP message", "POST", "/api/v1/mcp", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`, "id"},
		}
		for _, c := range cases {
			r := e.do(req{Method: c.method, Path: c.path, Key: e.a.Key, Body: c.body, Header: mcpAccept})
			if r.Code != http.StatusBadRequest || r.errCode() != "validation_failed" || !strings.Contains(r.field(c.field), "given twice") {
				t.Errorf("%s: %d %s", c.name, r.Code, r.Body)
			}
		}

		// A platform object in a multipart form is checked the same way.
		body, ct := rawForm(t, [][2]string{{"project_id", pid}, {"video_url", "https://example.com/a.mp4"},
			{"youtube", `{"title":"a","title":"b"}`}}, "")
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: body, Header: map[string]string{"Content-Type": ct}})
		if r.Code != http.StatusBadRequest || !strings.Contains(r.field("youtube.title"), "given twice") {
			t.Errorf("multipart platform object: %d %s", r.Code, r.Body)
		}

		// The same name in different objects, or once in each element, is not a duplicate.
		r = e.do(req{Method: "POST", Path: "/api/v1/projects", Key: e.a.Key, Body: `{"name":"Spring","description":"name"}`})
		if r.Code != http.StatusCreated {
			t.Errorf("a project: %d %s", r.Code, r.Body)
		}
		e.noneLeft(t, 1)
	})
}

// noneLeft checks that refused requests left nothing: no post, and only the projects wanted
// (the tenant's own and those made on purpose), no API key but the tenant's, no webhook.
func (e *env) noneLeft(t *testing.T, madeProjects int) {
	t.Helper()
	count := func(r *resp, member string) int {
		list, _ := r.JSON[member].([]any)
		return len(list)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key}); count(r, "posts") != 0 {
		t.Errorf("posts left: %s", r.Body)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key}); count(r, "projects") != 1+madeProjects {
		t.Errorf("projects: %s", r.Body)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/api-keys", Key: e.a.Key}); count(r, "api_keys") != 1 {
		t.Errorf("API keys: %s", r.Body)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/webhooks", Key: e.a.Key}); count(r, "webhooks") != 0 {
		t.Errorf("webhooks: %s", r.Body)
	}
	if r := e.do(req{Method: "GET", Path: "/api/v1/channels?project_id=" + e.a.ProjectID, Key: e.a.Key}); count(r, "channels") != 0 {
		t.Errorf("channels: %s", r.Body)
	}
}

// Text that is not UTF-8 is a 400 naming the field, wherever it comes: in a JSON string
// (which encoding/json would turn into U+FFFD), as half a surrogate pair escaped, in a
// multipart field or file name, in a query parameter, in a header that is stored.
func TestInvalidUTF8(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		pid := e.a.ProjectID
		pub := func(extra string) string {
			return `{"project_id":"` + pid + `","video_url":"https://example.com/a.mp4"` + extra + `}`
		}
		cases := []struct {
			name, method, path, body, field string
		}{
			{"caption", "POST", "/api/v1/publish", pub(",\"caption\":\"caf\xe9\""), "caption"},
			{"caption, dry run", "POST", "/api/v1/publish?dry_run=true", pub(",\"caption\":\"\xff\""), "caption"},
			{"platform text", "POST", "/api/v1/publish", pub(",\"youtube\":{\"title\":\"ok\",\"description\":\"\xc3\x28\"}"), "youtube.description"},
			{"array element", "POST", "/api/v1/publish", pub(",\"platforms\":[\"youtube\",\"tik\xfftok\"]"), "platforms[1]"},
			{"member name", "POST", "/api/v1/publish", pub(",\"youtube\":{\"ti\xfftle\":\"a\"}"), "youtube"},
			{"lone surrogate escape", "POST", "/api/v1/publish", pub(`,"title":"\ud83d launch"`), "title"},
			{"lone low surrogate escape", "POST", "/api/v1/publish", pub(`,"caption":"\udc00"`), "caption"},
			{"edit a post", "PATCH", "/api/v1/posts/0b7f6f3e-3a6b-4f6e-9a59-3f0d2b1c4e5a", "{\"caption\":\"\xff\"}", "caption"},
			{"project name", "POST", "/api/v1/projects", "{\"name\":\"Spr\xffing\"}", "name"},
			{"project description", "POST", "/api/v1/projects", `{"name":"Spring","description":"\ud800"}`, "description"},
			{"channel name", "POST", "/api/v1/channels", "{\"project_id\":\"" + pid + "\",\"platform\":\"tiktok\",\"sandbox\":true,\"name\":\"\xe2\x82\"}", "name"},
			{"API key name", "POST", "/api/v1/api-keys", "{\"name\":\"c\xffi\"}", "name"},
			{"webhook URL", "POST", "/api/v1/webhooks", "{\"url\":\"https://example.com/\xff\",\"events\":[\"post.published\"]}", "url"},
			{"reply", "POST", "/api/v1/inbox/reply", "{\"commentId\":\"c1\",\"platform\":\"youtube\",\"replyText\":\"thanks\xff\"}", "replyText"},
			{"AI prompt", "POST", "/api/v1/ai/adapt", "{\"prompt\":\"Cold brew\xff\"}", "prompt"},
			{"MCP tool argument", "POST", "/api/v1/mcp", mcpCall("{\"caption\":\"\xff\"}"), "params.arguments.caption"},
		}
		for _, c := range cases {
			r := e.do(req{Method: c.method, Path: c.path, Key: e.a.Key, Body: c.body, Header: mcpAccept})
			if r.Code != http.StatusBadRequest || r.errCode() != "validation_failed" || r.field(c.field) == "" {
				t.Errorf("%s: %d %s", c.name, r.Code, r.Body)
			}
		}

		// Multipart fields and the video's file name.
		forms := []struct {
			name     string
			fields   [][2]string
			fileName string
			field    string
		}{
			{"caption", [][2]string{{"caption", "caf\xe9"}}, "", "caption"},
			{"title", [][2]string{{"title", "\xff"}}, "", "title"},
			{"platforms as a list", [][2]string{{"platforms", "youtube,tik\xfftok"}}, "", "platforms"},
			{"platform object", [][2]string{{"youtube", "{\"title\":\"\xff\"}"}}, "", "youtube"},
			{"platform object, escaped surrogate", [][2]string{{"youtube", `{"title":"\ud800"}`}}, "", "youtube.title"},
			{"file name", nil, "clip\xff.mp4", "video"},
		}
		for _, c := range forms {
			fields := append([][2]string{{"project_id", pid}}, c.fields...)
			body, ct := rawForm(t, fields, c.fileName)
			r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: body, Header: map[string]string{"Content-Type": ct}})
			if r.Code != http.StatusBadRequest || r.field(c.field) == "" {
				t.Errorf("multipart %s: %d %s", c.name, r.Code, r.Body)
			}
		}

		// Query parameters: a value or a name that is not UTF-8, an escape that is not one.
		queries := []struct{ path, field string }{
			{"/api/v1/posts?status=%FF", "status"},
			{"/api/v1/posts?platform=you%C3tube", "platform"},
			{"/api/v1/posts?%FF=1", "query"},
			{"/api/v1/posts?status=%zz", "status"},
			{"/api/v1/inbox/comments?platform=%E2%82", "platform"},
			{"/api/v1/channels?project_id=%FF", "project_id"},
			{"/api/v1/analytics/overview?platform=%FF", "platform"},
		}
		for _, c := range queries {
			r := e.do(req{Method: "GET", Path: c.path, Key: e.a.Key})
			if r.Code != http.StatusBadRequest || r.errCode() != "validation_failed" || r.field(c.field) == "" {
				t.Errorf("%s: %d %s", c.path, r.Code, r.Body)
			}
		}

		// The one header whose text is stored: the Idempotency-Key.
		r := e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Body: pub(""),
			Header: map[string]string{"Idempotency-Key": "order-\xff"}})
		if r.Code != http.StatusBadRequest || r.field("Idempotency-Key") == "" {
			t.Errorf("Idempotency-Key: %d %s", r.Code, r.Body)
		}

		// UTF-8 and escaped pairs are text, as ever.
		r = e.do(req{Method: "POST", Path: "/api/v1/projects", Key: e.a.Key, Body: `{"name":"Caf\u00e9 \ud83d\ude00 \u05e9\u05dc\u05d5\u05dd","description":"\\ud800 is only text"}`})
		if r.Code != http.StatusCreated || r.JSON["project"].(map[string]any)["name"] != "Café 😀 שלום" {
			t.Errorf("UTF-8 name: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/posts?status=published&platform=youtube", Key: e.a.Key}); r.Code != http.StatusOK {
			t.Errorf("plain query: %d %s", r.Code, r.Body)
		}
		e.noneLeft(t, 1)
		if n := e.blobCount(); n != 0 {
			t.Errorf("%d files left in media storage", n)
		}
	})
}

// A credential in the query string is refused on every path under /api/v1, public ones and the
// agent-tool endpoint included, whatever the case or separator of its name; the parameters
// the API does take in URLs (a media link's exp and sig, an OAuth callback's code and state)
// still work.
func TestCredentialsInURLAnyCase(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		key := e.a.Key
		cases := []struct{ method, path string }{
			{"GET", "/api/v1/projects?API_KEY=" + key},
			{"GET", "/api/v1/projects?Key=" + key},
			{"GET", "/api/v1/projects?ApiKey=" + key},
			{"GET", "/api/v1/projects?api-key=" + key},
			{"GET", "/api/v1/projects?Access_Token=" + key},
			{"GET", "/api/v1/projects?TOKEN=" + key},
			{"GET", "/api/v1/projects?X-API-Key=" + key},
			{"GET", "/api/v1/posts?status=published&%6Bey=" + key}, // "key" percent-encoded
			{"GET", "/api/v1/posts?status=%zz&key=" + key},         // beside a malformed pair
			{"GET", "/api/v1/projects?authorization=Bearer+" + key},
			{"GET", "/api/v1/openapi.json?token=" + key},
			{"GET", "/api/v1/media/0b7f6f3e-3a6b-4f6e-9a59-3f0d2b1c4e5a?exp=1&sig=abc&Api_Key=" + key},
			{"GET", "/api/v1/oauth/youtube/callback?code=c&state=s&access_token=" + key},
			{"POST", "/api/v1/mcp?Api_Key=" + key},
		}
		for _, c := range cases {
			var body any
			if c.method == "POST" {
				body = map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
			}
			// No credential in the header: the URL's must be refused as such, not as a 401.
			r := e.do(req{Method: c.method, Path: c.path, Body: body, Header: mcpAccept})
			if r.Code != http.StatusBadRequest || r.errCode() != "credentials_in_url" {
				t.Errorf("%s %s: %d %s", c.method, c.path, r.Code, r.Body)
			}
			if strings.Contains(string(r.Body), key) {
				t.Errorf("%s: the answer echoes the key", c.path)
			}
		}

		// What is not a credential passes: a media link's exp and sig reach the signature check
		// (403 for a wrong one), an OAuth callback's code and state reach the callback.
		r := e.do(req{Method: "GET", Path: "/api/v1/media/0b7f6f3e-3a6b-4f6e-9a59-3f0d2b1c4e5a?exp=4102444800&sig=AAAA"})
		if r.Code != http.StatusForbidden {
			t.Errorf("media link: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/oauth/youtube/callback?code=c&state=unknown"})
		if r.Code == http.StatusBadRequest && r.errCode() == "credentials_in_url" || r.Code >= 500 {
			t.Errorf("OAuth callback: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/posts?monkey=1&keys=2", Key: key})
		if r.Code != http.StatusOK {
			t.Errorf("names that only contain a credential's: %d %s", r.Code, r.Body)
		}
	})
}

// A name (a project's, a channel's, an API key's) holding a bidirectional override or isolate
// character is a 400 naming the field: it would read as another name in lists and logs.
// Right-to-left text itself is a name like any other.
func TestBidiOverridesInNames(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		pid := e.a.ProjectID
		for _, ch := range []string{"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"} {
			name := "invoice" + ch + "gpj.exe"
			cases := []struct {
				path string
				body map[string]any
			}{
				{"/api/v1/projects", map[string]any{"name": name}},
				{"/api/v1/api-keys", map[string]any{"name": name}},
				{"/api/v1/channels", map[string]any{"project_id": pid, "platform": "tiktok", "sandbox": true, "name": name}},
			}
			for _, c := range cases {
				r := e.do(req{Method: "POST", Path: c.path, Key: e.a.Key, Body: c.body})
				if r.Code != http.StatusBadRequest || !strings.Contains(r.field("name"), "bidirectional") {
					t.Errorf("%s with U+%04X: %d %s", c.path, []rune(ch)[0], r.Code, r.Body)
				}
			}
		}
		for _, c := range []struct {
			path string
			body map[string]any
		}{
			{"/api/v1/projects", map[string]any{"name": "שלום עולם"}},
			{"/api/v1/api-keys", map[string]any{"name": "مفتاح"}},
			{"/api/v1/channels", map[string]any{"project_id": pid, "platform": "tiktok", "sandbox": true, "name": "ערוץ"}},
		} {
			if r := e.do(req{Method: "POST", Path: c.path, Key: e.a.Key, Body: c.body}); r.Code/100 != 2 {
				t.Errorf("%s, right-to-left: %d %s", c.path, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/channels?project_id=" + pid, Key: e.a.Key}); len(r.JSON["channels"].([]any)) != 1 {
			t.Errorf("channels: %s", r.Body)
		}
	})
}
