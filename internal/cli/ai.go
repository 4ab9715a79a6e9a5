package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

// defaultAIWait bounds how long generate and stitch follow a job; the job goes on on the
// server when it runs out.
const defaultAIWait = 15 * time.Minute

func newAICmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ai",
		Short: "AI helpers: adapt a script per platform, storyboards, video clips, stitching (API)",
	}
	a := apiCommand(cmd)
	cmd.AddCommand(newAIAdaptCmd(a), newAIStoryboardCmd(a), newAIGenerateCmd(a), newAIStitchCmd(a))
	return cmd
}

// readTextArg is a text given inline or as a file ("-": standard input), read before any
// request.
func readTextArg(cmd *cobra.Command, inline, file, inlineFlag, fileFlag string) (string, error) {
	switch {
	case inline != "" && file != "":
		return "", usagef("give --%s or --%s, not both", inlineFlag, fileFlag)
	case inline != "":
		return inline, nil
	case file == "":
		return "", usagef("--%s (or --%s) is required", inlineFlag, fileFlag)
	}
	var b []byte
	var err error
	if file == "-" {
		b, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return "", usagef("--%s %s: %v", fileFlag, file, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usagef("--%s %s is empty", fileFlag, file)
	}
	return string(b), nil
}

func newAIAdaptCmd(a *apiFlags) *cobra.Command {
	var script, scriptFile, tone string
	var platforms []string
	var jev bool
	cmd := &cobra.Command{
		Use:   "adapt --script TEXT | --script-file FILE [--platforms ...] [--tone T] [--jev]",
		Short: "Write each platform's copy (hook, text, hashtags, title) from one script",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			text, err := readTextArg(cmd, script, scriptFile, "script", "script-file")
			if err != nil {
				return err
			}
			ps, err := parsePlatforms("platforms", platforms)
			if err != nil {
				return err
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			res, err := c.Adapt(cmd.Context(), client.AdaptRequest{Prompt: text, Platforms: ps, Tone: tone, IncludeJev: jev})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if a.json {
				return printJSON(out, res)
			}
			fmt.Fprintf(out, "model %s\n", res.Model)
			for _, p := range client.Platforms {
				cp, ok := res.Adapted[p]
				if !ok {
					continue
				}
				fmt.Fprintf(out, "\n== %s ==\n", p)
				tw := newTable(out)
				if cp.Title != "" {
					fmt.Fprintf(tw, "title\t%s\n", cp.Title)
				}
				fmt.Fprintf(tw, "hook\t%s\n", dash(cp.Hook))
				fmt.Fprintf(tw, "hashtags\t%s\n", dash(strings.Join(cp.Hashtags, " ")))
				if len(cp.Jev) > 0 {
					fmt.Fprintf(tw, "on screen\t%s\n", strings.Join(cp.Jev, " | "))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(out, "text:\n%s\n", indent(cp.Text, "  "))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&script, "script", "", "the script or concept")
	f.StringVar(&scriptFile, "script-file", "", "read the script from a file (- for standard input)")
	f.StringSliceVar(&platforms, "platforms", nil, "platforms, comma-separated (default: tiktok,instagram,youtube,threads,bluesky)")
	f.StringVar(&tone, "tone", "", "viral (default), engaging, educational, humorous or professional")
	f.BoolVar(&jev, "jev", false, "add the on-screen text lines of a jump-cut edit")
	return cmd
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func newAIStoryboardCmd(a *apiFlags) *cobra.Command {
	var req client.StoryboardRequest
	cmd := &cobra.Command{
		Use:   "storyboard --topic TEXT [--duration SECONDS] [--style S] [--camera C]",
		Short: "Break a topic into 5-second scenes (prompt, camera, timecode, audio cue)",
		Long: "Break a topic into consecutive 5-second scenes. Save it with --json to a file and render it with " +
			"`reelay ai stitch --storyboard-file FILE`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(req.Topic) == "" {
				return usagef("--topic is required")
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			res, err := c.CreateStoryboard(cmd.Context(), req)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if a.json {
				return printJSON(out, res)
			}
			fmt.Fprintf(out, "%d scenes, model %s\n\n", len(res.Storyboard.Scenes), res.Model)
			tw := newTable(out)
			fmt.Fprintln(tw, "TIME\tTITLE\tCAMERA\tPROMPT\tAUDIO")
			for _, s := range res.Storyboard.Scenes {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Timecode, dash(oneLine(s.Title, 30)), dash(oneLine(s.Camera, 24)),
					dash(oneLine(s.Prompt, 70)), dash(oneLine(s.AudioCue, 40)))
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.Topic, "topic", "", "the script or concept")
	f.IntVar(&req.DurationSeconds, "duration", 0, "length in seconds, 5 to 300 (default 30), rounded up to whole scenes")
	f.StringVar(&req.Style, "style", "", "visual style, e.g. cinematic")
	f.StringVar(&req.Camera, "camera", "", "camera movement, e.g. slow dolly-in")
	return cmd
}

// aiJobFlags are what generate and stitch share: where to save the video and how long to wait.
type aiJobFlags struct {
	aspect      string
	providerKey string
	output      string
	timeout     time.Duration
}

func (j *aiJobFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&j.aspect, "aspect", "", "aspect ratio: 9:16 (default) or 16:9")
	f.StringVar(&j.providerKey, "provider-key", "", "the hosted video model's key, for this call only (default: the server's)")
	f.StringVarP(&j.output, "output", "o", "", "save the video to this file")
	f.DurationVar(&j.timeout, "timeout", defaultAIWait, "stop waiting for the video after this long (0: no limit); the job goes on on the server")
}

// check finds a bad --output before any request: its folder must exist.
func (j *aiJobFlags) check() error {
	if j.aspect != "" && j.aspect != client.AspectVertical && j.aspect != client.AspectHorizontal {
		return usagef("--aspect %q: 9:16 or 16:9", j.aspect)
	}
	if j.output == "" {
		return nil
	}
	info, err := os.Stat(filepath.Dir(j.output))
	if err != nil || !info.IsDir() {
		return usagef("--output %s: its folder does not exist", j.output)
	}
	if info, err := os.Stat(j.output); err == nil && info.IsDir() {
		return usagef("--output %s is a folder", j.output)
	}
	return nil
}

// finish follows a started job to its end, saves the video with --output, and prints it.
func (j *aiJobFlags) finish(cmd *cobra.Command, a *apiFlags, c *client.Client, job *client.AIJob) error {
	stderr := cmd.ErrOrStderr()
	if !job.Done() {
		fmt.Fprintf(stderr, "job %s is running; waiting for it (it goes on on the server if this stops)\n", job.JobID)
		ctx := cmd.Context()
		if j.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, j.timeout)
			defer cancel()
		}
		ended, err := c.WaitAIJob(ctx, job)
		if err != nil {
			if ctx.Err() != nil && cmd.Context().Err() == nil {
				return &codedError{code: exitError, msg: fmt.Sprintf("job %s has not finished after %s; it goes on on the server (GET /api/v1/ai/jobs/%s)", job.JobID, j.timeout, job.JobID)}
			}
			return err
		}
		job = ended
	}
	if j.output != "" {
		n, err := download(cmd.Context(), c, job.VideoURL, j.output)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "saved %s (%s)\n", j.output, humanBytes(n))
	}
	out := cmd.OutOrStdout()
	if a.json {
		return printJSON(out, job)
	}
	if job.Duration > 0 {
		fmt.Fprintf(stderr, "video of %.1f s\n", job.Duration)
	}
	fmt.Fprintln(out, job.VideoURL)
	return nil
}

// download saves a media link to path through a temporary file beside it, so that a failed
// download leaves no partial video under the name asked for.
func download(ctx context.Context, c *client.Client, link, path string) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".part-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	n, err := c.DownloadMedia(ctx, link, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	return n, os.Rename(tmp.Name(), path)
}

