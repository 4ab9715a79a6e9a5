package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func n(v int64) *int64 { return &v }

// publishedPost stores a post to a new channel of platform and settles its destination as
// published on day (its publish time is moved there, as if it had been published then).
func publishedPost(t *testing.T, s *store.Store, ca store.CreatedAccount, platform, externalID string, day time.Time) store.AudienceTarget {
	t.Helper()
	ctx := context.Background()
	ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: platform,
		Name: platform, ExternalAccountID: "acct-" + externalID, Sandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreatePost(ctx, store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, ContentHash: externalID,
		Video:        store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request:      []byte(`{}`),
		Destinations: []store.Destination{{ChannelID: ch.ID, Platform: platform, Options: []byte(`{}`)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Destinations[0]
	if err := s.StartDelivery(ctx, d.ID, d.Seq); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: externalID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobsDB().ExecContext(ctx, `UPDATE published_items SET published_at = $1, published_day = $2 WHERE destination_id = $3`,
		day, day.Format(time.DateOnly), d.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.RebuildFigureTotals(ctx, ca.Account.ID); err != nil {
		t.Fatal(err)
	}
	item, err := s.PublishedItem(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	return item
}

func TestAnalyticsTotals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "a")
		b := newAccount(t, s, "b")
		nov1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		nov3 := time.Date(2026, 11, 3, 23, 59, 0, 0, time.UTC)
		yt1 := publishedPost(t, s, a, "youtube", "yt1", nov1)
		yt2 := publishedPost(t, s, a, "youtube", "yt2", nov3)
		tg := publishedPost(t, s, a, "telegram", "tg1", nov3)
		theirs := publishedPost(t, s, b, "youtube", "yt3", nov1)

		targets, err := s.AudienceTargets(ctx, store.AudienceFilter{Kind: store.ReadMetrics, AccountID: a.Account.ID})
		if err != nil || len(targets) != 3 || targets[2].DestinationID != yt1.DestinationID || targets[2].ExternalID != "yt1" {
			t.Fatalf("targets: %v %+v", err, targets)
		}
		at := time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC)
		next := at.Add(time.Hour)
		err = s.SaveReadings(ctx, []store.Reading{
			{DestinationID: yt1.DestinationID, At: at, Next: next, Figures: store.Figures{Views: n(10), Likes: n(2), Comments: n(0)}},
			{DestinationID: yt2.DestinationID, At: at, Next: next, Figures: store.Figures{Views: n(20)}},
			{DestinationID: theirs.DestinationID, At: at, Next: next, Figures: store.Figures{Views: n(1000), Shares: n(5)}},
		})
		if err != nil {
			t.Fatal(err)
		}
		// Read figures are next due when their reading said; unread ones (Telegram's) since
		// they were published, which the clock says was now.
		for _, tc := range []struct {
			by   time.Time
			want int
		}{{at, 0}, {next, 3}, {time.Now().Add(time.Minute), 4}} {
			due, err := s.AudienceTargets(ctx, store.AudienceFilter{Kind: store.ReadMetrics, DueBy: &tc.by})
			if err != nil || len(due) != tc.want {
				t.Errorf("due by %s: %d targets (%v), want %d", tc.by, len(due), err, tc.want)
			}
		}
		// Telegram gives no figures: never read again, and its figures stay null.
		if err := s.SetAudienceSchedule(ctx, store.ReadMetrics, []string{tg.DestinationID}, "", nil); err != nil {
			t.Fatal(err)
		}

		day := func(y, m, d int) *time.Time { t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC); return &t }
		for _, tc := range []struct {
			name        string
			f           store.AnalyticsFilter
			posts       int
			ytViews     *int64
			ytLikes     *int64
			withTG      bool
			noPlatforms bool
		}{
			{name: "all", posts: 3, ytViews: n(30), ytLikes: n(2), withTG: true},
			{name: "first day only", f: store.AnalyticsFilter{From: day(2026, 11, 1), Until: day(2026, 11, 2)}, posts: 1, ytViews: n(10), ytLikes: n(2)},
			{name: "the 3rd to its last minute", f: store.AnalyticsFilter{From: day(2026, 11, 3), Until: day(2026, 11, 4)}, posts: 2, ytViews: n(20), withTG: true},
			{name: "nothing then", f: store.AnalyticsFilter{From: day(2026, 11, 5)}, noPlatforms: true},
			{name: "one platform", f: store.AnalyticsFilter{Platform: "youtube"}, posts: 2, ytViews: n(30), ytLikes: n(2)},
			{name: "one project", f: store.AnalyticsFilter{ProjectID: a.Project.ID}, posts: 3, ytViews: n(30), ytLikes: n(2), withTG: true},
			{name: "another account's project", f: store.AnalyticsFilter{ProjectID: b.Project.ID}, noPlatforms: true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				per, posts, err := s.AnalyticsTotals(ctx, a.Account.ID, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				if tc.noPlatforms {
					if len(per) != 0 || posts != 0 {
						t.Fatalf("want nothing, got %d posts %+v", posts, per)
					}
					return
				}
				if posts != tc.posts {
					t.Errorf("posts %d, want %d", posts, tc.posts)
				}
				byName := map[string]store.PlatformTotals{}
				for _, p := range per {
					byName[p.Platform] = p
				}
				yt := byName["youtube"]
				if !eqPtr(yt.Figures.Views, tc.ytViews) || !eqPtr(yt.Figures.Likes, tc.ytLikes) {
					t.Errorf("youtube views %v likes %v, want %v %v", deref(yt.Figures.Views), deref(yt.Figures.Likes), deref(tc.ytViews), deref(tc.ytLikes))
				}
				// Shares were never given for this account's videos: null, not the other
				// account's 5 and not 0.
				if yt.Figures.Shares != nil || yt.Figures.Impressions != nil {
					t.Errorf("figures nobody gave: shares %v impressions %v", deref(yt.Figures.Shares), deref(yt.Figures.Impressions))
				}
				tgt, ok := byName["telegram"]
				if ok != tc.withTG {
					t.Fatalf("telegram present %v, want %v", ok, tc.withTG)
				}
				if ok && (tgt.Posts != 1 || !(tgt.Figures.Equal(store.Figures{}))) {
					t.Errorf("telegram: %+v", tgt)
				}
			})
		}

		// A second reading moves the totals by its difference; they stay what a rebuild from
		// the destinations' latest figures gives.
		at2 := at.Add(time.Hour)
		if err := s.SaveReadings(ctx, []store.Reading{
			{DestinationID: yt1.DestinationID, At: at2, Next: next, Figures: store.Figures{Views: n(15), Shares: n(1)}},
			{DestinationID: yt2.DestinationID, At: at2, Next: next, Figures: store.Figures{Views: n(20), Likes: n(4)}},
		}); err != nil {
			t.Fatal(err)
		}
		running, posts, err := s.AnalyticsTotals(ctx, a.Account.ID, store.AnalyticsFilter{})
		if err != nil || posts != 3 {
			t.Fatal(err, posts)
		}
		if yt := running[len(running)-1]; yt.Platform != "youtube" || *yt.Figures.Views != 35 || *yt.Figures.Likes != 6 || *yt.Figures.Shares != 1 || *yt.Figures.Comments != 0 {
			t.Errorf("after the second reading: %+v", yt)
		}
		if err := s.RebuildFigureTotals(ctx, a.Account.ID); err != nil {
			t.Fatal(err)
		}
		rebuilt, _, err := s.AnalyticsTotals(ctx, a.Account.ID, store.AnalyticsFilter{})
		if err != nil || len(rebuilt) != len(running) {
			t.Fatal(err, rebuilt)
		}
		for i := range rebuilt {
			if rebuilt[i].Platform != running[i].Platform || rebuilt[i].Posts != running[i].Posts ||
				rebuilt[i].Destinations != running[i].Destinations || !rebuilt[i].Figures.Equal(running[i].Figures) {
				t.Errorf("running totals %+v, rebuilt %+v", running[i], rebuilt[i])
			}
		}

		// The other account sees only its own.
		per, posts, err := s.AnalyticsTotals(ctx, b.Account.ID, store.AnalyticsFilter{})
		if err != nil || posts != 1 || len(per) != 1 || *per[0].Figures.Views != 1000 || *per[0].Figures.Shares != 5 {
			t.Fatalf("other account: %v %d %+v", err, posts, per)
		}
		if items, err := s.ListItemFigures(ctx, b.Account.ID, store.AnalyticsFilter{PostID: yt1.PostID}, 10, nil, ""); err != nil || len(items) != 0 {
			t.Errorf("another account lists this account's post: %v %+v", err, items)
		}
		if samples, err := s.MetricSamples(ctx, b.Account.ID, []string{yt1.DestinationID}); err != nil || len(samples) != 0 {
			t.Errorf("another account reads this account's samples: %v %+v", err, samples)
		}
		if targets, _ := s.AudienceTargets(ctx, store.AudienceFilter{Kind: store.ReadMetrics, AccountID: a.Account.ID}); len(targets) != 2 {
			t.Errorf("after telegram was dropped: %d targets", len(targets))
		}
	})
}

