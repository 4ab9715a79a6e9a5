package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func TestListCalendar(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		ca := newAccount(t, s, "a")
		other := newAccount(t, s, "b")
		soon := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Microsecond)
		later := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Microsecond)
		a := newPost(t, s, ca, store.NewPost{ContentHash: "1", ScheduledFor: &soon, Title: "Soon"})
		newPost(t, s, ca, store.NewPost{ContentHash: "2", ScheduledFor: &later, Title: "Later"})
		now := newPost(t, s, ca, store.NewPost{ContentHash: "3", Caption: "Right away"})
		newPost(t, s, other, store.NewPost{ContentHash: "4", ScheduledFor: &soon, Title: "Theirs"})

		from, to := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		got, err := s.ListCalendar(ctx, ca.Account.ID, "", from, to, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The unscheduled post sits at its creation, the scheduled one at its time; the later
		// post and the other account's are outside.
		if len(got) != 2 || got[0].ID != now.ID || got[0].Scheduled || got[0].Caption != "Right away" ||
			got[1].ID != a.ID || !got[1].Scheduled || !got[1].At.Equal(soon) || got[1].Status != store.PostScheduled {
			t.Fatalf("calendar: %+v", got)
		}
		if got, _ := s.ListCalendar(ctx, ca.Account.ID, other.Project.ID, from, to, 0); len(got) != 0 {
			t.Errorf("another account's project: %+v", got)
		}
		if got, _ := s.ListCalendar(ctx, ca.Account.ID, ca.Project.ID, from, to.Add(60*24*time.Hour), 2); len(got) != 2 {
			t.Errorf("limit: %d", len(got))
		}
	})
}
