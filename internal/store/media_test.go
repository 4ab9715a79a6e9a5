package store_test

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func mediaFile(sha string) store.Media {
	return store.Media{SHA256: sha, BlobKey: "media/sha256/" + sha, Kind: "mp4", ContentType: "video/mp4", Size: 10}
}

func claimMedia(t *testing.T, s *store.Store, sha string) string {
	t.Helper()
	token, _, err := s.ClaimMedia(context.Background(), mediaFile(sha))
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// blobs stands in for blob storage: it records the keys deleted.
type blobs struct{ deleted []string }

func (b *blobs) delete(_ context.Context, key string) error {
	b.deleted = append(b.deleted, key)
	return nil
}

func (b *blobs) take() []string {
	d := b.deleted
	b.deleted = nil
	sort.Strings(d)
	return d
}

func sameKeys(a []string, b ...string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMediaRetention: a file's bytes are deleted once nothing has used it since the cutoff, and
// not before: a live claim, a post scheduled or processing, or a post changed since the cutoff
// each keep it. A file no post refers to loses its row; one posts refer to is marked purged, a
// retry of its post is refused, and taking the same file in again undoes the mark.
func TestMediaRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		var b blobs
		// purge runs retention as of now, with usedBefore as its cutoff.
		purge := func(usedBefore time.Time) []string {
			t.Helper()
			at := time.Now()
			if _, err := s.PurgeMedia(ctx, at, at.Sub(usedBefore), 100, b.delete); err != nil {
				t.Fatal(err)
			}
			return b.take()
		}
		claim := func(sha string) string { return claimMedia(t, s, sha) }

		// Claimed and used: held while the claim lives, then until the cutoff passes its use.
		claim("f1")
		if got := purge(time.Now().Add(time.Minute)); len(got) != 0 {
			t.Fatalf("a claimed file was purged: %v", got)
		}
		if err := store.AgeMediaClaims(ctx, s, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		if got := purge(time.Now().Add(-time.Minute)); len(got) != 0 {
			t.Fatalf("a file used after the cutoff was purged: %v", got)
		}
		if got := purge(time.Now().Add(time.Minute)); !sameKeys(got, "media/sha256/f1") {
			t.Fatalf("purged %v, want f1", got)
		}
		if _, err := s.GetMedia(ctx, "f1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the row of a file no post used stayed: %v", err)
		}
		if n, err := s.DeleteLapsedMediaClaims(ctx); err != nil || n != 0 {
			t.Errorf("lapsed claims left after the file went: %d (%v)", n, err)
		}

		// A scheduled post holds its video however old; a failed one until the cutoff passes
		// the time it failed.
		later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		scheduled := newPost(t, s, ca, store.NewPost{ContentHash: "s", ScheduledFor: &later, Video: mediaFile("f2")})
		failed := newPost(t, s, ca, store.NewPost{ContentHash: "f", Video: mediaFile("f3")})
		d := failed.Destinations[0]
		if err := s.StartDelivery(ctx, d.ID, d.Seq); err != nil {
			t.Fatal(err)
		}
		beforeFailing := time.Now()
		time.Sleep(5 * time.Millisecond)
		if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestFailed, Error: "no"}); err != nil {
			t.Fatal(err)
		}
		if got := purge(beforeFailing); len(got) != 0 {
			t.Fatalf("purged %v with a post failed after the cutoff", got)
		}
		if got := purge(time.Now().Add(time.Minute)); !sameKeys(got, "media/sha256/f3") {
			t.Fatalf("purged %v, want only the failed post's f3 (f2's post is scheduled)", got)
		}
		if _, err := s.GetMedia(ctx, "f3"); err != nil {
			t.Errorf("the row of a file a post refers to went: %v", err)
		}
		if got := purge(time.Now().Add(time.Minute)); len(got) != 0 {
			t.Errorf("purged again: %v", got)
		}
		enqueued := 0
		enqueue := func(*store.Tx, store.Post) error { enqueued++; return nil }
		if _, err := s.RetryPost(ctx, ca.Account.ID, failed.ID, enqueue); !errors.Is(err, store.ErrMediaPurged) || enqueued != 0 {
			t.Fatalf("retry of a post whose video was purged: %v (%d jobs)", err, enqueued)
		}
		// The same video taken in again: the claim says its bytes were purged, and until the
		// caller has stored them again and said so, retry is still refused.
		if _, purged, err := s.ClaimMedia(ctx, mediaFile("f3")); err != nil || !purged {
			t.Fatalf("claim of a purged file: purged %v (%v)", purged, err)
		}
		if _, err := s.RetryPost(ctx, ca.Account.ID, failed.ID, enqueue); !errors.Is(err, store.ErrMediaPurged) {
			t.Fatalf("retry before the bytes are back: %v", err)
		}
		if err := s.RestoreMedia(ctx, "f3"); err != nil {
			t.Fatal(err)
		}
		if _, purged, err := s.ClaimMedia(ctx, mediaFile("f3")); err != nil || purged {
			t.Fatalf("claim of a restored file: purged %v (%v)", purged, err)
		}
		if p, err := s.RetryPost(ctx, ca.Account.ID, failed.ID, enqueue); err != nil || enqueued != 1 || p.Status != store.PostProcessing {
			t.Fatalf("retry after the video came back: %v (%d jobs)", err, enqueued)
		}
		if _, err := s.CancelPost(ctx, ca.Account.ID, scheduled.ID); err != nil {
			t.Fatal(err)
		}
		if got := purge(time.Now().Add(time.Minute)); !sameKeys(got, "media/sha256/f2") {
			t.Errorf("purged %v, want f2 once its post was canceled (f3's post is processing)", got)
		}
	})
}