func newAIGenerateCmd(a *apiFlags) *cobra.Command {
	var prompt, imageURL string
	var jf aiJobFlags
	cmd := &cobra.Command{
		Use:   "generate --prompt TEXT [--image-url URL] [--aspect 9:16|16:9] [--output FILE]",
		Short: "Generate a 5-second clip from a prompt or a picture (costs AI credits), and wait for it",
		Long: "Generate a 5-second clip and wait for it; prints its link (valid 7 days, usable as publish " +
			"--video), and saves it with --output.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(prompt) == "" {
				return usagef("--prompt is required")
			}
			if imageURL != "" && !isURL(imageURL) {
				return usagef("--image-url %q: an http(s) link to a JPEG, PNG or WebP picture", imageURL)
			}
			if err := jf.check(); err != nil {
				return err
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			job, err := c.GenerateVideo(cmd.Context(), client.GenerateVideoRequest{Prompt: prompt, ImageURL: imageURL,
				AspectRatio: jf.aspect, APIKey: jf.providerKey})
			if err != nil {
				return err
			}
			return jf.finish(cmd, a, c, job)
		},
	}
	cmd.Flags().StringVar(&prompt, "prompt", "", "what the clip shows")
	cmd.Flags().StringVar(&imageURL, "image-url", "", "a picture to animate (public http(s) JPEG, PNG or WebP)")
	jf.register(cmd)
	return cmd
}

