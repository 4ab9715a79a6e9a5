package media_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
)

func TestPublicOnly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1", true},
		{"127.1.2.3", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"100.127.255.254", true},
		{"169.254.169.254", true}, // cloud metadata
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		{"240.0.0.1", true},
		{"::1", true},
		{"::", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"ff02::1", true},
		{"::ffff:127.0.0.1", true},       // IPv4-mapped loopback
		{"::ffff:169.254.169.254", true}, // IPv4-mapped metadata
		{"::ffff:10.0.0.1", true},
		{"::ffff:0:10.0.0.1", true}, // IPv4-translated
		{"::127.0.0.1", true},       // IPv4-compatible
		{"64:ff9b::7f00:1", true},   // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", true},
		{"2002:7f00:1::1", true}, // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", true},
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"100.63.255.255", false},
		{"172.32.0.1", false},
		{"2606:4700:4700::1111", false},
		{"::ffff:8.8.8.8", false},
		{"64:ff9b::808:808", false},
		{"2002:808:808::1", false},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			t.Parallel()
			err := media.PublicOnly(netip.AddrPortFrom(netip.MustParseAddr(c.addr), 443))
			if got := errors.Is(err, media.ErrBlockedAddress); got != c.blocked {
				t.Fatalf("blocked = %v (%v), want %v", got, err, c.blocked)
			}
		})
	}
}

// fileServer serves body at every path and counts the requests that reached it.
func fileServer(t *testing.T, body []byte, contentType string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("User-Agent") != "reelay-test" {
			http.Error(w, "bad agent "+r.Header.Get("User-Agent"), 400)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func port(t *testing.T, srv *httptest.Server) string {
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestFetch(t *testing.T) {
	t.Parallel()
	body := bytes.Repeat([]byte("reelay"), 10000)
	srv, _ := fileServer(t, body, "video/mp4; charset=binary")
	f := media.NewFetcher(media.FetcherConfig{AllowPrivate: true, UserAgent: "reelay-test"})
	var dst bytes.Buffer
	res, err := f.Fetch(context.Background(), srv.URL+"/v.mp4", &dst)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	if res.Size != int64(len(body)) || res.SHA256 != hex.EncodeToString(sum[:]) || res.ContentType != "video/mp4" || !bytes.Equal(dst.Bytes(), body) {
		t.Fatalf("got %+v", res)
	}
}

func TestFetchRefusesBlockedAddresses(t *testing.T) {
	t.Parallel()
	srv, hits := fileServer(t, []byte("secret"), "text/plain")
	p := port(t, srv)
	f := media.NewFetcher(media.FetcherConfig{UserAgent: "reelay-test"}) // AllowPrivate false
	for _, u := range []string{
		"http://127.0.0.1:" + p + "/",
		"http://[::1]:" + p + "/",
		"http://localhost:" + p + "/",
		"http://10.0.0.1/video.mp4",
		"http://192.168.0.10/video.mp4",
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:127.0.0.1]:" + p + "/",
		"http://[fe80::1%25eth0]/",
		"http://0.0.0.0:" + p + "/",
		"http://2130706433:" + p + "/", // 127.0.0.1 as a decimal number
	} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			_, err := f.Fetch(context.Background(), u, io.Discard)
			if !errors.Is(err, media.ErrBlockedAddress) && !errors.Is(err, media.ErrUpstream) {
				t.Fatalf("err = %v, want ErrBlockedAddress", err)
			}
			if errors.Is(err, media.ErrUpstream) {
				// Only acceptable when the name does not resolve at all (2130706433 on
				// resolvers that do not take numeric hosts): nothing was connected to.
				if !strings.Contains(err.Error(), "resolve") {
					t.Fatalf("err = %v", err)
				}
			}
			t.Log(err)
		})
	}
	t.Cleanup(func() {
		if n := hits.Load(); n != 0 {
			t.Errorf("the loopback server was reached %d times", n)
		}
	})
}

// allowOnly returns a policy that lets exactly one test server through and judges every
// other address as production does: all test servers are on loopback, so this is how a
// test shows a redirect to a blocked address being refused.
func allowOnly(t *testing.T, srv *httptest.Server) media.AddressPolicy {
	allowed := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
	return func(ap netip.AddrPort) error {
		if ap == allowed {
			return nil
		}
		return media.PublicOnly(ap)
	}
}

func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	internal, internalHits := fileServer(t, []byte("internal secret"), "text/plain")
	var hops atomic.Int64
	var public *httptest.Server
	public = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-internal":
			http.Redirect(w, r, internal.URL+"/x", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam", http.StatusMovedPermanently)
		case "/to-ftp":
			http.Redirect(w, r, "ftp://example.com/video.mp4", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-userinfo":
			http.Redirect(w, r, strings.Replace(public.URL, "http://", "http://user:pw@", 1)+"/ok", http.StatusFound)
		case "/loop":
			hops.Add(1)
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/chain":
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			if n < 5 {
				http.Redirect(w, r, fmt.Sprintf("/chain?n=%d", n+1), http.StatusFound)
				return
			}
			w.Write([]byte("arrived"))
		default:
			w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(public.Close)
	f := media.NewFetcher(media.FetcherConfig{Policy: allowOnly(t, public), UserAgent: "reelay-test"})

	cases := []struct {
		path string
		want error
	}{
		{"/ok", nil},
		{"/chain", nil}, // five redirects are followed
		{"/to-internal", media.ErrBlockedAddress},
		{"/to-metadata", media.ErrBlockedAddress},
		{"/to-ftp", media.ErrBadURL},
		{"/to-file", media.ErrBadURL},
		{"/to-userinfo", media.ErrBadURL},
		{"/loop", media.ErrUpstream},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			_, err := f.Fetch(context.Background(), public.URL+c.path, io.Discard)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if err != nil {
				t.Log(err)
			}
		})
	}
	t.Cleanup(func() {
		if n := internalHits.Load(); n != 0 {
			t.Errorf("redirect reached the internal server %d times", n)
		}
		if n := hops.Load(); n != 6 {
			t.Errorf("redirect loop followed %d hops, want 6 requests", n)
		}
	})
}

