package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

func TestConnectWithCredentials(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	// An account on the Bluesky simulator exists for each sandbox channel; its app password
	// is a sandbox token this server's key signs.
	b.sandboxChannel("bluesky")
	list, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
	account := list[0].ExternalAccountID
	password := sandboxtoken.Token(secret.Derive(bytes.Repeat([]byte{7}, 32), "sandbox tokens"), "bluesky", account)
	form := func(pw string) url.Values {
		return url.Values{"platform": {"bluesky"}, "cred.bluesky.handle": {sandboxtoken.BlueskyHandle(account)},
			"cred.bluesky.app_password": {pw}, "cred.bluesky.pds_url": {e.url + "/sandbox/bluesky"}}
	}

	// Shapes the API refuses are refused beside the fields; secrets are never written back.
	r := b.post("/channels/credentials", url.Values{"platform": {"telegram"}, "cred.telegram.bot_token": {"not-a-bot-token-secret"},
		"cred.telegram.chat_id": {"my channel"}}, nil)
	if r.Code != 400 || !strings.Contains(r.Body, `id="cr-telegram-bot_token-error"`) || !strings.Contains(r.Body, `id="cr-telegram-chat_id-error"`) ||
		strings.Contains(r.Body, "not-a-bot-token-secret") || !strings.Contains(r.Body, `value="my channel"`) {
		t.Fatalf("bad telegram credentials: %d\n%s", r.Code, r.Body)
	}
	// The platform refuses a wrong password: nothing is stored.
	r = b.post("/channels/credentials", form("wrong-password-wrong"), nil)
	if r.Code != 400 || strings.Contains(r.Body, "wrong-password-wrong") || !strings.Contains(r.Body, "refused") {
		t.Fatalf("wrong password: %d\n%s", r.Code, r.Body)
	}
	if list, _ := e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID); len(list) != 1 {
		t.Fatalf("%d channels after a refused connection", len(list))
	}
	// The right one connects a channel named by the platform, its credentials sealed.
	r = b.post("/channels/credentials", form(password), nil)
	if r.Code != http.StatusSeeOther || r.location() != "/channels?done=connected" {
		t.Fatalf("connect: %d %q\n%s", r.Code, r.location(), r.Body)
	}
	list, _ = e.st.ListChannels(context.Background(), e.a.AccountID, e.a.ProjectID)
	var got *store.Channel
	for i := range list {
		if !list[i].Sandbox {
			got = &list[i]
		}
	}
	if got == nil || got.Platform != "bluesky" || got.Username == "" || bytes.Contains(got.Credentials, []byte(password)) {
		t.Fatalf("connected channel: %+v", got)
	}
	if page := b.get("/channels"); !strings.Contains(page.Body, got.Name) {
		t.Error("the connected channel is not listed")
	}
}
