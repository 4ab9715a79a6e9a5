package simtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// Fuzzing a simulator: the simulators face every test and every sandbox user, so each is fuzzed through its
// http.Handler: a request (method, target, header lines, body) read from the wire as a server
// reads it, then served by a new simulator with the memory State. A simulator must answer
// malformed input with its platform's 4xx: a panic or a 5xx fails. Simulators with multi-step
// uploads first open a session (prepare), whose URL and tokens the fuzzed request may name
// through {placeholders}, so that chunk, Content-Range and finish handling is reached too.

// FuzzToken is the access token of the fuzzed account.
const FuzzToken = "tok"

var fuzzClock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// FuzzSeed is one request: its method, target, header (lines "Name: value") and body. An
// array rather than a struct, so that the seeds are written as the lines of a request are.
type FuzzSeed [4]string

// Fuzz fuzzes one simulator, built by NewSim for the account Account (whose token is
// FuzzToken), with Seeds.
type Fuzz struct {
	NewSim  func(sim.Config) http.Handler
	Account string
	// Prepare runs requests before the fuzzed one and returns the placeholders' values.
	Prepare func(t *testing.T, do func(method, target, header, body string) *httptest.ResponseRecorder) map[string]string
	Seeds   []FuzzSeed
	// Documented5xx accepts a 5xx the platform itself documents for a request (XRPC's 501
	// for a method the server does not implement).
	Documented5xx func(code int, body string) bool
}

// refuseNetwork is the pull client's transport: a fuzzed video_url must not reach the network.
type refuseNetwork struct{}

func (refuseNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("fuzzing: no network")
}

// readWireRequest parses a request as net/http's server would, or reports false for bytes a
// server refuses before any handler sees them.
func readWireRequest(method, target, header string, body []byte) (*http.Request, bool) {
	var raw bytes.Buffer
	fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\nHost: sim.test\r\n", method, target)
	for _, line := range strings.Split(header, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.EqualFold(strings.TrimSpace(name), "Host") || strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			return nil, false
		}
		for i := 0; i < len(value); i++ {
			if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
				return nil, false // the server answers 400 to control characters in a field value
			}
		}
		raw.WriteString(line + "\r\n")
	}
	fmt.Fprintf(&raw, "Content-Length: %d\r\n\r\n", len(body))
	raw.Write(body)
	r, err := http.ReadRequest(bufio.NewReader(&raw))
	if err != nil || r.URL.Path == "" || r.URL.Path[0] != '/' || len(r.TransferEncoding) > 0 {
		return nil, false
	}
	r.RemoteAddr = "192.0.2.1:4711"
	return r, true
}

// Run fuzzes the simulator with f.
func (sf Fuzz) Run(f *testing.F) {
	for _, s := range sf.Seeds {
		f.Add(s[0], s[1], s[2], []byte(s[3]))
	}
	f.Fuzz(func(t *testing.T, method, target, header string, body []byte) {
		h := sf.NewSim(sim.Config{BaseURL: "http://sim.test", Now: func() time.Time { return fuzzClock },
			Rand: func() float64 { return 0.99 }, State: sim.NewMemoryState(func() time.Time { return fuzzClock }),
			PullClient: &http.Client{Transport: refuseNetwork{}},
			Accounts:   sim.StaticAccounts{FuzzToken: {ID: sf.Account, Username: "fuzzer", Behavior: sim.Behavior{ProcessingMS: -1}}}})
		serve := func(r *http.Request) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			return rec
		}
		vars := map[string]string{}
		if sf.Prepare != nil {
			vars = sf.Prepare(t, func(method, target, header, body string) *httptest.ResponseRecorder {
				r, ok := readWireRequest(method, target, header, []byte(body))
				if !ok {
					t.Fatalf("prepare: unreadable request %s %s", method, target)
				}
				rec := serve(r)
				if rec.Code >= 300 {
					t.Fatalf("prepare: %s %s answered %d: %s", method, target, rec.Code, rec.Body)
				}
				return rec
			})
		}
		for k, v := range vars {
			method = strings.ReplaceAll(method, "{"+k+"}", v)
			target = strings.ReplaceAll(target, "{"+k+"}", v)
			header = strings.ReplaceAll(header, "{"+k+"}", v)
			body = bytes.ReplaceAll(body, []byte("{"+k+"}"), []byte(v))
		}
		r, ok := readWireRequest(method, target, header, body)
		if !ok {
			return
		}
		rec := serve(r)
		if rec.Code >= 500 && (sf.Documented5xx == nil || !sf.Documented5xx(rec.Code, rec.Body.String())) {
			t.Fatalf("%s %s answered %d: %s", method, target, rec.Code, rec.Body)
		}
	})
}

// PathOf is the path and query of an absolute URL a simulator handed out.
func PathOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		t.Fatalf("prepare: URL %q", raw)
	}
	return u.RequestURI()
}

// DecodeInto decodes the JSON answer of a Prepare request into v.
func DecodeInto(t *testing.T, rec *httptest.ResponseRecorder, v any) {
	t.Helper()
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("prepare: %v in %s", err, rec.Body)
	}
}

// The header lines of the seeds' requests.
const (
	FuzzJSON   = "Authorization: Bearer tok\nContent-Type: application/json"
	FuzzBearer = "Authorization: Bearer tok"
	FuzzForm   = "Authorization: Bearer tok\nContent-Type: application/x-www-form-urlencoded"
)

// FuzzMultipart is a multipart body under boundary "fz" with plain fields and one file.
func FuzzMultipart(file string, fields ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, "--fz\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", fields[i], fields[i+1])
	}
	if file != "" {
		fmt.Fprintf(&b, "--fz\r\nContent-Disposition: form-data; name=%q; filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom\r\n", file)
	}
	b.WriteString("--fz--\r\n")
	return b.String()
}

// FuzzMultipartType is the header line of a FuzzMultipart body.
const FuzzMultipartType = "Content-Type: multipart/form-data; boundary=fz"
