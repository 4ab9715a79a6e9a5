// Package rendertest is what tests that run ffmpeg share.
package rendertest

import (
	"os"
	"os/exec"
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