// TestReleaseMedia: a refused request's file is deleted when that request stored it and
// nothing else holds it: not another request's claim, not a post; and never one it found
// stored already.
func TestReleaseMedia(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		var b blobs
		claim := func(sha string) string { return claimMedia(t, s, sha) }
		release := func(token string, created bool) []string {
			t.Helper()
			if err := s.ReleaseMedia(ctx, token, created, b.delete); err != nil {
				t.Fatal(err)
			}
			return b.take()
		}

		first, second := claim("r1"), claim("r1")
		if got := release(first, true); len(got) != 0 {
			t.Fatalf("deleted %v while another request held the file", got)
		}
		if got := release(first, true); len(got) != 0 {
			t.Fatalf("a released claim deleted %v", got)
		}
		if got := release(second, false); len(got) != 0 {
			t.Fatalf("a request that found the file stored deleted %v", got)
		}
		if got := release(claim("r1"), true); !sameKeys(got, "media/sha256/r1") {
			t.Fatalf("deleted %v, want r1", got)
		}
		if _, err := s.GetMedia(ctx, "r1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("row left: %v", err)
		}

		token := claim("r2")
		newPost(t, s, ca, store.NewPost{ContentHash: "r2", Video: mediaFile("r2")})
		if got := release(token, true); len(got) != 0 {
			t.Errorf("deleted %v, which a post uses", got)
		}
	})
}

// TestDeleteUnknownMedia: stored files without a media row (kept by versions of reelay before
// every file had one) are deleted; files the database knows are left to retention.
func TestDeleteUnknownMedia(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		claimMedia(t, s, "k1")
		var b blobs
		n, err := s.DeleteUnknownMedia(ctx, []string{"u2", "k1", "u1"}, b.delete)
		if err != nil || n != 2 {
			t.Fatalf("deleted %d (%v), want 2", n, err)
		}
		if got := b.take(); !sameKeys(got, "u1", "u2") {
			t.Errorf("deleted %v, want the unknown u1 and u2", got)
		}
		if _, err := s.GetMedia(ctx, "k1"); err != nil {
			t.Errorf("the known file's row: %v", err)
		}
		for _, id := range []string{"u1", "u2"} {
			if _, err := s.GetMedia(ctx, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a row was left for %s: %v", id, err)
			}
		}
		// A failure to delete the bytes leaves nothing changed.
		boom := errors.New("storage down")
		if _, err := s.DeleteUnknownMedia(ctx, []string{"u3"}, func(context.Context, string) error { return boom }); !errors.Is(err, boom) {
			t.Errorf("storage failure: %v", err)
		}
		if _, err := s.GetMedia(ctx, "u3"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a failed delete left a row: %v", err)
		}
	})
}

