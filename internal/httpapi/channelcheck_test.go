package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

// checkLines are the lines of a check answer, by name, and their order.
func checkLines(t *testing.T, r *resp) (byName map[string]map[string]any, order []string) {
	t.Helper()
	byName = map[string]map[string]any{}
	checks, _ := r.JSON["checks"].([]any)
	for _, c := range checks {
		line := c.(map[string]any)
		name := line["name"].(string)
		byName[name] = line
		order = append(order, name)
	}
	return byName, order
}

// TestChannelCheckSandbox: POST /channels/{id}/check asks each platform's simulator about a
// sandbox channel, and every check passes or is skipped with a reason; the token line is ok.
func TestChannelCheckSandbox(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		for _, p := range platform.All {
			t.Run(p, func(t *testing.T) {
				id, _ := e.sandboxChannel(e.a, p, nil)
				r := e.do(req{Method: "POST", Path: "/api/v1/channels/" + id + "/check", Key: e.a.Key})
				if r.Code != http.StatusOK || r.JSON["ok"] != true {
					t.Fatalf("check: %d %s", r.Code, r.Body)
				}
				lines, order := checkLines(t, r)
				if strings.Join(order, ",") != "token,scopes,api_version,publish" {
					t.Fatalf("lines %v: %s", order, r.Body)
				}
				if lines["token"]["status"] != "ok" {
					t.Errorf("token: %v", lines["token"])
				}
				for name, l := range lines {
					if l["status"] == "skipped" && l["detail"] == "" {
						t.Errorf("%s skipped without a reason", name)
					}
				}
			})
		}
	})
}

// TestChannelCheckRefusedToken: a channel whose platform refuses its token (even after a
// renewal) fails the token line with the fix and is marked reauth_required; another account's
// channel is a 404.
func TestChannelCheckRefusedToken(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		for _, p := range []string{"tiktok", "telegram", "linkedin"} {
			t.Run(p, func(t *testing.T) {
				id, _ := e.sandboxChannel(e.a, p, map[string]any{"fail": "auth"})
				r := e.do(req{Method: "POST", Path: "/api/v1/channels/" + id + "/check", Key: e.a.Key})
				if r.Code != http.StatusOK || r.JSON["ok"] != false {
					t.Fatalf("check: %d %s", r.Code, r.Body)
				}
				lines, order := checkLines(t, r)
				if strings.Join(order, ",") != "token,scopes,api_version,publish" {
					t.Errorf("lines %v: %s", order, r.Body)
				}
				tok := lines["token"]
				if tok["status"] != "failed" || !strings.Contains(tok["fix"].(string), "reconnect") {
					t.Errorf("token line: %v", tok)
				}
				if st := r.JSON["channel"].(map[string]any)["status"]; st != "reauth_required" {
					t.Errorf("channel status %v, want reauth_required", st)
				}
				if r := e.do(req{Method: "POST", Path: "/api/v1/channels/" + id + "/check", Key: e.b.Key}); r.Code != http.StatusNotFound {
					t.Errorf("another account's channel: %d %s", r.Code, r.Body)
				}
			})
		}
	})
}

