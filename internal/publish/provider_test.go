package publish

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestHTTPClientKeepsConnections: after a wave of concurrent requests to one host, a second
// wave reuses the connections of the first instead of dialing again.
func TestHTTPClientKeepsConnections(t *testing.T) {
	const parallel = 32
	var dialed atomic.Int64
	// Every request of a wave waits for all the others, so that a wave really holds
	// parallel connections at once.
	var arrived sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		arrived.Wait()
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialed.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	client := NewHTTPClient(0)
	wave := func() {
		arrived.Add(parallel)
		var done sync.WaitGroup
		for range parallel {
			done.Add(1)
			go func() {
				defer done.Done()
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		done.Wait()
	}
	wave()
	if got := dialed.Load(); got != parallel {
		t.Fatalf("first wave: %d connections, want %d", got, parallel)
	}
	wave()
	if got := dialed.Load(); got != parallel {
		t.Errorf("after the second wave %d connections were made in all; want the first wave's %d reused", got, parallel)
	}
}
