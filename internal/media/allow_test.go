package media

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{" nas.local , 192.168.1.0/24,,10.1.2.3 ", "nas.local,192.168.1.0/24,10.1.2.3/32", ""},
		{"N8N.lan.,fd00::/8,::1", "n8n.lan,fd00::/8,::1/128", ""},
		{"192.168.1.7/24", "192.168.1.0/24", ""},
		{"192.168.1.0/33", "", `"192.168.1.0/33" is not a CIDR`},
		{"http://nas.local", "", `"http://nas.local" is a URL`},
		{"nas_local", "", "is neither"},
		{"-nas", "", "is neither"},
	} {
		l, err := ParseAllowList(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err == "" && l.String() != c.want:
			t.Errorf("%q: %q, want %q", c.in, l.String(), c.want)
		}
	}
}

// The list opens its networks and the addresses its names resolve to, and nothing else of the
// private ranges; a refusal names the setting but not the address.
func TestAllowListPolicy(t *testing.T) {
	t.Parallel()
	l, err := ParseAllowList("nas.local,192.168.1.0/24,fd12::/16")
	if err != nil {
		t.Fatal(err)
	}
	lookups := 0
	l.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
		lookups++
		if host == "nas.local" {
			return []netip.Addr{netip.MustParseAddr("10.9.8.7")}, nil
		}
		return nil, errors.New("no such host")
	}
	guard := Guard(false, l)
	for _, c := range []struct {
		addr    string
		allowed bool
	}{
		{"93.184.215.14:443", true},    // public
		{"192.168.1.40:8080", true},    // the listed network
		{"192.168.2.40:8080", false},   // next door
		{"10.9.8.7:5678", true},        // what nas.local resolves to
		{"[::ffff:10.9.8.7]:80", true}, // the same, IPv4-mapped
		{"10.9.8.8:5678", false},       // not it
		{"[fd12::1]:443", true},        // the listed IPv6 network
		{"127.0.0.1:5432", false},      // loopback stays closed
		{"169.254.169.254:80", false},  // and the metadata service
	} {
		err := guard(netip.MustParseAddrPort(c.addr))
		if (err == nil) != c.allowed {
			t.Errorf("%s: %v, want allowed %v", c.addr, err, c.allowed)
		}
		if err != nil {
			ip := netip.MustParseAddrPort(c.addr).Addr().Unmap().String()
			if !errors.Is(err, ErrBlockedAddress) || !strings.Contains(err.Error(), "REELAY_ALLOW_HOSTS") || strings.Contains(err.Error(), ip) {
				t.Errorf("%s: refusal %q must be ErrBlockedAddress, name REELAY_ALLOW_HOSTS and not the address", c.addr, err)
			}
		}
	}
	if lookups != 1 {
		t.Errorf("names looked up %d times, want once within their TTL", lookups)
	}
	// Without the list, the same addresses are refused.
	if PublicOnly(netip.MustParseAddrPort("192.168.1.40:8080")) == nil || Guard(false, nil)(netip.MustParseAddrPort("10.9.8.7:1")) == nil {
		t.Error("private addresses allowed without a list")
	}
	if err := ForHost(PublicOnly(netip.MustParseAddrPort("10.0.0.1:80")), "nas.example"); !strings.Contains(err.Error(), "the host nas.example resolves to a private address") {
		t.Errorf("named refusal: %v", err)
	}
}
