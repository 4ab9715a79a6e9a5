package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiPrefix is where the versioned API lives under the server root.
const apiPrefix = "/api/v1"

// defaultUserAgent names this package in the server's access log.
const defaultUserAgent = "reelay-go-client"

// Client calls one reelay server with one credential. It is safe for concurrent use.
type Client struct {
	root   *url.URL // the server root, without a trailing slash: /healthz and /sandbox live here
	apiKey string
	bearer bool
	hc     *http.Client
	ua     string
	retry  RetryPolicy
	log    *slog.Logger

	// sleep waits between attempts and jitter spreads the waits; tests replace both so that
	// they can assert on the delays without waiting for them.
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(d time.Duration) time.Duration
	now    func() time.Time
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sends requests through hc (its transport, proxy and TLS settings, timeout).
// The Client works on a copy whose redirect policy refuses to follow a redirect of an
// authenticated request, so that the API key is never carried to another address.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			cp := *hc
			c.hc = &cp
		}
	}
}

// WithUserAgent sets the User-Agent header, for example "reelay-cli/1.4".
func WithUserAgent(ua string) Option { return func(c *Client) { c.ua = ua } }

// WithRetries sets how many times a failed request may be sent again (0: never), keeping the
// policy's delays.
func WithRetries(n int) Option { return func(c *Client) { c.retry.MaxRetries = n } }

// WithRetryPolicy replaces the whole retry policy.
func WithRetryPolicy(p RetryPolicy) Option { return func(c *Client) { c.retry = p } }

// WithLogger logs each retry, at debug level, to l. The API key is never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// WithBearerAuth sends the credential as "Authorization: Bearer" instead of "X-API-Key", as an
// OIDC access token must be.
func WithBearerAuth() Option { return func(c *Client) { c.bearer = true } }

// New returns a client of the reelay server at baseURL, the server root such as
// "http://127.0.0.1:8080" (a trailing "/api/v1" is accepted and ignored), authenticating with
// apiKey. An empty apiKey is allowed for the calls that need none (Health, OpenMedia).
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	root, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		root:   root,
		apiKey: strings.TrimSpace(apiKey),
		hc:     &http.Client{},
		ua:     defaultUserAgent,
		retry:  DefaultRetryPolicy(),
		log:    slog.New(slog.DiscardHandler),
		sleep:  sleepContext,
		jitter: equalJitter,
		now:    time.Now,
	}
	for _, opt := range opts {
		opt(c)
	}
	if err := c.retry.validate(); err != nil {
		return nil, err
	}
	c.hc.CheckRedirect = keepCredentialsHome(c.hc.CheckRedirect)
	return c, nil
}

// parseBaseURL checks the server's address and returns its root. Credentials and queries are
// refused: a key in a URL ends up in logs, which is why the server refuses it too.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("reelay: base URL %q: %w", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("reelay: base URL %q must start with http:// or https://", raw)
	case u.Host == "":
		return nil, fmt.Errorf("reelay: base URL %q has no host", raw)
	case u.User != nil:
		return nil, fmt.Errorf("reelay: base URL must not carry credentials; pass the API key to New")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("reelay: base URL %q must not have a query or fragment", raw)
	}
	u.Path = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), apiPrefix)
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// keepCredentialsHome refuses to follow redirects of requests that carry the credential (the
// API never redirects, and Go forwards custom headers such as X-API-Key to other hosts); the
// 3xx answer then comes back as an *Error. Other requests (media links) follow the caller's
// policy.
func keepCredentialsHome(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		if first.Header.Get("X-API-Key") != "" || first.Header.Get("Authorization") != "" {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// BaseURL is the server root the client calls.
func (c *Client) BaseURL() string { return c.root.String() }

// retrySafety says which failures of a request may be retried without doing its work twice.
type retrySafety int

const (
	// idempotent requests (reads, deletes, dry runs, publishes carrying an Idempotency-Key) are
	// retried after any transient failure, network errors included.
	idempotent retrySafety = iota
	// refusedOnly requests are retried only when the answer says nothing was done: 429 and 503,
	// or a connection that was never made.
	refusedOnly
)

// call is one logical request, sent once or more.
type call struct {
	method string
	path   string // under /api/v1, or under the root when rooted
	rooted bool
	// absolute, when set, is a full URL to fetch instead of path (a signed media link).
	absolute string
	query    url.Values
	body     any   // JSON-encoded when non-nil
	form     *form // a streamed multipart body instead of body
	header   http.Header
	safety   retrySafety
	noAuth   bool
	// answerOn502 accepts a 502 whose JSON names a post_id as the answer: a publish whose
	// destinations all failed on their platforms is a result to read, not a failure to retry.
	answerOn502 bool
}

func (cl *call) label() string {
	if cl.absolute != "" {
		return cl.method + " " + redactQuery(cl.absolute)
	}
	p := cl.path
	if !cl.rooted {
		p = apiPrefix + p
	}
	return cl.method + " " + p
}

// redactQuery drops a URL's query, where a media link carries its signature.
func redactQuery(raw string) string {
	s, _, _ := strings.Cut(raw, "?")
	return s
}

func (c *Client) url(cl *call) string {
	if cl.absolute != "" {
		return cl.absolute
	}
	u := *c.root
	if cl.rooted {
		u.Path += cl.path
	} else {
		u.Path += apiPrefix + cl.path
	}
	u.RawQuery = cl.query.Encode()
	return u.String()
}

// do sends cl until it succeeds, fails for good or runs out of attempts, and returns a 2xx
// answer with its body unread: the caller closes it.
func (c *Client) do(ctx context.Context, cl *call) (*http.Response, error) {
	var jsonBody []byte
	if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return nil, fmt.Errorf("reelay: %s: encode request: %w", cl.label(), err)
		}
		jsonBody = b
	}
	// One request id for every attempt, so that the server's log ties the retries together.
	requestID := newRequestID()
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, cl, jsonBody, requestID, attempt)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		delay, retry := c.retryDelay(cl, attempt, err)
		if !retry {
			return nil, err
		}
		c.log.LogAttrs(ctx, slog.LevelDebug, "reelay: retrying", slog.String("request", cl.label()),
			slog.Int("attempt", attempt+1), slog.Duration("delay", delay), slog.String("error", err.Error()),
			slog.String("request_id", requestID))
		if serr := c.sleep(ctx, delay); serr != nil {
			return nil, fmt.Errorf("reelay: %s: stopped waiting to retry: %w (last failure: %w)", cl.label(), serr, err)
		}
	}
}

