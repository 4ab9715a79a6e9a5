package sendonce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestTickets(t *testing.T) {
	tests := []struct {
		name string
		// issuedAt is when the ticket was armed; a second ticket is then issued at t0, which
		// prunes the stale ones.
		issuedAt time.Time
		takes    int
		want     []bool
	}{
		{"taken once", t0, 2, []bool{true, false}},
		{"an hour old is still armed", t0.Add(-time.Hour), 1, []bool{true}},
		{"older than an hour is dropped", t0.Add(-time.Hour - time.Second), 1, []bool{false}},
		{"from a clock that went back is dropped", t0.Add(time.Hour + time.Second), 1, []bool{false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ts Tickets
			ticket := ts.Issue(tc.issuedAt)
			other := ts.Issue(t0)
			if ticket == "" || ticket == other {
				t.Fatalf("tickets %q and %q", ticket, other)
			}
			for i, want := range tc.want {
				if got := ts.Take(ticket); got != want {
					t.Errorf("take %d = %v; want %v", i+1, got, want)
				}
			}
			if !ts.Take(other) {
				t.Error("the other ticket is gone")
			}
		})
	}
	var ts Tickets
	if ts.Take("") || ts.Take("never-issued") {
		t.Error("took a ticket that was never issued")
	}
}

func TestAttemptReport(t *testing.T) {
	transient := provider.Transient(provider.CategoryRateLimited, 429, 1500*time.Millisecond, "slow down")
	permanent := provider.Permanent(provider.CategoryInvalidOptions, 400, "bad caption")
	tests := []struct {
		name    string
		pending *provider.Error
		sends   int
		armed   bool // the pending error's ticket is armed in this process
		want    *provider.Error
	}{
		{"transient reported", transient, 5, true, transient},
		{"transient gives up after max sends", transient, 6, true,
			&provider.Error{Category: provider.CategoryRateLimited, Status: 429, RetryAfter: 1500 * time.Millisecond, Message: "slow down (gave up after 6 attempts)"}},
		{"permanent reported as it is", permanent, 6, true, permanent},
		{"ticket not in this process: not reported, cleared", transient, 1, false, nil},
		{"nothing pending", nil, 1, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ts Tickets
			a := Attempt{Sends: tc.sends}
			if tc.pending != nil {
				a.Fail(&ts, t0, tc.pending)
			} else {
				a.Arm(&ts, t0)
			}
			if !tc.armed {
				ts = Tickets{} // a restarted process
			}
			got := a.Report(&ts, 6)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("Report = %#v; want %#v", got, tc.want)
			}
			if got == nil {
				if a.Pending != nil {
					t.Errorf("Pending %+v kept after Report returned nil", a.Pending)
				}
				if tc.armed && tc.pending == nil && !ts.Take(a.Ticket) {
					t.Error("Report consumed the ticket of an armed send")
				}
				return
			}
			// The same State stepped again: reported once only.
			if again := a.Report(&ts, 6); again != nil || a.Pending != nil {
				t.Errorf("second Report = %v, Pending %+v; want nil, nil", again, a.Pending)
			}
		})
	}
}

func TestNotPostedAndUnknown(t *testing.T) {
	classify := func(err error) *provider.Error {
		return provider.Permanent(provider.CategoryInternal, 0, "classified: %v", err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name        string
		ctx         context.Context
		err         error
		wantUnknown bool
		wantErr     string
		transient   bool
	}{
		{"media failed mid-body", context.Background(), fmt.Errorf("wrapped: %w", &SourceError{errors.New("disk gone")}), false,
			"reading the video for Acme failed mid-upload: disk gone", true},
		{"platform's answer", context.Background(), errors.New("refused"), false, "classified: refused", false},
		{"no answer", context.Background(), &UnknownError{errors.New("EOF")}, true, "", false},
		{"context ended", cancelled, errors.New("refused"), true, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unknown(tc.ctx, tc.err); got != tc.wantUnknown {
				t.Fatalf("Unknown = %v; want %v", got, tc.wantUnknown)
			}
			if tc.wantUnknown {
				return
			}
			e := NotPosted(tc.err, "Acme", classify)
			if e.Message != tc.wantErr || e.Transient != tc.transient {
				t.Errorf("NotPosted = %q (transient %v); want %q (transient %v)", e.Message, e.Transient, tc.wantErr, tc.transient)
			}
		})
	}
}

