package media_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
)

func TestIngestUpload(t *testing.T) {
	t.Parallel()
	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 7 * time.Second, Width: 1080, Height: 1920, Size: 256 << 10})
	webm := mediatest.WebMBytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 720, Height: 1280})
	for _, backend := range []string{"file", "s3", "mem"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				name    string
				data    []byte
				limit   int64
				allowed []string
				want    error
				kind    string
				// maxRead bounds how much of the input may be consumed: refusals by
				// type must happen after the sniff read alone.
				maxRead int64
			}{
				{name: "mp4", data: video, limit: media.MaxVideoBytes, allowed: media.VideoKinds, kind: "mp4"},
				{name: "webm, default limit", data: webm, allowed: media.VideoKinds, kind: "webm"},
				{name: "exactly the limit", data: video, limit: int64(len(video)), allowed: media.VideoKinds, kind: "mp4"},
				{name: "thumbnail", data: mediatest.PNG(t, 720, 1280), limit: media.MaxImageBytes, allowed: media.ImageKinds, kind: "png"},
				{name: "image where video expected", data: mediatest.JPEG(t, 640, 480), limit: media.MaxVideoBytes, allowed: media.VideoKinds, want: media.ErrUnsupportedFormat, maxRead: media.SniffLen},
				{name: "video where image expected", data: video, limit: media.MaxImageBytes, allowed: media.ImageKinds, want: media.ErrUnsupportedFormat, maxRead: media.SniffLen},
				{name: "text", data: bytes.Repeat([]byte("not a video "), 1000), limit: media.MaxVideoBytes, allowed: media.VideoKinds, want: media.ErrUnsupportedFormat, maxRead: media.SniffLen},
				{name: "empty", data: nil, limit: media.MaxVideoBytes, allowed: media.VideoKinds, want: media.ErrUnsupportedFormat},
				{name: "one byte over", data: video, limit: int64(len(video)) - 1, allowed: media.VideoKinds, want: media.ErrTooLarge, maxRead: int64(len(video))},
				{name: "far over", data: video, limit: 64 << 10, allowed: media.VideoKinds, want: media.ErrTooLarge, maxRead: 64<<10 + 32<<10},
				{name: "limit inside the sniff", data: video, limit: 100, allowed: media.VideoKinds, want: media.ErrTooLarge, maxRead: media.SniffLen},
				{name: "truncated", data: video[:len(video)-1000], limit: media.MaxVideoBytes, allowed: media.VideoKinds, want: media.ErrCorrupt},
				{name: "mov refused when only mp4 allowed", data: mediatest.MP4Bytes(t, mediatest.Options{Brand: "qt  "}), limit: media.MaxVideoBytes, allowed: []string{"mp4"}, want: media.ErrUnsupportedFormat},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					s := openStore(t, freshStoreURL(t, backend)) // empty, to see what is left behind
					src := &mediatest.CountingReader{R: bytes.NewReader(c.data)}
					got, err := media.IngestUpload(context.Background(), s, src, c.limit, c.allowed)
					if c.want != nil {
						if !errors.Is(err, c.want) {
							t.Fatalf("err = %v, want %v", err, c.want)
						}
						if keys := allKeys(t, s); len(keys) != 0 {
							t.Fatalf("left behind: %v", keys)
						}
						if c.maxRead > 0 && src.N() > c.maxRead {
							t.Errorf("read %d bytes before refusing, want at most %d", src.N(), c.maxRead)
						}
						t.Logf("%v (HTTP %d)", err, media.HTTPStatus(err))
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if got.Info.Kind.Name != c.kind || got.Blob.Size != int64(len(c.data)) || got.Blob.SHA256 != hexSHA(c.data) || got.Info.Width == 0 {
						t.Fatalf("got %+v", got)
					}
					if keys := allKeys(t, s); len(keys) != 1 || keys[0] != got.Blob.Key {
						t.Fatalf("bucket holds %v", keys)
					}
				})
			}
		})
	}
}

func TestIngestUploadKeepsSharedBlob(t *testing.T) {
	t.Parallel()
	// Bytes that are already stored belong to someone else: a failed ingest of the same
	// bytes must not delete them. (Here a stored file that fails to probe stands in for
	// it: storing it directly bypasses the checks.)
	s := openStore(t, "mem://")
	bad := append(mediatest.MP4Bytes(t, mediatest.Options{}), 0, 0, 0, 9, 'f', 'r', 'e', 'e')
	b, err := s.Put(context.Background(), bytes.NewReader(bad), media.KindMP4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := media.IngestUpload(context.Background(), s, bytes.NewReader(bad), 0, media.VideoKinds); !errors.Is(err, media.ErrCorrupt) {
		t.Fatalf("err = %v", err)
	}
	if ok, _ := s.Exists(context.Background(), b.Key); !ok {
		t.Fatal("the shared blob was deleted")
	}
}

func TestIngestURL(t *testing.T) {
	t.Parallel()
	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 5 * time.Second, Width: 1080, Height: 1920, Size: 200 << 10})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/video.mp4":
			w.Header().Set("Content-Type", "video/mp4")
			w.Write(video)
		case "/chunked.mp4":
			w.(http.Flusher).Flush()
			w.Write(video)
		case "/page.html":
			w.Header().Set("Content-Type", "video/mp4") // lying header: the bytes decide
			w.Write([]byte(strings.Repeat("<html>not a video</html>", 100)))
		case "/big.mp4":
			w.Header().Set("Content-Length", strconv.Itoa(200<<20))
			w.WriteHeader(200)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	open := media.NewFetcher(media.FetcherConfig{AllowPrivate: true})
	strict := media.NewFetcher(media.FetcherConfig{})

	cases := []struct {
		name    string
		fetcher *media.Fetcher
		url     string
		limit   int64
		want    error
	}{
		{"ok", open, srv.URL + "/video.mp4", media.MaxVideoBytes, nil},
		{"ok chunked", open, srv.URL + "/chunked.mp4", media.MaxVideoBytes, nil},
		{"blocked", strict, srv.URL + "/video.mp4", media.MaxVideoBytes, media.ErrBlockedAddress},
		{"not a video", open, srv.URL + "/page.html", media.MaxVideoBytes, media.ErrUnsupportedFormat},
		{"declared too large", open, srv.URL + "/big.mp4", media.MaxVideoBytes, media.ErrTooLarge},
		{"too large while streaming", open, srv.URL + "/chunked.mp4", 100 << 10, media.ErrTooLarge},
		{"404", open, srv.URL + "/missing.mp4", media.MaxVideoBytes, media.ErrUpstream},
		{"ftp", open, "ftp://example.com/v.mp4", media.MaxVideoBytes, media.ErrBadURL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t, "file://"+t.TempDir())
			got, err := media.IngestURL(context.Background(), c.fetcher, s, c.url, c.limit, media.VideoKinds)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got.Info.Duration != 5*time.Second || got.Info.Height != 1920 || got.Blob.SHA256 != hexSHA(video) {
					t.Fatalf("got %+v", got)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if keys := allKeys(t, s); len(keys) != 0 {
				t.Fatalf("left behind: %v", keys)
			}
			t.Logf("%v (HTTP %d)", err, media.HTTPStatus(err))
		})
	}
}
