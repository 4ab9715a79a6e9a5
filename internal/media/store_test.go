package media_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/media/s3test"
)

var signingKey = []byte("0123456789abcdef0123456789abcdef")

// TestMain stops the S3 server the tests on S3 start (s3test) once they all ran.
func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// storeBackends are the stores the tests run on, each with how to make a new, empty one. S3
// is SeaweedFS (a bucket of its own per store), run apart by s3test: a subtest on it skips,
// saying why, where SeaweedFS is not built.
var storeBackends = []struct {
	name string
	url  func(t testing.TB) string
}{
	{"file", func(t testing.TB) string { return "file://" + t.TempDir() + "/blobs" }},
	{"s3", s3test.BlobURL},
	{"mem", func(testing.TB) string { return "mem://" }},
}

// freshStoreURL returns the URL of a new, empty store of the given backend.
func freshStoreURL(t testing.TB, backend string) string {
	t.Helper()
	for _, b := range storeBackends {
		if b.name == backend {
			return b.url(t)
		}
	}
	t.Fatalf("no backend %q", backend)
	return ""
}

func openStore(t testing.TB, blobURL string, opts ...media.StoreOption) *media.Store {
	t.Helper()
	s, err := media.OpenStore(context.Background(), blobURL, signingKey, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func allKeys(t testing.TB, s *media.Store) []string {
	t.Helper()
	var keys []string
	it := s.Bucket().List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, obj.Key)
	}
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestStore(t *testing.T) {
	t.Parallel()
	for _, backend := range storeBackends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := openStore(t, backend.url(t))
			video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 3 * time.Second, Width: 720, Height: 1280, Size: 300 << 10, MoovAtEnd: true})

			// These subtests run in order on one store: each leaves it empty for the next.
			t.Run("put, dedup, open, probe, delete", func(t *testing.T) {
				b1, err := s.Put(ctx, bytes.NewReader(video), media.KindMP4)
				if err != nil {
					t.Fatal(err)
				}
				want := media.Blob{Key: "media/sha256/" + hexSHA(video), Size: int64(len(video)), SHA256: hexSHA(video), ContentType: "video/mp4"}
				if b1 != want {
					t.Fatalf("got %+v\nwant %+v", b1, want)
				}
				b2, err := s.Put(ctx, bytes.NewReader(video), media.KindMP4)
				if err != nil || b2.Key != b1.Key || !b2.Deduplicated {
					t.Fatalf("second put: %+v %v", b2, err)
				}
				if keys := allKeys(t, s); len(keys) != 1 || keys[0] != b1.Key {
					t.Fatalf("bucket holds %v, want only %s", keys, b1.Key)
				}

				rc, err := s.Open(ctx, b1.Key, 1000)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(got, video[1000:]) {
					t.Fatalf("range read from 1000: %d bytes, %v", len(got), err)
				}
				// A resumed upload whose platform already has every byte may ask for none.
				rc, err = s.Open(ctx, b1.Key, int64(len(video)))
				if err != nil {
					t.Fatalf("open at the end: %v", err)
				}
				got, err = io.ReadAll(rc)
				rc.Close()
				if err != nil || len(got) != 0 {
					t.Fatalf("range read from the end: %d bytes, %v", len(got), err)
				}

				ra, err := s.OpenAt(ctx, b1.Key)
				if err != nil {
					t.Fatal(err)
				}
				info, err := media.Probe(ra, ra.Size())
				if err != nil || info.Width != 720 || info.Height != 1280 || info.Duration != 3*time.Second {
					t.Fatalf("probe over the store: %+v %v", info, err)
				}
				buf := make([]byte, 10)
				if n, err := ra.ReadAt(buf, int64(len(video))-4); n != 4 || err != io.EOF || !bytes.Equal(buf[:4], video[len(video)-4:]) {
					t.Fatalf("ReadAt past the end: %d %v", n, err)
				}
				big := make([]byte, 200<<10)
				if n, err := ra.ReadAt(big, 5); n != len(big) || err != nil || !bytes.Equal(big, video[5:5+len(big)]) {
					t.Fatalf("large ReadAt: %d %v", n, err)
				}

				attrs, err := s.Stat(ctx, b1.Key)
				if err != nil || attrs.Size != int64(len(video)) || attrs.ContentType != "video/mp4" {
					t.Fatalf("stat: %+v %v", attrs, err)
				}
				if ok, err := s.Exists(ctx, b1.Key); !ok || err != nil {
					t.Fatalf("exists: %v %v", ok, err)
				}
				if err := s.Delete(ctx, b1.Key); err != nil {
					t.Fatal(err)
				}
				if err := s.Delete(ctx, b1.Key); err != nil {
					t.Fatalf("deleting again: %v", err)
				}
				if ok, _ := s.Exists(ctx, b1.Key); ok {
					t.Fatal("still exists")
				}
				if _, err := s.Open(ctx, b1.Key, 0); !errors.Is(err, media.ErrNotFound) {
					t.Fatalf("open deleted: %v", err)
				}
				if _, err := s.OpenAt(ctx, b1.Key); !errors.Is(err, media.ErrNotFound) {
					t.Fatalf("OpenAt deleted: %v", err)
				}
			})

			t.Run("failed source leaves nothing", func(t *testing.T) {
				boom := errors.New("client went away")
				_, err := s.Put(ctx, io.MultiReader(bytes.NewReader(video[:100<<10]), errReader{boom}), media.KindMP4)
				if !errors.Is(err, boom) {
					t.Fatalf("err = %v", err)
				}
				if keys := allKeys(t, s); len(keys) != 0 {
					t.Fatalf("left behind: %v", keys)
				}
			})

			t.Run("serve with ranges", func(t *testing.T) {
				b, err := s.Put(ctx, bytes.NewReader(video), media.KindMP4)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Delete(ctx, b.Key)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if err := s.ServeBlob(w, r, strings.TrimPrefix(r.URL.Path, "/")); err != nil {
						http.Error(w, err.Error(), 404)
					}
				}))
				defer srv.Close()
				req, _ := http.NewRequest("GET", srv.URL+"/"+b.Key, nil)
				req.Header.Set("Range", "bytes=100-199")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 206 || !bytes.Equal(got, video[100:200]) || resp.Header.Get("Content-Type") != "video/mp4" || resp.Header.Get("ETag") != `"`+b.SHA256+`"` {
					t.Fatalf("range: %d %q %d bytes", resp.StatusCode, resp.Header, len(got))
				}
				resp, err = http.Get(srv.URL + "/" + b.Key)
				if err != nil {
					t.Fatal(err)
				}
				got, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !bytes.Equal(got, video) {
					t.Fatalf("full: %d, %d bytes", resp.StatusCode, len(got))
				}
				resp, _ = http.Get(srv.URL + "/media/sha256/" + strings.Repeat("0", 64))
				resp.Body.Close()
				if resp.StatusCode != 404 {
					t.Fatalf("missing: %d", resp.StatusCode)
				}
			})
		})
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestStoreConcurrentPutsOfSameBytes(t *testing.T) {
	t.Parallel()
	for _, backend := range storeBackends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t, backend.url(t))
			data := mediatest.WebMBytes(t, mediatest.Options{Size: 64 << 10})
			errs := make(chan error, 8)
			for range 8 {
				go func() {
					_, err := s.Put(context.Background(), bytes.NewReader(data), media.KindWebM)
					errs <- err
				}()
			}
			for range 8 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if keys := allKeys(t, s); len(keys) != 1 {
				t.Fatalf("bucket holds %v", keys)
			}
		})
	}
}

