package bench

import (
	"compress/flate"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The machines these scenarios run on are "2-core" machines of one kind, but their speed
// differs by more than two times from one to the next, and by a third within an hour on the
// same one (docs/benchmarks-history.md, "2026-11-26, a sixth machine"). A figure alone cannot
// tell whether the code or the machine moved. So every publishing scenario also times fixed work
// just before it starts and just after it ends, in the same process, and reports it beside
// its figures: a yardstick for comparing runs, not a target. It has two parts, because the
// two have been seen to move apart: Go code on the CPU, and small messages over loopback TCP
// (the system calls and wake-ups that every HTTP request of the scenarios pays).

// Speed is how much of the yardstick's work a machine did per second.
type Speed struct {
	// OneCoreMBps is the text compressed per second (MB, 10^6 bytes) by one goroutine;
	// AllCoresMBps by GOMAXPROCS goroutines at once. A quiet machine with n free cores gives
	// about n times the first in the second.
	OneCoreMBps  float64 `json:"one_core_mb_per_s"`
	AllCoresMBps float64 `json:"all_cores_mb_per_s"`
	// LoopbackRoundTrips is how many 64-byte messages per second one connection over
	// loopback TCP carried there and back, one at a time.
	LoopbackRoundTrips float64 `json:"loopback_round_trips_per_s"`
}

// Machine is the yardstick measured around one scenario.
type Machine struct {
	Workload string `json:"workload"`
	Before   Speed  `json:"before"`
	After    Speed  `json:"after"`
}

// MachineReport is embedded in the scenarios' results: their "machine" figures.
type MachineReport struct {
	Machine *Machine `json:"machine,omitempty"`
}

// SetMachine records the yardstick measured around the scenario.
func (r *MachineReport) SetMachine(m *Machine) { r.Machine = m }

// Yardstick is the yardstick's description, as reported in Machine.Workload.
const Yardstick = "compress/flate level 6 of 128 KiB of generated text, repeated; 64-byte messages echoed over loopback TCP"

// yardstickText is the text the yardstick compresses: words and numbers drawn from a fixed
// seed, so that every run, on every machine, does the same work. Deflate over it exercises
// what a Go service's CPU does (branches, table lookups, memory within caches) rather than
// one instruction set extension, as hashing would.
var yardstickText = sync.OnceValue(func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"reelay", "publishes", "short", "vertical", "video", "to", "twelve", "platforms",
		"through", "one", "API", "and", "reports", "status", "analytics", "comments"}
	b := make([]byte, 0, 128<<10+32)
	for len(b) < 128<<10 {
		b = append(b, words[r.IntN(len(words))]...)
		if r.IntN(8) == 0 {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(r.IntN(100_000)), 10)
		}
		b = append(b, ' ')
	}
	return b[:128<<10]
})

// MeasureSpeed runs the yardstick's compression for about d on one goroutine, then for about
// d on GOMAXPROCS goroutines, then its loopback echo for about d, each part at least one unit
// of its work (a compression of the text per goroutine, a round trip). It stops early, with
// what it has measured, when ctx ends; a loopback that cannot be set up measures 0.
func MeasureSpeed(ctx context.Context, d time.Duration) Speed {
	return Speed{
		OneCoreMBps:        round3(compressFor(ctx, 1, d)),
		AllCoresMBps:       round3(compressFor(ctx, runtime.GOMAXPROCS(0), d)),
		LoopbackRoundTrips: round3(echoFor(ctx, d)),
	}
}

// echoFor sends 64-byte messages over one loopback TCP connection to a goroutine that sends
// each back, one at a time, until d has passed, and answers the round trips per second.
func echoFor(ctx context.Context, d time.Duration) float64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c) // echo until the client closes
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0
	}
	defer c.Close()
	msg, back := make([]byte, 64), make([]byte, 64)
	n := 0
	start := time.Now()
	// At least one round trip, however late this goroutine runs on a busy machine: the
	// figure is a rate, never 0 for a loopback that works.
	for ctx.Err() == nil {
		if _, err := c.Write(msg); err != nil {
			return 0
		}
		if _, err := io.ReadFull(c, back); err != nil {
			return 0
		}
		n++
		if time.Since(start) >= d {
			break
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// compressFor compresses the yardstick's text on n goroutines until d has passed and
// answers the MB compressed per second of wall time.
func compressFor(ctx context.Context, n int, d time.Duration) float64 {
	text := yardstickText()
	start := time.Now()
	var bytes atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			w, _ := flate.NewWriter(io.Discard, 6) // level 6 is valid: no error
			// Each goroutine compresses the text at least once: on a busy machine one may
			// start after d has passed, and would otherwise count nothing.
			for ctx.Err() == nil {
				w.Reset(io.Discard)
				_, _ = w.Write(text) // io.Discard does not fail
				_ = w.Close()
				bytes.Add(int64(len(text)))
				if time.Since(start) >= d {
					break
				}
			}
		})
	}
	wg.Wait()
	return float64(bytes.Load()) / 1e6 / time.Since(start).Seconds()
}

// String is the yardstick for the summary line.
func (m *Machine) String() string {
	return fmt.Sprintf("yardstick: compression MB/s on one core / on all %.1f / %.1f, loopback round trips/s %.0f before; %.1f / %.1f, %.0f after",
		m.Before.OneCoreMBps, m.Before.AllCoresMBps, m.Before.LoopbackRoundTrips,
		m.After.OneCoreMBps, m.After.AllCoresMBps, m.After.LoopbackRoundTrips)
}
