package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func newCreditAccount(t *testing.T, s *store.Store, credits int64) string {
	t.Helper()
	ca, err := s.CreateAccount(context.Background(), store.NewAccount{Name: "credits", AICredits: credits})
	if err != nil {
		t.Fatalf("create account: %v", err)
	}
	return ca.Account.ID
}

// ledger reads an account's whole ledger, oldest first.
func ledger(t *testing.T, s *store.Store, accountID string) []store.LedgerEntry {
	t.Helper()
	es, err := s.CreditLedger(context.Background(), accountID, store.LedgerFilter{})
	if err != nil {
		t.Fatalf("CreditLedger: %v", err)
	}
	slices.Reverse(es)
	return es
}

func balance(t *testing.T, s *store.Store, accountID string) int64 {
	t.Helper()
	a, err := s.GetAccount(context.Background(), accountID)
	if err != nil {
		t.Fatalf("GetAccount: %v", err)
	}
	return a.AICredits
}

// checkLedger checks that an account's ledger replays to its balance: each row's balance_after
// is the previous one plus its delta, the last is the balance, no balance is negative, every
// reservation has one reserve row of its amount and at most one closing row.
func checkLedger(t *testing.T, s *store.Store, accountID string) []store.LedgerEntry {
	t.Helper()
	es := ledger(t, s, accountID)
	var running int64
	reserves, closes := map[string]int{}, map[string]int{}
	for i, e := range es {
		running += e.Delta
		if e.BalanceAfter != running {
			t.Errorf("ledger row %d (%s %+d): balance_after %d, the deltas so far sum to %d", i, e.Kind, e.Delta, e.BalanceAfter, running)
		}
		if e.BalanceAfter < 0 {
			t.Errorf("ledger row %d: balance_after %d is negative", i, e.BalanceAfter)
		}
		if e.AccountID != accountID {
			t.Errorf("ledger row %d belongs to %s", i, e.AccountID)
		}
		if i > 0 && e.ID <= es[i-1].ID {
			t.Errorf("ledger ids out of order: %d after %d", e.ID, es[i-1].ID)
		}
		switch e.Kind {
		case store.CreditReserve:
			reserves[e.ReservationID]++
			if e.Delta >= 0 {
				t.Errorf("reserve row %d has delta %d", i, e.Delta)
			}
		case store.CreditSettle, store.CreditRefund:
			closes[e.ReservationID]++
			if e.Kind == store.CreditSettle && e.Delta != 0 || e.Kind == store.CreditRefund && e.Delta <= 0 {
				t.Errorf("%s row %d has delta %d", e.Kind, i, e.Delta)
			}
		case store.CreditGrant, store.CreditAdjust:
			if e.ReservationID != "" {
				t.Errorf("%s row %d names reservation %s", e.Kind, i, e.ReservationID)
			}
		default:
			t.Errorf("ledger row %d: unknown kind %q", i, e.Kind)
		}
	}
	for id, n := range reserves {
		if n != 1 {
			t.Errorf("reservation %s has %d reserve rows", id, n)
		}
		if closes[id] > 1 {
			t.Errorf("reservation %s was closed %d times", id, closes[id])
		}
	}
	for id := range closes {
		if reserves[id] == 0 {
			t.Errorf("reservation %s closed without a reserve row", id)
		}
	}
	if b := balance(t, s, accountID); b != running {
		t.Errorf("balance %d, the ledger sums to %d", b, running)
	}
	return es
}

func kinds(es []store.LedgerEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%s%+d", e.Kind, e.Delta)
	}
	return out
}

