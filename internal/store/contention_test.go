package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestCreatePostConcurrently fires requests at once that must answer for each other: the
// same content, the same idempotency key, more posts than the allowance has left.
func TestCreatePostConcurrently(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const n = 8
		// fire runs n CreatePosts of a new account at once, all to one channel, the account
		// allowed limit posts a month (nil: no limit); mutate makes request i. It returns
		// the posts made, the other answers and the posts counted.
		fire := func(t *testing.T, limit *int, mutate func(i int, np *store.NewPost)) (made []string, refused []error, counted int) {
			t.Helper()
			ca := newAccount(t, s, t.Name()) // its name makes its key
			if _, err := s.UpdateAccount(ctx, ca.Account.ID, store.AccountUpdate{MonthlyPostLimit: &limit}); err != nil {
				t.Fatal(err)
			}
			np := newPostInput(t, s, ca, "same")
			var mu sync.Mutex
			var wg sync.WaitGroup
			for i := range n {
				np := np
				mutate(i, &np)
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := s.CreatePost(ctx, np, nil)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						refused = append(refused, err)
					} else {
						made = append(made, p.ID)
					}
				}()
			}
			wg.Wait()
			if list, err := s.ListPosts(ctx, ca.Account.ID, store.PostFilter{Limit: 100}); err != nil || len(list) != len(made) {
				t.Errorf("%d posts stored (%v), %d made: a refused request left something behind", len(list), err, len(made))
			}
			u, err := s.GetUsage(ctx, ca.Account.ID)
			if err != nil {
				t.Fatal(err)
			}
			return made, refused, u.Posts
		}

		// Identical requests: one post, and every other answer points at it.
		for _, tc := range []struct {
			name   string
			mutate func(int, *store.NewPost)
			ref    func(error) (string, bool) // the post an answer points at
		}{
			{"same content", func(int, *store.NewPost) {}, func(err error) (string, bool) {
				var d *store.DuplicateError
				return refOf(err, &d, func() string { return d.PostID })
			}},
			{"same idempotency key", func(_ int, np *store.NewPost) { np.IdempotencyKey, np.RequestHash = "order-42", "r1" },
				func(err error) (string, bool) {
					var r *store.ReplayError
					return refOf(err, &r, func() string { return r.PostID })
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				made, refused, counted := fire(t, nil, tc.mutate)
				if len(made) != 1 || counted != 1 {
					t.Fatalf("%d posts made, %d counted, want 1 and 1 (answers %v)", len(made), counted, refused)
				}
				for _, err := range refused {
					if id, ok := tc.ref(err); !ok || id != made[0] {
						t.Errorf("answer %v, want one that points at post %s", err, made[0])
					}
				}
			})
		}

		t.Run("allowance", func(t *testing.T) {
			three := 3
			made, refused, counted := fire(t, &three, func(i int, np *store.NewPost) { np.ContentHash = fmt.Sprint("c", i) })
			for _, err := range refused {
				if !errors.Is(err, store.ErrMonthlyLimit) {
					t.Errorf("unexpected answer: %v", err)
				}
			}
			if len(made) != 3 || len(refused) != n-3 || counted != 3 {
				t.Errorf("%d made, %d refused, %d counted; want 3, %d, 3", len(made), len(refused), counted, n-3)
			}
		})
	})
}

// refOf reports the post an error of type *E points at.
func refOf[E error](err error, target *E, id func() string) (string, bool) {
	if !errors.As(err, target) {
		return "", false
	}
	return id(), true
}

// TestCreatePostDoesNotWaitForOthers: on PostgreSQL, a publish of an account commits while
// another publish of the same account is still open (the allowance, counted last, holds its row
// only while committing). SQLite has one writer, so there every publish waits its turn.
func TestCreatePostDoesNotWaitForOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if s.Dialect() != store.Postgres {
			t.Skip("SQLite serialises every write transaction")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ca := newAccount(t, s, "a")
		one := 10
		limit := &one
		if _, err := s.UpdateAccount(ctx, ca.Account.ID, store.AccountUpdate{MonthlyPostLimit: &limit}); err != nil {
			t.Fatal(err)
		}
		// The video is one the account posted before, as in a burst of posts of one video.
		if _, err := s.CreatePost(ctx, newPostInput(t, s, ca, "earlier"), nil); err != nil {
			t.Fatal(err)
		}
		err := whileHeld(t, ctx, func(hold func(context.Context) error) error {
			_, err := s.CreatePost(ctx, newPostInput(t, s, ca, "first"), func(*store.Tx, store.Post) error { return hold(ctx) })
			return err
		}, func(ctx context.Context) error {
			_, err := s.CreatePost(ctx, newPostInput(t, s, ca, "second"), nil)
			return err
		})
		if err != nil {
			t.Fatalf("the second publish, while the first was open: %v", err)
		}
		if u, _ := s.GetUsage(ctx, ca.Account.ID); u.Posts != 3 {
			t.Errorf("%d posts counted, want 3", u.Posts)
		}
	})
}

