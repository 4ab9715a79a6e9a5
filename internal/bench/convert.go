package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/procstat"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/store"
)

// ConvertConfig describes `reelay bench convert`.
type ConvertConfig struct {
	// FFmpeg is the program both sides run ("" = ffmpeg on the PATH).
	FFmpeg string
	// RemuxBytes is the size (about) of the camera-like MP4, moov at the end, that is remuxed.
	RemuxBytes int64
	// Seconds is the length of the 1080x1920 clip that is re-encoded.
	Seconds int
	// Runs is how many times each side runs, the two taking turns.
	Runs int
	// TempDir holds the generated videos, the media store and the database ("" = the system's).
	TempDir string
	// Log, when set, is told what the bench is doing (it takes minutes).
	Log func(format string, args ...any)
}

// ConvertResult is what `reelay bench convert` measured.
type ConvertResult struct {
	Scenario string `json:"scenario"`
	// Path says what reelay's side runs.
	Path     string      `json:"path"`
	Remux    ConvertCase `json:"remux"`
	Reencode ConvertCase `json:"reencode"`
	// Memory is this process's peak resident set (VmHWM, ffmpeg's not included: it is a
	// child) over each case's runs, at the measured size and at a quarter of it.
	Memory  []ConvertMemory `json:"memory"`
	Targets Targets         `json:"targets"`
	MachineReport
}

// ConvertCase is one conversion measured against plain ffmpeg on the same file.
type ConvertCase struct {
	Conversion render.Conversion `json:"conversion"`
	Source     ConvertSource     `json:"source"`
	// Reference is the command the reference runs, with the file names shortened.
	Reference string `json:"reference"`
	// ReelaySeconds and ReferenceSeconds are the wall times of each run, in the order run.
	ReelaySeconds    []float64 `json:"reelay_seconds"`
	ReferenceSeconds []float64 `json:"reference_seconds"`
	ReelayMedian     float64   `json:"reelay_median_seconds"`
	ReferenceMedian  float64   `json:"reference_median_seconds"`
	// Ratio is the reelay median over the reference median.
	Ratio float64 `json:"ratio"`
	// ConvertSeconds, of the remux only, are render.Convert's alone on the same file, without
	// the job around it (the database, the second probe, the store's SHA-256 and rename):
	// where the time goes.
	ConvertSeconds []float64 `json:"convert_only_seconds,omitempty"`
	ConvertMedian  float64   `json:"convert_only_median_seconds,omitempty"`
	ConvertRatio   float64   `json:"convert_only_ratio,omitempty"`
	OutputBytes    int64     `json:"output_bytes"`
}

// ConvertSource is a generated source video.
type ConvertSource struct {
	Bytes         int64   `json:"bytes"`
	Seconds       float64 `json:"seconds"`
	Width         int     `json:"width"`
	Height        int     `json:"height"`
	MoovAfterMdat bool    `json:"moov_after_mdat"`
}

// ConvertMemory is the Go process's peak resident memory over the runs of one case at one
// source size, in MB (10^6 bytes); RSSBeforeMB is its resident set just before them.
type ConvertMemory struct {
	Case        string  `json:"case"`
	SourceBytes int64   `json:"source_bytes"`
	Seconds     float64 `json:"source_seconds"`
	Runs        int     `json:"runs"`
	RSSBeforeMB float64 `json:"rss_before_mb"`
	PeakRSSMB   float64 `json:"peak_rss_mb"`
}

// convertPath describes reelay's side of the measurement.
const convertPath = "publish.RenditionWorker.Work with a file:// media store and SQLite: read the rendition and its source, " +
	"LocalFile, render.Convert (probe, ffmpeg, probe), probe, media.Store.PutFileAt (a rename), record it ready"

// Targets of issue 32.
const (
	remuxTarget    = 1.3
	reencodeTarget = 1.1
	rssTarget      = 100
)

// remuxBitrate is the generated camera file's video bitrate (constant), about a phone's at
// 4K; the file's length follows from the size asked for.
const remuxBitrate = 80_000_000