func TestMetricSamples(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "a")
		item := publishedPost(t, s, a, "youtube", "yt1", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		read := func(minute int, f store.Figures) {
			t.Helper()
			at := time.Date(2026, 11, 2, 0, minute, 0, 0, time.UTC)
			if err := s.SaveReadings(ctx, []store.Reading{{DestinationID: item.DestinationID, At: at, Next: at.Add(time.Hour), Figures: f}}); err != nil {
				t.Fatal(err)
			}
		}
		read(0, store.Figures{Views: n(5), Likes: n(1)})
		read(10, store.Figures{Views: n(5), Likes: n(1)}) // unchanged: no sample
		read(20, store.Figures{Views: n(9)})              // likes left out: kept at 1
		items, err := s.ListItemFigures(ctx, a.Account.ID, store.AnalyticsFilter{}, 10, nil, "")
		if err != nil || len(items) != 1 {
			t.Fatalf("%v %+v", err, items)
		}
		got := items[0]
		if *got.Figures.Views != 9 || got.Figures.Likes == nil || *got.Figures.Likes != 1 || got.Figures.Comments != nil {
			t.Errorf("latest figures: views %v likes %v comments %v", deref(got.Figures.Views), deref(got.Figures.Likes), deref(got.Figures.Comments))
		}
		if got.SyncedAt == nil || !got.SyncedAt.Equal(time.Date(2026, 11, 2, 0, 20, 0, 0, time.UTC)) || got.URL != "" || got.ExternalID != "yt1" {
			t.Errorf("item: %+v", got)
		}
		samples, err := s.MetricSamples(ctx, a.Account.ID, []string{item.DestinationID})
		if err != nil {
			t.Fatal(err)
		}
		series := samples[item.DestinationID]
		if len(series) != 2 || *series[0].Figures.Views != 5 || *series[1].Figures.Views != 9 || series[1].Figures.Likes != nil {
			t.Fatalf("series: %+v", series)
		}
	})
}

