package store_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// filteredPost stores a post of ca to new channels of the platforms, created at created (moved
// there, as if it had been made then) and scheduled for scheduled (nil: published at once).
func filteredPost(t *testing.T, s *store.Store, ca store.CreatedAccount, title string, created time.Time, scheduled *time.Time, platforms ...string) store.Post {
	t.Helper()
	ctx := context.Background()
	var dests []store.Destination
	for _, p := range platforms {
		ch, _, err := s.SaveChannel(ctx, store.Channel{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Platform: p,
			Name: p, ExternalAccountID: title + "-" + p, Sandbox: true})
		if err != nil {
			t.Fatal(err)
		}
		dests = append(dests, store.Destination{ChannelID: ch.ID, Platform: p, Options: []byte(`{}`)})
	}
	p, err := s.CreatePost(ctx, store.NewPost{AccountID: ca.Account.ID, ProjectID: ca.Project.ID, Title: title, ContentHash: title,
		Video:   store.Media{SHA256: "ab", BlobKey: "media/sha256/ab", Kind: "mp4", ContentType: "video/mp4", Size: 10},
		Request: []byte(`{}`), ScheduledFor: scheduled, Destinations: dests}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.JobsDB().ExecContext(ctx, `UPDATE posts SET created_at = $1 WHERE id = $2`, created, p.ID); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestListPostsFilters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "a")
		b := newAccount(t, s, "b")
		day := func(d int, h int) time.Time { return time.Date(2027, 3, d, h, 0, 0, 0, time.UTC) }
		at := func(d, h int) *time.Time { t := day(d, h); return &t }
		// Created on 1, 2, 3 and 4 March; scheduled (or not) for later days.
		filteredPost(t, s, a, "now-yt", day(1, 9), nil, "youtube")
		filteredPost(t, s, a, "sched-tt", day(2, 9), at(10, 12), "tiktok")
		filteredPost(t, s, a, "sched-both", day(3, 9), at(20, 8), "youtube", "tiktok")
		filteredPost(t, s, a, "late-tt", day(4, 23), at(11, 0), "tiktok")
		// The other account has posts matching every filter.
		filteredPost(t, s, b, "theirs-tt", day(2, 10), at(10, 13), "tiktok")
		filteredPost(t, s, b, "theirs-yt", day(3, 10), nil, "youtube")

		for _, tc := range []struct {
			name string
			f    store.PostFilter
			want []string
		}{
			{"all", store.PostFilter{}, []string{"late-tt", "sched-both", "sched-tt", "now-yt"}},
			{"platform", store.PostFilter{Platform: "tiktok"}, []string{"late-tt", "sched-both", "sched-tt"}},
			{"platform with one of two destinations", store.PostFilter{Platform: "youtube"}, []string{"sched-both", "now-yt"}},
			{"platform without posts", store.PostFilter{Platform: "reddit"}, nil},
			{"created range, since included, before excluded", store.PostFilter{CreatedSince: at(2, 9), CreatedBefore: at(4, 23)},
				[]string{"sched-both", "sched-tt"}},
			{"created since", store.PostFilter{CreatedSince: at(3, 0)}, []string{"late-tt", "sched-both"}},
			{"scheduled range leaves out posts published at once", store.PostFilter{ScheduledSince: at(1, 0), ScheduledBefore: at(12, 0)},
				[]string{"late-tt", "sched-tt"}},
			{"scheduled before", store.PostFilter{ScheduledBefore: at(11, 0)}, []string{"sched-tt"}},
			{"every filter", store.PostFilter{ProjectID: a.Project.ID, Status: store.PostScheduled, Platform: "tiktok",
				CreatedSince: at(1, 0), CreatedBefore: at(5, 0), ScheduledSince: at(10, 0), ScheduledBefore: at(21, 0)},
				[]string{"late-tt", "sched-both", "sched-tt"}},
			{"another account's project", store.PostFilter{ProjectID: b.Project.ID}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.ListPosts(ctx, a.Account.ID, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				if titles := postTitles(got); !slices.Equal(titles, tc.want) {
					t.Errorf("got %v, want %v", titles, tc.want)
				}
			})
		}

		// Paging one by one with a filter walks the same posts as one page does.
		var walked []string
		f := store.PostFilter{Platform: "tiktok", Limit: 2}
		for range 5 {
			page, err := s.ListPosts(ctx, a.Account.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			page, next := store.Page(page, 1, func(p store.Post) (time.Time, string) { return p.CreatedAt, p.ID })
			walked = append(walked, postTitles(page)...)
			if next == nil {
				break
			}
			tm, id, ok := store.DecodeCursor(*next)
			if !ok {
				t.Fatalf("cursor %q", *next)
			}
			f.AfterTime, f.AfterID = &tm, id
		}
		if want := []string{"late-tt", "sched-both", "sched-tt"}; !slices.Equal(walked, want) {
			t.Errorf("paged: %v, want %v", walked, want)
		}
	})
}

func postTitles(posts []store.Post) []string {
	var out []string
	for _, p := range posts {
		out = append(out, p.Title)
	}
	return out
}

// TestListQueriesUseIndexes reads the engines' plans of the filtered listings: each table is
// reached through an index, starting from the account's rows, whatever the filters.
func TestListQueriesUseIndexes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a := newAccount(t, s, "a")
		since, before := time.Now().Add(-time.Hour), time.Now()
		plans := map[string]func() (string, error){}
		for name, f := range map[string]store.PostFilter{
			"posts":                   {Limit: 26},
			"posts by platform":       {Platform: "tiktok", Limit: 26},
			"posts created between":   {CreatedSince: &since, CreatedBefore: &before, Limit: 26},
			"posts scheduled between": {ScheduledSince: &since, ScheduledBefore: &before, Limit: 26},
			"posts, every filter": {ProjectID: a.Project.ID, Status: store.PostScheduled, Platform: "tiktok",
				ScheduledSince: &since, ScheduledBefore: &before, AfterTime: &before, AfterID: a.Project.ID, Limit: 26},
		} {
			plans[name] = func() (string, error) { return s.PostListPlan(ctx, a.Account.ID, f) }
		}
		for name, f := range map[string]store.CommentFilter{
			"comments":                           {Limit: 26},
			"comments unanswered":                {Unanswered: true, ProjectID: a.Project.ID, Limit: 26},
			"comments of a platform, unanswered": {Unanswered: true, Platform: "youtube", Limit: 26},
		} {
			plans[name] = func() (string, error) { return s.CommentListPlan(ctx, a.Account.ID, f) }
		}
		// SQLite: "SCAN t" reads a whole table (or a whole index: every account's rows).
		// PostgreSQL: "Seq Scan" reads a whole table though sequential scans are discouraged.
		fullScan := regexp.MustCompile(`(?m)^SCAN |Seq Scan`)
		for name, plan := range plans {
			got, err := plan()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if fullScan.MatchString(got) || !strings.Contains(got, "Index") && !strings.Contains(got, "INDEX") {
				t.Errorf("%s: the plan reads without an index:\n%s", name, got)
			}
			// The account's rows are found by an index that starts with the account.
			if !regexp.MustCompile(`(posts|comments)_account_idx|posts_scheduled_idx`).MatchString(got) {
				t.Errorf("%s: the plan does not start from the account's rows:\n%s", name, got)
			}
			// A comment's replies are looked up by their parent, not among all the channel's.
			if strings.Contains(name, "unanswered") && !strings.Contains(got, "comments_replies_idx") {
				t.Errorf("%s: the replies are not looked up by comments_replies_idx:\n%s", name, got)
			}
		}
	})
}
