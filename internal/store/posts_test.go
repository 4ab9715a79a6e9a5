package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// newPost stores a post of the account to one new sandbox channel (of the video "ab" unless
// np names one).
func newPost(t *testing.T, s *store.Store, ca store.CreatedAccount, np store.NewPost) store.Post {
	t.Helper()
	ctx := context.Background()
	ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: "youtube",
		Name: "yt", ExternalAccountID: "sbx_" + time.Now().Format("150405.000000000"), Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	np.AccountID, np.ProjectID = ca.Account.ID, ca.Project.ID
	if np.Video.SHA256 == "" {
		np.Video = store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10}
	}
	np.Request = []byte(`{}`)
	np.Destinations = []store.Destination{{ChannelID: ch.ID, Platform: "youtube", Options: []byte(`{}`)}}
	p, err := s.CreatePost(ctx, np, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPostLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		other := newAccount(t, s, "b")
		at := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		p := newPost(t, s, ca, store.NewPost{ContentHash: "h1", ScheduledFor: &at, IdempotencyKey: "k", RequestHash: "r"})
		if p.Status != store.PostScheduled {
			t.Fatalf("status %s", p.Status)
		}
		if _, err := s.GetPost(ctx, other.Account.ID, p.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account reads the post: %v", err)
		}
		hash, id, err := s.LookupIdempotencyKey(ctx, ca.Account.ID, "k")
		if err != nil || hash != "r" || id != p.ID {
			t.Fatalf("idempotency key: %q %q %v", hash, id, err)
		}
		// A fresh key is not expired.
		if n, err := s.DeleteExpiredIdempotencyKeys(ctx); err != nil || n != 0 {
			t.Errorf("deleted %d fresh keys (%v)", n, err)
		}
		if u, _ := s.GetUsage(ctx, ca.Account.ID); u.Posts != 1 {
			t.Errorf("usage %d", u.Posts)
		}
		// A stale job does nothing; the current one fires the post.
		d := p.Destinations[0]
		if err := s.StartDelivery(ctx, d.ID, d.Seq+1); !errors.Is(err, store.ErrStale) {
			t.Errorf("stale start: %v", err)
		}
		canceled, err := s.CancelPost(ctx, ca.Account.ID, p.ID)
		if err != nil || canceled.Status != store.PostCanceled || canceled.Destinations[0].Status != store.DestCanceled {
			t.Fatalf("cancel: %v %+v", err, canceled)
		}
		if u, _ := s.GetUsage(ctx, ca.Account.ID); u.Posts != 0 {
			t.Errorf("cancel did not refund: %d", u.Posts)
		}
		if err := s.StartDelivery(ctx, d.ID, d.Seq); !errors.Is(err, store.ErrStale) {
			t.Errorf("a canceled destination's job started: %v", err)
		}

		// An immediate post settles through its steps.
		q := newPost(t, s, ca, store.NewPost{ContentHash: "h2"})
		qd := q.Destinations[0]
		if err := s.StartDelivery(ctx, qd.ID, qd.Seq); err != nil {
			t.Fatal(err)
		}
		if _, st, err := s.SaveStep(ctx, qd.ID, qd.Seq, store.StepUpdate{Status: store.DestUploading, State: []byte(`{"session":"s1"}`)}); err != nil || st != store.PostProcessing {
			t.Fatalf("step: %s %v", st, err)
		}
		dl, err := s.LoadDelivery(ctx, qd.ID, qd.Seq)
		if err != nil || string(dl.Destination.State) != `{"session":"s1"}` {
			t.Fatalf("state not kept: %s %v", dl.Destination.State, err)
		}
		if _, st, err := s.SaveStep(ctx, qd.ID, qd.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: "v1", URL: "https://x/v1"}); err != nil || st != store.PostPublished {
			t.Fatalf("publish: %s %v", st, err)
		}
		got, _ := s.GetPost(ctx, ca.Account.ID, q.ID)
		if got.PublishedAt == nil || got.Destinations[0].ExternalID != "v1" || string(got.Destinations[0].State) != `{"session":"s1"}` {
			t.Errorf("published post: %+v", got)
		}
		if _, _, err := s.SaveStep(ctx, qd.ID, qd.Seq, store.StepUpdate{Status: store.DestFailed}); !errors.Is(err, store.ErrStale) {
			t.Errorf("a settled destination changed: %v", err)
		}
		if _, err := s.RetryPost(ctx, ca.Account.ID, q.ID, nil); !errors.Is(err, store.ErrConflict) {
			t.Errorf("retry of a post without failures: %v", err)
		}
		list, err := s.ListPosts(ctx, ca.Account.ID, store.PostFilter{Limit: 10})
		if err != nil || len(list) != 2 || list[0].ID != q.ID {
			t.Errorf("list newest first: %v %d", err, len(list))
		}
	})
}

