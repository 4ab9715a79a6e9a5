// Package render makes short vertical (or horizontal) video locally with ffmpeg: a prompt
// shown as typography over a moving gradient (TextClip), a picture with a slow zoom
// (ImageClip), and any number of videos normalised to one size, frame rate and stream
// layout and joined end to end (Join).
//
// It exists so that reelay can publish something from a text prompt or a few pictures
// without an outside video service. Every output is the same shape, an H.264/AAC MP4 at
// FrameRate fps with a stereo 48 kHz audio track (silent when there is nothing to hear),
// because platforms reject odd files and because clips of one shape can be joined.
//
// ffmpeg runs as a child process (never through a shell) and streams between files; no
// function here reads a video into memory. Outputs appear at their destination only when
// complete: ffmpeg writes a temporary file next to it, renamed on success.
package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/media"
)

// ErrUnavailable: ffmpeg cannot be run. Errors from Check (and from rendering, when the
// check fails) wrap it, name the path tried and say how to install ffmpeg.
var ErrUnavailable = errors.New("ffmpeg is not available")

// ErrInput: an input file cannot be decoded: not a picture or not a video, or corrupt.
// Errors wrap it with a short reason.
var ErrInput = errors.New("input file cannot be decoded")

// ClipDuration is the length of TextClip and ImageClip outputs.
const ClipDuration = 5 * time.Second

// FrameRate of every output, in frames per second.
const FrameRate = 30

// Clips are exact because their sources are: the background or the zoom lasts clipFrames
// frames and the silence clipSamples samples. ffmpeg's -t is only a guard against an
// endless render; -frames:v is not used, as it ends the output with the video and cuts
// the audio encoder's last frames.
const (
	clipFrames  = int(ClipDuration * FrameRate / time.Second)
	clipSamples = int(ClipDuration * 48000 / time.Second)
)

var clipSeconds = strconv.FormatFloat(ClipDuration.Seconds(), 'f', -1, 64)

// Dimensions returns the frame size of an aspect ratio: "9:16" is 1080×1920, "16:9" is
// 1920×1080; ok is false for anything else.
func Dimensions(aspect string) (width, height int, ok bool) {
	switch aspect {
	case "9:16":
		return 1080, 1920, true
	case "16:9":
		return 1920, 1080, true
	}
	return 0, 0, false
}

// checkTTL is how long Check trusts its last verdict: long enough that a request path can
// call it on every request, short enough that installing ffmpeg is noticed soon.
const checkTTL = time.Minute

// Renderer runs ffmpeg. It is safe for concurrent use; each call runs its own process.
type Renderer struct {
	path string

	mu        sync.Mutex
	checkedAt time.Time
	checkErr  error
	bin       string // path resolved by the last successful check
}

// New returns a renderer running the ffmpeg at path ("" looks up "ffmpeg" in PATH). It does
// not fail; Check tells whether ffmpeg can run.
func New(path string) *Renderer {
	if path == "" {
		path = "ffmpeg"
	}
	return &Renderer{path: path}
}

// Check reports whether ffmpeg can run: it looks the program up and runs `ffmpeg -version`.
// The verdict is cached for a minute. Errors wrap ErrUnavailable, except a cancelled ctx,
// which is returned as it is and not cached.
func (r *Renderer) Check(ctx context.Context) error {
	_, err := r.binary(ctx)
	return err
}

func (r *Renderer) binary(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.checkedAt.IsZero() && time.Since(r.checkedAt) < checkTTL {
		return r.bin, r.checkErr
	}
	bin, err := r.lookup(ctx)
	if ctx.Err() != nil {
		return "", fmt.Errorf("checking ffmpeg: %w", context.Cause(ctx))
	}
	r.checkedAt, r.bin, r.checkErr = time.Now(), bin, err
	return bin, err
}