func TestComments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "a")
		b := newAccount(t, s, "b")
		yt := publishedPost(t, s, a, "youtube", "yt1", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		bs := publishedPost(t, s, a, "bluesky", "at://did:plc:x/app.bsky.feed.post/1", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		base := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
		at := base.Add(time.Hour)
		c1 := store.Comment{PlatformID: "c1", Author: "ada", Text: "first", CreatedAt: base, LikeCount: n(3)}
		c2 := store.Comment{PlatformID: "c2", ParentPlatformID: "c1", Author: "bo", Text: "answer", CreatedAt: base.Add(time.Minute)}
		added, err := s.SaveComments(ctx, yt, []store.Comment{c1, c2}, at, at.Add(time.Hour))
		if err != nil || added != 2 {
			t.Fatalf("save: %d %v", added, err)
		}
		// Read again: the same comments, one edited, are not added twice.
		c1.Text = "first (edited)"
		if added, err := s.SaveComments(ctx, yt, []store.Comment{c1, c2}, at, at.Add(time.Hour)); err != nil || added != 0 {
			t.Fatalf("save again: %d %v", added, err)
		}
		if _, err := s.SaveComments(ctx, bs, []store.Comment{{PlatformID: "at://c3", Author: "chen", Text: "hi", CreatedAt: base.Add(2 * time.Minute)}}, at, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}

		all, err := s.ListComments(ctx, a.Account.ID, store.CommentFilter{Limit: 10})
		if err != nil || len(all) != 3 {
			t.Fatalf("list: %v %d", err, len(all))
		}
		if all[0].PlatformID != "at://c3" || all[2].Text != "first (edited)" || *all[2].LikeCount != 3 || all[1].ParentID != all[2].ID || all[2].ParentID != "" {
			t.Errorf("listing: %+v", all)
		}
		for _, tc := range []struct {
			name string
			f    store.CommentFilter
			want []string
		}{
			{"platform", store.CommentFilter{Platform: "youtube"}, []string{"c2", "c1"}},
			{"post", store.CommentFilter{PostID: bs.PostID}, []string{"at://c3"}},
			{"since", store.CommentFilter{Since: ptrTime(base.Add(time.Minute))}, []string{"at://c3", "c2"}},
			{"page after c2", store.CommentFilter{AfterTime: &all[1].CreatedAt, AfterID: all[1].ID}, []string{"c1"}},
			{"limit", store.CommentFilter{Limit: 1}, []string{"at://c3"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.ListComments(ctx, a.Account.ID, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, c := range got {
					ids = append(ids, c.PlatformID)
				}
				if len(ids) != len(tc.want) || (len(ids) > 0 && ids[0] != tc.want[0]) || (len(ids) > 1 && ids[1] != tc.want[1]) {
					t.Errorf("got %v, want %v", ids, tc.want)
				}
			})
		}

		reply, err := s.SaveReply(ctx, all[2], store.Comment{PlatformID: "r1", ParentPlatformID: "c1", Author: "me", Text: "thanks", CreatedAt: at}, "")
		if err != nil || !reply.Own || reply.ParentID != all[2].ID || reply.AccountID != a.Account.ID || reply.DestinationID != yt.DestinationID {
			t.Fatalf("reply: %v %+v", err, reply)
		}
		// Not replied to: the audience's comments without a reply of the channel's own (c2
		// answers c1 but is not the channel's; r1 is), never the channel's own.
		unanswered := func(acct string, f store.CommentFilter) []string {
			t.Helper()
			f.Unanswered = true
			got, err := s.ListComments(ctx, acct, f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range got {
				ids = append(ids, c.PlatformID)
			}
			return ids
		}
		if got := unanswered(a.Account.ID, store.CommentFilter{}); !slices.Equal(got, []string{"at://c3", "c2"}) {
			t.Errorf("not replied to: %v, want [at://c3 c2]", got)
		}
		if got := unanswered(a.Account.ID, store.CommentFilter{Platform: "youtube"}); !slices.Equal(got, []string{"c2"}) {
			t.Errorf("not replied to on YouTube: %v, want [c2]", got)
		}
		if got, err := s.GetComment(ctx, a.Account.ID, reply.ID); err != nil || got.Text != "thanks" {
			t.Errorf("get reply: %v %+v", err, got)
		}
		if _, err := s.GetComment(ctx, b.Account.ID, reply.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account reads the comment: %v", err)
		}
		if got, _ := s.ListComments(ctx, b.Account.ID, store.CommentFilter{}); len(got) != 0 {
			t.Errorf("another account lists %d comments", len(got))
		}
		// Another account's reply to a comment with the same platform id elsewhere answers
		// nothing here.
		theirs := publishedPost(t, s, b, "bluesky", "at://did:plc:y/app.bsky.feed.post/2", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		if _, err := s.SaveComments(ctx, theirs, []store.Comment{{PlatformID: "their-reply", ParentPlatformID: "at://c3", Author: "b",
			Text: "mine", Own: true, CreatedAt: at}}, at, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got := unanswered(a.Account.ID, store.CommentFilter{Platform: "bluesky"}); !slices.Equal(got, []string{"at://c3"}) {
			t.Errorf("not replied to on Bluesky after another channel's reply: %v, want [at://c3]", got)
		}
		if got := unanswered(b.Account.ID, store.CommentFilter{}); len(got) != 0 {
			t.Errorf("another account's unanswered comments: %v", got)
		}
	})
}

func ptrTime(t time.Time) *time.Time { return &t }

func eqPtr(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestAnalyticsByDay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "a")
		b := newAccount(t, s, "b")
		nov1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		nov3 := time.Date(2026, 11, 3, 23, 59, 0, 0, time.UTC)
		yt1 := publishedPost(t, s, a, "youtube", "yt1", nov1)
		yt2 := publishedPost(t, s, a, "youtube", "yt2", nov3)
		publishedPost(t, s, a, "telegram", "tg1", nov3)
		theirs := publishedPost(t, s, b, "youtube", "yt3", nov3)
		at := time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC)
		if err := s.SaveReadings(ctx, []store.Reading{
			{DestinationID: yt1.DestinationID, At: at, Next: at, Figures: store.Figures{Views: n(10)}},
			{DestinationID: yt2.DestinationID, At: at, Next: at, Figures: store.Figures{Views: n(20), Likes: n(3)}},
			{DestinationID: theirs.DestinationID, At: at, Next: at, Figures: store.Figures{Views: n(1000)}},
		}); err != nil {
			t.Fatal(err)
		}
		days, err := s.AnalyticsByDay(ctx, a.Account.ID, store.AnalyticsFilter{})
		if err != nil {
			t.Fatal(err)
		}
		// Two days, oldest first; the 3rd holds YouTube's and Telegram's destinations, whose
		// views are YouTube's alone (Telegram gives none: not a zero), the other account's left out.
		if len(days) != 2 || !days[0].Day.Equal(nov1.Truncate(24*time.Hour)) || days[0].Destinations != 1 || !eqPtr(days[0].Figures.Views, n(10)) ||
			days[0].Figures.Likes != nil || days[1].Destinations != 2 || !eqPtr(days[1].Figures.Views, n(20)) || !eqPtr(days[1].Figures.Likes, n(3)) {
			t.Fatalf("by day: %+v", days)
		}
		from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
		if days, _ := s.AnalyticsByDay(ctx, a.Account.ID, store.AnalyticsFilter{From: &from, Platform: "telegram"}); len(days) != 1 ||
			days[0].Destinations != 1 || days[0].Figures.Views != nil {
			t.Errorf("telegram from the 2nd: %+v", days)
		}
	})
}

