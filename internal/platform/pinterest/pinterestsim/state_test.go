package pinterestsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// pinProcesses serves the Pinterest simulator from two processes on one State, each request
// going to the next.
type pinProcesses struct {
	t   *testing.T
	srv *httptest.Server
}

func (e *pinProcesses) call(method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer tok")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// upload posts video to a registration's upload URL as an S3 browser POST: its fields, then
// the file.
func (e *pinProcesses) upload(reg map[string]any, video []byte) (int, string) {
	e.t.Helper()
	params := reg["upload_parameters"].(map[string]any)
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		_ = mw.WriteField(k, params[k].(string))
	}
	fw, _ := mw.CreateFormFile("file", "video.mp4")
	_, _ = fw.Write(video)
	_ = mw.Close()
	resp, err := http.Post(reg["upload_url"].(string), mw.FormDataContentType(), &b)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestPinterestAcrossProcesses: a media registered at one process is uploaded at the other
// (whose policy check holds no key of the first's), processed, and made a Pin there; the Pin
// is on its board at the first, and a process started afterwards (a restart) knows the media
// and the Pin. The upload and the Pin are recorded once each.
func TestPinterestAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			const acct = "pin_state_acct"
			rec := sim.NewRecorder(st, platform.Pinterest)
			e := &pinProcesses{t: t, srv: httptest.NewUnstartedServer(nil)}
			process := func() *Sim {
				return NewSim(sim.Config{BaseURL: "http://" + e.srv.Listener.Addr().String(),
					Accounts: sim.StaticAccounts{"tok": {ID: acct, Username: "simuser", Behavior: sim.Behavior{ProcessingMS: 1000}}},
					Recorder: rec, State: st, Now: clock.Now, Rand: func() float64 { return 0.99 }}, Options{})
			}
			e.srv.Config.Handler = simtest.Alternating(process(), process())
			e.srv.Start()
			t.Cleanup(e.srv.Close)

			video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920})
			sum := sha256.Sum256(video)
			code, reg := e.call(http.MethodPost, "/v5/media", map[string]string{"media_type": "video"})
			if code != http.StatusCreated {
				t.Fatalf("register: %d %v", code, reg)
			}
			id := reg["media_id"].(string)
			if code, body := e.upload(reg, video); code != http.StatusNoContent {
				t.Fatalf("upload at the other process: %d %s", code, body)
			}
			if _, m := e.call(http.MethodGet, "/v5/media/"+id, nil); m["status"] != Processing {
				t.Fatalf("media after the upload: %v", m)
			}
			clock.Advance(time.Second)
			for range 2 { // each process sees it processed
				if _, m := e.call(http.MethodGet, "/v5/media/"+id, nil); m["status"] != Succeeded {
					t.Fatalf("media after processing: %v", m)
				}
			}
			board := DefaultBoards(acct)[0].ID
			code, pin := e.call(http.MethodPost, "/v5/pins", map[string]any{"board_id": board, "title": "Across processes",
				"media_source": map[string]any{"source_type": "video_id", "media_id": id, "cover_image_key_frame_time": 1}})
			if code != http.StatusCreated {
				t.Fatalf("pin: %d %v", code, pin)
			}
			if _, list := e.call(http.MethodGet, "/v5/boards/"+board+"/pins", nil); len(list["items"].([]any)) != 1 ||
				list["items"].([]any)[0].(map[string]any)["id"] != pin["id"] {
				t.Errorf("board Pins at the other process: %v", list)
			}
			if _, b := e.call(http.MethodGet, "/v5/boards/"+board, nil); b["pin_count"] != float64(1) {
				t.Errorf("board: %v", b)
			}

			restarted := process()
			if s := restarted.MediaStatus(id); s != Succeeded {
				t.Errorf("media after a restart: %q", s)
			}
			pins := restarted.Pins(acct)
			if len(pins) != 1 || pins[0].ID != pin["id"] || pins[0].MediaID != id || pins[0].SHA256 != hex.EncodeToString(sum[:]) {
				t.Fatalf("Pins after a restart: %+v", pins)
			}
			got := rec.Snapshot(nil)
			if len(got.Uploads) != 1 || got.Uploads[0].SHA256 != pins[0].SHA256 || len(got.Published) != 1 || got.Published[0].ID != pins[0].ID {
				t.Errorf("received %+v, want one upload and one Pin", got)
			}
		})
	}
}
