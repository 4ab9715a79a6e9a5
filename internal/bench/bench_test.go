package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{90, 90 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0, 1 * time.Millisecond},
		{0.5, 1 * time.Millisecond},
		{99.5, 100 * time.Millisecond},
	} {
		if got := percentile(lat, c.p); got != c.want {
			t.Errorf("p%v of 1..100ms = %v, want %v", c.p, got, c.want)
		}
	}
	ten := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if got := percentile(ten, 50); got != 5 {
		t.Errorf("p50 of 1..10 = %v, want 5", got)
	}
	if got := percentile(ten, 99); got != 10 {
		t.Errorf("p99 of 1..10 = %v, want 10", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one value = %v, want 7", got)
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("p99 of nothing = %v, want 0", got)
	}
}

func TestMerge(t *testing.T) {
	ms := time.Millisecond
	workers := []*worker{
		{latencies: []time.Duration{3 * ms, 1 * ms}, status: map[int]int{200: 1, 503: 1}},
		{latencies: []time.Duration{2 * ms, 4 * ms}, status: map[int]int{200: 2}, transport: 1},
	}
	r := merge(workers)
	if r.Requests != 5 || r.Errors != 2 {
		t.Errorf("requests %d errors %d, want 5 and 2", r.Requests, r.Errors)
	}
	if r.StatusCounts[200] != 3 || r.StatusCounts[503] != 1 {
		t.Errorf("status counts %v", r.StatusCounts)
	}
	if r.P50ms != 2 || r.P99ms != 4 || r.MaxMs != 4 {
		t.Errorf("p50 %v p99 %v max %v, want 2, 4, 4", r.P50ms, r.P99ms, r.MaxMs)
	}
}

func TestRun(t *testing.T) {
	var served atomic.Int64
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		if r.URL.Path != "/api/v1/things" || r.Method != http.MethodGet {
			http.Error(w, "wrong request", http.StatusBadRequest)
			return
		}
		if r.Header.Get("X-API-Key") != "k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(strings.Repeat("x", 10000))) // a body that must be read for reuse
	}))
	srv.Start()
	defer srv.Close()

	r, err := Run(context.Background(), Config{
		URL: srv.URL, Path: "/api/v1/things", Header: http.Header{"X-Api-Key": {"k"}},
		Concurrency: 4, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.Errors != 0 || r.StatusCounts[200] != r.Requests {
		t.Fatalf("result %+v: want only 200s", r)
	}
	if int64(r.Requests) > served.Load() {
		t.Errorf("counted %d requests, server saw %d (the warmup included)", r.Requests, served.Load())
	}
	if int64(r.Requests) == served.Load() {
		t.Errorf("warmup requests were counted: %d of %d", r.Requests, served.Load())
	}
	if r.Seconds < 0.3 || r.Seconds > 5 {
		t.Errorf("measured %.3fs, want about 0.3", r.Seconds)
	}
	if r.RPS <= 0 || r.P50ms <= 0 || r.P50ms > r.P90ms || r.P90ms > r.P99ms || r.P99ms > r.MaxMs {
		t.Errorf("figures out of order: %+v", r)
	}
	mu.Lock()
	n := len(conns)
	mu.Unlock()
	// Keep-alive must carry many requests per connection. Under a loaded machine (-race, other
	// packages) the transport may replace a connection now and then, so the bound is loose.
	if n > 8 || int64(n)*10 > served.Load() {
		t.Errorf("%d connections for 4 workers and %d requests: keep-alive is not reused", n, served.Load())
	}
}

func TestRunCountsErrors(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	r, err := Run(context.Background(), Config{URL: srv.URL, Concurrency: 2, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != r.StatusCounts[429] || r.Errors == 0 || r.StatusCounts[204] == 0 {
		t.Errorf("errors %d, status counts %v: want every 429 counted as an error", r.Errors, r.StatusCounts)
	}
	if r.Requests != r.StatusCounts[204]+r.StatusCounts[429] {
		t.Errorf("requests %d != sum of statuses %v", r.Requests, r.StatusCounts)
	}

	// Nothing listens here: every request is a transport error.
	srv.Close()
	r, err = Run(context.Background(), Config{URL: srv.URL, Concurrency: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.Errors != r.Requests || len(r.StatusCounts) != 0 || r.FirstError == "" {
		t.Errorf("refused connections: %+v", r)
	}
}

func TestRunCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Config{URL: srv.URL, Concurrency: 2, Duration: time.Minute})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled run: err %v after %v", err, time.Since(start))
	}
}
