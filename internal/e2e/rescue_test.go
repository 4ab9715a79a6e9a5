package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// rescueBound is how long after the kill the killed worker's destinations may take to be
// published: they move on within jobs.DefaultLease (45 s) and a renew interval, and then
// finish their uploads. Generous, so that a loaded machine does not fail the test; the
// measured figures are logged.
const rescueBound = 90 * time.Second

// riverClientLine is River's start record in a worker's JSON log, with the client's name.
var riverClientLine = regexp.MustCompile(`"msg":"River client started"[^\n]*"client_id":"([^"]+)"`)

// TestWorkerKilledMidUpload runs one API process and two worker processes on PostgreSQL and
// S3, with the simulators in the test process taking uploads slowly. It kills (SIGKILL) the
// worker that runs the post's destinations while the platforms receive the video, and checks
// that the other worker takes them over within about a minute, and that each platform
// received the whole video exactly once and published it exactly once.
func TestWorkerKilledMidUpload(t *testing.T) {
	needPostgres(t, "the test needs PostgreSQL")
	t.Parallel()
	h := newSimHost(t, uploadRate)
	addr := freeAddr(t)
	base := "http://" + addr
	f := newFleet(t, "e2e-rescue", map[string]string{"REELAY_PUBLIC_URL": base, "REELAY_SANDBOX_URL": h.URL, "REELAY_LOG_FORMAT": "json"})
	acct := f.acct
	api := f.serve("reelay serve --role api", addr, "api")
	workers, workerBases := f.workers(2)
	api.waitHealthy(base, 60*time.Second)
	// River names each worker process's client in its log; the jobs it runs carry that name
	// in attempted_by.
	clientOf := map[string]int{}
	for i, w := range workers {
		w.waitHealthy(workerBases[i], 60*time.Second)
		id := w.waitOutput(riverClientLine, 30*time.Second)[1]
		clientOf[id] = i
	}

	c := newClient(t, base, acct.APIKey)
	channels := c.sandboxChannels(acct.ProjectID, platforms, 0)
	// 20 s: a 40 MiB file of 10 s would run at 34 Mbit/s, over Instagram's 25, and wait for a
	// conversion instead of uploading.
	video := mediatest.MP4(t, mediatest.Options{Duration: 20 * time.Second, Width: 1080, Height: 1920, Size: 40 << 20})
	sum, size := fileSHA256(t, video)
	id := c.publishForm(map[string]string{
		"project_id": acct.ProjectID, "title": "Worker killed", "caption": "worker killed mid-upload #e2e",
		"tiktok": `{"mode":"direct"}`,
	}, video)
	t.Logf("post %s: %d bytes, sha256 %s", id, size, sum)
	for _, p := range platforms {
		select {
		case <-h.uploadStarted(p):
		case <-time.After(60 * time.Second):
			t.Fatalf("%s received no upload bytes within a minute of the publish", p)
		}
	}
	time.Sleep(1500 * time.Millisecond)

	// The worker running the most of the post's destinations dies; the other may run some.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := pgx.Connect(ctx, f.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	rows, err := db.Query(ctx, `SELECT d.id::text, d.platform, j.attempted_by[cardinality(j.attempted_by)]
		FROM river_job j JOIN destinations d ON d.id::text = j.args->>'destination_id'
		WHERE j.kind = 'publish_destination' AND j.state = 'running'`)
	if err != nil {
		t.Fatal(err)
	}
	held := map[int][]string{} // worker → platforms
	heldDest := map[int][]string{}
	for rows.Next() {
		var dest, platform, client string
		if err := rows.Scan(&dest, &platform, &client); err != nil {
			t.Fatal(err)
		}
		w, ok := clientOf[client]
		if !ok {
			t.Fatalf("destination %s (%s) is run by %q, which is neither worker (%v)", dest, platform, client, clientOf)
		}
		held[w] = append(held[w], platform)
		heldDest[w] = append(heldDest[w], dest)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	victim := 0
	if len(held[1]) > len(held[0]) {
		victim = 1
	}
	survivor := 1 - victim
	if len(held[victim]) == 0 {
		t.Fatalf("no worker runs the post's destinations mid-upload: %v", held)
	}
	t.Logf("worker #%d runs %v, worker #%d runs %v", victim+1, held[victim], survivor+1, held[survivor])

	workers[victim].kill()
	killed := time.Now()
	h.note("---- worker #%d killed with SIGKILL ----", victim+1)
	for _, p := range held[victim] {
		if s := h.snapshot(p); len(s.Uploads) != 0 {
			t.Errorf("%s had the whole video before the kill: the kill did not hit its upload, so this run proves nothing about it", p)
		}
	}
	h.rate.Store(0) // the rest of the uploads need not be slow

	post := c.waitSettled(id, rescueBound)
	settledAfter := time.Since(killed)
	if post["status"] != "published" {
		t.Errorf("post status %v, want published", post["status"])
	}
	checkReceivedOnce(t, h, post, channels, sum, size)

	// The survivor took the killed worker's jobs over when their leases lapsed, and settled
	// their destinations.
	out := workers[survivor].out.String()
	rescued := logLines(out, "rescued a job whose worker stopped renewing its lease")
	if len(rescued) < len(held[victim]) {
		t.Errorf("worker #%d rescued %d jobs, want the killed worker's %d", survivor+1, len(rescued), len(held[victim]))
	}
	var movedAfter time.Duration
	for _, r := range rescued {
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r["time"]))
		if err != nil {
			t.Fatalf("rescue log record without a time: %v", r)
		}
		movedAfter = max(movedAfter, at.Sub(killed))
	}
	settledBy := map[string]bool{}
	for _, r := range logLines(out, "destination settled") {
		settledBy[fmt.Sprint(r["destination"])] = true
	}
	for _, d := range heldDest[victim] {
		if !settledBy[d] {
			t.Errorf("destination %s of the killed worker was not settled by worker #%d", d, survivor+1)
		}
	}
	t.Logf("the killed worker's %d destinations (%s) moved on %s after the kill and the post was published %s after it",
		len(held[victim]), strings.Join(held[victim], ", "), movedAfter.Round(100*time.Millisecond), settledAfter.Round(100*time.Millisecond))
}