func TestCreditsRoundTrip(t *testing.T) {
	t.Parallel()
	// Each step acts on the reservation opened by the latest reserve.
	type step struct {
		op          string // reserve, settle, refund
		amount      int64
		wantBalance int64
		wantStatus  string
	}
	tests := []struct {
		name      string
		start     int64
		steps     []step
		wantKinds []string
	}{
		{"reserve then settle", 10, []step{
			{"reserve", 3, 7, store.ReservationHeld},
			{"settle", 0, 7, store.ReservationSettled},
		}, []string{"grant+10", "reserve-3", "settle+0"}},
		{"reserve then refund", 10, []step{
			{"reserve", 4, 6, store.ReservationHeld},
			{"refund", 0, 10, store.ReservationRefunded},
		}, []string{"grant+10", "reserve-4", "refund+4"}},
		{"the whole balance, refunded and spent again", 5, []step{
			{"reserve", 5, 0, store.ReservationHeld},
			{"refund", 0, 5, store.ReservationRefunded},
			{"reserve", 5, 0, store.ReservationHeld},
			{"settle", 0, 0, store.ReservationSettled},
		}, []string{"grant+5", "reserve-5", "refund+5", "reserve-5", "settle+0"}},
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				account := newCreditAccount(t, s, tc.start)
				bystander := newCreditAccount(t, s, 100)
				var r store.Reservation
				var err error
				for i, st := range tc.steps {
					switch st.op {
					case "reserve":
						r, err = s.ReserveCredits(ctx, account, st.amount, "generate-video")
					case "settle":
						r, err = s.SettleCredits(ctx, r.ID)
					case "refund":
						r, err = s.RefundCredits(ctx, r.ID, "provider failed")
					}
					if err != nil {
						t.Fatalf("step %d (%s): %v", i, st.op, err)
					}
					if r.Status != st.wantStatus || r.Balance != st.wantBalance || r.AccountID != account {
						t.Errorf("step %d (%s): reservation %+v, want status %s, balance %d", i, st.op, r, st.wantStatus, st.wantBalance)
					}
					if (r.ClosedAt != nil) != (st.wantStatus != store.ReservationHeld) {
						t.Errorf("step %d (%s): closed_at %v with status %s", i, st.op, r.ClosedAt, r.Status)
					}
					if b := balance(t, s, account); b != st.wantBalance {
						t.Errorf("step %d (%s): balance %d, want %d", i, st.op, b, st.wantBalance)
					}
					got, err := s.GetReservation(ctx, r.ID)
					if err != nil || got.Status != st.wantStatus || got.Purpose != "generate-video" {
						t.Errorf("step %d: GetReservation = %+v, %v", i, got, err)
					}
				}
				es := checkLedger(t, s, account)
				if got := kinds(es); !slices.Equal(got, tc.wantKinds) {
					t.Errorf("ledger %v, want %v", got, tc.wantKinds)
				}
				if last := es[len(es)-1]; last.Kind == store.CreditRefund && last.Reason != "provider failed" {
					t.Errorf("refund reason %q", last.Reason)
				}
				if b := balance(t, s, bystander); b != 100 {
					t.Errorf("another account's balance moved to %d", b)
				}
			})
		}
	})
}

func TestReserveCreditsRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		account := newCreditAccount(t, s, 5)
		empty := newCreditAccount(t, s, 0)
		tests := []struct {
			name       string
			account    string
			amount     int64
			want       error // nil: any error
			wantShort  *store.InsufficientCreditsError
			wantLedger int // rows the account's ledger still has
		}{
			{"one more than the balance", account, 6, store.ErrInsufficientCredits, &store.InsufficientCreditsError{Balance: 5, Needed: 6}, 1},
			{"far more", account, math.MaxInt64, store.ErrInsufficientCredits, &store.InsufficientCreditsError{Balance: 5, Needed: math.MaxInt64}, 1},
			{"an empty account", empty, 1, store.ErrInsufficientCredits, &store.InsufficientCreditsError{Balance: 0, Needed: 1}, 0},
			{"zero", account, 0, nil, nil, 1},
			{"negative", account, -3, nil, nil, 1},
			{"unknown account", uuid.NewString(), 1, store.ErrNotFound, nil, 0},
			{"malformed account", "nope", 1, store.ErrNotFound, nil, 0},
		}
		for _, tc := range tests {
			r, err := s.ReserveCredits(ctx, tc.account, tc.amount, "x")
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("%s: ReserveCredits = %+v, %v; want %v", tc.name, r, err, tc.want)
				continue
			}
			if tc.wantShort != nil {
				var short *store.InsufficientCreditsError
				if !errors.As(err, &short) || *short != *tc.wantShort {
					t.Errorf("%s: error %v, want %+v", tc.name, err, tc.wantShort)
				}
			}
			if tc.account == account || tc.account == empty {
				if n := len(checkLedger(t, s, tc.account)); n != tc.wantLedger {
					t.Errorf("%s: ledger has %d rows, want %d", tc.name, n, tc.wantLedger)
				}
			}
		}
		if b := balance(t, s, account); b != 5 {
			t.Errorf("balance %d after refusals, want 5", b)
		}
	})
}