func (r *Renderer) lookup(ctx context.Context) (string, error) {
	bin, err := exec.LookPath(r.path)
	if err != nil {
		return "", unavailable(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var out, stderr tail
	cmd := exec.CommandContext(ctx, bin, "-hide_banner", "-version")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		return "", unavailable(fmt.Errorf("running %s -version: %w%s", bin, err, stderr.reason(": ")))
	}
	// Some static builds leave out the GPL encoder; better to say so here than to fail
	// every render with "Unknown encoder".
	if !bytes.Contains(out.buf, []byte("--enable-libx264")) {
		return "", unavailable(fmt.Errorf("%s was built without libx264", bin))
	}
	return bin, nil
}

func unavailable(err error) error {
	return fmt.Errorf("%w: %w; install ffmpeg (Debian: apt-get install ffmpeg) or set REELAY_FFMPEG", ErrUnavailable, err)
}

// TextClip renders prompt as legible typography over a moving background: a ClipDuration
// H.264 MP4 at the aspect's dimensions, written to dst (created or replaced only when
// rendering succeeds). The background's colours come from a hash of the prompt, so the
// same prompt always gives the same clip.
func (r *Renderer) TextClip(ctx context.Context, dst, prompt, aspect string) error {
	w, h, ok := Dimensions(aspect)
	if !ok {
		return badAspect(aspect)
	}
	if err := r.ready(ctx); err != nil {
		return err
	}
	card, err := textCard(prompt, w, h)
	if err != nil {
		return fmt.Errorf("render: text clip: %w", err)
	}
	pngFile, err := os.CreateTemp(filepath.Dir(dst), ".render-text-*.png")
	if err != nil {
		return fmt.Errorf("render: text clip: %w", err)
	}
	defer os.Remove(pngFile.Name())
	err = writeCard(pngFile, card)
	if cerr := pngFile.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("render: text clip: writing the text image: %w", err)
	}

	// The gradient is drawn at a quarter of the size and scaled up: it is smooth, so
	// nothing is lost, and drawing it full size costs more than encoding the frame.
	bg := background(prompt)
	graph := fmt.Sprintf(
		"gradients=s=%dx%d:r=%d:d=%g:n=3:c0=%s:c1=%s:c2=%s:x0=%d:y0=%d:x1=%d:y1=%d:speed=0.003:seed=0,"+
			"scale=%d:%d:out_color_matrix=bt709:out_range=tv,format=yuv420p[bg];"+
			// The card fades in over half a second and rises into place, easing out.
			"[0:v]format=yuva420p,loop=loop=-1:size=1,fade=t=in:st=0:d=0.5:alpha=1[card];"+
			"[bg][card]overlay=x=(W-w)/2:y=(H-h)/2+%d*pow(1-t/%g\\,2):eval=frame:format=yuv420,format=yuv420p[v];"+
			"anullsrc=r=48000:cl=stereo,atrim=end_sample=%d[a]",
		w/4, h/4, FrameRate, ClipDuration.Seconds(), bg.colors[0], bg.colors[1], bg.colors[2], bg.x0*w/4, bg.y0*h/4, bg.x1*w/4, bg.y1*h/4,
		w, h, h/48, ClipDuration.Seconds(), clipSamples)
	args := []string{
		"-f", "png_pipe", "-framerate", strconv.Itoa(FrameRate), "-i", "file:" + pngFile.Name(),
		"-filter_complex", graph, "-map", "[v]", "-map", "[a]", "-t", clipSeconds,
	}
	return r.render(ctx, dst, args, encodeArgs, nil)
}

// gradient is a TextClip background: three colours and the corners its axis runs between
// (0 or 1 for each coordinate, as a fraction of the frame).
type gradient struct {
	colors         [3]string
	x0, y0, x1, y1 int
}

// background derives the gradient from the prompt's hash. The three hues step 40–80° from a
// hashed base, at middling saturation and low lightness, so that the colours are varied
// but never light enough to wash out white text.
func background(prompt string) gradient {
	sum := sha256.Sum256([]byte(prompt))
	hue := float64(sum[0]) / 256 * 360
	var g gradient
	for i := range g.colors {
		h := hue + float64(i)*(40+float64(sum[1]%40))
		g.colors[i] = hsl(h, 0.55+float64(sum[2+i]%20)/100, 0.30+float64(sum[5+i]%12)/100)
	}
	// One of the two diagonals, in either direction.
	switch sum[8] % 4 {
	case 0:
		g.x1, g.y1 = 1, 1
	case 1:
		g.x0, g.y0 = 1, 1
	case 2:
		g.x0, g.y1 = 1, 1
	case 3:
		g.x1, g.y0 = 1, 1
	}
	return g
}

// hsl returns the colour of hue h (degrees), saturation s and lightness l as ffmpeg's 0xRRGGBB.
func hsl(h, s, l float64) string {
	h = math.Mod(h, 360) / 60
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h, 2)-1))
	var rgb [3]float64
	switch int(h) {
	case 0:
		rgb = [3]float64{c, x, 0}
	case 1:
		rgb = [3]float64{x, c, 0}
	case 2:
		rgb = [3]float64{0, c, x}
	case 3:
		rgb = [3]float64{0, x, c}
	case 4:
		rgb = [3]float64{x, 0, c}
	default:
		rgb = [3]float64{c, 0, x}
	}
	m := l - c/2
	return fmt.Sprintf("0x%02x%02x%02x", byte(math.Round((rgb[0]+m)*255)), byte(math.Round((rgb[1]+m)*255)), byte(math.Round((rgb[2]+m)*255)))
}

