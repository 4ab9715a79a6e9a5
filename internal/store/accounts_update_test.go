package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// accountDiff describes how got differs from want, field by field ("" when they are equal).
func accountDiff(got, want store.Account) string {
	limit := func(p *int) string {
		if p == nil {
			return "unlimited"
		}
		return fmt.Sprint(*p)
	}
	var d string
	if got.ID != want.ID {
		d += fmt.Sprintf(" id %s != %s;", got.ID, want.ID)
	}
	if got.Name != want.Name {
		d += fmt.Sprintf(" name %q != %q;", got.Name, want.Name)
	}
	if limit(got.MonthlyPostLimit) != limit(want.MonthlyPostLimit) {
		d += fmt.Sprintf(" monthly_post_limit %s != %s;", limit(got.MonthlyPostLimit), limit(want.MonthlyPostLimit))
	}
	if got.AICredits != want.AICredits {
		d += fmt.Sprintf(" ai_credits %d != %d;", got.AICredits, want.AICredits)
	}
	if got.Suspended != want.Suspended {
		d += fmt.Sprintf(" suspended %v != %v;", got.Suspended, want.Suspended)
	}
	if !got.CreatedAt.Equal(want.CreatedAt) {
		d += fmt.Sprintf(" created_at %v != %v;", got.CreatedAt, want.CreatedAt)
	}
	return d
}

func TestUpdateAccount(t *testing.T) {
	t.Parallel()
	str := func(v string) *string { return &v }
	i64 := func(v int64) *int64 { return &v }
	boolean := func(v bool) *bool { return &v }
	limit := func(v int) **int { p := &v; return &p }
	unlimited := func() **int { var p *int; return &p }
	intp := func(v int) *int { return &v }

	type step struct {
		update store.AccountUpdate
		apply  func(a *store.Account) // turns the previous expectation into this step's
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"name alone", []step{
			{store.AccountUpdate{Name: str("renamed")}, func(a *store.Account) { a.Name = "renamed" }},
		}},
		{"limit alone", []step{
			{store.AccountUpdate{MonthlyPostLimit: limit(25)}, func(a *store.Account) { a.MonthlyPostLimit = intp(25) }},
		}},
		{"limit zero", []step{
			{store.AccountUpdate{MonthlyPostLimit: limit(0)}, func(a *store.Account) { a.MonthlyPostLimit = intp(0) }},
		}},
		{"limit then unlimited", []step{
			{store.AccountUpdate{MonthlyPostLimit: limit(3)}, func(a *store.Account) { a.MonthlyPostLimit = intp(3) }},
			{store.AccountUpdate{MonthlyPostLimit: unlimited()}, func(a *store.Account) { a.MonthlyPostLimit = nil }},
			{store.AccountUpdate{MonthlyPostLimit: limit(7)}, func(a *store.Account) { a.MonthlyPostLimit = intp(7) }},
		}},
		{"credits alone", []step{
			{store.AccountUpdate{AICredits: i64(1 << 40)}, func(a *store.Account) { a.AICredits = 1 << 40 }},
			{store.AccountUpdate{AICredits: i64(0)}, func(a *store.Account) { a.AICredits = 0 }},
		}},
		{"suspend then unsuspend", []step{
			{store.AccountUpdate{Suspended: boolean(true)}, func(a *store.Account) { a.Suspended = true }},
			{store.AccountUpdate{Suspended: boolean(true)}, func(a *store.Account) {}},
			{store.AccountUpdate{Suspended: boolean(false)}, func(a *store.Account) { a.Suspended = false }},
		}},
		{"every field at once", []step{
			{store.AccountUpdate{Name: str("all"), MonthlyPostLimit: limit(1), AICredits: i64(9), Suspended: boolean(true)},
				func(a *store.Account) { a.Name, a.MonthlyPostLimit, a.AICredits, a.Suspended = "all", intp(1), 9, true }},
		}},
		{"no field", []step{
			{store.AccountUpdate{}, func(a *store.Account) {}},
		}},
	}

	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		create := func(t *testing.T, name string) store.Account {
			t.Helper()
			ca, err := s.CreateAccount(ctx, store.NewAccount{Name: name, MonthlyPostLimit: intp(10), AICredits: 5})
			if err != nil {
				t.Fatalf("create account: %v", err)
			}
			return ca.Account
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				want := create(t, "before")
				bystander := create(t, "bystander")
				for i, st := range tc.steps {
					st.apply(&want)
					got, err := s.UpdateAccount(ctx, want.ID, st.update)
					if err != nil {
						t.Fatalf("step %d: UpdateAccount: %v", i, err)
					}
					if d := accountDiff(got, want); d != "" {
						t.Errorf("step %d: UpdateAccount returned:%s", i, d)
					}
					read, err := s.GetAccount(ctx, want.ID)
					if err != nil {
						t.Fatalf("step %d: GetAccount: %v", i, err)
					}
					if d := accountDiff(read, want); d != "" {
						t.Errorf("step %d: GetAccount afterwards:%s", i, d)
					}
				}
				read, err := s.GetAccount(ctx, bystander.ID)
				if err != nil {
					t.Fatal(err)
				}
				if d := accountDiff(read, bystander); d != "" {
					t.Errorf("another account changed:%s", d)
				}
			})
		}

		t.Run("unknown or malformed id", func(t *testing.T) {
			for _, id := range []string{uuid.NewString(), "not-a-uuid", "", "6F1F7C1E-3A52-4F53-9A51-0D7F6F0E0B1"} {
				for _, u := range []store.AccountUpdate{{Suspended: boolean(true)}, {}} {
					if _, err := s.UpdateAccount(ctx, id, u); !errors.Is(err, store.ErrNotFound) {
						t.Errorf("UpdateAccount(%q, %+v) = %v, want ErrNotFound", id, u, err)
					}
				}
			}
		})
	})
}
