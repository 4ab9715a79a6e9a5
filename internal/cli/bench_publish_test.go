package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/reelay/reelay/internal/media/s3test"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store/storetest"
)

// benchChildEnv makes this test binary act as the reelay command, so that `reelay bench
// ingest` can run its server as a child process of the test (os.Executable is the test binary).
const benchChildEnv = "REELAY_CLI_TEST_AS_REELAY"

func TestMain(m *testing.M) {
	if os.Getenv(benchChildEnv) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
	os.Setenv(benchChildEnv, "1") // for the child processes only: this process has decided
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// runBench runs a bench scenario in-process and decodes its JSON result. The scenarios run in
// tiny configurations: these tests check that they work and report what they should, never
// how fast anything was.
func runBench(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot(&out, &errOut)
	root.SetArgs(append([]string{"bench"}, args...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("reelay bench %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	var res map[string]any
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, out.String())
	}
	if !strings.Contains(errOut.String(), args[0]+": ") || !strings.Contains(errOut.String(), "GOMAXPROCS") {
		t.Errorf("no summary on stderr:\n%s", errOut.String())
	}
	if res["scenario"] != args[0] {
		t.Errorf("scenario %v, want %s", res["scenario"], args[0])
	}
	if _, ok := res["targets"].(map[string]any); !ok {
		t.Errorf("no targets: %v", res)
	}
	for _, at := range []string{"before", "after"} {
		for _, cores := range []string{"one_core_mb_per_s", "all_cores_mb_per_s", "loopback_round_trips_per_s"} {
			if v := num(t, res, "machine."+at+"."+cores); v <= 0 {
				t.Errorf("machine.%s.%s = %v, want the yardstick's speed", at, cores, v)
			}
		}
	}
	if !strings.Contains(errOut.String(), "yardstick: ") {
		t.Errorf("no yardstick in the summary:\n%s", errOut.String())
	}
	return res
}

// num reads a number at a dotted path of a result.
func num(t *testing.T, res map[string]any, path string) float64 {
	t.Helper()
	var v any = res
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %v is not an object", path, v)
		}
		v = m[k]
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%s is %v, not a number", path, v)
	}
	return f
}

func TestBenchIngest(t *testing.T) {
	t.Parallel()
	res := runBench(t, "ingest", "--size", "5MB")
	if res["status"] != "published" {
		t.Errorf("status %v", res["status"])
	}
	if res["storage"] != "local disk" || res["local_disk"] != nil {
		t.Errorf("storage %v, local_disk %v; want local disk alone", res["storage"], res["local_disk"])
	}
	if n := num(t, res, "video_bytes"); n < 4.9e6 || n > 5.1e6 {
		t.Errorf("video of %v bytes, want about 5 MB", n)
	}
	if sum, _ := res["video_sha256"].(string); len(sum) != 64 {
		t.Errorf("video_sha256 %q", sum)
	}
	dests, _ := res["destinations"].([]any)
	platforms := map[string]bool{}
	for _, d := range dests {
		d := d.(map[string]any)
		platforms[d["platform"].(string)] = true
		if d["status"] != "published" || num(t, d, "published_after_upload_seconds") < 0 {
			t.Errorf("destination %v", d)
		}
		if num(t, d, "received.complete_uploads") != 1 || num(t, d, "received.published") != 1 || num(t, d, "received.other_uploads") != 0 {
			t.Errorf("%s's simulator recorded %v", d["platform"], d["received"])
		}
	}
	if len(dests) != 3 || !platforms["youtube"] || !platforms["instagram"] || !platforms["tiktok"] {
		t.Errorf("destinations %v", dests)
	}
	// The server, a child process, published to the simulators apart, another one.
	checkSimulators(t, res, []string{"youtube", "instagram", "tiktok"}, 1, true)
	upload, wall, ref := num(t, res, "upload_seconds"), num(t, res, "wall_seconds"), num(t, res, "reference_seconds")
	if upload <= 0 || wall < upload || ref <= 0 || num(t, res, "ratio") <= 0 {
		t.Errorf("upload %v, wall %v, reference %v, ratio %v", upload, wall, ref, res["ratio"])
	}
	if r, _ := res["reference_transfers_seconds"].([]any); len(r) != 4 {
		t.Errorf("reference transfers %v, want 4", r)
	}
	if runtime.GOOS == "linux" { // the child server's memory, from /proc
		peak, before := num(t, res, "server_peak_rss_mb"), num(t, res, "server_rss_before_mb")
		if before <= 0 || peak < before {
			t.Errorf("server memory: peak %v MB, before %v MB", peak, before)
		}
		if cpu := num(t, res, "server_cpu_seconds"); cpu < 0 || cpu > 60 {
			t.Errorf("server CPU %v s", cpu)
		}
		if cpu := num(t, res, "platforms_cpu_seconds"); cpu < 0 || cpu > 60 {
			t.Errorf("the platforms' CPU %v s", cpu)
		}
	}
}