// ImageClip renders the picture at imagePath (JPEG, PNG or WebP, any size) covering the
// frame (scaled to cover and centre-cropped) with a slow centred zoom, ClipDuration long,
// written to dst.
func (r *Renderer) ImageClip(ctx context.Context, dst, imagePath, aspect string) error {
	w, h, ok := Dimensions(aspect)
	if !ok {
		return badAspect(aspect)
	}
	info, err := probe(imagePath)
	if err != nil {
		return fmt.Errorf("render: image clip: %w", err)
	}
	if !info.Kind.IsImage() {
		return fmt.Errorf("render: image clip: %w: %s is a %s video, not a picture", ErrInput, filepath.Base(imagePath), info.Kind)
	}
	if err := r.ready(ctx); err != nil {
		return err
	}
	// zoompan crops whole pixels of its input, which makes a slow zoom judder; working on a
	// picture twice the output size halves the steps. The zoom is linear in the frame
	// number, from 1 to 1.15 on the last frame.
	graph := fmt.Sprintf(
		"[0:v]scale=%d:%d:force_original_aspect_ratio=increase:out_color_matrix=bt709:out_range=tv,format=yuv420p,crop=%d:%d,setsar=1,"+
			"zoompan=z='1+0.15*on/%d':x='iw/2-iw/zoom/2':y='ih/2-ih/zoom/2':d=%d:s=%dx%d:fps=%d,format=yuv420p[v];"+
			"anullsrc=r=48000:cl=stereo,atrim=end_sample=%d[a]",
		2*w, 2*h, 2*w, 2*h, clipFrames-1, clipFrames, w, h, FrameRate, clipSamples)
	args := []string{
		// The demuxer is named after the probed format, so ffmpeg neither guesses from the
		// file name nor reads a "%d" in it as an image-sequence pattern.
		"-f", info.Kind.Name + "_pipe", "-i", "file:" + imagePath,
		"-filter_complex", graph, "-map", "[v]", "-map", "[a]", "-t", clipSeconds,
	}
	return r.render(ctx, dst, args, encodeArgs, []string{imagePath})
}

// Join normalises every input video (any size, rotation, frame rate or pixel format, with or
// without audio) to the aspect's dimensions (scaled to fit and padded with black, square
// pixels), FrameRate fps, yuv420p H.264 and 48 kHz stereo AAC (silence for inputs without
// audio), and concatenates them in order into dst. Inputs must be local files.
//
// It runs one ffmpeg with the concat filter rather than normalising each input to a file
// and joining those with the concat demuxer: a stream copy of separately encoded AAC
// leaves encoder padding at each seam, which adds up to sound out of step with the
// picture, while the filter joins decoded samples exactly; and one pass encodes each
// frame once. The price is memory: every input's decoder is open throughout, about 50 MB
// each for 1080p video. So more than joinBatch inputs are joined in batches, each into an
// intermediate file whose sound is PCM, which has no padding to misalign; the batches are
// then concatenated copying their video and encoding the sound once.
func (r *Renderer) Join(ctx context.Context, dst string, inputs []string, aspect string) error {
	w, h, ok := Dimensions(aspect)
	if !ok {
		return badAspect(aspect)
	}
	if len(inputs) == 0 {
		return errors.New("render: join: no inputs")
	}
	infos := make([]media.Info, len(inputs))
	for i, in := range inputs {
		info, err := probe(in)
		if err != nil {
			return fmt.Errorf("render: join: input %d: %w", i+1, err)
		}
		if !info.Kind.IsVideo() || info.VideoCodec == "" {
			return fmt.Errorf("render: join: input %d: %w: %s is not a video", i+1, ErrInput, filepath.Base(in))
		}
		infos[i] = info
	}
	if err := r.ready(ctx); err != nil {
		return err
	}

	if len(inputs) <= joinBatch {
		return r.render(ctx, dst, joinArgs(inputs, infos, w, h), encodeArgs, inputs)
	}
	dir, err := os.MkdirTemp(filepath.Dir(dst), ".join-*")
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	defer os.RemoveAll(dir)
	var list strings.Builder
	for start := 0; start < len(inputs); start += joinBatch {
		end := min(start+joinBatch, len(inputs))
		part := filepath.Join(dir, fmt.Sprintf("part-%03d.mkv", start/joinBatch))
		args := append(joinArgs(inputs[start:end], infos[start:end], w, h), partArgs...)
		if err := r.run(ctx, append(args, "file:"+part), inputs[start:end]); err != nil {
			return err
		}
		fmt.Fprintf(&list, "file '%s'\n", filepath.Base(part))
	}
	listFile := filepath.Join(dir, "parts.txt")
	if err := os.WriteFile(listFile, []byte(list.String()), 0o600); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return r.render(ctx, dst, []string{"-f", "concat", "-safe", "0", "-i", "file:" + listFile}, concatArgs, nil)
}

