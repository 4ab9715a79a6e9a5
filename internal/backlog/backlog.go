// Package backlog exports the state of reelay's queues as Prometheus gauges: the destinations
// still open and how long the longest-idle one has not moved, River's jobs waiting and how late
// the oldest runs, the webhook deliveries pending and the age of the oldest. They are read from
// the database when /metrics is scraped, not counted by the processes, because they are the
// fleet's state: any process sees all of it, whichever process did the work.
package backlog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/internal/store"
)

// Defaults of Options.
const (
	// DefaultMaxAge bounds how often the database is read: several Prometheus servers, or
	// one scraping often, share a read made in the last 15 s.
	DefaultMaxAge = 15 * time.Second
	// DefaultTimeout bounds a read, so that a slow database delays a scrape by this much at
	// most (the gauges are then left out of that scrape).
	DefaultTimeout = 5 * time.Second
)

// StateReader reads the backlog as of now (the store's QueueState).
type StateReader interface {
	QueueState(ctx context.Context, now time.Time) (store.QueueState, error)
}

// Options say what a Collector reads and reports.
type Options struct {
	// Platforms and Queues are reported even when nothing of theirs is open or waiting, at
	// zero, so that alerts see a series from the start; others appear when the database
	// holds some.
	Platforms []string
	Queues    []string
	// MaxAge is how long a read is reused (DefaultMaxAge when zero); Timeout bounds a read
	// (DefaultTimeout when zero).
	MaxAge  time.Duration
	Timeout time.Duration
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// openStatuses are the destination statuses that are not final (store.Settled), reported at
// zero for every platform.
var openStatuses = []string{store.DestQueued, store.DestUploading, store.DestProcessing}

// jobStates are the labels of reelay_jobs, in the order JobBacklog holds them.
var jobStates = []string{"available", "due", "scheduled", "running"}

// Collector is a prometheus.Collector of the backlog gauges.
type Collector struct {
	read StateReader
	opts Options

	destinationsOpen *prometheus.Desc
	destinationsIdle *prometheus.Desc
	jobs             *prometheus.Desc
	jobsLateness     *prometheus.Desc
	webhooksPending  *prometheus.Desc
	webhooksOldest   *prometheus.Desc
	readErrors       prometheus.Counter

	// mu makes concurrent scrapes wait for one read instead of each making its own.
	mu     sync.Mutex
	last   store.QueueState
	lastAt time.Time // when last was read; zero before the first read
	lastOK bool      // a failed read is reused as long as a good one, sparing a database in trouble
}

// New builds a Collector reading through read.
func New(read StateReader, opts Options) *Collector {
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Collector{
		read: read, opts: opts,
		destinationsOpen: prometheus.NewDesc("reelay_destinations_open",
			"Destinations not yet settled (published, sent to inbox, failed or canceled), by platform and status; those of posts scheduled in the future included.",
			[]string{"platform", "status"}, nil),
		destinationsIdle: prometheus.NewDesc("reelay_destinations_oldest_idle_seconds",
			"Among the open destinations that are due (their post is not scheduled in the future), the longest time one has not moved: since its last step, or since its post's scheduled time when later. 0 when none is due.",
			[]string{"platform"}, nil),
		jobs: prometheus.NewDesc("reelay_jobs",
			"River jobs not finished, by queue and state: available (waiting for a worker), due (scheduled or retrying, their time come), scheduled (their time to come), running.",
			[]string{"queue", "state"}, nil),
		jobsLateness: prometheus.NewDesc("reelay_jobs_oldest_due_seconds",
			"How long the oldest job that is due and not running has waited past its scheduled time, by queue; 0 when none waits.",
			[]string{"queue"}, nil),
		webhooksPending: prometheus.NewDesc("reelay_webhook_deliveries_pending",
			"Webhook deliveries neither delivered nor given up (waiting for their first attempt or a retry).", nil, nil),
		webhooksOldest: prometheus.NewDesc("reelay_webhook_deliveries_oldest_pending_seconds",
			"Age of the oldest pending webhook delivery; 0 when none is pending.", nil, nil),
		readErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "reelay_backlog_read_errors_total",
			Help: "Reads of the backlog gauges that failed (the database did not answer in time, or at all); the gauges are left out of the scrapes until a read succeeds."}),
	}
}

// Describe sends the descriptions of every metric Collect may send.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.destinationsOpen, c.destinationsIdle, c.jobs, c.jobsLateness, c.webhooksPending, c.webhooksOldest} {
		ch <- d
	}
	c.readErrors.Describe(ch)
}

// Collect sends the gauges of the latest read, reading again when it is older than MaxAge.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	qs, at, ok := c.state()
	ch <- c.readErrors
	if !ok {
		return
	}
	age := func(since *time.Time) float64 {
		if since == nil {
			return 0
		}
		return max(at.Sub(*since).Seconds(), 0)
	}

	open := map[[2]string]int64{}
	idle := map[string]float64{}
	for _, p := range c.opts.Platforms {
		idle[p] = 0
		for _, s := range openStatuses {
			open[[2]string{p, s}] = 0
		}
	}
	for _, d := range qs.Destinations {
		open[[2]string{d.Platform, d.Status}] += d.Count
		idle[d.Platform] = max(idle[d.Platform], age(d.IdleSince))
	}
	for k, n := range open {
		ch <- prometheus.MustNewConstMetric(c.destinationsOpen, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	for p, s := range idle {
		ch <- prometheus.MustNewConstMetric(c.destinationsIdle, prometheus.GaugeValue, s, p)
	}

	backlogs := map[string]store.JobBacklog{}
	for _, q := range c.opts.Queues {
		backlogs[q] = store.JobBacklog{Queue: q}
	}
	for _, j := range qs.Jobs {
		backlogs[j.Queue] = j
	}
	for q, j := range backlogs {
		for i, n := range []int64{j.Available, j.Due, j.Scheduled, j.Running} {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), q, jobStates[i])
		}
		ch <- prometheus.MustNewConstMetric(c.jobsLateness, prometheus.GaugeValue, age(j.OldestDue), q)
	}

	ch <- prometheus.MustNewConstMetric(c.webhooksPending, prometheus.GaugeValue, float64(qs.WebhooksPending))
	ch <- prometheus.MustNewConstMetric(c.webhooksOldest, prometheus.GaugeValue, age(qs.OldestWebhookPending))
}

// state answers the latest read and when it was made, reading again when it is older than
// MaxAge; ok is false when that read failed.
func (c *Collector) state() (qs store.QueueState, at time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Now()
	if !c.lastAt.IsZero() && now.Sub(c.lastAt) < c.opts.MaxAge {
		return c.last, c.lastAt, c.lastOK
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	read, err := c.read.QueueState(ctx, now)
	c.lastAt = now
	if err != nil {
		c.readErrors.Inc()
		c.opts.Logger.Warn("reading the backlog for /metrics failed", "error", err)
		c.last, c.lastOK = store.QueueState{}, false
		return c.last, now, false
	}
	c.last, c.lastOK = read, true
	return read, now, true
}
