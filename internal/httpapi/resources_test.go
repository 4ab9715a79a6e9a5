package httpapi_test

import (
	"context"
	"strings"
	"testing"
)

func TestProjects(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key})
		projects := r.JSON["projects"].([]any)
		if r.Code != 200 || r.JSON["success"] != true || len(projects) != 1 || projects[0].(map[string]any)["name"] != "Default" {
			t.Fatalf("list: %d %s", r.Code, r.Body)
		}
		r = e.do(req{Method: "POST", Path: "/api/v1/projects", Key: e.a.Key, Body: map[string]any{"name": "Launch", "description": "spring campaign"}})
		if r.Code != 201 || r.JSON["project"].(map[string]any)["name"] != "Launch" {
			t.Fatalf("create: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.b.Key}); len(r.JSON["projects"].([]any)) != 1 {
			t.Errorf("bob sees alice's project: %s", r.Body)
		}
		for name, c := range map[string]struct {
			body  any
			code  int
			errIs string
			field string
		}{
			"missing name":     {map[string]any{"description": "x"}, 400, "validation_failed", "name"},
			"long name":        {map[string]any{"name": strings.Repeat("n", 101)}, 400, "validation_failed", "name"},
			"control chars":    {map[string]any{"name": "a\x00b"}, 400, "validation_failed", "name"},
			"long description": {map[string]any{"name": "ok", "description": strings.Repeat("d", 1001)}, 400, "validation_failed", "description"},
			"wrong type":       {map[string]any{"name": []int{1}}, 400, "validation_failed", "name"},
			"unknown field":    {map[string]any{"name": "ok", "owner": "me"}, 400, "validation_failed", "owner"},
			"malformed":        {`{"name": "ok"`, 400, "invalid_json", ""},
			"syntax error":     {`{"name": ok}`, 400, "invalid_json", ""},
			"two values":       {`{"name":"a"}{"name":"b"}`, 400, "invalid_json", ""},
			"array":            {`[]`, 400, "invalid_json", ""},
			"empty":            {``, 400, "invalid_json", ""},
			"too large":        {`{"name":"x","description":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "payload_too_large", ""},
		} {
			r := e.do(req{Method: "POST", Path: "/api/v1/projects", Key: e.a.Key, Body: c.body})
			if r.Code != c.code || r.errCode() != c.errIs || (c.field != "" && r.field(c.field) == "") {
				t.Errorf("%s: %d %s", name, r.Code, r.Body)
			}
		}
		r = e.do(req{Method: "POST", Path: "/api/v1/projects", Key: e.a.Key, Body: `{"name":"x"}`,
			Header: map[string]string{"Content-Type": "text/plain"}})
		if r.Code != 415 || r.errCode() != "unsupported_media_type" {
			t.Errorf("wrong content type: %d %s", r.Code, r.Body)
		}
		if got, _ := e.st.ListProjects(context.Background(), e.a.AccountID); len(got) != 2 {
			t.Errorf("bad requests wrote projects: %d", len(got))
		}
	})
}

func TestChannels(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		// A sandbox channel, with its capabilities from the registry.
		r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "platform": "tiktok", "sandbox": true,
			"sandbox_behavior": map[string]any{"processing_ms": 1500, "fail": "flaky", "fail_rate": 0.5}}})
		if r.Code != 201 {
			t.Fatalf("sandbox channel: %d %s", r.Code, r.Body)
		}
		ch := r.JSON["channel"].(map[string]any)
		if ch["sandbox"] != true || ch["platform"] != "tiktok" || ch["status"] != "active" || ch["external_account_id"] == "" {
			t.Errorf("channel: %v", ch)
		}
		caps := ch["capabilities"].(map[string]any)
		if caps["max_video_bytes"].(float64) <= 0 || caps["text"].(map[string]any)["title"] == nil {
			t.Errorf("capabilities: %v", caps)
		}
		sandboxID := ch["id"].(string)
		// Two sandbox channels of one platform are told apart by their names; a name given
		// is kept. YouTube's sandbox channels may set their simulated daily quota.
		if ch["name"] != "TikTok sandbox" {
			t.Errorf("first sandbox channel named %v", ch["name"])
		}
		var more []string
		for _, c := range []struct {
			platform, name, want string
			behavior             map[string]any
		}{
			{"tiktok", "", "TikTok sandbox 2", nil},
			{"tiktok", "Mine", "Mine", nil},
			{"tiktok", "", "TikTok sandbox 3", nil},
			{"youtube", "", "YouTube sandbox", map[string]any{"daily_quota_units": -1}},
		} {
			body := map[string]any{"project_id": e.a.ProjectID, "platform": c.platform, "sandbox": true}
			if c.name != "" {
				body["name"] = c.name
			}
			if c.behavior != nil {
				body["sandbox_behavior"] = c.behavior
			}
			r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: body})
			if r.Code != 201 || r.JSON["channel"].(map[string]any)["name"] != c.want {
				t.Fatalf("sandbox channel: %d %s; want named %q", r.Code, r.Body, c.want)
			}
			more = append(more, r.JSON["channel"].(map[string]any)["id"].(string))
		}
		for _, id := range more {
			if r := e.do(req{Method: "DELETE", Path: "/api/v1/channels/" + id, Key: e.a.Key}); r.Code != 200 {
				t.Errorf("delete: %d %s", r.Code, r.Body)
			}
		}
		// A token channel: credentials sealed, never echoed.
		token := "123456789:AAH" + strings.Repeat("x", 32)
		r = e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "platform": "telegram", "credentials": map[string]any{"bot_token": token, "chat_id": "@reelaynews"}}})
		if r.Code != 201 || strings.Contains(string(r.Body), token) {
			t.Fatalf("telegram channel: %d %s", r.Code, r.Body)
		}
		tgID := r.JSON["channel"].(map[string]any)["id"].(string)
		stored, err := e.st.GetChannel(context.Background(), e.a.AccountID, tgID)
		if err != nil || len(stored.Credentials) == 0 || strings.Contains(string(stored.Credentials), token[12:]) {
			t.Fatalf("credentials stored in plain text or not at all: %v", err)
		}
		// Connecting the same account again updates it instead of adding a second channel.
		r = e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "platform": "telegram", "credentials": map[string]any{"bot_token": token, "chat_id": "@reelaynews"}}})
		if r.Code != 200 || r.JSON["channel"].(map[string]any)["id"] != tgID {
			t.Errorf("reconnect: %d %s", r.Code, r.Body)
		}

		// Listing: projectId optional with one project, required with two.
		r = e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key})
		if r.Code != 200 || len(r.JSON["channels"].([]any)) != 2 || r.JSON["project_id"] != e.a.ProjectID {
			t.Fatalf("list: %d %s", r.Code, r.Body)
		}
		e.do(req{Method: "POST", Path: "/api/v1/projects", Key: e.a.Key, Body: map[string]any{"name": "Second"}})
		if r := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}); r.Code != 400 || r.field("projectId") == "" {
			t.Errorf("ambiguous project: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/channels?projectId=" + e.a.ProjectID, Key: e.a.Key}); r.Code != 200 || len(r.JSON["channels"].([]any)) != 2 {
			t.Errorf("explicit project: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/channels?projectId=nope", Key: e.a.Key}); r.Code != 400 || r.field("projectId") == "" {
			t.Errorf("malformed projectId: %d %s", r.Code, r.Body)
		}

		// Options come from the registry for now.
		r = e.do(req{Method: "GET", Path: "/api/v1/channels/" + sandboxID + "/options", Key: e.a.Key})
		if r.Code != 200 || r.JSON["platform"] != "tiktok" || r.JSON["options"].(map[string]any)["privacy_level"] == nil {
			t.Errorf("options: %d %s", r.Code, r.Body)
		}

		// Isolation: bob gets 404 for everything of alice's.
		for _, q := range []req{
			{Method: "GET", Path: "/api/v1/channels?projectId=" + e.a.ProjectID},
			{Method: "GET", Path: "/api/v1/channels/" + sandboxID + "/options"},
			{Method: "DELETE", Path: "/api/v1/channels/" + sandboxID},
			{Method: "POST", Path: "/api/v1/channels", Body: map[string]any{"project_id": e.a.ProjectID, "platform": "youtube", "sandbox": true}},
		} {
			q.Key = e.b.Key
			if r := e.do(q); r.Code != 404 || r.errCode() != "not_found" || strings.Contains(string(r.Body), e.a.ProjectID) && q.Method != "POST" {
				t.Errorf("bob %s %s: %d %s", q.Method, q.Path, r.Code, r.Body)
			}
		}

		// Delete.
		if r := e.do(req{Method: "DELETE", Path: "/api/v1/channels/" + sandboxID, Key: e.a.Key}); r.Code != 200 || r.JSON["id"] != sandboxID {
			t.Errorf("delete: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/channels/" + sandboxID + "/options", Key: e.a.Key}); r.Code != 404 {
			t.Errorf("options of a deleted channel: %d", r.Code)
		}
		if r := e.do(req{Method: "DELETE", Path: "/api/v1/channels/x", Key: e.a.Key}); r.Code != 400 || r.field("id") == "" {
			t.Errorf("malformed id: %d %s", r.Code, r.Body)
		}
	})
}

func TestChannelValidation(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		p := e.a.ProjectID
		cases := map[string]struct {
			body  map[string]any
			field string
		}{
			"no project":              {map[string]any{"platform": "youtube", "sandbox": true}, "project_id"},
			"bad project id":          {map[string]any{"project_id": "p1", "platform": "youtube", "sandbox": true}, "project_id"},
			"unknown platform":        {map[string]any{"project_id": p, "platform": "myspace", "sandbox": true}, "platform"},
			"upper-case platform":     {map[string]any{"project_id": p, "platform": "YouTube", "sandbox": true}, "platform"},
			"no credentials":          {map[string]any{"project_id": p, "platform": "bluesky"}, "credentials"},
			"missing credential":      {map[string]any{"project_id": p, "platform": "bluesky", "credentials": map[string]any{"handle": "a.bsky.social"}}, "credentials.app_password"},
			"unknown credential":      {map[string]any{"project_id": p, "platform": "discord", "credentials": map[string]any{"webhook_url": "https://discord.com/api/webhooks/123456/abcdefghijklmnopqrstuvwxyz", "password": "x"}}, "credentials.password"},
			"bad webhook":             {map[string]any{"project_id": p, "platform": "discord", "credentials": map[string]any{"webhook_url": "https://evil.example/api/webhooks/1/2"}}, "credentials.webhook_url"},
			"webhook and bot":         {map[string]any{"project_id": p, "platform": "discord", "credentials": map[string]any{"webhook_url": "https://discord.com/api/webhooks/123456/abcdefghijklmnopqrstuvwxyz", "bot_token": "x"}}, "credentials"},
			"bot without channel":     {map[string]any{"project_id": p, "platform": "discord", "credentials": map[string]any{"bot_token": "x"}}, "credentials"},
			"bad channel id":          {map[string]any{"project_id": p, "platform": "discord", "credentials": map[string]any{"bot_token": "x", "channel_id": "general"}}, "credentials.channel_id"},
			"bad bot token":           {map[string]any{"project_id": p, "platform": "telegram", "credentials": map[string]any{"bot_token": "nope", "chat_id": "1"}}, "credentials.bot_token"},
			"bad handle":              {map[string]any{"project_id": p, "platform": "bluesky", "credentials": map[string]any{"handle": "not a handle", "app_password": "x"}}, "credentials.handle"},
			"bad instance":            {map[string]any{"project_id": p, "platform": "mastodon", "credentials": map[string]any{"instance_url": "mastodon.social", "access_token": "t"}}, "credentials.instance_url"},
			"blank credential":        {map[string]any{"project_id": p, "platform": "youtube", "credentials": map[string]any{"access_token": " "}}, "credentials.access_token"},
			"sandbox with creds":      {map[string]any{"project_id": p, "platform": "youtube", "sandbox": true, "credentials": map[string]any{"access_token": "t"}}, "credentials"},
			"behavior without sbx":    {map[string]any{"project_id": p, "platform": "youtube", "sandbox_behavior": map[string]any{"fail": "reject"}, "credentials": map[string]any{"access_token": "t"}}, "sandbox_behavior"},
			"unknown failure":         {map[string]any{"project_id": p, "platform": "youtube", "sandbox": true, "sandbox_behavior": map[string]any{"fail": "explode"}}, "sandbox_behavior.fail"},
			"fail rate out of range":  {map[string]any{"project_id": p, "platform": "youtube", "sandbox": true, "sandbox_behavior": map[string]any{"fail_rate": 1.5}}, "sandbox_behavior.fail_rate"},
			"negative processing":     {map[string]any{"project_id": p, "platform": "youtube", "sandbox": true, "sandbox_behavior": map[string]any{"processing_ms": -1}}, "sandbox_behavior.processing_ms"},
			"long name":               {map[string]any{"project_id": p, "platform": "youtube", "sandbox": true, "name": strings.Repeat("n", 101)}, "name"},
			"quota units not YouTube": {map[string]any{"project_id": p, "platform": "tiktok", "sandbox": true, "sandbox_behavior": map[string]any{"daily_quota_units": 100}}, "sandbox_behavior.daily_quota_units"},
			"audited not TikTok":      {map[string]any{"project_id": p, "platform": "youtube", "sandbox": true, "sandbox_behavior": map[string]any{"app_access": "audited"}}, "sandbox_behavior.app_access"},
			"bare PDS not Bluesky":    {map[string]any{"project_id": p, "platform": "mastodon", "sandbox": true, "sandbox_behavior": map[string]any{"bare_pds": true}}, "sandbox_behavior.bare_pds"},
		}
		for name, c := range cases {
			r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: c.body})
			if r.Code != 400 || r.errCode() != "validation_failed" || r.field(c.field) == "" {
				t.Errorf("%s: %d %s", name, r.Code, r.Body)
			}
		}
		r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: `{"project_id":"` + p + `","platform":"youtube","sandbox":true,"sandbox_behavior":{"fail":"none","extra":1}}`})
		if r.Code != 400 || r.field("extra") == "" {
			t.Errorf("unknown nested field: %d %s", r.Code, r.Body)
		}
		if list, _ := e.st.ListChannels(context.Background(), e.a.AccountID, p); len(list) != 0 {
			t.Errorf("bad requests stored %d channels", len(list))
		}
	})
}
