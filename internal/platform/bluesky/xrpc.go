package bluesky

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/provider"
)

// XRPC method names (atproto lexicons com.atproto.* and app.bsky.*).
const (
	nsidCreateSession   = "com.atproto.server.createSession"
	nsidRefreshSession  = "com.atproto.server.refreshSession"
	nsidGetServiceAuth  = "com.atproto.server.getServiceAuth"
	nsidUploadBlob      = "com.atproto.repo.uploadBlob"
	nsidCreateRecord    = "com.atproto.repo.createRecord"
	nsidGetRecord       = "com.atproto.repo.getRecord"
	nsidGetProfile      = "app.bsky.actor.getProfile"
	nsidGetUploadLimits = "app.bsky.video.getUploadLimits"
	nsidUploadVideo     = "app.bsky.video.uploadVideo"
	nsidGetJobStatus    = "app.bsky.video.getJobStatus"
	nsidGetPosts        = "app.bsky.feed.getPosts"
	nsidGetPostThread   = "app.bsky.feed.getPostThread"
)

// xrpcError is an XRPC error answer: HTTP status plus the body {"error","message"}.
type xrpcError struct {
	Method     string
	Status     int
	Name       string
	Message    string
	RetryAfter time.Duration
	Body       []byte
}

func (e *xrpcError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Name != "" {
		return fmt.Sprintf("Bluesky %s: %s (%s, HTTP %d)", e.Method, msg, e.Name, e.Status)
	}
	return fmt.Sprintf("Bluesky %s: %s (HTTP %d)", e.Method, msg, e.Status)
}

// authFailure reports an answer that says the credentials or token are not (or no longer) good.
func (e *xrpcError) authFailure() bool {
	switch e.Name {
	case "ExpiredToken", "InvalidToken", "AuthenticationRequired", "AuthMissing",
		"AccountTakedown", "AccountDeactivated", "AccountSuspended":
		return true
	}
	return e.Status == http.StatusUnauthorized
}

func (e *xrpcError) rateLimited() bool {
	return e.Status == http.StatusTooManyRequests || e.Name == "RateLimitExceeded"
}

// classifyXRPC turns a failed call into a *provider.Error. otherCategory is what a 4xx that is
// neither auth nor rate limiting means for this call (the video refused, the record refused).
func classifyXRPC(err error, otherCategory string) *provider.Error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe
	}
	var xe *xrpcError
	if !errors.As(err, &xe) {
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Bluesky: %v", err)
	}
	msg := xe.Error()
	switch {
	case xe.rateLimited():
		ra := xe.RetryAfter
		if ra <= 0 {
			ra = time.Minute
		}
		return provider.Transient(provider.CategoryRateLimited, xe.Status, ra, "%s", msg)
	case xe.authFailure():
		return provider.Permanent(provider.CategoryAuthExpired, xe.Status, "%s", msg)
	case xe.Status >= 500 || xe.Status == http.StatusRequestTimeout:
		return provider.Transient(provider.CategoryUpstreamUnavailable, xe.Status, xe.RetryAfter, "%s", msg)
	case xe.Status == http.StatusRequestEntityTooLarge:
		return provider.Permanent(provider.CategoryMediaRejected, xe.Status, "%s", msg)
	}
	return provider.Permanent(otherCategory, xe.Status, "%s", msg)
}

// request is one XRPC call.
type request struct {
	method string // GET or POST
	base   string // service root, without /xrpc
	nsid   string
	query  url.Values
	bearer string
	// json is a JSON input; open, contentType and size a raw one (a video), opened anew for
	// each attempt.
	json        any
	open        func() (io.ReadCloser, error)
	contentType string
	size        int64
	// timeout overrides the API timeout (0); uploads pass -1 for none (the context bounds them).
	timeout time.Duration
}

// do performs an XRPC call and decodes a 2xx JSON answer into out. Any other answer is an
// *xrpcError; a transport failure is returned as it is.
func (p *Provider) do(ctx context.Context, r request, out any) error {
	u := strings.TrimRight(r.base, "/") + "/xrpc/" + r.nsid
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader = http.NoBody
	ctype := r.contentType
	if r.json != nil {
		b, err := json.Marshal(r.json)
		if err != nil {
			return err
		}
		body, ctype = bytes.NewReader(b), "application/json"
	} else if r.open != nil {
		rc, err := r.open()
		if err != nil {
			return fmt.Errorf("opening the video: %w", err)
		}
		body = rc // the client closes it
	}
	timeout := p.cfg.APITimeout
	if r.timeout != 0 {
		timeout = r.timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		if c, ok := body.(io.Closer); ok {
			c.Close()
		}
		return err
	}
	if r.open != nil {
		req.ContentLength = r.size
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if r.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+r.bearer)
	}
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		xe := &xrpcError{Method: r.nsid, Status: resp.StatusCode, Body: raw, RetryAfter: retryAfter(resp.Header, p.cfg.Now())}
		var eb struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &eb) == nil {
			xe.Name, xe.Message = eb.Error, eb.Message
		} else {
			xe.Message = strings.TrimSpace(string(raw[:min(len(raw), 300)]))
		}
		return xe
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("Bluesky %s: decoding the answer: %w", r.nsid, err)
		}
	}
	return nil
}

