package blueskysim

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// swappable serves with the handler set last: the process at an address, replaced by a restart.
type swappable struct {
	mu sync.Mutex
	h  http.Handler
}

func (s *swappable) set(h http.Handler) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	h.ServeHTTP(w, r)
}

// TestBlueskyAcrossProcesses: a video post made through two processes in turn (the session
// opened at one and its tokens taken at the other, the video sent again at the other, its job
// read at both, the post, a reply to an audience comment, a refresh), then read by a third
// started afterwards with the tokens the first ones issued. The upload, the post and the reply
// are recorded once each; the day's sign-ins and videos count every process's together.
func TestBlueskyAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			h := &bskyHarness{t: t, clock: clock, rec: sim.NewRecorder(st, platform.Bluesky)}
			accounts := sim.StaticAccounts{"pw": {ID: "sbx_aa", Username: "Demo", Behavior: sim.Behavior{ProcessingMS: 3000}}}
			sw := &swappable{}
			mux := http.NewServeMux()
			mux.Handle("/sandbox/bluesky/", http.StripPrefix("/sandbox/bluesky", sw))
			h.srv = httptest.NewServer(mux)
			t.Cleanup(h.srv.Close)
			process := func() *Sim {
				return NewSim(sim.Config{BaseURL: h.srv.URL + "/sandbox/bluesky", Accounts: accounts, Recorder: h.rec,
					State: st, Now: clock.Now, Rand: func() float64 { return 0.99 }},
					Options{SessionsPerDay: 3, VideosPerDay: 2})
			}
			h.sim = process()
			sw.set(simtest.Alternating(h.sim, process()))
			did := DID("sbx_aa")

			access, refresh := h.login()
			// The session's token is taken by the other process.
			upload := h.serviceToken(access, h.sim.ServiceDID(), "com.atproto.repo.uploadBlob")
			video := bskyVideo(t, 5*time.Second)
			params := url.Values{"did": {did}, "name": {"v.mp4"}}
			first := h.call(http.MethodPost, "app.bsky.video.uploadVideo", upload, params, "video/mp4", video)
			jobID, _ := first.body["jobId"].(string)
			if first.status != http.StatusOK || jobID == "" {
				t.Fatalf("uploadVideo = %d %s", first.status, first.raw)
			}
			if again := h.call(http.MethodPost, "app.bsky.video.uploadVideo", upload, params, "video/mp4", video); again.status != http.StatusConflict || again.body["jobId"] != jobID {
				t.Fatalf("the same video at the other process = %d %s", again.status, again.raw)
			}
			job := func() map[string]any {
				a := h.call(http.MethodGet, "app.bsky.video.getJobStatus", "", url.Values{"jobId": {jobID}}, "", nil)
				st, _ := a.body["jobStatus"].(map[string]any)
				return st
			}
			if s := job(); s["state"] != "JOB_STATE_ENCODING" {
				t.Fatalf("the job while processing = %v", s)
			}
			clock.Advance(3 * time.Second)
			blob, _ := job()["blob"].(map[string]any)
			if blob == nil {
				t.Fatalf("the job processed at the other process: %v", job())
			}
			limits := h.serviceToken(access, h.sim.ServiceDID(), "app.bsky.video.getUploadLimits")
			if a := h.call(http.MethodGet, "app.bsky.video.getUploadLimits", limits, nil, "", nil); a.body["remainingDailyVideos"] != float64(1) {
				t.Fatalf("getUploadLimits = %d %s; want one video left of two", a.status, a.raw)
			}

			rkey := bskyNewTID(clock.Now())
			create := func(rkey string, record map[string]any) bskyAnswer {
				return h.post("com.atproto.repo.createRecord", access, map[string]any{"repo": did, "collection": "app.bsky.feed.post", "rkey": rkey, "record": record})
			}
			post := create(rkey, map[string]any{"$type": "app.bsky.feed.post", "text": "a video", "createdAt": "2026-09-01T08:00:03.000Z",
				"embed": map[string]any{"$type": "app.bsky.embed.video", "video": blob}})
			uri, cid := post.body["uri"], post.body["cid"]
			if post.status != http.StatusOK || uri == nil {
				t.Fatalf("createRecord = %d %s", post.status, post.raw)
			}
			create(rkey, map[string]any{"$type": "app.bsky.feed.post", "text": "twice", "createdAt": "2026-09-01T08:00:03.000Z",
				"embed": map[string]any{"$type": "app.bsky.embed.video", "video": blob}}).want(t, http.StatusInternalServerError, "InternalServerError", "")

			clock.Advance(10 * time.Minute)
			thread := h.call(http.MethodGet, "app.bsky.feed.getPostThread", access, url.Values{"uri": {uri.(string)}}, "", nil)
			replies, _ := thread.body["thread"].(map[string]any)["replies"].([]any)
			if len(replies) == 0 {
				t.Fatalf("getPostThread = %d %s", thread.status, thread.raw)
			}
			comment := replies[0].(map[string]any)["post"].(map[string]any)
			root := map[string]any{"uri": uri, "cid": cid}
			reply := create(bskyNewTID(clock.Now()), map[string]any{"$type": "app.bsky.feed.post", "text": "thanks", "createdAt": "2026-09-01T08:10:03.000Z",
				"reply": map[string]any{"root": root, "parent": map[string]any{"uri": comment["uri"], "cid": comment["cid"]}}})
			if reply.status != http.StatusOK {
				t.Fatalf("reply to %v = %d %s", comment["uri"], reply.status, reply.raw)
			}

			r1 := h.post("com.atproto.server.refreshSession", refresh, nil)
			if r1.status != http.StatusOK {
				t.Fatalf("refreshSession = %d %s", r1.status, r1.raw)
			}
			h.post("com.atproto.server.refreshSession", refresh, nil).want(t, http.StatusBadRequest, "ExpiredToken", "revoked")
			// Three sign-ins a day, the first above: two more, at either process, and no more.
			h.login()
			h.login()
			ident := map[string]string{"identifier": sandboxtoken.BlueskyHandle("sbx_aa"), "password": "pw"}
			h.post("com.atproto.server.createSession", "", ident).want(t, http.StatusTooManyRequests, "RateLimitExceeded", "")

			sw.set(process()) // a restart
			fresh := r1.body["accessJwt"].(string)
			thread = h.call(http.MethodGet, "app.bsky.feed.getPostThread", fresh, url.Values{"uri": {comment["uri"].(string)}}, "", nil)
			below, _ := thread.body["thread"].(map[string]any)["replies"].([]any)
			if thread.status != http.StatusOK || len(below) != 1 || below[0].(map[string]any)["post"].(map[string]any)["uri"] != reply.body["uri"] {
				t.Fatalf("after a restart, the comment's thread = %d %s", thread.status, thread.raw)
			}
			got := h.call(http.MethodGet, "com.atproto.repo.getRecord", "", url.Values{"repo": {sandboxtoken.BlueskyHandle("sbx_aa")},
				"collection": {"app.bsky.feed.post"}, "rkey": {rkey}}, "", nil)
			if got.status != http.StatusOK || got.body["cid"] != cid {
				t.Fatalf("after a restart, getRecord = %d %s", got.status, got.raw)
			}
			if posts := h.sim.Posts("sbx_aa"); len(posts) != 2 || posts[0].URI != uri || posts[0].SHA256 == "" {
				t.Fatalf("after a restart, the records: %+v", posts)
			}
			rec := h.rec.Snapshot(nil)
			if len(rec.Uploads) != 1 || len(rec.Published) != 1 || rec.Published[0].ID != uri || rec.Published[0].SHA256 != rec.Uploads[0].SHA256 ||
				len(rec.Replies) != 1 || rec.Replies[0].CommentID != comment["uri"] {
				t.Errorf("received %+v, want one upload, one post and one reply", rec)
			}
		})
	}
}

