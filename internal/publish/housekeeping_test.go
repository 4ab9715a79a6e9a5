package publish_test

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestRetentionRacesIngest: requests take the same video in over and over while retention
// purges it whenever nothing holds it. Each request must find the bytes stored when its
// ingest returns, and keep finding them while its claim lives, whether it stored them or found
// them there: the claim comes before the ingest trusts bytes already stored, and a purge
// deletes them only under the media row's lock.
func TestRetentionRacesIngest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ms, err := media.OpenStore(ctx, "file://"+t.TempDir(), []byte("0123456789abcdef0123456789abcdef"),
			media.WithRegistry(publish.MediaRegistry{Store: st}))
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		video := mediatest.MP4Bytes(t, mediatest.Options{Duration: time.Second, Width: 64, Height: 112})

		done := make(chan struct{})
		var purged atomic.Int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				// No retention: only claims and posts hold the file.
				n, err := st.PurgeMedia(ctx, time.Now(), 0, 10, ms.Delete)
				if err != nil {
					t.Error(err)
					return
				}
				purged.Add(int64(n))
			}
		}()

		var stored, reused atomic.Int64
		var ingests sync.WaitGroup
		for range 2 {
			ingests.Add(1)
			go func() {
				defer ingests.Done()
				for range 50 {
					in, err := media.IngestUpload(ctx, ms, bytes.NewReader(video), 0, media.VideoKinds)
					if err != nil {
						t.Error(err)
						return
					}
					if in.Blob.Deduplicated {
						reused.Add(1)
					} else {
						stored.Add(1)
					}
					time.Sleep(time.Millisecond) // the request validates and commits its post
					if ok, err := ms.Exists(ctx, in.Blob.Key); err != nil || !ok {
						t.Errorf("a claimed video's bytes are gone (exists %v, %v; found stored: %v)", ok, err, in.Blob.Deduplicated)
						return
					}
					if err := st.ReleaseMedia(ctx, in.Claim, false, ms.Delete); err != nil {
						t.Error(err)
						return
					}
					time.Sleep(2 * time.Millisecond) // nothing holds the video now: room for a purge
				}
			}()
		}
		ingests.Wait()
		close(done)
		wg.Wait()
		// The race was run: the video was purged and stored again, and found stored as well.
		if purged.Load() == 0 || stored.Load() < 2 || reused.Load() == 0 {
			t.Errorf("purged %d times, stored %d, found stored %d: the race did not happen", purged.Load(), stored.Load(), reused.Load())
		}
	})
}
