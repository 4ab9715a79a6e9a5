package app

import (
	"net/netip"
	"testing"

	"github.com/reelay/reelay/internal/media"
)

// Hosts users name reach public addresses and this server's simulators, nothing else of the
// server's network, unless private URLs are allowed or the operator lists a network of theirs.
func TestUserHostPolicy(t *testing.T) {
	t.Parallel()
	lan, err := media.ParseAllowList("192.168.1.0/24")
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]media.AddressPolicy{}
	for name, guard := range map[string]media.AddressPolicy{
		"strict": media.Guard(false, nil), "open": media.Guard(true, nil), "lan": media.Guard(false, lan),
	} {
		if policies[name], err = userHostPolicy(guard, "http://127.0.0.1:8080"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		addr              string
		strict, open, lan bool
	}{
		{"127.0.0.1:8080", true, true, true},   // the simulators
		{"127.0.0.1:5432", false, true, false}, // the database next door
		{"[::ffff:127.0.0.1]:8080", true, true, true},
		{"10.0.0.7:443", false, true, false},
		{"192.168.1.20:443", false, true, true},
		{"192.168.2.20:443", false, true, false},
		{"169.254.169.254:80", false, true, false},
		{"93.184.215.14:443", true, true, true},
	} {
		ap := netip.MustParseAddrPort(tc.addr)
		for name, want := range map[string]bool{"strict": tc.strict, "open": tc.open, "lan": tc.lan} {
			if got := policies[name](ap) == nil; got != want {
				t.Errorf("%s policy, %s: allowed = %v, want %v", name, tc.addr, got, want)
			}
		}
	}
}
