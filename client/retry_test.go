package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
)

func listProjects(ctx context.Context, c *client.Client) error {
	_, err := c.ListProjects(ctx)
	return err
}

func adapt(ctx context.Context, c *client.Client) error {
	_, err := c.Adapt(ctx, client.AdaptRequest{Prompt: "Cold brew"})
	return err
}

func TestRetries(t *testing.T) {
	const base = 500 * time.Millisecond // the default policy's first delay
	tests := []struct {
		name  string
		call  func(context.Context, *client.Client) error
		steps []step
		// attempts the server must see; wantStatus of the error: 0 for success, noAnswer for a
		// *RequestError.
		attempts   int
		wantStatus int
		// delays checks the waits asked for.
		delays func(t *testing.T, d []time.Duration)
	}{
		{
			name:     "GET 503 then 200 is retried after a back-off",
			call:     listProjects,
			steps:    []step{answer(503, apiError("service_unavailable", "later")), answer(200, projectsJSON)},
			attempts: 2,
			delays: func(t *testing.T, d []time.Duration) {
				if len(d) != 1 || d[0] < base/2 || d[0] > base {
					t.Errorf("delays %v, want one between %v and %v", d, base/2, base)
				}
			},
		},
		{
			name:     "429 with Retry-After in seconds waits that long",
			call:     listProjects,
			steps:    []step{refuse(429, apiError("rate_limited", "slow down"), "Retry-After", "1"), answer(200, projectsJSON)},
			attempts: 2,
			delays:   exactly(time.Second),
		},
		{
			name:     "429 with Retry-After as an HTTP date",
			call:     listProjects,
			steps:    []step{refuse(429, apiError("rate_limited", "slow down"), "Retry-After", "Fri, 02 Jan 2026 03:04:08 GMT"), answer(200, projectsJSON)},
			attempts: 2,
			delays:   exactly(3 * time.Second), // the test clock is 03:04:05
		},
		{
			name:       "attempts are bounded, delays grow",
			call:       listProjects,
			steps:      []step{answer(502, "<html>bad gateway</html>")},
			attempts:   4,
			wantStatus: 502,
			delays: func(t *testing.T, d []time.Duration) {
				if len(d) != 3 {
					t.Fatalf("delays %v, want 3", d)
				}
				for i, want := range []time.Duration{base, 2 * base, 4 * base} {
					if d[i] < want/2 || d[i] > want {
						t.Errorf("delay %d = %v, want between %v and %v", i, d[i], want/2, want)
					}
				}
			},
		},
		{
			name:       "a Retry-After beyond MaxDelay is returned, not waited out",
			call:       listProjects,
			steps:      []step{refuse(429, apiError("rate_limited", "come back later"), "Retry-After", "3600")},
			attempts:   1,
			wantStatus: 429,
		},
		{
			name:       "GET 404 is an answer, not retried",
			call:       listProjects,
			steps:      []step{answer(404, apiError("not_found", "no such thing"))},
			attempts:   1,
			wantStatus: 404,
		},
		{
			name:     "a network error on GET is retried",
			call:     listProjects,
			steps:    []step{hangUp(), answer(200, projectsJSON)},
			attempts: 2,
		},
		{
			name:       "POST /ai/adapt after a 502 is not retried",
			call:       adapt,
			steps:      []step{answer(502, apiError("upstream_error", "model down")), answer(200, adaptJSON)},
			attempts:   1,
			wantStatus: 502,
		},
		{
			name:       "POST /ai/adapt after a 500 is not retried",
			call:       adapt,
			steps:      []step{answer(500, apiError("internal_error", "oops")), answer(200, adaptJSON)},
			attempts:   1,
			wantStatus: 500,
		},
		{
			name:     "POST /ai/adapt refused with 429 is retried",
			call:     adapt,
			steps:    []step{refuse(429, apiError("rate_limited", "slow down"), "Retry-After", "2"), answer(200, adaptJSON)},
			attempts: 2,
			delays:   exactly(2 * time.Second),
		},
		{
			name:     "POST /ai/adapt refused with 503 is retried",
			call:     adapt,
			steps:    []step{answer(503, apiError("service_unavailable", "later")), answer(200, adaptJSON)},
			attempts: 2,
		},
		{
			name:       "POST /ai/adapt after a lost answer is not retried",
			call:       adapt,
			steps:      []step{hangUp(), answer(200, adaptJSON)},
			attempts:   1,
			wantStatus: noAnswer,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.steps...)
			clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
			c, slept := newFakeClient(t, f.URL, client.WithClock(clock))
			err := tt.call(context.Background(), c)
			if got := len(f.requests()); got != tt.attempts {
				t.Errorf("the server saw %d attempts, want %d", got, tt.attempts)
			}
			var re *client.RequestError
			switch e, isAPI := client.AsError(err); {
			case tt.wantStatus == 0 && err != nil:
				t.Errorf("error %v, want success", err)
			case tt.wantStatus == noAnswer && !errors.As(err, &re):
				t.Errorf("error %v, want a *RequestError", err)
			case tt.wantStatus > 0 && (!isAPI || e.StatusCode != tt.wantStatus):
				t.Errorf("error %v, want an *Error with status %d", err, tt.wantStatus)
			}
			if tt.delays != nil {
				tt.delays(t, slept.all())
			}
		})
	}
}