// TestBlueskySignInsOfUnknownIdentifiers: createSession calls with identifiers no account has
// signed in with, which anyone can make up, leave nothing in the State; those of an account
// that signed in are counted there, refused ones too.
func TestBlueskySignInsOfUnknownIdentifiers(t *testing.T) {
	h := newBskyHarness(t, sim.Behavior{ProcessingMS: -1}, Options{})
	st := h.sim.cfg.State
	logins := func() int {
		n, err := st.Count(context.Background(), platform.Bluesky, bskyLoginsKind, "")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 5 {
		h.post("com.atproto.server.createSession", "", map[string]string{"identifier": fmt.Sprintf("made-up-%d.bsky.test", i), "password": "pw"}).
			want(t, http.StatusUnauthorized, "AuthenticationRequired", "Invalid identifier or password")
	}
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": "did:plc:madeup", "password": "x"}).
		want(t, http.StatusUnauthorized, "AuthenticationRequired", "")
	if n := logins(); n != 0 {
		t.Fatalf("%d identifiers counted in the State for calls of no account", n)
	}
	h.login()
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": sandboxtoken.BlueskyHandle("sbx_aa"), "password": "wrong"}).
		want(t, http.StatusUnauthorized, "AuthenticationRequired", "")
	h.post("com.atproto.server.createSession", "", map[string]string{"identifier": DID("sbx_aa"), "password": "wrong"}).
		want(t, http.StatusUnauthorized, "AuthenticationRequired", "")
	calls, _, _, err := sim.Load[[]time.Time](context.Background(), st, bskyKey(bskyLoginsKind, strings.ToLower(sandboxtoken.BlueskyHandle("sbx_aa"))))
	if err != nil || len(calls) != 2 || logins() != 2 {
		t.Fatalf("the account's handle has %d calls counted (%v), %d identifiers in all; want 2 and 2", len(calls), err, logins())
	}
}
