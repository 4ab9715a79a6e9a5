package instagramsim

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/metagraph/metasim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// newIGProcesses serves the Instagram simulator from n processes on one State, each request
// going to the next; it answers the test environment (whose sim is the first process) and
// all the processes.
func newIGProcesses(t *testing.T, st sim.State, clock *clocktest.Clock, n int) (*igTestEnv, []*igSim) {
	t.Helper()
	e := &igTestEnv{t: t, clock: clock, rec: sim.NewRecorder(st, platform.Instagram)}
	e.video = igReel(t, mediatest.Options{Size: 64 << 10})
	e.media = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "v.mp4", time.Time{}, bytes.NewReader(e.video))
	}))
	t.Cleanup(e.media.Close)
	e.srv = httptest.NewUnstartedServer(nil)
	var sims []*igSim
	var handlers []http.Handler
	for range n {
		h := NewWith(sim.Config{
			BaseURL:  "http://" + e.srv.Listener.Addr().String() + "/sandbox/instagram/",
			Accounts: sim.StaticAccounts{igTestToken: {ID: igTestAccount, Username: "sim.user", Behavior: sim.Behavior{ProcessingMS: 0}}},
			Recorder: e.rec, State: st, Now: clock.Now,
		}, Options{})
		sims = append(sims, h.(*igSim))
		handlers = append(handlers, h)
	}
	e.sim = sims[0]
	e.srv.Config.Handler = simtest.Alternating(handlers...)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e, sims
}

// TestInstagramAcrossProcesses: a container made at one process is fetched, published,
// commented on and answered at the others; a new process (a restart) knows all of it, and the
// upload and the publish are recorded once.
func TestInstagramAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			e, _ := newIGProcesses(t, st, clock, 2)
			id := e.create(e.media.URL+"/v.mp4", "Hello #reels")
			for range 2 {
				if code, _ := e.statusCode(id); code != "FINISHED" {
					t.Fatalf("status %s", code)
				}
			}
			a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}})
			mediaID, _ := a.body["id"].(string)
			if a.status != http.StatusOK || mediaID == "" {
				t.Fatalf("publish: %d %v", a.status, a.body)
			}
			if a := e.post("/"+igTestAccount+"/media_publish", url.Values{"creation_id": {id}}); a.status != http.StatusBadRequest {
				t.Fatalf("second publish at the other process: %d %v", a.status, a.body)
			}
			clock.Advance(10 * time.Minute)
			comments := e.get("/"+mediaID+"/comments", nil).body["data"].([]any)
			first := comments[0].(map[string]any)["id"].(string)
			r := e.post("/"+first+"/replies", url.Values{"message": {"thanks"}})
			if r.status != http.StatusOK {
				t.Fatalf("reply: %d %v", r.status, r.body)
			}
			got := e.get("/"+first, url.Values{"fields": {"replies{text}"}}).body
			if rows := got["replies"].(map[string]any)["data"].([]any); len(rows) != 1 {
				t.Fatalf("the reply at the other process: %v", got)
			}

			restarted := NewWith(sim.Config{BaseURL: e.srv.URL + "/sandbox/instagram/",
				Accounts: sim.StaticAccounts{igTestToken: {ID: igTestAccount, Username: "sim.user"}}, State: st, Now: clock.Now},
				Options{}).(*igSim)
			if m, gerr := restarted.ownedMedia(context.Background(), sim.Account{ID: igTestAccount}, mediaID, http.MethodGet); gerr != nil || m.Caption != "Hello #reels" {
				t.Fatalf("after a restart: %+v, %v", m, gerr)
			}
			rec := e.rec.Snapshot(nil)
			if len(rec.Uploads) != 1 || len(rec.Published) != 1 || rec.Published[0].ID != mediaID || len(rec.Replies) != 1 {
				t.Errorf("received %+v, want one upload, one post and one reply", rec)
			}
		})
	}
}

// TestInstagramFetchTakenOver: the fetch of a container whose process died (its lease ran out)
// is made by the process that reads the container next, once; a fetch that lost its lease
// writes nothing.
func TestInstagramFetchTakenOver(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
	st := sim.NewMemoryState(clock.Now)
	e, sims := newIGProcesses(t, st, clock, 2)
	ctx := context.Background()
	// A container whose creating process died before its fetch ended.
	key := igKey(igContainerKind, "17890000000000077")
	dead := igContainer{ID: key.ID, Account: igTestAccount, Created: clock.Now(), Ready: clock.Now(), ThumbOffset: -1,
		Pull: metasim.Pull{URL: e.media.URL + "/v.mp4", Attempt: "dead", Lease: time.Now().Add(-time.Second)}}
	if err := st.Update(ctx, func(tx sim.Tx) error {
		return sim.Save(tx, sim.Record{Key: key, Account: igTestAccount, Expires: clock.Now().Add(48 * time.Hour)}, dead)
	}); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.statusCode(key.ID); code != "IN_PROGRESS" {
		t.Fatalf("status while the fetch is taken over: %s", code)
	}
	for range 2000 {
		if e.sim.containerFetched(key.ID) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if code, _ := e.statusCode(key.ID); code != "FINISHED" {
		t.Fatalf("status after the fetch was taken over: %s", code)
	}
	c, _, _, _ := sim.Load[igContainer](ctx, st, key)
	if c.Pull.URL != "" || c.SHA == "" {
		t.Errorf("after the fetch: %+v, want the hash and no URL kept", c)
	}
	// The dead process's fetch, were it to end now, is dropped.
	sims[1].fetcher.Run(key, "dead")
	if n := len(e.rec.Snapshot(nil).Uploads); n != 1 {
		t.Errorf("%d uploads recorded, want 1", n)
	}
}
