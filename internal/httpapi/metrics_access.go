package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/reelay/reelay/internal/apierr"
)

// MetricsAccess says whether and how a listener serves GET /metrics. The zero value serves
// it to anyone, as handlers built for tests expect; a process decides from its settings
// (REELAY_METRICS_ADDR, REELAY_METRICS_TOKEN) in internal/app.
type MetricsAccess struct {
	// Hidden leaves /metrics out of this listener (404): it is served on a listener of its
	// own, or not at all.
	Hidden bool
	// Token, when not empty, is the bearer token a request for /metrics must carry.
	Token string
}

// metricsHandler serves registry, behind token when there is one.
func metricsHandler(registry *prometheus.Registry, token string) http.Handler {
	serve := promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
	if token == "" {
		return serve
	}
	// Compared as digests, so that neither the token's bytes nor its length show in the
	// time a comparison takes.
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			writeError(w, r, apierr.Unauthorized("metrics need the token set in REELAY_METRICS_TOKEN, as Authorization: Bearer <token>"))
			return
		}
		serve.ServeHTTP(w, r)
	})
}

// NewMetricsHandler is what the metrics listener (REELAY_METRICS_ADDR) serves: GET /metrics,
// behind token when there is one, and a 404 in the contract's error body for anything else.
// It records no request metrics of its own: scrapes are not traffic worth counting.
func NewMetricsHandler(registry *prometheus.Registry, token string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metricsHandler(registry, token))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, r, apierr.Newf(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "%s is not allowed on /metrics; use GET", r.Method))
			return
		}
		writeError(w, r, apierr.Newf(http.StatusNotFound, apierr.CodeNotFound, "no endpoint at %s: this listener serves /metrics only", r.URL.Path))
	})
	return mux
}
