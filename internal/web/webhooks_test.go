package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
)

func TestWebhooksPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-signature") != "" {
			received.Add(1)
		}
	}))
	t.Cleanup(receiver.Close)
	b := e.browser()
	b.signIn(e.a.Key)

	// Refused registrations say why beside the fields and keep what was typed.
	r := b.post("/webhooks", url.Values{"url": {"ftp://hooks.example/x"}}, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="hook-url-error"`) || !strings.Contains(r.Body, `id="hook-events-error"`) ||
		!strings.Contains(r.Body, `value="ftp://hooks.example/x"`) {
		t.Fatalf("bad webhook: %d\n%s", r.Code, r.Body)
	}
	// Registered: the secret is shown once, on this answer only.
	r = b.post("/webhooks", url.Values{"url": {receiver.URL + "/hook"}, "events": {"post.scheduled"}}, nil)
	secret := regexp.MustCompile(`value="(whsec_[^"]+)"`).FindStringSubmatch(r.Body)
	if r.Code != http.StatusCreated || secret == nil {
		t.Fatalf("register: %d\n%s", r.Code, r.Body)
	}
	list := b.get("/webhooks")
	if strings.Contains(list.Body, secret[1]) || !strings.Contains(list.Body, receiver.URL+"/hook") {
		t.Error("the webhooks list shows the secret, or not the webhook")
	}
	hooks, _ := e.st.ListWebhooks(t.Context(), e.a.AccountID)
	if len(hooks) != 1 {
		t.Fatalf("%d webhooks", len(hooks))
	}
	hook := hooks[0].ID

	// An event reaches the receiver, and the delivery log says so.
	ch := b.sandboxChannel("tiktok")
	if r, out := b.publish("", [][2]string{{"project_id", e.a.ProjectID}, {"channel_ids", `["` + ch + `"]`}, {"title", "Soon"},
		{"scheduled_for", time.Now().Add(time.Hour).Format(time.RFC3339)}}, "", fileField{"video", "c.mp4", smallVideo(t)}); r.Code != 200 {
		t.Fatalf("schedule: %d %v", r.Code, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		page := b.get("/webhooks/" + hook)
		if strings.Contains(page.Body, `badge s-delivered`) && strings.Contains(page.Body, "HTTP 200") && strings.Contains(page.Body, "post.scheduled") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery log (%d received):\n%s", received.Load(), page.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Another account sees none of it.
	other := e.browser()
	other.signIn(e.b.Key)
	if r := other.get("/webhooks/" + hook); r.Code != 404 {
		t.Errorf("another account's delivery log: %d", r.Code)
	}
	if r := other.post("/webhooks/"+hook+"/delete", url.Values{}, nil); r.Code != 404 {
		t.Errorf("another account deletes the webhook: %d", r.Code)
	}
	// Disabled (as reelay does when its receiver fails for days), the list says so and why,
	// and offers to enable it; only its owner can.
	if err := e.st.DisableWebhook(t.Context(), hook, "the receiver answered 410 Gone", time.Now()); err != nil {
		t.Fatal(err)
	}
	if page := b.get("/webhooks"); !strings.Contains(page.Body, "the receiver answered 410 Gone") ||
		!strings.Contains(page.Body, `action="/webhooks/`+hook+`/enable"`) {
		t.Errorf("a disabled webhook's row:\n%s", page.Body)
	}
	if r := other.post("/webhooks/"+hook+"/enable", url.Values{}, nil); r.Code != 404 {
		t.Errorf("another account enables the webhook: %d", r.Code)
	}
	if r := b.post("/webhooks/"+hook+"/enable", url.Values{}, nil); r.Code != http.StatusSeeOther || r.location() != "/webhooks?done=webhook_enabled" {
		t.Errorf("enable: %d %q", r.Code, r.location())
	}
	if page := b.get("/webhooks?done=webhook_enabled"); strings.Contains(page.Body, "410 Gone") || !strings.Contains(page.Body, "Webhook enabled") {
		t.Errorf("after enabling:\n%s", page.Body)
	}
	if r := b.post("/webhooks/"+hook+"/delete", url.Values{}, nil); r.Code != http.StatusSeeOther {
		t.Errorf("delete: %d", r.Code)
	}
	if r := b.get("/webhooks/" + hook); r.Code != 404 {
		t.Errorf("deleted webhook's log: %d", r.Code)
	}
}
