package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Errors of the Fetcher. Returned errors wrap one of these (errors.Is) and say what was
// refused and why, in words an API client can act on.
var (
	// ErrBadURL: the URL is not an http(s) URL reelay may fetch (400).
	ErrBadURL = errors.New("invalid media URL")
	// ErrBlockedAddress: the URL's host resolves to an address reelay does not connect to
	// (loopback, private, link-local, ...), directly or through a redirect (400).
	ErrBlockedAddress = errors.New("media URL points to a blocked address")
	// ErrTooLarge: the file is larger than the limit (413). See *TooLargeError.
	ErrTooLarge = errors.New("media file too large")
	// ErrUpstream: the remote server failed, answered an error status, or timed out (400:
	// the URL the client gave does not serve a file). See *UpstreamError.
	ErrUpstream = errors.New("could not fetch media URL")
)

// TooLargeError reports a file over the size limit; errors.Is(err, ErrTooLarge) holds.
type TooLargeError struct {
	Limit int64
	// Size is the declared size (Content-Length) when that is how it was found out, or 0
	// when the limit was crossed while reading.
	Size int64
}

// Error states the limit, so that the API message tells the client what to aim for.
func (e *TooLargeError) Error() string {
	if e.Size > 0 {
		size, limit := FormatBytes(e.Size), FormatBytes(e.Limit)
		if size == limit { // just over: rounded, the two would read the same
			size, limit = fmt.Sprintf("%d bytes", e.Size), fmt.Sprintf("%d bytes", e.Limit)
		}
		return fmt.Sprintf("media file too large: %s, the limit is %s", size, limit)
	}
	return fmt.Sprintf("media file too large: more than the limit of %s", FormatBytes(e.Limit))
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// UpstreamError reports a failed fetch; errors.Is(err, ErrUpstream) holds.
type UpstreamError struct {
	// StatusCode is the HTTP status the server answered, or 0 when there was no answer
	// (connection refused, DNS failure, time-out).
	StatusCode int
	URL        string
	Err        error
}

// Error says what the remote server did, without the URL (which may carry tokens).
func (e *UpstreamError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("could not fetch media URL: the server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	return fmt.Sprintf("could not fetch media URL: %v", e.Err)
}

// Is makes errors.Is(err, ErrUpstream) true.
func (e *UpstreamError) Is(target error) bool { return target == ErrUpstream }

// Unwrap returns the cause.
func (e *UpstreamError) Unwrap() error { return e.Err }

// FormatBytes states n bytes as the limits are stated, in decimal units (1 MB = 10^6 bytes):
// "100 MB", "104.9 MB", "512 KB", "900 bytes".
func FormatBytes(n int64) string {
	switch {
	case n >= MB:
		return strconv.FormatFloat(math.Round(float64(n)/MB*10)/10, 'f', -1, 64) + " MB"
	case n >= 1000:
		return strconv.FormatFloat(math.Round(float64(n)/1000*10)/10, 'f', -1, 64) + " KB"
	}
	return fmt.Sprintf("%d bytes", n)
}

// AddressPolicy decides whether the fetcher may connect to an address. It sees the
// resolved IP and port of every connection, so DNS names, DNS rebinding and redirects
// cannot get around it. It returns nil to allow, or an error wrapping ErrBlockedAddress.
type AddressPolicy func(addr netip.AddrPort) error

// FetcherConfig configures a Fetcher.
type FetcherConfig struct {
	// AllowPrivate lifts the address policy: loopback and private addresses become
	// reachable (REELAY_ALLOW_PRIVATE_URLS, for tests and closed networks only).
	AllowPrivate bool
	// MaxBytes is the default size limit of Fetch; default MaxVideoBytes.
	MaxBytes int64
	// Timeout bounds a whole fetch, from connecting to the last byte; default 5 minutes.
	Timeout time.Duration
	// UserAgent is sent with every request; default "reelay-media-fetcher/1".
	UserAgent string
	// Policy replaces the address policy when set (tests use it to allow one loopback
	// server while refusing the rest). Nil means PublicOnly, or every address when
	// AllowPrivate is set.
	Policy AddressPolicy
}

// Fetcher downloads media from user-supplied URLs without letting those URLs reach
// reelay's own network: every connection's resolved address is checked by the dialer.
// It is safe for concurrent use.
type Fetcher struct {
	cfg    FetcherConfig
	client *http.Client
}

// maxRedirects is how many redirects a fetch follows; file hosts use one or two.
const maxRedirects = 5

// NewFetcher returns a Fetcher.
func NewFetcher(cfg FetcherConfig) *Fetcher {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = MaxVideoBytes
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "reelay-media-fetcher/1"
	}
	policy := cfg.Policy
	if policy == nil {
		if cfg.AllowPrivate {
			policy = func(netip.AddrPort) error { return nil }
		} else {
			policy = PublicOnly
		}
	}
	transport := SafeTransport(policy)
	// Media is already compressed; transparent gzip would only hide the real size from the
	// Content-Length check.
	transport.DisableCompression = true
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return &UpstreamError{URL: via[0].URL.Redacted(), Err: fmt.Errorf("more than %d redirects", maxRedirects)}
			}
			// The dialer checks where the redirect leads; the URL itself must still be
			// something reelay would accept from a client.
			return checkURL(req.URL)
		},
	}
	return &Fetcher{cfg: cfg, client: client}
}

