package simset_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim/simset"
)

// TestEveryPlatformHasItsSimulator: the list names exactly the platforms of platform.All, so a
// platform cannot be supported without a sandbox, nor a simulator mounted for none.
func TestEveryPlatformHasItsSimulator(t *testing.T) {
	got := slices.Sorted(maps.Keys(simset.All))
	want := slices.Sorted(slices.Values(platform.All))
	if !slices.Equal(got, want) {
		t.Errorf("simulators of %v, want those of platform.All %v", got, want)
	}
	for name, f := range simset.All {
		if f == nil {
			t.Errorf("%s: no factory", name)
		}
	}
}
