package media

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

var dottedQuad = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b`)

// resettingServer accepts connections, reads a request's head and resets the connection.
func resettingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
			}
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// SafeTransport's failures name the host as the URL gave it: never the address it resolved to,
// the resolver's, or reelay's own end of a connection; the causes stay reachable for
// errors.Is and timeouts. So do a transport's that HideAddresses changed (policy nil here).
func TestSafeTransportErrorsNameNoAddress(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
	closed.Close()
	resetPort := resettingServer(t)
	allowAll := func(netip.AddrPort) error { return nil }

	cases := []struct {
		name, url string
		policy    AddressPolicy
		want      string
		is        error
	}{
		{"guard refuses a name", "http://localhost:" + closedPort + "/", PublicOnly,
			"the host localhost resolves to a loopback address", ErrBlockedAddress},
		{"closed port", "http://localhost:" + closedPort + "/", allowAll,
			"could not connect to localhost:" + closedPort, syscall.ECONNREFUSED},
		{"no such host", "http://no-such-host.invalid/", allowAll,
			"the host no-such-host.invalid does not resolve", nil},
		{"reset after the request", "http://localhost:" + resetPort + "/", allowAll,
			"connection reset by peer", syscall.ECONNRESET},
		{"closed port, platform client", "http://localhost:" + closedPort + "/", nil,
			"could not connect to localhost:" + closedPort, syscall.ECONNREFUSED},
		{"no such host, platform client", "http://no-such-host.invalid/", nil,
			"the host no-such-host.invalid does not resolve", nil},
		{"reset after the request, platform client", "http://localhost:" + resetPort + "/", nil,
			"connection reset by peer", syscall.ECONNRESET},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var transport *http.Transport
			if c.policy != nil {
				transport = SafeTransport(c.policy)
			} else {
				transport = http.DefaultTransport.(*http.Transport).Clone()
				HideAddresses(transport)
			}
			client := &http.Client{Transport: transport}
			req, _ := http.NewRequestWithContext(context.Background(), "GET", c.url, nil)
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("no error")
			}
			msg := err.Error()
			t.Log(msg)
			if !strings.Contains(msg, c.want) {
				t.Errorf("%q does not say %q", msg, c.want)
			}
			if a := dottedQuad.FindString(msg); a != "" {
				t.Errorf("%q names the address %s", msg, a)
			}
			if strings.Contains(msg, "dial tcp") {
				t.Errorf("%q passes on the dialler's words", msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v) lost: %#v", c.is, err)
			}
		})
	}
}