// newPostTo stores a post of the account to dests new sandbox channels, with content hash
// content, scheduled for at (nil: now).
func newPostTo(t *testing.T, s *store.Store, ca store.CreatedAccount, content string, dests int, at *time.Time) store.Post {
	t.Helper()
	in := newPostInput(t, s, ca, content)
	for i := 1; i < dests; i++ {
		in.Destinations = append(in.Destinations, newPostInput(t, s, ca, fmt.Sprint(content, i)).Destinations[0])
	}
	in.ScheduledFor = at
	p, err := s.CreatePost(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newPostInput is a post of the account to a new sandbox channel, with content hash content.
func newPostInput(t *testing.T, s *store.Store, ca store.CreatedAccount, content string) store.NewPost {
	t.Helper()
	ch, _, err := s.SaveChannel(context.Background(), store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID,
		Platform: "youtube", Name: "yt", ExternalAccountID: "sbx_" + content + ca.Account.ID, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	return store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, ContentHash: content,
		Video:        store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request:      []byte(`{}`),
		Destinations: []store.Destination{{ChannelID: ch.ID, Platform: "youtube", Options: []byte(`{}`)}}}
}

// TestSettlingDoesNotWaitForOthers: on PostgreSQL, a destination of a post publishes while the
// transaction settling another post of the same project, platform and day is still open (both
// count in one figure_totals row, updated last so that it stays locked only while committing).
func TestSettlingDoesNotWaitForOthers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		if s.Dialect() != store.Postgres {
			t.Skip("SQLite serialises every write transaction")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ca := newAccount(t, s, "a")
		first, err := s.CreatePost(ctx, newPostInput(t, s, ca, "first"), nil)
		if err != nil {
			t.Fatal(err)
		}
		second, err := s.CreatePost(ctx, newPostInput(t, s, ca, "second"), nil)
		if err != nil {
			t.Fatal(err)
		}
		// The first settles with a webhook subscribed, so that its transaction calls the
		// enqueuer, which holds it open.
		newWebhook(t, s, ca, store.EventPostPublished)
		var status string
		err = whileHeld(t, ctx, func(hold func(context.Context) error) error {
			s.SetWebhookEnqueuer(func(ctx context.Context, _ *store.Tx, _ []string) error { return hold(ctx) })
			d := first.Destinations[0]
			_, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished})
			return err
		}, func(ctx context.Context) error {
			d := second.Destinations[0]
			var err error
			_, status, err = s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished})
			return err
		})
		if err != nil || status != store.PostPublished {
			t.Fatalf("the second post, while the first was settling: %q %v", status, err)
		}
	})
}