// Convert measures reelay's conversions (a remux to move the moov to the front, a re-encode)
// against plain ffmpeg doing the same to the same file, the two taking turns, and this
// process's peak memory while it does.
func Convert(ctx context.Context, cfg ConvertConfig) (ConvertResult, error) {
	res := ConvertResult{Scenario: "convert", Path: convertPath}
	if cfg.Runs < 1 {
		cfg.Runs = 3
	}
	if cfg.FFmpeg == "" {
		cfg.FFmpeg = "ffmpeg"
	}
	logf := cfg.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "reelay-bench-convert-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	rig, err := newConvertRig(ctx, dir, cfg.FFmpeg)
	if err != nil {
		return res, err
	}
	defer rig.close()

	remuxSeconds := max(0.4, float64(cfg.RemuxBytes)*8/remuxBitrate)
	cases := []struct {
		name    string
		c       render.Conversion
		seconds float64
		gen     []string // the source's encoding
		ref     func(in, out string, info media.Info) []string
		alone   bool // time Convert alone too
		out     *ConvertCase
	}{
		{"remux", render.Conversion{}, remuxSeconds,
			// Constant bitrate (filler data included), so that the size follows from the length.
			[]string{"-c:v", "libx264", "-preset", "ultrafast", "-b:v", strconv.Itoa(remuxBitrate), "-minrate", strconv.Itoa(remuxBitrate),
				"-maxrate", strconv.Itoa(remuxBitrate), "-bufsize", strconv.Itoa(remuxBitrate), "-x264-params", "nal-hrd=cbr"},
			func(in, out string, _ media.Info) []string {
				return []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", in, "-c", "copy", "-movflags", "+faststart", out}
			}, true, &res.Remux},
		{"reencode", render.Conversion{Video: true, Audio: true}, float64(cfg.Seconds),
			// About a phone's bitrate at 1080p.
			[]string{"-c:v", "libx264", "-preset", "ultrafast", "-b:v", "10M"},
			func(in, out string, info media.Info) []string {
				return render.ConvertCommands(info, out, in, render.Conversion{Video: true, Audio: true}, "")[0]
			}, false, &res.Reencode},
	}
	for _, k := range cases {
		// A quarter of the size first, its memory alone; then the measured size.
		for _, part := range []float64{0.25, 1} {
			seconds := k.seconds * part
			src := filepath.Join(dir, fmt.Sprintf("%s-%g.mp4", k.name, seconds))
			logf("%s: generating a %.1f s 1080x1920 source", k.name, seconds)
			if err := generateVideo(ctx, cfg.FFmpeg, src, seconds, k.gen); err != nil {
				return res, err
			}
			source, err := rig.add(ctx, src)
			if err != nil {
				return res, err
			}
			runs := cfg.Runs
			if part < 1 {
				runs = 1 // memory only
			}
			before, err := resetPeakMemory()
			if err != nil {
				return res, err
			}
			var mine, ref, alone []float64
			var outBytes int64
			for i := range runs {
				reelay := func() error {
					d, n, err := rig.convert(ctx, source, k.c)
					mine, outBytes = append(mine, round3(d.Seconds())), n
					return err
				}
				plain := func() error {
					if part < 1 {
						return nil
					}
					out := filepath.Join(dir, "reference.mp4")
					defer os.Remove(out)
					d, err := runFFmpeg(ctx, cfg.FFmpeg, k.ref(source.path, out, source.info))
					ref = append(ref, round3(d.Seconds()))
					return err
				}
				convert := func() error {
					if part < 1 || !k.alone {
						return nil
					}
					out := filepath.Join(dir, "alone.mp4")
					defer os.Remove(out)
					start := time.Now()
					// The worker's own renderer, which has checked ffmpeg already (a new one
					// would run ffmpeg -version first).
					err := rig.worker.Converter.Convert(ctx, out, source.path, k.c, nil)
					alone = append(alone, round3(time.Since(start).Seconds()))
					return err
				}
				// The sides take turns going first, so that none always finds the machine
				// warmer (or busier).
				sides := []func() error{reelay, plain, convert}
				if i%2 == 1 {
					slices.Reverse(sides)
				}
				logf("%s: %.1f s source, run %d of %d", k.name, seconds, i+1, runs)
				for _, side := range sides {
					if err := side(); err != nil {
						return res, fmt.Errorf("%s: %w", k.name, err)
					}
				}
			}
			m, err := procstat.ReadMemory(os.Getpid())
			if err != nil {
				return res, err
			}
			res.Memory = append(res.Memory, ConvertMemory{Case: k.name, SourceBytes: source.blob.Size,
				Seconds: round3(source.info.Duration.Seconds()), Runs: runs, RSSBeforeMB: before, PeakRSSMB: m.HWMMB})
			if part < 1 {
				continue
			}
			*k.out = ConvertCase{Conversion: k.c, ReelaySeconds: mine, ReferenceSeconds: ref,
				ReelayMedian: median(mine), ReferenceMedian: median(ref), OutputBytes: outBytes,
				Reference: "ffmpeg " + strings.Join(shorten(k.ref(source.path, filepath.Join(dir, "reference.mp4"), source.info), dir), " "),
				Source: ConvertSource{Bytes: source.blob.Size, Seconds: round3(source.info.Duration.Seconds()),
					Width: source.info.Width, Height: source.info.Height, MoovAfterMdat: source.info.MoovAfterMdat}}
			if k.out.ReferenceMedian > 0 {
				k.out.Ratio = round3(k.out.ReelayMedian / k.out.ReferenceMedian)
				if len(alone) > 0 {
					k.out.ConvertSeconds, k.out.ConvertMedian = alone, median(alone)
					k.out.ConvertRatio = round3(k.out.ConvertMedian / k.out.ReferenceMedian)
				}
			}
		}
	}

	peak := 0.0
	for _, m := range res.Memory {
		peak = max(peak, m.PeakRSSMB)
	}
	res.Targets = Targets{
		"remux_ratio":    {Want: fmt.Sprintf("<= %g", remuxTarget), Met: res.Remux.Ratio > 0 && res.Remux.Ratio <= remuxTarget},
		"reencode_ratio": {Want: fmt.Sprintf("<= %g", reencodeTarget), Met: res.Reencode.Ratio > 0 && res.Reencode.Ratio <= reencodeTarget},
		"peak_rss_mb":    {Want: fmt.Sprintf("< %d", rssTarget), Met: peak > 0 && peak < rssTarget},
	}
	return res, nil
}

