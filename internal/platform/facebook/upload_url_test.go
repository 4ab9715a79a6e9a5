package facebook

import "testing"

// The Page token goes only to Meta's upload host, or to the API's own host (a simulator).
func TestCheckUploadURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url, base string
		ok        bool
	}{
		{"https://rupload.facebook.com/video-upload/v26.0/1", DefaultBaseURL, true},
		{"http://rupload.facebook.com/video-upload/v26.0/1", DefaultBaseURL, false},
		{"https://evil.example/video-upload/v26.0/1", DefaultBaseURL, false},
		{"https://rupload.facebook.com.evil.example/x", DefaultBaseURL, false},
		{"http://127.0.0.1:8080/sandbox/facebook/video-upload/v26.0/1", "http://127.0.0.1:8080/sandbox/facebook/v26.0", true},
		{"http://127.0.0.1:9999/video-upload/v26.0/1", "http://127.0.0.1:8080/sandbox/facebook/v26.0", false},
		{"::not a url", DefaultBaseURL, false},
	} {
		if err := checkUploadURL(c.url, c.base); (err == nil) != c.ok {
			t.Errorf("checkUploadURL(%q, %q) = %v; want ok %v", c.url, c.base, err, c.ok)
		}
	}
}