// retryAfter reads Retry-After (seconds or a date) or, as Bluesky's services send it, the
// ratelimit-reset header (Unix time in seconds when the window frees).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := httpx.RetryAfter(h, now); ok {
		return d
	}
	if v := strings.TrimSpace(h.Get("RateLimit-Reset")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil {
			if d := time.Unix(s, 0).Sub(now); d > 0 {
				return d.Round(time.Second) + time.Second
			}
			return time.Second
		}
	}
	return 0
}

// Sessions. createSession is limited to 30 calls per 5 minutes and 300 per day per handle
// (docs.bsky.app, Rate Limits; the entryway has been seen to allow 100 per day), so sessions
// are cached in the provider's memory, keyed by PDS, handle and a hash of the app password
// (a wrong password never finds a session made with the right one), and reused until the PDS
// refuses them: ExpiredToken is answered with refreshSession, a refresh that fails with a new
// createSession. Tokens never go into State.

type session struct {
	mu sync.Mutex // serializes refreshes
	// Guarded by mu.
	access, refresh string
	did, handle     string
	// pdsHost is the host of the account's PDS from the DID document createSession returns
	// (bsky.social is an entryway; the account lives on a PDS such as *.host.bsky.network),
	// the audience of service tokens for the video service.
	pdsHost string
}

// channel is where a destination's account lives and how it signs in.
type channel struct {
	pds      string // PDS root URL
	video    string // video service root URL ("" when there is none)
	videoDID string // video service DID (audience of getUploadLimits tokens)
	handle   string
	password string
}

func (c channel) key() string {
	h := sha256.Sum256([]byte(c.password))
	return c.pds + "\n" + strings.ToLower(c.handle) + "\n" + hex.EncodeToString(h[:])
}

// channelOf reads a channel's credentials: handle, app_password, pds_url (optional). A sandbox
// destination's base URL serves both the PDS and the video service.
func (p *Provider) channelOf(baseURL string, creds map[string]string) (channel, error) {
	c := channel{
		handle:   strings.TrimPrefix(strings.TrimSpace(creds["handle"]), "@"),
		password: creds["app_password"],
		video:    p.cfg.VideoServiceURL,
		videoDID: p.cfg.VideoServiceDID,
	}
	if c.video == NoVideoService {
		c.video = ""
	}
	if c.handle == "" || c.password == "" {
		return c, provider.Permanent(provider.CategoryAuthExpired, 0, "the Bluesky channel needs a handle and an app password")
	}
	c.pds = strings.TrimRight(strings.TrimSpace(creds["pds_url"]), "/")
	if c.pds == "" {
		c.pds = p.cfg.BaseURL
	}
	if b := strings.TrimRight(baseURL, "/"); b != "" {
		c.pds, c.video = b, b
		c.videoDID = didWeb(b)
	}
	if u, err := url.Parse(c.pds); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return c, provider.Permanent(provider.CategoryAuthExpired, 0, "the Bluesky channel's pds_url %q is not an http(s) URL", c.pds)
	}
	return c, nil
}

// didWeb returns the did:web identifier of a service URL's host (a port's colon is
// percent-encoded, as the did:web method requires).
func didWeb(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return "did:web:" + strings.ReplaceAll(u.Host, ":", "%3A")
}

type sessionAnswer struct {
	AccessJwt  string          `json:"accessJwt"`
	RefreshJwt string          `json:"refreshJwt"`
	Handle     string          `json:"handle"`
	DID        string          `json:"did"`
	DIDDoc     json.RawMessage `json:"didDoc"`
}

