package provider

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestWithoutURL(t *testing.T) {
	cause := errors.New("connection refused")
	err := &url.Error{Op: "Post", URL: "https://api.telegram.org/bot123:secret/sendVideo", Err: cause}
	if got := WithoutURL(err); got != cause {
		t.Errorf("WithoutURL(%v) = %v, want the cause alone", err, got)
	}
	if got := WithoutURL(cause); got != cause {
		t.Errorf("WithoutURL changed an error without a URL: %v", got)
	}
}

func TestAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "0123456789")
	}))
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/x?token=secret", nil)
	resp, raw, err := Answer(srv.Client(), req, 4, "P: GET /x")
	if err != nil || resp.StatusCode != http.StatusTeapot || string(raw) != "0123" {
		t.Errorf("Answer = %v, %q, %v; want 418 and the first 4 bytes", resp, raw, err)
	}
	srv.Close()
	_, _, err = Answer(srv.Client(), req, 4, "P: GET /x")
	var pe *Error
	if !errors.As(err, &pe) || !pe.Transient || pe.Category != CategoryUpstreamUnavailable || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "P: GET /x: ") {
		t.Errorf("Answer to a closed server = %v, want a transient upstream_unavailable error without the URL", err)
	}
}

func TestExcerpt(t *testing.T) {
	if got := Excerpt([]byte("  <html>\xff bad gateway</html>"), 21); got != "<html> bad gateway" {
		t.Errorf("Excerpt = %q", got)
	}
}

func TestDecode(t *testing.T) {
	resp := &http.Response{StatusCode: http.StatusOK}
	var out struct{ ID string }
	if err := Decode(resp, []byte(`{"ID":"7"}`), &out, "P: GET /x"); err != nil || out.ID != "7" {
		t.Errorf("Decode = %v, %+v", err, out)
	}
	if err := Decode(resp, []byte(`<html>`), nil, "P: GET /x"); err != nil {
		t.Errorf("Decode without out = %v, want nil", err)
	}
	err := Decode(resp, []byte(`<html>`), &out, "P: GET /x")
	var pe *Error
	if !errors.As(err, &pe) || !pe.Transient || pe.Status != http.StatusOK || !strings.Contains(err.Error(), "P: GET /x: unexpected answer: ") {
		t.Errorf("Decode of a page = %v, want a transient unexpected answer", err)
	}
}

func TestExtension(t *testing.T) {
	for ctype, want := range map[string]string{"video/mp4": ".mp4", "video/quicktime": ".mov", "video/webm": ".webm", "image/jpeg": ".jpg", "": ".mp4"} {
		if got := Extension(ctype); got != want {
			t.Errorf("Extension(%q) = %q, want %q", ctype, got, want)
		}
	}
}
