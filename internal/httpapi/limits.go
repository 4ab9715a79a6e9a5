package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
)

// Limits are the request rate limits that the API and the dashboard share:
//
//   - per credential (an API key, an OIDC subject), and per account beside it, so that an account
//     cannot multiply its rate by making more keys;
//   - per client address, for the work anyone may ask for without a credential (sign-in, OAuth
//     callbacks, the sandbox's consent pages and token endpoints, signed media links), and for
//     the requests whose credentials fail, counted apart: once an address has failed too
//     often it is refused before its credential is even looked up.
//
// The buckets of credentials and accounts are shared on PostgreSQL when RateBuckets is given.
// Those of addresses are always kept in each process: they stand against floods, and a shared
// bucket would turn every flooded request into a write to the shared database, and every new
// address into a row there. N API processes allow an address N times its limit, which is
// still a bound.
type Limits struct {
	credentials *rateLimiter
	accounts    *rateLimiter
	// addresses is nil when addresses are not limited.
	addresses *rateLimiter
	proxies   []netip.Prefix
}

// LimitsConfig configures Limits. A zero account rate or burst is the credential's; a zero
// address rate turns the limits per address off.
type LimitsConfig struct {
	RPS   float64
	Burst int

	AccountRPS   float64
	AccountBurst int

	AddressRPS   float64
	AddressBurst int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names the client; requests
	// from anywhere else are the address they come from.
	TrustedProxies []netip.Prefix

	// Shared holds the buckets of credentials and accounts that every API process on the
	// database shares; nil keeps them in this process.
	Shared RateBuckets
	Logger *slog.Logger
}

// maxAddressBuckets bounds the buckets of client addresses kept at once (a few hundred bytes
// each, some 20 MB in all): a client rotating addresses cannot grow memory past it.
const maxAddressBuckets = 1 << 16

// NewLimits builds the limits c describes.
func NewLimits(c LimitsConfig) *Limits {
	if c.AccountRPS <= 0 {
		c.AccountRPS = c.RPS
	}
	if c.AccountBurst <= 0 {
		c.AccountBurst = c.Burst
	}
	l := &Limits{
		credentials: newRateLimiter(c.RPS, c.Burst, c.Shared, c.Logger),
		accounts:    newRateLimiter(c.AccountRPS, c.AccountBurst, c.Shared, c.Logger),
		proxies:     c.TrustedProxies,
	}
	if c.AddressRPS > 0 {
		l.addresses = newRateLimiter(c.AddressRPS, max(1, c.AddressBurst), nil, c.Logger)
		l.addresses.maxBuckets = maxAddressBuckets
	}
	return l
}

// ErrRateLimited is the error a request over a limit is answered with (429, rate_limited).
func ErrRateLimited() error {
	return apierr.New(http.StatusTooManyRequests, apierr.CodeRateLimited,
		"rate limit exceeded; retry after the time in the Retry-After header")
}

// allowPrincipal takes a token of p's credential and one of its account, and sets the headers
// of the tighter bucket. A request its credential's bucket refuses takes nothing from the
// account's, so that one key over its limit does not eat into the others'.
func (l *Limits) allowPrincipal(ctx context.Context, w http.ResponseWriter, p principal) bool {
	v := l.credentials.take(ctx, p.Credential)
	if v.allowed {
		if av := l.accounts.take(ctx, "account:"+p.AccountID); !av.allowed || av.tokens < v.tokens {
			v = av
		}
	}
	v.setHeaders(w)
	return v.allowed
}

// AllowAccount takes a token of the account's bucket (the dashboard's requests, which have a
// session rather than a key) and sets the RateLimit-* headers; false means the request is over
// the limit and must be answered with ErrRateLimited.
func (l *Limits) AllowAccount(ctx context.Context, w http.ResponseWriter, accountID string) bool {
	v := l.accounts.take(ctx, "account:"+accountID)
	v.setHeaders(w)
	return v.allowed
}

// AllowAddress takes a token of the bucket of the request's client address (work done without
// a credential) and sets the RateLimit-* headers; false means the request is over the limit
// and must be answered with ErrRateLimited. Nil Limits limit nothing.
func (l *Limits) AllowAddress(w http.ResponseWriter, r *http.Request) bool {
	if l == nil || l.addresses == nil {
		return true
	}
	client, limited := l.clientAddress(r)
	if !limited {
		return true
	}
	v := l.addresses.take(r.Context(), "addr:"+client)
	v.setHeaders(w)
	return v.allowed
}

// failuresExhausted answers whether the request's address has failed its credentials too
// often lately, setting Retry-After when it has.
func (l *Limits) failuresExhausted(w http.ResponseWriter, r *http.Request) bool {
	if l.addresses == nil {
		return false
	}
	client, limited := l.clientAddress(r)
	if !limited {
		return false
	}
	v, exhausted := l.addresses.exhausted("fail:" + client)
	if exhausted {
		v.setHeaders(w)
	}
	return exhausted
}

// credentialFailed counts a failed credential against the request's address.
func (l *Limits) credentialFailed(r *http.Request) {
	if l.addresses == nil {
		return
	}
	if client, limited := l.clientAddress(r); limited {
		l.addresses.take(r.Context(), "fail:"+client)
	}
}

// limitAddress puts h behind the limit of the client's address.
func (s *Server) limitAddress(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.limits.AllowAddress(w, r) {
			writeError(w, r, ErrRateLimited())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// clientAddress is the bucket name of the request's client: its IPv4 address, or the /64 of its
// IPv6 address (one subscriber is commonly given a whole /64, and could otherwise take a
// fresh bucket with every request). Behind a trusted proxy it is the last address in
// X-Forwarded-For that is not a trusted proxy.
//
// A loopback client is not limited (limited is false): it is this host, the server's own
// requests (the sandbox's simulators pulling media links, exchanging codes) or a reverse proxy
// on it whose clients would otherwise share one bucket, and whose failures would lock every
// other client out. Naming the proxy in TrustedProxies limits its clients one by one.
func (l *Limits) clientAddress(r *http.Request) (client string, limited bool) {
	addr, ok := remoteAddr(r.RemoteAddr)
	if !ok {
		// Not an IP address (a Unix socket): every such client is one.
		return r.RemoteAddr, true
	}
	if l.trusted(addr) {
		addr = l.forwardedFor(r, addr)
	}
	if addr.IsLoopback() {
		return addr.String(), false
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String(), true
	}
	return addr.String(), true
}

func remoteAddr(s string) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	return netip.Addr{}, false
}

func (l *Limits) trusted(a netip.Addr) bool {
	for _, p := range l.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedFor walks X-Forwarded-For from the right, the end the trusted proxies appended to,
// past the trusted proxies, to the address that reached the first of them; what lies left of
// it was written by the client and proves nothing. A malformed entry stops the walk at the
// last address known.
func (l *Limits) forwardedFor(r *http.Request, proxy netip.Addr) netip.Addr {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := proxy
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !l.trusted(client) {
			break
		}
	}
	return client
}
