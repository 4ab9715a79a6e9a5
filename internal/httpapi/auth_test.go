package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/store"
)

func TestAuthSchemes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		fakeKey := "rly_live_" + strings.Repeat("A", 43)
		cases := []struct {
			name   string
			header map[string]string
			code   int
			errIs  string
		}{
			{"x-api-key", map[string]string{"X-API-Key": e.a.Key}, 200, ""},
			{"bearer key", map[string]string{"Authorization": "Bearer " + e.a.Key}, 200, ""},
			{"bearer lower-case scheme", map[string]string{"Authorization": "bearer " + e.a.Key}, 200, ""},
			{"missing", nil, 401, "unauthorized"},
			{"unknown key", map[string]string{"X-API-Key": fakeKey}, 401, "unauthorized"},
			{"not a key", map[string]string{"X-API-Key": "hunter2"}, 401, "unauthorized"},
			{"basic scheme", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, 401, "unauthorized"},
			{"empty bearer", map[string]string{"Authorization": "Bearer "}, 401, "unauthorized"},
			{"jwt without oidc configured", map[string]string{"Authorization": "Bearer aaa.bbb.ccc"}, 401, "unauthorized"},
		}
		for _, c := range cases {
			r := e.do(req{Method: "GET", Path: "/api/v1/projects", Header: c.header})
			if r.Code != c.code || r.errCode() != c.errIs {
				t.Errorf("%s: %d %q, want %d %q", c.name, r.Code, r.errCode(), c.code, c.errIs)
			}
			if c.code == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without WWW-Authenticate", c.name)
			}
		}
	})
}

func TestCredentialsInURL(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		for _, param := range []string{"api_key", "apiKey", "key", "access_token"} {
			// Refused even with a valid key in the header: the URL one may be leaked already.
			r := e.do(req{Method: "GET", Path: "/api/v1/projects?" + param + "=" + e.a.Key, Key: e.a.Key})
			if r.Code != 400 || r.errCode() != "credentials_in_url" {
				t.Errorf("%s: %d %q", param, r.Code, r.errCode())
			}
			if strings.Contains(string(r.Body), e.a.Key) {
				t.Errorf("%s: the answer echoes the key", param)
			}
		}
	})
}

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		r := e.do(req{Method: "POST", Path: "/api/v1/api-keys", Key: e.a.Key, Body: map[string]any{"name": "ci"}})
		if r.Code != 201 {
			t.Fatalf("create: %d %s", r.Code, r.Body)
		}
		newKey := r.JSON["key"].(string)
		keyID := r.JSON["api_key"].(map[string]any)["id"].(string)
		if !strings.HasPrefix(newKey, "rly_live_") || !strings.HasPrefix(newKey, r.JSON["api_key"].(map[string]any)["prefix"].(string)) {
			t.Fatalf("key %q does not start with its prefix", newKey)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Error("the answer carrying a raw key may be cached")
		}

		// The listing shows both keys, never a raw key, and when the new one was used.
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: newKey}); r.Code != 200 {
			t.Fatalf("new key does not work: %d", r.Code)
		}
		r = e.do(req{Method: "GET", Path: "/api/v1/api-keys", Key: e.a.Key})
		keys := r.JSON["api_keys"].([]any)
		if len(keys) != 2 || strings.Contains(string(r.Body), newKey) || strings.Contains(string(r.Body), e.a.Key) {
			t.Fatalf("listing: %s", r.Body)
		}
		var used any
		for _, k := range keys {
			if k.(map[string]any)["id"] == keyID {
				used = k.(map[string]any)["last_used_at"]
			}
		}
		if used == nil {
			t.Error("last_used_at of a used key is null")
		}
		// Usage reaches the database only when flushed, in one batch.
		if err := e.usage.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		stored, _ := e.st.ListAPIKeys(context.Background(), e.a.AccountID)
		for _, k := range stored {
			if k.LastUsedAt == nil {
				t.Errorf("key %s: last_used_at not stored after flush", k.ID)
			}
		}

		// Another account can neither see nor revoke it.
		if r := e.do(req{Method: "DELETE", Path: "/api/v1/api-keys/" + keyID, Key: e.b.Key}); r.Code != 404 {
			t.Errorf("foreign revoke: %d", r.Code)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/api-keys", Key: e.b.Key}); len(r.JSON["api_keys"].([]any)) != 1 {
			t.Errorf("bob sees %d keys", len(r.JSON["api_keys"].([]any)))
		}
		if r := e.do(req{Method: "DELETE", Path: "/api/v1/api-keys/not-a-uuid", Key: e.a.Key}); r.Code != 400 || r.field("id") == "" {
			t.Errorf("malformed id: %d %s", r.Code, r.Body)
		}

		// Revocation takes effect at once.
		r = e.do(req{Method: "DELETE", Path: "/api/v1/api-keys/" + keyID, Key: e.a.Key})
		if r.Code != 200 || r.JSON["id"] != keyID {
			t.Fatalf("revoke: %d %s", r.Code, r.Body)
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: newKey}); r.Code != 401 {
			t.Errorf("revoked key: %d", r.Code)
		}
		if r := e.do(req{Method: "DELETE", Path: "/api/v1/api-keys/" + keyID, Key: e.a.Key}); r.Code != 404 {
			t.Errorf("second revoke: %d", r.Code)
		}

		for name, body := range map[string]any{
			"missing name":  map[string]any{},
			"blank name":    map[string]any{"name": "  "},
			"long name":     map[string]any{"name": strings.Repeat("k", 101)},
			"wrong type":    map[string]any{"name": 5},
			"unknown field": map[string]any{"name": "x", "scopes": []string{"all"}},
		} {
			r := e.do(req{Method: "POST", Path: "/api/v1/api-keys", Key: e.a.Key, Body: body})
			if r.Code != 400 || r.errCode() != "validation_failed" || len(r.JSON["error"].(map[string]any)["fields"].(map[string]any)) == 0 {
				t.Errorf("%s: %d %s", name, r.Code, r.Body)
			}
		}
		if r := e.do(req{Method: "GET", Path: "/api/v1/api-keys", Key: e.a.Key}); len(r.JSON["api_keys"].([]any)) != 1 {
			t.Errorf("bad requests left keys behind: %s", r.Body)
		}
	})
}

