package httpapi

import (
	"fmt"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestClientAddress: the bucket of a client is its IPv4 address or its IPv6 /64, and
// X-Forwarded-For counts only when the connection comes from a trusted proxy, read from the
// right past the trusted proxies.
func TestClientAddress(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")}
	for _, c := range []struct {
		name, remote, forwarded string
		proxies                 []netip.Prefix
		want                    string
		limited                 bool
	}{
		{"IPv4", "198.51.100.4:1234", "", nil, "198.51.100.4", true},
		{"IPv4 mapped in IPv6", "[::ffff:198.51.100.4]:1234", "", nil, "198.51.100.4", true},
		{"IPv6 by its /64", "[2001:db8:1:2:aaaa::1]:1234", "", nil, "2001:db8:1:2::/64", true},
		{"another address of the same /64", "[2001:db8:1:2:ffff:1:2:3]:1", "", nil, "2001:db8:1:2::/64", true},
		{"another /64", "[2001:db8:1:3::1]:1", "", nil, "2001:db8:1:3::/64", true},
		{"X-Forwarded-For ignored without trusted proxies", "198.51.100.4:1", "203.0.113.1", nil, "198.51.100.4", true},
		{"X-Forwarded-For ignored from an untrusted peer", "198.51.100.4:1", "203.0.113.1", proxies, "198.51.100.4", true},
		{"the client a trusted proxy names", "10.1.2.3:1", "203.0.113.1", proxies, "203.0.113.1", true},
		{"a forged entry left of the real client is ignored", "10.1.2.3:1", "1.2.3.4, 203.0.113.1", proxies, "203.0.113.1", true},
		{"past a chain of trusted proxies", "10.1.2.3:1", "203.0.113.1, 192.0.2.7, 10.9.9.9", proxies, "203.0.113.1", true},
		{"an IPv6 client behind a proxy, by its /64", "10.1.2.3:1", "2001:db8:5:6::9", proxies, "2001:db8:5:6::/64", true},
		{"malformed entry: the last good address", "10.1.2.3:1", "203.0.113.1, junk", proxies, "10.1.2.3", true},
		{"a proxy without the header is the client", "10.1.2.3:1", "", proxies, "10.1.2.3", true},
		{"loopback is not limited", "127.0.0.1:1", "", nil, "127.0.0.1", false},
		{"IPv6 loopback is not limited", "[::1]:1", "", nil, "::1", false},
		{"nor is loopback named by a trusted proxy", "10.1.2.3:1", "127.0.0.1", proxies, "127.0.0.1", false},
		{"the client a local proxy names, when trusted", "127.0.0.1:1", "203.0.113.1", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "203.0.113.1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLimits(LimitsConfig{RPS: 1, Burst: 1, AddressRPS: 1, AddressBurst: 1, TrustedProxies: c.proxies})
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.remote
			if c.forwarded != "" {
				r.Header.Set("X-Forwarded-For", c.forwarded)
			}
			if got, limited := l.clientAddress(r); got != c.want || limited != c.limited {
				t.Errorf("client of %s (X-Forwarded-For %q): %q limited %v, want %q %v", c.remote, c.forwarded, got, limited, c.want, c.limited)
			}
		})
	}
}

// TestAddressBucketsBounded: a client rotating its address cannot grow the buckets kept past
// their bound; each address is still limited while its bucket is kept.
func TestAddressBucketsBounded(t *testing.T) {
	l := NewLimits(LimitsConfig{RPS: 1, Burst: 1, AddressRPS: 0.001, AddressBurst: 2})
	l.addresses.maxBuckets = 100
	for i := range 10_000 {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1", i>>16, i>>8&255, i&255)
		l.AllowAddress(httptest.NewRecorder(), r)
		if n := len(l.addresses.buckets); n > 100 {
			t.Fatalf("%d buckets kept after %d addresses; the bound is 100", n, i+1)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "192.0.2.1:1"
	got := []bool{}
	for range 3 {
		got = append(got, l.AllowAddress(httptest.NewRecorder(), r))
	}
	if !got[0] || !got[1] || got[2] {
		t.Errorf("one address, burst 2, after the churn: %v", got)
	}
}
