package web

import "testing"

func TestSafeNext(t *testing.T) {
	cases := map[string]string{
		"":                       "/",
		"/posts?status=failed":   "/posts?status=failed",
		"/posts/abc#x":           "/posts/abc#x",
		"https://evil.example/":  "/",
		"//evil.example/":        "/",
		"/\\evil.example":        "/",
		"\\\\evil.example":       "/",
		"javascript:alert(1)":    "/",
		"/signin?next=/x":        "/",
		"/ok\r\nSet-Cookie: x=1": "/",
		"posts":                  "/",
		"/%2F%2Fevil.example":    "/%2F%2Fevil.example",
		"/a\x00b":                "/",
	}
	for in, want := range cases {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
