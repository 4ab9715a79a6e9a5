package youtubesim

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// ytSwitch serves what its handler is now: the processes of a test, then the one after a
// restart.
type ytSwitch struct {
	mu sync.Mutex
	h  http.Handler
}

func (s *ytSwitch) set(h http.Handler) { s.mu.Lock(); s.h = h; s.mu.Unlock() }

func (s *ytSwitch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	h.ServeHTTP(w, r)
}

// newYTProcesses serves the YouTube simulator below /sandbox/youtube through a switch, which
// the test points at processes that process makes: simulators on st and blobs, their clock
// clock, their spool e.spool.
func newYTProcesses(t *testing.T, st sim.State, blobs *blob.Bucket, clock *clocktest.Clock, accounts sim.Accounts, opt Options) (*ytEnv, *ytSwitch, func() http.Handler) {
	t.Helper()
	sw := &ytSwitch{}
	srv := httptest.NewUnstartedServer(nil)
	e := &ytEnv{t: t, base: "http://" + srv.Listener.Addr().String() + "/sandbox/youtube",
		addr: srv.Listener.Addr().String(), rec: sim.NewRecorder(st, "youtube"), clock: clock, spool: t.TempDir()}
	opt.SpoolDir = e.spool
	process := func() http.Handler {
		return NewWith(sim.Config{BaseURL: e.base, Accounts: accounts, Recorder: e.rec, State: st, Blobs: blobs,
			Now: clock.Now, Rand: func() float64 { return 0.99 }}, opt)
	}
	mux := http.NewServeMux()
	mux.Handle("/sandbox/youtube/", http.StripPrefix("/sandbox/youtube", sw))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return e, sw, process
}