func TestCloseReservationTwice(t *testing.T) {
	t.Parallel()
	settle := func(s *store.Store, id string) (store.Reservation, error) {
		return s.SettleCredits(context.Background(), id)
	}
	refund := func(s *store.Store, id string) (store.Reservation, error) {
		return s.RefundCredits(context.Background(), id, "failed")
	}
	tests := []struct {
		name          string
		first, second func(*store.Store, string) (store.Reservation, error)
		wantErr       error // of the second close; nil: none
		wantStatus    string
		wantBalance   int64
	}{
		{"settle twice", settle, settle, nil, store.ReservationSettled, 7},
		{"refund twice", refund, refund, nil, store.ReservationRefunded, 10},
		{"settle then refund", settle, refund, store.ErrReservationClosed, store.ReservationSettled, 7},
		{"refund then settle", refund, settle, store.ErrReservationClosed, store.ReservationRefunded, 10},
	}
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				account := newCreditAccount(t, s, 10)
				r, err := s.ReserveCredits(ctx, account, 3, "stitch")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tc.first(s, r.ID); err != nil {
					t.Fatalf("first close: %v", err)
				}
				before := ledger(t, s, account)
				got, err := tc.second(s, r.ID)
				if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("second close: %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr != nil && !errors.Is(err, store.ErrConflict) {
					t.Errorf("second close: %v is not an ErrConflict", err)
				}
				if err == nil && (got.Status != tc.wantStatus || got.Balance != tc.wantBalance) {
					t.Errorf("second close returned %+v, want status %s, balance %d", got, tc.wantStatus, tc.wantBalance)
				}
				if after := checkLedger(t, s, account); len(after) != len(before) {
					t.Errorf("the second close wrote to the ledger: %v, before %v", kinds(after), kinds(before))
				}
				if b := balance(t, s, account); b != tc.wantBalance {
					t.Errorf("balance %d, want %d", b, tc.wantBalance)
				}
				if rr, _ := s.GetReservation(ctx, r.ID); rr.Status != tc.wantStatus {
					t.Errorf("reservation is %s, want %s", rr.Status, tc.wantStatus)
				}
			})
		}
		t.Run("unknown reservation", func(t *testing.T) {
			for _, id := range []string{uuid.NewString(), "nope"} {
				if _, err := s.SettleCredits(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("SettleCredits(%q) = %v", id, err)
				}
				if _, err := s.RefundCredits(ctx, id, ""); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("RefundCredits(%q) = %v", id, err)
				}
				if _, err := s.GetReservation(ctx, id); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("GetReservation(%q) = %v", id, err)
				}
			}
		})
	})
}

// TestReserveCreditsConcurrently races more reservations than the balance covers: exactly as
// many succeed as there are credits, the rest are refused, and the ledger adds up.
func TestReserveCreditsConcurrently(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const credits, attempts = 10, 50
		account := newCreditAccount(t, s, credits)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var ok, short int
		var other []error
		for range attempts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.ReserveCredits(ctx, account, 1, "generate-video")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case errors.Is(err, store.ErrInsufficientCredits):
					short++
				default:
					other = append(other, err)
				}
			}()
		}
		wg.Wait()
		if ok != credits || short != attempts-credits || len(other) > 0 {
			t.Fatalf("%d reserved, %d refused, other errors %v; want %d and %d", ok, short, other, credits, attempts-credits)
		}
		if b := balance(t, s, account); b != 0 {
			t.Errorf("balance %d, want 0", b)
		}
		if es := checkLedger(t, s, account); len(es) != 1+credits {
			t.Errorf("ledger has %d rows, want %d", len(es), 1+credits)
		}
	})
}