// whileHeld runs first until it calls hold inside its transaction, which keeps that
// transaction open; meanwhile it runs second (given 10 s) and answers second's error. Only
// the first call of hold holds. first must then finish without error.
func whileHeld(t *testing.T, ctx context.Context, first func(hold func(context.Context) error) error, second func(context.Context) error) error {
	t.Helper()
	inside, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hold := func(ctx context.Context) error {
		held := false
		once.Do(func() { held = true })
		if !held {
			return nil
		}
		close(inside)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	firstDone := make(chan error, 1)
	go func() { firstDone <- first(hold) }()
	select {
	case <-inside:
	case <-ctx.Done():
		t.Fatal("the first transaction never reached its hold")
	}
	secondCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := second(secondCtx)
	close(release)
	ferr := <-firstDone
	if err != nil {
		return err
	}
	if ferr != nil {
		t.Fatalf("the held transaction: %v", ferr)
	}
	return nil
}

// A scheduled post's job that starts while an edit of the post is open must wait for it and
// then find itself stale: the edit gave the destinations new jobs, and the post keeps waiting
// for its (new) time.
func TestStartDeliveryWaitsForAnEdit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		at := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		p := newPost(t, s, ca, store.NewPost{ContentHash: "h", ScheduledFor: &at})
		d := p.Destinations[0]

		inside, release := make(chan struct{}), make(chan struct{})
		edited := make(chan error, 1)
		go func() {
			_, err := s.UpdatePost(ctx, ca.Account.ID, p.ID, func(*store.Post) error { return nil },
				func(*store.Tx, store.Post) error { close(inside); <-release; return nil })
			edited <- err
		}()
		<-inside
		started := make(chan error, 1)
		go func() { started <- s.StartDelivery(ctx, d.ID, d.Seq) }()
		// Time for the job to reach the edit's lock; a job that decided without waiting would
		// already have answered.
		select {
		case err := <-started:
			t.Fatalf("the job did not wait for the open edit: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		if err := <-edited; err != nil {
			t.Fatal(err)
		}
		if err := <-started; !errors.Is(err, store.ErrStale) {
			t.Fatalf("the job of the edited post: %v, want ErrStale", err)
		}
		got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
		if err != nil || got.Status != store.PostScheduled {
			t.Fatalf("post after the stale job: %s %v, want scheduled", got.Status, err)
		}
		// The edit's own job fires it.
		if err := s.StartDelivery(ctx, d.ID, d.Seq+1); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetPost(ctx, ca.Account.ID, p.ID); got.Status != store.PostProcessing {
			t.Fatalf("post after its current job started: %s", got.Status)
		}
	})
}

// TestSettlingAtOnce: every destination of a post settles at the same moment. Each settling
// transaction must see the ones that committed before it took the post's lock, so that the
// last one settles the post (not one of them too early, not none), announcing it once (when
// the account has a webhook), with the first destination's published_at, and counting the
// post once in the totals.
func TestSettlingAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const dests = 6
		for round := range 8 {
			ca := newAccount(t, s, fmt.Sprint("r", round))
			// The first four rounds with a webhook: the event is recorded before the
			// published item, which is otherwise written with the post's update.
			hooked := round < 4
			var hook store.Webhook
			if hooked {
				hook = newWebhook(t, s, ca, store.EventPostPublished, store.EventPostPartiallyPublished, store.EventPostFailed)
			}
			p := newPostTo(t, s, ca, "first", dests, nil)
			for _, d := range p.Destinations {
				if err := s.StartDelivery(ctx, d.ID, d.Seq); err != nil {
					t.Fatal(err)
				}
			}
			// Odd rounds: one destination fails.
			outcome := func(i int) string {
				if round%2 == 1 && i == 0 {
					return store.DestFailed
				}
				return store.DestPublished
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, d := range p.Destinations {
				wg.Go(func() {
					<-start
					if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: outcome(i)}); err != nil {
						t.Error(err)
					}
				})
			}
			close(start)
			wg.Wait()
			got, err := s.GetPost(ctx, ca.Account.ID, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			want, event := store.PostPublished, store.EventPostPublished
			if round%2 == 1 {
				want, event = store.PostPartiallyPublished, store.EventPostPartiallyPublished
			}
			var first *time.Time
			for _, d := range got.Destinations {
				if d.PublishedAt != nil && (first == nil || d.PublishedAt.Before(*first)) {
					first = d.PublishedAt
				}
			}
			if got.Status != want || got.PublishedAt == nil || first == nil || !got.PublishedAt.Equal(*first) {
				t.Fatalf("round %d: post %s published at %v (first destination %v); want %s at the first", round, got.Status, got.PublishedAt, first, want)
			}
			if hooked {
				var events []string
				for _, d := range deliveries(t, s, ca, hook) {
					var body eventBody
					if err := json.Unmarshal(d.Payload, &body); err != nil {
						t.Fatal(err)
					}
					events = append(events, body.Type)
				}
				if !slices.Equal(events, []string{event}) {
					t.Fatalf("round %d: events %v; want one %s", round, events, event)
				}
			}
			published := dests - round%2
			per, posts, err := s.AnalyticsTotals(ctx, ca.Account.ID, store.AnalyticsFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if posts != 1 || len(per) != 1 || per[0].Posts != 1 || per[0].Destinations != published {
				t.Fatalf("round %d: totals %d posts, %+v; want 1 post, %d destinations", round, posts, per, published)
			}
		}
	})
}
