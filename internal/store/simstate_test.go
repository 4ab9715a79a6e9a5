package store_test

import (
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

var _ sim.State = (*store.SimState)(nil)

func TestSimState(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			simtest.TestState(t, func(t *testing.T, now func() time.Time) sim.State {
				return storetest.New(t, d).SimState(now)
			})
		})
	}
}