// With --blob-url the child server keeps the video in that bucket (credentials from the
// environment it inherits), and the same publish runs first on local disk, both reported.
func TestBenchIngestBlobURL(t *testing.T) {
	t.Parallel()
	blobURL := s3test.BlobURL(t)
	res := runBench(t, "ingest", "--size", "5MB", "--blob-url", blobURL)
	local, _ := res["local_disk"].(map[string]any)
	if res["storage"] != "s3" || local == nil || local["storage"] != "local disk" {
		t.Fatalf("storage %v, local_disk %v; want s3, and local disk beside it", res["storage"], res["local_disk"])
	}
	for name, r := range map[string]map[string]any{"s3": res, "local disk": local} {
		if r["status"] != "published" || r["video_sha256"] != res["video_sha256"] {
			t.Errorf("%s: status %v, video %v", name, r["status"], r["video_sha256"])
		}
		if runtime.GOOS == "linux" && num(t, r, "server_peak_rss_mb") <= 0 {
			t.Errorf("%s: no server memory", name)
		}
	}
	u, err := url.Parse(blobURL)
	if err != nil {
		t.Fatal(err)
	}
	key := "media/sha256/" + res["video_sha256"].(string)
	out, err := s3test.Shared(t).Client().HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &u.Host, Key: &key})
	if err != nil {
		t.Fatalf("the video is not in the --blob-url bucket: %v", err)
	}
	if *out.ContentLength != int64(num(t, res, "video_bytes")) {
		t.Errorf("the bucket holds %d bytes of the video, want %v", *out.ContentLength, res["video_bytes"])
	}
}

// The lead leaves room for submitting under a full parallel -race run of every package: with 4 s,
// submission alone took that long on a loaded 2-core machine and the scenario refused to go on.
//
// By default the server publishes every post to the simulators apart from it, which the bench
// runs, and none to its own; --platforms-in-server publishes them all to its own, as before.
func TestBenchBurst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		posts int
		apart bool
	}{
		{"platforms apart", nil, 20, true},
		{"platforms in the server", []string{"--platforms-in-server"}, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := runBench(t, append([]string{"burst", "--posts", fmt.Sprint(tc.posts), "--lead", "10s", "--concurrency", "4"}, tc.args...)...)
			checkBurst(t, res, float64(tc.posts))
			checkSimulators(t, res, []string{"youtube", "tiktok"}, float64(tc.posts), tc.apart)
			_, platformsCPU := res["drain_platforms_cpu_seconds"]
			if runtime.GOOS == "linux" && platformsCPU != tc.apart {
				t.Errorf("drain_platforms_cpu_seconds %v, want it only with the platforms apart", res["drain_platforms_cpu_seconds"])
			}
		})
	}
}

// checkSimulators checks that each of platforms' simulators published posts items: those
// apart from the server when apart, and then none of the server's own; else the server's own.
func checkSimulators(t *testing.T, res map[string]any, platforms []string, posts float64, apart bool) {
	t.Helper()
	if got, _ := res["simulators"].(map[string]any)["apart"].(bool); got != apart {
		t.Errorf("simulators %v, want apart %v", res["simulators"], apart)
	}
	for _, p := range platforms {
		inServer, want := num(t, res, "simulators.published_in_server."+p), posts
		if apart {
			if got := num(t, res, "simulators.published_apart."+p); got != posts {
				t.Errorf("the %s simulator apart published %v items, want %v", p, got, posts)
			}
			want = 0
		}
		if inServer != want {
			t.Errorf("the server's own %s simulator published %v items, want %v", p, inServer, want)
		}
	}
	if _, ok := res["simulators"].(map[string]any)["published_apart"]; ok && !apart {
		t.Errorf("simulators apart reported with --platforms-in-server: %v", res["simulators"])
	}
}

func TestBenchBurstPostgres(t *testing.T) {
	base := os.Getenv(storetest.EnvPostgres)
	if base == "" {
		t.Skipf("%s is not set", storetest.EnvPostgres)
	}
	t.Parallel()
	res := runBench(t, "burst", "--posts", "10", "--lead", "10s", "--concurrency", "4", "--database-url", base)
	checkBurst(t, res, 10)
	checkSimulators(t, res, []string{"youtube", "tiktok"}, 10, true)
}

func checkBurst(t *testing.T, res map[string]any, posts float64) {
	t.Helper()
	if num(t, res, "posts") != posts || num(t, res, "published") != posts || num(t, res, "not_published") != 0 {
		t.Errorf("posts %v, published %v, not published %v", res["posts"], res["published"], res["not_published"])
	}
	for _, d := range []string{"lateness_first_published", "lateness_all_published", "submit_latency"} {
		if num(t, res, d+".n") != posts {
			t.Errorf("%s counts %v posts", d, res[d])
		}
	}
	if first, all := num(t, res, "lateness_first_published.max_ms"), num(t, res, "lateness_all_published.max_ms"); first <= 0 || all < first {
		t.Errorf("lateness: first %v ms, all %v ms", first, all)
	}
	if num(t, res, "channels") != 2*num(t, res, "projects") { // youtube and tiktok
		t.Errorf("%v channels in %v projects", res["channels"], res["projects"])
	}
}

