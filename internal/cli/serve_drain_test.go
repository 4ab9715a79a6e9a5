package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/media/mediatest"
)

// TestServeDrain stops a server (its context ends, as at SIGTERM) while a multipart publish is
// being streamed to it. During the drain delay /readyz answers 503 and responses close their
// connections; then the listener closes and new connections are refused, while the upload
// already under way is still read to its end, stored and answered with success (its wait for
// the destinations, longer than the whole stop, cut short). serve returns within the shutdown
// timeout, and the post is there when the server starts again.
func TestServeDrain(t *testing.T) {
	t.Parallel()
	const drainDelay, shutdownTimeout = time.Second, 15 * time.Second
	dataDir := t.TempDir()
	tune := func(c *config.Config) { c.DrainDelay, c.ShutdownTimeout = drainDelay, shutdownTimeout }
	base, stderr, stop, done := launchServer(t, dataDir, tune)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			stop()
			<-done
		}
	})
	key := keyPattern.FindString(stderr.String())
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	readyz := func() (int, error) {
		resp, err := fresh.Get(base + "/readyz")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Probed: something routes by /readyz here, so the stop waits for it to see the 503.
	if code, err := readyz(); err != nil || code != http.StatusOK {
		t.Fatalf("/readyz before the stop: %d %v", code, err)
	}

	_, projects := getJSON(t, base+"/api/v1/projects", key)
	project := projects["projects"].([]any)[0].(map[string]any)["id"].(string)
	channel := postJSON(t, base+"/api/v1/channels", key, map[string]any{"project_id": project, "platform": "telegram", "sandbox": true})
	channelID := channel["channel"].(map[string]any)["id"].(string)

	// The publish streams its form through a pipe: the fields and the first half of the
	// video now, the rest once the listener has closed.
	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Size: 2 << 20})
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, _ := http.NewRequest("POST", base+"/api/v1/publish", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Prefer", fmt.Sprintf("wait=%d", int(2*shutdownTimeout/time.Second)))
	type answer struct {
		code int
		body map[string]any
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		resp, err := fresh.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		answered <- answer{code: resp.StatusCode, body: body, err: err}
	}()
	for k, v := range map[string]string{"project_id": project, "channel_ids": `["` + channelID + `"]`, "caption": "drained #e2e"} {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("video", "drain.mp4")
	if err != nil {
		t.Fatal(err)
	}
	half := len(video) / 2
	if _, err := fw.Write(video[:half]); err != nil {
		t.Fatal(err)
	}

	stop() // SIGTERM
	stopping := time.Now()
	var sawStopping bool
	for !sawStopping {
		resp, err := fresh.Get(base + "/readyz")
		if err != nil {
			t.Fatalf("/readyz unreachable before it answered 503: %v", err)
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusServiceUnavailable:
			sawStopping = true
			if !resp.Close {
				t.Errorf("a draining server's response keeps its connection open (Connection: %q)", resp.Header.Get("Connection"))
			}
		case resp.StatusCode != http.StatusOK:
			t.Fatalf("/readyz answered %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The listener closes after the drain delay.
	addr := strings.TrimPrefix(base, "http://")
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("a new connection failed otherwise than refused: %v", err)
			}
			break
		}
		conn.Close()
		if time.Since(stopping) > shutdownTimeout {
			t.Fatalf("the listener still accepted connections %s after the stop", time.Since(stopping))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if since := time.Since(stopping); since < drainDelay {
		t.Errorf("the listener closed %s after the stop, before the drain delay (%s) was over", since, drainDelay)
	}

	// The upload under way goes on to its end and is answered.
	if _, err := fw.Write(video[half:]); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	a := <-answered
	if a.err != nil || a.code != http.StatusOK || a.body["success"] != true {
		t.Fatalf("the publish in flight at the stop: status %d, %v: %v", a.code, a.err, a.body)
	}
	postID, _ := a.body["post_id"].(string)
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(shutdownTimeout + 5*time.Second):
		t.Fatalf("serve still running %s after the stop (timeout %s)", time.Since(stopping), shutdownTimeout)
	}
	t.Logf("serve returned %s after the stop", time.Since(stopping).Round(time.Millisecond))
	if !strings.Contains(stderr.String(), "answering /readyz 503 before closing the listener") {
		t.Errorf("the log does not say the drain delay was waited out:\n%s", stderr.String())
	}

	// The post accepted during the drain was stored.
	base, _ = startServer(t, dataDir, tune)
	if code, post := getJSON(t, base+"/api/v1/posts/"+postID, key); code != http.StatusOK || post["id"] != postID {
		t.Errorf("after a restart, GET /posts/%s: %d %v", postID, code, post)
	}
}

// TestServeStopsAtOnceUnprobed: a server whose /readyz nobody probed (a laptop's) has nobody to
// tell that it stops, so it closes its listener without waiting for the drain delay.
func TestServeStopsAtOnceUnprobed(t *testing.T) {
	t.Parallel()
	_, stderr, stop, done := launchServer(t, t.TempDir(), func(c *config.Config) {
		c.DrainDelay, c.ShutdownTimeout = 20*time.Second, 25*time.Second
	})
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve waited out the drain delay although nothing probed /readyz:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "answering /readyz 503") {
		t.Errorf("serve waited for load balancers although nothing probed /readyz:\n%s", stderr.String())
	}
}

// postJSON POSTs body as JSON with key and decodes the answer, which must be a success.
func postJSON(t *testing.T, url, key string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d %v %v", url, resp.StatusCode, err, out)
	}
	return out
}