// once makes one attempt. Failures come back as *Error (an error status), *RequestError (no
// answer) or a plain error (the request could not be built or its upload could not be read),
// which retryDelay tells apart.
func (c *Client) once(ctx context.Context, cl *call, jsonBody []byte, requestID string, attempt int) (*http.Response, error) {
	var body io.Reader
	if jsonBody != nil {
		body = bytes.NewReader(jsonBody)
	}
	var upload *formAttempt
	if cl.form != nil {
		var err error
		if upload, err = cl.form.start(attempt); err != nil {
			return nil, err
		}
		body = upload.body
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, c.url(cl), body)
	if err != nil {
		if upload != nil {
			upload.finish()
		}
		return nil, fmt.Errorf("reelay: %s: %w", cl.label(), err)
	}
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("X-Request-Id", requestID)
	if cl.absolute == "" {
		req.Header.Set("Accept", "application/json")
	}
	if jsonBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if upload != nil {
		req.Header.Set("Content-Type", upload.contentType)
		req.ContentLength = upload.contentLength
		// Ask the server to approve before the file goes out: a request refused at the door
		// (401, 429) then costs no upload, and a reader that cannot be rewound can be sent
		// again because none of it was read.
		req.Header.Set("Expect", "100-continue")
	}
	if c.apiKey != "" && !cl.noAuth {
		if c.bearer {
			req.Header.Set("Authorization", "Bearer "+c.apiKey)
		} else {
			req.Header.Set("X-API-Key", c.apiKey)
		}
	}

	resp, err := c.hc.Do(req)
	if upload != nil {
		// The upload is over whatever the answer: stop the writer and learn whether reading
		// the file failed, which explains a broken request better than the transport does.
		if uerr := upload.finish(); uerr != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, fmt.Errorf("reelay: %s: %w", cl.label(), uerr)
		}
	}
	if err != nil {
		return nil, &RequestError{Method: cl.method, URL: redactQuery(c.url(cl)), Err: unwrapURLError(err)}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	raw, readErr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if readErr != nil {
		return nil, &RequestError{Method: cl.method, URL: redactQuery(c.url(cl)), Err: readErr}
	}
	if cl.answerOn502 && resp.StatusCode == http.StatusBadGateway && namesPost(raw) {
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		return resp, nil
	}
	return nil, c.errorFrom(resp, raw, requestID)
}

// maxErrorBody bounds what is read of an error answer (and of a publish's 502 answer, which
// is a post with its destinations).
const maxErrorBody = 1 << 20

// namesPost tells a publish's own 502 answer (the post, whose destinations failed upstream)
// from a gateway's.
func namesPost(raw []byte) bool {
	var probe struct {
		PostID string `json:"post_id"`
		Error  any    `json:"error"`
	}
	return json.Unmarshal(raw, &probe) == nil && probe.PostID != "" && probe.Error == nil
}

// unwrapURLError drops the *url.Error layer, whose text repeats the method and the URL (and
// would show a media link's signature).
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// decode reads a 2xx answer's JSON into out (nil: drop the body) and closes it.
func decode(resp *http.Response, out any, label string) error {
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("reelay: %s: read answer (%d): %w", label, resp.StatusCode, err)
	}
	return nil
}

// send makes cl and decodes its answer into out; it returns the answer's status (200, 201,
// 202) for the calls where it means something.
func (c *Client) send(ctx context.Context, cl *call, out any) (int, error) {
	resp, err := c.do(ctx, cl)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, decode(resp, out, cl.label())
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	_, err := c.send(ctx, &call{method: http.MethodGet, path: path, query: query, safety: idempotent}, out)
	return err
}

// post sends a JSON body; without an idempotency guarantee it is retried only when refused.
func (c *Client) post(ctx context.Context, path string, body, out any) (int, error) {
	return c.send(ctx, &call{method: http.MethodPost, path: path, body: body, safety: refusedOnly}, out)
}

func (c *Client) delete(ctx context.Context, path string, out any) error {
	_, err := c.send(ctx, &call{method: http.MethodDelete, path: path, safety: idempotent}, out)
	return err
}

// deletedResponse is the answer of a removal (a channel, a key, a webhook).
type deletedResponse struct {
	ID string `json:"id"`
}

// remove deletes the resource at path, named by id.
func (c *Client) remove(ctx context.Context, path, id string) error {
	var out deletedResponse
	if err := c.delete(ctx, path, &out); err != nil {
		return err
	}
	if out.ID != id {
		return fmt.Errorf("reelay: DELETE %s answered the removal of %q", path, out.ID)
	}
	return nil
}

// idPath joins a resource path and an id, refusing an empty id (which would name another
// endpoint) and escaping anything else.
func idPath(resource, id, rest string) (string, error) {
	if strings.TrimSpace(id) == "" {
		return "", fmt.Errorf("reelay: %s id is empty", strings.TrimPrefix(resource, "/"))
	}
	return resource + "/" + url.PathEscape(id) + rest, nil
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
