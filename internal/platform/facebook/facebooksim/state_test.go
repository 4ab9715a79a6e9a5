package facebooksim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// fbProcesses serves the Facebook simulator from two processes on one State and one blob
// storage, each request going to the next.
type fbProcesses struct {
	t     *testing.T
	blobs *blob.Bucket
	srv   *httptest.Server
	rec   *sim.Recorder
	st    sim.State
	clock *clocktest.Clock
}

func newFBProcesses(t *testing.T, st sim.State, clock *clocktest.Clock) *fbProcesses {
	blobs := memblob.OpenBucket(nil)
	e := &fbProcesses{t: t, blobs: blobs, rec: sim.NewRecorder(st, platform.Facebook), st: st, clock: clock}
	e.srv = httptest.NewUnstartedServer(nil)
	var hs []http.Handler
	for range 2 {
		hs = append(hs, New(sim.Config{BaseURL: "http://" + e.srv.Listener.Addr().String(),
			Accounts: sim.StaticAccounts{"tok": {ID: "104000000000042", Username: "simpage", Behavior: sim.Behavior{ProcessingMS: 1000}}},
			Recorder: e.rec, State: st, Blobs: blobs, Now: clock.Now}))
	}
	e.srv.Config.Handler = simtest.Alternating(hs...)
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

func (e *fbProcesses) graph(method, path string, p url.Values) map[string]any {
	e.t.Helper()
	p.Set("access_token", "tok")
	var resp *http.Response
	var err error
	if method == http.MethodGet {
		resp, err = http.Get(e.srv.URL + "/v26.0" + path + "?" + p.Encode())
	} else {
		resp, err = http.Post(e.srv.URL+"/v26.0"+path, "application/x-www-form-urlencoded", strings.NewReader(p.Encode()))
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return body
}

// upload posts body from offset to the upload URL; the connection may break.
func (e *fbProcesses) upload(uploadURL string, body io.Reader, offset, size int64) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, uploadURL, body)
	req.ContentLength = size - offset
	req.Header.Set("Authorization", "OAuth tok")
	req.Header.Set("offset", strconv.FormatInt(offset, 10))
	req.Header.Set("file_size", strconv.FormatInt(size, 10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (e *fbProcesses) transferred(id string) (int64, string) {
	e.t.Helper()
	up := e.graph(http.MethodGet, "/"+id, url.Values{"fields": {"status"}})["status"].(map[string]any)["uploading_phase"].(map[string]any)
	return int64(up["bytes_transferred"].(float64)), up["status"].(string)
}

// TestFacebookAcrossProcesses: a reel's upload breaks at one process and resumes at the other
// from the bytes that arrived; it is finished, published and commented on through both, then
// read by a process started afterwards. The upload and the reel are recorded once each.
func TestFacebookAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			e := newFBProcesses(t, st, clock)
			data := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920, Size: 3 << 20})
			size := int64(len(data))
			start := e.graph(http.MethodPost, "/104000000000042/video_reels", url.Values{"upload_phase": {"start"}})
			id, up := start["video_id"].(string), start["upload_url"].(string)

			half := int64(1 << 20)
			e.upload(up, io.MultiReader(bytes.NewReader(data[:half]), failingBody{}), 0, size)
			var off int64
			for i := 0; ; i++ {
				var status string
				off, status = e.transferred(id)
				if off > 0 && status == "in_progress" {
					break
				}
				if i == 1000 {
					t.Fatalf("the bytes of the broken upload were not kept: %d, %s", off, status)
				}
				time.Sleep(time.Millisecond)
			}
			if code, body := e.upload(up, bytes.NewReader(data[off:]), off, size); code != http.StatusOK {
				t.Fatalf("resume from %d: %d %s", off, code, body)
			}
			if n := simtest.BlobCount(t, e.blobs); n != 0 {
				t.Errorf("%d blobs left after the upload completed", n)
			}
			clock.Advance(time.Second)
			if got := e.graph(http.MethodPost, "/104000000000042/video_reels",
				url.Values{"upload_phase": {"finish"}, "video_id": {id}, "video_state": {"PUBLISHED"}, "description": {"hi"}}); got["success"] != true {
				t.Fatalf("finish: %v", got)
			}
			clock.Advance(10 * time.Minute)
			comments := e.graph(http.MethodGet, "/"+id+"/comments", url.Values{})["data"].([]any)
			first := comments[0].(map[string]any)["id"].(string)
			if got := e.graph(http.MethodPost, "/"+first+"/comments", url.Values{"message": {"thanks"}}); got["id"] == nil {
				t.Fatalf("reply: %v", got)
			}
			restarted := New(sim.Config{BaseURL: e.srv.URL, State: st, Now: clock.Now,
				Accounts: sim.StaticAccounts{"tok": {ID: "104000000000042"}}}).(*fbSim)
			v, ok, err := restarted.video(context.Background(), sim.Account{ID: "104000000000042"}, id)
			if err != nil || !ok || !v.Done || len(v.Comments) != 1 || v.Received != size {
				t.Fatalf("after a restart: %+v, %v, %v", v, ok, err)
			}
			got := e.rec.Snapshot(nil)
			if len(got.Uploads) != 1 || got.Uploads[0].Bytes != size || len(got.Published) != 1 || len(got.Replies) != 1 {
				t.Errorf("received %+v, want one upload, one reel and one reply", got)
			}
		})
	}
}

// TestFacebookUploadLeaseLapses: an upload request whose process died holds the upload no
// longer than its lease; then a request from the bytes kept is taken.
func TestFacebookUploadLeaseLapses(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC))
	st := sim.NewMemoryState(clock.Now)
	e := newFBProcesses(t, st, clock)
	data := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920})
	size := int64(len(data))
	start := e.graph(http.MethodPost, "/104000000000042/video_reels", url.Values{"upload_phase": {"start"}})
	id, up := start["video_id"].(string), start["upload_url"].(string)
	hold := func(lease time.Time) {
		err := st.Update(context.Background(), func(tx sim.Tx) error {
			v, rec, _, err := sim.LoadTx[fbVideo](tx, fbKey(fbVideoKind, id))
			if err != nil {
				return err
			}
			v.Size, v.UploadAttempt, v.UploadLease = size, "dead", lease
			return sim.Save(tx, rec, v)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	hold(time.Now().Add(time.Minute))
	if code, body := e.upload(up, bytes.NewReader(data), 0, size); code != http.StatusPreconditionFailed {
		t.Fatalf("an upload while another holds the lease: %d %s", code, body)
	}
	hold(time.Now().Add(-time.Second))
	if code, body := e.upload(up, bytes.NewReader(data), 0, size); code != http.StatusOK {
		t.Fatalf("an upload once the lease lapsed: %d %s", code, body)
	}
}

type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
