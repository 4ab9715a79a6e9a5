package store_test

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// newPostOn stores a post of the account to a new sandbox channel on each platform given,
// scheduled for at (nil: now, so that it is processing).
func newPostOn(t *testing.T, s *store.Store, ca store.CreatedAccount, content string, at *time.Time, platforms ...string) store.Post {
	t.Helper()
	ctx := context.Background()
	in := newPostInput(t, s, ca, content)
	in.Destinations, in.ScheduledFor = nil, at
	for i, platform := range platforms {
		ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: platform,
			Name: platform, ExternalAccountID: fmt.Sprintf("sbx_%s_%d_%s", content, i, ca.Account.ID), Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		in.Destinations = append(in.Destinations, store.Destination{ChannelID: ch.ID, Platform: platform, Options: []byte(`{}`)})
	}
	p, err := s.CreatePost(ctx, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkTotals fails unless the account's figure_totals, as the settling steps counted them,
// are what RebuildFigureTotals makes of its published items, and those count posts once:
// wantPosts in all, and on each platform as wantByPlatform gives (posts, destinations).
func checkTotals(t *testing.T, s *store.Store, ca store.CreatedAccount, wantPosts int, wantByPlatform map[string][2]int) {
	t.Helper()
	ctx := context.Background()
	read := func() (map[string][2]int, int) {
		per, posts, err := s.AnalyticsTotals(ctx, ca.Account.ID, store.AnalyticsFilter{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][2]int{}
		for _, pt := range per {
			m[pt.Platform] = [2]int{pt.Posts, pt.Destinations}
		}
		return m, posts
	}
	counted, posts := read()
	if posts != wantPosts || !maps.Equal(counted, wantByPlatform) {
		t.Errorf("counted: %d posts, %v; want %d, %v", posts, counted, wantPosts, wantByPlatform)
	}
	if err := s.RebuildFigureTotals(ctx, ca.Account.ID); err != nil {
		t.Fatal(err)
	}
	if rebuilt, rposts := read(); rposts != posts || !maps.Equal(rebuilt, counted) {
		t.Errorf("counted %d posts, %v; rebuilt from the published items: %d, %v", posts, counted, rposts, rebuilt)
	}
}

// TestSettlingStepsAsOne: a batch of settling steps writes what each saved alone would (the
// destination, its post's status and published_at, a published item counted once per post
// in figure_totals, even for two destinations of a post in one batch), and leaves to be saved
// alone the steps it must not write: a stale job's, a settled destination's, one of a post not
// fired yet, one whose post's change of status has an event to record, and one of a post
// whose other destination another transaction holds locked, which it skips rather than waits
// for.
func TestSettlingStepsAsOne(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ca, hooked := newAccount(t, s, "a"), newAccount(t, s, "hooked")
	newWebhook(t, s, hooked, store.EventPostPublished)

	three := newPostOn(t, s, ca, "three", nil, "youtube", "youtube", "telegram")
	half := newPostOn(t, s, ca, "half", nil, "youtube", "youtube")
	settled := newPostOn(t, s, ca, "settled", nil, "youtube")
	sd := settled.Destinations[0]
	if _, _, err := s.SaveStep(ctx, sd.ID, sd.Seq, store.StepUpdate{Status: store.DestFailed, Error: "no"}); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	notFired := newPostOn(t, s, ca, "later", &later, "youtube")
	stale := newPostOn(t, s, ca, "stale", nil, "youtube")
	locked := newPostOn(t, s, ca, "locked", nil, "youtube", "youtube")
	hookedHalf := newPostOn(t, s, hooked, "hooked-half", nil, "youtube", "youtube")
	hookedDone := newPostOn(t, s, hooked, "hooked-done", nil, "youtube")

	tx, err := s.WriteDB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM destinations WHERE id = $1 FOR UPDATE`, locked.Destinations[1].ID); err != nil {
		t.Fatal(err)
	}
	// Were the batch to wait for the lock, this would end the wait, and the test.
	var waited atomic.Bool
	watchdog := time.AfterFunc(10*time.Second, func() { waited.Store(true); tx.Rollback() })
	defer watchdog.Stop()

	step := func(d store.Destination, status string) store.BatchedStep {
		return store.BatchedStep{ID: d.ID, Seq: d.Seq, Update: store.StepUpdate{Status: status, ExternalID: "x" + d.ID, URL: "https://example.com/" + d.ID}}
	}
	staleStep := step(stale.Destinations[0], store.DestPublished)
	staleStep.Seq++
	steps := []store.BatchedStep{
		step(three.Destinations[0], store.DestPublished),
		step(half.Destinations[0], store.DestPublished),
		step(three.Destinations[2], store.DestFailed),
		staleStep,
		step(sd, store.DestPublished),
		step(notFired.Destinations[0], store.DestPublished),
		step(locked.Destinations[0], store.DestPublished),
		step(hookedHalf.Destinations[0], store.DestPublished),
		step(hookedDone.Destinations[0], store.DestPublished),
		step(three.Destinations[1], store.DestPublished),
	}
	got := s.SaveSettlingStepsAsOne(ctx, steps)
	if waited.Load() {
		t.Fatal("the batch waited for a lock")
	}
	want := []string{store.PostPartiallyPublished, store.PostProcessing, store.PostPartiallyPublished, "", "", "", "",
		store.PostProcessing, "", store.PostPartiallyPublished}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d (%s to %s): %q, want %q", i, steps[i].ID, steps[i].Update.Status, got[i], want[i])
		}
	}
	tx.Rollback()

	p, err := s.GetPost(ctx, ca.Account.ID, three.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != store.PostPartiallyPublished || p.PublishedAt == nil {
		t.Errorf("post: %s published at %v", p.Status, p.PublishedAt)
	}
	for i, d := range p.Destinations {
		wantStatus := []string{store.DestPublished, store.DestPublished, store.DestFailed}[i]
		if d.Status != wantStatus || d.ExternalID != "x"+d.ID || d.URL != "https://example.com/"+d.ID ||
			(d.PublishedAt != nil) != (wantStatus == store.DestPublished) {
			t.Errorf("destination %d: %s %q %q published at %v", i, d.Status, d.ExternalID, d.URL, d.PublishedAt)
		}
	}
	for _, id := range []string{half.ID, stale.ID, locked.ID} {
		if p, err := s.GetPost(ctx, ca.Account.ID, id); err != nil || p.Status != store.PostProcessing {
			t.Errorf("post %s: %s %v, want processing", id, p.Status, err)
		}
	}
	// Two of three's destinations and one of half's are published; each post counts once.
	checkTotals(t, s, ca, 2, map[string][2]int{"youtube": {2, 3}})
	hd := half.Destinations[1]
	if _, status, err := s.SaveStep(ctx, hd.ID, hd.Seq, store.StepUpdate{Status: store.DestPublished}); err != nil || status != store.PostPublished {
		t.Fatalf("half's second destination: %s %v", status, err)
	}
	checkTotals(t, s, ca, 2, map[string][2]int{"youtube": {2, 4}})
}

// TestSettlingTogether: many destinations settle at once through SaveStep, two of each post
// (on two platforms), some by stale jobs, while another transaction holds one post's
// destination locked: each post ends with the status its destinations give it, each
// destination published once counted once, and the locked one's, once the lock is gone, too.
func TestSettlingTogether(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ca := newAccount(t, s, "a")
	const posts = 10 // the account's monthly limit
	var jobs []stepJob
	var lockedPost store.Post
	for i := range posts {
		p := newPostOn(t, s, ca, fmt.Sprint("p", i), nil, "youtube", "telegram")
		if i == 0 {
			// Its first destination is locked; both settle after the rush (the second would
			// wait in it for the post's lock).
			lockedPost = p
			continue
		}
		// Every third post's telegram destination fails; every fifth's has a stale job
		// beside the current one.
		second := store.DestPublished
		if i%3 == 0 {
			second = store.DestFailed
		}
		jobs = append(jobs, stepJob{p.Destinations[0], store.DestPublished, false}, stepJob{p.Destinations[1], second, false})
		if i%5 == 0 {
			jobs = append(jobs, stepJob{p.Destinations[0], store.DestFailed, true})
		}
	}
	saveStepsWhileLocked(t, ctx, s, lockedPost.Destinations[0], jobs)
	for _, d := range lockedPost.Destinations {
		if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: d.ID}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.ListPosts(ctx, ca.Account.ID, store.PostFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	failedTelegram := 0
	for _, p := range list {
		want := store.PostPublished
		for _, d := range p.Destinations {
			if d.Status == store.DestFailed {
				want = store.PostPartiallyPublished
				if d.Platform != "telegram" {
					t.Errorf("post %s: %s failed, whose only current job published it", p.ID, d.Platform)
				}
				failedTelegram++
			}
		}
		if p.Status != want || p.PublishedAt == nil {
			t.Errorf("post %s: %s at %v, want %s", p.ID, p.Status, p.PublishedAt, want)
		}
	}
	checkTotals(t, s, ca, posts, map[string][2]int{"youtube": {posts, posts}, "telegram": {posts - failedTelegram, posts - failedTelegram}})
}

// TestPostgresJITOff: reelay's connections to PostgreSQL run without JIT compilation, unless
// the database URL says otherwise.
func TestPostgresJITOff(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ param, want string }{{"", "off"}, {"&jit=on", "on"}} {
		s, err := store.Open(ctx, storetest.URL(t, store.Postgres)+c.param)
		if err != nil {
			t.Fatal(err)
		}
		var jit string
		err = s.WriteDB().QueryRowContext(ctx, `SHOW jit`).Scan(&jit)
		s.Close()
		if err != nil || jit != c.want {
			t.Errorf("URL ending %q: jit %q %v, want %q", c.param, jit, err, c.want)
		}
	}
}
