package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim"
)

// TestCheckReceived: an ingest run counts only when every simulator recorded exactly one
// complete upload of the video, and published it, for the bench channel's account.
func TestCheckReceived(t *testing.T) {
	const size, sum = 1000, "aaaa"
	whole := sim.Upload{Account: "acct-yt", Bytes: size, SHA256: sum}
	pub := sim.Published{Account: "acct-yt", SHA256: sum}
	for _, c := range []struct {
		name string
		rec  sim.Introspection
		want string // "" for success, else part of the error
	}{
		{"whole and published", sim.Introspection{Uploads: []sim.Upload{whole}, Published: []sim.Published{pub}}, ""},
		{"another account's upload is not counted", sim.Introspection{
			Uploads:   []sim.Upload{whole, {Account: "someone", Bytes: 1, SHA256: "b"}},
			Published: []sim.Published{pub}}, ""},
		{"nothing", sim.Introspection{}, "0 complete uploads"},
		{"short upload", sim.Introspection{Uploads: []sim.Upload{{Account: "acct-yt", Bytes: size - 1, SHA256: sum}},
			Published: []sim.Published{pub}}, "1 other uploads"},
		{"other bytes", sim.Introspection{Uploads: []sim.Upload{{Account: "acct-yt", Bytes: size, SHA256: "bbbb"}},
			Published: []sim.Published{pub}}, "0 complete uploads"},
		{"uploaded twice", sim.Introspection{Uploads: []sim.Upload{whole, whole}, Published: []sim.Published{pub}}, "2 complete uploads"},
		{"not published", sim.Introspection{Uploads: []sim.Upload{whole}}, "0 published items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/v1/channels":
					json.NewEncoder(w).Encode(map[string]any{"channels": []map[string]string{{"id": "ch-yt", "external_account_id": "acct-yt"}}})
				case "/sandbox/youtube/_introspect":
					json.NewEncoder(w).Encode(c.rec)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			cl := NewClient(srv.URL, "key", 1)
			defer cl.Close()
			f := &Fixture{Platforms: []string{"youtube"}, groups: []group{{project: "p", channels: []string{"ch-yt"}}}}
			dests := []IngestDestination{{Platform: "youtube", Status: "published"}}
			err := f.checkReceived(context.Background(), cl, cl, dests, size, sum)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one saying %q", err, c.want)
			case c.want == "" && (dests[0].Received != IngestReceived{Uploads: 1, Published: 1}):
				t.Fatalf("received %+v", dests[0].Received)
			}
		})
	}
}
