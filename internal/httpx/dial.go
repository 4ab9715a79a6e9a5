package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// The errors of connecting to a host a user named end up in messages that user reads: an API
// answer, a webhook delivery's last_error, a destination's error. Go's own words for them
// name the address the host resolved to ("dial tcp 10.0.0.5:443: connect: connection
// refused"), the resolver's ("lookup x on 10.0.0.2:53"), and once connected, reelay's own
// address on its network ("read tcp 10.0.0.7:51234->..."). None of that is the user's to
// learn, so reelay's transports word their failures with the host as the request named it, and
// keep the cause behind Unwrap for errors.Is and timeouts.

// ConnectError is a failure to reach a host a user named: address is the host and port as
// the request named them, never what the host resolved to.
type ConnectError struct {
	Address string
	Err     error
}

func (e *ConnectError) Error() string {
	host, _, err := net.SplitHostPort(e.Address)
	if err != nil {
		host = e.Address
	}
	var dnsErr *net.DNSError
	var ne net.Error
	switch {
	case errors.As(e.Err, &dnsErr) && dnsErr.IsNotFound:
		return fmt.Sprintf("the host %s does not resolve", host)
	case errors.As(e.Err, &dnsErr):
		return fmt.Sprintf("the host %s could not be resolved", host)
	case errors.Is(e.Err, context.Canceled):
		return fmt.Sprintf("connecting to %s was cancelled", e.Address)
	case errors.Is(e.Err, context.DeadlineExceeded), errors.As(e.Err, &ne) && ne.Timeout():
		return fmt.Sprintf("timed out connecting to %s", e.Address)
	}
	return fmt.Sprintf("could not connect to %s", e.Address)
}

// Unwrap is the dialler's error, its addresses taken out (for errors.Is and timeouts).
func (e *ConnectError) Unwrap() error { return e.Err }

// Timeout reports whether connecting timed out, as net.Error does.
func (e *ConnectError) Timeout() bool {
	var ne net.Error
	return errors.Is(e.Err, context.DeadlineExceeded) || errors.As(e.Err, &ne) && ne.Timeout()
}

// HideAddresses makes t's connection errors name hosts as its requests did, for a transport
// whose hosts are reelay's choice (the platforms' own API hosts) but whose errors reach users
// all the same: the resolver's address and reelay's own are no more theirs to learn there.
func HideAddresses(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = NamedDial(dial, nil)
}

// NamedDial dials through dial and words its failures with address, the host and port the
// request named: refused, when not nil, words a failure of its own kind first (a refusal of an
// address guard, naming host) and returns nil for any other; anything else becomes a
// *ConnectError. A connection made is wrapped so that its read and write errors do not name
// addresses either.
func NamedDial(dial func(ctx context.Context, network, address string) (net.Conn, error), refused func(err error, host string) error) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dial(ctx, network, address)
		if err == nil {
			return &namedConn{Conn: conn}, nil
		}
		if refused != nil {
			host, _, splitErr := net.SplitHostPort(address)
			if splitErr != nil {
				host = address
			}
			if rerr := refused(err, host); rerr != nil {
				return nil, rerr
			}
		}
		return nil, &ConnectError{Address: address, Err: anonymous(err)}
	}
}

// anonymous is err with the addresses taken out when it is a *net.OpError or a *net.DNSError
// (which stay what they are, for errors.As and their Timeout).
func anonymous(err error) error {
	switch e := err.(type) {
	case *net.OpError:
		c := *e
		c.Source, c.Addr = nil, nil
		c.Err = anonymous(c.Err)
		return &c
	case *net.DNSError:
		c := *e
		c.Server = ""
		return &c
	}
	return err
}

// namedConn is a connection whose errors name no address ("read tcp: connection reset by
// peer" rather than "read tcp 10.0.0.7:51234->203.0.113.5:443: ...").
type namedConn struct{ net.Conn }

func (c *namedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	return n, connError(err)
}

func (c *namedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	return n, connError(err)
}

// ReadFrom keeps the connection's own ReadFrom (sendfile from a file, for uploads of stored
// videos over plain HTTP, such as to the simulators) behind the wrapper.
func (c *namedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(r)
		return n, connError(err)
	}
	n, err := io.Copy(writerOnly{c}, r)
	return n, err
}

// writerOnly hides ReadFrom, so that io.Copy does not call back into it.
type writerOnly struct{ io.Writer }

func connError(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return anonymous(err)
}
