package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestRenditionLifecycle: a rendition is made once however many ask for it, a failed one is
// made again when asked again, its progress shows on the destinations waiting for it, and it
// goes with its source when retention deletes the source's bytes.
func TestRenditionLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		p := newPost(t, s, ca, store.NewPost{ContentHash: "r", Video: mediaFile("src")})
		ensure := func(key string) bool {
			t.Helper()
			var needed bool
			err := s.InTx(ctx, func(tx *store.Tx) (err error) {
				needed, err = tx.EnsureRendition(ctx, key, "src", `{"video":true}`)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return needed
		}
		if !ensure("k1") || ensure("k1") {
			t.Fatal("a new rendition is to be made once, and shared after")
		}
		if err := s.FailRendition(ctx, "k1", "ffmpeg could not decode it"); err != nil {
			t.Fatal(err)
		}
		if r, err := s.GetRendition(ctx, "k1"); err != nil || r.Status != store.RenditionFailed || r.Error != "ffmpeg could not decode it" {
			t.Fatalf("failed rendition: %+v (%v)", r, err)
		}
		if !ensure("k1") {
			t.Fatal("a failed rendition asked for again is not made again")
		}

		// The destination waits for k1: progress shows in its message.
		d := p.Destinations[0]
		if err := store.SetRenditionKey(ctx, s, d.ID, "k1"); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRenditionProgress(ctx, "k1", 0.43, "converting the video: 43%"); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
		if err != nil || got.Destinations[0].Message != "converting the video: 43%" || got.Destinations[0].RenditionKey != "k1" {
			t.Fatalf("destination %+v (%v)", got.Destinations[0], err)
		}
		platforms, posts, err := s.RenditionPlatforms(ctx, "k1")
		if err != nil || len(platforms) != 1 || platforms[0] != "youtube" || len(posts) != 1 || posts[0] != p.ID {
			t.Fatalf("waiting for k1: %v %v (%v)", platforms, posts, err)
		}

		out := store.Media{SHA256: "out", BlobKey: "media/sha256/out", Size: 5, Width: 1080, Height: 1920, Duration: 4 * time.Second}
		if err := s.FinishRendition(ctx, "k1", out); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRendition(ctx, "k1", out); !errors.Is(err, store.ErrStale) {
			t.Errorf("finished twice: %v", err)
		}
		r, err := s.GetRendition(ctx, "k1")
		if err != nil || r.Status != store.RenditionReady || r.Output.BlobKey != out.BlobKey || r.Output.Kind != "mp4" || r.Output.Duration != out.Duration {
			t.Fatalf("ready rendition: %+v (%v)", r, err)
		}
		if ensure("k1") {
			t.Error("a ready rendition is made again")
		}

		// Retention takes the source's bytes and the rendition's with them.
		d2 := got.Destinations[0]
		if _, _, err := s.SaveStep(ctx, d2.ID, d2.Seq, store.StepUpdate{Status: store.DestPublished}); err != nil {
			t.Fatal(err)
		}
		var b blobs
		at := time.Now().Add(time.Hour)
		if _, err := s.PurgeMedia(ctx, at, time.Minute, 100, b.delete); err != nil {
			t.Fatal(err)
		}
		if got := b.take(); !sameKeys(got, "media/sha256/out", "media/sha256/src") {
			t.Errorf("purged %v, want the source and its rendition", got)
		}
		if _, err := s.GetRendition(ctx, "k1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the rendition outlived its source: %v", err)
		}
	})
}