// noAnswer stands for a *RequestError in TestRetries.
const noAnswer = -1

func exactly(want ...time.Duration) func(t *testing.T, d []time.Duration) {
	return func(t *testing.T, d []time.Duration) {
		t.Helper()
		if len(d) != len(want) {
			t.Fatalf("delays %v, want %v", d, want)
		}
		for i := range d {
			if d[i] != want[i] {
				t.Errorf("delays %v, want %v", d, want)
			}
		}
	}
}

func TestRetryPolicyOptions(t *testing.T) {
	tests := []struct {
		name     string
		opts     []client.Option
		attempts int
		delays   []time.Duration
	}{
		{"no retries", []client.Option{client.WithRetries(0)}, 1, nil},
		{"one retry", []client.Option{client.WithRetries(1), client.WithoutJitter()}, 2, []time.Duration{500 * time.Millisecond}},
		{"a policy of its own", []client.Option{client.WithoutJitter(), client.WithRetryPolicy(client.RetryPolicy{
			MaxRetries: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: 300 * time.Millisecond})},
			6, []time.Duration{100, 200, 300, 300, 300}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, answer(503, apiError("service_unavailable", "down")))
			c, slept := newFakeClient(t, f.URL, tt.opts...)
			if err := listProjects(context.Background(), c); !client.IsCode(err, client.CodeServiceUnavailable) {
				t.Errorf("error %v, want service_unavailable", err)
			}
			if got := len(f.requests()); got != tt.attempts {
				t.Errorf("attempts %d, want %d", got, tt.attempts)
			}
			got := slept.all()
			if len(got) != len(tt.delays) {
				t.Fatalf("delays %v, want %v", got, tt.delays)
			}
			for i, d := range tt.delays {
				if d < time.Millisecond {
					d *= time.Millisecond
				}
				if got[i] != d {
					t.Errorf("delays %v, want %v", got, tt.delays)
				}
			}
		})
	}
	if _, err := client.New("http://x", "k", client.WithRetries(-1)); err == nil {
		t.Error("a negative retry count was accepted")
	}
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestPublishIdempotency: a publish is retried after any transient failure, always under one
// Idempotency-Key, so the server can tell a repeat from a new post.
func TestPublishIdempotency(t *testing.T) {
	tests := []struct {
		name     string
		key      string
		steps    []step
		attempts int
	}{
		{"the client makes a key and keeps it across retries", "",
			[]step{answer(503, apiError("service_unavailable", "later")), answer(502, "<h1>502 Bad Gateway</h1>"), hangUp(), answer(200, publishJSON)}, 4},
		{"the caller's key is used as it is", "launch-2026-12-01",
			[]step{answer(504, ""), answer(200, publishJSON, "Idempotent-Replayed", "true")}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.steps...)
			c, _ := newFakeClient(t, f.URL)
			res, err := c.Publish(context.Background(), client.PublishRequest{ProjectID: "p1", VideoURL: "https://example.com/v.mp4", IdempotencyKey: tt.key})
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			if len(reqs) != tt.attempts {
				t.Fatalf("attempts %d, want %d", len(reqs), tt.attempts)
			}
			key := reqs[0].header.Get("Idempotency-Key")
			if tt.key != "" && key != tt.key || tt.key == "" && !uuidPattern.MatchString(key) {
				t.Errorf("Idempotency-Key %q, want %q or a random UUID", key, tt.key)
			}
			for i, r := range reqs {
				if got := r.header.Get("Idempotency-Key"); got != key {
					t.Errorf("attempt %d carried Idempotency-Key %q, the first %q", i+1, got, key)
				}
				if string(r.body) != string(reqs[0].body) {
					t.Errorf("attempt %d sent another body: %s", i+1, r.body)
				}
			}
			if res.IdempotencyKey != key || res.PostID != "post-1" {
				t.Errorf("answer %+v", res)
			}
			if res.Replayed != (tt.key != "") {
				t.Errorf("Replayed = %v", res.Replayed)
			}
		})
	}

	t.Run("each call has a key of its own", func(t *testing.T) {
		f := newFake(t, answer(200, publishJSON))
		c, _ := newFakeClient(t, f.URL)
		for range 2 {
			if _, err := c.Publish(context.Background(), client.PublishRequest{ProjectID: "p1", VideoURL: "https://example.com/v.mp4"}); err != nil {
				t.Fatal(err)
			}
		}
		reqs := f.requests()
		if a, b := reqs[0].header.Get("Idempotency-Key"), reqs[1].header.Get("Idempotency-Key"); a == "" || a == b {
			t.Errorf("keys %q and %q: two publishes must not share one", a, b)
		}
	})

	t.Run("a dry run carries no key", func(t *testing.T) {
		f := newFake(t, answer(200, `{"success":true,"dry_run":true,"platforms":[]}`))
		c, _ := newFakeClient(t, f.URL)
		if _, err := c.DryRun(context.Background(), client.PublishRequest{ProjectID: "p1", VideoURL: "https://example.com/v.mp4", IdempotencyKey: "k"}); err != nil {
			t.Fatal(err)
		}
		if r := f.requests()[0]; r.header.Get("Idempotency-Key") != "" || r.query != "dry_run=true" {
			t.Errorf("dry run sent key %q, query %q", r.header.Get("Idempotency-Key"), r.query)
		}
	})

	t.Run("a publish's own 502 is its answer", func(t *testing.T) {
		failed := `{"success":false,"post_id":"post-9","status":"failed","platforms":[{"platform":"tiktok","channel_id":"c","channel_title":"t","success":false,"published":false,"upload_status":"failed","id":null,"url":null,"error":"token expired","error_category":"auth_expired"}]}`
		f := newFake(t, answer(502, failed))
		c, _ := newFakeClient(t, f.URL)
		res, err := c.Publish(context.Background(), client.PublishRequest{ProjectID: "p1", VideoURL: "https://example.com/v.mp4"})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.requests()) != 1 || res.Status != client.PostFailed || res.Platforms[0].Error != "token expired" || res.Platforms[0].ID != "" {
			t.Errorf("%d attempts, answer %+v", len(f.requests()), res)
		}
	})
}

