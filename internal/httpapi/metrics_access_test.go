package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/internal/httpapi"
)

// TestMetricsAccess: /metrics is served as the process's settings say, on the main listener
// (every role's handler) and on a listener of its own, and a token, when set, is asked for.
func TestMetricsAccess(t *testing.T) {
	t.Parallel()
	const token = "s3cret-metrics-token-0123"
	registry := func() *prometheus.Registry {
		reg := prometheus.NewRegistry()
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "reelay_test_scrapes_total", Help: "test"})
		reg.MustRegister(c)
		c.Inc()
		return reg
	}
	mainListener := func(access httpapi.MetricsAccess) http.Handler {
		return httpapi.NewOperational(nil, registry(), nil, access)
	}
	type call struct {
		method, path, auth string
		code               int
		has                string
	}
	tests := []struct {
		name    string
		handler http.Handler
		calls   []call
	}{
		{
			name:    "open (the zero value: handlers built for tests)",
			handler: mainListener(httpapi.MetricsAccess{}),
			calls:   []call{{"GET", "/metrics", "", 200, "reelay_test_scrapes_total 1"}},
		},
		{
			name:    "hidden",
			handler: mainListener(httpapi.MetricsAccess{Hidden: true}),
			calls: []call{
				{"GET", "/metrics", "", 404, `"code":"not_found"`},
				{"GET", "/metrics", "Bearer " + token, 404, `"code":"not_found"`},
			},
		},
		{
			name:    "token on the main listener",
			handler: mainListener(httpapi.MetricsAccess{Token: token}),
			calls: []call{
				{"GET", "/metrics", "", 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Bearer wrong-token-0123456789", 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Bearer " + token + "x", 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Bearer " + token[:len(token)-1], 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Basic " + token, 401, `"code":"unauthorized"`},
				{"GET", "/metrics", token, 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Bearer " + token, 200, "reelay_test_scrapes_total 1"},
				{"GET", "/metrics", "bearer " + token, 200, "reelay_test_scrapes_total 1"},
				{"GET", "/healthz", "", 200, `"status":"ok"`},
			},
		},
		{
			name:    "listener of its own",
			handler: httpapi.NewMetricsHandler(registry(), ""),
			calls: []call{
				{"GET", "/metrics", "", 200, "reelay_test_scrapes_total 1"},
				{"POST", "/metrics", "", 405, `"code":"method_not_allowed"`},
				{"GET", "/healthz", "", 404, `"code":"not_found"`},
				{"GET", "/api/v1/projects", "", 404, `"code":"not_found"`},
			},
		},
		{
			name:    "listener of its own, with a token",
			handler: httpapi.NewMetricsHandler(registry(), token),
			calls: []call{
				{"GET", "/metrics", "", 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Bearer nope-nope-nope-nope", 401, `"code":"unauthorized"`},
				{"GET", "/metrics", "Bearer " + token, 200, "reelay_test_scrapes_total 1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range tt.calls {
				req := httptest.NewRequest(c.method, c.path, nil)
				if c.auth != "" {
					req.Header.Set("Authorization", c.auth)
				}
				w := httptest.NewRecorder()
				tt.handler.ServeHTTP(w, req)
				if w.Code != c.code || !strings.Contains(w.Body.String(), c.has) {
					t.Errorf("%s %s (Authorization %q): %d %s, want %d with %s", c.method, c.path, c.auth, w.Code, w.Body, c.code, c.has)
				}
				if strings.Contains(w.Body.String(), token) {
					t.Errorf("%s %s: the answer repeats the token: %s", c.method, c.path, w.Body)
				}
			}
		})
	}
}
