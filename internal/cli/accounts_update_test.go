package cli

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

func TestAccountsUpdate(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testAccountsUpdate(t, d)
		})
	}
}

func testAccountsUpdate(t *testing.T, d store.Dialect) {
	db := []string{"--database-url", storetest.URL(t, d)}
	cli := func(args ...string) (string, error) {
		t.Helper()
		return run(t, append(args, db...)...)
	}
	create := func(name string) string {
		t.Helper()
		out, err := cli("accounts", "create", "--name", name, "--monthly-post-limit", "5", "--ai-credits", "7", "--json")
		var created map[string]string
		if err != nil || json.Unmarshal([]byte(out), &created) != nil || created["account_id"] == "" {
			t.Fatalf("accounts create: %q %v", out, err)
		}
		return created["account_id"]
	}
	// list returns accounts list --json, by id.
	list := func() map[string]map[string]any {
		t.Helper()
		out, err := cli("accounts", "list", "--json")
		var rows []map[string]any
		if err != nil || json.Unmarshal([]byte(out), &rows) != nil {
			t.Fatalf("accounts list --json: %q %v", out, err)
		}
		byID := map[string]map[string]any{}
		for _, r := range rows {
			byID[r["id"].(string)] = r
		}
		return byID
	}
	account := create("acme")
	other := create("other")
	otherBefore := list()[other]

	// Limit, credits and suspension at once; --json prints the row accounts list --json prints.
	out, err := cli("accounts", "update", account, "--monthly-post-limit", "50", "--ai-credits", "1000", "--suspend", "--json")
	if err != nil {
		t.Fatalf("accounts update --json: %v", err)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(out), &row); err != nil {
		t.Fatalf("accounts update --json printed %q: %v", out, err)
	}
	listed := list()[account]
	if !reflect.DeepEqual(row, listed) {
		t.Errorf("update --json printed %v, accounts list --json shows %v", row, listed)
	}
	if listed["name"] != "acme" || listed["monthly_post_limit"] != float64(50) || listed["ai_credits"] != float64(1000) || listed["suspended"] != true {
		t.Errorf("after update: %v", listed)
	}

	// -1 is unlimited; the human summary is one line.
	out, err = cli("accounts", "update", account, "--monthly-post-limit", "-1")
	if err != nil {
		t.Fatalf("--monthly-post-limit -1: %v", err)
	}
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, account) || !strings.Contains(out, "unlimited") || !strings.Contains(out, "suspended") {
		t.Errorf("summary: %q", out)
	}
	if listed := list()[account]; listed["monthly_post_limit"] != nil || listed["ai_credits"] != float64(1000) || listed["suspended"] != true {
		t.Errorf("after -1: %v", listed)
	}

	// Unsuspend and rename; 0 is a limit, not unlimited.
	if out, err := cli("accounts", "update", account, "--unsuspend", "--name", "acme two", "--monthly-post-limit", "0"); err != nil ||
		!strings.Contains(out, "acme two") || !strings.Contains(out, "active") {
		t.Fatalf("--unsuspend --name: %q %v", out, err)
	}
	after := list()[account]
	if after["name"] != "acme two" || after["suspended"] != false || after["monthly_post_limit"] != float64(0) || after["ai_credits"] != float64(1000) {
		t.Errorf("after unsuspend: %v", after)
	}

	unknown := "6f1f7c1e-3a52-4f53-9a51-0d7f6f0e0b11"
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"nothing to update", []string{account}, "nothing to update"},
		{"only --json", []string{account, "--json"}, "nothing to update"},
		{"negative limit", []string{account, "--monthly-post-limit", "-2"}, "--monthly-post-limit"},
		{"negative credits", []string{account, "--ai-credits", "-1"}, "--ai-credits must not be negative"},
		{"suspend and unsuspend", []string{account, "--suspend", "--unsuspend"}, "--suspend and --unsuspend"},
		{"empty name", []string{account, "--name", ""}, "--name"},
		{"unknown account", []string{unknown, "--suspend"}, "account " + unknown + " not found"},
		{"malformed id", []string{"nope", "--ai-credits", "3"}, "account nope not found"},
		{"no id", []string{"--suspend"}, "arg"},
		{"two ids", []string{account, other, "--suspend"}, "arg"},
		{"limit not a number", []string{account, "--monthly-post-limit", "lots"}, "invalid argument"},
	} {
		out, err := cli(append([]string{"accounts", "update"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v (out %q), want an error containing %q", tc.name, err, out, tc.wantErr)
		}
	}
	// The refused commands changed nothing, and no command touched the other account.
	now := list()
	if !reflect.DeepEqual(now[account], after) {
		t.Errorf("a refused update changed the account: %v, was %v", now[account], after)
	}
	if !reflect.DeepEqual(now[other], otherBefore) {
		t.Errorf("the other account changed: %v, was %v", now[other], otherBefore)
	}

	// An unknown account is a non-zero exit.
	if code := Main(append([]string{"accounts", "update", unknown, "--suspend"}, db...)); code == 0 {
		t.Error("update of an unknown account exited 0")
	}
}
