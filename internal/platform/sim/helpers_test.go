package sim

// The helpers of the persistence tests still in package sim, which cannot import simtest (it
// imports sim): simtest's States, Alternating and BlobCount, for the simulators not yet in a
// package of their own.

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store/storetest"
	"gocloud.dev/blob"
)

// states are the States the simulators' persistence tests run on: in memory, and in the
// database of each dialect available.
func states(t *testing.T) map[string]func(t *testing.T, now func() time.Time) State {
	out := map[string]func(t *testing.T, now func() time.Time) State{
		"memory": func(_ *testing.T, now func() time.Time) State { return NewMemoryState(now) },
	}
	for _, d := range storetest.Dialects() {
		out[string(d)] = func(t *testing.T, now func() time.Time) State { return storetest.New(t, d).SimState(now) }
	}
	return out
}

// alternating sends each request to the next of the handlers in turn: a load balancer in front
// of several processes serving one simulator.
func alternating(handlers ...http.Handler) http.Handler {
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[(n.Add(1)-1)%uint64(len(handlers))].ServeHTTP(w, r)
	})
}

// blobCount counts the blobs below "sandbox/" (every simulator's).
func blobCount(t *testing.T, b *blob.Bucket) int {
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
