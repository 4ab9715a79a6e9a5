package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/media/s3test"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

const (
	scalePosts = 20
	// scaleGroups: each post goes to one group of three channels (YouTube, Instagram, TikTok).
	// One group would not do: the simulators enforce the platforms' quotas per account, and a
	// YouTube account may insert 6 videos a day (10,000 units at 1,600 each), a TikTok token
	// init 6 posts a minute.
	scaleGroups = 5
)

// logLines returns the JSON log records of a process's output whose msg is msg.
func logLines(out, msg string) []map[string]any {
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil && rec["msg"] == msg {
			recs = append(recs, rec)
		}
	}
	return recs
}

// account is what `reelay accounts create --json` prints.
type account struct {
	AccountID string `json:"account_id"`
	ProjectID string `json:"project_id"`
	APIKey    string `json:"api_key"`
}

// createAccount makes an account with the administration command against the database at
// dbURL, as an operator of a fleet does before its API processes start.
func createAccount(t *testing.T, dbURL, dataDir, name string) account {
	t.Helper()
	create := exec.Command(binary, "accounts", "create", "--name", name, "--json", "--database-url", dbURL)
	create.Env = append(baseEnv(), "REELAY_DATA_DIR="+dataDir)
	var stderr strings.Builder
	create.Stderr = &stderr
	out, err := create.Output()
	if err != nil {
		t.Fatalf("reelay accounts create: %v\n%s", err, stderr.String())
	}
	var acct account
	if err := json.Unmarshal(out, &acct); err != nil || acct.APIKey == "" || acct.ProjectID == "" {
		t.Fatalf("reelay accounts create printed %q: %v", out, err)
	}
	return acct
}

// needPostgres skips a test of processes that share a PostgreSQL database, saying why it needs
// one, when no PostgreSQL is set (and under -short).
func needPostgres(t *testing.T, why string) {
	t.Helper()
	needBinary(t)
	if os.Getenv(storetest.EnvPostgres) == "" {
		t.Skipf("%s is not set: %s", storetest.EnvPostgres, why)
	}
}

// fleet is reelay's processes as an operator of a fleet runs them: on one PostgreSQL database
// (a schema of the test's own) and one bucket of a real S3 server (SeaweedFS, s3test; its
// credentials reach the processes through the AWS environment), with an account made
// beforehand by the administration command.
type fleet struct {
	t        *testing.T
	dbURL    string
	settings map[string]string // the REELAY_ settings of every process, over testEnv's
	acct     account
}

// fleetMetricsToken is the bearer token the fleet's /metrics asks for (REELAY_METRICS_TOKEN):
// without one, no process would serve it.
const fleetMetricsToken = "e2e-fleet-metrics-token"

// metricsGet reads a fleet process's /metrics.
func metricsGet(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+fleetMetricsToken)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, %v: %s", url, resp.StatusCode, err, body)
	}
	return string(body)
}

// newFleet prepares a fleet whose processes take settings too, and its account, named name.
func newFleet(t *testing.T, name string, settings map[string]string) *fleet {
	t.Helper()
	f := &fleet{t: t, dbURL: storetest.URL(t, store.Postgres)}
	f.settings = map[string]string{"REELAY_DATA_DIR": t.TempDir(), "REELAY_DATABASE_URL": f.dbURL, "REELAY_BLOB_URL": s3test.BlobURL(t),
		"REELAY_METRICS_TOKEN": fleetMetricsToken}
	maps.Copy(f.settings, settings)
	f.acct = createAccount(t, f.dbURL, f.settings["REELAY_DATA_DIR"], name)
	return f
}

// serve starts the fleet's process `reelay serve --role role` listening at addr, named name.
func (f *fleet) serve(name, addr, role string) *proc {
	f.t.Helper()
	return startProc(f.t, name, testEnv(f.settings, map[string]string{"REELAY_ADDR": addr}), "serve", "--role", role)
}

// workers starts n worker processes, each serving its health and metrics at an address of its
// own: it answers them and the base URLs of those addresses.
func (f *fleet) workers(n int) ([]*proc, []string) {
	f.t.Helper()
	procs, bases := make([]*proc, n), make([]string, n)
	for i := range n {
		addr := freeAddr(f.t)
		bases[i] = "http://" + addr
		procs[i] = f.serve(fmt.Sprintf("reelay serve --role worker #%d", i+1), addr, "worker")
	}
	return procs, bases
}

