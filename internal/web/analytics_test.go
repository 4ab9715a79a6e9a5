package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

func TestAnalyticsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	b.publishAndWait(b.sandboxChannel("youtube"), "Figures")
	b.publishAndWait(b.sandboxChannel("telegram"), "No figures")

	// Before reading the platforms: posts counted, figures unknown, never zero.
	page := b.get("/analytics")
	if page.Code != 200 || !strings.Contains(page.Body, "(UTC days): 2.") || !strings.Contains(page.Body, `<div class="unknown"><dt>Views</dt><dd>—</dd>`) {
		t.Fatalf("analytics before reading:\n%s", page.Body)
	}
	r := b.post("/analytics/sync", url.Values{"metric": {"views"}}, nil)
	if r.Code != http.StatusSeeOther || !strings.HasPrefix(r.location(), "/analytics?done=synced") {
		t.Fatalf("sync: %d %q %s", r.Code, r.location(), r.Body)
	}
	page = b.get(r.location())
	views := regexp.MustCompile(`<div class=""><dt>Views</dt><dd>([0-9,]+)</dd>`).FindStringSubmatch(page.Body)
	if views == nil || !strings.Contains(page.Body, "figures of 1 published destinations updated") {
		t.Fatalf("analytics after reading:\n%s", page.Body)
	}
	// The chart by platform: a bar for YouTube with its views, none for Telegram, which gives
	// no figures; both charts are SVG with a title, and their numbers are in tables.
	if strings.Count(page.Body, "<svg ") != 2 || !strings.Contains(page.Body, `class="chart-bar"`) ||
		!strings.Contains(page.Body, "YouTube "+views[1]) || !strings.Contains(page.Body, "Telegram not reported") ||
		!strings.Contains(page.Body, `<td data-label="Views">`+views[1]+`</td>`) {
		t.Errorf("charts:\n%s", page.Body)
	}
	// YouTube gives no impressions: its bar is not drawn and the total stays unknown.
	page = b.get("/analytics?metric=impressions")
	if !strings.Contains(page.Body, "YouTube not reported") || !strings.Contains(page.Body, `<div class="unknown"><dt>Impressions</dt><dd>—</dd>`) {
		t.Errorf("impressions:\n%s", page.Body)
	}
	for _, bad := range []string{"?metric=karma", "?from=2026-12-10&to=2026-12-01", "?from=yesterday", "?from=2020-01-01&to=2026-01-01"} {
		if r := b.get("/analytics" + bad); r.Code != 400 {
			t.Errorf("%s: %d", bad, r.Code)
		}
	}
	// The other account sees none of it.
	other := e.browser()
	other.signIn(e.b.Key)
	if page := other.get("/analytics"); !strings.Contains(page.Body, "(UTC days): 0.") {
		t.Error("another account's analytics count these posts")
	}
}
