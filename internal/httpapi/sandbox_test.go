package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
)

var sandboxKey = []byte("sandbox-key-for-tests-32-bytes!!")

// echoSimulator stands in for a platform simulator: it resolves the bearer token like every
// simulator does, records the body as an upload, and answers the account it saw.
func echoSimulator(cfg sim.Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/upload" {
			http.NotFound(w, r)
			return
		}
		acc, ok := cfg.Accounts.Resolve(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		if !ok {
			http.Error(w, `{"error":"invalid token"}`, http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		cfg.Recorder.RecordUpload(sim.Upload{Account: acc.ID, Bytes: int64(len(body)), SHA256: hex.EncodeToString(sum[:])})
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"account": acc.ID, "behavior": acc.Behavior, "base": cfg.BaseURL})
	})
}

func withSandbox(o *httpapi.Options) {
	o.Simulators = map[string]httpapi.SimulatorFactory{"youtube": echoSimulator}
	o.SandboxKey = sandboxKey
	o.PublicURL = "http://reelay.test"
}

func TestSandboxSimulators(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		newChannel := func(key, project string, behavior map[string]any) string {
			body := map[string]any{"project_id": project, "platform": "youtube", "sandbox": true}
			if behavior != nil {
				body["sandbox_behavior"] = behavior
			}
			r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: key, Body: body})
			if r.Code != 201 {
				t.Fatalf("channel: %d %s", r.Code, r.Body)
			}
			return r.JSON["channel"].(map[string]any)["external_account_id"].(string)
		}
		alice := newChannel(e.a.Key, e.a.ProjectID, map[string]any{"processing_ms": 1200, "fail": "flaky", "fail_rate": 0.25, "daily_quota_units": 3200})
		plain := newChannel(e.a.Key, e.a.ProjectID, nil)
		bob := newChannel(e.b.Key, e.b.ProjectID, nil)

		upload := func(token, body string) (int, map[string]any) {
			hr := httptest.NewRequest("POST", "http://reelay.test/sandbox/youtube/upload", strings.NewReader(body))
			hr.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			e.h.ServeHTTP(rec, hr)
			var out map[string]any
			json.Unmarshal(rec.Body.Bytes(), &out)
			return rec.Code, out
		}
		code, out := upload(sandboxtoken.Token(sandboxKey, "youtube", alice), "alice's video")
		b, _ := out["behavior"].(map[string]any)
		if code != 201 || out["account"] != alice || b["processing_ms"] != float64(1200) || b["fail"] != "flaky" || b["fail_rate"] != 0.25 || b["daily_quota_units"] != float64(3200) {
			t.Fatalf("alice's upload: %d %v", code, out)
		}
		if out["base"] != "http://reelay.test/sandbox/youtube" {
			t.Errorf("simulator base URL %v", out["base"])
		}
		// A channel without a behavior gets the simulator's default processing time.
		if code, out := upload(sandboxtoken.Token(sandboxKey, "youtube", plain), "x"); code != 201 || out["behavior"].(map[string]any)["processing_ms"] != float64(-1) {
			t.Errorf("default behavior: %d %v", code, out)
		}
		upload(sandboxtoken.Token(sandboxKey, "youtube", bob), "bob's video")

		for name, token := range map[string]string{
			"forged key":     sandboxtoken.Token([]byte("another key, another server......"), "youtube", alice),
			"other platform": sandboxtoken.Token(sandboxKey, "tiktok", alice),
			"unknown":        sandboxtoken.Token(sandboxKey, "youtube", "sbx_nobody"),
			"not a token":    "hello",
		} {
			if code, _ := upload(token, "x"); code != 401 {
				t.Errorf("%s: %d", name, code)
			}
		}

		// Introspection shows each account only its own.
		r := e.do(req{Method: "GET", Path: "/sandbox/youtube/_introspect", Key: e.a.Key})
		uploads, _ := r.JSON["uploads"].([]any)
		if r.Code != 200 || len(uploads) != 2 {
			t.Fatalf("alice's introspection: %d %s", r.Code, r.Body)
		}
		sum := sha256.Sum256([]byte("alice's video"))
		if u := uploads[0].(map[string]any); u["account"] != alice || u["sha256"] != hex.EncodeToString(sum[:]) || u["bytes"] != float64(13) {
			t.Errorf("upload record: %v", u)
		}
		r = e.do(req{Method: "GET", Path: "/sandbox/youtube/_introspect", Key: e.b.Key})
		if uploads := r.JSON["uploads"].([]any); len(uploads) != 1 || uploads[0].(map[string]any)["account"] != bob {
			t.Errorf("bob's introspection: %s", r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/sandbox/youtube/_introspect"}); r.Code != 401 {
			t.Errorf("introspection without a key: %d", r.Code)
		}

		// A deleted channel's token no longer works.
		list, _ := e.st.ListChannels(t.Context(), e.a.AccountID, e.a.ProjectID)
		for _, c := range list {
			if c.ExternalAccountID == plain {
				e.do(req{Method: "DELETE", Path: "/api/v1/channels/" + c.ID, Key: e.a.Key})
			}
		}
		if code, _ := upload(sandboxtoken.Token(sandboxKey, "youtube", plain), "x"); code != 401 {
			t.Errorf("deleted channel's token: %d", code)
		}
	}, withSandbox)
}
