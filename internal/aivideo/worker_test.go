package aivideo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/jobs"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/render/rendertest"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
	"github.com/reelay/reelay/internal/videogen"
	"github.com/reelay/reelay/internal/videogen/videogentest"
)

// newWorker is a worker on a real store and blob storage, its hosted model the simulator.
// Without a model (nil), it renders locally.
func newWorker(t testing.TB, st *store.Store, model *videogentest.Server) *aivideo.Worker {
	t.Helper()
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, 32)
	ms, err := media.OpenStore(ctx, "file://"+t.TempDir(), key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	box, err := secret.NewBox(key)
	if err != nil {
		t.Fatal(err)
	}
	queue, err := jobs.New(st, jobs.Config{}) // insert only: the test works the job itself
	if err != nil {
		t.Fatal(err)
	}
	svc := &aivideo.Service{Store: st, Queue: queue, Media: ms, Fetcher: media.NewFetcher(media.FetcherConfig{AllowPrivate: true}),
		Box: box, Renderer: render.New(""), Discard: func(...*media.Stored) {}}
	if model != nil {
		gen, err := videogen.New(videogen.Config{TextURL: model.TextURL(), APIKey: model.Key, PollInitial: time.Millisecond, PollMax: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		svc.Generator = gen
	}
	return &aivideo.Worker{Service: svc, TempDir: t.TempDir(), JobTimeout: time.Minute}
}

func account(t testing.TB, st *store.Store, credits int64) string {
	t.Helper()
	ca, err := st.CreateAccount(context.Background(), store.NewAccount{Name: "ai", AICredits: credits})
	if err != nil {
		t.Fatal(err)
	}
	return ca.Account.ID
}

func attempt(id string, n int) *river.Job[aivideo.JobArgs] {
	return &river.Job[aivideo.JobArgs]{JobRow: &rivertype.JobRow{Attempt: n, MaxAttempts: aivideo.MaxAttempts}, Args: aivideo.JobArgs{AIJobID: id}}
}

// A job cut off after it submitted its request waits for that request when it runs again: the
// model is never asked, nor paid, twice.
func TestResumedJobDoesNotSubmitAgain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		model := videogentest.NewServer(t)
		w := newWorker(t, st, model)
		acct := account(t, st, 10)
		j, err := w.Generate(ctx, acct, aivideo.GenerateInput{Prompt: "Pour-over in slow motion", AspectRatio: aivideo.Vertical}, "")
		if err != nil {
			t.Fatal(err)
		}
		// The first attempt submitted and saved its request, then its process died.
		gen, _ := videogen.New(videogen.Config{TextURL: model.TextURL(), APIKey: model.Key})
		sub, err := gen.Submit(ctx, "", videogen.Request{Prompt: "Pour-over in slow motion", AspectRatio: aivideo.Vertical})
		if err != nil {
			t.Fatal(err)
		}
		prog, _ := json.Marshal(map[string]any{"submitted": map[string]videogen.Job{"0": sub}})
		if err := st.SaveAIJobProgress(ctx, j.ID, prog); err != nil {
			t.Fatal(err)
		}

		if err := w.Work(ctx, attempt(j.ID, 2)); err != nil {
			t.Fatal(err)
		}
		got, _ := st.AIJobByID(ctx, j.ID)
		var res aivideo.Result
		_ = json.Unmarshal(got.Result, &res)
		if got.Status != store.AIJobSucceeded || res.RequestID != sub.RequestID {
			t.Errorf("resumed job: %s, result %s; want succeeded with request %s", got.Status, got.Result, sub.RequestID)
		}
		if n := len(model.Submits()); n != 1 {
			t.Errorf("the model got %d submits, want the one before the restart", n)
		}
		// Working it once more (a duplicate delivery) changes nothing.
		if err := w.Work(ctx, attempt(j.ID, 3)); err != nil || len(model.Submits()) != 1 {
			t.Errorf("working an ended job: %v, %d submits", err, len(model.Submits()))
		}
		if a, _ := st.GetAccount(ctx, acct); a.AICredits != 10-aivideo.HostedClipCredits {
			t.Errorf("balance %d, want %d", a.AICredits, 10-aivideo.HostedClipCredits)
		}
	})
}

// A job River gave up on (its last attempt died with its process) is failed and refunded by
// the sweep.
func TestSweepRefundsAbandonedJobs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		w := newWorker(t, st, videogentest.NewServer(t))
		acct := account(t, st, 10)
		j, err := w.Generate(ctx, acct, aivideo.GenerateInput{Prompt: "p", AspectRatio: aivideo.Vertical}, "a-key-of-its-own")
		if err != nil {
			t.Fatal(err)
		}
		if a, _ := st.GetAccount(ctx, acct); a.AICredits != 10-aivideo.HostedClipCredits {
			t.Fatalf("balance after the reservation: %d", a.AICredits)
		}
		sweep := &aivideo.Sweeper{Store: st, StaleAfter: time.Hour}
		if err := sweep.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.AIJobByID(ctx, j.ID); got.Status != store.AIJobRunning {
			t.Fatalf("a fresh job was swept: %s", got.Status)
		}
		time.Sleep(2 * time.Millisecond)
		sweep.StaleAfter = time.Millisecond
		if err := sweep.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		got, _ := st.AIJobByID(ctx, j.ID)
		if got.Status != store.AIJobFailed || got.ProviderKey != nil || aivideo.ErrorOf(got).Status != 500 {
			t.Errorf("swept job: %s, key %v, error %s", got.Status, got.ProviderKey != nil, got.Error)
		}
		if a, _ := st.GetAccount(ctx, acct); a.AICredits != 10 {
			t.Errorf("balance after the sweep: %d, want 10", a.AICredits)
		}
	})
}

// benchWorker is a worker rendering locally (no hosted model) on SQLite, and an account with
// credits enough for any benchmark run.
func benchWorker(b *testing.B) (*aivideo.Worker, string) {
	rendertest.RequireFFmpeg(b)
	st := storetest.New(b, store.SQLite)
	w := newWorker(b, st, nil)
	return w, account(b, st, 1_000_000)
}

// BenchmarkGenerateClip renders a 5-second text clip locally and stores it, as a
// POST /ai/generate-video without a hosted model does.
func BenchmarkGenerateClip(b *testing.B) {
	w, acct := benchWorker(b)
	ctx := context.Background()
	for b.Loop() {
		j, err := w.Generate(ctx, acct, aivideo.GenerateInput{Prompt: "Cold brew in 16 hours: coarse beans, cold water, patience", AspectRatio: aivideo.Vertical}, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Work(ctx, attempt(j.ID, 1)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStitch30s renders six 5-second scenes locally and joins them, as a
// POST /ai/storyboard/stitch of a 30-second storyboard without videos does.
func BenchmarkStitch30s(b *testing.B) {
	w, acct := benchWorker(b)
	ctx := context.Background()
	scenes := make([]aivideo.Scene, 6)
	for i := range scenes {
		scenes[i] = aivideo.Scene{Prompt: fmt.Sprintf("Scene %d: a slow push-in on the kettle, steam rising", i+1)}
	}
	for b.Loop() {
		j, err := w.Stitch(ctx, acct, aivideo.StitchInput{Scenes: scenes, AspectRatio: aivideo.Vertical}, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Work(ctx, attempt(j.ID, 1)); err != nil {
			b.Fatal(err)
		}
		if got, _ := w.Store.AIJobByID(ctx, j.ID); got.Status != store.AIJobSucceeded {
			b.Fatalf("stitch %s: %s", got.Status, got.Error)
		}
	}
}