// joinBatch is how many inputs one ffmpeg joins at most (a variable for tests): ffmpeg
// peaks near 460 MB joining four 1080p inputs, against 340 MB for one.
var joinBatch = 4

// joinArgs are the inputs and filter graph that normalise and concatenate inputs.
func joinArgs(inputs []string, infos []media.Info, w, h int) []string {
	var args []string
	var graph, concat strings.Builder
	for i, in := range inputs {
		args = append(args, "-i", "file:"+in)
		// Fit by display aspect ratio (dar), so that anamorphic video comes out with square
		// pixels; sizes are kept even for 4:2:0, and at least 2 for a sliver of a video.
		fmt.Fprintf(&graph,
			"[%d:v:0]setpts=PTS-STARTPTS,"+
				"scale=w='if(gt(dar,%[2]d/%[3]d),%[2]d,max(2,2*trunc(%[3]d*dar/2)))':h='if(gt(dar,%[2]d/%[3]d),max(2,2*trunc(%[2]d/dar/2)),%[3]d)':out_color_matrix=bt709:out_range=tv,"+
				"pad=%[2]d:%[3]d:(ow-iw)/2:(oh-ih)/2:black,setsar=1,fps=%[4]d,format=yuv420p[v%[1]d];",
			i, w, h, FrameRate)
		if infos[i].AudioCodec != "" {
			// async fills gaps in the audio's timestamps with silence (and trims overlaps),
			// keeping the sound in step with the picture.
			fmt.Fprintf(&graph, "[%d:a:0]asetpts=PTS-STARTPTS,aresample=48000:async=1,aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo[a%d];", i, i)
		} else {
			// Silence as long as the video. A container that does not record its duration
			// gets none, and the concat filter's padding (below) fills in.
			fmt.Fprintf(&graph, "anullsrc=r=48000:cl=stereo,atrim=end_sample=%d[a%d];", int64(infos[i].Duration.Seconds()*48000), i)
		}
		fmt.Fprintf(&concat, "[v%d][a%d]", i, i)
	}
	// The concat filter pads each segment's audio with silence to the length of its video,
	// except in the last segment; an empty segment at the end makes the last input like
	// the others, so that audio a little shorter than its video (recorders often stop
	// the two a few frames apart) does not end the output's audio track early.
	fmt.Fprintf(&graph, "color=s=%dx%d:r=%d,format=yuv420p,trim=end_frame=0[vend];anullsrc=r=48000:cl=stereo,atrim=end_sample=0[aend];", w, h, FrameRate)
	fmt.Fprintf(&concat, "[vend][aend]concat=n=%d:v=1:a=1[v][a]", len(inputs)+1)
	return append(args, "-filter_complex", graph.String()+concat.String(), "-map", "[v]", "-map", "[a]")
}

func badAspect(aspect string) error {
	return fmt.Errorf("render: unknown aspect ratio %q (want 9:16 or 16:9)", aspect)
}

// probe reads an input's format with reelay's own prober, which knows exactly the formats
// reelay accepts and reads only headers.
func probe(path string) (media.Info, error) {
	info, _, err := media.ProbeFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return media.Info{}, err
		}
		return media.Info{}, fmt.Errorf("%w: %s: %w", ErrInput, filepath.Base(path), err)
	}
	return info, nil
}

// ready checks ctx and ffmpeg before any file is written.
func (r *Renderer) ready(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if err := r.Check(ctx); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return nil
}

// encodeArgs are the output options every function shares: H.264 High at CRF 20 with the
// veryfast preset (on a two-core machine about real time for 1080p, and smaller files than
// the faster presets at the same quality), a keyframe every two seconds, BT.709 tags,
// stereo AAC and the index at the front so that playback can start while downloading.
var encodeArgs = []string{
	"-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-profile:v", "high", "-pix_fmt", "yuv420p",
	"-r", strconv.Itoa(FrameRate), "-g", strconv.Itoa(2 * FrameRate),
	"-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv",
	"-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", "2",
	"-movflags", "+faststart", "-f", "mp4",
}

