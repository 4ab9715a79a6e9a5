package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// TestChannelCheckButton: the channels page's Check button shows what the platform answered,
// a line per check; a channel whose platform refuses its token shows the failure with its fix
// and needs reconnecting; another account's channel is not found.
func TestChannelCheckButton(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	ch := b.sandboxChannel("tiktok")
	if page := b.get("/channels"); !strings.Contains(page.Body, `action="/channels/`+ch+`/check"`) {
		t.Fatalf("no Check button on the channels page:\n%s", page.Body)
	}
	r := b.post("/channels/"+ch+"/check", url.Values{}, nil)
	if r.Code != http.StatusOK || !strings.Contains(r.Body, "Works") || !strings.Contains(r.Body, "creator_info allows posting") ||
		strings.Contains(r.Body, "Problems found") {
		t.Fatalf("check of a working channel: %d\n%s", r.Code, r.Body)
	}

	if r := b.post("/channels/sandbox", url.Values{"platform": {"telegram"}, "fail": {"auth"}}, nil); r.Code != http.StatusSeeOther {
		t.Fatalf("connect: %d %s", r.Code, r.Body)
	}
	all, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
	refused := all[len(all)-1].ID
	r = b.post("/channels/"+refused+"/check", url.Values{}, nil)
	if r.Code != http.StatusOK || !strings.Contains(r.Body, "Problems found") || !strings.Contains(r.Body, "Fix:</strong> reconnect the channel") ||
		!strings.Contains(r.Body, "Reconnect needed") {
		t.Errorf("check of a refused channel: %d\n%s", r.Code, r.Body)
	}

	other := e.browser()
	other.signIn(e.b.Key)
	if r := other.post("/channels/"+ch+"/check", url.Values{}, nil); r.Code != http.StatusNotFound {
		t.Errorf("another account's channel: %d", r.Code)
	}
}