// Summary is the result in a line or two.
func (r ConvertResult) Summary() string {
	var mem []string
	for _, m := range r.Memory {
		mem = append(mem, fmt.Sprintf("%s of %.0f MB (%.0f s) %.1f MB", m.Case, float64(m.SourceBytes)/1e6, m.Seconds, m.PeakRSSMB))
	}
	c := func(name string, k ConvertCase) string {
		return fmt.Sprintf("%s of %.0f MB (%.0f s, %dx%d): reelay %.2f s vs ffmpeg %.2f s, ratio %.3f (medians of %d)",
			name, float64(k.Source.Bytes)/1e6, k.Source.Seconds, k.Source.Width, k.Source.Height,
			k.ReelayMedian, k.ReferenceMedian, k.Ratio, len(k.ReelaySeconds))
	}
	alone := ""
	if r.Remux.ConvertMedian > 0 {
		alone = fmt.Sprintf(" (render.Convert alone %.2f s, ratio %.3f)", r.Remux.ConvertMedian, r.Remux.ConvertRatio)
	}
	return fmt.Sprintf("convert: %s%s; %s; peak RSS of this process (ffmpeg apart): %s", c("remux", r.Remux), alone,
		c("re-encode", r.Reencode), strings.Join(mem, ", "))
}

// convertRig is reelay's side: a database, a file:// media store and the worker that makes
// renditions, as a server has them.
type convertRig struct {
	st     *store.Store
	ms     *media.Store
	worker *publish.RenditionWorker
	n      int
}

// convertSource is a source video stored in the rig.
type convertSource struct {
	blob media.Blob
	info media.Info
	path string // the stored file, which both sides read
}

func newConvertRig(ctx context.Context, dir, ffmpeg string) (*convertRig, error) {
	st, err := store.Open(ctx, filepath.Join(dir, "reelay.db"))
	if err != nil {
		return nil, err
	}
	ms, err := media.OpenStore(ctx, "file://"+filepath.Join(dir, "media"), []byte("bench-convert-signing-key-0123456"))
	if err != nil {
		st.Close()
		return nil, err
	}
	return &convertRig{st: st, ms: ms, worker: &publish.RenditionWorker{Store: st, Media: ms, Converter: render.New(ffmpeg),
		TempDir: dir}}, nil
}

func (r *convertRig) close() {
	r.ms.Close()
	r.st.Close()
}