// TestYouTubeAcrossProcesses: two processes serve the simulator from one State and one blob
// storage, each request going to the other than the last. An upload session started at one
// takes chunks at both, keeps what arrived of a chunk cut off at one for the other, and
// completes; a comment is answered; a quota day is counted across both. A process started
// afterwards (a restart) finishes the processing, publishing the video once, and knows the
// session, the video, its reply and the channel's count.
func TestYouTubeAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC))
			st, blobs := open(t, clock.Now), memblob.OpenBucket(nil)
			accounts := sim.StaticAccounts{
				"tok-alice": {ID: "alice", Username: "Alice", Behavior: sim.Behavior{ProcessingMS: 2000}},
				"tok-q":     {ID: "q", Behavior: sim.Behavior{ProcessingMS: -1, DailyQuotaUnits: ptr(1)}},
			}
			e, sw, process := newYTProcesses(t, st, blobs, clock, accounts, Options{})
			sw.set(simtest.Alternating(process(), process()))

			video := ytTestVideo(t, 3*ytChunkQuantum+1000)
			size := len(video)
			sess := e.start("tok-alice", int64(size), ytMeta1)
			if resp, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes 0-%d/%d", ytChunkQuantum-1, size), video[:ytChunkQuantum]); resp.StatusCode != 308 {
				t.Fatalf("first chunk: %d %s", resp.StatusCode, body)
			}
			// A chunk of 2×256 KiB cut off after 256 KiB and 40,000 bytes: 256 KiB are kept.
			u, _ := url.Parse(sess)
			conn, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer tok-alice\r\nContent-Type: video/mp4\r\nContent-Range: bytes %d-%d/%d\r\nContent-Length: %d\r\n\r\n",
				u.RequestURI(), e.addr, ytChunkQuantum, 3*ytChunkQuantum-1, size, 2*ytChunkQuantum)
			if _, err := conn.Write(video[ytChunkQuantum : 2*ytChunkQuantum+40000]); err != nil {
				t.Fatal(err)
			}
			conn.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, conn)
			conn.Close()
			for range 2 { // each process knows what the other kept
				resp, _ := e.put(sess, "tok-alice", fmt.Sprintf("bytes */%d", size), nil)
				if resp.StatusCode != 308 || resp.Header.Get("Range") != fmt.Sprintf("bytes=0-%d", 2*ytChunkQuantum-1) {
					t.Fatalf("status query after a cut chunk: %d Range=%q", resp.StatusCode, resp.Header.Get("Range"))
				}
			}
			a := 2 * ytChunkQuantum
			resp, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes %d-%d/%d", a, size-1, size), video[a:])
			var v struct{ ID string }
			if err := json.Unmarshal(body, &v); err != nil || resp.StatusCode != 201 || v.ID == "" {
				t.Fatalf("last chunk: %d %s", resp.StatusCode, body)
			}
			if n := simtest.BlobCount(t, blobs); n != 0 {
				t.Errorf("%d blobs left after the upload completed", n)
			}
			if l := e.list("tok-alice", v.ID); len(l.Items) != 1 || l.Items[0].Status.UploadStatus != "uploaded" {
				t.Fatalf("while processing: %+v", l)
			}

			// An upload at one process (charged to the upload bucket) and the general quota's
			// only unit spent at the other leave none for a third call.
			e.start("tok-q", 1000, ytMeta1)
			categories := func() int {
				resp, _ := e.do("GET", "/youtube/v3/videoCategories?part=snippet&regionCode=US", "tok-q", nil, nil)
				return resp.StatusCode
			}
			if code := categories(); code != 200 {
				t.Fatalf("the quota's last unit: %d", code)
			}
			if code := categories(); code != 403 {
				t.Fatalf("over the quota counted at both processes: %d", code)
			}

			restarted := process()
			sw.set(restarted)
			clock.Advance(2 * time.Second)
			for range 2 {
				if l := e.list("tok-alice", v.ID); l.Items[0].Status.UploadStatus != "processed" {
					t.Fatalf("after a restart: %+v", l)
				}
			}
			if resp, body := e.put(sess, "tok-alice", fmt.Sprintf("bytes */%d", size), nil); resp.StatusCode != 201 || !strings.Contains(string(body), v.ID) {
				t.Fatalf("the session after a restart: %d %s", resp.StatusCode, body)
			}
			_, threads, _ := e.threads("tok-alice", "part=snippet&videoId="+v.ID)
			top := threads.Items[0].ID
			sw.set(simtest.Alternating(restarted, process()))
			if resp, body := e.do("POST", "/youtube/v3/comments?part=snippet", "tok-alice", map[string]string{"Content-Type": "application/json"},
				[]byte(`{"snippet":{"parentId":"`+top+`","textOriginal":"Thanks"}}`)); resp.StatusCode != 200 {
				t.Fatalf("reply: %d %s", resp.StatusCode, body)
			}
			resp, body = e.do("GET", "/youtube/v3/comments?part=snippet&parentId="+top, "tok-alice", nil, nil)
			var replies struct{ Items []json.RawMessage }
			if err := json.Unmarshal(body, &replies); err != nil || resp.StatusCode != 200 || len(replies.Items) != 1 {
				t.Fatalf("the reply, at the other process: %d %s", resp.StatusCode, body)
			}
			resp, body = e.do("GET", "/youtube/v3/channels?part=statistics&mine=true", "tok-alice", nil, nil)
			var ch struct {
				Items []struct{ Statistics struct{ VideoCount string } }
			}
			if err := json.Unmarshal(body, &ch); err != nil || resp.StatusCode != 200 || len(ch.Items) != 1 || ch.Items[0].Statistics.VideoCount != "1" {
				t.Fatalf("channel: %d %s", resp.StatusCode, body)
			}

			got := e.rec.Snapshot(func(a string) bool { return a == "alice" })
			if len(got.Uploads) != 1 || got.Uploads[0] != (sim.Upload{Account: "alice", Bytes: int64(size), SHA256: ytSHA(video)}) ||
				len(got.Published) != 1 || got.Published[0].ID != v.ID || got.Published[0].URL != "https://www.youtube.com/shorts/"+v.ID ||
				len(got.Replies) != 1 || got.Replies[0].CommentID != top {
				t.Errorf("received %+v, want one upload, one video published and one reply", got)
			}
		})
	}
}