func TestContextCanceledDuringBackoff(t *testing.T) {
	f := newFake(t, refuse(503, apiError("service_unavailable", "down"), "Retry-After", "20"))
	c, err := client.New(f.URL, testKey) // real waits
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.ListProjects(ctx)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("returned after %v, want promptly after the cancel", took)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if e, ok := client.AsError(err); !ok || e.StatusCode != 503 {
		t.Errorf("error %v should still carry the last answer", err)
	}
}

func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		name    string
		step    step
		want    client.Error
		message string // what Error() says
		check   func(err error) bool
	}{
		{
			name: "the contract's body",
			step: answer(400, `{"success":false,"error":{"code":"validation_failed","message":"caption is too long","fields":{"caption":"must be at most 5000 characters"}},"request_id":"r-42"}`),
			want: client.Error{StatusCode: 400, Code: "validation_failed", Message: "caption is too long",
				Fields: map[string]string{"caption": "must be at most 5000 characters"}, RequestID: "r-42"},
			message: "caption is too long",
			check:   client.IsValidation,
		},
		{
			name:    "a duplicate names the post",
			step:    answer(409, `{"success":false,"error":{"code":"duplicate_post","message":"already posted"},"request_id":"r-1","post_id":"post-7"}`),
			want:    client.Error{StatusCode: 409, Code: "duplicate_post", Message: "already posted", RequestID: "r-1", PostID: "post-7"},
			message: "already posted",
			check:   client.IsConflict,
		},
		{
			name:    "a proxy's HTML page",
			step:    answer(502, "<html>\n<body>\n<h1>502 Bad Gateway</h1>\n</body>\n</html>", "X-Request-Id", "edge-9"),
			want:    client.Error{StatusCode: 502, Message: "<html> <body> <h1>502 Bad Gateway</h1> </body> </html>", RequestID: "edge-9"},
			message: "reelay answered 502 Bad Gateway: <html> <body> <h1>502 Bad Gateway</h1> </body> </html>",
		},
		{
			name:    "not found",
			step:    answer(404, apiError("not_found", "project not found")),
			want:    client.Error{StatusCode: 404, Code: "not_found", Message: "project not found", RequestID: "req-1"},
			message: "project not found",
			check:   client.IsNotFound,
		},
		{
			name:    "unauthorized",
			step:    answer(401, apiError("unauthorized", "invalid or revoked API key")),
			want:    client.Error{StatusCode: 401, Code: "unauthorized", Message: "invalid or revoked API key", RequestID: "req-1"},
			message: "invalid or revoked API key",
			check:   client.IsUnauthorized,
		},
		{
			name:    "rate limited past the client's patience",
			step:    answer(429, apiError("rate_limited", "slow down"), "Retry-After", "90"),
			want:    client.Error{StatusCode: 429, Code: "rate_limited", Message: "slow down", RequestID: "req-1", RetryAfter: 90 * time.Second},
			message: "slow down",
			check:   client.IsRateLimited,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.step)
			c, _ := newFakeClient(t, f.URL, client.WithRetries(0))
			err := listProjects(context.Background(), c)
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *client.Error", err, err)
			}
			if e.StatusCode != tt.want.StatusCode || e.Code != tt.want.Code || e.Message != tt.want.Message ||
				e.RequestID != tt.want.RequestID || e.RetryAfter != tt.want.RetryAfter || e.PostID != tt.want.PostID ||
				len(e.Fields) != len(tt.want.Fields) {
				t.Errorf("error %+v\nwant %+v", *e, tt.want)
			}
			for k, v := range tt.want.Fields {
				if e.Fields[k] != v {
					t.Errorf("field %s: %q, want %q", k, e.Fields[k], v)
				}
			}
			if err.Error() != tt.message {
				t.Errorf("Error() = %q, want %q", err.Error(), tt.message)
			}
			if tt.check != nil && !tt.check(err) {
				t.Errorf("the helper does not recognise %v", err)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	c, slept := newFakeClient(t, addr)
	_, err = c.Adapt(context.Background(), client.AdaptRequest{Prompt: "x"})
	var re *client.RequestError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "cannot reach reelay") || !strings.Contains(re.URL, addr) {
		t.Fatalf("error %v, want a *RequestError naming %s", err, addr)
	}
	// Even a POST is retried when the connection was never made: nothing reached the server.
	if got := len(slept.all()); got != 3 {
		t.Errorf("%d retries of a refused connection, want 3", got)
	}
}

