package bench

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\treelay\nVmPeak:\t 2000000 kB\nVmHWM:\t   97656 kB\nVmRSS:\t   48828 kB\nThreads:\t9\n"
	m, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	// 97656 KiB = 99,999,744 bytes = 100.0 MB; 48828 KiB = 50.0 MB.
	if m.HWMMB != 100 || m.RSSMB != 50 {
		t.Errorf("got %+v, want HWM 100 MB, RSS 50 MB", m)
	}
	if _, err := parseStatus([]byte("Name:\tx\nVmRSS:\t1 kB\n")); err == nil {
		t.Error("a status without VmHWM was accepted")
	}
	if _, err := parseStatus([]byte("VmRSS:\t1 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Error("a status in an unknown unit was accepted")
	}
	if m, err := ReadMemory(os.Getpid()); err == nil && (m.RSSMB <= 0 || m.HWMMB < m.RSSMB) {
		t.Errorf("own memory %+v: want 0 < RSS <= HWM", m)
	}
}

func TestParseStat(t *testing.T) {
	// A command name with a space and parentheses; utime 150 and stime 25 ticks.
	stat := "4242 (re lay (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 25 0 0 20 0 9 0 100 2000000 12000 18446744073709551615\n"
	if s, err := parseStat([]byte(stat)); err != nil || s != 1.75 {
		t.Errorf("got %v s, %v; want 1.75 s", s, err)
	}
	for _, bad := range []string{"4242 reelay S 1", "4242 (reelay) S 1 2 3", "4242 (reelay) S 1 4242 4242 0 -1 4194560 1000 0 0 0 x 25 0"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
	if s, err := ReadCPU(os.Getpid()); err == nil && s < 0 {
		t.Errorf("own CPU %v s", s)
	}
}

func TestPublishFormEncode(t *testing.T) {
	video := bytes.Repeat([]byte("v"), 100_000)
	f := PublishForm{Fields: map[string]string{"project_id": "p", "channel_ids": `["a","b"]`},
		Video: bytes.NewReader(video), Size: int64(len(video))}
	body, size, ctype := f.encode()
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(raw)) != size {
		t.Fatalf("declared %d bytes, wrote %d", size, len(raw))
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("content type %q: %v", ctype, err)
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	got := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		got[p.FormName()] = string(b)
	}
	if got["project_id"] != "p" || got["channel_ids"] != `["a","b"]` || got["video"] != string(video) {
		t.Errorf("parts: project_id %q channel_ids %q video of %d bytes", got["project_id"], got["channel_ids"], len(got["video"]))
	}
}

func TestDist(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	d := distOf(ds)
	if d.N != 100 || d.Min != 1 || d.P50 != 50 || d.P90 != 90 || d.P99 != 99 || d.Max != 100 {
		t.Errorf("got %+v", d)
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("distOf sorted its argument")
	}
	if d := distOf(nil); d.N != 0 || d.P99 != 0 {
		t.Errorf("empty: %+v", d)
	}
}

func TestParsePlatforms(t *testing.T) {
	got, err := ParsePlatforms(" YouTube, tiktok,youtube ")
	if err != nil || strings.Join(got, ",") != "youtube,tiktok" {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", " , ", "bluesky", "youtube,myspace"} {
		if _, err := ParsePlatforms(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestVideos(t *testing.T) {
	small, err := SmallVideo()
	if err != nil {
		t.Fatal(err)
	}
	info, err := media.Probe(bytes.NewReader(small), int64(len(small)))
	if err != nil || info.Width != 1080 || info.Height != 1920 || info.Duration != 5*time.Second {
		t.Errorf("small video: %+v, %v", info, err)
	}
	path, size, err := WriteVideoFile(t.TempDir(), 3_000_000)
	if err != nil {
		t.Fatal(err)
	}
	if size < 2_900_000 || size > 3_100_000 {
		t.Errorf("asked about 3,000,000 bytes, got %d", size)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if info, err := media.Probe(f, size); err != nil || info.Duration != 5*time.Second {
		t.Errorf("large video: %+v, %v", info, err)
	}
}

func TestLoopbackTransfer(t *testing.T) {
	path, size, err := WriteVideoFile(t.TempDir(), 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	d, err := loopbackTransfer(context.Background(), path, size)
	if err != nil || d <= 0 {
		t.Errorf("transfer: %v, %v", d, err)
	}
}

// Run with Paths goes through all of them.
func TestRunPaths(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
	}))
	defer srv.Close()
	paths := []string{"/a/1", "/a/2", "/a/3", "/a/4", "/a/5"}
	r, err := Run(context.Background(), Config{URL: srv.URL, Paths: paths, Concurrency: 2, Duration: 200 * time.Millisecond})
	if err != nil || r.Errors != 0 || r.Requests < 10 {
		t.Fatalf("%+v, %v", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if seen[p] == 0 {
			t.Errorf("%s never requested: %v", p, seen)
		}
	}
	if len(seen) != len(paths) {
		t.Errorf("requested %v", seen)
	}
}
