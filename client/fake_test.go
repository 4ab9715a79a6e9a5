package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/client"
)

// fake is a test server answering from a script, one step per request (the last step
// repeats), that records what it received.
type fake struct {
	*httptest.Server
	mu    sync.Mutex
	steps []step
	got   []received
	// busy counts the handlers still running: a step that hangs up lets the client retry,
	// and even return, before its handler has recorded the body it read.
	busy sync.WaitGroup
}

// step answers one request; it reads the body only if it means to.
type step func(w http.ResponseWriter, r *http.Request)

type received struct {
	method, path, query string
	header              http.Header
	body                []byte // what the step read of the body
}

func newFake(t *testing.T, steps ...step) *fake {
	t.Helper()
	f := &fake{steps: steps}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.busy.Add(1)
		defer f.busy.Done()
		var read bytes.Buffer
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &read), r.Body}
		f.mu.Lock()
		n := len(f.got)
		f.got = append(f.got, received{method: r.Method, path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone()})
		s := f.steps[min(n, len(f.steps)-1)]
		f.mu.Unlock()
		// A fresh connection per request: Go's transport retries some failures on reused
		// connections by itself, which would blur what the client's own retries do.
		w.Header().Set("Connection", "close")
		s(w, r)
		f.mu.Lock()
		f.got[n].body = read.Bytes()
		f.mu.Unlock()
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []received {
	f.busy.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

// answer reads the request's body, then answers status with body (JSON when it starts with
// "{") and headers given as name, value pairs.
func answer(status int, body string, headers ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		reply(w, status, body, headers...)
	}
}

// refuse answers without reading the body, as reelay's authentication and rate limiting do.
func refuse(status int, body string, headers ...string) step {
	return func(w http.ResponseWriter, r *http.Request) { reply(w, status, body, headers...) }
}

func reply(w http.ResponseWriter, status int, body string, headers ...string) {
	for i := 0; i+1 < len(headers); i += 2 {
		w.Header().Set(headers[i], headers[i+1])
	}
	if strings.HasPrefix(body, "{") {
		w.Header().Set("Content-Type", "application/json")
	} else if body != "" {
		w.Header().Set("Content-Type", "text/html")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// hangUp reads the request, then closes the connection without an answer.
func hangUp() step {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

// apiError is the contract's error body.
func apiError(code, message string) string {
	return `{"success":false,"error":{"code":"` + code + `","message":"` + message + `"},"request_id":"req-1"}`
}

// sleeps records the waits the client asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

const testKey = "rly_live_testkey"

// newFakeClient is a client of url whose waits are recorded, not waited.
func newFakeClient(t *testing.T, url string, opts ...client.Option) (*client.Client, *sleeps) {
	t.Helper()
	s := &sleeps{}
	c, err := client.New(url, testKey, append([]client.Option{client.WithSleep(s.sleep)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

const (
	projectsJSON = `{"success":true,"projects":[{"id":"p1","name":"Default","description":"","created_at":"2026-01-02T03:04:05Z"}]}`
	adaptJSON    = `{"success":true,"adapted":{"tiktok":{"text":"t","hook":"h","hashtags":["#a"]}},"model":"reelay-builtin"}`
	publishJSON  = `{"success":true,"post_id":"post-1","status":"published","platforms":[]}`
)
