package publish_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/mediatest"
	"github.com/reelay/reelay/internal/platform/sim"
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

// TestHousekeeperDeletesOldMedia: one round of housekeeping deletes the stored files unused
// for the retention, those the database knows and those it does not (stored by an older
// reelay), and keeps the rest.
func TestHousekeeperDeletesOldMedia(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		dir := t.TempDir()
		ms, err := media.OpenStore(ctx, "file://"+dir, []byte("0123456789abcdef0123456789abcdef"),
			media.WithRegistry(publish.MediaRegistry{Store: st}))
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		save := func(seconds int, claimed bool, age time.Duration) string {
			t.Helper()
			video := mediatest.MP4Bytes(t, mediatest.Options{Duration: time.Duration(seconds) * time.Second, Width: 64, Height: 112})
			var key string
			if claimed {
				in, err := media.IngestUpload(ctx, ms, bytes.NewReader(video), 0, media.VideoKinds)
				if err != nil {
					t.Fatal(err)
				}
				key = in.Blob.Key
			} else {
				b, err := ms.Put(ctx, bytes.NewReader(video), media.KindMP4)
				if err != nil {
					t.Fatal(err)
				}
				key = b.Key
			}
			old := time.Now().Add(-age)
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), old, old); err != nil {
				t.Fatal(err)
			}
			return key
		}
		knownNew := save(1, true, 0)
		unknownOld := save(2, false, 48*time.Hour)
		unknownNew := save(3, false, time.Hour)

		h := &publish.Housekeeper{Store: st, Media: ms, MediaRetention: 24 * time.Hour}
		if err := h.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]bool{knownNew: true, unknownOld: false, unknownNew: true} {
			if ok, err := ms.Exists(ctx, key); err != nil || ok != want {
				t.Errorf("%s stored %v (%v), want %v", key, ok, err, want)
			}
		}
		// The storage is listed once a day: an old unknown file found now waits for the next.
		another := save(4, false, 48*time.Hour)
		if err := h.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if ok, err := ms.Exists(ctx, another); err != nil || !ok {
			t.Errorf("the storage was listed twice within a day: %v %v", ok, err)
		}
		// Two days on, the known file's claim has lapsed and its use is older than the
		// retention: it goes too, and so does the unknown file listed now.
		h.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
		if err := h.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{knownNew, unknownNew, another} {
			if ok, err := ms.Exists(ctx, key); err != nil || ok {
				t.Errorf("%s stored %v (%v) two days on", key, ok, err)
			}
		}
	})
}

// TestHousekeeperDeletesSimState: housekeeping deletes the simulators' records once they expired
// (the blobs of an upload's record first), and after SimRetention those that do not expire by
// themselves and what the simulators received; what is live stays.
func TestHousekeeperDeletesSimState(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		ms, err := media.OpenStore(ctx, "file://"+t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		t0 := time.Now().Add(-200 * 24 * time.Hour).UTC()
		state := st.SimState(func() time.Time { return t0 })
		key := func(id string) sim.Key { return sim.Key{Platform: "tiktok", Kind: "post", ID: id} }
		expiredUpload, expired, liveUpload, kept := key("expired-upload"), key("expired"), key("live-upload"), key("kept")
		err = state.Update(ctx, func(tx sim.Tx) error {
			for _, r := range []sim.Record{
				{Key: expiredUpload, Data: []byte(`{}`), Expires: t0.Add(time.Hour), Blobs: true},
				{Key: expired, Data: []byte(`{}`), Expires: t0.Add(time.Hour)},
				{Key: liveUpload, Data: []byte(`{}`), Expires: t0.Add(300 * 24 * time.Hour), Blobs: true},
				{Key: kept, Data: []byte(`{}`)},
			} {
				if err := tx.Put(r); err != nil {
					return err
				}
			}
			return tx.Receive(sim.Entry{Platform: "tiktok", Account: "a", Kind: "upload", Data: []byte(`{}`)})
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []sim.Key{expiredUpload, liveUpload} {
			if err := ms.Bucket().WriteAll(ctx, sim.BlobPrefix(k)+"0", []byte("chunk"), nil); err != nil {
				t.Fatal(err)
			}
		}
		blobExists := func(k sim.Key) bool {
			ok, err := ms.Bucket().Exists(ctx, sim.BlobPrefix(k)+"0")
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		stored := func(k sim.Key) bool {
			// Read at t0, before any expiry: a record still there, expired or not.
			_, found, err := state.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			return found
		}
		entries := func() int {
			e, err := state.Entries(ctx, "tiktok", nil)
			if err != nil {
				t.Fatal(err)
			}
			return len(e)
		}

		at := t0.Add(2 * time.Hour)
		h := &publish.Housekeeper{Store: st, Media: ms, Now: func() time.Time { return at }}
		if err := h.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if stored(expiredUpload) || blobExists(expiredUpload) || stored(expired) {
			t.Errorf("expired records or their blobs are left: upload %v (blob %v), record %v",
				stored(expiredUpload), blobExists(expiredUpload), stored(expired))
		}
		if !stored(liveUpload) || !blobExists(liveUpload) || !stored(kept) || entries() != 1 {
			t.Errorf("live state was deleted: upload %v (blob %v), kept %v, entries %d",
				stored(liveUpload), blobExists(liveUpload), stored(kept), entries())
		}

		at = t0.Add(publish.SimRetention + time.Hour)
		if err := h.Work(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if stored(kept) || entries() != 0 {
			t.Errorf("after the retention: record kept %v, %d entries", stored(kept), entries())
		}
		if !stored(liveUpload) || !blobExists(liveUpload) {
			t.Error("a record that has not expired was deleted with the retention's")
		}
	})
}