// TestClaimsOfOneFile: claims of one file share its row (a burst of publishes of one video must
// not queue on it), a purge that starts while a claim is open waits for it and then leaves the
// file, and a claim brings a stale last use up to date.
func TestClaimsOfOneFile(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		claimMedia(t, s, "f1")
		if s.Dialect() == store.Postgres { // SQLite serialises every write transaction
			err := whileHeld(t, ctx, func(hold func(context.Context) error) error {
				return store.ClaimMediaHeld(ctx, s, mediaFile("f1"), hold)
			}, func(ctx context.Context) error {
				_, _, err := s.ClaimMedia(ctx, mediaFile("f1"))
				return err
			})
			if err != nil {
				t.Fatalf("a claim while another claim of the same file was open: %v", err)
			}
		}

		purgeAll := func() (int, []string, error) {
			var b blobs
			at := time.Now()
			n, err := s.PurgeMedia(ctx, at, -time.Minute, 100, b.delete) // cutoff a minute ahead
			return n, b.take(), err
		}
		if err := store.AgeMediaClaims(ctx, s, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		inside, release := make(chan struct{}), make(chan struct{})
		claimed := make(chan error, 1)
		go func() {
			claimed <- store.ClaimMediaHeld(ctx, s, mediaFile("f1"), func(context.Context) error {
				close(inside)
				<-release
				return nil
			})
		}()
		<-inside
		type result struct {
			n       int
			deleted []string
			err     error
		}
		purged := make(chan result, 1)
		go func() {
			n, deleted, err := purgeAll()
			purged <- result{n, deleted, err}
		}()
		time.Sleep(200 * time.Millisecond) // the purge reaches the row and waits
		close(release)
		if err := <-claimed; err != nil {
			t.Fatal(err)
		}
		if r := <-purged; r.err != nil || r.n != 0 || len(r.deleted) != 0 {
			t.Fatalf("a purge during an open claim: %d purged, deleted %v (%v)", r.n, r.deleted, r.err)
		}

		// Last used two hours ago, claimed now: the claim's use counts once the claim lapses.
		if err := store.AgeMedia(ctx, s, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		claimMedia(t, s, "f1")
		if err := store.AgeMediaClaims(ctx, s, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		var b blobs
		if n, err := s.PurgeMedia(ctx, time.Now(), time.Minute, 100, b.delete); err != nil || n != 0 {
			t.Fatalf("a file claimed a moment ago was purged: %d, %v (%v)", n, b.take(), err)
		}
		if n, deleted, err := purgeAll(); err != nil || n != 1 || !sameKeys(deleted, "media/sha256/f1") {
			t.Fatalf("with nothing holding it: %d purged, deleted %v (%v)", n, deleted, err)
		}
	})
}

// TestPostEndsItsClaims: a post ends the claims of the request that made it, in its own
// transaction, so that a refused post ends none.
func TestPostEndsItsClaims(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		claims := func() int {
			t.Helper()
			n, err := store.MediaClaims(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		video, thumb := claimMedia(t, s, "c1"), claimMedia(t, s, "c2")
		claimMedia(t, s, "c1") // another request's
		thumbnail := mediaFile("c2")
		newPost(t, s, ca, store.NewPost{ContentHash: "c", Video: mediaFile("c1"), Thumbnail: &thumbnail, Claims: []string{video, thumb}})
		if n := claims(); n != 1 {
			t.Fatalf("%d claims left, want the other request's alone", n)
		}

		// Refused at its last statement (the allowance is spent): the claim stays, for the
		// request to release.
		one := 1
		limit := &one
		if _, err := s.UpdateAccount(ctx, ca.Account.ID, store.AccountUpdate{MonthlyPostLimit: &limit}); err != nil {
			t.Fatal(err)
		}
		np := newPostInput(t, s, ca, "d")
		np.Claims = []string{claimMedia(t, s, "ab")}
		if _, err := s.CreatePost(ctx, np, nil); !errors.Is(err, store.ErrMonthlyLimit) {
			t.Fatalf("a post over the allowance: %v", err)
		}
		if n := claims(); n != 2 {
			t.Fatalf("%d claims after a refused post, want 2", n)
		}
	})
}

// TestMediaKeepsProbe: what the probe read for the platforms' media rules is kept with the
// stored file and read back as it was (issue 31, item 8).
func TestMediaKeepsProbe(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		m := mediaFile("p1")
		m.Width, m.Height, m.Duration = 1080, 1920, 5*time.Second
		m.VideoCodec, m.AudioCodec, m.AudioChannels, m.AudioSampleRate = "h264", "aac", 2, 96000
		m.FrameRate, m.MaxFrameRate, m.MoovAfterMdat, m.EditList = 29.97, 120, true, true
		if _, _, err := s.ClaimMedia(ctx, m); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetMedia(ctx, "p1")
		if err != nil {
			t.Fatal(err)
		}
		got.CreatedAt = m.CreatedAt
		if got != m {
			t.Errorf("read back %+v\nwant      %+v", got, m)
		}
	})
}