// TestRateLimit: a credential's token bucket, its headers and refill, per credential.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, e *env) {
		for i := 1; i <= 3; i++ {
			r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key})
			if r.Code != 200 {
				t.Fatalf("request %d: %d", i, r.Code)
			}
			if got := r.Header.Get("RateLimit-Remaining"); got != strconv.Itoa(3-i) {
				t.Errorf("request %d: RateLimit-Remaining %q", i, got)
			}
			if r.Header.Get("RateLimit-Limit") != "3" || r.Header.Get("RateLimit-Reset") == "" {
				t.Errorf("request %d: headers %v", i, r.Header)
			}
		}
		r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key})
		if r.Code != http.StatusTooManyRequests || r.errCode() != "rate_limited" {
			t.Fatalf("4th request: %d %s", r.Code, r.Body)
		}
		if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 3 {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		// Buckets are per credential.
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.b.Key}); r.Code != 200 {
			t.Errorf("another account was limited: %d", r.Code)
		}
		// The bucket refills at the configured rate (one token per 2 s).
		time.Sleep(2100 * time.Millisecond)
		if r := e.do(req{Method: "GET", Path: "/api/v1/projects", Key: e.a.Key}); r.Code != 200 {
			t.Errorf("after refill: %d", r.Code)
		}
	}, func(o *httpapi.Options) {
		o.RateLimitRPS, o.RateLimitBurst = 0.5, 3
		// On PostgreSQL the buckets live in the database, shared by the API processes (see
		// TestAPIProcessesShareRateLimits): the same answers come from there.
		if o.Store.Dialect() == store.Postgres {
			o.RateBuckets = o.Store
		}
	})
}
