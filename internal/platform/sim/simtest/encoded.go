package simtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/render/rendertest"
)

// Videos in the codecs mediatest does not write (it writes H.264 in MP4 and VP8 in WebM), made
// with ffmpeg for the simulators' codec rules; a test using them is skipped where ffmpeg is
// missing (rendertest.RequireFFmpeg). Each is a test pattern of width x height at 30 fps.

// VP9WebM is a VP9 video in WebM, without sound.
func VP9WebM(t testing.TB, width, height int, d time.Duration) []byte {
	t.Helper()
	return rendertest.MakeBytes(t, "vp9.webm", "-f", "lavfi", "-i", pattern(width, height, d),
		"-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "100k")
}

// HEVCMP4 is an HEVC (H.265) video in a fast-start MP4, tagged hvc1 as Apple devices write it,
// without sound.
func HEVCMP4(t testing.TB, width, height int, d time.Duration) []byte {
	t.Helper()
	return rendertest.MakeBytes(t, "hevc.mp4", "-f", "lavfi", "-i", pattern(width, height, d),
		"-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error", "-tag:v", "hvc1",
		"-movflags", "+faststart")
}

func pattern(width, height int, d time.Duration) string {
	return fmt.Sprintf("testsrc2=size=%dx%d:rate=30:duration=%.3f", width, height, d.Seconds())
}
