package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/mcpserver"
)

// The agent-tool server (Model Context Protocol, streamable HTTP transport) at POST
// /api/v1/mcp. It is registered like every private endpoint, so the caller is authenticated
// and rate-limited before anything here runs, and a credential in the URL is refused.
//
// The tools (package mcpserver) are calls of the public Go client. Each tool call gets a client
// whose transport is loopback: it hands every API call to this server's own handler, in
// process, with the credential header of the MCP request that carried the call (the SDK gives
// tools that request's header). The tools therefore pass through exactly the checks the
// caller's own API requests pass (authentication again, rate limits, tenant isolation,
// validation), with no network hop and no privilege of their own: loopback adds nothing a
// request from outside could forge, and only carries requests the tools build, to the API.
//
// Sessions are stateless (a fresh protocol session per POST, nothing kept between requests),
// so any number of API processes can serve the endpoint behind a load balancer; answers are
// plain JSON rather than event streams, since no tool sends progress. One MCP server (its
// tools and schemas) serves every request.

// mcpHost is the host of the tools' in-process API client: not a network name, only a marker
// that loopback checks, so that the client cannot be pointed anywhere else.
const mcpHost = "reelay.in-process"

// mcpPath is where the endpoint is; loopback refuses to call it (no recursion).
const mcpPath = APIPrefix + "/mcp"

// newMCPHandler returns the SDK's streamable HTTP handler serving the tools.
func (s *Server) newMCPHandler() http.Handler {
	tools := mcpserver.NewPerCall(s.mcpClient, mcpserver.Options{Logger: s.log.With("component", "mcp")})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       s.log.With("component", "mcp"),
		// The SDK refuses requests to a loopback listener whose Host is not loopback, against
		// DNS rebinding of unauthenticated local servers. This endpoint takes a key in a
		// header, which a rebound page cannot supply, and reelay commonly listens on loopback
		// behind a reverse proxy that sends the public Host.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxJSONBody,
	})
}

// serveMCP is POST /api/v1/mcp: checks the body the way every JSON endpoint does (with the
// contract's error body), then lets the SDK speak the protocol.
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) error {
	if err := requireContentType(r, "application/json"); err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		return err
	}
	// The SDK decodes the message (and the tools their arguments) with encoding/json, which
	// takes a member given twice or text that is not UTF-8 without a word.
	if err := apierr.CheckJSON(body); err != nil {
		return err
	}
	// The tools' API calls are logged under this request's id (with a sequence number).
	r.Header = r.Header.Clone()
	r.Header.Set("X-Request-Id", requestIDFrom(r.Context()))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	s.mcpHandler.ServeHTTP(w, r)
	return nil
}

// mcpClient is the API client of one tool call: it acts as the caller of the MCP request that
// carried the call, whose header the SDK hands over.
func (s *Server) mcpClient(_ context.Context, req *mcp.CallToolRequest) (*client.Client, error) {
	if req.Extra == nil || req.Extra.Header == nil {
		return nil, errors.New("the tool call came without its HTTP request")
	}
	h := req.Extra.Header
	lb := &loopback{handler: s.handler, requestID: h.Get("X-Request-Id"), credential: http.Header{}}
	for _, name := range []string{"X-API-Key", "Authorization"} {
		if v := h.Values(name); len(v) > 0 {
			lb.credential[http.CanonicalHeaderKey(name)] = v
		}
	}
	return client.New("http://"+mcpHost, "",
		client.WithHTTPClient(&http.Client{Transport: lb}),
		client.WithUserAgent("reelay-mcp"),
		// There is no network to be flaky; a 429 or 503 is the tool's answer, not something to
		// wait out inside one tool call.
		client.WithRetries(0))
}

// loopback is the HTTP transport of the tools' API client: each request goes to this server's
// own handler, as the MCP request's caller.
type loopback struct {
	handler http.Handler
	// credential is the caller's authentication header(s), set on every request in place of
	// whatever the client put there (it puts none: it has no key).
	credential http.Header
	// requestID is the MCP request's id; each API call gets it with a sequence number, so the
	// access log ties the calls to the MCP request.
	requestID string
	calls     atomic.Int64
}

// errLoopbackRefused: the tools' client asked for something outside the API.
var errLoopbackRefused = errors.New("in-process API client: only this server's API is reachable")

func (l *loopback) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	p := req.URL.Path
	if req.URL.Host != mcpHost || !strings.HasPrefix(p, APIPrefix+"/") || p == mcpPath || strings.HasPrefix(p, mcpPath+"/") {
		return nil, fmt.Errorf("%w: %s %s", errLoopbackRefused, req.Method, p)
	}
	in := req.Clone(req.Context())
	in.RequestURI = req.URL.RequestURI()
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.Header.Del("X-API-Key")
	in.Header.Del("Authorization")
	for k, v := range l.credential {
		in.Header[k] = v
	}
	n := l.calls.Add(1)
	if l.requestID != "" {
		in.Header.Set("X-Request-Id", l.requestID+"."+strconv.FormatInt(n, 10))
	}
	rec := &recorder{header: http.Header{}}
	l.handler.ServeHTTP(rec, in)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status:        strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(&rec.body),
		ContentLength: int64(rec.body.Len()),
		Request:       req,
	}, nil
}

// recorder keeps an API answer for loopback. The answers the tools read are JSON documents
// of bounded size (no media pass through: video_path and thumbnail_path are refused over HTTP).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
