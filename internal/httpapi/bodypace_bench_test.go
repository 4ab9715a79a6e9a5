package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkUploadPace is the cost of the body's pace check on an upload: 100 MB posted over
// loopback to a handler that reads the body to the end, with limitTime around it ("paced") and
// without ("bare").
func BenchmarkUploadPace(b *testing.B) {
	const size = 100 << 20
	chunk := strings.Repeat("v", 1<<20)
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	s := &Server{pace: newPace(0, 0, 0)}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"bare", drain}, {"paced", s.limitTime(drain)}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			b.SetBytes(size)
			for b.Loop() {
				pr, pw := io.Pipe()
				go func() {
					for i := 0; i < size/len(chunk); i++ {
						io.WriteString(pw, chunk)
					}
					pw.Close()
				}()
				req, _ := http.NewRequest("POST", srv.URL, pr)
				req.ContentLength = size
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
		})
	}
}
