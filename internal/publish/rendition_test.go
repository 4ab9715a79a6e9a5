package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/s3test"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestMain stops the S3 server that the rendition tests start (s3test) once they all ran.
func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// renditionFixture is a post of a camera file (moov last) to Instagram, waiting for its remux,
// on a real store, a media store at blobURL and ffmpeg; the worker's local files go to work.
type renditionFixture struct {
	st     *store.Store
	ms     *media.Store
	post   store.Post
	source string // the video's blob key
	key    string
	work   string
	worker *publish.RenditionWorker
}

// blobStores are the media stores the rendition tests run on: a folder, whose files ffmpeg
// reads and writes in place, and a bucket of a real S3 server (SeaweedFS, s3test, which
// skips saying why where it is not built), from which the source is downloaded and to which
// the rendition is streamed.
var blobStores = []struct {
	name string
	url  func(t testing.TB) string
}{
	{"file", func(t testing.TB) string { return "file://" + t.TempDir() }},
	{"s3", s3test.BlobURL},
}

func newRenditionFixture(t *testing.T, blobURL string, c render.Conversion, ffmpegArgs ...string) *renditionFixture {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t, store.SQLite)
	ms, err := media.OpenStore(ctx, blobURL, []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	src, err := os.ReadFile(rendertest.Make(t, "source.mp4", ffmpegArgs...))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := media.IngestUpload(ctx, ms, bytes.NewReader(src), 0, media.VideoKinds)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := st.CreateAccount(ctx, store.NewAccount{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	ch, _, err := st.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: "instagram",
		Name: "ig", ExternalAccountID: "sbx_ig", Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	key := publish.RenditionKey(stored.Blob.SHA256, c)
	plan, _ := json.Marshal(conform.Plan{Action: conform.ActionRemux, Conversion: c})
	i := stored.Info
	post, err := st.CreatePost(ctx, store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, ContentHash: "x", Request: []byte(`{}`),
		Video: store.Media{SHA256: stored.Blob.SHA256, BlobKey: stored.Blob.Key, Kind: i.Kind.Name, ContentType: stored.Blob.ContentType,
			Size: stored.Blob.Size, Width: i.Width, Height: i.Height, Duration: i.Duration},
		Destinations: []store.Destination{{ChannelID: ch.ID, Platform: "instagram", Options: []byte(`{}`), Conversion: plan, RenditionKey: key}},
	}, func(tx *store.Tx, p store.Post) error {
		_, err := tx.EnsureRendition(ctx, key, stored.Blob.SHA256, mustMarshal(c))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	return &renditionFixture{st: st, ms: ms, post: post, source: stored.Blob.Key, key: key, work: work,
		worker: &publish.RenditionWorker{Store: st, Media: ms, Converter: render.New("ffmpeg"), TempDir: work}}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *renditionFixture) run(ctx context.Context, attempt int) error {
	return f.worker.Work(ctx, &river.Job[publish.RenditionArgs]{
		JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 3}, Args: publish.RenditionArgs{Key: f.key}})
}

// TestRenditionResumes: a conversion cut off halfway (the process stopped, its job's context
// cancelled) leaves the rendition pending and nothing stored; the job's next run converts
// again from the start, and the file it stores is what Instagram takes.
func TestRenditionResumes(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	for _, blobs := range blobStores {
		t.Run(blobs.name, func(t *testing.T) {
			f := newRenditionFixture(t, blobs.url(t), render.Conversion{Video: true},
				"-f", "lavfi", "-i", "testsrc2=s=540x960:r=30:d=6", "-f", "lavfi", "-i", "sine=r=48000:d=6",
				"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac")
			ctx, cancel := context.WithCancel(context.Background())
			f.worker.Converter = cutOff{Converter: f.worker.Converter, cancel: cancel}
			if err := f.run(ctx, 1); !errors.Is(err, context.Canceled) {
				t.Fatalf("a cut-off conversion answered %v", err)
			}
			r, err := f.st.GetRendition(context.Background(), f.key)
			if err != nil || r.Status != store.RenditionPending || r.Output.BlobKey != "" {
				t.Fatalf("after the cut: %+v (%v)", r, err)
			}

			f.worker.Converter = render.New("ffmpeg")
			if err := f.run(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
			r, err = f.st.GetRendition(context.Background(), f.key)
			if err != nil || r.Status != store.RenditionReady {
				t.Fatalf("after the second run: %+v (%v)", r, err)
			}
			rd, err := f.ms.OpenAt(context.Background(), r.Output.BlobKey)
			if err != nil {
				t.Fatal(err)
			}
			info, err := media.Probe(rd, rd.Size())
			if err != nil || info.VideoCodec != "h264" || info.MoovAfterMdat || info.Width != 540 {
				t.Errorf("the rendition: %+v (%v)", info, err)
			}
			// The cut conversion's files are gone, the source's stays, and the rendition is
			// stored once, under its name: nothing but media/sha256 and media/rendition holds
			// files, and the local copies are gone.
			files := f.storedFiles(t)
			if len(files) != 2 {
				t.Errorf("stored files %v, want the source and its rendition", files)
			}
			for _, p := range files {
				if !strings.HasPrefix(p, "media/sha256/") && p != "media/rendition/"+f.key {
					t.Errorf("left behind: %s", p)
				}
			}
			if local, _ := os.ReadDir(f.work); len(local) != 0 {
				t.Errorf("local files left behind: %v", local)
			}
			// Another run finds it made.
			if err := f.run(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// storedFiles lists the keys of the files the media store holds (in a folder, every file in
// it but fileblob's ".attrs", so a conversion's leftovers beside the blobs count too).
func (f *renditionFixture) storedFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	it := f.ms.Bucket().List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, obj.Key)
	}
}

// TestRenditionPurgedWithSource: retention deletes a settled post's video and the rendition
// made of it, from the storage and the database.
func TestRenditionPurgedWithSource(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	for _, blobs := range blobStores {
		t.Run(blobs.name, func(t *testing.T) {
			ctx := context.Background()
			f := newRenditionFixture(t, blobs.url(t), render.Conversion{}, "-f", "lavfi", "-i", "testsrc2=s=540x960:r=30:d=3", "-c:v", "libx264", "-preset", "ultrafast")
			if err := f.run(ctx, 1); err != nil {
				t.Fatal(err)
			}
			r, err := f.st.GetRendition(ctx, f.key)
			if err != nil || r.Status != store.RenditionReady {
				t.Fatalf("rendition %+v (%v)", r, err)
			}
			if files := f.storedFiles(t); len(files) != 2 {
				t.Fatalf("stored %v, want the source and its rendition", files)
			}
			d := f.post.Destinations[0]
			if _, _, err := f.st.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished}); err != nil {
				t.Fatal(err)
			}
			n, err := f.st.PurgeMedia(ctx, time.Now().Add(time.Hour), time.Minute, 10, f.ms.Delete)
			if err != nil || n != 1 {
				t.Fatalf("purged %d files (%v), want the video", n, err)
			}
			if files := f.storedFiles(t); len(files) != 0 {
				t.Errorf("left after the purge: %v", files)
			}
			if _, err := f.st.GetRendition(ctx, f.key); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("the rendition outlived its source: %v", err)
			}
		})
	}
}

// TestRenditionRefusesUndecodable: a file ffmpeg cannot decode fails the rendition at once,
// saying why, rather than trying again.
func TestRenditionRefusesUndecodable(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	f := newRenditionFixture(t, "file://"+t.TempDir(), render.Conversion{}, "-f", "lavfi", "-i", "testsrc2=s=64x112:r=30:d=1", "-c:v", "libx264", "-preset", "ultrafast")
	f.worker.Converter = failing{err: render.ErrInput}
	if err := f.run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	r, err := f.st.GetRendition(context.Background(), f.key)
	if err != nil || r.Status != store.RenditionFailed || !strings.Contains(r.Error, "cannot be decoded") {
		t.Fatalf("%+v (%v)", r, err)
	}
}

// TestRenditionOfDeletedSource: a rendition whose source's bytes are gone from the storage
// (deleted by hand) fails at once, saying so, rather than trying again.
func TestRenditionOfDeletedSource(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	for _, blobs := range blobStores {
		t.Run(blobs.name, func(t *testing.T) {
			ctx := context.Background()
			f := newRenditionFixture(t, blobs.url(t), render.Conversion{}, "-f", "lavfi", "-i", "testsrc2=s=64x112:r=30:d=1", "-c:v", "libx264", "-preset", "ultrafast")
			if err := f.ms.Delete(ctx, f.source); err != nil {
				t.Fatal(err)
			}
			if err := f.run(ctx, 1); err != nil {
				t.Fatal(err)
			}
			r, err := f.st.GetRendition(ctx, f.key)
			if err != nil || r.Status != store.RenditionFailed || !strings.Contains(r.Error, "no longer stored") {
				t.Fatalf("%+v (%v)", r, err)
			}
		})
	}
}

// cutOff stops the conversion once it has made progress, as a process that dies would.
type cutOff struct {
	publish.Converter
	cancel context.CancelFunc
}

func (c cutOff) Convert(ctx context.Context, dst, src string, conv render.Conversion, progress func(float64)) error {
	return c.Converter.Convert(ctx, dst, src, conv, func(f float64) {
		progress(f)
		if f > 0 {
			c.cancel()
		}
	})
}

type failing struct{ err error }

func (failing) Check(context.Context) error { return nil }
func (f failing) Convert(context.Context, string, string, render.Conversion, func(float64)) error {
	return f.err
}
