package conform

import (
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
)

// Pinterest takes any ratio from 1:2 to 1.91:1, not only the three it recommends.
func TestPinterestAspectRatios(t *testing.T) {
	for _, c := range []struct {
		name          string
		width, height int
		refused       bool
	}{
		{"9:16", 1080, 1920, false},
		{"2:3", 1000, 1500, false},
		{"4:5", 1080, 1350, false},
		{"1:1", 1080, 1080, false},
		{"16:9", 1920, 1080, false},
		{"1:2", 1000, 2000, false},
		{"1.91:1", 1910, 1000, false},
		{"1:2.1, taller than 1:2", 1000, 2100, true},
		{"21:9, wider than 1.91:1", 2560, 1080, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, _ := registry.Describe(platform.Pinterest)
			got := Check(d, 20<<20, media.Info{Kind: media.KindMP4, VideoCodec: "h264", Duration: 10 * time.Second, Width: c.width, Height: c.height})
			if refused := len(got) > 0; refused != c.refused {
				t.Errorf("%dx%d refused %v, want %v: %v", c.width, c.height, refused, c.refused, got)
			}
			if c.refused && !strings.Contains(strings.Join(got, ";"), "Pinterest") {
				t.Errorf("the refusal does not name Pinterest: %v", got)
			}
		})
	}
}
