package media_test

import (
	"os"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/render/rendertest"
)

// TestProbeProfileAndBitrate: the profile a file's decoder configuration declares, as ffprobe
// names it, and the file's average bitrate, for files ffmpeg makes.
func TestProbeProfileAndBitrate(t *testing.T) {
	rendertest.RequireFFmpeg(t)
	src := []string{"-f", "lavfi", "-i", "testsrc2=s=320x240:r=30:d=2"}
	cases := []struct {
		name, file string
		args       []string
		profile    string
	}{
		{"H.264 Constrained Baseline", "base.mp4", []string{"-c:v", "libx264", "-profile:v", "baseline", "-pix_fmt", "yuv420p"}, "Constrained Baseline"},
		{"H.264 Main", "main.mp4", []string{"-c:v", "libx264", "-profile:v", "main", "-pix_fmt", "yuv420p"}, "Main"},
		{"H.264 High", "high.mp4", []string{"-c:v", "libx264", "-profile:v", "high", "-pix_fmt", "yuv420p"}, "High"},
		{"H.264 High 4:2:2", "high422.mp4", []string{"-c:v", "libx264", "-pix_fmt", "yuv422p"}, "High 4:2:2"},
		{"HEVC Main 10", "hevc10.mp4", []string{"-c:v", "libx265", "-pix_fmt", "yuv420p10le", "-x265-params", "log-level=error"}, "Main 10"},
		{"VP9 Profile 0 in MP4", "vp9.mp4", []string{"-c:v", "libvpx-vp9", "-deadline", "realtime"}, "Profile 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := rendertest.Make(t, c.file, append(append([]string{}, src...), c.args...)...)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			info, err := media.Probe(f, st.Size())
			if err != nil {
				t.Fatal(err)
			}
			if info.VideoProfile != c.profile {
				t.Errorf("profile %q, want %q", info.VideoProfile, c.profile)
			}
			if want := int64(float64(st.Size()) * 8 / info.Duration.Seconds()); info.Duration < time.Second || info.Bitrate != want {
				t.Errorf("bitrate %d over %s, want %d", info.Bitrate, info.Duration, want)
			}
		})
	}
}