func TestBenchThroughput(t *testing.T) {
	t.Parallel()
	res := runBench(t, "throughput", "--duration", "1s", "--concurrency", "4", "--max-posts", "40")
	posts := num(t, res, "posts")
	if posts < 1 || num(t, res, "published") != posts || num(t, res, "not_published") != 0 {
		t.Errorf("posts %v, published %v", posts, res["published"])
	}
	if num(t, res, "posts_per_sec") <= 0 || num(t, res, "accepted_per_sec") <= 0 || num(t, res, "completion.n") != posts {
		t.Errorf("rates: %v posts/s, %v accepted/s, completion %v", res["posts_per_sec"], res["accepted_per_sec"], res["completion"])
	}
	if num(t, res, "settle_seconds") < num(t, res, "drain_seconds") {
		t.Errorf("settle %v s < drain %v s", res["settle_seconds"], res["drain_seconds"])
	}
	if p, _ := res["platforms"].([]any); len(p) != 3 {
		t.Errorf("platforms %v", p)
	}
}

func TestBenchReads(t *testing.T) {
	t.Parallel()
	res := runBench(t, "reads", "--posts", "5", "--duration", "1s", "--warmup", "0s", "--concurrency", "4", "--platforms", "youtube")
	if num(t, res, "posts") != 5 || num(t, res, "requests") < 1 || num(t, res, "errors") != 0 || num(t, res, "rps") <= 0 {
		t.Errorf("result %v", res)
	}
	if num(t, res, "status_counts.200") != num(t, res, "requests") {
		t.Errorf("statuses %v", res["status_counts"])
	}
}

func TestBenchScenarioFlags(t *testing.T) {
	for _, args := range [][]string{
		{"burst", "--platforms", "myspace"},
		{"burst", "--posts", "0"},
		{"throughput", "--duration", "0s"},
		{"reads", "--posts", "0"},
		{"ingest", "--size", "lots"},
		{"ingest", "--key", "k"},
		{"reads", "--url", "http://127.0.0.1:1", "--database-url", "postgres://x"},
		{"ingest", "--url", "http://127.0.0.1:1", "--key", "k", "--blob-url", "s3://bucket"},
	} {
		if _, err := run(t, append([]string{"bench"}, args...)...); err == nil {
			t.Errorf("bench %v: no error", args)
		}
	}
}

// A running server publishes to the simulators it is configured with: the flag that would put
// them in it is refused, not ignored.
func TestBenchPlatformsInServerNeedsSelfContained(t *testing.T) {
	_, err := run(t, "bench", "burst", "--url", "http://127.0.0.1:1", "--key", "k", "--platforms-in-server")
	if err == nil || !strings.Contains(err.Error(), "--platforms-in-server is for the self-contained server") {
		t.Errorf("error %v, want one about --platforms-in-server", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100MB": 100_000_000, "5 MB": 5_000_000, "1MiB": 1 << 20, "2kB": 2000,
		"1.5GB": 1_500_000_000, "123": 123, "10b": 10} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MB", "-1MB", "0", "ten"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

// TestBenchConvert runs `reelay bench convert` on tiny videos: both cases are made by reelay
// and by plain ffmpeg, and the memory is read at both sizes.
func TestBenchConvert(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	t.Parallel()
	res := runBench(t, "convert", "--size", "2MB", "--seconds", "1", "--runs", "1")
	for _, c := range []struct{ name, reference string }{
		{"remux", "-c copy -movflags +faststart"},
		{"reencode", "-c:v libx264"},
	} {
		k, _ := res[c.name].(map[string]any)
		if ref, _ := k["reference"].(string); !strings.Contains(ref, c.reference) {
			t.Errorf("%s: reference %q, want one with %q", c.name, ref, c.reference)
		}
		if num(t, k, "reelay_median_seconds") <= 0 || num(t, k, "reference_median_seconds") <= 0 || num(t, k, "ratio") <= 0 {
			t.Errorf("%s: %v", c.name, k)
		}
		if num(t, k, "output_bytes") <= 0 || num(t, k, "source.width") != 1080 || num(t, k, "source.height") != 1920 {
			t.Errorf("%s: %v", c.name, k)
		}
		if moov, _ := k["source"].(map[string]any)["moov_after_mdat"].(bool); !moov {
			t.Errorf("%s: the source's moov is not at the end, as a camera writes it: %v", c.name, k["source"])
		}
	}
	mem, _ := res["memory"].([]any)
	if len(mem) != 4 {
		t.Fatalf("memory %v, want each case at two sizes", mem)
	}
	for _, m := range mem {
		m := m.(map[string]any)
		// The kernel keeps the peak lazily: after a reset it can read a little under the
		// resident set read with the reset (378.3 against 378.4 MB once under -race), so only
		// that both were read is certain.
		if before, peak := num(t, m, "rss_before_mb"), num(t, m, "peak_rss_mb"); before <= 0 || peak <= 0 {
			t.Errorf("memory %v", m)
		}
	}
	if a, b := num(t, mem[0].(map[string]any), "source_bytes"), num(t, mem[1].(map[string]any), "source_bytes"); a >= b {
		t.Errorf("remux sources of %v and %v bytes, want a smaller one first", a, b)
	}
}