func TestSignedURL(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	var clock atomic.Int64
	clock.Store(now.Unix())
	s := openStore(t, "mem://", media.WithPublicURL("https://reelay.example.com/"), media.WithClock(func() time.Time { return time.Unix(clock.Load(), 0) }))
	other, err := media.OpenStore(context.Background(), "mem://", []byte("another key, also 32 bytes long!"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	id := hexSHA([]byte("video"))
	link, err := s.SignedURL("media/sha256/"+id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(link)
	if !strings.HasPrefix(link, "https://reelay.example.com/api/v1/media/"+id+"?") {
		t.Fatalf("link %s", link)
	}
	q := u.Query()
	if key, err := s.VerifySignedURL(id, q); err != nil || key != "media/sha256/"+id {
		t.Fatalf("verify: %q %v", key, err)
	}

	tamper := func(k, v string) url.Values {
		c := url.Values{}
		for kk, vv := range q {
			c[kk] = vv
		}
		c.Set(k, v)
		return c
	}
	sig := q.Get("sig")
	flipped := []byte(sig)
	flipped[5] ^= 1
	cases := []struct {
		name string
		id   string
		q    url.Values
		want error
	}{
		{"other id", hexSHA([]byte("other")), q, media.ErrBadSignature},
		{"later expiry", id, tamper("exp", fmt.Sprint(now.Unix()+7200)), media.ErrBadSignature},
		{"flipped signature", id, tamper("sig", string(flipped)), media.ErrBadSignature},
		{"truncated signature", id, tamper("sig", sig[:20]), media.ErrBadSignature},
		{"no signature", id, url.Values{"exp": q["exp"]}, media.ErrBadSignature},
		{"no expiry", id, url.Values{"sig": q["sig"]}, media.ErrBadSignature},
		{"id not a digest", "../../etc/passwd", q, media.ErrBadSignature},
		{"temporary key", "tmp", q, media.ErrBadSignature},
	}
	for _, c := range cases {
		if _, err := s.VerifySignedURL(c.id, c.q); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := other.VerifySignedURL(id, q); !errors.Is(err, media.ErrBadSignature) {
		t.Errorf("another server's key accepted the link: %v", err)
	}

	clock.Store(now.Add(time.Hour).Unix())
	if _, err := s.VerifySignedURL(id, q); err != nil {
		t.Errorf("at the expiry second: %v", err)
	}
	clock.Store(now.Add(time.Hour + time.Second).Unix())
	if _, err := s.VerifySignedURL(id, q); !errors.Is(err, media.ErrLinkExpired) {
		t.Errorf("expired: %v", err)
	}

	if _, err := s.SignedURL("media/tmp/abc", time.Hour); err == nil {
		t.Error("signed a non-media key")
	}
	if _, err := media.OpenStore(context.Background(), "mem://", []byte("short")); err == nil {
		t.Error("accepted a 5-byte signing key")
	}
}

func TestStoreCleanupTemp(t *testing.T) {
	t.Parallel()
	for _, backend := range storeBackends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			// The store's clock against the times the storage gives its objects (the S3
			// server's own clock): they are one machine's here.
			var clock atomic.Int64
			clock.Store(time.Now().Unix())
			s := openStore(t, backend.url(t), media.WithClock(func() time.Time { return time.Unix(clock.Load(), 0) }))
			ctx := context.Background()
			// A Put that a crash interrupted leaves a temporary object behind.
			if err := s.Bucket().WriteAll(ctx, "media/tmp/orphan", []byte("partial"), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, strings.NewReader("kept"), media.KindPNG); err != nil {
				t.Fatal(err)
			}
			if n, err := s.CleanupTemp(ctx, time.Hour); err != nil || n != 0 {
				t.Fatalf("young temp deleted: %d %v", n, err)
			}
			clock.Add(7200)
			if n, err := s.CleanupTemp(ctx, time.Hour); err != nil || n != 1 {
				t.Fatalf("cleanup: %d %v", n, err)
			}
			if keys := allKeys(t, s); len(keys) != 1 || !strings.HasPrefix(keys[0], "media/sha256/") {
				t.Fatalf("left %v", keys)
			}
		})
	}
}

// TestStoreCleanupTempAbortsS3Uploads: a Put of more than a part to S3 that a kill cut off
// leaves a multipart upload under the temporary prefix and no object; CleanupTemp aborts it
// once it is older than the age, and leaves young ones and other prefixes' alone.
func TestStoreCleanupTempAbortsS3Uploads(t *testing.T) {
	t.Parallel()
	blobURL := s3test.BlobURL(t)
	u, err := url.Parse(blobURL)
	if err != nil {
		t.Fatal(err)
	}
	bucket := aws.String(u.Host)
	client := s3test.Shared(t).Client()
	var clock atomic.Int64
	clock.Store(time.Now().Unix())
	s := openStore(t, blobURL, media.WithClock(func() time.Time { return time.Unix(clock.Load(), 0) }))
	ctx := context.Background()

	// What a killed Put leaves: an upload begun, a part stored, never completed. And one of
	// another application sharing the bucket.
	for _, key := range []string{"media/tmp/0123456789abcdef", "elsewhere/upload"} {
		up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader(bytes.Repeat([]byte{7}, 5<<20))}); err != nil {
			t.Fatal(err)
		}
	}
	uploads := func() []string {
		t.Helper()
		out, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, u := range out.Uploads {
			keys = append(keys, aws.ToString(u.Key))
		}
		slices.Sort(keys)
		return keys
	}
	if keys := allKeys(t, s); len(keys) != 0 {
		t.Fatalf("objects %v: an upload in progress is no object", keys)
	}
	if n, err := s.CleanupTemp(ctx, time.Hour); err != nil || n != 0 {
		t.Fatalf("cleanup of a young upload: %d %v", n, err)
	}
	if got := uploads(); len(got) != 2 {
		t.Fatalf("uploads after a cleanup with none old: %v", got)
	}
	clock.Add(7200)
	if n, err := s.CleanupTemp(ctx, time.Hour); err != nil || n != 1 {
		t.Fatalf("cleanup: %d %v", n, err)
	}
	if got := uploads(); !slices.Equal(got, []string{"elsewhere/upload"}) {
		t.Errorf("uploads left %v, want only the other prefix's", got)
	}
}

func TestOpenStoreURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"ftp://x", "file://relative/path", "file:relative", "gs://bucket", "::"} {
		if s, err := media.OpenStore(context.Background(), u, signingKey); err == nil {
			s.Close()
			t.Errorf("%s: accepted", u)
		}
	}
	dir := t.TempDir()
	s := openStore(t, "file://"+dir+"/a/b?base_url=http://localhost/blob")
	// fileblob's own signer is configured by base_url.
	if _, err := s.Bucket().SignedURL(context.Background(), "k", &blob.SignedURLOptions{}); err != nil {
		t.Errorf("fileblob signer: %v", err)
	}
}

// TestFileStoreTypes: a file store writes no ".attrs" sidecar (fileblob would hash every
// upload with MD5 for it), so Stat and ServeBlob take the content type from the blob's first
// bytes; blobs stored by earlier versions keep the type their sidecar names.
func TestFileStoreTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, "file://"+dir)
	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: time.Second, Width: 320, Height: 568})
	png := mediatest.PNG(t, 16, 16)
	for _, c := range []struct {
		data []byte
		kind media.Kind
	}{{video, media.KindMP4}, {png, media.KindPNG}} {
		b, err := s.Put(ctx, bytes.NewReader(c.data), c.kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(b.Key)) + ".attrs"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: sidecar: %v", b.Key, err)
		}
		if a, err := s.Stat(ctx, b.Key); err != nil || a.ContentType != c.kind.ContentType {
			t.Errorf("%s: stat %+v %v, want %s", b.Key, a, err, c.kind.ContentType)
		}
	}

	// A blob written with a sidecar, as fileblob did by default before.
	old, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	key := "media/sha256/" + strings.Repeat("ab", 32)
	if err := old.WriteAll(ctx, key, video, &blob.WriterOptions{ContentType: "video/quicktime"}); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Stat(ctx, key); err != nil || a.ContentType != "video/quicktime" {
		t.Errorf("blob with a sidecar: stat %+v %v, want its video/quicktime", a, err)
	}
	// No sidecar and bytes of no known kind: the bucket's generic type stays.
	if err := os.WriteFile(filepath.Join(dir, "media", "sha256", strings.Repeat("cd", 32)), []byte("not media"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Stat(ctx, "media/sha256/"+strings.Repeat("cd", 32)); err != nil || a.ContentType != "application/octet-stream" {
		t.Errorf("unknown bytes: stat %+v %v", a, err)
	}
}

// TestPutMemory streams 50 MB through Put and reports how much the heap grew: it must not
// grow with the file. Not parallel, so that other tests' allocations do not blur the figure;
// SeaweedFS keeps the bytes in its own process, so only reelay's buffers count.
func TestPutMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 50 MB")
	}
	const size = 50 << 20
	for _, backend := range storeBackends {
		if backend.name == "mem" { // holds every byte in this process by design
			continue
		}
		t.Run(backend.name, func(t *testing.T) {
			s := openStore(t, backend.url(t))
			src := mediatest.MP4Reader(mediatest.Options{Duration: 30 * time.Second, Size: size})
			defer src.Close()
			start := time.Now()
			peak, b, err := measurePeakHeap(func() (media.Blob, error) {
				return s.Put(context.Background(), src, media.KindMP4)
			})
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if b.Size < size-1<<20 || b.Size > size+1<<20 {
				t.Fatalf("stored %d bytes", b.Size)
			}
			t.Logf("Put of %d MB in %v grew the live heap by at most %.1f MB (allocated %.1f MB in all)", b.Size>>20, elapsed.Round(time.Millisecond), float64(peak)/(1<<20), totalAllocMB)
			// The file store needs only the copy buffers; the S3 upload adds its two 5 MiB
			// part buffers (s3upload.go), a fixed cost whatever the file's size.
			limit := uint64(8 << 20)
			if backend.name == "s3" {
				limit = 16 << 20
			}
			if peak > limit && !raceEnabled {
				t.Errorf("heap grew by %d MB for a %d MB file", peak>>20, b.Size>>20)
			}
		})
	}
}

