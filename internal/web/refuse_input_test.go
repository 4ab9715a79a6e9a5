package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store/storetest"
)

// The dashboard refuses what the API refuses: a name with a bidirectional override, a form
// field or a query that is not UTF-8, a credential in the URL (whatever its case), each with a
// 400 page saying what; nothing is created.
func TestDashboardRefusesAmbiguousInput(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, d)
			b := e.browser()
			b.signIn(e.a.Key)
			ctx := context.Background()
			keysBefore, _ := e.st.ListAPIKeys(ctx, e.a.AccountID)

			forms := []struct {
				name, path string
				form       url.Values
				says       string
			}{
				{"key name, U+202E", "/keys", url.Values{"name": {"invoice\u202egpj.exe"}}, "bidirectional"},
				{"key name, U+2067", "/keys", url.Values{"name": {"ci\u2067x"}}, "bidirectional"},
				{"sandbox channel name", "/channels/sandbox", url.Values{"platform": {"tiktok"}, "fail": {"none"}, "name": {"main\u202dx"}}, "bidirectional"},
				{"credential channel name", "/channels/credentials", url.Values{"platform": {"bluesky"}, "name": {"\u202aa"},
					"cred.bluesky.handle": {"alice.bsky.social"}, "cred.bluesky.app_password": {"xxxx-xxxx-xxxx-xxxx"}}, "bidirectional"},
				{"key name, not UTF-8", "/keys", url.Values{"name": {"c\xffi"}}, "not valid UTF-8"},
				{"channel name, not UTF-8", "/channels/sandbox", url.Values{"platform": {"tiktok"}, "fail": {"none"}, "name": {"\xe2\x82"}}, "not valid UTF-8"},
			}
			for _, c := range forms {
				r := b.post(c.path, c.form, nil)
				if r.Code != http.StatusBadRequest || !strings.Contains(r.Body, c.says) {
					t.Errorf("%s: %d %s", c.name, r.Code, r.Body)
				}
			}

			for _, path := range []string{"/posts?API_KEY=" + e.a.Key, "/keys?Token=x", "/signin?Access_Token=x", "/channels?aPiKeY=x"} {
				r := b.get(path)
				if r.Code != http.StatusBadRequest || !strings.Contains(r.Body, "credentials must not be sent in the URL") {
					t.Errorf("%s: %d %s", path, r.Code, r.Body)
				}
				if strings.Contains(r.Body, e.a.Key) {
					t.Errorf("%s: the page shows the key", path)
				}
			}
			if r := b.get("/posts?cursor=%FF"); r.Code != http.StatusBadRequest || !strings.Contains(r.Body, "not valid UTF-8") {
				t.Errorf("query not UTF-8: %d %s", r.Code, r.Body)
			}

			keys, _ := e.st.ListAPIKeys(ctx, e.a.AccountID)
			channels, _ := e.st.ListChannels(ctx, e.a.AccountID, b.projectID())
			if len(keys) != len(keysBefore) || len(channels) != 0 {
				t.Errorf("left behind: %d keys (had %d), %d channels", len(keys), len(keysBefore), len(channels))
			}

			// Right-to-left names are names.
			if r := b.post("/keys", url.Values{"name": {"مفتاح"}}, nil); r.Code != http.StatusCreated {
				t.Errorf("right-to-left key name: %d", r.Code)
			}
			if r := b.post("/channels/sandbox", url.Values{"platform": {"tiktok"}, "fail": {"none"}, "name": {"ערוץ"}}, nil); r.Code != http.StatusSeeOther {
				t.Errorf("right-to-left channel name: %d %s", r.Code, r.Body)
			}
		})
	}
}
