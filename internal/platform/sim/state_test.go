package sim_test

import (
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func TestMemoryState(t *testing.T) {
	simtest.TestState(t, func(_ *testing.T, now func() time.Time) sim.State { return sim.NewMemoryState(now) })
}
