package simtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/store/storetest"
)

// What the simulators' persistence tests share: the States they run on, several processes
// serving one simulator, and requests sent at once.

// States are the States the simulators' persistence tests run on: in memory, and in the
// database of each dialect available.
func States(t *testing.T) map[string]Open {
	out := map[string]Open{
		"memory": func(_ *testing.T, now func() time.Time) sim.State { return sim.NewMemoryState(now) },
	}
	for _, d := range storetest.Dialects() {
		out[string(d)] = func(t *testing.T, now func() time.Time) sim.State { return storetest.New(t, d).SimState(now) }
	}
	return out
}

// Alternating sends each request to the next of the handlers in turn: a load balancer in front
// of several processes serving one simulator.
func Alternating(handlers ...http.Handler) http.Handler {
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[(n.Add(1)-1)%uint64(len(handlers))].ServeHTTP(w, r)
	})
}

// BlobCount counts the blobs below "sandbox/" (every simulator's).
func BlobCount(t *testing.T, b *blob.Bucket) int {
	t.Helper()
	n := 0
	it := b.List(&blob.ListOptions{Prefix: "sandbox/"})
	for {
		_, err := it.Next(context.Background())
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// Processes serves a simulator from several processes on one State, process making each: from
// two in turn (both, each request to the other than the last) and from a third (restarted, as
// one started after a restart).
func Processes(t *testing.T, process func() http.Handler) (both, restarted *httptest.Server) {
	t.Helper()
	both = httptest.NewServer(Alternating(process(), process()))
	t.Cleanup(both.Close)
	restarted = httptest.NewServer(process())
	t.Cleanup(restarted.Close)
	return both, restarted
}

// PostAtOnce sends n POSTs of body to path at once and answers the bodies of their answers.
func PostAtOnce(t *testing.T, srv *httptest.Server, n int, path, auth, ctype string, body []byte) [][]byte {
	t.Helper()
	out := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			out[i], _ = io.ReadAll(resp.Body)
		})
	}
	wg.Wait()
	return out
}

// DownState is a State whose database is unreachable for updates.
type DownState struct{ sim.State }

func (DownState) Update(context.Context, func(sim.Tx) error) error {
	return errors.New("connection refused")
}
