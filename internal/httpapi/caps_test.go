package httpapi_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/config"
)

// capsOf3 caps every kind at 3 per account.
func capsOf3(c *config.Config) {
	c.MaxKeysPerAccount, c.MaxProjectsPerAccount, c.MaxChannelsPerAccount, c.MaxWebhooksPerAccount = 3, 3, 3, 3
}

// TestCapsAPI fills an account to each cap through the API (as `reelay serve` assembles it,
// with the caps set by its settings) and checks the answer to one more: 409 limit_reached in
// the contract's error body, with the cap in `limit` and a message naming the setting, and
// nothing stored. Freeing one makes room again. A consent that would connect a channel past
// the cap ends on the callback's page saying so, with nothing stored.
func TestCapsAPI(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		channelsPath := "/api/v1/channels?projectId=" + e.a.ProjectID
		for _, k := range []struct {
			name, setting string
			create        string // path of the create
			body          any
			list, listed  string // path of the list, and the member holding it
			created       string // the member of the create's answer holding the new thing
			free          string // the method freeing one at its path ("" when nothing can)
		}{
			{"API keys", "REELAY_MAX_KEYS_PER_ACCOUNT", "/api/v1/api-keys", map[string]any{"name": "ci"},
				"/api/v1/api-keys", "api_keys", "api_key", "DELETE"},
			{"projects", "REELAY_MAX_PROJECTS_PER_ACCOUNT", "/api/v1/projects", map[string]any{"name": "brand"},
				"/api/v1/projects", "projects", "project", ""},
			{"channels", "REELAY_MAX_CHANNELS_PER_ACCOUNT", "/api/v1/channels",
				map[string]any{"project_id": e.a.ProjectID, "platform": "telegram", "sandbox": true},
				channelsPath, "channels", "channel", "DELETE"},
			{"webhooks", "REELAY_MAX_WEBHOOKS_PER_ACCOUNT", "/api/v1/webhooks",
				map[string]any{"url": publicHook, "events": []string{"post.failed"}},
				"/api/v1/webhooks", "webhooks", "webhook", "DELETE"},
		} {
			t.Run(k.name, func(t *testing.T) {
				held := func() int {
					r := e.do(req{Method: "GET", Path: k.list, Key: e.a.Key})
					if r.Code != http.StatusOK {
						t.Fatalf("list: %d %s", r.Code, r.Body)
					}
					return len(r.JSON[k.listed].([]any))
				}
				create := func() *resp { return e.do(req{Method: "POST", Path: k.create, Key: e.a.Key, Body: k.body}) }
				var last string
				for held() < 3 {
					r := create()
					if r.Code != http.StatusCreated {
						t.Fatalf("create under the cap: %d %s", r.Code, r.Body)
					}
					last = r.JSON[k.created].(map[string]any)["id"].(string)
				}

				r := create()
				msg, _ := r.JSON["error"].(map[string]any)["message"].(string)
				if r.Code != http.StatusConflict || r.errCode() != "limit_reached" || r.JSON["limit"] != float64(3) ||
					!strings.Contains(msg, "cap of 3 "+k.name) || !strings.Contains(msg, k.setting) ||
					!strings.Contains(msg, "nothing was created") {
					t.Errorf("one past the cap: %d %s", r.Code, r.Body)
				}
				if n := held(); n != 3 {
					t.Errorf("after the refusal the account holds %d, want 3", n)
				}
				// Another account is not held back by this one's cap.
				if r := e.do(req{Method: "POST", Path: k.create, Key: e.b.Key, Body: k.body}); r.Code == http.StatusConflict {
					t.Errorf("another account refused: %s", r.Body)
				}

				if k.free == "" {
					return
				}
				if r := e.do(req{Method: k.free, Path: k.create + "/" + last, Key: e.a.Key}); r.Code != http.StatusOK {
					t.Fatalf("free one: %d %s", r.Code, r.Body)
				}
				if r := create(); r.Code != http.StatusCreated {
					t.Errorf("create after freeing one: %d %s", r.Code, r.Body)
				}
			})
		}

		// The account is at its cap of channels: a consent connects nothing, and says why.
		r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/youtube?sandbox=true&project_id=" + e.a.ProjectID, Key: e.a.Key})
		if r.Code != http.StatusOK {
			t.Fatalf("connect: %d %s", r.Code, r.Body)
		}
		code, page, _ := browse(t, r.JSON["url"].(string))
		if page = html.UnescapeString(page); code != http.StatusConflict || !strings.Contains(page, "Could not connect YouTube") ||
			!strings.Contains(page, "cap of 3 channels (REELAY_MAX_CHANNELS_PER_ACCOUNT)") {
			t.Errorf("consent at the cap: %d %s", code, page)
		}
		if r := e.do(req{Method: "GET", Path: channelsPath, Key: e.a.Key}); len(r.JSON["channels"].([]any)) != 3 {
			t.Errorf("after the refused consent: %s", r.Body)
		}
	}, capsOf3)
}
