package web_test

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// sameMistake is one mistake made through both front doors: the API's request (a JSON body)
// and the dashboard's form.
type sameMistake struct {
	name string
	// apiPath and apiBody are the API request (a GET without a body); field is the field it
	// refuses.
	apiPath string
	apiBody map[string]any
	field   string
	// formPath and form are the dashboard's (a GET of formPath when form is nil).
	formPath string
	form     url.Values
}

// TestSameMistakeSameWords sends each mistake to the API and to the dashboard and checks that
// both refuse it with 400 and the same words for the field: the API's error body and the page
// beside the field both come from the one service behind them, so they cannot drift apart.
func TestSameMistakeSameWords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)

	long := strings.Repeat("k", 101)
	for _, m := range []sameMistake{
		{name: "key name too long", apiPath: "/api/v1/api-keys", apiBody: map[string]any{"name": long}, field: "name",
			formPath: "/keys", form: url.Values{"name": {long}}},
		{name: "key name with a control character", apiPath: "/api/v1/api-keys", apiBody: map[string]any{"name": "ci\x07"},
			field: "name", formPath: "/keys", form: url.Values{"name": {"ci\x07"}}},
		{name: "webhook URL not http", apiPath: "/api/v1/webhooks",
			apiBody: map[string]any{"url": "ftp://example.com/hook", "events": []string{"post.failed"}}, field: "url",
			formPath: "/webhooks", form: url.Values{"url": {"ftp://example.com/hook"}, "events": {"post.failed"}}},
		{name: "webhook event unknown", apiPath: "/api/v1/webhooks",
			apiBody: map[string]any{"url": "http://127.0.0.1:9/reelay", "events": []string{"post.nope"}}, field: "events",
			formPath: "/webhooks", form: url.Values{"url": {"http://127.0.0.1:9/reelay"}, "events": {"post.nope"}}},
		{name: "channel platform unknown", apiPath: "/api/v1/channels",
			apiBody: map[string]any{"project_id": e.a.ProjectID, "platform": "myspace", "sandbox": true}, field: "platform",
			formPath: "/channels/sandbox", form: url.Values{"platform": {"myspace"}, "fail": {"none"}}},
		{name: "channel name with a control character", apiPath: "/api/v1/channels",
			apiBody: map[string]any{"project_id": e.a.ProjectID, "platform": "tiktok", "name": "a\x07b", "sandbox": true}, field: "name",
			formPath: "/channels/sandbox", form: url.Values{"platform": {"tiktok"}, "name": {"a\x07b"}, "fail": {"none"}}},
		{name: "sandbox fail rate out of range", apiPath: "/api/v1/channels",
			apiBody: map[string]any{"project_id": e.a.ProjectID, "platform": "tiktok", "sandbox": true,
				"sandbox_behavior": map[string]any{"fail_rate": 2}}, field: "sandbox_behavior.fail_rate",
			formPath: "/channels/sandbox", form: url.Values{"platform": {"tiktok"}, "fail": {"none"}, "fail_rate": {"2"}}},
		{name: "sandbox app access of another platform", apiPath: "/api/v1/channels",
			apiBody: map[string]any{"project_id": e.a.ProjectID, "platform": "youtube", "sandbox": true,
				"sandbox_behavior": map[string]any{"app_access": "audited"}}, field: "sandbox_behavior.app_access",
			formPath: "/channels/sandbox", form: url.Values{"platform": {"youtube"}, "fail": {"none"}, "app_access": {"audited"}}},
		{name: "telegram bot token malformed", apiPath: "/api/v1/channels",
			apiBody: map[string]any{"project_id": e.a.ProjectID, "platform": "telegram",
				"credentials": map[string]string{"bot_token": "not-a-bot-token", "chat_id": "@reelaychannel"}}, field: "credentials.bot_token",
			formPath: "/channels/credentials", form: url.Values{"platform": {"telegram"},
				"cred.telegram.bot_token": {"not-a-bot-token"}, "cred.telegram.chat_id": {"@reelaychannel"}}},
		{name: "consent for an unknown platform", apiPath: "/api/v1/channels/connect/myspace", field: "platform",
			formPath: "/channels/connect", form: url.Values{"platform": {"myspace"}}},
		{name: "post list platform unknown", apiPath: "/api/v1/posts?platform=myspace", field: "platform",
			formPath: "/posts?platform=myspace"},
		{name: "post list status unknown", apiPath: "/api/v1/posts?status=lost", field: "status",
			formPath: "/posts?status=lost"},
		{name: "post list cursor not handed out", apiPath: "/api/v1/posts?cursor=nope", field: "cursor",
			formPath: "/posts?cursor=nope"},
		{name: "inbox platform unknown", apiPath: "/api/v1/inbox/comments?platform=myspace", field: "platform",
			formPath: "/inbox?platform=myspace"},
		{name: "inbox post not an id", apiPath: "/api/v1/inbox/comments?post_id=nope", field: "post_id",
			formPath: "/inbox?post=nope"},
		{name: "inbox cursor not handed out", apiPath: "/api/v1/inbox/comments?cursor=nope", field: "cursor",
			formPath: "/inbox?cursor=nope"},
		{name: "inbox unanswered not true or false", apiPath: "/api/v1/inbox/comments?unanswered=maybe", field: "unanswered",
			formPath: "/inbox?unanswered=maybe"},
	} {
		t.Run(m.name, func(t *testing.T) {
			words := apiFieldMessage(t, e, m)
			page := b.get(m.formPath)
			if m.form != nil {
				page = b.post(m.formPath, m.form, nil)
			}
			if page.Code != http.StatusBadRequest || !strings.Contains(html.UnescapeString(page.Body), words) {
				t.Errorf("the dashboard answered %d without the API's words %q:\n%s", page.Code, words, page.Body)
			}
		})
	}
}

// apiFieldMessage sends m to the API and answers what it says of m.field.
func apiFieldMessage(t *testing.T, e *env, m sameMistake) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.url+m.apiPath, nil)
	if m.apiBody != nil {
		raw, _ := json.Marshal(m.apiBody)
		req, _ = http.NewRequest(http.MethodPost, e.url+m.apiPath, bytes.NewReader(raw))
	}
	req.Header.Set("Authorization", "Bearer "+e.a.Key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Error struct {
			Fields map[string]string `json:"fields"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	words := body.Error.Fields[m.field]
	if res.StatusCode != http.StatusBadRequest || words == "" {
		t.Fatalf("the API answered %d with fields %v, want 400 refusing %s", res.StatusCode, body.Error.Fields, m.field)
	}
	return words
}
