package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// TestSandboxTikTokAudit: the dashboard's sandbox form connects a TikTok channel whose app has
// passed TikTok's audit when that access is chosen, and an unaudited one (a new app's) when not;
// a refused form keeps the choice.
func TestSandboxTikTokAudit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	if page := b.get("/channels"); !strings.Contains(page.Body, `name="app_access"`) {
		t.Fatalf("no app access choice on the channels page:\n%s", page.Body)
	}
	for _, c := range []struct {
		form    url.Values
		audited bool
	}{
		{url.Values{"platform": {"tiktok"}, "fail": {"none"}, "app_access": {"audited"}}, true},
		{url.Values{"platform": {"tiktok"}, "fail": {"none"}}, false},
	} {
		before, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
		if r := b.post("/channels/sandbox", c.form, nil); r.Code != http.StatusSeeOther {
			t.Fatalf("connect %v: %d %s", c.form, r.Code, r.Body)
		}
		after, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
		if len(after) != len(before)+1 {
			t.Fatalf("%d channels after connecting one to %d", len(after), len(before))
		}
		if got := strings.Contains(after[len(after)-1].SandboxBehavior, `"app_access":"audited"`); got != c.audited {
			t.Errorf("%v: stored behaviour %s", c.form, after[len(after)-1].SandboxBehavior)
		}
	}
	r := b.post("/channels/sandbox", url.Values{"platform": {"tiktok"}, "fail": {"explode"}, "app_access": {"audited"}}, nil)
	if r.Code != http.StatusBadRequest || !strings.Contains(r.Body, `<option value="audited" selected>`) {
		t.Errorf("refused form: %d\n%s", r.Code, r.Body)
	}
}
