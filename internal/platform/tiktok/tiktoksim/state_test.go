package tiktoksim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// TestTikTokAcrossProcesses: two processes serve the simulator from one State and one blob
// storage, each request going to the other than the last. A chunked upload started at one goes
// on at the other, the post publishes once, and a third process started afterwards (a
// restart) knows all of it; the upload's blobs are gone once it completed.
func TestTikTokAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			st, blobs := open(t, clock.Now), memblob.OpenBucket(nil)
			accounts := sim.StaticAccounts{"tok": {ID: "open_1", Username: "creator1", Behavior: sim.Behavior{AppAccess: sim.AppAccessAudited, ProcessingMS: -1}}}
			e := &ttEnv{t: t, clock: clock}
			mux := http.NewServeMux()
			e.srv = httptest.NewServer(mux)
			t.Cleanup(e.srv.Close)
			e.base = e.srv.URL + "/sandbox/tiktok"
			process := func() *Sim {
				return NewSim(sim.Config{BaseURL: e.base, Accounts: accounts, Now: clock.Now, Rand: func() float64 { return 0.99 },
					Recorder: sim.NewRecorder(st, "tiktok"), State: st, Blobs: blobs}, Options{})
			}
			a, b := process(), process()
			mux.Handle("/sandbox/tiktok/", simtest.Alternating(a, b))

			v := newTTVideo(12_000_000, 10*time.Second, 1080, 1920)
			init := e.init("tok", "direct", v.size, 6_000_000, 2, direct)
			if init.code != "ok" {
				t.Fatal(init)
			}
			url, id := init.data["upload_url"].(string), init.data["publish_id"].(string)
			if code, cr, body := e.put(url, v, 0, 5_999_999, nil); code != http.StatusPartialContent {
				t.Fatalf("first chunk: %d %q %s", code, cr, body)
			}
			if s := e.status("tok", id); s.data["uploaded_bytes"] != float64(6_000_000) {
				t.Errorf("status after the first chunk, at the other process: %+v", s.data)
			}
			if code, cr, body := e.put(url, v, 6_000_000, 11_999_999, nil); code != http.StatusCreated {
				t.Fatalf("last chunk: %d %q %s", code, cr, body)
			}
			if n := simtest.BlobCount(t, blobs); n != 0 {
				t.Errorf("%d blobs left after the upload completed", n)
			}
			clock.Advance(5 * time.Second)
			for range 4 { // each process sees it published
				if s := e.status("tok", id); s.data["status"] != PublishComplete {
					t.Fatalf("status: %+v", s.data)
				}
			}

			restarted := process()
			post, ok := restarted.Post(id)
			if !ok || post.Status != PublishComplete || post.SHA256 != v.sha() || post.PostID == "" {
				t.Fatalf("after a restart: %+v, found %v", post, ok)
			}
			rec := restarted.Recorder().Snapshot(nil)
			if len(rec.Uploads) != 1 || rec.Uploads[0].SHA256 != v.sha() || len(rec.Published) != 1 || rec.Published[0].ID != post.PostID {
				t.Errorf("received: %+v, want one upload and one post", rec)
			}
		})
	}
}