// TestPublishingCountsInTotals: destinations counted one by one as they publish (not rebuilt
// from published_items) give the day's totals a rebuild gives: one post, counted once per
// platform however many of its channels are on it, and every destination. Also when the
// account has a webhook, whose event the last destination's step records before counting.
func TestPublishingCountsInTotals(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		for _, hooked := range []bool{false, true} {
			t.Run(fmt.Sprint("webhook=", hooked), func(t *testing.T) { testPublishingCountsInTotals(t, s, hooked) })
		}
	})
}

func testPublishingCountsInTotals(t *testing.T, s *store.Store, hooked bool) {
	ctx := context.Background()
	ca := newAccount(t, s, fmt.Sprint("hooked", hooked))
	var hook store.Webhook
	if hooked {
		hook = newWebhook(t, s, ca, store.EventPostPublished)
	}
	var dests []store.Destination
	for i, platform := range []string{"youtube", "youtube", "telegram"} {
		ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: platform,
			Name: platform, ExternalAccountID: fmt.Sprintf("acct-%d", i), Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		dests = append(dests, store.Destination{ChannelID: ch.ID, Platform: platform, Options: []byte(`{}`)})
	}
	p, err := s.CreatePost(ctx, store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, ContentHash: "c",
		Video:   store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request: []byte(`{}`), Destinations: dests}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range p.Destinations {
		if err := s.StartDelivery(ctx, d.ID, d.Seq); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished, ExternalID: fmt.Sprint("x", i)}); err != nil {
			t.Fatal(err)
		}
	}
	totals := func() (map[string]store.PlatformTotals, int) {
		t.Helper()
		per, posts, err := s.AnalyticsTotals(ctx, ca.Account.ID, store.AnalyticsFilter{})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]store.PlatformTotals{}
		for _, pt := range per {
			pt.Figures = store.Figures{}
			byName[pt.Platform] = pt
		}
		return byName, posts
	}
	counted, posts := totals()
	want := map[string]store.PlatformTotals{
		"youtube":  {Platform: "youtube", Posts: 1, Destinations: 2},
		"telegram": {Platform: "telegram", Posts: 1, Destinations: 1},
	}
	if posts != 1 || !maps.Equal(counted, want) {
		t.Fatalf("counted as published: %d posts, %+v; want 1, %+v", posts, counted, want)
	}
	if err := s.RebuildFigureTotals(ctx, ca.Account.ID); err != nil {
		t.Fatal(err)
	}
	if rebuilt, rposts := totals(); rposts != posts || !maps.Equal(rebuilt, counted) {
		t.Fatalf("rebuilt: %d posts, %+v; counted %d, %+v", rposts, rebuilt, posts, counted)
	}
	if hooked {
		if got := deliveries(t, s, ca, hook); len(got) != 1 || got[0].EventType != store.EventPostPublished {
			t.Errorf("webhook deliveries: %+v, want one post.published", got)
		}
	}
}