func TestAuthentication(t *testing.T) {
	f := newFake(t, answer(200, projectsJSON))
	c, _ := newFakeClient(t, f.URL)
	bearer, _ := newFakeClient(t, f.URL, client.WithBearerAuth(), client.WithUserAgent("reelay-cli/1.0"))
	for _, cl := range []*client.Client{c, bearer} {
		if err := listProjects(context.Background(), cl); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.requests()
	if got := reqs[0].header.Get("X-API-Key"); got != testKey || reqs[0].header.Get("Authorization") != "" {
		t.Errorf("X-API-Key %q", got)
	}
	if got := reqs[1].header.Get("Authorization"); got != "Bearer "+testKey || reqs[1].header.Get("X-API-Key") != "" {
		t.Errorf("Authorization %q", got)
	}
	if ua := reqs[1].header.Get("User-Agent"); ua != "reelay-cli/1.0" {
		t.Errorf("User-Agent %q", ua)
	}
	for _, r := range reqs {
		if strings.Contains(r.query, testKey) || r.header.Get("X-Request-Id") == "" {
			t.Errorf("request %+v", r)
		}
	}
}

// TestRedirectKeepsTheKeyHome: a redirect of an authenticated request is not followed, so
// the key never travels to the address it names.
func TestRedirectKeepsTheKeyHome(t *testing.T) {
	elsewhere := newFake(t, answer(200, projectsJSON))
	f := newFake(t, answer(http.StatusFound, "", "Location", elsewhere.URL+"/api/v1/projects"))
	c, _ := newFakeClient(t, f.URL)
	err := listProjects(context.Background(), c)
	if e, ok := client.AsError(err); !ok || e.StatusCode != http.StatusFound || !strings.Contains(e.Message, elsewhere.URL) {
		t.Errorf("error %v, want the 302 as an *Error", err)
	}
	if n := len(elsewhere.requests()); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

func TestBaseURL(t *testing.T) {
	f := newFake(t, answer(200, projectsJSON))
	for _, base := range []string{f.URL, f.URL + "/", f.URL + "/api/v1", f.URL + "/api/v1/"} {
		c, _ := newFakeClient(t, base)
		if err := listProjects(context.Background(), c); err != nil {
			t.Errorf("%s: %v", base, err)
		}
	}
	sub, _ := newFakeClient(t, f.URL+"/reelay")
	_ = listProjects(context.Background(), sub)
	for _, r := range f.requests()[:4] {
		if r.path != "/api/v1/projects" {
			t.Errorf("path %q", r.path)
		}
	}
	if p := f.requests()[4].path; p != "/reelay/api/v1/projects" {
		t.Errorf("behind a path prefix: %q", p)
	}

	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "http://user:pw@host", "http://host/?api_key=x"} {
		if _, err := client.New(bad, testKey); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

func TestEmptyIDs(t *testing.T) {
	f := newFake(t, answer(200, "{}"))
	c, _ := newFakeClient(t, f.URL)
	ctx := context.Background()
	if _, err := c.GetPost(ctx, ""); err == nil {
		t.Error("GetPost with an empty id was sent")
	}
	if err := c.DeleteWebhook(ctx, " "); err == nil {
		t.Error("DeleteWebhook with a blank id was sent")
	}
	if len(f.requests()) != 0 {
		t.Errorf("%d requests went out", len(f.requests()))
	}
}
