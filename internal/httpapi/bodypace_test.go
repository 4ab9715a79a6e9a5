package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// slowRequest sends head (a request line and headers, without the blank line), then opening
// at once and then trickle, step bytes every interval, until the server answers or the
// connection breaks. It returns the answer and whether the server closed the connection after
// it.
func slowRequest(t *testing.T, addr, head string, opening []byte, step int, interval time.Duration) (*http.Response, []byte, bool) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound on the test itself, not an assertion on timing: a server that never cuts the
	// client off leaves this test to fail at it.
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, head+"\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(opening); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		chunk := []byte(strings.Repeat("x", step))
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write(chunk); err != nil {
					return
				}
			}
		}
	}()
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the body trickled: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	// After the answer the server must hang up rather than wait on the rest of the body.
	_, err = br.ReadByte()
	var ne net.Error
	closed := err != nil && !(errors.As(err, &ne) && ne.Timeout())
	return res, body, closed
}

// A client that sends its body a few bytes at a time is cut off once a window of waiting has
// brought less than the minimum rate: it is answered 408 request_timeout and the connection is
// closed, and what the handler had begun (a publish form's video half streamed to storage)
// leaves nothing behind. A body sent at an ordinary pace passes. The window is 200 ms here
// instead of 30 s.
func TestSlowBodiesAreCutOff(t *testing.T) {
	eachApp(t, func(t *testing.T, e *env) {
		e.defaultChannels(e.a)
		addr := strings.TrimPrefix(e.cfg.PublicURL, "http://")
		mp4 := video(t, 5)
		form, ctype := multipartBody(t, map[string]string{"project_id": e.a.ProjectID, "caption": "slow"}, map[string][]byte{"video": mp4})
		half := len(form) / 2

		cases := []struct {
			name        string
			contentType string
			body        []byte // the whole body, of which opening is sent at once
			opening     int
			step        int
		}{
			{"a publish form's video trickling after its first half", ctype, form, half, 1},
			{"a JSON publish trickling from its first byte", "application/json", []byte(`{"caption":"` + strings.Repeat("x", 2000) + `"}`), 0, 1},
			{"a body that never comes", ctype, form, 0, 0},
			// Refused from its headers (no key: 401): net/http reads the rest of a small body
			// before answering, to keep the connection; not at this pace.
			{"a body its handler leaves unread", "application/json", []byte(strings.Repeat(" ", 100_000)), 0, 1},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				blobsBefore := e.blobCount()
				key, want := e.a.Key, http.StatusRequestTimeout
				if strings.Contains(c.name, "unread") {
					key, want = "rly_wrong", http.StatusUnauthorized
				}
				head := fmt.Sprintf("POST /api/v1/publish HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n",
					addr, key, c.contentType, len(c.body))
				interval := 20 * time.Millisecond
				if c.step == 0 {
					interval = time.Hour
				}
				res, body, closed := slowRequest(t, addr, head, c.body[:c.opening], c.step, interval)
				var answer struct {
					Error struct{ Code, Message string }
				}
				json.Unmarshal(body, &answer)
				if res.StatusCode != want {
					t.Fatalf("answer %d %s, want %d", res.StatusCode, body, want)
				}
				if want == http.StatusRequestTimeout && (answer.Error.Code != "request_timeout" ||
					!strings.Contains(answer.Error.Message, "slower than 1024 bytes a second")) {
					t.Errorf("message %q does not say what was too slow", answer.Error.Message)
				}
				if !closed {
					t.Error("the connection stayed open after the 408")
				}
				if n := e.blobCount(); n != blobsBefore {
					t.Errorf("media storage holds %d files after the cut upload, %d before", n, blobsBefore)
				}
				r := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key})
				if posts, _ := r.JSON["posts"].([]any); len(posts) != 0 {
					t.Errorf("a post was made of the cut request: %s", r.Body)
				}
			})
		}

		t.Run("an ordinary upload passes", func(t *testing.T) {
			hr, _ := http.NewRequest("POST", e.cfg.PublicURL+"/api/v1/publish", strings.NewReader(string(form)))
			hr.Header.Set("Content-Type", ctype)
			hr.Header.Set("X-API-Key", e.a.Key)
			res, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("upload at full speed: %d %s", res.StatusCode, body)
			}
		})
	}, func(c *config.Config) {
		c.MinBodyRate, c.BodyRateWindow = 1024, 200*time.Millisecond
	})
}

// A body that keeps above the minimum rate still has to end within the request's time limit:
// past it the request is answered 408 and the connection closed, with nothing left behind.
// The limit is 1 s here; the client sends 40 bytes every 20 ms (2,000 bytes a second, twice
// the minimum) of a form that would take far longer.
func TestRequestTimeLimit(t *testing.T) {
	e := newAppEnv(t, store.SQLite, func(c *config.Config) {
		c.MinBodyRate, c.BodyRateWindow, c.RequestTimeout = 1000, 200*time.Millisecond, time.Second
	})
	e.defaultChannels(e.a)
	addr := strings.TrimPrefix(e.cfg.PublicURL, "http://")
	form, ctype := multipartBody(t, map[string]string{"project_id": e.a.ProjectID}, map[string][]byte{"video": video(t, 5)})
	blobsBefore := e.blobCount()
	head := fmt.Sprintf("POST /api/v1/publish HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n",
		addr, e.a.Key, ctype, len(form)+1_000_000)
	res, body, closed := slowRequest(t, addr, head, form[:len(form)/2], 40, 20*time.Millisecond)
	var answer struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(body, &answer)
	if res.StatusCode != http.StatusRequestTimeout || answer.Error.Code != "request_timeout" ||
		!strings.Contains(answer.Error.Message, "longer than 1s") {
		t.Fatalf("answer %d %s, want 408 request_timeout naming the limit", res.StatusCode, body)
	}
	if !closed {
		t.Error("the connection stayed open after the 408")
	}
	if n := e.blobCount(); n != blobsBefore {
		t.Errorf("media storage holds %d files after the cut upload, %d before", n, blobsBefore)
	}
	r := e.do(req{Method: "GET", Path: "/api/v1/posts", Key: e.a.Key})
	if posts, _ := r.JSON["posts"].([]any); len(posts) != 0 {
		t.Errorf("a post was made of the cut request: %s", r.Body)
	}
}
