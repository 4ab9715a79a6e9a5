package store_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/procstat"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// BenchmarkDestinationLife is the database's half of `reelay bench burst`, without the HTTP,
// the simulators and River around it: each op is one destination of a scheduled post with two
// (YouTube and TikTok, five posts to a project, as the burst makes them) going through the
// statements the publish worker makes for it (load, fire, two open steps, settle as
// published), 64 destinations at a time, in the order the burst's jobs run. ns/op is per
// destination. Run a fixed count, so that every run does the same work:
//
//	REELAY_TEST_DATABASE_URL=postgres://... go test ./internal/store -run '^$' \
//	    -bench DestinationLife -benchtime 2000x -count 5
func BenchmarkDestinationLife(b *testing.B) {
	for _, d := range storetest.Dialects() {
		b.Run(string(d), func(b *testing.B) { benchmarkDestinationLife(b, storetest.New(b, d)) })
	}
}

func benchmarkDestinationLife(b *testing.B, s *store.Store) {
	ctx := context.Background()
	dests := burstDestinations(b, s, b.N)
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	var next atomic.Int64
	cpu := startCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d := dests[next.Add(1)-1]
			if err := liveDestination(ctx, s, d); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	cpu.report(b)
	// Every destination must have settled, or the op measured less than it says.
	for _, d := range dests {
		dl, err := s.LoadDelivery(ctx, d.ID, d.Seq)
		if err == nil {
			b.Fatalf("destination %s still open (%s) after its settling step", d.ID, dl.Destination.Status)
		}
	}
}

// liveDestination makes the store calls the publish worker makes for a destination whose
// platform takes three steps.
func liveDestination(ctx context.Context, s *store.Store, d store.Destination) error {
	dl, err := s.LoadDelivery(ctx, d.ID, d.Seq)
	if err != nil {
		return err
	}
	if dl.Post.Status == store.PostScheduled {
		if err := s.StartDelivery(ctx, d.ID, d.Seq); err != nil {
			return err
		}
	}
	steps := []store.StepUpdate{
		{Status: store.DestUploading, State: []byte(`{"upload_url":"https://upload.example/` + d.ID + `"}`)},
		{Status: store.DestProcessing, ExternalID: "v" + d.ID[:8], Message: "processing"},
		{Status: store.DestPublished, URL: "https://example.com/v/" + d.ID[:8]},
	}
	for _, u := range steps {
		if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, u); err != nil {
			return fmt.Errorf("step %s: %w", u.Status, err)
		}
	}
	return nil
}

// burstDestinations stores scheduled posts with two destinations each, n destinations in all,
// and answers them in the order their jobs were queued.
func burstDestinations(b *testing.B, s *store.Store, n int) []store.Destination {
	b.Helper()
	ctx := context.Background()
	ca, err := s.CreateAccount(ctx, store.NewAccount{Name: "bench",
		Key: &store.NewAPIKey{Name: "k", Prefix: "rly_live_bench", Hash: []byte("bench")}})
	if err != nil {
		b.Fatal(err)
	}
	const postsPerProject = 5
	at := time.Now().Add(time.Hour)
	video := store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10}
	var dests []store.Destination
	var channels []store.Destination
	for i := 0; len(dests) < n; i++ {
		if i%postsPerProject == 0 {
			p, err := s.CreateProject(ctx, ca.Account.ID, fmt.Sprintf("p%d", i), "")
			if err != nil {
				b.Fatal(err)
			}
			channels = channels[:0]
			for _, platform := range []string{"youtube", "tiktok"} {
				ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: p.ID, Platform: platform,
					Name: platform, ExternalAccountID: fmt.Sprintf("sbx_%s_%d", platform, i), Sandbox: true})
				if err != nil {
					b.Fatal(err)
				}
				channels = append(channels, store.Destination{ChannelID: ch.ID, Platform: platform, Options: []byte(`{}`)})
			}
			ca.Project = p
		}
		p, err := s.CreatePost(ctx, store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Title: "t",
			Caption: fmt.Sprintf("post %d", i), Request: []byte(`{}`), Video: video, ContentHash: fmt.Sprint(i),
			ScheduledFor: &at, Destinations: channels}, nil)
		if err != nil {
			b.Fatal(err)
		}
		dests = append(dests, p.Destinations...)
	}
	return dests[:n]
}

// cpuMeter reads the CPU time spent by this process, and by the whole machine (the database
// server among it, when it runs here), over the measured part of a benchmark.
type cpuMeter struct{ process, machine float64 }

func startCPU() cpuMeter {
	var m cpuMeter
	m.process, _ = procstat.ReadCPU(os.Getpid())
	m.machine, _ = procstat.ReadMachineCPU()
	return m
}

// report adds both as metrics per op, where /proc has them: ns/op alone mixes this process's
// work with the database server's and with waiting. Both count in ticks of 10 ms, so they
// need a few seconds of work to mean much.
func (m cpuMeter) report(b *testing.B) {
	perOp := func(before, after float64) float64 { return (after - before) * 1e6 / float64(b.N) }
	if p, err := procstat.ReadCPU(os.Getpid()); err == nil && m.process > 0 {
		b.ReportMetric(perOp(m.process, p), "proc-cpu-µs/op")
	}
	if c, err := procstat.ReadMachineCPU(); err == nil && m.machine > 0 {
		b.ReportMetric(perOp(m.machine, c), "machine-cpu-µs/op")
	}
}