var totalAllocMB float64

// measurePeakHeap runs fn while sampling the live heap (HeapAlloc right after a forced GC,
// so that garbage awaiting collection does not count) and returns the largest growth seen.
func measurePeakHeap(fn func() (media.Blob, error)) (uint64, media.Blob, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.GC()
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	b, err := fn()
	close(stop)
	<-done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	totalAllocMB = float64(after.TotalAlloc-ms.TotalAlloc) / (1 << 20)
	return peak.Load(), b, err
}

// TestStoreLargeSourceCut: a source that fails, or passes its size cap, after several of the
// S3 uploader's 5 MiB parts were sent leaves nothing behind: no object, no temporary one, and
// on S3 no unfinished multipart upload (whose parts the bucket would keep, and bill, unseen
// by a listing of its objects).
func TestStoreLargeSourceCut(t *testing.T) {
	t.Parallel()
	const size, cut = 24 << 20, 13 << 20
	boom := errors.New("client went away")
	cases := []struct {
		name string
		put  func(s *media.Store, src io.Reader) error
		want error
	}{
		{"source fails", func(s *media.Store, src io.Reader) error {
			_, err := s.Put(context.Background(), io.MultiReader(io.LimitReader(src, cut), errReader{boom}), media.KindMP4)
			return err
		}, boom},
		{"size cap", func(s *media.Store, src io.Reader) error {
			_, err := media.IngestUpload(context.Background(), s, src, cut, media.VideoKinds)
			return err
		}, media.ErrTooLarge},
	}
	for _, backend := range storeBackends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					blobURL := backend.url(t)
					s := openStore(t, blobURL)
					src := &mediatest.CountingReader{R: mediatest.MP4Reader(mediatest.Options{Duration: 20 * time.Second, Size: size})}
					if err := c.put(s, src); !errors.Is(err, c.want) {
						t.Fatalf("err = %v, want %v", err, c.want)
					}
					if src.N() < cut {
						t.Fatalf("read %d bytes: the source was refused before it was cut", src.N())
					}
					if keys := allKeys(t, s); len(keys) != 0 {
						t.Fatalf("left behind: %v", keys)
					}
					if backend.name == "s3" {
						if uploads := unfinishedUploads(t, s, blobURL); len(uploads) != 0 {
							t.Fatalf("unfinished multipart uploads left: %v", uploads)
						}
					}
				})
			}
		})
	}
}

