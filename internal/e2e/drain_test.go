package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// terminate stops the process with SIGTERM, as an orchestrator does, and waits for it to exit:
// it must exit with status 0 within bound. It answers how long the process took.
func (p *proc) terminate(bound time.Duration) time.Duration {
	p.t.Helper()
	sent := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("SIGTERM %s: %v", p.name, err)
	}
	select {
	case <-p.exited:
	case <-time.After(bound):
		p.t.Fatalf("%s still running %s after SIGTERM", p.name, bound)
	}
	if p.err != nil {
		p.t.Errorf("%s exited with %v after SIGTERM, want status 0", p.name, p.err)
	}
	return time.Since(sent)
}

// publishJobs reads the state of every destination's publish job of the fleet's database: its
// state, the errors its attempts recorded and how often it snoozed.
type publishJob struct {
	destination, platform, state string
	errors, snoozes              int
}

func (f *fleet) publishJobs(t *testing.T) []publishJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, f.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	rows, err := db.Query(ctx, `SELECT d.id::text, d.platform, j.state::text, coalesce(cardinality(j.errors), 0),
			coalesce((j.metadata->>'snoozes')::int, 0)
		FROM river_job j JOIN destinations d ON d.id::text = j.args->>'destination_id'
		WHERE j.kind = 'publish_destination' ORDER BY j.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []publishJob
	for rows.Next() {
		var j publishJob
		if err := rows.Scan(&j.destination, &j.platform, &j.state, &j.errors, &j.snoozes); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWorkerDrain stops (SIGTERM) the one worker of a fleet while the simulators in the test
// process receive a post's video slowly. With time enough, the steps under way finish and the
// jobs snooze after them; with too little, the steps are cut at the bound and the jobs snooze
// from their last stored step. Either way the worker exits with status 0 within its shutdown
// timeout, no attempt of any job recorded an error, and once another worker starts, each
// platform has received the whole video exactly once and published it exactly once.
func TestWorkerDrain(t *testing.T) {
	needPostgres(t, "the test needs PostgreSQL")
	t.Parallel()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		logSays string // what the stopped worker logs for the jobs it stopped
	}{
		{"steps finish", time.Minute, "stopping: the destination resumes after its last step"},
		{"steps cut", 2 * time.Second, "stopping: a step was cut; the destination resumes from its last stored step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newSimHost(t, uploadRate)
			addr := freeAddr(t)
			base := "http://" + addr
			f := newFleet(t, "e2e-drain", map[string]string{"REELAY_PUBLIC_URL": base, "REELAY_SANDBOX_URL": h.URL,
				"REELAY_LOG_FORMAT": "json", "REELAY_SHUTDOWN_TIMEOUT": tc.timeout.String()})
			api := f.serve("reelay serve --role api", addr, "api")
			workers, workerBases := f.workers(1)
			api.waitHealthy(base, 60*time.Second)
			workers[0].waitHealthy(workerBases[0], 60*time.Second)

			c := newClient(t, base, f.acct.APIKey)
			channels := c.sandboxChannels(f.acct.ProjectID, platforms, 0)
			// 20 s: under Instagram's 25 Mbit/s at 40 MiB, so that it uploads rather than waits
			// for a conversion; at uploadRate each platform takes some five seconds.
			video := mediatest.MP4(t, mediatest.Options{Duration: 20 * time.Second, Width: 1080, Height: 1920, Size: 40 << 20})
			sum, size := fileSHA256(t, video)
			id := c.publishForm(map[string]string{
				"project_id": f.acct.ProjectID, "title": "Worker drain", "caption": "worker drained mid-upload #e2e",
				"tiktok": `{"mode":"direct"}`,
			}, video)
			for _, p := range platforms {
				select {
				case <-h.uploadStarted(p):
				case <-time.After(60 * time.Second):
					t.Fatalf("%s received no upload bytes within a minute of the publish", p)
				}
			}
			time.Sleep(500 * time.Millisecond)
			took := workers[0].terminate(tc.timeout + 5*time.Second)
			h.note("---- worker stopped with SIGTERM, exited after %s ----", took.Round(time.Millisecond))
			t.Logf("the worker exited %s after SIGTERM (shutdown timeout %s)", took.Round(time.Millisecond), tc.timeout)
			if n := len(logLines(workers[0].out.String(), tc.logSays)); n == 0 {
				t.Errorf("the stopped worker never logged %q", tc.logSays)
			}
			jobs := f.publishJobs(t)
			for _, j := range jobs {
				if j.state == "running" || j.errors != 0 {
					t.Errorf("%s job after the stop: state %s, %d errors recorded, want neither running nor an error", j.platform, j.state, j.errors)
				}
			}
			if d := c.destinationStatuses(id); len(d) != len(platforms) {
				t.Fatalf("destinations %v", d)
			}

			h.rate.Store(0) // the rest need not be slow
			f.serve("reelay serve --role worker #2", freeAddr(t), "worker")
			post := c.waitSettled(id, 90*time.Second)
			checkReceivedOnce(t, h, post, channels, sum, size)
			snoozed := 0
			for _, j := range f.publishJobs(t) {
				if j.errors != 0 {
					t.Errorf("%s job recorded %d errors", j.platform, j.errors)
				}
				if j.snoozes > 0 {
					snoozed++
				}
			}
			if snoozed == 0 {
				t.Errorf("no job snoozed: the stop did not reach a running job, so this run proves nothing about it")
			}
		})
	}
}

// readyBalancer is the load balancer of the rolling-restart test, as an orchestrator's would
// be: it probes each API process's /readyz every 100 ms and sends each request to the next
// process that last answered 200 (to any, should none). It reads each request's body first, so
// that a request that gets no answer (a connection error) or a 5xx from one process is sent
// once more to the other: it counts those retries, and the requests that failed on both.
type readyBalancer struct {
	t        *testing.T
	backends []string
	ready    []atomic.Bool
	next     atomic.Uint64
	client   *http.Client

	mu       sync.Mutex
	retried  []string
	failed   []string
	requests int
}

func newReadyBalancer(t *testing.T, backends ...string) (*httptest.Server, *readyBalancer) {
	b := &readyBalancer{t: t, backends: backends, ready: make([]atomic.Bool, len(backends)),
		client: &http.Client{Timeout: 2 * time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	ctx, cancel := context.WithCancel(context.Background())
	var probing sync.WaitGroup
	for i, base := range backends {
		probing.Add(1)
		go func() {
			defer probing.Done()
			probe := &http.Client{Timeout: time.Second}
			for {
				resp, err := probe.Get(base + "/readyz")
				if err == nil {
					resp.Body.Close()
				}
				b.ready[i].Store(err == nil && resp.StatusCode == http.StatusOK)
				select {
				case <-ctx.Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	srv := httptest.NewServer(b)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		probing.Wait()
	})
	return srv, b
}

// isReady reports whether backend i last answered /readyz 200.
func (b *readyBalancer) isReady(i int) bool { return b.ready[i].Load() }

func (b *readyBalancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The first ready process in turn, then the other one.
	n := len(b.backends)
	start := int(b.next.Add(1)) % n
	order := make([]int, 0, n)
	for k := range n {
		if i := (start + k) % n; b.ready[i].Load() {
			order = append(order, i)
		}
	}
	for k := range n {
		if i := (start + k) % n; !b.ready[i].Load() {
			order = append(order, i)
		}
	}
	b.mu.Lock()
	b.requests++
	b.mu.Unlock()
	var last string
	for try, i := range order[:2] {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, b.backends[i]+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		req.Header.Del("Connection")
		resp, err := b.client.Do(req)
		if err == nil && resp.StatusCode < 500 {
			for k, v := range resp.Header {
				if k != "Connection" {
					w.Header()[k] = v
				}
			}
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
			resp.Body.Close()
			return
		}
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = fmt.Sprintf("%s %s at API #%d: status %d: %s", r.Method, r.URL.Path, i+1, resp.StatusCode, raw)
		} else {
			last = fmt.Sprintf("%s %s at API #%d: %v", r.Method, r.URL.Path, i+1, err)
		}
		b.mu.Lock()
		if try == 0 {
			b.retried = append(b.retried, last)
		} else {
			b.failed = append(b.failed, last)
		}
		b.mu.Unlock()
	}
	http.Error(w, "no API process answered: "+last, http.StatusBadGateway)
}

// publishBytes sends POST /api/v1/publish as a multipart form with the video's bytes, with an
// Idempotency-Key (so that the balancer may send it again) and Prefer: wait=0; it answers the
// post id, or an error.
func (c *client) publishBytes(fields map[string]string, video []byte, key string) (string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	fw, _ := mw.CreateFormFile("video", "video.mp4")
	fw.Write(video)
	mw.Close()
	code, out, err := c.do("POST", "/api/v1/publish", &buf, mw.FormDataContentType(),
		map[string]string{"Prefer": "wait=0", "Idempotency-Key": key})
	if err != nil {
		return "", err
	}
	id, _ := out["post_id"].(string)
	if code != http.StatusAccepted || id == "" {
		return "", fmt.Errorf("status %d: %v", code, out)
	}
	return id, nil
}

// rollingPosts and rollingGroups: each post goes to one group of the three platforms'
// channels, few enough per group for the simulators' quotas (a TikTok account inits 6 posts a
// minute, a YouTube one inserts 6 videos a day).
const (
	rollingPosts  = 12
	rollingGroups = 4
	// rollingTimeout is every process's REELAY_SHUTDOWN_TIMEOUT.
	rollingTimeout = 20 * time.Second
)

// TestRollingRestart runs two API processes behind a load balancer that follows their /readyz
// (readyBalancer) and two workers, on PostgreSQL and S3, with the simulators in the test
// process taking uploads slowly. While a burst of posts is submitted (half to publish now, half
// scheduled a few seconds ahead, each a multipart upload), every process in turn is stopped
// with SIGTERM and replaced: each API process once the other is back in the balancer's
// rotation, each worker while it runs destinations. Every stopped process exits with status 0
// within its shutdown timeout; every submission is accepted; no request the balancer passed on
// failed at both API processes (those retried on the other one are counted and logged); every
// post is published, and each platform received each video exactly once and published it
// exactly once.
func TestRollingRestart(t *testing.T) {
	needPostgres(t, "the test needs PostgreSQL")
	t.Parallel()
	h := newSimHost(t, 4<<20)
	apiAddrs := []string{freeAddr(t), freeAddr(t)}
	apiBases := []string{"http://" + apiAddrs[0], "http://" + apiAddrs[1]}
	lb, balancer := newReadyBalancer(t, apiBases...)
	f := newFleet(t, "e2e-rolling", map[string]string{"REELAY_PUBLIC_URL": lb.URL, "REELAY_SANDBOX_URL": h.URL,
		"REELAY_LOG_FORMAT": "json", "REELAY_SHUTDOWN_TIMEOUT": rollingTimeout.String(), "REELAY_DRAIN_DELAY": "1s"})
	apis := []*proc{f.serve("reelay serve --role api #1", apiAddrs[0], "api"), f.serve("reelay serve --role api #2", apiAddrs[1], "api")}
	workers, workerBases := f.workers(2)
	for i, p := range apis {
		p.waitHealthy(apiBases[i], 60*time.Second)
	}
	for i, w := range workers {
		w.waitHealthy(workerBases[i], 60*time.Second)
	}
	waitReady := func(i int) {
		deadline := time.Now().Add(30 * time.Second)
		for !balancer.isReady(i) {
			if time.Now().After(deadline) {
				t.Fatalf("API #%d never answered the balancer's /readyz with 200", i+1)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitReady(0)
	waitReady(1)

	c := newClient(t, lb.URL, f.acct.APIKey)
	groups := make([]map[string]channel, rollingGroups)
	for g := range groups {
		groups[g] = c.sandboxChannels(f.acct.ProjectID, platforms, 0)
	}
	type sent struct {
		id, sha string
		group   int
	}
	// Distinct videos (their durations differ), so that each upload names its post; 6 MiB
	// take some 1.5 s at the simulators' rate.
	videos := make([][]byte, rollingPosts)
	shas := make([]string, rollingPosts)
	for i := range videos {
		path := mediatest.MP4(t, mediatest.Options{Duration: 5*time.Second + time.Duration(i)*100*time.Millisecond, Width: 1080, Height: 1920, Size: 6 << 20})
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		videos[i] = raw
		shas[i], _ = fileSHA256(t, path)
	}

	// The burst goes on while the processes restart: a post every 400 ms.
	posts := make([]sent, rollingPosts)
	var submitErrs []string
	submitted := make(chan struct{})
	begun := time.Now()
	go func() {
		defer close(submitted)
		for i := range posts {
			g := i % rollingGroups
			ids, _ := json.Marshal([]string{groups[g]["youtube"].ID, groups[g]["instagram"].ID, groups[g]["tiktok"].ID})
			fields := map[string]string{"project_id": f.acct.ProjectID, "channel_ids": string(ids),
				"title": fmt.Sprintf("Rolling %d", i), "caption": fmt.Sprintf("rolling restart post %d #e2e", i), "tiktok": `{"mode":"direct"}`}
			if i%2 == 1 {
				fields["scheduled_for"] = time.Now().Add(8 * time.Second).UTC().Format(time.RFC3339)
			}
			id, err := c.publishBytes(fields, videos[i], fmt.Sprintf("rolling-%d", i))
			if err != nil {
				submitErrs = append(submitErrs, fmt.Sprintf("post %d: %v", i, err))
			}
			posts[i] = sent{id: id, sha: shas[i], group: g}
			time.Sleep(400 * time.Millisecond)
		}
	}()

	// Each API process in turn, once the other one is in the rotation.
	for i := range apis {
		time.Sleep(time.Second)
		waitReady(1 - i)
		took := apis[i].terminate(rollingTimeout + 5*time.Second)
		t.Logf("API #%d exited %s after SIGTERM (%.1fs into the burst)", i+1, took.Round(time.Millisecond), time.Since(begun).Seconds())
		apis[i] = f.serve(fmt.Sprintf("reelay serve --role api #%d (replacement)", i+1), apiAddrs[i], "api")
		apis[i].waitHealthy(apiBases[i], 60*time.Second)
		waitReady(i)
	}
	// Each worker in turn, while it runs destinations.
	stoppedAt := 0
	for i := range workers {
		client := workers[i].waitOutput(riverClientLine, 30*time.Second)[1]
		running := f.runningBy(t, client, 30*time.Second)
		took := workers[i].terminate(rollingTimeout + 5*time.Second)
		t.Logf("worker #%d ran %d destinations and exited %s after SIGTERM (%.1fs into the burst)", i+1, running, took.Round(time.Millisecond), time.Since(begun).Seconds())
		stoppedAt += running
		out := workers[i].out.String()
		snoozed := len(logLines(out, "stopping: the destination resumes after its last step")) +
			len(logLines(out, "stopping: a step was cut; the destination resumes from its last stored step"))
		t.Logf("worker #%d stopped %d destinations between or in steps", i+1, snoozed)
		addr := freeAddr(t)
		workers[i] = f.serve(fmt.Sprintf("reelay serve --role worker #%d (replacement)", i+1), addr, "worker")
		workers[i].waitHealthy("http://"+addr, 60*time.Second)
	}
	if stoppedAt == 0 {
		t.Errorf("no worker ran a destination when it was stopped: the restarts did not hit the work, so this run proves nothing about it")
	}
	<-submitted
	for _, e := range submitErrs {
		t.Errorf("submission failed: %s", e)
	}
	if t.Failed() {
		t.FailNow()
	}

	deadline := time.Now().Add(3 * time.Minute)
	for _, p := range posts {
		checkPublished(t, c.waitSettled(p.id, time.Until(deadline)))
	}
	t.Logf("all %d posts published %.1fs after the burst began", rollingPosts, time.Since(begun).Seconds())
	for _, pl := range platforms {
		s := h.snapshot(pl)
		type key struct{ account, sha string }
		uploads, items := map[key]int{}, map[key]int{}
		for _, u := range s.Uploads {
			uploads[key{u.Account, u.SHA256}]++
		}
		for _, x := range s.Published {
			items[key{x.Account, x.SHA256}]++
		}
		for _, p := range posts {
			k := key{groups[p.group][pl].Account, p.sha}
			if uploads[k] != 1 || items[k] != 1 {
				t.Errorf("%s: post %s's video received %d times and published %d times, want once each", pl, p.id, uploads[k], items[k])
			}
		}
		if len(s.Uploads) != rollingPosts || len(s.Published) != rollingPosts {
			t.Errorf("%s: %d uploads and %d published items, want %d each", pl, len(s.Uploads), len(s.Published), rollingPosts)
		}
	}
	for _, j := range f.publishJobs(t) {
		if j.errors != 0 {
			t.Errorf("%s job of destination %s recorded %d errors", j.platform, j.destination, j.errors)
		}
	}

	balancer.mu.Lock()
	defer balancer.mu.Unlock()
	t.Logf("the balancer passed on %d requests; %d got no answer or a 5xx from one API process and were sent to the other", balancer.requests, len(balancer.retried))
	for _, r := range balancer.retried {
		t.Logf("retried: %s", r)
	}
	for _, r := range balancer.failed {
		t.Errorf("failed at both API processes: %s", r)
	}
}

// runningBy waits until the worker whose River client is client runs at least one publish job,
// and answers how many it runs (0 if it ran none within timeout).
func (f *fleet) runningBy(t *testing.T, client string, timeout time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+10*time.Second)
	defer cancel()
	db, err := pgx.Connect(ctx, f.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	deadline := time.Now().Add(timeout)
	for {
		var n int
		err := db.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'publish_destination' AND state = 'running'
			AND attempted_by[cardinality(attempted_by)] = $1`, client).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}
