package cli

import (
	"strings"
	"testing"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestChannelsCheck: `reelay channels check ID` prints a line per check with its status, and
// a failed one with its fix and exit code 1; without an ID every channel of the project is
// checked.
func TestChannelsCheck(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			srv := newAPIServer(t, d)
			var tiktok, telegram client.Channel
			decodeJSON(t, srv.cli(t, "channels", "connect", "tiktok", "--sandbox", "--json").ok(t), &tiktok)

			r := srv.cli(t, "channels", "check", tiktok.ID).ok(t)
			for _, want := range []string{"tiktok", tiktok.ID, "token", "scopes", "api_version", "publish", "creator_info allows posting"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, r.stdout)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
				if f := strings.Fields(line); len(f) < 2 || f[1] != "ok" {
					t.Errorf("line %q is not ok", line)
				}
			}

			decodeJSON(t, srv.cli(t, "channels", "connect", "telegram", "--sandbox", "--sandbox-behavior", `{"fail":"auth"}`, "--json").ok(t), &telegram)
			r = srv.cli(t, "channels", "check")
			r.failed(t, exitError, "1 of 2 channels failed a check")
			for _, want := range []string{tiktok.ID, telegram.ID, "reauth_required", "failed", "fix: reconnect the channel"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("output of the project's check lacks %q:\n%s", want, r.stdout)
				}
			}
			var results []client.ChannelCheckResult
			decodeJSON(t, srv.cli(t, "channels", "check", telegram.ID, "--json"), &results)
			if len(results) != 1 || results[0].OK || len(results[0].Checks) == 0 || results[0].Checks[0].Status != "failed" {
				t.Errorf("--json: %+v", results)
			}
			srv.cli(t, "channels", "check", "00000000-0000-4000-8000-000000000000").failed(t, exitError, "not_found")
		})
	}
}
