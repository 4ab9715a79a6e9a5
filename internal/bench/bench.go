// Package bench measures what `reelay bench` reports. Run is a small closed-loop HTTP load
// generator: a fixed number of workers each send one request, wait for the answer, and send the
// next, until the time is up, for throughput and latency percentiles over real TCP connections
// (`bench api`, `bench reads`). Ingest, Burst and Throughput are the publishing scenarios: they
// drive a server's publish API against its sandbox simulators through Client and read what
// happened from the posts it reports.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Config describes a run.
type Config struct {
	// URL is the server's base URL (scheme and host, optionally a path prefix); Path is appended.
	URL string
	// Header is sent with every request (credentials go here, never in the URL).
	Header http.Header
	// Concurrency is the number of workers, each with at most one request in flight.
	Concurrency int
	// Duration is how long requests are measured; Warmup runs before it, unmeasured.
	Duration, Warmup time.Duration
	// Method defaults to GET.
	Method, Path string
	// Paths, when not empty, replaces Path: the workers go through them round-robin, each
	// starting at its own offset (GET /posts/{id} over many posts).
	Paths []string
}

// Result is what a run measured, after the warmup.
type Result struct {
	// Requests counts the requests sent and answered (or failed) in the measured window.
	Requests int `json:"requests"`
	// Errors counts answers outside 2xx and transport failures.
	Errors int `json:"errors"`
	// Seconds is the length of the measured window.
	Seconds float64 `json:"seconds"`
	RPS     float64 `json:"rps"`
	P50ms   float64 `json:"p50_ms"`
	P90ms   float64 `json:"p90_ms"`
	P99ms   float64 `json:"p99_ms"`
	MaxMs   float64 `json:"max_ms"`
	// StatusCounts counts the answers by HTTP status; transport failures have none.
	StatusCounts map[int]int `json:"status_counts"`
	// FirstError is the first transport failure seen, to tell what went wrong.
	FirstError string `json:"first_error,omitempty"`
}

// requestTimeout bounds one request, so that a stuck server cannot hang a run.
const requestTimeout = 30 * time.Second

var errStuck = fmt.Errorf("bench: no answer within %s after the end of the run", requestTimeout)

// worker holds what one worker measured; only that worker writes it while the run lasts.
type worker struct {
	latencies []time.Duration
	status    map[int]int
	transport int
	firstErr  error
}

// Run sends requests until cfg.Warmup+cfg.Duration have passed or ctx ends; when ctx ends
// early it returns what was measured so far together with ctx's error.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.URL == "" {
		return Result{}, errors.New("bench: URL is required")
	}
	if cfg.Duration <= 0 {
		return Result{}, errors.New("bench: duration must be positive")
	}
	if cfg.Warmup < 0 {
		return Result{}, errors.New("bench: warmup must not be negative")
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.Method == "" {
		cfg.Method = http.MethodGet
	}
	paths := cfg.Paths
	if len(paths) == 0 {
		paths = []string{cfg.Path}
	}
	targets := make([]*url.URL, len(paths))
	for i, p := range paths {
		target := strings.TrimRight(cfg.URL, "/") + "/" + strings.TrimLeft(p, "/")
		if p == "" {
			target = cfg.URL
		}
		u, err := url.Parse(target)
		if err != nil {
			return Result{}, fmt.Errorf("bench: %w", err)
		}
		targets[i] = u
	}
	proto, err := http.NewRequest(cfg.Method, targets[0].String(), nil)
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	for k, vs := range cfg.Header {
		for _, v := range vs {
			proto.Header.Add(k, v)
		}
	}

	tr := &http.Transport{
		Proxy:               nil, // measure the server, not a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.Concurrency,
		MaxIdleConnsPerHost: cfg.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()

	start := time.Now()
	measureFrom := start.Add(cfg.Warmup)
	end := measureFrom.Add(cfg.Duration)
	runCtx, cancel := context.WithDeadlineCause(ctx, end.Add(requestTimeout), errStuck)
	defer cancel()

	// A guess at the requests one worker completes, so that appends rarely grow the slice.
	perWorker := int(min(cfg.Duration.Seconds()*20000/float64(cfg.Concurrency), 1<<20)) + 64
	workers := make([]*worker, cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range workers {
		w := &worker{latencies: make([]time.Duration, 0, perWorker), status: map[int]int{}}
		workers[i] = w
		wg.Add(1)
		// Each worker starts at its own place in the paths, so that they do not move in step.
		offset := i * len(targets) / cfg.Concurrency
		go func() {
			defer wg.Done()
			w.loop(runCtx, tr, proto, targets, offset, measureFrom, end)
		}()
	}
	wg.Wait()
	finished := time.Now()

	res := merge(workers)
	from := measureFrom
	if finished.Before(from) { // ctx ended during the warmup
		from = finished
	}
	res.Seconds = finished.Sub(from).Seconds()
	if res.Seconds > 0 {
		res.RPS = float64(res.Requests) / res.Seconds
	}
	return res, ctx.Err()
}

func (w *worker) loop(ctx context.Context, tr http.RoundTripper, proto *http.Request, targets []*url.URL, next int,
	measureFrom, end time.Time) {
	// One request value per worker, reused once its answer has been read and closed; only its
	// URL changes (the transport reads it, never writes it).
	req := proto.Clone(ctx)
	for ctx.Err() == nil {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		req.URL = targets[next%len(targets)]
		next++
		status, err := do(tr, req)
		if t0.Before(measureFrom) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil && context.Cause(ctx) != errStuck {
				return // the caller cancelled the run: not the server's failure
			}
			w.transport++
			if w.firstErr == nil {
				w.firstErr = err
			}
			continue
		}
		w.latencies = append(w.latencies, time.Since(t0))
		w.status[status]++
	}
}

// do sends one request and reads the whole answer, so that the connection is reused.
func do(tr http.RoundTripper, req *http.Request) (int, error) {
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

func merge(workers []*worker) Result {
	res := Result{StatusCounts: map[int]int{}}
	n := 0
	for _, w := range workers {
		n += len(w.latencies)
	}
	all := make([]time.Duration, 0, n)
	for _, w := range workers {
		all = append(all, w.latencies...)
		for code, c := range w.status {
			res.StatusCounts[code] += c
			if code < 200 || code > 299 {
				res.Errors += c
			}
		}
		res.Errors += w.transport
		res.Requests += len(w.latencies) + w.transport
		if w.firstErr != nil && res.FirstError == "" {
			res.FirstError = w.firstErr.Error()
		}
	}
	slices.Sort(all)
	res.P50ms = ms(percentile(all, 50))
	res.P90ms = ms(percentile(all, 90))
	res.P99ms = ms(percentile(all, 99))
	if len(all) > 0 {
		res.MaxMs = ms(all[len(all)-1])
	}
	return res
}

// percentile returns the p-th percentile of sorted latencies by the nearest-rank method: the
// smallest value that at least p% of the values do not exceed. It is 0 for no values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