// pdsHostOf finds the #atproto_pds service endpoint's host in a DID document.
func pdsHostOf(doc json.RawMessage) string {
	var d struct {
		Service []struct {
			ID              string `json:"id"`
			Type            string `json:"type"`
			ServiceEndpoint string `json:"serviceEndpoint"`
		} `json:"service"`
	}
	if len(doc) == 0 || json.Unmarshal(doc, &d) != nil {
		return ""
	}
	for _, s := range d.Service {
		if strings.HasSuffix(s.ID, "#atproto_pds") || s.Type == "AtprotoPersonalDataServer" {
			if u, err := url.Parse(s.ServiceEndpoint); err == nil && u.Host != "" {
				return u.Host
			}
		}
	}
	return ""
}

func (s *session) set(a sessionAnswer, fallbackHost string) {
	s.access, s.refresh, s.did, s.handle = a.AccessJwt, a.RefreshJwt, a.DID, a.Handle
	if h := pdsHostOf(a.DIDDoc); h != "" {
		s.pdsHost = h
	} else if s.pdsHost == "" {
		s.pdsHost = fallbackHost
	}
}

// session returns the channel's cached session, signing in when there is none.
func (p *Provider) session(ctx context.Context, c channel) (*session, error) {
	p.mu.Lock()
	s, ok := p.sessions[c.key()]
	if !ok {
		s = &session{}
		p.sessions[c.key()] = s
	}
	p.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.access != "" {
		return s, nil
	}
	if err := p.createSession(ctx, c, s); err != nil {
		// Forget a session that never was: wrong passwords leave nothing behind.
		p.mu.Lock()
		if p.sessions[c.key()] == s {
			delete(p.sessions, c.key())
		}
		p.mu.Unlock()
		return nil, err
	}
	return s, nil
}

// createSession signs in with the app password (under s.mu). A refused password is auth_expired.
func (p *Provider) createSession(ctx context.Context, c channel, s *session) error {
	var a sessionAnswer
	// Signing in again makes another session of the same account; one left unused only
	// expires.
	err := p.repeat(ctx, provider.CategoryAuthExpired, func() error {
		return p.do(ctx, request{method: http.MethodPost, base: c.pds, nsid: nsidCreateSession,
			json: map[string]string{"identifier": c.handle, "password": c.password}}, &a)
	})
	if err != nil {
		var xe *xrpcError
		if errors.As(err, &xe) && !xe.rateLimited() && xe.Status < 500 {
			// 400 InvalidRequest (malformed identifier) or 401 AuthenticationRequired: the
			// credentials will not work until the user changes them.
			return provider.Permanent(provider.CategoryAuthExpired, xe.Status, "%s", xe.Error())
		}
		return classifyXRPC(err, provider.CategoryAuthExpired)
	}
	if a.AccessJwt == "" || a.DID == "" {
		return provider.Permanent(provider.CategoryInternal, http.StatusOK, "Bluesky createSession answered without a session")
	}
	u, _ := url.Parse(c.pds)
	s.set(a, u.Host)
	return nil
}

// renew replaces a session whose access token the PDS refused (under s.mu): refreshSession
// when the token expired, createSession when that fails or the token is invalid.
func (p *Provider) renew(ctx context.Context, c channel, s *session, expired bool) error {
	if expired && s.refresh != "" {
		var a sessionAnswer
		err := p.do(ctx, request{method: http.MethodPost, base: c.pds, nsid: nsidRefreshSession, bearer: s.refresh}, &a)
		if err == nil && a.AccessJwt != "" {
			u, _ := url.Parse(c.pds)
			s.set(a, u.Host)
			return nil
		}
		var xe *xrpcError
		if err != nil && !(errors.As(err, &xe) && xe.authFailure()) {
			return classifyXRPC(err, provider.CategoryAuthExpired) // the PDS is down: do not sign in again
		}
	}
	s.access, s.refresh = "", ""
	return p.createSession(ctx, c, s)
}

// authed performs an XRPC call with the session's access token, renewing the session once when
// the PDS refuses the token.
func (p *Provider) authed(ctx context.Context, c channel, s *session, r request, out any) error {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		token := s.access
		s.mu.Unlock()
		if token == "" {
			s.mu.Lock()
			err := p.createSession(ctx, c, s)
			token = s.access
			s.mu.Unlock()
			if err != nil {
				return err
			}
		}
		r.bearer = token
		err := p.do(ctx, r, out)
		var xe *xrpcError
		if attempt > 0 || err == nil || !errors.As(err, &xe) || !xe.authFailure() {
			return err
		}
		s.mu.Lock()
		var rerr error
		if s.access == token { // nobody renewed it meanwhile
			rerr = p.renew(ctx, c, s, xe.Name == "ExpiredToken")
		}
		s.mu.Unlock()
		if rerr != nil {
			return rerr
		}
	}
}