// add stores the video at path as an upload would (and removes path).
func (r *convertRig) add(ctx context.Context, path string) (convertSource, error) {
	defer os.Remove(path)
	f, err := os.Open(path)
	if err != nil {
		return convertSource{}, err
	}
	defer f.Close()
	// Any size: the upload limit is not what is measured.
	s, err := media.IngestUpload(ctx, r.ms, f, 1<<40, media.VideoKinds)
	if err != nil {
		return convertSource{}, fmt.Errorf("store the source: %w", err)
	}
	i := s.Info
	_, _, err = r.st.ClaimMedia(ctx, store.Media{SHA256: s.Blob.SHA256, BlobKey: s.Blob.Key, Kind: i.Kind.Name,
		ContentType: s.Blob.ContentType, Size: s.Blob.Size, Width: i.Width, Height: i.Height, Duration: i.Duration})
	if err != nil {
		return convertSource{}, err
	}
	local, done, err := r.ms.LocalFile(ctx, s.Blob.Key, os.TempDir())
	if err != nil {
		return convertSource{}, err
	}
	done() // a file:// store's own file: nothing to remove
	return convertSource{blob: s.Blob, info: i, path: local}, nil
}

// convert makes a rendition of src by c as the make_rendition job does, and answers how long
// the job took and the rendition's size. Each run is a rendition of its own, whose file is
// deleted afterwards, so that every run stores its file anew.
func (r *convertRig) convert(ctx context.Context, src convertSource, c render.Conversion) (time.Duration, int64, error) {
	r.n++
	key := fmt.Sprintf("%s-run%d", publish.RenditionKey(src.blob.SHA256, c), r.n)
	conv, err := json.Marshal(c)
	if err != nil {
		return 0, 0, err
	}
	err = r.st.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.EnsureRendition(ctx, key, src.blob.SHA256, string(conv))
		return err
	})
	if err != nil {
		return 0, 0, err
	}
	job := &river.Job[publish.RenditionArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 3},
		Args: publish.RenditionArgs{Key: key}}
	start := time.Now()
	err = r.worker.Work(ctx, job)
	took := time.Since(start)
	if err != nil {
		return took, 0, err
	}
	// A conversion that cannot succeed fails the rendition, not the job.
	made, err := r.st.GetRendition(ctx, key)
	if err != nil {
		return took, 0, err
	}
	if made.Status != store.RenditionReady {
		return took, 0, fmt.Errorf("rendition %s: %s", made.Status, made.Error)
	}
	if err := r.ms.Delete(ctx, made.Output.BlobKey); err != nil {
		return took, 0, err
	}
	return took, made.Output.Size, nil
}

// generateVideo writes a 1080x1920 30 fps test picture with a tone, seconds long, encoded by
// enc, to path as a camera does: the moov box after the media.
func generateVideo(ctx context.Context, ffmpeg, path string, seconds float64, enc []string) error {
	d := strconv.FormatFloat(seconds, 'f', 3, 64)
	args := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-f", "lavfi", "-i", "testsrc2=s=1080x1920:r=30:d=" + d, "-f", "lavfi", "-i", "sine=f=440:r=48000:d=" + d},
		enc...)
	args = append(args, "-c:a", "aac", "-b:a", "128k", "-shortest", path)
	if _, err := runFFmpeg(ctx, ffmpeg, args); err != nil {
		return fmt.Errorf("generate the source: %w", err)
	}
	return nil
}

// runFFmpeg runs ffmpeg with args and answers how long it took.
func runFFmpeg(ctx context.Context, ffmpeg string, args []string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, ffmpeg, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr // errors only (-loglevel error)
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("ffmpeg: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return took, nil
}

// resetPeakMemory resets this process's peak resident set (VmHWM) to its resident set now,
// which it answers in MB: writing 5 to clear_refs does that (Linux 4.0 and later).
func resetPeakMemory() (float64, error) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("reset the peak memory: %w", err)
	}
	m, err := procstat.ReadMemory(os.Getpid())
	if err != nil {
		return 0, err
	}
	return m.RSSMB, nil
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return round3((s[n/2-1] + s[n/2]) / 2)
	}
	return s[len(s)/2]
}

// shorten writes the files under dir in args by their base names.
func shorten(args []string, dir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		prefix := ""
		if rest, ok := strings.CutPrefix(a, "file:"); ok {
			prefix, a = "file:", rest
		}
		if strings.HasPrefix(a, dir) {
			a = filepath.Base(a)
		}
		out[i] = prefix + a
	}
	return out
}
