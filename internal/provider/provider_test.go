package provider

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

func TestPollDelay(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		first, most time.Duration
		polls       int
		want        time.Duration
	}{
		{100 * ms, time.Minute, 0, 100 * ms},
		{100 * ms, time.Minute, 1, 100 * ms},
		{100 * ms, time.Minute, 2, 200 * ms},
		{100 * ms, time.Minute, 3, 200 * ms},
		{100 * ms, time.Minute, 4, 400 * ms},
		{100 * ms, time.Minute, 19, 51200 * ms},
		{100 * ms, time.Minute, 20, time.Minute},
		{100 * ms, time.Minute, 1 << 20, time.Minute}, // no overflow
		{2 * time.Minute, time.Minute, 0, time.Minute},
		{0, time.Minute, 10, 0},
	} {
		if got := PollDelay(c.first, c.most, c.polls); got != c.want {
			t.Errorf("PollDelay(%s, %s, %d) = %s, want %s", c.first, c.most, c.polls, got, c.want)
		}
	}
}