// TestCloseReservationsConcurrently races, for every reservation, two settles against two
// refunds, while new reservations compete for the credits the refunds give back: each
// reservation is closed exactly once and the balance is what the winners say it must be.
func TestCloseReservationsConcurrently(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		const n, newcomers = 20, 30
		account := newCreditAccount(t, s, n)
		var ids []string
		for range n {
			r, err := s.ReserveCredits(ctx, account, 1, "storyboard")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var unexpected []error
		var reserved int64
		note := func(err error, allowed ...error) {
			if err == nil {
				return
			}
			for _, a := range allowed {
				if errors.Is(err, a) {
					return
				}
			}
			mu.Lock()
			unexpected = append(unexpected, err)
			mu.Unlock()
		}
		for _, id := range ids {
			for range 2 {
				wg.Add(2)
				go func() {
					defer wg.Done()
					_, err := s.SettleCredits(ctx, id)
					note(err, store.ErrReservationClosed)
				}()
				go func() {
					defer wg.Done()
					_, err := s.RefundCredits(ctx, id, "render failed")
					note(err, store.ErrReservationClosed)
				}()
			}
		}
		for range newcomers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.ReserveCredits(ctx, account, 1, "newcomer")
				if err == nil {
					mu.Lock()
					reserved++
					mu.Unlock()
				}
				note(err, store.ErrInsufficientCredits)
			}()
		}
		wg.Wait()
		if len(unexpected) > 0 {
			t.Fatalf("unexpected errors: %v", unexpected)
		}
		var refunded int64
		for _, id := range ids {
			r, err := s.GetReservation(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			switch r.Status {
			case store.ReservationRefunded:
				refunded++
			case store.ReservationSettled:
			default:
				t.Errorf("reservation %s is still %s", id, r.Status)
			}
		}
		if b := balance(t, s, account); b != refunded-reserved {
			t.Errorf("balance %d, want %d refunded - %d reserved again", b, refunded, reserved)
		}
		es := checkLedger(t, s, account)
		closes := 0
		for _, e := range es {
			if e.Kind == store.CreditSettle || e.Kind == store.CreditRefund {
				closes++
			}
		}
		if closes != n {
			t.Errorf("%d closing rows for %d reservations", closes, n)
		}
		t.Logf("%d refunded, %d settled, %d reserved again", refunded, n-refunded, reserved)
	})
}

func TestAddAndRemoveCredits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		account := newCreditAccount(t, s, 2)
		steps := []struct {
			name        string
			op          func() (store.LedgerEntry, error)
			wantErr     error // nil: success; errAny: any error
			wantBalance int64
		}{
			{"add", func() (store.LedgerEntry, error) { return s.AddCredits(ctx, account, 8, "top-up") }, nil, 10},
			{"remove", func() (store.LedgerEntry, error) { return s.RemoveCredits(ctx, account, 3, "goodwill reversed") }, nil, 7},
			{"remove more than there is", func() (store.LedgerEntry, error) { return s.RemoveCredits(ctx, account, 8, "") }, store.ErrInsufficientCredits, 7},
			{"remove all", func() (store.LedgerEntry, error) { return s.RemoveCredits(ctx, account, 7, "") }, nil, 0},
			{"add zero", func() (store.LedgerEntry, error) { return s.AddCredits(ctx, account, 0, "") }, errAny, 0},
			{"add negative", func() (store.LedgerEntry, error) { return s.AddCredits(ctx, account, -1, "") }, errAny, 0},
			{"remove negative", func() (store.LedgerEntry, error) { return s.RemoveCredits(ctx, account, -1, "") }, errAny, 0},
			{"add to an unknown account", func() (store.LedgerEntry, error) { return s.AddCredits(ctx, uuid.NewString(), 1, "") }, store.ErrNotFound, 0},
			{"add up to the largest balance", func() (store.LedgerEntry, error) { return s.AddCredits(ctx, account, math.MaxInt64, "") }, nil, math.MaxInt64},
			{"overflow", func() (store.LedgerEntry, error) { return s.AddCredits(ctx, account, 1, "") }, errAny, math.MaxInt64},
		}
		rows := 1
		for _, st := range steps {
			e, err := st.op()
			switch {
			case st.wantErr == nil && err != nil:
				t.Fatalf("%s: %v", st.name, err)
			case st.wantErr == errAny && err == nil, st.wantErr != nil && st.wantErr != errAny && !errors.Is(err, st.wantErr):
				t.Fatalf("%s: err %v, want %v", st.name, err, st.wantErr)
			case err == nil:
				rows++
				if e.BalanceAfter != st.wantBalance || e.ID == 0 || e.AccountID != account {
					t.Errorf("%s: entry %+v, want balance %d", st.name, e, st.wantBalance)
				}
			}
			if b := balance(t, s, account); b != st.wantBalance {
				t.Errorf("%s: balance %d, want %d", st.name, b, st.wantBalance)
			}
			if n := len(checkLedger(t, s, account)); n != rows {
				t.Errorf("%s: %d ledger rows, want %d", st.name, n, rows)
			}
		}
		want := []string{"grant+2", "grant+8", "adjust-3", "adjust-7", fmt.Sprintf("grant%+d", int64(math.MaxInt64))}
		if got := kinds(ledger(t, s, account)); !slices.Equal(got, want) {
			t.Errorf("ledger %v, want %v", got, want)
		}
		if es := ledger(t, s, account); es[1].Reason != "top-up" || es[2].Reason != "goodwill reversed" {
			t.Errorf("reasons %q, %q", es[1].Reason, es[2].Reason)
		}
	})
}