// media is a file part's source: size bytes of 'v', of which the reader yields only give
// (all when give < 0), or an error when opened.
func media(size, give int64, openErr error) Part {
	return Part{Name: "video", Filename: "video.mp4", ContentType: "video/mp4", Size: size,
		Open: func(context.Context, int64) (io.ReadCloser, error) {
			if openErr != nil {
				return nil, openErr
			}
			n := size
			if give >= 0 {
				n = give
			}
			return io.NopCloser(bytes.NewReader(bytes.Repeat([]byte("v"), int(n)))), nil
		}}
}

func TestPost(t *testing.T) {
	answer := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || int64(len(body)) != r.ContentLength {
			http.Error(w, fmt.Sprintf("read %d of %d: %v", len(body), r.ContentLength, err), http.StatusBadRequest)
			return
		}
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		rd := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		var got []string
		for {
			p, err := rd.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			got = append(got, fmt.Sprintf("%s|%s|%s|%d", p.FormName(), p.FileName(), p.Header.Get("Content-Type"), len(b)))
		}
		fmt.Fprint(w, strings.Join(got, ";"))
	}
	hangUp := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
		file    Part
		want    string // the answer, or the kind of error
	}{
		{"streamed with its exact length", answer, media(70_000, -1, nil),
			"caption|||2;payload_json||application/json|2;video|video.mp4|video/mp4|70000"},
		{"media cannot be opened", answer, media(10, -1, errors.New("gone")), "source"},
		{"media shorter than stored", answer, media(70_000, 100, nil), "source"},
		{"no connection", nil, media(10, -1, nil), "not sent"},
		{"connection dropped without an answer", hangUp, media(10, -1, nil), "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := "http://" + closedAddr(t) + "/secret-token/send"
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				defer srv.Close()
				url = srv.URL + "/secret-token/send"
			}
			f := NewForm(Part{Name: "caption", Value: "hi"}, Part{Name: "payload_json", Value: "{}", ContentType: "application/json"}, tc.file)
			resp, err := Post(context.Background(), http.DefaultClient, "Acme send", f, func(ctx context.Context, body io.Reader) (*http.Request, error) {
				return http.NewRequestWithContext(ctx, http.MethodPost, url, body)
			})
			var got string
			var se *SourceError
			var ue *UnknownError
			var pe *provider.Error
			switch {
			case err == nil:
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got = string(b)
			case errors.As(err, &se):
				got = "source"
			case errors.As(err, &ue):
				got = "unknown"
			case errors.As(err, &pe) && pe.Transient && pe.Category == provider.CategoryUpstreamUnavailable:
				got = "not sent"
			default:
				got = fmt.Sprintf("%T %v", err, err)
			}
			if got != tc.want {
				t.Fatalf("Post = %q; want %q", got, tc.want)
			}
			if err != nil && got != "source" {
				msg := err.Error()
				if pe != nil {
					msg = pe.Message
				}
				if strings.Contains(msg, "secret-token") || !strings.HasPrefix(msg, "Acme send: ") {
					t.Errorf("error %q: want it to start with the name and not carry the URL", msg)
				}
			}
		})
	}
}

// closedAddr is an address where nothing listens.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestFormContentLength(t *testing.T) {
	f := NewForm(Part{Name: "a", Value: "1"}, media(12345, -1, nil), Part{Name: "thumb", Filename: "t.jpg", ContentType: "image/jpeg", Size: 3,
		Open: func(context.Context, int64) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("jpg")), nil
		}})
	var buf bytes.Buffer
	if err := f.write(context.Background(), &buf, true); err != nil {
		t.Fatal(err)
	}
	if got := f.ContentLength(); got != int64(buf.Len()) {
		t.Errorf("ContentLength = %d; the body is %d bytes", got, buf.Len())
	}
}