// unfinishedUploads lists the keys of the multipart uploads begun and neither completed nor
// aborted in the S3 bucket of s.
func unfinishedUploads(t testing.TB, s *media.Store, blobURL string) []string {
	t.Helper()
	var client *s3.Client
	if !s.Bucket().As(&client) {
		t.Fatal("not an S3 bucket")
	}
	u, err := url.Parse(blobURL)
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(u.Host)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, up := range out.Uploads {
		keys = append(keys, aws.ToString(up.Key))
	}
	return keys
}

// TestStoreLocalFiles: what renditions go through. PutFileAt takes a local file in under a
// key of the caller's (moved into a file store, streamed into others, hashed then) and
// removes it; LocalFile hands back a path holding the same bytes, a copy in dir except in a
// file store, which done removes.
func TestStoreLocalFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: 2 * time.Second, Width: 540, Height: 960, Size: 7 << 20})
	key := media.KeyForRendition(hexSHA([]byte("a rendition's name")))
	for _, backend := range storeBackends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t, backend.url(t))
			work := t.TempDir()
			dir, err := s.TempDir(work)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "out.mp4")
			if err := os.WriteFile(path, video, 0o600); err != nil {
				t.Fatal(err)
			}
			b, err := s.PutFileAt(ctx, key, path, media.KindMP4)
			if err != nil {
				t.Fatal(err)
			}
			if b.Key != key || b.Size != int64(len(video)) || b.ContentType != "video/mp4" {
				t.Fatalf("stored %+v", b)
			}
			// Only a file moved in was not read, so has no digest.
			if moved := backend.name == "file"; (b.SHA256 == "") != moved || !moved && b.SHA256 != hexSHA(video) {
				t.Errorf("SHA-256 %q of a %s store", b.SHA256, backend.name)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the local file stays: %v", err)
			}
			if keys := allKeys(t, s); len(keys) != 1 || keys[0] != key {
				t.Errorf("bucket holds %v", keys)
			}
			if a, err := s.Stat(ctx, key); err != nil || a.Size != int64(len(video)) || a.ContentType != "video/mp4" {
				t.Errorf("stat: %+v %v", a, err)
			}

			local, done, err := s.LocalFile(ctx, key, work)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(local); err != nil || !bytes.Equal(got, video) {
				t.Errorf("local file: %d bytes, %v", len(got), err)
			}
			done()
			_, err = os.Stat(local)
			if copied := backend.name != "file"; copied != errors.Is(err, os.ErrNotExist) {
				t.Errorf("after done, the local file of a %s store: %v", backend.name, err)
			}
			if entries, _ := os.ReadDir(work); backend.name != "file" && len(entries) != 0 {
				t.Errorf("left in the work folder: %v", entries)
			}
			if _, _, err := s.LocalFile(ctx, media.KeyForSHA256(strings.Repeat("0", 64)), work); !errors.Is(err, media.ErrNotFound) {
				t.Errorf("LocalFile of a missing key: %v", err)
			}
		})
	}
}

