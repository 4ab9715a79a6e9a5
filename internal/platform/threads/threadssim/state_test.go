package threadssim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// TestThreadsAcrossProcesses: a Threads post made through two processes in turn (the container
// at one, its status and publish at the other, a reply in its conversation), then read by a
// third started afterwards; the upload, the post and the reply are recorded once each.
func TestThreadsAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 720, Height: 1280})
			videos := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.ServeContent(w, r, "v.mp4", time.Time{}, bytes.NewReader(video))
			}))
			t.Cleanup(videos.Close)
			rec := sim.NewRecorder(st, platform.Threads)
			process := func() http.Handler {
				return New(sim.Config{BaseURL: "http://threads.test/", Accounts: sim.StaticAccounts{"tok": {ID: "123", Username: "sim.user"}},
					Recorder: rec, State: st, Now: clock.Now})
			}
			srv := httptest.NewServer(simtest.Alternating(process(), process()))
			t.Cleanup(srv.Close)
			base := srv.URL
			call := func(method, path string, params url.Values) (int, map[string]any) {
				t.Helper()
				params.Set("access_token", "tok")
				var resp *http.Response
				var err error
				if method == http.MethodGet {
					resp, err = http.Get(base + "/v1.0" + path + "?" + params.Encode())
				} else {
					resp, err = http.Post(base+"/v1.0"+path, "application/x-www-form-urlencoded", strings.NewReader(params.Encode()))
				}
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var body map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&body)
				return resp.StatusCode, body
			}
			_, c := call(http.MethodPost, "/123/threads", url.Values{"media_type": {"VIDEO"}, "video_url": {videos.URL + "/v.mp4"}, "text": {"hello"}})
			cid, _ := c["id"].(string)
			clock.Advance(thDefaultProcessing)
			// The status read waits for the fetch, wherever it runs.
			if _, got := call(http.MethodGet, "/"+cid, url.Values{"fields": {"status"}}); got["status"] != thStFinished {
				t.Fatalf("container %s: %v", cid, got)
			}
			status, pub := call(http.MethodPost, "/123/threads_publish", url.Values{"creation_id": {cid}})
			mediaID, _ := pub["id"].(string)
			if status != http.StatusOK || mediaID == "" {
				t.Fatalf("publish: %d %v", status, pub)
			}
			if status, _ := call(http.MethodPost, "/123/threads_publish", url.Values{"creation_id": {cid}}); status != http.StatusBadRequest {
				t.Fatalf("a second publish: %d", status)
			}
			_, rc := call(http.MethodPost, "/123/threads", url.Values{"media_type": {"TEXT"}, "text": {"thanks"}, "reply_to_id": {mediaID}})
			if status, r := call(http.MethodPost, "/123/threads_publish", url.Values{"creation_id": {rc["id"].(string)}}); status != http.StatusOK {
				t.Fatalf("publish the reply: %d %v", status, r)
			}

			restarted := httptest.NewServer(process())
			t.Cleanup(restarted.Close)
			base = restarted.URL
			if _, got := call(http.MethodGet, "/"+mediaID+"/replies", url.Values{"fields": {"text"}}); len(got["data"].([]any)) != 2 {
				t.Fatalf("after a restart, the conversation: %v", got) // the audience's first reply and the profile's
			}
			got := rec.Snapshot(nil)
			if len(got.Uploads) != 1 || len(got.Published) != 1 || got.Published[0].ID != mediaID || len(got.Replies) != 1 {
				t.Errorf("received %+v, want one upload, one post and one reply", got)
			}
		})
	}
}
