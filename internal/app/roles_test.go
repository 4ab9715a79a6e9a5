package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// openStore opens another store on the database at u, as another process would.
func openStore(t *testing.T, u string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestAPIProcessHearsWorkers: on PostgreSQL an API process answers a waiting publish as soon
// as a worker process settles the post. It learns it from the settling transaction's
// notification: here it would read the post only once an hour, so a publish it did not hear
// would be answered only when its 30-second wait ended.
func TestAPIProcessHearsWorkers(t *testing.T) {
	u := storetest.URL(t, store.Postgres)
	open := func() *store.Store { return openStore(t, u) }
	api := apptest.Start(t, open(),
		apptest.WithConfig(func(c *config.Config) { c.Role = config.RoleAPI }),
		apptest.WithParams(func(p *app.Params) { p.ListeningPoll = time.Hour }))
	apptest.Start(t, open(), apptest.WithConfig(func(c *config.Config) {
		c.Role, c.PublicURL, c.BlobURL = config.RoleWorker, api.URL, api.Config.BlobURL
	}))

	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 1080, Height: 1920})
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "video/mp4")
		w.Write(video)
	}))
	defer media.Close()

	tn := apptest.NewTenant(t, api.Store, "alice", "k")
	call := func(path string, body any, header map[string]string) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, api.URL+path, bytes.NewReader(b))
		req.Header.Set("X-API-Key", tn.Key)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
		}
		return out
	}
	ch := call("/api/v1/channels", map[string]any{"project_id": tn.ProjectID, "platform": "youtube", "sandbox": true,
		"sandbox_behavior": map[string]any{"processing_ms": 0}}, nil)["channel"].(map[string]any)

	for deadline := time.Now().Add(20 * time.Second); !api.App.Service.Hub.Listening(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the API process does not listen for settled posts")
		}
	}
	started := time.Now()
	post := call("/api/v1/publish", map[string]any{"project_id": tn.ProjectID, "video_url": media.URL + "/clip.mp4",
		"title": "Heard", "channel_ids": []string{ch["id"].(string)}}, map[string]string{"Prefer": "wait=30"})
	took := time.Since(started)
	if post["status"] != "published" {
		t.Fatalf("after %s the publish answered %v: %v", took.Round(time.Millisecond), post["status"], post)
	}
	// Not heard, the answer would come when the wait ends, from the one read it makes then.
	if took > 15*time.Second {
		t.Errorf("the publish answered after %s: at the end of its wait, not when the worker settled it", took.Round(time.Millisecond))
	}
}

// TestAPIProcessesShareRateLimits: two API processes on one PostgreSQL database allow a key
// its burst once between them, not once each, and tell a refused client when to come back.
func TestAPIProcessesShareRateLimits(t *testing.T) {
	u := storetest.URL(t, store.Postgres)
	open := func() *store.Store { return openStore(t, u) }
	limits := apptest.WithConfig(func(c *config.Config) {
		c.Role, c.RateLimitRPS, c.RateLimitBurst = config.RoleAPI, 1, 10
	})
	first, second := apptest.Start(t, open(), limits), apptest.Start(t, open(), limits)
	tn := apptest.NewTenant(t, first.Store, "alice", "k")

	allowed, refused := 0, 0
	started := time.Now()
	for i := range 30 {
		base := first.URL
		if i%2 == 1 {
			base = second.URL
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/posts", nil)
		req.Header.Set("X-API-Key", tn.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
			refused++
			if resp.Header.Get("Retry-After") == "" {
				t.Error("a refusal without Retry-After")
			}
		default:
			t.Fatalf("GET /posts: %d", resp.StatusCode)
		}
	}
	// The burst, plus what refilled at 1 a second while the requests ran; each process apart
	// would have allowed 10 on its own.
	most := 10 + int(time.Since(started).Seconds()) + 1
	if allowed < 10 || allowed > most {
		t.Errorf("allowed %d of 30 requests (refused %d), want 10 to %d", allowed, refused, most)
	}
}