// TestSaveStepBetweenOpenStatuses: a step that leaves its destination unsettled keeps what it
// does not mention, fires a post still marked scheduled, and is refused for a stale job or a
// settled destination.
func TestSaveStepBetweenOpenStatuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		soon := time.Now().Add(time.Hour).UTC()
		cases := []struct {
			name      string
			scheduled bool
			settle    bool // the destination has published before the step
			seqDelta  int
			wantErr   error
			wantPost  string
		}{
			{name: "fired post", wantPost: store.PostProcessing},
			{name: "post still scheduled", scheduled: true, wantPost: store.PostProcessing},
			{name: "stale job", seqDelta: 1, wantErr: store.ErrStale},
			{name: "stale job of a scheduled post", scheduled: true, seqDelta: 1, wantErr: store.ErrStale},
			{name: "settled destination", settle: true, wantErr: store.ErrStale},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				np := store.NewPost{ContentHash: fmt.Sprintf("step-%d", i)}
				if tc.scheduled {
					np.ScheduledFor = &soon
				}
				p := newPost(t, s, ca, np)
				d := p.Destinations[0]
				if !tc.scheduled {
					first := store.StepUpdate{Status: store.DestUploading, State: []byte(`{"session":"s1"}`), ExternalID: "x1"}
					if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, first); err != nil {
						t.Fatal(err)
					}
				}
				if tc.settle {
					if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: "x1"}); err != nil {
						t.Fatal(err)
					}
				}
				before, err := s.GetPost(ctx, ca.Account.ID, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				postID, postStatus, err := s.SaveStep(ctx, d.ID, d.Seq+tc.seqDelta,
					store.StepUpdate{Status: store.DestProcessing, Message: "waiting", Attempts: 2})
				after, _ := s.GetPost(ctx, ca.Account.ID, p.ID)
				if tc.wantErr != nil {
					if !errors.Is(err, tc.wantErr) {
						t.Fatalf("err %v, want %v", err, tc.wantErr)
					}
					if after.Status != before.Status || after.Destinations[0].Status != before.Destinations[0].Status ||
						after.Destinations[0].Message != before.Destinations[0].Message {
						t.Errorf("a refused step changed the post: %+v -> %+v", before, after)
					}
					return
				}
				if err != nil || postID != p.ID || postStatus != tc.wantPost {
					t.Fatalf("SaveStep: %q %q %v; want %q %q", postID, postStatus, err, p.ID, tc.wantPost)
				}
				got := after.Destinations[0]
				if after.Status != tc.wantPost || got.Status != store.DestProcessing || got.Message != "waiting" || got.Attempts != 2 {
					t.Errorf("after the step: post %s, destination %+v", after.Status, got)
				}
				if !tc.scheduled && (string(got.State) != `{"session":"s1"}` || got.ExternalID != "x1") {
					t.Errorf("the step lost what it did not mention: state %s, external id %q", got.State, got.ExternalID)
				}
			})
		}
	})
}

// TestPostPublishedAtIsFirstDestinations: a post's published_at is that of its first
// destination to publish, however many settle after it, and its status follows them all.
func TestPostPublishedAtIsFirstDestinations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		np := newPostInput(t, s, ca, "one")
		np.Destinations = append(np.Destinations, newPostInput(t, s, ca, "two").Destinations...)
		np.Destinations = append(np.Destinations, newPostInput(t, s, ca, "three").Destinations...)
		p, err := s.CreatePost(ctx, np, nil)
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			dest       int
			status     string
			wantPost   string
			wantFirstN int // which destination's published_at the post must have; -1: none
		}{
			{1, store.DestFailed, store.PostProcessing, -1},
			{2, store.DestPublished, store.PostProcessing, 2},
			{0, store.DestPublished, store.PostPartiallyPublished, 2},
		}
		for _, st := range steps {
			time.Sleep(2 * time.Millisecond) // distinct published_at times
			d := p.Destinations[st.dest]
			_, postStatus, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: st.status})
			if err != nil || postStatus != st.wantPost {
				t.Fatalf("destination %d %s: post %q %v; want %q", st.dest, st.status, postStatus, err, st.wantPost)
			}
			got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != st.wantPost {
				t.Errorf("stored status %q, want %q", got.Status, st.wantPost)
			}
			switch {
			case st.wantFirstN < 0 && got.PublishedAt != nil:
				t.Errorf("published_at %v before any destination published", got.PublishedAt)
			case st.wantFirstN >= 0:
				want := got.Destinations[st.wantFirstN].PublishedAt
				if got.PublishedAt == nil || want == nil || !got.PublishedAt.Equal(*want) {
					t.Errorf("published_at %v, want destination %d's %v", got.PublishedAt, st.wantFirstN, want)
				}
			}
		}
	})
}