// TestStoreStatSniffs: a blob stored with no content type of its own (by another tool, or an
// older reelay) is typed from its first bytes. Stored with none at all, each store reports
// its own choice (fileblob application/octet-stream; SeaweedFS sniffs the bytes itself, where
// AWS S3 documents binary/octet-stream), so the generic types are also set explicitly.
func TestStoreStatSniffs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	video := mediatest.MP4Bytes(t, mediatest.Options{Duration: time.Second, Width: 320, Height: 568})
	png := mediatest.PNG(t, 8, 8)
	for _, backend := range storeBackends {
		t.Run(backend.name, func(t *testing.T) {
			t.Parallel()
			s := openStore(t, backend.url(t))
			for _, c := range []struct {
				data   []byte
				stored string // the content type written with the blob
				want   string // "": the type the store reports
			}{
				{video, "", "video/mp4"},
				{png, "", "image/png"},
				{video, "application/octet-stream", "video/mp4"},
				{video, "binary/octet-stream", "video/mp4"},
				{[]byte("not media"), "binary/octet-stream", ""},
			} {
				key := media.KeyForSHA256(hexSHA(append([]byte(c.stored), c.data...)))
				err := s.Bucket().WriteAll(ctx, key, c.data, &blob.WriterOptions{ContentType: c.stored, DisableContentTypeDetection: true})
				if err != nil {
					t.Fatal(err)
				}
				reported, err := s.Bucket().Attributes(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				want := cmp.Or(c.want, reported.ContentType)
				if a, err := s.Stat(ctx, key); err != nil || a.ContentType != want || a.Size != int64(len(c.data)) {
					t.Errorf("%q stored as %q, reported as %q: stat %+v %v, want %s", c.data[:4], c.stored, reported.ContentType, a, err, want)
				}
			}
		})
	}
}

