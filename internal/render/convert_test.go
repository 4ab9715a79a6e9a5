package render

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media"
)

// TestConvertCommands: the commands a benchmark runs by hand are Convert's, a pass each, with
// the options every ffmpeg command of reelay starts with.
func TestConvertCommands(t *testing.T) {
	info := media.Info{Duration: time.Minute, FrameRate: 25}
	for _, c := range []struct {
		name string
		c    Conversion
		want []string // a part of each pass's command, in order
	}{
		{"remux", Conversion{}, []string{"-c:v copy -c:a copy -movflags +faststart -use_editlist 0 -f mp4 -progress pipe:1 -nostats file:out.mp4"}},
		{"re-encode", Conversion{Video: true, Audio: true}, []string{"-c:v libx264 -preset veryfast -profile:v high -g 50 -crf 20 -c:a aac"}},
		{"two passes", Conversion{Video: true, VideoBitrate: 4_000_000}, []string{
			"-b:v 4000000 -pass 1 -passlogfile log -an -f null -progress pipe:1 -nostats " + os.DevNull,
			"-b:v 4000000 -pass 2 -passlogfile log -c:a copy -movflags +faststart",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmds := ConvertCommands(info, "out.mp4", "in.mp4", c.c, "log")
			if len(cmds) != len(c.want) {
				t.Fatalf("%d commands, want %d: %q", len(cmds), len(c.want), cmds)
			}
			for i, cmd := range cmds {
				if !slices.Equal(cmd[:len(commonArgs)], commonArgs) || !slices.Contains(cmd, "file:in.mp4") {
					t.Errorf("pass %d: %q, want it to start with %q and read file:in.mp4", i+1, cmd, commonArgs)
				}
				if line := strings.Join(cmd, " "); !strings.Contains(line, c.want[i]) {
					t.Errorf("pass %d: %s\nwant it to hold %s", i+1, line, c.want[i])
				}
			}
		})
	}
}
