package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
)

// oneWay hides a reader's other methods (Seek, Len): a pipe, standard input.
type oneWay struct{ r io.Reader }

func (o oneWay) Read(b []byte) (int, error) { return o.r.Read(b) }

// progressLog records Progress calls.
type progressLog struct {
	mu    sync.Mutex
	calls [][2]int64
}

func (p *progressLog) record(sent, total int64) {
	p.mu.Lock()
	p.calls = append(p.calls, [2]int64{sent, total})
	p.mu.Unlock()
}

// check: sent grows strictly and ends at want; total is wantTotal throughout.
func (p *progressLog) check(t *testing.T, want, wantTotal int64) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) == 0 {
		t.Fatal("Progress was never called")
	}
	var last int64
	for _, c := range p.calls {
		if c[0] <= last || c[1] != wantTotal {
			t.Fatalf("progress %v: sent must grow and total stay %d", p.calls, wantTotal)
		}
		last = c[0]
	}
	if last != want {
		t.Errorf("progress ends at %d, want %d", last, want)
	}
}

// parseForm reads a recorded multipart body into its fields and files.
func parseForm(t *testing.T, r received) (fields map[string]string, files map[string][]byte) {
	t.Helper()
	_, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", r.header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
	fields, files = map[string]string{}, map[string][]byte{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return fields, files
		}
		if err != nil {
			t.Fatalf("multipart body: %v", err)
		}
		b, err := io.ReadAll(part)
		if err != nil {
			// A part cut short (the client broke the request off): the server would refuse the
			// form, so nothing of it counts as received.
			return fields, files
		}
		if part.FileName() != "" {
			files[part.FormName()] = b
		} else {
			fields[part.FormName()] = string(b)
		}
	}
}

func TestUploadForm(t *testing.T) {
	video := bytes.Repeat([]byte("video-bytes."), 50000) // 600 kB: many reads
	thumb := []byte("\x89PNG fake thumbnail")
	when := time.Date(2026, 12, 1, 9, 0, 0, 0, time.FixedZone("", 3600))
	tests := []struct {
		name          string
		video, thumb  io.Reader
		size          int64 // Upload.Size
		wantTotal     int64
		wantChunked   bool
		wantVideoName string
	}{
		{name: "sizes found by seeking", video: bytes.NewReader(video), thumb: bytes.NewReader(thumb),
			wantTotal: int64(len(video) + len(thumb)), wantVideoName: "clip.mp4"},
		{name: "size given", video: oneWay{bytes.NewReader(video)}, thumb: bytes.NewReader(thumb), size: int64(len(video)),
			wantTotal: int64(len(video) + len(thumb)), wantVideoName: "clip.mp4"},
		{name: "size unknown", video: oneWay{bytes.NewReader(video)}, thumb: oneWay{bytes.NewReader(thumb)},
			wantTotal: -1, wantChunked: true, wantVideoName: "clip.mp4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, answer(200, publishJSON))
			c, _ := newFakeClient(t, f.URL)
			var progress progressLog
			_, err := c.Publish(context.Background(), client.PublishRequest{
				ProjectID: "p1", Title: "Launch", Caption: "We shipped #launch",
				Platforms:      []client.Platform{client.YouTube, client.TikTok},
				ChannelIDs:     []string{"c1", "c2"},
				ScheduledFor:   &when,
				AllowDuplicate: true,
				YouTube:        &client.YouTubeOptions{PrivacyStatus: "unlisted", MadeForKids: new(false)},
				Extra:          map[string]any{"caption": "overridden"},
				Video:          &client.Upload{Reader: tt.video, Name: "clip.mp4", Size: tt.size},
				Thumbnail:      &client.Upload{Reader: tt.thumb},
				Progress:       progress.record,
				Wait:           new(90 * time.Second),
			})
			if err != nil {
				t.Fatal(err)
			}
			r := f.requests()[0]
			fields, files := parseForm(t, r)
			want := map[string]string{
				"project_id": "p1", "title": "Launch", "caption": "overridden",
				"platforms": `["youtube","tiktok"]`, "channel_ids": `["c1","c2"]`,
				"scheduled_for": "2026-12-01T09:00:00+01:00", "allow_duplicate": "true",
				"youtube": `{"privacy_status":"unlisted","made_for_kids":false}`,
			}
			if len(fields) != len(want) {
				t.Errorf("fields %v, want %v", fields, want)
			}
			for k, v := range want {
				if fields[k] != v {
					t.Errorf("field %s = %q, want %q", k, fields[k], v)
				}
			}
			if !bytes.Equal(files["video"], video) || !bytes.Equal(files["thumbnail"], thumb) {
				t.Errorf("files: video %d bytes, thumbnail %d bytes", len(files["video"]), len(files["thumbnail"]))
			}
			if cl := r.header.Get("Content-Length"); tt.wantChunked != (cl == "") {
				t.Errorf("Content-Length %q; chunked wanted: %v", cl, tt.wantChunked)
			} else if cl != "" && cl != strconv.Itoa(len(r.body)) {
				t.Errorf("Content-Length %s, body %d bytes", cl, len(r.body))
			}
			if r.header.Get("Expect") != "100-continue" || r.header.Get("Prefer") != "wait=60" {
				t.Errorf("headers %v", r.header)
			}
			progress.check(t, int64(len(video)+len(thumb)), tt.wantTotal)
		})
	}
}

