package render

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/media"
)

// Convert writes to dst (created or replaced only when it succeeds) the video at src changed
// as c says: its first video track and its first sound track, if any, in an MP4 with the moov
// box at the front and no edit list. A re-encode at a set bitrate (c.VideoBitrate) takes two
// passes. progress, when not nil, is told the share done, from 0 to 1, as ffmpeg reports it
// (about twice a second), one call at a time, from a goroutine of its own.
//
// Errors wrap ErrInput when ffmpeg cannot decode src, ErrUnavailable when it cannot run;
// a cancelled ctx stops ffmpeg and leaves nothing behind.
func (r *Renderer) Convert(ctx context.Context, dst, src string, c Conversion, progress func(fraction float64)) error {
	if err := r.ready(ctx); err != nil {
		return err
	}
	info, err := probe(src)
	if err != nil {
		return fmt.Errorf("render: convert: %w", err)
	}
	if progress == nil {
		progress = func(float64) {}
	}
	dir := filepath.Dir(dst)
	tmp, err := os.CreateTemp(dir, ".render-*.mp4")
	if err != nil {
		return fmt.Errorf("render: convert: %w", err)
	}
	tmp.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp.Name())
		}
	}()

	passes := 1
	var passlog string
	if c.Video && c.VideoBitrate > 0 {
		passes = 2
		// ffmpeg names the log files after this prefix; they share the temporary files'
		// prefix, so that a sweep after a crash finds them.
		passlog = strings.TrimSuffix(tmp.Name(), ".mp4") + "-pass"
		defer removeGlob(passlog + "*")
	}
	for pass := 1; pass <= passes; pass++ {
		out := "file:" + tmp.Name()
		if pass < passes {
			out = os.DevNull
		}
		args := c.passArgs(info, src, out, pass, passes, passlog)
		pw := &progressWriter{total: info.Duration, from: float64(pass-1) / float64(passes), span: 1 / float64(passes), report: progress}
		if err := r.runTo(ctx, args, []string{src}, pw); err != nil {
			return err
		}
	}
	// ffmpeg exits 0 even when every frame failed to decode, leaving an empty file.
	if out, err := probe(tmp.Name()); err != nil || (info.Duration > 0 && out.Duration <= 0) {
		return fmt.Errorf("render: convert: %w: ffmpeg wrote no video (%v)", ErrInput, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("render: convert: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("render: convert: %w", err)
	}
	ok = true
	progress(1)
	return nil
}

// ConvertCommands are the argument lists (after the program's name) of the ffmpeg commands,
// one a pass, that Convert runs to make out from src, a video probed as info, by c; passlog
// prefixes the log files of a two-pass encode. Convert itself writes to a temporary file
// beside dst and reads the progress ffmpeg writes to its standard output. The lists are
// exported so that a benchmark can run the very same commands by hand, as the reference
// reelay's conversions are measured against.
func ConvertCommands(info media.Info, out, src string, c Conversion, passlog string) [][]string {
	passes := 1
	if c.Video && c.VideoBitrate > 0 {
		passes = 2
	}
	cmds := make([][]string, 0, passes)
	for pass := 1; pass <= passes; pass++ {
		o := "file:" + out
		if pass < passes {
			o = os.DevNull
		}
		cmds = append(cmds, append(slices.Clone(commonArgs), c.passArgs(info, src, o, pass, passes, passlog)...))
	}
	return cmds
}

// passArgs are the arguments of pass (of passes) of a conversion from src to out, without the
// options every command shares (commonArgs).
func (c Conversion) passArgs(info media.Info, src, out string, pass, passes int, passlog string) []string {
	args := append([]string{"-i", "file:" + src}, c.outputArgs(info, pass, passes, passlog)...)
	return append(args, "-progress", "pipe:1", "-nostats", out)
}

// outputArgs are ffmpeg's output options for pass (of passes) of a conversion of a video
// probed as info.
func (c Conversion) outputArgs(info media.Info, pass, passes int, passlog string) []string {
	// The first picture and the first sound; data and subtitle tracks (a phone's timecode,
	// captions) have no place on the platforms.
	a := []string{"-map", "0:v:0", "-map", "0:a:0?", "-dn", "-sn"}
	if !c.Video {
		a = append(a, "-c:v", "copy")
	} else {
		fps := c.FrameRate
		if fps <= 0 {
			fps = info.FrameRate
		}
		if fps <= 0 {
			fps = FrameRate
		}
		a = append(a, "-vf", c.filters(), "-c:v", "libx264", "-preset", "veryfast", "-profile:v", "high",
			"-g", strconv.Itoa(int(math.Round(2*fps))))
		if c.VideoBitrate > 0 {
			a = append(a, "-b:v", strconv.FormatInt(c.VideoBitrate, 10), "-pass", strconv.Itoa(pass), "-passlogfile", passlog)
		} else {
			a = append(a, "-crf", "20")
		}
		if c.MaxVideoBitrate > 0 {
			a = append(a, "-maxrate", strconv.FormatInt(c.MaxVideoBitrate, 10), "-bufsize", strconv.FormatInt(2*c.MaxVideoBitrate, 10))
		}
	}
	if pass < passes {
		// The first pass only measures the picture.
		return append(a, "-an", "-f", "null")
	}
	if c.Audio {
		a = append(a, "-c:a", "aac", "-b:a", "128k")
		if c.AudioSampleRate > 0 {
			a = append(a, "-ar", strconv.Itoa(c.AudioSampleRate))
		}
		if c.AudioChannels > 0 {
			a = append(a, "-ac", strconv.Itoa(c.AudioChannels))
		}
	} else {
		a = append(a, "-c:a", "copy")
	}
	// use_editlist 0: the MP4 muxer shifts the timestamps instead of writing an edit list,
	// which Instagram and Threads refuse.
	return append(a, "-movflags", "+faststart", "-use_editlist", "0", "-f", "mp4")
}

// filters is the video filter chain of a re-encode: the frame rate first (fewer frames to
// scale), then the frame size, square pixels and 4:2:0.
func (c Conversion) filters() string {
	var f []string
	if c.FrameRate > 0 {
		f = append(f, "fps="+strconv.FormatFloat(c.FrameRate, 'f', -1, 64))
	}
	if w, h := c.Width, c.Height; w > 0 && h > 0 {
		switch c.Fit {
		case FitPad:
			f = append(f, fmt.Sprintf("scale=%d:%d:force_original_aspect_ratio=decrease:force_divisible_by=2", w, h),
				fmt.Sprintf("pad=%d:%d:(ow-iw)/2:(oh-ih)/2:color=black", w, h))
		case FitCrop:
			f = append(f, fmt.Sprintf("scale=%d:%d:force_original_aspect_ratio=increase", w, h), fmt.Sprintf("crop=%d:%d", w, h))
		default:
			f = append(f, fmt.Sprintf("scale=%d:%d", w, h))
		}
	}
	return strings.Join(append(f, "setsar=1", "format=yuv420p"), ",")
}

// progressWriter reads ffmpeg's -progress output (key=value lines) and reports how far the
// pass is, as a share of the whole conversion: from, plus span times the pass's share.
type progressWriter struct {
	total      time.Duration
	from, span float64
	report     func(float64)
	line       []byte
	last       float64
}

// maxProgressLine bounds a line kept while it is incomplete; ffmpeg's are short.
const maxProgressLine = 1 << 10

func (p *progressWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(p.line)+len(b) <= maxProgressLine {
				p.line = append(p.line, b...)
			}
			break
		}
		if len(p.line)+i <= maxProgressLine {
			p.line = append(p.line, b[:i]...)
			p.parse(string(p.line))
		}
		p.line, b = p.line[:0], b[i+1:]
	}
	return n, nil
}

func (p *progressWriter) parse(line string) {
	key, value, ok := strings.Cut(strings.TrimSpace(line), "=")
	if !ok || key != "out_time_us" || p.total <= 0 {
		return
	}
	us, err := strconv.ParseInt(value, 10, 64)
	if err != nil || us < 0 {
		return // "N/A" before the first frame
	}
	done := p.from + p.span*min(1, float64(us)/float64(p.total.Microseconds()))
	if done > p.last {
		p.last = done
		p.report(done)
	}
}

// removeGlob removes the files that match pattern.
func removeGlob(pattern string) {
	matches, _ := filepath.Glob(pattern)
	for _, m := range matches {
		os.Remove(m)
	}
}