// TestSignedURLPreviousKeys: during a key rotation, links signed with a previous key verify
// (until they expire) on a store that holds it as a previous key, and not once it is dropped;
// new links are signed with the current key only.
func TestSignedURLPreviousKeys(t *testing.T) {
	t.Parallel()
	keyA, keyB, keyC := bytes.Repeat([]byte{0xa}, 32), bytes.Repeat([]byte{0xb}, 32), bytes.Repeat([]byte{0xc}, 32)
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	store := func(current []byte, previous ...[]byte) *media.Store {
		t.Helper()
		s, err := media.OpenStore(context.Background(), "mem://", current, media.WithClock(clock), media.WithPreviousSigningKeys(previous...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	id := hexSHA([]byte("video"))
	link := func(s *media.Store) url.Values {
		t.Helper()
		l, err := s.SignedURL("media/sha256/"+id, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(l)
		return u.Query()
	}
	signedA, signedB := link(store(keyA)), link(store(keyB))
	for _, tc := range []struct {
		name  string
		store *media.Store
		link  url.Values
		want  error
	}{
		{"current key", store(keyB, keyA), signedB, nil},
		{"previous key", store(keyB, keyA), signedA, nil},
		{"one of several previous keys", store(keyB, keyC, keyA), signedA, nil},
		{"previous key dropped", store(keyB), signedA, media.ErrBadSignature},
		{"never a key here", store(keyC, keyB), signedA, media.ErrBadSignature},
		{"new links are the current key's", store(keyA), link(store(keyB, keyA)), media.ErrBadSignature},
	} {
		if _, err := tc.store.VerifySignedURL(id, tc.link); !errors.Is(err, tc.want) {
			t.Errorf("%s: verify = %v, want %v", tc.name, err, tc.want)
		}
	}
	later := func() time.Time { return now.Add(2 * time.Hour) }
	s := store(keyB, keyA)
	media.WithClock(later)(s)
	if _, err := s.VerifySignedURL(id, signedA); !errors.Is(err, media.ErrLinkExpired) {
		t.Errorf("expired link signed with the previous key: %v, want ErrLinkExpired", err)
	}
}
