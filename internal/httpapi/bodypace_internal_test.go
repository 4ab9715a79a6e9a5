package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Only the time spent waiting for the client counts against it: a handler that stores what it
// read somewhere slow (here, pauses of three windows between reads of 8 KB) does not make a
// client that sent its body at once look slow, though by the clock the body went at about
// 50 KB/s, under the 100 KB/s asked for.
func TestPaceCountsOnlyWaitingForTheClient(t *testing.T) {
	const window = 50 * time.Millisecond
	s := &Server{pace: newPace(100<<10, window, time.Minute)}
	var readErr error
	var got int
	srv := httptest.NewServer(s.limitTime(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 8<<10)
		for {
			n, err := r.Body.Read(buf)
			got += n
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				http.Error(w, err.Error(), http.StatusRequestTimeout)
				return
			}
			time.Sleep(3 * window) // the slow storage
		}
	})))
	defer srv.Close()
	body := bytes.Repeat([]byte("v"), 64<<10)
	res, err := http.Post(srv.URL, "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || readErr != nil || got != len(body) {
		t.Fatalf("status %d, read %d of %d bytes, error %v", res.StatusCode, got, len(body), readErr)
	}
}
