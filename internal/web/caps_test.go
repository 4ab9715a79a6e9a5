package web_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// TestCapsPages: a dashboard form that would take the account past one of its caps answers
// 409 with the page of the form, saying which cap and how to make room, above the list of what
// could be freed; nothing is stored.
func TestCapsPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite, func(c *config.Config) {
		c.MaxKeysPerAccount, c.MaxChannelsPerAccount, c.MaxWebhooksPerAccount = 2, 1, 1
	})
	b := e.browser()
	b.signIn(e.a.Key)
	ctx := t.Context()

	for _, tc := range []struct {
		name, path string
		form       url.Values
		// ok is the status of the create that fits; want what the refusal's page says.
		ok   int
		want string
		held func() int
	}{
		{"key", "/keys", url.Values{"name": {"ci"}}, http.StatusCreated,
			"This account is at its cap of 2 API keys (REELAY_MAX_KEYS_PER_ACCOUNT), so nothing was created; revoke a key",
			func() int { ks, _ := e.st.ListAPIKeys(ctx, e.a.AccountID); return len(ks) }},
		{"channel", "/channels/sandbox", url.Values{"platform": {"tiktok"}, "fail": {"none"}}, http.StatusSeeOther,
			"This account is at its cap of 1 channel (REELAY_MAX_CHANNELS_PER_ACCOUNT), so nothing was created; disconnect a channel",
			func() int { cs, _ := e.st.ListChannels(ctx, e.a.AccountID, e.a.ProjectID); return len(cs) }},
		{"webhook", "/webhooks", url.Values{"url": {"http://127.0.0.1:9/reelay"}, "events": {"post.failed"}}, http.StatusCreated,
			"This account is at its cap of 1 webhook (REELAY_MAX_WEBHOOKS_PER_ACCOUNT), so nothing was created; delete a webhook",
			func() int { ws, _ := e.st.ListWebhooks(ctx, e.a.AccountID); return len(ws) }},
	} {
		if r := b.post(tc.path, tc.form, nil); r.Code != tc.ok {
			t.Fatalf("%s within the cap: %d\n%s", tc.name, r.Code, r.Body)
		}
		held := tc.held()
		r := b.post(tc.path, tc.form, nil)
		if body := html.UnescapeString(r.Body); r.Code != http.StatusConflict || !strings.Contains(body, tc.want) ||
			!strings.Contains(body, `class="error-box"`) {
			t.Errorf("%s past the cap: %d\n%s", tc.name, r.Code, r.Body)
		}
		if n := tc.held(); n != held {
			t.Errorf("%s past the cap: %d held after the refusal, %d before", tc.name, n, held)
		}
	}
}
