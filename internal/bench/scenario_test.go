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

	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/registry"
)

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

	// A file of 40 MB lasts long enough that every platform takes it as it is: over 5 s it
	// would break Instagram's bitrate rule, and the ingest would time a conversion.
	path, size, err = WriteVideoFile(t.TempDir(), 40_000_000)
	if err != nil {
		t.Fatal(err)
	}
	big, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	info, err = media.Probe(big, size)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sandboxPlatforms {
		d, _ := registry.Describe(p)
		if broken := conform.Check(d, size, info); len(broken) > 0 {
			t.Errorf("%s: the %d-byte video of %v %s", p, size, info.Duration, strings.Join(broken, "; "))
		}
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