// TestScaleOut runs one API process and two worker processes on one PostgreSQL database and
// one S3 bucket, publishes 20 posts to three platforms each, and checks that every
// destination was published, that each platform received and published each video exactly
// once, and that the work was shared by the workers (and never done by the API process).
func TestScaleOut(t *testing.T) {
	needPostgres(t, "the scale-out test needs PostgreSQL")
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	f := newFleet(t, "e2e-scale", map[string]string{"REELAY_PUBLIC_URL": base, "REELAY_LOG_FORMAT": "json"})
	acct := f.acct

	api := f.serve("reelay serve --role api", addr, "api")
	workers, workerBases := f.workers(2)
	api.waitHealthy(base, 60*time.Second)
	for i, w := range workers {
		w.waitHealthy(workerBases[i], 60*time.Second)
	}
	if strings.Contains(api.out.String(), "First start") {
		t.Errorf("the API process made a first-start account although the database had one")
	}

	c := newClient(t, base, acct.APIKey)
	if got := c.projectID(); got != acct.ProjectID {
		t.Fatalf("project %s, want %s", got, acct.ProjectID)
	}
	groups := make([]map[string]channel, scaleGroups)
	for g := range groups {
		groups[g] = c.sandboxChannels(acct.ProjectID, platforms, 0)
	}

	// Distinct videos (their durations differ), so that each upload names its post.
	type sent struct {
		id, sha string
		size    int64
		group   int
	}
	posts := make([]sent, scalePosts)
	shas := map[string]bool{}
	start := time.Now()
	for i := range posts {
		video := mediatest.MP4(t, mediatest.Options{Duration: 4*time.Second + time.Duration(i)*100*time.Millisecond, Width: 1080, Height: 1920})
		sum, size := fileSHA256(t, video)
		if shas[sum] {
			t.Fatalf("video %d is not distinct", i)
		}
		shas[sum] = true
		g := i % scaleGroups
		ids, _ := json.Marshal([]string{groups[g]["youtube"].ID, groups[g]["instagram"].ID, groups[g]["tiktok"].ID})
		id := c.publishForm(map[string]string{
			"project_id": acct.ProjectID, "channel_ids": string(ids),
			"title": fmt.Sprintf("Scale-out %d", i), "caption": fmt.Sprintf("scale-out post %d #e2e", i),
			"tiktok": `{"mode":"direct"}`,
		}, video)
		posts[i] = sent{id: id, sha: sum, size: size, group: g}
	}
	t.Logf("%d posts submitted in %s", scalePosts, time.Since(start).Round(time.Millisecond))

	deadline := time.Now().Add(90 * time.Second)
	for _, p := range posts {
		checkPublished(t, c.waitSettled(p.id, time.Until(deadline)))
	}
	t.Logf("all posts settled %s after the first publish", time.Since(start).Round(time.Millisecond))

	// Each platform received and published each video exactly once, on the right account.
	total := 0
	for _, pl := range platforms {
		in := c.introspect(pl)
		type key struct{ account, sha string }
		want := map[key]bool{}
		for _, p := range posts {
			want[key{groups[p.group][pl].Account, p.sha}] = true
		}
		uploads, items := map[key]int{}, map[key]int{}
		for _, u := range in.Uploads {
			k := key{u.Account, u.SHA256}
			if !want[k] {
				t.Errorf("%s: unexpected upload %+v", pl, u)
			}
			uploads[k]++
		}
		for _, x := range in.Published {
			k := key{x.Account, x.SHA256}
			if !want[k] {
				t.Errorf("%s: unexpected published item %+v", pl, x)
			}
			items[k]++
		}
		for k := range want {
			if uploads[k] != 1 || items[k] != 1 {
				t.Errorf("%s: account %s received video %s %d times and published it %d times, want once each",
					pl, k.account, k.sha[:12], uploads[k], items[k])
			}
		}
		if len(in.Uploads) != scalePosts || len(in.Published) != scalePosts {
			t.Errorf("%s: %d uploads and %d published items, want %d each", pl, len(in.Uploads), len(in.Published), scalePosts)
		}
		total += len(in.Uploads)
	}
	if total != 3*scalePosts {
		t.Errorf("%d uploads in all, want %d", total, 3*scalePosts)
	}

	// The workers shared the destinations, each settled by exactly one process; the API
	// process, which runs no jobs, settled none.
	settled := map[string]int{}
	for i, w := range workers {
		recs := logLines(w.out.String(), "destination settled")
		for _, r := range recs {
			d, _ := r["destination"].(string)
			settled[d]++
		}
		t.Logf("worker #%d settled %d destinations", i+1, len(recs))
		if len(recs) == 0 {
			t.Errorf("worker #%d settled no destination: the work was not shared", i+1)
		}
	}
	// Each worker's /metrics counts what its log says it settled; the API process counts none.
	publishedMetric := regexp.MustCompile(`(?m)^reelay_destinations_settled_total\{error_category="",platform="[a-z]+",status="published"\} (\d+)$`)
	for i, wb := range append(workerBases, base) {
		body := metricsGet(t, wb+"/metrics")
		n := 0
		for _, m := range publishedMetric.FindAllStringSubmatch(body, -1) {
			v, _ := strconv.Atoi(m[1])
			n += v
		}
		if i == len(workerBases) {
			if n != 0 {
				t.Errorf("the API process's metrics count %d published destinations", n)
			}
			continue
		}
		if logged := len(logLines(workers[i].out.String(), "destination settled")); n != logged {
			t.Errorf("worker #%d: /metrics counts %d published destinations, its log %d", i+1, n, logged)
		}
	}
	if n := len(logLines(api.out.String(), "destination settled")); n != 0 {
		t.Errorf("the API process settled %d destinations; it runs no jobs", n)
	}
	if len(settled) != 3*scalePosts {
		t.Errorf("the workers settled %d distinct destinations, want %d", len(settled), 3*scalePosts)
	}
	for d, n := range settled {
		if n != 1 {
			t.Errorf("destination %s settled %d times", d, n)
		}
	}
}