// partArgs encode a batch of a long join: the video as encodeArgs do, the sound as PCM.
var partArgs = append(slices.Clone(encodeArgs[:slices.Index(encodeArgs, "-c:a")]),
	"-c:a", "pcm_s16le", "-ar", "48000", "-ac", "2", "-f", "matroska")

// concatArgs join the batches: their video copied, their sound encoded once.
var concatArgs = []string{"-c:v", "copy", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-f", "mp4"}

// render runs ffmpeg with args (inputs and filters) and the output options out into a
// temporary file next to dst, checks the result and renames it to dst. inputs are the
// caller's files, to blame when ffmpeg cannot decode them.
func (r *Renderer) render(ctx context.Context, dst string, args, out, inputs []string) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".render-*.mp4")
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	tmp.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp.Name())
		}
	}()

	args = append(append(args, out...), "file:"+tmp.Name())
	if err := r.run(ctx, args, inputs); err != nil {
		return err
	}
	// ffmpeg exits 0 even when every frame failed to decode, leaving an empty file.
	info, err := probe(tmp.Name())
	if err != nil || info.Duration <= 0 {
		if len(inputs) > 0 {
			return fmt.Errorf("render: %w: ffmpeg decoded no frames from the input", ErrInput)
		}
		return fmt.Errorf("render: ffmpeg wrote no video (%v)", err)
	}
	// CreateTemp makes the file private; the output is an ordinary file.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	ok = true
	return nil
}

func (r *Renderer) run(ctx context.Context, args, inputs []string) error {
	return r.runTo(ctx, args, inputs, nil)
}

// commonArgs come first in every ffmpeg command: no keyboard, errors only, and an existing
// output file replaced.
var commonArgs = []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}

// runTo runs ffmpeg with args, its standard output going to stdout (discarded when nil).
// inputs are the caller's files, to blame when ffmpeg cannot decode them.
func (r *Renderer) runTo(ctx context.Context, args, inputs []string, stdout io.Writer) error {
	bin, err := r.binary(ctx)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	args = append(slices.Clone(commonArgs), args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr tail
	cmd.Stderr, cmd.Stdout = &stderr, stdout
	// ffmpeg has no children, but should one ever hold stderr open, Wait must not hang.
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("render: ffmpeg stopped: %w", context.Cause(ctx))
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &exit):
		// The program vanished or lost its permissions since Check.
		return fmt.Errorf("render: %w", unavailable(err))
	case blamesInput(stderr.String(), inputs):
		return fmt.Errorf("render: %w%s", ErrInput, stderr.reason(": "))
	}
	return fmt.Errorf("render: ffmpeg failed (%v)%s", err, stderr.reason(": "))
}

// blamesInput tells, from ffmpeg's error output, a file it could not read or decode from
// a failure of its own (a full disk, an encoder error). ffmpeg names the input in most such
// messages; the phrases catch decoder errors that do not.
func blamesInput(stderr string, inputs []string) bool {
	for _, in := range inputs {
		if strings.Contains(stderr, in) {
			return true
		}
	}
	for _, s := range []string{"Invalid data found", "Error while decoding", "could not find codec parameters", "moov atom not found", "decode_slice", "Decoding error"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// tail keeps the last few kilobytes written to it: ffmpeg's reason for failing is at the
// end, and a corrupt input can make it print a line per frame.
type tail struct{ buf []byte }

const tailSize = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > tailSize {
		p = p[len(p)-tailSize:]
	}
	if over := len(t.buf) + len(p) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

func (t *tail) String() string { return string(t.buf) }

// genericLines are what ffmpeg prints after the actual error.
var genericLines = []string{"Conversion failed!", "Exiting normally", "Last message repeated", "Error marking filters as finished", "Cannot determine format of input stream"}

// reason returns the last line of the output that says something (ffmpeg ends with generic
// lines such as "Conversion failed!"), prefixed with sep, or "" when there is none.
func (t *tail) reason(sep string) string {
	lines := strings.Split(strings.TrimSpace(t.String()), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		// "[mjpeg @ 0x55d0…] " names a decoder instance by its address: noise to a reader.
		if strings.HasPrefix(line, "[") {
			if _, rest, ok := strings.Cut(line, "] "); ok && strings.Contains(line[:len(line)-len(rest)], " @ 0x") {
				line = rest
			}
		}
		if line == "" || slices.ContainsFunc(genericLines, func(g string) bool { return strings.HasPrefix(line, g) }) {
			continue
		}
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		return sep + line
	}
	return ""
}