var errAny = errors.New("any error")

// TestAccountCreditsLedger checks that the two other writers of ai_credits, CreateAccount and
// UpdateAccount, record what they do.
func TestAccountCreditsLedger(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if es := ledger(t, s, newCreditAccount(t, s, 0)); len(es) != 0 {
			t.Errorf("an account created without credits has ledger %v", kinds(es))
		}
		account := newCreditAccount(t, s, 5)
		steps := []struct {
			credits   int64
			wantKinds []string
		}{
			{12, []string{"grant+5", "adjust+7"}},
			{12, []string{"grant+5", "adjust+7"}}, // no change, no row
			{0, []string{"grant+5", "adjust+7", "adjust-12"}},
			{3, []string{"grant+5", "adjust+7", "adjust-12", "adjust+3"}},
		}
		for i, st := range steps {
			if _, err := s.UpdateAccount(ctx, account, store.AccountUpdate{AICredits: i64(st.credits)}); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if got := kinds(checkLedger(t, s, account)); !slices.Equal(got, st.wantKinds) {
				t.Errorf("step %d: ledger %v, want %v", i, got, st.wantKinds)
			}
		}
		// Other fields leave the ledger alone; negative credits are refused by both writers.
		name := "renamed"
		if _, err := s.UpdateAccount(ctx, account, store.AccountUpdate{Name: &name}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateAccount(ctx, account, store.AccountUpdate{AICredits: i64(-1)}); err == nil {
			t.Error("UpdateAccount accepted -1 credits")
		}
		if _, err := s.CreateAccount(ctx, store.NewAccount{Name: "x", AICredits: -1}); err == nil {
			t.Error("CreateAccount accepted -1 credits")
		}
		if n := len(checkLedger(t, s, account)); n != 4 {
			t.Errorf("ledger has %d rows, want 4", n)
		}
		// A held reservation is outside the balance UpdateAccount sets; its refund adds to it.
		r, err := s.ReserveCredits(ctx, account, 2, "x")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateAccount(ctx, account, store.AccountUpdate{AICredits: i64(10)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RefundCredits(ctx, r.ID, ""); err != nil {
			t.Fatal(err)
		}
		if b := balance(t, s, account); b != 12 {
			t.Errorf("balance %d, want 12", b)
		}
		checkLedger(t, s, account)
	})
}

func TestCreditLedgerPaging(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		account := newCreditAccount(t, s, 1)
		other := newCreditAccount(t, s, 50)
		for i := range 6 {
			if _, err := s.AddCredits(ctx, account, int64(i+1), fmt.Sprint("grant ", i)); err != nil {
				t.Fatal(err)
			}
		}
		all := ledger(t, s, account)
		slices.Reverse(all) // newest first, as pages come
		var paged []store.LedgerEntry
		f := store.LedgerFilter{Limit: 3}
		for page := 0; ; page++ {
			es, err := s.CreditLedger(ctx, account, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) == 0 {
				break
			}
			if page > 3 {
				t.Fatal("paging does not end")
			}
			paged = append(paged, es...)
			f.BeforeID = es[len(es)-1].ID
		}
		if len(paged) != 7 || len(all) != 7 {
			t.Fatalf("%d rows paged, %d in all, want 7", len(paged), len(all))
		}
		for i := range all {
			if paged[i] != all[i] {
				t.Errorf("row %d: paged %+v, whole %+v", i, paged[i], all[i])
			}
		}
		if paged[0].Reason != "grant 5" || paged[0].BalanceAfter != 22 {
			t.Errorf("newest row %+v", paged[0])
		}
		if _, err := s.CreditLedger(ctx, "nope", store.LedgerFilter{}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("malformed account: %v", err)
		}
		if es := ledger(t, s, other); len(es) != 1 {
			t.Errorf("the other account's ledger: %v", kinds(es))
		}
	})
}