func TestFetchSizeLimit(t *testing.T) {
	t.Parallel()
	const limit = 64_000
	var bodyReads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("declared") == "1" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		} else if f, ok := w.(http.Flusher); ok {
			f.Flush() // chunked: the size is only found out while reading
		}
		chunk := make([]byte, 4096)
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			bodyReads.Add(int64(k))
			n -= k
		}
	}))
	t.Cleanup(srv.Close)
	f := media.NewFetcher(media.FetcherConfig{AllowPrivate: true, MaxBytes: limit})

	cases := []struct {
		name     string
		query    string
		tooLarge bool
	}{
		{"exactly the limit, chunked", fmt.Sprintf("n=%d", limit), false},
		{"exactly the limit, declared", fmt.Sprintf("n=%d&declared=1", limit), false},
		{"one byte over, chunked", fmt.Sprintf("n=%d", limit+1), true},
		{"far over, chunked", fmt.Sprintf("n=%d", 50*limit), true},
		{"declared over", fmt.Sprintf("n=%d&declared=1", 100*limit), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var dst countWriter
			res, err := f.Fetch(context.Background(), srv.URL+"/?"+c.query, &dst)
			if !c.tooLarge {
				if err != nil || res.Size != limit {
					t.Fatalf("%+v, %v", res, err)
				}
				return
			}
			var tl *media.TooLargeError
			if !errors.Is(err, media.ErrTooLarge) || !errors.As(err, &tl) || tl.Limit != limit {
				t.Fatalf("err = %v, want a TooLargeError", err)
			}
			if dst.n > limit {
				t.Errorf("%d bytes passed on, more than the limit", dst.n)
			}
			if !strings.Contains(err.Error(), "64 KB") {
				t.Errorf("error does not state the limit: %v", err)
			}
			t.Log(err)
		})
	}
	// A declared size over the limit is refused from the headers: at most what the server
	// pushed into socket buffers was sent, never the whole 6.4 MB.
	t.Cleanup(func() { t.Logf("server wrote %d bytes in all", bodyReads.Load()) })
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func TestFetchUpstreamErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/broken":
			http.Error(w, "boom", http.StatusBadGateway)
		case "/slow-headers":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		case "/slow-body":
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(srv.Close)
	f := media.NewFetcher(media.FetcherConfig{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	cases := []struct {
		path   string
		status int
		text   string
	}{
		{"/missing", 404, "404"},
		{"/broken", 502, "502"},
		{"/slow-headers", 0, "timed out"},
		{"/slow-body", 0, "timed out"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			_, err := f.Fetch(context.Background(), srv.URL+c.path, io.Discard)
			var ue *media.UpstreamError
			if !errors.Is(err, media.ErrUpstream) || !errors.As(err, &ue) || ue.StatusCode != c.status || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("err = %v, want upstream error %d %q", err, c.status, c.text)
			}
		})
	}
	t.Run("refused connection", func(t *testing.T) {
		t.Parallel()
		closed := httptest.NewServer(http.NotFoundHandler())
		u := closed.URL
		closed.Close()
		_, err := f.Fetch(context.Background(), u, io.Discard)
		if !errors.Is(err, media.ErrUpstream) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := f.Fetch(ctx, srv.URL+"/missing", io.Discard)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{"https://cdn.example.com/v.mp4?x=1", true},
		{"http://example.com", true},
		{"  https://example.com/a.mp4 ", true},
		{"ftp://example.com/v.mp4", false},
		{"file:///etc/passwd", false},
		{"gopher://example.com", false},
		{"javascript:alert(1)", false},
		{"https://user:pass@example.com/v.mp4", false},
		{"https://user@example.com/v.mp4", false},
		{"/relative/path.mp4", false},
		{"https://", false},
		{"http://[::1", false},
		{"https://example.com/" + strings.Repeat("a", 9000), false},
	} {
		_, err := media.ParseURL(c.url)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, media.ErrBadURL)) {
			t.Errorf("%.60q: %v", c.url, err)
		}
	}
}

// The size limits are stated in the contract's unit, MB of 10^6 bytes, in every message
// (docs/CONTRACT.md, Publishing).
func TestTooLargeMessages(t *testing.T) {
	cases := []struct {
		err  media.TooLargeError
		want string
	}{
		{media.TooLargeError{Limit: media.MaxVideoBytes}, "media file too large: more than the limit of 100 MB"},
		{media.TooLargeError{Limit: media.MaxVideoBytes, Size: 150_000_000}, "media file too large: 150 MB, the limit is 100 MB"},
		{media.TooLargeError{Limit: media.MaxImageBytes, Size: 12_345_678}, "media file too large: 12.3 MB, the limit is 10 MB"},
		{media.TooLargeError{Limit: media.MaxVideoBytes, Size: 100_000_001}, "media file too large: 100000001 bytes, the limit is 100000000 bytes"},
		{media.TooLargeError{Limit: 500_000}, "media file too large: more than the limit of 500 KB"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.err, got, c.want)
		}
	}
	if media.MaxVideoBytes != 100_000_000 || media.MaxImageBytes != 10_000_000 {
		t.Errorf("limits %d and %d bytes, want the seed's 100 MB and 10 MB", media.MaxVideoBytes, media.MaxImageBytes)
	}
}
