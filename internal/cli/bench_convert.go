package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/internal/bench"
)

func newBenchConvertCmd() *cobra.Command {
	var (
		cfg     bench.ConvertConfig
		size    string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "convert",
		Short: "Remux and re-encode a video as reelay makes renditions; compare with plain ffmpeg on the same file",
		Long: "Generate with ffmpeg a 1080x1920 MP4 of about --size bytes with its moov box at the end, as cameras write " +
			"them, and a --seconds long 1080x1920 clip, and make a rendition of each as the make_rendition job does " +
			"(publish.RenditionWorker on a fresh SQLite database and a file:// media store: the file read in place, " +
			"render.Convert, the result probed and stored): a remux that moves the moov to the front (the zero " +
			"Conversion) of the first, a re-encode to H.264 and AAC of the second. Each is timed against plain ffmpeg " +
			"on the same file in the same run, --runs times each, the two taking turns: `ffmpeg -i in -c copy " +
			"-movflags +faststart out` for the remux, the very command Convert runs for the re-encode. The ratio of " +
			"the medians is reelay's overhead.\n\n" +
			"It also reports this process's peak resident memory (VmHWM from /proc, reset before each case; ffmpeg, a " +
			"child, is not counted) for each case at the measured size and at a quarter of it. Linux only.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			n, err := parseSize(size)
			if err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if n < 1e6 || cfg.Seconds < 1 || cfg.Runs < 1 {
				return errors.New("--size must be at least 1MB, --seconds and --runs at least 1")
			}
			if runtime.GOOS != "linux" {
				return errors.New("bench convert reads its memory from /proc: Linux only")
			}
			cfg.RemuxBytes = n
			stderr := cmd.ErrOrStderr()
			if verbose {
				cfg.Log = func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
			}
			machine := &bench.Machine{Workload: bench.Yardstick, Before: bench.MeasureSpeed(ctx, yardstickTime)}
			res, err := bench.Convert(ctx, cfg)
			machine.After = bench.MeasureSpeed(ctx, yardstickTime)
			res.SetMachine(machine)
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if jerr := enc.Encode(res); jerr != nil && err == nil {
				err = jerr
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "%s\n(%s; GOMAXPROCS %d, %d CPUs, %s, %s/%s; %s)\n", res.Summary(), res.Path,
				runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, machine)
			if missed := res.Targets.Missed(); len(missed) > 0 {
				fmt.Fprintf(stderr, "targets missed: %s\n", strings.Join(missed, ", "))
			} else {
				fmt.Fprintln(stderr, "targets met")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "size", "100MB", "size of the video remuxed: bytes, or with a unit (kB, MB, GB; KiB, MiB, GiB)")
	f.IntVar(&cfg.Seconds, "seconds", 60, "length of the clip re-encoded, in seconds")
	f.IntVar(&cfg.Runs, "runs", 3, "runs of each side of each case, taking turns")
	f.StringVar(&cfg.FFmpeg, "ffmpeg", "ffmpeg", "the ffmpeg program both sides run")
	f.BoolVarP(&verbose, "verbose", "v", false, "say on stderr what is being done (a run takes minutes)")
	return cmd
}