// failingReader yields n bytes, then err.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(b []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(len(b), f.n)
	for i := range k {
		b[i] = 'x'
	}
	f.n -= k
	return k, nil
}

// TestUploadRetry: an upload is sent again only when its bytes can be sent again.
func TestUploadRetry(t *testing.T) {
	video := bytes.Repeat([]byte("0123456789"), 20000)
	errDisk := errors.New("disk on fire")
	tests := []struct {
		name     string
		video    func() *client.Upload
		steps    []step
		attempts int
		// wantErr is part of the error's text; empty: success.
		wantErr string
		// sentWhole lists the attempts whose body carried the whole video.
		sentWhole []int
	}{
		{
			name:      "a seekable file is rewound and sent again",
			video:     func() *client.Upload { return &client.Upload{Reader: bytes.NewReader(video)} },
			steps:     []step{answer(503, apiError("service_unavailable", "later")), answer(200, publishJSON)},
			attempts:  2,
			sentWhole: []int{0, 1},
		},
		{
			name:      "a one-way reader that was read is not sent again",
			video:     func() *client.Upload { return &client.Upload{Reader: oneWay{bytes.NewReader(video)}} },
			steps:     []step{answer(503, apiError("service_unavailable", "later")), answer(200, publishJSON)},
			attempts:  1,
			wantErr:   "later",
			sentWhole: []int{0},
		},
		{
			name:      "a one-way reader refused before its body is sent again",
			video:     func() *client.Upload { return &client.Upload{Reader: oneWay{bytes.NewReader(video)}} },
			steps:     []step{refuse(429, apiError("rate_limited", "slow down"), "Retry-After", "1"), answer(200, publishJSON)},
			attempts:  2,
			sentWhole: []int{1},
		},
		{
			name:     "a reader that fails is the error, not retried",
			video:    func() *client.Upload { return &client.Upload{Reader: &failingReader{n: 100000, err: errDisk}} },
			steps:    []step{answer(200, publishJSON)},
			attempts: 1,
			wantErr:  "read video: disk on fire",
		},
		{
			name: "a reader shorter than its Size",
			video: func() *client.Upload {
				return &client.Upload{Reader: oneWay{bytes.NewReader(video)}, Size: int64(len(video)) + 10}
			},
			steps:    []step{answer(200, publishJSON)},
			attempts: 1,
			wantErr:  "ended after 200000 of its 200010 bytes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.steps...)
			c, _ := newFakeClient(t, f.URL)
			_, err := c.Publish(context.Background(), client.PublishRequest{ProjectID: "p1", Video: tt.video()})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
			}
			if errors.Is(err, errDisk) != (tt.wantErr == "read video: disk on fire") {
				t.Errorf("the reader's error is not in the chain: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != tt.attempts {
				t.Fatalf("attempts %d, want %d", len(reqs), tt.attempts)
			}
			key := reqs[0].header.Get("Idempotency-Key")
			for i, r := range reqs {
				if r.header.Get("Idempotency-Key") != key {
					t.Errorf("attempt %d changed the Idempotency-Key", i+1)
				}
				whole := false
				if len(r.body) > 0 {
					_, files := parseForm(t, r)
					whole = bytes.Equal(files["video"], video)
				}
				if want := slices.Contains(tt.sentWhole, i); whole != want {
					t.Errorf("attempt %d sent the whole video: %v, want %v (body %d bytes)", i+1, whole, want, len(r.body))
				}
			}
		})
	}
}

// pattern is a large, one-way body made on the fly.
type pattern struct{ left int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.left))
	for i := range n {
		b[i] = byte(i)
	}
	p.left -= int64(n)
	return n, nil
}

// TestLargeUploadMemory: a 64 MiB upload goes out without the client holding it.
func TestLargeUploadMemory(t *testing.T) {
	const size = 64 << 20
	var received int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, publishJSON)
	}))
	defer srv.Close()
	c, _ := newFakeClient(t, srv.URL)

	for _, tt := range []struct {
		name string
		up   client.Upload
	}{
		{"size unknown", client.Upload{Reader: &pattern{left: size}}},
		{"size given", client.Upload{Reader: &pattern{left: size}, Size: size}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			base, peak := ms.HeapInuse, ms.HeapInuse
			var nextSample int64
			up := tt.up
			_, err := c.Publish(context.Background(), client.PublishRequest{ProjectID: "p1", Video: &up,
				Progress: func(sent, total int64) {
					if sent < nextSample {
						return
					}
					nextSample = sent + 4<<20
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}})
			if err != nil {
				t.Fatal(err)
			}
			if received < size {
				t.Fatalf("the server received %d bytes, want more than %d", received, size)
			}
			if growth := int64(peak) - int64(base); growth > 16<<20 {
				t.Errorf("heap in use grew by %d MiB during a %d MiB upload", growth>>20, size>>20)
			} else {
				t.Logf("heap growth during the upload: %.1f MiB", float64(growth)/(1<<20))
			}
		})
	}
}
