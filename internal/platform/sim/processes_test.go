package sim_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim"
)

// processes serves a simulator from several processes on one State, process making each: from
// two in turn (both, each request to the other than the last) and from a third (restarted, as
// one started after a restart).
func processes(t *testing.T, process func() http.Handler) (both, restarted *httptest.Server) {
	t.Helper()
	both = httptest.NewServer(sim.Alternating(process(), process()))
	t.Cleanup(both.Close)
	restarted = httptest.NewServer(process())
	t.Cleanup(restarted.Close)
	return both, restarted
}

// postAtOnce sends n POSTs of body to path at once and answers the bodies of their answers.
func postAtOnce(t *testing.T, srv *httptest.Server, n int, path, auth, ctype string, body []byte) [][]byte {
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

// downState is a State whose database is unreachable for updates.
type downState struct{ sim.State }

func (downState) Update(context.Context, func(sim.Tx) error) error {
	return errors.New("connection refused")
}
