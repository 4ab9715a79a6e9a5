package media

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/reelay/reelay/internal/httpx"
)

// ConnectError is a failure to reach a host a user named (httpx.ConnectError): SafeTransport's
// and HideAddresses' connection errors name the host as the request did.
type ConnectError = httpx.ConnectError

// HideAddresses makes t's connection errors name hosts as its requests did, as SafeTransport's
// do, for a transport whose hosts are reelay's choice (the platforms' own API hosts) but whose
// errors reach users all the same: the resolver's address and reelay's own are no more theirs
// to learn there.
func HideAddresses(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = namedDial(dial)
}

// namedDial dials through dial and words its failures with address, the host and port the
// request named: a refusal of the address guard becomes its *BlockedError naming the host,
// anything else a *ConnectError (httpx.NamedDial).
func namedDial(dial func(ctx context.Context, network, address string) (net.Conn, error)) func(ctx context.Context, network, address string) (net.Conn, error) {
	return httpx.NamedDial(dial, guardRefusal)
}

// guardRefusal words a refusal of the address guard naming host, and returns nil for any
// other failure to connect.
func guardRefusal(err error, host string) error {
	if !errors.Is(err, ErrBlockedAddress) {
		return nil
	}
	var be *BlockedError
	if errors.As(err, &be) {
		return ForHost(be, host)
	}
	// Another policy's refusal: its own words, without the dialler's around them.
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr.Err
	}
	return err
}
