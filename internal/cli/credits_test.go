package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func TestAccountsCredits(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testAccountsCredits(t, d)
		})
	}
}

type ledgerJSON struct {
	ID            int64   `json:"id"`
	Kind          string  `json:"kind"`
	Delta         int64   `json:"delta"`
	BalanceAfter  int64   `json:"balance_after"`
	ReservationID *string `json:"reservation_id"`
	Reason        string  `json:"reason"`
}

func testAccountsCredits(t *testing.T, d store.Dialect) {
	url := storetest.URL(t, d)
	cli := func(args ...string) (string, error) {
		t.Helper()
		return run(t, append(args, "--database-url", url)...)
	}
	out, err := cli("accounts", "create", "--name", "acme", "--ai-credits", "7", "--json")
	var created map[string]string
	if err != nil || json.Unmarshal([]byte(out), &created) != nil {
		t.Fatalf("accounts create: %q %v", out, err)
	}
	account := created["account_id"]
	ledger := func(args ...string) []ledgerJSON {
		t.Helper()
		out, err := cli(append([]string{"accounts", "credits", "ledger", account, "--json"}, args...)...)
		var rows []ledgerJSON
		if err != nil || json.Unmarshal([]byte(out), &rows) != nil {
			t.Fatalf("accounts credits ledger --json: %q %v", out, err)
		}
		return rows
	}

	// add --json: the new balance and the ledger row, in the shape ledger --json prints.
	out, err = cli("accounts", "credits", "add", account, "5", "--reason", "spring promotion", "--json")
	var added struct {
		AccountID string     `json:"account_id"`
		AICredits int64      `json:"ai_credits"`
		Entry     ledgerJSON `json:"entry"`
	}
	if err != nil || json.Unmarshal([]byte(out), &added) != nil {
		t.Fatalf("credits add --json: %q %v", out, err)
	}
	if added.AccountID != account || added.AICredits != 12 || added.Entry.Kind != "grant" || added.Entry.Delta != 5 ||
		added.Entry.BalanceAfter != 12 || added.Entry.Reason != "spring promotion" || added.Entry.ReservationID != nil {
		t.Errorf("credits add --json: %+v", added)
	}
	if rows := ledger(); len(rows) != 2 || rows[0] != added.Entry {
		t.Errorf("ledger after add: %+v, want %+v first", rows, added.Entry)
	}

	// remove, human output: one line with the new balance.
	out, err = cli("accounts", "credits", "remove", account, "2", "--reason", "refund to card")
	if err != nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, "-2 AI credits, balance 10") {
		t.Errorf("credits remove: %q %v", out, err)
	}
	// accounts update --ai-credits is an adjustment in the ledger too.
	if _, err := cli("accounts", "update", account, "--ai-credits", "4"); err != nil {
		t.Fatal(err)
	}
	rows := ledger()
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, r.Kind)
	}
	if strings.Join(kinds, " ") != "adjust adjust grant grant" || rows[0].Delta != -6 || rows[0].BalanceAfter != 4 || rows[1].Reason != "refund to card" {
		t.Errorf("ledger: %+v", rows)
	}
	if rows := ledger("--limit", "1"); len(rows) != 1 || rows[0].BalanceAfter != 4 {
		t.Errorf("ledger --limit 1: %+v", rows)
	}
	out, err = cli("accounts", "credits", "ledger", account)
	if err != nil || !strings.Contains(out, "KIND") || !strings.Contains(out, "spring promotion") || strings.Count(out, "\n") != 5 {
		t.Errorf("ledger: %q %v", out, err)
	}

	unknown := "6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11"
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"remove more than there is", []string{"remove", account, "5"}, "has 4 AI credits; cannot remove 5"},
		{"zero", []string{"add", account, "0"}, "positive"},
		{"not a number", []string{"add", account, "lots"}, "positive"},
		{"negative", []string{"add", account, "-3"}, "unknown shorthand flag"},
		{"unknown account", []string{"add", unknown, "3"}, "account " + unknown + " not found"},
		{"malformed account", []string{"remove", "nope", "3"}, "account nope not found"},
		{"ledger of an unknown account", []string{"ledger", unknown}, "account " + unknown + " not found"},
		{"negative limit", []string{"ledger", account, "--limit", "-1"}, "--limit"},
		{"no amount", []string{"add", account}, "arg"},
	} {
		out, err := cli(append([]string{"accounts", "credits"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v (out %q), want an error containing %q", tc.name, err, out, tc.wantErr)
		}
	}
	if rows := ledger(); len(rows) != 4 || rows[0].BalanceAfter != 4 {
		t.Errorf("a refused command wrote to the ledger: %+v", rows)
	}

	// Against a database a server is using: grants from the command line interleave with
	// reservations the server makes, and the ledger still adds up.
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reserved int64
	var failures []error
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.ReserveCredits(context.Background(), account, 1, "generate-video")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				reserved++
			case !errors.Is(err, store.ErrInsufficientCredits):
				failures = append(failures, err)
			}
		}()
	}
	for range 5 {
		if _, err := cli("accounts", "credits", "add", account, "2"); err != nil {
			t.Errorf("credits add beside the server: %v", err)
		}
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("reservations failed: %v", failures)
	}
	a, err := st.GetAccount(context.Background(), account)
	if err != nil {
		t.Fatal(err)
	}
	if a.AICredits != 4+10-reserved {
		t.Errorf("balance %d, want 4 + 10 granted - %d reserved", a.AICredits, reserved)
	}
	all := ledger("--limit", "0")
	var sum int64
	for _, r := range all {
		sum += r.Delta
	}
	if sum != a.AICredits || all[0].BalanceAfter != a.AICredits || len(all) != 4+5+int(reserved) {
		t.Errorf("ledger of %d rows sums to %d, newest balance %d; account has %d", len(all), sum, all[0].BalanceAfter, a.AICredits)
	}
}
