package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform"
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
				lines, _ := checkLines(t, r)
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
