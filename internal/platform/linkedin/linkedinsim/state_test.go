package linkedinsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// TestLinkedInAcrossProcesses: two processes serve the simulator from one State and one blob
// storage, each request going to the other than the last. A video's parts arrive at both (one
// sent again), it is finalized once, posted, refused as a duplicate and commented on across
// them; a third process started afterwards (a restart) knows all of it. The parts' blobs are
// gone once the video is finalized, and what was received is recorded once each.
func TestLinkedInAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			st, blobs := open(t, clock.Now), memblob.OpenBucket(nil)
			e := &liEnv{t: t, clock: clock, rec: sim.NewRecorder(st, platform.LinkedIn)}
			mux := http.NewServeMux()
			e.srv = httptest.NewServer(mux)
			t.Cleanup(e.srv.Close)
			process := func() *Sim {
				return NewSim(sim.Config{BaseURL: e.srv.URL + "/sandbox/linkedin",
					Accounts: sim.StaticAccounts{"tok": {ID: liMember, Username: "Grace Hopper", Behavior: sim.Behavior{ProcessingMS: 1000}}},
					Recorder: e.rec, State: st, Blobs: blobs, Now: clock.Now, Rand: func() float64 { return 0.99 }}, Options{})
			}
			e.sim = process()
			mux.Handle("/sandbox/linkedin/", http.StripPrefix("/sandbox/linkedin", simtest.Alternating(e.sim, process())))

			data := liVideo(t, 9<<20, 10*time.Second, 1080, 1920)
			u := e.initialize(int64(len(data)), false)
			etags := e.uploadAll(u, data)
			p0 := u.Parts[0]
			if _, again := e.put(p0.URL, "application/octet-stream", data[:p0.Last+1]); again != etags[0] {
				t.Errorf("the first part sent again has ETag %q, was %q", again, etags[0])
			}
			if n := simtest.BlobCount(t, blobs); n != len(u.Parts) {
				t.Errorf("%d blobs for %d parts (one sent twice)", n, len(u.Parts))
			}
			e.finalize(u, etags).want(t, http.StatusOK, nil)
			e.finalize(u, etags).want(t, http.StatusBadRequest, nil) // at the other process
			if n := simtest.BlobCount(t, blobs); n != 0 {
				t.Errorf("%d blobs left after the video was finalized", n)
			}
			e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(t, http.StatusOK, map[string]any{"status": Processing})
			clock.Advance(time.Second)
			for range 2 { // each process sees it processed
				e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(t, http.StatusOK, map[string]any{"status": Available})
			}

			a := e.call(http.MethodPost, "/rest/posts", liPost(u.Video, "Across processes"), nil)
			a.want(t, http.StatusCreated, nil)
			urn := a.header.Get("X-RestLi-Id")
			dup := e.call(http.MethodPost, "/rest/posts", liPost(u.Video, "Across processes"), nil)
			dup.want(t, http.StatusUnprocessableEntity, nil)
			if !strings.Contains(dup.raw, "Content is a duplicate of "+urn) {
				t.Fatalf("duplicate at the other process: %s", dup.raw)
			}
			comment := map[string]any{"actor": "urn:li:person:" + liMember, "object": urn, "message": map[string]any{"text": "thanks"}}
			e.call(http.MethodPost, commentsPath(urn), comment, nil).want(t, http.StatusCreated, nil)
			list := e.call(http.MethodGet, commentsPath(urn)+"?count=100", nil, nil)
			list.want(t, http.StatusOK, nil)
			if !strings.Contains(list.raw, `"text":"thanks"`) {
				t.Errorf("the comment is not listed at the other process: %s", list.raw)
			}

			restarted := process()
			sum := sha256.Sum256(data)
			v, ok := restarted.Video(u.Video)
			if !ok || v.Finalizes != 1 || v.Status != Available || v.SHA256 != hex.EncodeToString(sum[:]) || v.Parts != len(u.Parts) {
				t.Fatalf("video after a restart: %+v, found %v", v, ok)
			}
			posts := restarted.Posts()
			if len(posts) != 1 || posts[0].URN != urn || posts[0].Video != u.Video || posts[0].Text != "Across processes" {
				t.Fatalf("posts after a restart: %+v", posts)
			}
			got := e.rec.Snapshot(nil)
			if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != v.SHA256 || len(got.Published) != 1 || got.Published[0].ID != urn ||
				len(got.Replies) != 1 || got.Replies[0].CommentID != urn {
				t.Errorf("received %+v, want one upload, one post and one reply", got)
			}
		})
	}
}

// TestLinkedInPartsExpireWithTheirURLs: the uploaded parts are kept as long as their upload
// URLs take bytes; a video not finalized by then cannot be, and its parts' record has expired
// with its blobs, for housekeeping to delete.
func TestLinkedInPartsExpireWithTheirURLs(t *testing.T) {
	t.Parallel()
	e := newLiEnv(t, sim.Behavior{}, Options{UploadURLTTL: time.Hour})
	data := liVideo(t, 1<<20, 10*time.Second, 1080, 1920)
	u := e.initialize(int64(len(data)), false)
	etags := e.uploadAll(u, data)
	e.clock.Advance(time.Hour)
	a := e.finalize(u, etags)
	a.want(t, http.StatusBadRequest, nil)
	if !strings.Contains(a.raw, "expired before it was finalized") {
		t.Errorf("finalize after the upload URLs expired: %s", a.raw)
	}
	if n := len(e.rec.Snapshot(nil).Uploads); n != 0 {
		t.Errorf("%d uploads recorded", n)
	}
	id := strings.TrimPrefix(u.Video, "urn:li:video:")
	if _, found, _ := e.sim.cfg.State.Get(context.Background(), linkedinKey(linkedinUploadKind, id)); found {
		t.Error("the parts' record outlived their upload URLs")
	}
	e.call(http.MethodGet, videoPath(u.Video), nil, nil).want(t, http.StatusOK, map[string]any{"status": WaitingUpload})
}