// TestStartDelivery: a destination's job that starts fires its scheduled post, finds an
// immediate or already fired post as it is, and is told it is stale when it is not the
// destination's current job or the destination has settled.
func TestStartDelivery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		for _, tc := range []struct {
			name      string
			scheduled bool
			prepare   func(p store.Post) error
			seqDelta  int
			want      error
			wantPost  string
		}{
			{name: "scheduled post fires", scheduled: true, wantPost: store.PostProcessing},
			{name: "immediate post", wantPost: store.PostProcessing},
			{name: "second job of a fired post", scheduled: true,
				prepare:  func(p store.Post) error { return s.StartDelivery(ctx, p.Destinations[0].ID, p.Destinations[0].Seq) },
				wantPost: store.PostProcessing},
			{name: "job of an older edit", scheduled: true, seqDelta: -1, want: store.ErrStale, wantPost: store.PostScheduled},
			{name: "canceled post", scheduled: true, seqDelta: 1, want: store.ErrStale, wantPost: store.PostCanceled,
				prepare: func(p store.Post) error { _, err := s.CancelPost(ctx, ca.Account.ID, p.ID); return err }},
			{name: "settled destination", want: store.ErrStale, wantPost: store.PostPublished,
				prepare: func(p store.Post) error {
					_, _, err := s.SaveStep(ctx, p.Destinations[0].ID, p.Destinations[0].Seq, store.StepUpdate{Status: store.DestPublished})
					return err
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				np := store.NewPost{ContentHash: tc.name, AllowDuplicate: true}
				if tc.scheduled {
					np.ScheduledFor = &later
				}
				p := newPost(t, s, ca, np)
				if tc.prepare != nil {
					if err := tc.prepare(p); err != nil {
						t.Fatal(err)
					}
				}
				d := p.Destinations[0]
				if err := s.StartDelivery(ctx, d.ID, d.Seq+tc.seqDelta); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
					t.Fatalf("StartDelivery: %v, want %v", err, tc.want)
				}
				got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != tc.wantPost {
					t.Errorf("post %s, want %s", got.Status, tc.wantPost)
				}
			})
		}
		if err := s.StartDelivery(ctx, "00000000-0000-4000-8000-000000000000", 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown destination: %v, want ErrNotFound", err)
		}
	})
}

// TestGetPost: a post is read with all its destinations, in their order and with their
// channels' names, and a post without destinations (which the API never makes) still reads.
func TestGetPost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		np := store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, ContentHash: "three", Request: []byte(`{"k":1}`),
			Video: store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10}}
		for i, platform := range []string{"tiktok", "youtube", "instagram"} {
			ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: platform,
				Name: fmt.Sprintf("channel %d", i), ExternalAccountID: "sbx_" + platform, Sandbox: true})
			if err != nil {
				t.Fatal(err)
			}
			np.Destinations = append(np.Destinations, store.Destination{ChannelID: ch.ID, Platform: platform, Options: []byte(`{}`)})
		}
		p, err := s.CreatePost(ctx, np, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != p.ID || got.Status != store.PostProcessing || string(got.Request) != `{"k":1}` || len(got.Destinations) != 3 {
			t.Fatalf("post %+v", got)
		}
		for i, d := range got.Destinations {
			if d.Position != i || d.Platform != np.Destinations[i].Platform || d.ChannelName != fmt.Sprintf("channel %d", i) || d.PostID != p.ID {
				t.Errorf("destination %d: position %d, platform %s, channel %q", i, d.Position, d.Platform, d.ChannelName)
			}
		}

		np.ContentHash, np.Destinations = "none", nil
		empty, err := s.CreatePost(ctx, np, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err = s.GetPost(ctx, ca.Account.ID, empty.ID)
		if err != nil || got.ID != empty.ID || got.Destinations == nil || len(got.Destinations) != 0 {
			t.Errorf("post without destinations: %+v, %v", got, err)
		}
	})
}

// TestReplyKeys: the claim of a reply's idempotency key, table by table of what a second
// request under it meets.
func TestReplyKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, b := newAccount(t, s, "a"), newAccount(t, s, "b")
		claim := func(account, key, hash string, want error) {
			t.Helper()
			id, err := s.ClaimReplyKey(ctx, account, key, hash)
			if !errors.Is(err, want) || id != "" {
				t.Errorf("claim %s with %s: %q, %v; want %v", key, hash, id, err, want)
			}
		}
		claim(a.Account.ID, "k", "h1", nil)
		claim(a.Account.ID, "k", "h1", store.ErrReplyUnsettled)
		claim(a.Account.ID, "k", "h2", store.ErrIdempotencyConflict)
		claim(b.Account.ID, "k", "h2", nil) // another account's key of the same name
		if err := s.ReleaseReplyKey(ctx, a.Account.ID, "k"); err != nil {
			t.Fatal(err)
		}
		claim(a.Account.ID, "k", "h2", nil)

		// A day later the key is forgotten: by housekeeping, or by the next claim of it.
		if n, err := s.DeleteExpiredIdempotencyKeys(ctx); err != nil || n != 0 {
			t.Errorf("deleted %d fresh keys (%v)", n, err)
		}
		old := time.Now().Add(-store.IdempotencyWindow - time.Minute).UTC()
		if _, err := s.WriteDB().ExecContext(ctx, `UPDATE reply_keys SET created_at = $1`, old); err != nil {
			t.Fatal(err)
		}
		claim(a.Account.ID, "k", "h3", nil)
		if n, err := s.DeleteExpiredIdempotencyKeys(ctx); err != nil || n != 1 {
			t.Errorf("deleted %d expired keys, want b's (%v)", n, err)
		}
		claim(b.Account.ID, "k", "h1", nil)
	})
}
