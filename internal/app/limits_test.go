package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestAPIProcessesShareAccountLimits: two API processes on one PostgreSQL database, each sent
// the requests of a different key of one account, allow the account its burst once between
// them: neither more keys nor more processes multiply it.
func TestAPIProcessesShareAccountLimits(t *testing.T) {
	u := storetest.URL(t, store.Postgres)
	const burst = 10
	limits := apptest.WithConfig(func(c *config.Config) {
		// A token every 1,000 s: nothing refills while the test runs.
		c.Role, c.RateLimitRPS, c.RateLimitBurst = config.RoleAPI, 0.001, burst
	})
	first, second := apptest.Start(t, openStore(t, u), limits), apptest.Start(t, openStore(t, u), limits)
	tn := apptest.NewTenant(t, first.Store, "alice", "k")
	other, rec := auth.NewKey("second key")
	if _, err := first.Store.CreateAPIKey(context.Background(), tn.AccountID, rec); err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for i := range 4 * burst {
		base, key := first.URL, tn.Key
		if i%2 == 1 {
			base, key = second.URL, other
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/posts", nil)
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("GET /posts: %d", resp.StatusCode)
		}
	}
	t.Logf("two keys of one account on two API processes, %d requests, burst %d: %d served", 4*burst, burst, allowed)
	if allowed != burst {
		t.Errorf("allowed %d of %d requests; want the account's burst, %d", allowed, 4*burst, burst)
	}
}
