package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// The benchmarks run the whole handler stack (request id, metrics, access log at the default
// discarding logger, credential lookup, rate limiter, handler, JSON) on a real SQLite store, in
// process: no TCP and no contract validation, which is test-only cost. `reelay bench api`
// measures the same endpoint over loopback TCP.

// benchEnv is the server of a benchmark and one tenant's key.
type benchEnv struct {
	h      http.Handler
	tenant tenant
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	st := storetest.New(b, store.SQLite)
	box, _ := secret.NewBox(bytes.Repeat([]byte{3}, secret.KeySize))
	usage := auth.NewUsageTracker(st.TouchAPIKeys, nil)
	// A limit out of reach: the benchmark measures the limiter's cost, not its refusals.
	h := httpapi.New(httpapi.Options{Store: st, Access: publish.ChannelAccess{Box: box}, Usage: usage, RateLimitRPS: 1e9, RateLimitBurst: 1 << 30,
		Sandbox: true, Registry: prometheus.NewRegistry()})
	return &benchEnv{h: h, tenant: apptest.NewTenant(b, st, "bench", "default")}
}

func (e *benchEnv) request(key string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "http://reelay.test"+httpapi.APIPrefix+"/projects", nil)
	r.Header.Set("X-API-Key", key)
	return r
}

// serve answers r, which the handler does not modify (it works on shallow copies), so one
// request value per goroutine is reused as a server would parse a fresh one.
func (e *benchEnv) serve(r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	return rec
}

func BenchmarkAuthenticatedListProjects(b *testing.B) {
	e := newBenchEnv(b)
	if rec := e.serve(e.request(e.tenant.Key)); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), e.tenant.ProjectID) {
		b.Fatalf("GET /projects: %d %s", rec.Code, rec.Body)
	}
	b.Run("serial", func(b *testing.B) {
		r := e.request(e.tenant.Key)
		b.ReportAllocs()
		for b.Loop() {
			if rec := e.serve(r); rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r := e.request(e.tenant.Key)
			for pb.Next() {
				if rec := e.serve(r); rec.Code != http.StatusOK {
					b.Errorf("status %d: %s", rec.Code, rec.Body)
					return
				}
			}
		})
	})
}

func BenchmarkAuthRejected(b *testing.B) {
	e := newBenchEnv(b)
	unknown, _ := auth.NewKey("never stored")
	if rec := e.serve(e.request(unknown)); rec.Code != http.StatusUnauthorized {
		b.Fatalf("unknown key: %d %s", rec.Code, rec.Body)
	}
	b.Run("serial", func(b *testing.B) {
		r := e.request(unknown)
		b.ReportAllocs()
		for b.Loop() {
			if rec := e.serve(r); rec.Code != http.StatusUnauthorized {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r := e.request(unknown)
			for pb.Next() {
				if rec := e.serve(r); rec.Code != http.StatusUnauthorized {
					b.Errorf("status %d: %s", rec.Code, rec.Body)
					return
				}
			}
		})
	})
}
