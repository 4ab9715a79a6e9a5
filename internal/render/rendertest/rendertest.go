// Package rendertest is what tests that run ffmpeg share.
package rendertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireFFmpeg skips a test on a machine without ffmpeg, or fails it when
// REELAY_TEST_REQUIRE_FFMPEG=1 (CI sets it, so that rendering is always tested there).
func RequireFFmpeg(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		if os.Getenv("REELAY_TEST_REQUIRE_FFMPEG") == "1" {
			t.Fatalf("ffmpeg is required (REELAY_TEST_REQUIRE_FFMPEG=1) but not found: %v", err)
		}
		t.Skipf("ffmpeg not found (%v); install it to run this test", err)
	}
}

// Make runs ffmpeg with args (its inputs and output options, without the output) to write a
// test file called name in a temporary directory of t, and returns the file's path. Tests make
// their videos this way, a few seconds long, rather than keeping them in testdata.
func Make(t testing.TB, name string, args ...string) string {
	t.Helper()
	RequireFFmpeg(t)
	out := filepath.Join(t.TempDir(), name)
	args = append(append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}, args...), out)
	if b, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("making %s with ffmpeg %v: %v\n%s", name, args, err, b)
	}
	return out
}

// MakeBytes is Make, answering the file's bytes.
func MakeBytes(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(Make(t, name, args...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