// SafeTransport returns an HTTP transport that connects only to addresses policy allows,
// checked after DNS resolution for every connection (redirects included), so that a URL a
// user supplied (a video_url, a Mastodon instance, a Bluesky PDS) cannot reach the server's
// own network. Its errors name hosts as the URL did, never the addresses they resolved to
// (dialerr.go).
func SafeTransport(policy AddressPolicy) *http.Transport {
	dialer := &net.Dialer{
		Timeout:   15 * time.Second,
		KeepAlive: 30 * time.Second,
		// Control runs after DNS resolution, for each address tried, just before connect:
		// the one place where the address actually connected to is known.
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &BlockedError{Reason: "unreadable"}
			}
			if err := policy(ap); err != nil {
				if !errors.Is(err, ErrBlockedAddress) {
					err = fmt.Errorf("%w: %v", ErrBlockedAddress, err)
				}
				return err
			}
			return nil
		},
	}
	transport := &http.Transport{
		// No proxy: a proxy would make the dialer check the proxy's address instead of
		// the target's, and HTTP_PROXY in the environment must not change that.
		Proxy:                  nil,
		DialContext:            namedDial(dialer.DialContext),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    15 * time.Second,
		ResponseHeaderTimeout:  30 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return transport
}

// PublicOnly is the default AddressPolicy: it allows globally routable unicast addresses
// and refuses loopback, private (RFC 1918, IPv6 ULA), shared (CGNAT 100.64/10), link-local
// (including the 169.254.169.254 cloud metadata service), multicast, broadcast,
// unspecified, reserved and documentation ranges, and IPv6 forms that embed one of those
// IPv4 addresses (mapped, NAT64, 6to4).
func PublicOnly(ap netip.AddrPort) error {
	if reason := blockedReason(ap.Addr()); reason != "" {
		return &BlockedError{Reason: reason}
	}
	return nil
}

// BlockedError is an address the guard refused. It names the kind of address and the setting
// that opens a host of the operator's own network (AllowList), but not the address: what a
// name resolves to inside the network is not the client's to learn.
type BlockedError struct {
	// Host is the host name the connection was for, once known to the caller.
	Host string
	// Reason is the kind of address: private, loopback, link-local, ...
	Reason string
}

func (e *BlockedError) Error() string {
	host := "the host"
	if e.Host != "" {
		host += " " + e.Host
	}
	return fmt.Sprintf("%s resolves to a %s address, which reelay does not connect to: it reaches public addresses, and the hosts and networks of your own that the server's operator lists in REELAY_ALLOW_HOSTS",
		host, e.Reason)
}

