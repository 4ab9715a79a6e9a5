package backlog_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/reelay/reelay/internal/backlog"
	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/store"
)

// fakeState answers a set state (or error) and counts the reads.
type fakeState struct {
	mu    sync.Mutex
	state store.QueueState
	err   error
	reads int
	at    []time.Time
}

func (f *fakeState) QueueState(ctx context.Context, now time.Time) (store.QueueState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	f.at = append(f.at, now)
	if _, ok := ctx.Deadline(); !ok {
		return store.QueueState{}, errors.New("read without a deadline")
	}
	return f.state, f.err
}

func (f *fakeState) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func ptr(t time.Time) *time.Time { return &t }

var start = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func newCollector(f *fakeState, clock *clocktest.Clock) *backlog.Collector {
	return backlog.New(f, backlog.Options{Platforms: []string{"tiktok", "youtube"}, Queues: []string{"default", "publish"},
		MaxAge: 15 * time.Second, Now: clock.Now})
}

func TestCollectorValues(t *testing.T) {
	tests := []struct {
		name  string
		state store.QueueState
		want  string
	}{
		{
			name: "empty: every known series at zero",
			want: `
# HELP reelay_destinations_oldest_idle_seconds x
# TYPE reelay_destinations_oldest_idle_seconds gauge
reelay_destinations_oldest_idle_seconds{platform="tiktok"} 0
reelay_destinations_oldest_idle_seconds{platform="youtube"} 0
# HELP reelay_destinations_open x
# TYPE reelay_destinations_open gauge
reelay_destinations_open{platform="tiktok",status="processing"} 0
reelay_destinations_open{platform="tiktok",status="queued"} 0
reelay_destinations_open{platform="tiktok",status="uploading"} 0
reelay_destinations_open{platform="youtube",status="processing"} 0
reelay_destinations_open{platform="youtube",status="queued"} 0
reelay_destinations_open{platform="youtube",status="uploading"} 0
# HELP reelay_jobs x
# TYPE reelay_jobs gauge
reelay_jobs{queue="default",state="available"} 0
reelay_jobs{queue="default",state="due"} 0
reelay_jobs{queue="default",state="running"} 0
reelay_jobs{queue="default",state="scheduled"} 0
reelay_jobs{queue="publish",state="available"} 0
reelay_jobs{queue="publish",state="due"} 0
reelay_jobs{queue="publish",state="running"} 0
reelay_jobs{queue="publish",state="scheduled"} 0
# HELP reelay_jobs_oldest_due_seconds x
# TYPE reelay_jobs_oldest_due_seconds gauge
reelay_jobs_oldest_due_seconds{queue="default"} 0
reelay_jobs_oldest_due_seconds{queue="publish"} 0
# HELP reelay_webhook_deliveries_oldest_pending_seconds x
# TYPE reelay_webhook_deliveries_oldest_pending_seconds gauge
reelay_webhook_deliveries_oldest_pending_seconds 0
# HELP reelay_webhook_deliveries_pending x
# TYPE reelay_webhook_deliveries_pending gauge
reelay_webhook_deliveries_pending 0
`,
		},
		{
			name: "backlog: counts, the oldest per platform and queue, an unknown queue",
			state: store.QueueState{
				Destinations: []store.OpenDestinations{
					{Platform: "youtube", Status: store.DestQueued, Count: 3, IdleSince: ptr(start.Add(-10 * time.Minute))},
					{Platform: "youtube", Status: store.DestUploading, Count: 2, IdleSince: ptr(start.Add(-25 * time.Minute))},
					// Open, none due (scheduled in the future).
					{Platform: "tiktok", Status: store.DestQueued, Count: 4},
				},
				Jobs: []store.JobBacklog{
					{Queue: "publish", Available: 5, Due: 1, Scheduled: 7, Running: 2, OldestDue: ptr(start.Add(-90 * time.Second))},
					{Queue: "convert", Running: 1},
				},
				WebhooksPending:      6,
				OldestWebhookPending: ptr(start.Add(-time.Hour)),
			},
			want: `
# HELP reelay_destinations_oldest_idle_seconds x
# TYPE reelay_destinations_oldest_idle_seconds gauge
reelay_destinations_oldest_idle_seconds{platform="tiktok"} 0
reelay_destinations_oldest_idle_seconds{platform="youtube"} 1500
# HELP reelay_destinations_open x
# TYPE reelay_destinations_open gauge
reelay_destinations_open{platform="tiktok",status="processing"} 0
reelay_destinations_open{platform="tiktok",status="queued"} 4
reelay_destinations_open{platform="tiktok",status="uploading"} 0
reelay_destinations_open{platform="youtube",status="processing"} 0
reelay_destinations_open{platform="youtube",status="queued"} 3
reelay_destinations_open{platform="youtube",status="uploading"} 2
# HELP reelay_jobs x
# TYPE reelay_jobs gauge
reelay_jobs{queue="convert",state="available"} 0
reelay_jobs{queue="convert",state="due"} 0
reelay_jobs{queue="convert",state="running"} 1
reelay_jobs{queue="convert",state="scheduled"} 0
reelay_jobs{queue="default",state="available"} 0
reelay_jobs{queue="default",state="due"} 0
reelay_jobs{queue="default",state="running"} 0
reelay_jobs{queue="default",state="scheduled"} 0
reelay_jobs{queue="publish",state="available"} 5
reelay_jobs{queue="publish",state="due"} 1
reelay_jobs{queue="publish",state="running"} 2
reelay_jobs{queue="publish",state="scheduled"} 7
# HELP reelay_jobs_oldest_due_seconds x
# TYPE reelay_jobs_oldest_due_seconds gauge
reelay_jobs_oldest_due_seconds{queue="convert"} 0
reelay_jobs_oldest_due_seconds{queue="default"} 0
reelay_jobs_oldest_due_seconds{queue="publish"} 90
# HELP reelay_webhook_deliveries_oldest_pending_seconds x
# TYPE reelay_webhook_deliveries_oldest_pending_seconds gauge
reelay_webhook_deliveries_oldest_pending_seconds 3600
# HELP reelay_webhook_deliveries_pending x
# TYPE reelay_webhook_deliveries_pending gauge
reelay_webhook_deliveries_pending 6
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeState{state: tt.state}
			c := newCollector(f, clocktest.New(start))
			names := []string{"reelay_destinations_open", "reelay_destinations_oldest_idle_seconds", "reelay_jobs",
				"reelay_jobs_oldest_due_seconds", "reelay_webhook_deliveries_pending", "reelay_webhook_deliveries_oldest_pending_seconds"}
			// Help texts are the collector's own; only the samples are compared.
			if err := testutil.CollectAndCompare(c, strings.NewReader(withHelp(t, c, tt.want)), names...); err != nil {
				t.Error(err)
			}
		})
	}
}

// withHelp replaces the placeholder help texts of want with the collector's.
func withHelp(t *testing.T, c prometheus.Collector, want string) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		want = strings.Replace(want, "# HELP "+mf.GetName()+" x\n", "# HELP "+mf.GetName()+" "+mf.GetHelp()+"\n", 1)
	}
	return want
}

// TestCollectorReadsAtMostOncePerMaxAge: scrapes within MaxAge of a read share it; the first
// after reads again, as of its own time. A failed read is shared too and leaves the gauges out.
func TestCollectorReadsAtMostOncePerMaxAge(t *testing.T) {
	f := &fakeState{state: store.QueueState{WebhooksPending: 2, OldestWebhookPending: ptr(start.Add(-time.Minute))}}
	clock := clocktest.New(start)
	c := newCollector(f, clock)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	scrape := func() {
		t.Helper()
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
	}

	scrape()
	scrape()
	if n := f.count(); n != 1 {
		t.Fatalf("two scrapes in a row read %d times, want 1", n)
	}
	clock.Advance(14 * time.Second)
	scrape()
	if n := f.count(); n != 1 {
		t.Fatalf("a scrape 14 s after the read read again (%d reads)", n)
	}
	// The shared read's ages are as of when it was made.
	if v := sampleOf(t, reg, "reelay_webhook_deliveries_oldest_pending_seconds"); v != 60 {
		t.Errorf("oldest pending %v s, want 60 (as of the read)", v)
	}
	clock.Advance(time.Second)
	scrape()
	if n := f.count(); n != 2 || !f.at[1].Equal(start.Add(15*time.Second)) {
		t.Fatalf("a scrape 15 s after the read: %d reads, the last at %v", n, f.at[len(f.at)-1])
	}

	// A failed read: the gauges are left out, the error counted, and the failure shared.
	f.mu.Lock()
	f.err = errors.New("database away")
	f.mu.Unlock()
	clock.Advance(15 * time.Second)
	for range 2 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if len(families) != 1 || families[0].GetName() != "reelay_backlog_read_errors_total" {
			t.Fatalf("after a failed read, /metrics holds %d families, the first %s", len(families), families[0].GetName())
		}
	}
	if n := f.count(); n != 3 {
		t.Fatalf("%d reads after a failure and two scrapes, want 3", n)
	}
	if v := sampleOf(t, reg, "reelay_backlog_read_errors_total"); v != 1 {
		t.Errorf("%v read errors counted, want 1", v)
	}
}

// sampleOf is the value of the one sample of the metric name that reg gathers now (a gathering
// is a scrape: it may read).
func sampleOf(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			m := mf.GetMetric()[0]
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("%s is not served", name)
	return 0
}
