package metasim

import (
	"testing"
	"time"
)

func TestContainerPhase(t *testing.T) {
	created := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	ready := created.Add(time.Minute)
	tests := []struct {
		name                                string
		now                                 time.Time
		fetched, refused, atOnce, published bool
		want                                Phase
	}{
		{"fetching", created.Add(2 * time.Minute), false, false, false, false, InProgress},
		{"processing", created.Add(30 * time.Second), true, false, false, false, InProgress},
		{"ready", ready, true, false, false, false, Finished},
		{"refused after processing", ready, true, true, false, false, Failed},
		{"refusal not yet shown", created.Add(30 * time.Second), true, true, false, false, InProgress},
		{"failed fetch shows at once", created.Add(time.Second), true, true, true, false, Failed},
		{"a day old", created.Add(24 * time.Hour), true, false, false, false, Expired},
		{"refused and a day old", created.Add(24 * time.Hour), true, true, false, false, Failed},
		{"published", created.Add(48 * time.Hour), true, false, false, true, Published},
	}
	for _, tt := range tests {
		got := ContainerPhase(tt.now, created, ready, 24*time.Hour, tt.fetched, tt.refused, tt.atOnce, tt.published)
		if got != tt.want {
			t.Errorf("%s: phase %d, want %d", tt.name, got, tt.want)
		}
	}
}