// Is makes a BlockedError an ErrBlockedAddress.
func (e *BlockedError) Is(target error) bool { return target == ErrBlockedAddress }

// ForHost names host in err when err is a *BlockedError, and returns err unchanged otherwise.
func ForHost(err error, host string) error {
	var be *BlockedError
	if errors.As(err, &be) {
		named := *be
		named.Host = host
		return &named
	}
	return err
}

var blockedV4 = []struct {
	p      netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\""},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},
}

var blockedV6 = []struct {
	p      netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (private)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	// translated is the RFC 2765 IPv4-translated form ::ffff:0:a.b.c.d.
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// blockedReason says why addr is refused, or "" when it is allowed.
func blockedReason(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid"
	}
	addr = addr.WithZone("")
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	if addr.Is4() {
		for _, b := range blockedV4 {
			if b.p.Contains(addr) {
				return b.reason
			}
		}
		return ""
	}
	for _, b := range blockedV6 {
		if b.p.Contains(addr) {
			return b.reason
		}
	}
	// Forms that carry an IPv4 address inside an IPv6 one reach that IPv4 address: judge it.
	a := addr.As16()
	var embedded netip.Addr
	switch {
	case nat64.Contains(addr), translated.Contains(addr):
		embedded = netip.AddrFrom4([4]byte{a[12], a[13], a[14], a[15]})
	case sixToFour.Contains(addr):
		embedded = netip.AddrFrom4([4]byte{a[2], a[3], a[4], a[5]})
	}
	if embedded.IsValid() {
		if r := blockedReason(embedded); r != "" {
			return r + " (embedded in IPv6)"
		}
	}
	return ""
}

// checkURL refuses URLs reelay does not fetch, before any connection is made.
func checkURL(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: only http and https URLs are accepted, not %q", ErrBadURL, u.Scheme)
	case u.User != nil:
		return fmt.Errorf("%w: URLs with a user name or password are not accepted", ErrBadURL)
	case u.Hostname() == "":
		return fmt.Errorf("%w: the URL has no host", ErrBadURL)
	}
	return nil
}

// ParseURL parses and checks a media URL as Fetch would (scheme http or https, a host, no
// credentials), without fetching it: validation can refuse a bad URL before anything else
// happens.
func ParseURL(rawURL string) (*url.URL, error) {
	if len(rawURL) > 8192 {
		return nil, fmt.Errorf("%w: the URL is longer than 8192 characters", ErrBadURL)
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, errors.Unwrap(err))
	}
	if !u.IsAbs() {
		return nil, fmt.Errorf("%w: %q is not an absolute URL", ErrBadURL, rawURL)
	}
	if err := checkURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

// Response is an open download: a body that enforces the size limit as it is read.
type Response struct {
	// ContentType is the type the server declared (parameters dropped); informative only,
	// since reelay trusts the bytes, not the label.
	ContentType string
	// ContentLength is the declared size, or -1 when unknown.
	ContentLength int64
	url           string
	body          io.ReadCloser
	cancel        context.CancelFunc
}

// Read reads the body; past the limit it fails with a *TooLargeError, and a failure of the
// connection or the time limit is an *UpstreamError.
func (r *Response) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	switch {
	case err == nil, err == io.EOF, errors.Is(err, ErrTooLarge), errors.Is(err, context.Canceled):
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		err = &UpstreamError{URL: r.url, Err: errors.New("timed out while downloading")}
	default:
		err = &UpstreamError{URL: r.url, Err: fmt.Errorf("reading the response: %w", err)}
	}
	return n, err
}

// Close releases the connection.
func (r *Response) Close() error {
	err := r.body.Close()
	r.cancel()
	return err
}

