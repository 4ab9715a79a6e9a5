package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusRecorderReadFrom: a copy into the recorder (http.ServeContent of a file, for
// media pulled by platforms) reaches the client whole and is counted for the access log, both
// through the real writer's ReadFrom (sendfile) and through a writer that has none.
func TestStatusRecorderReadFrom(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name         string
		hideReader   bool // the real writer has no ReadFrom
		source       func() io.Reader
		wantReadFrom bool // the real writer's ReadFrom does the copy
	}{
		{"a file, through the connection's ReadFrom", false, func() io.Reader { f, _ := os.Open(path); return f }, true},
		{"a reader that writes itself", false, func() io.Reader { return strings.NewReader(string(data)) }, false},
		{"a writer without ReadFrom", true, func() io.Reader { f, _ := os.Open(path); return f }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := make(chan *statusRecorder, 1)
			var spy readFromSpy
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.hideReader {
					w = struct{ http.ResponseWriter }{w}
				} else {
					spy.ResponseWriter = w
					w = &spy
				}
				sr := &statusRecorder{ResponseWriter: w}
				src := tt.source()
				if c, ok := src.(io.Closer); ok {
					defer c.Close()
				}
				if _, err := io.Copy(sr, src); err != nil {
					t.Error(err)
				}
				rec <- sr
			}))
			defer srv.Close()
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("client read %d bytes (%v), want %d", len(got), err, len(data))
			}
			sr := <-rec
			if sr.status != http.StatusOK || sr.bytes != int64(len(data)) {
				t.Fatalf("recorded status %d, %d bytes; want 200, %d", sr.status, sr.bytes, len(data))
			}
			if spy.called != tt.wantReadFrom {
				t.Fatalf("the real writer's ReadFrom called: %v", spy.called)
			}
		})
	}
}

// readFromSpy is a response writer whose ReadFrom notes that it was used.
type readFromSpy struct {
	http.ResponseWriter
	called bool
}

func (s *readFromSpy) ReadFrom(r io.Reader) (int64, error) {
	s.called = true
	return s.ResponseWriter.(io.ReaderFrom).ReadFrom(r)
}
