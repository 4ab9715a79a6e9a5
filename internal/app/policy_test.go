package app

import (
	"net/netip"
	"testing"

	"github.com/reelay/reelay/internal/config"
)

// Hosts users name reach public addresses and this server's simulators, nothing else of the
// server's network, unless private URLs are allowed.
func TestUserHostPolicy(t *testing.T) {
	t.Parallel()
	strict, err := userHostPolicy(&config.Config{}, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	open, err := userHostPolicy(&config.Config{AllowPrivateURLs: true}, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr         string
		strict, open bool
	}{
		{"127.0.0.1:8080", true, true},  // the simulators
		{"127.0.0.1:5432", false, true}, // the database next door
		{"[::ffff:127.0.0.1]:8080", true, true},
		{"10.0.0.7:443", false, true},
		{"169.254.169.254:80", false, true},
		{"93.184.215.14:443", true, true},
	} {
		ap := netip.MustParseAddrPort(tc.addr)
		if got := strict(ap) == nil; got != tc.strict {
			t.Errorf("strict policy, %s: allowed = %v, want %v", tc.addr, got, tc.strict)
		}
		if got := open(ap) == nil; got != tc.open {
			t.Errorf("open policy, %s: allowed = %v, want %v", tc.addr, got, tc.open)
		}
	}
}
