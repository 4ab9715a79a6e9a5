package publish

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/reelay/reelay/internal/provider"
)

// Metrics counts what the publish workers do, for /metrics: only worker processes record
// them, so an operator reads them from each worker. A nil *Metrics records nothing.
type Metrics struct {
	steps        *prometheus.CounterVec
	stepDuration *prometheus.HistogramVec
	settled      *prometheus.CounterVec
}

// NewMetrics registers the publish metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reelay_publish_steps_total",
			Help: "Steps of destinations run against their platforms, by platform and outcome (ok, transient_error, permanent_error).",
		}, []string{"platform", "outcome"}),
		stepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "reelay_publish_step_duration_seconds",
			Help:    "Time a platform took to answer one step of a destination (an upload chunk, a status poll, ...).",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"platform"}),
		settled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reelay_destinations_settled_total",
			Help: "Destinations that reached a final status in this process, by platform, status and, for failures, error category.",
		}, []string{"platform", "status", "error_category"}),
	}
	reg.MustRegister(m.steps, m.stepDuration, m.settled)
	return m
}

// step records one provider step that took d and ended with err.
func (m *Metrics) step(platformName string, d time.Duration, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "permanent_error"
		if provider.AsError(err).Transient {
			outcome = "transient_error"
		}
	}
	m.steps.WithLabelValues(platformName, outcome).Inc()
	m.stepDuration.WithLabelValues(platformName).Observe(d.Seconds())
}

// settle records a destination that reached status; category is a failure's error category.
func (m *Metrics) settle(platformName, status, category string) {
	if m == nil {
		return
	}
	if platformName == "" {
		platformName = "unknown"
	}
	m.settled.WithLabelValues(platformName, status, category).Inc()
}