// TestChannelCheckJob: the periodic check asks about every channel not checked for a day; a
// channel whose platform refuses its token is marked reauth_required and announced once, and
// neither the next run nor a check through the API announces it again. A healthy channel
// sends nothing.
func TestChannelCheckJob(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		rc := newReceiver(t, always(http.StatusNoContent))
		e.webhook(e.a, rc.URL, store.EventChannelReauthRequired, store.EventChannelCheckFailed)
		e.sandboxChannel(e.a, "tiktok", nil)
		expired, _ := e.sandboxChannel(e.a, "telegram", map[string]any{"fail": "auth"})
		run := func() {
			t.Helper()
			err := e.st.InTx(ctx, func(tx *store.Tx) error {
				_, err := e.app.Queue.InsertTx(ctx, tx, connect.CheckArgs{}, nil)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		run()
		ev := rc.wait(t, store.EventChannelReauthRequired, 1, 15*time.Second)[0]
		if ev.Data["id"] != expired || ev.Data["status"] != "reauth_required" {
			t.Errorf("channel.reauth_required: %s", ev.Body)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			due, err := e.st.ChannelsDueForCheck(ctx, time.Now().Add(-connect.CheckEvery), 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(due) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d channels still unchecked after the job", len(due))
			}
			time.Sleep(50 * time.Millisecond)
		}
		run()
		if r := e.do(req{Method: "POST", Path: "/api/v1/channels/" + expired + "/check", Key: e.a.Key}); r.Code != http.StatusOK || r.JSON["ok"] != false {
			t.Errorf("check of a reauth_required channel: %d %s", r.Code, r.Body)
		} else if _, order := checkLines(t, r); len(order) != 4 {
			t.Errorf("check of a reauth_required channel answers %v", order)
		}
		time.Sleep(500 * time.Millisecond)
		if n := len(rc.wait(t, store.EventChannelReauthRequired, 1, time.Second)); n != 1 {
			t.Errorf("channel.reauth_required announced %d times", n)
		}
		if n := len(rc.wait(t, store.EventChannelCheckFailed, 0, 100*time.Millisecond)); n != 0 {
			t.Errorf("channel.check_failed announced %d times for channels that failed only their token", n)
		}
	})
}

// TestChannelCheckRenewsToken: an OAuth channel whose token is about to expire is renewed
// before its platform is asked; once its access token has expired and its refresh token is
// revoked, the check fails the token line with the fix and marks the channel reauth_required.
func TestChannelCheckRenewsToken(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		r := e.do(req{Method: "GET", Path: "/api/v1/channels/connect/tiktok?sandbox=true", Key: e.a.Key})
		if code, page, _ := browse(t, r.JSON["url"].(string)); code != http.StatusOK {
			t.Fatalf("consent: %d %s", code, page)
		}
		list := e.do(req{Method: "GET", Path: "/api/v1/channels", Key: e.a.Key}).JSON["channels"].([]any)
		ch, err := e.st.GetChannel(ctx, e.a.AccountID, list[0].(map[string]any)["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		box, _ := secret.NewBox(bytes.Repeat([]byte{4}, 32))
		access := publish.ChannelAccess{Box: box}
		_, creds, err := publish.ChannelAccess{Box: box, SimulatorsURL: e.cfg.PublicURL}.Open(ch)
		if err != nil {
			t.Fatal(err)
		}
		mint := sandboxtoken.Mint{Key: appSandboxKey, Platform: "tiktok"}
		soon := time.Now().Add(5 * time.Minute)
		creds["access_token"] = mint.Access(ch.ExternalAccountID, soon)
		if err := e.st.SaveRefreshedCredentials(ctx, ch.ID, access.Seal(ch, creds), &soon); err != nil {
			t.Fatal(err)
		}
		check := func() *resp {
			t.Helper()
			r := e.do(req{Method: "POST", Path: "/api/v1/channels/" + ch.ID + "/check", Key: e.a.Key})
			if r.Code != http.StatusOK {
				t.Fatalf("check: %d %s", r.Code, r.Body)
			}
			return r
		}
		if r := check(); r.JSON["ok"] != true {
			t.Fatalf("check of a token due for renewal: %s", r.Body)
		}
		after, _ := e.st.GetChannel(ctx, e.a.AccountID, ch.ID)
		_, renewed, _ := access.Open(after)
		if renewed["access_token"] == creds["access_token"] || after.TokenExpiresAt == nil || !after.TokenExpiresAt.After(soon) {
			t.Fatalf("the token due for renewal was not renewed (expires %v)", after.TokenExpiresAt)
		}

		// The access token has expired and the refresh token is revoked.
		renewed["access_token"] = mint.Access(ch.ExternalAccountID, time.Now().Add(-time.Minute))
		renewed["refresh_token"] = "revoked"
		later := time.Now().Add(time.Hour)
		if err := e.st.SaveRefreshedCredentials(ctx, ch.ID, access.Seal(after, renewed), &later); err != nil {
			t.Fatal(err)
		}
		r = check()
		lines, _ := checkLines(t, r)
		if r.JSON["ok"] != false || lines["token"]["status"] != "failed" || !strings.Contains(lines["token"]["fix"].(string), "reconnect") {
			t.Errorf("check of a revoked token: %s", r.Body)
		}
		if c, _ := e.st.GetChannel(ctx, e.a.AccountID, ch.ID); c.Status != "reauth_required" {
			t.Errorf("channel status %q", c.Status)
		}
	})
}
