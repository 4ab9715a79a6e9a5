package media

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// AllowList is the part of an operator's own network that the address guard lets through
// (REELAY_ALLOW_HOSTS): a webhook receiver on the LAN, media on a NAS, a self-hosted Mastodon
// or Bluesky PDS. It holds networks (CIDRs, or single addresses) and host names. A host name
// admits the addresses it resolves to, whatever name a URL reaches them by: the guard sees
// addresses, not names, and a URL that names another host resolving there reaches the same
// machine the operator chose to open.
type AllowList struct {
	nets  []netip.Prefix
	names []string
	// lookup resolves a name (net.DefaultResolver when nil; tests replace it).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)

	mu       sync.Mutex
	resolved map[netip.Addr]bool // what names resolved to at resolvedAt
	at       time.Time
}

// allowNamesTTL is how long the addresses of the list's names are kept before they are looked
// up again: a machine on a LAN may change address (DHCP), and a refusal should not outlast
// that by much.
const allowNamesTTL = 30 * time.Second

// ParseAllowList reads a comma-separated list of host names and CIDRs (a bare address counts
// as its own /32 or /128). Empty entries are skipped; a malformed one is an error naming it.
func ParseAllowList(s string) (*AllowList, error) {
	l := &AllowList{}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		switch {
		case entry == "":
		case strings.Contains(entry, "://"):
			return nil, fmt.Errorf("%q is a URL: give its host name, such as nas.local, or a CIDR", entry)
		case strings.Contains(entry, "/"):
			p, err := netip.ParsePrefix(entry)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR such as 192.168.1.0/24", entry)
			}
			l.nets = append(l.nets, p.Masked())
		default:
			if a, err := netip.ParseAddr(entry); err == nil {
				l.nets = append(l.nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				continue
			}
			if !validHostName(entry) {
				return nil, fmt.Errorf("%q is neither a host name nor a CIDR", entry)
			}
			l.names = append(l.names, strings.ToLower(strings.TrimSuffix(entry, ".")))
		}
	}
	return l, nil
}

// Empty reports whether the list lets nothing through.
func (l *AllowList) Empty() bool { return l == nil || len(l.nets) == 0 && len(l.names) == 0 }

// Policy is next, with the list's addresses let through as well: an address next refuses
// passes when it is in one of the list's networks or is what one of its names resolves to.
func (l *AllowList) Policy(next AddressPolicy) AddressPolicy {
	if l.Empty() {
		return next
	}
	return func(ap netip.AddrPort) error {
		err := next(ap)
		if err == nil || l.allows(ap.Addr().Unmap()) {
			return nil
		}
		return err
	}
}

func (l *AllowList) allows(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range l.nets {
		if p.Contains(a) {
			return true
		}
	}
	return len(l.names) > 0 && l.namesResolveTo(a)
}

// namesResolveTo reports whether one of the list's names resolves to a. The guard runs as a
// connection is made, so the lookups are bounded; a name that does not resolve admits nothing.
func (l *AllowList) namesResolveTo(a netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.resolved == nil || time.Since(l.at) > allowNamesTTL {
		lookup := l.lookup
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		l.resolved = map[netip.Addr]bool{}
		for _, name := range l.names {
			addrs, _ := lookup(ctx, name)
			for _, r := range addrs {
				l.resolved[r.Unmap().WithZone("")] = true
			}
		}
		l.at = time.Now()
	}
	return l.resolved[a]
}

// Guard is the address guard of every connection to a host a user named (a video_url, a
// webhook, a Mastodon instance, a Bluesky PDS): public addresses, and the operator's own
// hosts in allow; every address when allowPrivate is set (REELAY_ALLOW_PRIVATE_URLS, tests).
func Guard(allowPrivate bool, allow *AllowList) AddressPolicy {
	if allowPrivate {
		return func(netip.AddrPort) error { return nil }
	}
	return allow.Policy(PublicOnly)
}

// String lists the entries, names first.
func (l *AllowList) String() string {
	if l == nil {
		return ""
	}
	out := slices.Clone(l.names)
	for _, p := range l.nets {
		out = append(out, p.String())
	}
	return strings.Join(out, ",")
}

// validHostName: dot-separated labels of letters, digits and hyphens, not starting or ending
// with a hyphen (RFC 1123), such as nas.local or n8n.
func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