// TestCreditsMigrationBackfill checks that balances given before the ledger existed become
// its first rows.
func TestCreditsMigrationBackfill(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := storetest.URL(t, d)
			old, err := store.OpenMigratedTo(ctx, url, 6)
			if err != nil {
				t.Fatal(err)
			}
			rich, poor := uuid.NewString(), uuid.NewString()
			for _, a := range []struct {
				id      string
				credits int64
			}{{rich, 40}, {poor, 0}} {
				if _, err := old.WriteDB().ExecContext(ctx, `INSERT INTO accounts (id, name, ai_credits, suspended, created_at)
					VALUES ($1, 'old', $2, false, CURRENT_TIMESTAMP)`, a.id, a.credits); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()
			s, err := store.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			es := checkLedger(t, s, rich)
			if got := kinds(es); !slices.Equal(got, []string{"grant+40"}) {
				t.Fatalf("backfilled ledger %v", got)
			}
			if es[0].CreatedAt.IsZero() || es[0].Reason == "" {
				t.Errorf("backfilled row %+v", es[0])
			}
			if es := ledger(t, s, poor); len(es) != 0 {
				t.Errorf("an account without credits got %v", kinds(es))
			}
			// The ledger carries on from the backfilled row.
			r, err := s.ReserveCredits(ctx, rich, 15, "x")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.RefundCredits(ctx, r.ID, ""); err != nil {
				t.Fatal(err)
			}
			checkLedger(t, s, rich)
		})
	}
}

// TestCreditsInTx checks the transaction forms: a reservation made in a transaction that rolls
// back (say, because the job doing the work could not be enqueued) leaves nothing behind.
func TestCreditsInTx(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		account := newCreditAccount(t, s, 10)
		errEnqueue := errors.New("enqueue failed")
		var held store.Reservation
		err := s.InTx(ctx, func(tx *store.Tx) (err error) {
			if held, err = tx.ReserveCredits(ctx, account, 6, "generate-video"); err != nil {
				return err
			}
			return errEnqueue
		})
		if !errors.Is(err, errEnqueue) {
			t.Fatalf("InTx = %v", err)
		}
		if b := balance(t, s, account); b != 10 {
			t.Errorf("balance %d after a rolled-back reservation, want 10", b)
		}
		if _, err := s.GetReservation(ctx, held.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("rolled-back reservation: %v", err)
		}
		// A refusal inside a transaction leaves it usable: the work can still commit.
		err = s.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.ReserveCredits(ctx, account, 11, "too much"); !errors.Is(err, store.ErrInsufficientCredits) {
				return fmt.Errorf("reserve 11 of 10: %v", err)
			}
			r, err := tx.ReserveCredits(ctx, account, 4, "storyboard")
			if err != nil {
				return err
			}
			if r, err = tx.RefundCredits(ctx, r.ID, "render failed"); err != nil || r.Balance != 10 {
				return fmt.Errorf("refund: %+v %v", r, err)
			}
			if r, err = tx.ReserveCredits(ctx, account, 2, "adapt"); err != nil {
				return err
			}
			_, err = tx.SettleCredits(ctx, r.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"grant+10", "reserve-4", "refund+4", "reserve-2", "settle+0"}
		if got := kinds(checkLedger(t, s, account)); !slices.Equal(got, want) {
			t.Errorf("ledger %v, want %v", got, want)
		}
	})
}
