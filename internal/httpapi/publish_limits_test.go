package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
)

// A publish whose declared length is over the limit is refused from its headers: a client that
// asks Expect: 100-continue gets the 413 instead of "100 Continue", so it never sends the
// body; the answer states the limits in MB (10^6 bytes), as the README and docs/CONTRACT.md do.
func TestPublishRefusesAnOversizedBodyBeforeItIsSent(t *testing.T) {
	e := newAppEnv(t, store.SQLite)
	e.defaultChannels(e.a)
	addr := strings.TrimPrefix(e.cfg.PublicURL, "http://")
	cases := []struct {
		name, path, contentType string
		length                  int64
		want                    []string
	}{
		{"multipart over the form's limit", "/api/v1/publish", "multipart/form-data; boundary=xyz", 150_000_000,
			[]string{"150 MB", "at most 114 MB", "video of up to 100 MB", "thumbnail of up to 10 MB"}},
		{"the alias", "/api/v1/posts/publish", "multipart/form-data; boundary=xyz", 114_000_001, []string{"114 MB"}},
		{"JSON over its limit", "/api/v1/publish", "application/json", 5_000_000, []string{"larger than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
				c.path, addr, e.a.Key, c.contentType, c.length)
			// Not a byte of the body is sent: the answer must come from the headers alone.
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer before the body: %v", err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d (want 413 before the body): %s", res.StatusCode, body)
			}
			var answer struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &answer); err != nil || answer.Error.Code != "payload_too_large" {
				t.Fatalf("answer: %s (%v)", body, err)
			}
			for _, w := range c.want {
				if !strings.Contains(answer.Error.Message, w) {
					t.Errorf("message %q does not say %q", answer.Error.Message, w)
				}
			}
		})
	}
	if n := e.blobCount(); n != 0 {
		t.Errorf("%d files stored", n)
	}
}
