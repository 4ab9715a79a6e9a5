package webhooks

import "github.com/prometheus/client_golang/prometheus"

// Metrics counts delivery attempts for /metrics (worker processes). A nil *Metrics counts
// nothing.
type Metrics struct {
	attempts *prometheus.CounterVec
}

// NewMetrics registers the webhook metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reelay_webhook_attempts_total",
		Help: "Webhook delivery attempts, by outcome: delivered, retried (failed, another attempt to come), failed (the last), skipped (the webhook was disabled).",
	}, []string{"outcome"})}
	reg.MustRegister(m.attempts)
	return m
}

func (m *Metrics) count(outcome string) {
	if m != nil {
		m.attempts.WithLabelValues(outcome).Inc()
	}
}
