package apptest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestStart: the process answers on its listener with the public URL of that listener, the
// options reach the configuration, the parameters and the listener, and a tenant's key
// reaches its own project.
func TestStart(t *testing.T) {
	st := storetest.New(t, store.SQLite)
	var wrapped atomic.Int64
	var paramsSeen *config.Config
	srv := apptest.Start(t, st,
		apptest.WithConfig(func(c *config.Config) { c.RetryAttempts = 2 }, func(c *config.Config) { c.RetryAttempts++ }),
		apptest.WithParams(func(p *app.Params) { paramsSeen = p.Config }),
		apptest.WrapHandler(func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { wrapped.Add(1); h.ServeHTTP(w, r) })
		}))
	if srv.Config.PublicURL != srv.URL || srv.Config.Role != config.RoleAll || !srv.Config.Sandbox || !srv.Config.AllowPrivateURLs ||
		!strings.HasPrefix(srv.Config.BlobURL, "file://") || srv.Config.PublishWait != 10*time.Second {
		t.Errorf("config %+v, listener %s", srv.Config, srv.URL)
	}
	if srv.Config.RetryAttempts != 3 || paramsSeen != srv.Config || srv.Store != st || srv.App == nil {
		t.Errorf("options not applied in order: %d retries, params saw %p, config %p", srv.Config.RetryAttempts, paramsSeen, srv.Config)
	}

	alice := apptest.NewTenant(t, st, "alice", "first")
	bob := apptest.NewTenant(t, st, "bob", "first")
	if alice.AccountID == bob.AccountID || alice.ProjectID == "" || alice.KeyID == "" || !strings.HasPrefix(alice.Key, "rly_live_") {
		t.Fatalf("tenants %+v, %+v", alice, bob)
	}
	keys, err := st.ListAPIKeys(context.Background(), alice.AccountID)
	if err != nil || len(keys) != 1 || keys[0].ID != alice.KeyID || keys[0].Name != "first" {
		t.Errorf("alice's keys %+v, %v", keys, err)
	}

	for _, tc := range []struct {
		key     string
		code    int
		project string
	}{
		{alice.Key, http.StatusOK, alice.ProjectID},
		{bob.Key, http.StatusOK, bob.ProjectID},
		{"rly_live_nobody", http.StatusUnauthorized, ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/projects", nil)
		req.Header.Set("X-API-Key", tc.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Projects []struct{ ID string } `json:"projects"`
		}
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		var ids []string
		for _, p := range body.Projects {
			ids = append(ids, p.ID)
		}
		got := strings.Join(ids, ",")
		if res.StatusCode != tc.code || got != tc.project {
			t.Errorf("key %.12s…: %d, projects %q; want %d, %q", tc.key, res.StatusCode, got, tc.code, tc.project)
		}
	}
	if n := wrapped.Load(); n != 3 {
		t.Errorf("the wrapper saw %d requests, want 3", n)
	}
}