func newAIStitchCmd(a *apiFlags) *cobra.Command {
	var file string
	var jf aiJobFlags
	cmd := &cobra.Command{
		Use:   "stitch --storyboard-file FILE [--aspect 9:16|16:9] [--output FILE]",
		Short: "Render a storyboard's scenes and join them into one MP4 (costs AI credits), and wait for it",
		Long: "Join scenes into one MP4: scenes with a videoUrl are used as they are, the others are generated from " +
			"their prompt. The file is what `reelay ai storyboard --json` prints, or {\"scenes\":[...]}, or a list " +
			"of scenes ({\"prompt\",\"videoUrl\",\"title\"}); - reads standard input.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("--storyboard-file is required")
			}
			raw, err := readTextArg(cmd, "", file, "storyboard", "storyboard-file")
			if err != nil {
				return err
			}
			scenes, err := parseScenes(raw)
			if err != nil {
				return usagef("--storyboard-file %s: %v", file, err)
			}
			if err := jf.check(); err != nil {
				return err
			}
			c, err := a.client(cmd)
			if err != nil {
				return err
			}
			job, err := c.StitchStoryboard(cmd.Context(), client.StitchRequest{Scenes: scenes, AspectRatio: jf.aspect, APIKey: jf.providerKey})
			if err != nil {
				return err
			}
			return jf.finish(cmd, a, c, job)
		},
	}
	cmd.Flags().StringVar(&file, "storyboard-file", "", "the scenes, as JSON (- for standard input)")
	jf.register(cmd)
	return cmd
}

// parseScenes reads a storyboard in any of the shapes stitch takes.
func parseScenes(raw string) ([]client.StitchScene, error) {
	var shapes struct {
		Storyboard *struct {
			Scenes []client.StitchScene `json:"scenes"`
		} `json:"storyboard"`
		Scenes []client.StitchScene `json:"scenes"`
	}
	var scenes []client.StitchScene
	trimmed := strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(trimmed, "["):
		if err := json.Unmarshal([]byte(trimmed), &scenes); err != nil {
			return nil, fmt.Errorf("not a JSON list of scenes: %w", err)
		}
	default:
		if err := json.Unmarshal([]byte(trimmed), &shapes); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		scenes = shapes.Scenes
		if shapes.Storyboard != nil {
			scenes = shapes.Storyboard.Scenes
		}
	}
	if len(scenes) == 0 {
		return nil, fmt.Errorf("no scenes in it")
	}
	for i, s := range scenes {
		if strings.TrimSpace(s.Prompt) == "" && s.VideoURL == "" {
			return nil, fmt.Errorf("scene %d has neither a prompt nor a videoUrl", i+1)
		}
	}
	return scenes, nil
}
