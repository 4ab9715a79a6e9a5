package cli

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/httpapi"
)

// probeWindow is how recently /readyz must have been probed for a stopping process to wait
// out its drain delay: long enough for the slowest usual health-check interval (a cloud load
// balancer's may be minutes), while a laptop's server, which nothing probes, stops at once.
const probeWindow = 5 * time.Minute

// shutdown stops a serving process within cfg.ShutdownTimeout, counted from the signal:
//
//  1. The jobs stop at once (their queue fetches no more, and each running one ends after its
//     current step, or is cut near the bound and snoozes), in parallel with the rest.
//  2. The HTTP side drains: /readyz answers 503, responses close their connections (and idle
//     ones are closed) so that clients open their next ones to other processes, and the long
//     waits end with what they have. If something probed /readyz lately, the listener stays
//     open for cfg.DrainDelay (at most half the bound), so that load balancers see the 503 and stop routing here
//     before connections would be refused; otherwise there is nobody to tell, and no delay.
//  3. The listeners close and the requests in flight finish (an upload being streamed, a
//     publish being stored), until the bound; past it their connections are closed.
//  4. What is left of the requests is cancelled, and the process's parts are closed.
func shutdown(log *slog.Logger, cfg *config.Config, a *app.App, drain *httpapi.Drain, servers []*http.Server, cancelRequests context.CancelFunc) {
	begun := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	log.Info("stopping: finishing requests in flight and the running jobs' current steps (a second signal ends the process at once)",
		"timeout", cfg.ShutdownTimeout)
	jobsStopped := make(chan error, 1)
	go func() { jobsStopped <- a.StopJobs(ctx) }()

	drain.Begin()
	for _, srv := range servers {
		srv.SetKeepAlivesEnabled(false)
	}
	// At most half the bound, so that the requests in flight keep the other half.
	if delay := min(cfg.DrainDelay, cfg.ShutdownTimeout/2); delay > 0 && drain.ProbedSince(begun.Add(-probeWindow)) {
		log.Info("answering /readyz 503 before closing the listener", "for", delay)
		wait := time.NewTimer(delay)
		select {
		case <-wait.C:
		case <-ctx.Done():
		}
		wait.Stop()
	}
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("requests still running at the shutdown timeout: closing their connections", "error", err)
			srv.Close()
		}
	}
	cancelRequests()
	if err := <-jobsStopped; err != nil {
		log.Warn("jobs did not all stop within the shutdown timeout; they resume elsewhere once their lease lapses", "error", err)
	}
	a.Close()
	log.Info("stopped", "after", time.Since(begun).Round(time.Millisecond))
}