// TestReadingsInAnyOrder: readings of two destinations counted in two figure_totals rows,
// saved by many transactions at once in both orders, never deadlock, and the totals stay what
// a rebuild from the items gives.
func TestReadingsInAnyOrder(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ca := newAccount(t, s, "a")
	p := newPostOn(t, s, ca, "p", nil, "youtube", "telegram")
	for _, d := range p.Destinations {
		if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestPublished}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for g := range errs {
		wg.Go(func() {
			for i := range 10 {
				views := int64(g*100 + i + 1)
				when := at.Add(time.Duration(g*100+i) * time.Millisecond)
				rs := []store.Reading{
					{DestinationID: p.Destinations[0].ID, At: when, Next: when.Add(time.Hour), Figures: store.Figures{Views: &views}},
					{DestinationID: p.Destinations[1].ID, At: when, Next: when.Add(time.Hour), Figures: store.Figures{Views: &views}},
				}
				if g%2 == 1 {
					rs[0], rs[1] = rs[1], rs[0]
				}
				if errs[g] = s.SaveReadings(ctx, rs); errs[g] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	running, _, err := s.AnalyticsTotals(ctx, ca.Account.ID, store.AnalyticsFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RebuildFigureTotals(ctx, ca.Account.ID); err != nil {
		t.Fatal(err)
	}
	rebuilt, _, err := s.AnalyticsTotals(ctx, ca.Account.ID, store.AnalyticsFilter{})
	if err != nil || len(rebuilt) != len(running) {
		t.Fatal(err, rebuilt)
	}
	for i := range running {
		if !running[i].Figures.Equal(rebuilt[i].Figures) || running[i].Figures.Views == nil {
			t.Errorf("%s: %+v, rebuilt %+v", running[i].Platform, running[i].Figures, rebuilt[i].Figures)
		}
	}
}
