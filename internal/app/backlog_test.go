package app_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestBacklogGaugesRoles: the processes that serve the API serve the backlog gauges, with a
// series for every platform and queue from the start; workers do not read the database for
// them.
func TestBacklogGaugesRoles(t *testing.T) {
	for _, tt := range []struct {
		role  string
		serve bool
	}{
		{config.RoleAll, true},
		{config.RoleAPI, true},
		{config.RoleWorker, false},
	} {
		t.Run(tt.role, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			apptest.Start(t, storetest.New(t, store.SQLite),
				apptest.WithConfig(func(c *config.Config) { c.Role = tt.role }),
				apptest.WithParams(func(p *app.Params) { p.Registry = reg }))
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			series := map[string]int{}
			for _, mf := range families {
				series[mf.GetName()] = len(mf.GetMetric())
			}
			if !tt.serve {
				if n := series["reelay_jobs"]; n != 0 {
					t.Errorf("a %s process serves %d reelay_jobs series", tt.role, n)
				}
				return
			}
			// 12 platforms in 3 open statuses; 5 queues in 4 states.
			for name, want := range map[string]int{"reelay_destinations_open": 36, "reelay_destinations_oldest_idle_seconds": 12,
				"reelay_jobs": 20, "reelay_jobs_oldest_due_seconds": 5, "reelay_webhook_deliveries_pending": 1} {
				if series[name] < want {
					t.Errorf("a %s process serves %d %s series, want at least %d", tt.role, series[name], name, want)
				}
			}
		})
	}
}