// Open starts a download of rawURL and returns its body, limited to limit bytes (the
// fetcher's MaxBytes when limit <= 0). A declared Content-Length over the limit is refused
// before any byte of the body is read. The caller must Close the response.
func (f *Fetcher) Open(ctx context.Context, rawURL string, limit int64) (*Response, error) {
	if limit <= 0 {
		limit = f.cfg.MaxBytes
	}
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "video/*, image/*;q=0.9, */*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		cancel()
		return nil, fetchError(u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		cancel()
		return nil, &UpstreamError{StatusCode: resp.StatusCode, URL: u.Redacted()}
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		cancel()
		return nil, &TooLargeError{Limit: limit, Size: resp.ContentLength}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &Response{
		ContentType:   ct,
		ContentLength: resp.ContentLength,
		url:           u.Redacted(),
		body:          &capReadCloser{capReader: capReader{r: resp.Body, left: limit, limit: limit}, c: resp.Body},
		cancel:        cancel,
	}, nil
}

// fetchError turns a client error into one of the package's errors. For refusals it keeps
// the policy's own message (which says what was refused) without the method, URL and dial
// details that url.Error and net.OpError add around it.
func fetchError(u *url.URL, err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && errors.Is(opErr.Err, ErrBlockedAddress) {
		return ForHost(opErr.Err, u.Hostname())
	}
	var tooLarge *TooLargeError
	var upstream *UpstreamError
	var dnsErr *net.DNSError
	var connErr *ConnectError
	switch {
	case errors.Is(err, ErrBlockedAddress), errors.Is(err, ErrBadURL):
		return err
	case errors.As(err, &connErr) && !errors.Is(err, context.Canceled):
		return &UpstreamError{URL: u.Redacted(), Err: connErr}
	case errors.As(err, &tooLarge):
		return tooLarge
	case errors.As(err, &upstream):
		return upstream
	case errors.Is(err, context.Canceled):
		return err // the caller gave up; not the remote server's fault
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return &UpstreamError{URL: u.Redacted(), Err: errors.New("timed out")}
	case errors.As(err, &dnsErr):
		return &UpstreamError{URL: u.Redacted(), Err: fmt.Errorf("cannot resolve host %q", u.Hostname())}
	case errors.As(err, &opErr):
		return &UpstreamError{URL: u.Redacted(), Err: fmt.Errorf("cannot connect to %s: %v", u.Host, opErr.Err)}
	}
	return &UpstreamError{URL: u.Redacted(), Err: err}
}

// FetchResult describes a completed download.
type FetchResult struct {
	Size        int64
	ContentType string // as declared by the server
	SHA256      string // hex digest of the bytes written to dst
}

// Fetch downloads rawURL into dst, limited to the fetcher's MaxBytes.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, dst io.Writer) (FetchResult, error) {
	return f.FetchLimit(ctx, rawURL, f.cfg.MaxBytes, dst)
}

// FetchLimit is Fetch with a size limit of its own (thumbnails have a smaller one than
// videos). On error, dst may have received part of the file; the caller discards it.
func (f *Fetcher) FetchLimit(ctx context.Context, rawURL string, limit int64, dst io.Writer) (FetchResult, error) {
	resp, err := f.Open(ctx, rawURL, limit)
	if err != nil {
		return FetchResult{}, err
	}
	defer resp.Close()
	h := sha256.New()
	buf := make([]byte, 32<<10)
	n, err := io.CopyBuffer(io.MultiWriter(dst, h), resp, buf)
	if err != nil {
		return FetchResult{}, err
	}
	return FetchResult{Size: n, ContentType: resp.ContentType, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// capReader passes through at most limit bytes and fails with a *TooLargeError when the
// source has more, without passing on any byte past the limit. It reads one byte beyond
// the limit to tell "exactly the limit" from "more".
type capReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &TooLargeError{Limit: c.limit}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		n = int(c.left)
		c.left = -1
		return n, &TooLargeError{Limit: c.limit}
	}
	c.left -= int64(n)
	return n, err
}

type capReadCloser struct {
	capReader
	c io.Closer
}

func (c *capReadCloser) Close() error { return c.c.Close() }
