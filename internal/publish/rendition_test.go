package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// renditionFixture is a post of a camera file (moov last) to Instagram, waiting for its remux,
// on a real store, a local media store and ffmpeg.
type renditionFixture struct {
	st     *store.Store
	ms     *media.Store
	dir    string
	key    string
	worker *publish.RenditionWorker
}

func newRenditionFixture(t *testing.T, c render.Conversion, ffmpegArgs ...string) *renditionFixture {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t, store.SQLite)
	dir := t.TempDir()
	ms, err := media.OpenStore(ctx, "file://"+dir, []byte("0123456789abcdef0123456789abcdef"))
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
	_, err = st.CreatePost(ctx, store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, ContentHash: "x", Request: []byte(`{}`),
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
	return &renditionFixture{st: st, ms: ms, dir: dir, key: key,
		worker: &publish.RenditionWorker{Store: st, Media: ms, Converter: render.New("ffmpeg")}}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *renditionFixture) work(ctx context.Context, attempt int) error {
	return f.worker.Work(ctx, &river.Job[publish.RenditionArgs]{
		JobRow: &rivertype.JobRow{Attempt: attempt, MaxAttempts: 3}, Args: publish.RenditionArgs{Key: f.key}})
}

// TestRenditionResumes: a conversion cut off halfway (the process stopped, its job's context
// cancelled) leaves the rendition pending and nothing stored; the job's next run converts
// again from the start, and the file it stores is what Instagram takes.
func TestRenditionResumes(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	f := newRenditionFixture(t, render.Conversion{Video: true},
		"-f", "lavfi", "-i", "testsrc2=s=540x960:r=30:d=6", "-f", "lavfi", "-i", "sine=r=48000:d=6",
		"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac")
	ctx, cancel := context.WithCancel(context.Background())
	f.worker.Converter = cutOff{Converter: f.worker.Converter, cancel: cancel}
	if err := f.work(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cut-off conversion answered %v", err)
	}
	r, err := f.st.GetRendition(context.Background(), f.key)
	if err != nil || r.Status != store.RenditionPending || r.Output.BlobKey != "" {
		t.Fatalf("after the cut: %+v (%v)", r, err)
	}

	f.worker.Converter = render.New("ffmpeg")
	if err := f.work(context.Background(), 2); err != nil {
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
	// The cut conversion's files are gone, the source's stays, and the rendition is stored
	// once, under its name: nothing but media/sha256 and media/rendition holds files.
	var files []string
	filepath.WalkDir(f.dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(path, f.dir))
		}
		return nil
	})
	if len(files) != 2 {
		t.Errorf("stored files %v, want the source and its rendition", files)
	}
	for _, p := range files {
		if p := filepath.ToSlash(p); !strings.HasPrefix(p, "/media/sha256/") && p != "/media/rendition/"+f.key {
			t.Errorf("left behind: %s", p)
		}
	}
	// Another run finds it made.
	if err := f.work(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
}

// TestRenditionRefusesUndecodable: a file ffmpeg cannot decode fails the rendition at once,
// saying why, rather than trying again.
func TestRenditionRefusesUndecodable(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	f := newRenditionFixture(t, render.Conversion{}, "-f", "lavfi", "-i", "testsrc2=s=64x112:r=30:d=1", "-c:v", "libx264", "-preset", "ultrafast")
	f.worker.Converter = failing{err: render.ErrInput}
	if err := f.work(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	r, err := f.st.GetRendition(context.Background(), f.key)
	if err != nil || r.Status != store.RenditionFailed || !strings.Contains(r.Error, "cannot be decoded") {
		t.Fatalf("%+v (%v)", r, err)
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
