package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/procstat"
)

// Simulators says where the platform simulators of a run were, and which of them published
// the run's posts.
type Simulators struct {
	// Apart says they ran in a process of the bench's own (ProcessID), apart from the server,
	// each with its state in memory, and the server reached them at its sandbox URL
	// (REELAY_SANDBOX_URL); otherwise the server's own simulators, which keep their state in
	// its database, served the sandbox channels.
	Apart     bool `json:"apart"`
	ProcessID int  `json:"process_id,omitempty"`
	// PublishedApart and PublishedInServer count, per platform, the items the simulators
	// apart (when they ran) and the server's own (for the bench's account) published, over
	// the run. A platform is in both when either published on it.
	PublishedApart    map[string]int `json:"published_apart,omitempty"`
	PublishedInServer map[string]int `json:"published_in_server"`
}

// SimulatorsReport is embedded in the scenarios' results: their "simulators".
type SimulatorsReport struct {
	Simulators *Simulators `json:"simulators,omitempty"`
}

// SetSimulators records where the simulators were and what they published.
func (r *SimulatorsReport) SetSimulators(s *Simulators) { r.Simulators = s }

// CountPublished counts what the simulators published on every platform: the server's own
// (read through server) and, when apart is not nil, those of the host apart (pid) it reaches.
func CountPublished(ctx context.Context, server, apart *Client, pid int) (*Simulators, error) {
	s := &Simulators{Apart: apart != nil, ProcessID: pid, PublishedInServer: map[string]int{}}
	if apart != nil {
		s.PublishedApart = map[string]int{}
	}
	for _, p := range platform.All {
		rec, err := server.Received(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("what the server's %s simulator published: %w", p, err)
		}
		inServer, apartN := len(rec.Published), 0
		if apart != nil {
			if rec, err = apart.Received(ctx, p); err != nil {
				return nil, fmt.Errorf("what the %s simulator apart published: %w", p, err)
			}
			apartN = len(rec.Published)
		}
		if inServer > 0 || apartN > 0 {
			s.PublishedInServer[p] = inServer
			if apart != nil {
				s.PublishedApart[p] = apartN
			}
		}
	}
	return s, nil
}

// String is the line printed under a scenario's summary.
func (s *Simulators) String() string {
	count := func(m map[string]int) string {
		var parts []string
		for _, p := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%s %d", p, m[p]))
		}
		if len(parts) == 0 {
			return "nothing"
		}
		return strings.Join(parts, ", ")
	}
	if !s.Apart {
		return "platform simulators: the server's own, which published " + count(s.PublishedInServer)
	}
	return fmt.Sprintf("platform simulators: apart from the server, in process %d, which published %s; the server's own published %s",
		s.ProcessID, count(s.PublishedApart), count(s.PublishedInServer))
}

// startCPU reads the CPU time process pid has used so far, and returns the function that
// answers how much it used since, in seconds (nil when pid is 0 or /proc cannot be read).
func startCPU(pid int) func() *float64 {
	if pid == 0 {
		return func() *float64 { return nil }
	}
	before, err := procstat.ReadCPU(pid)
	return func() *float64 {
		if err != nil {
			return nil
		}
		after, err := procstat.ReadCPU(pid)
		if err != nil {
			return nil
		}
		s := round3(after - before)
		return &s
	}
}
