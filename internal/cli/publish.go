package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
)

// publishFlags are the flags of `reelay publish`.
type publishFlags struct {
	video, thumbnail string
	platforms        []string
	channels         []string
	title, caption   string
	at               string
	project          string

	youtubePrivacy  string
	youtubeKids     bool
	tiktokMode      string
	tiktokPrivacy   string
	tiktokAIGC      bool
	instagramFeed   bool
	pinterestBoard  string
	redditSubreddit string
	redditTitle     string
	options         []string
	platformJSON    []string
	dryRun          bool
	allowDuplicate  bool
	fit, transcode  string
	noWait          bool
	idempotencyKey  string
	timeout         time.Duration
}

func newPublishCmd() *cobra.Command {
	var pf publishFlags
	cmd := &cobra.Command{
		Use:   "publish --video FILE|URL [flags]",
		Short: "Publish or schedule a video to a project's channels (API)",
		Long: `Publish or schedule a video through the HTTP API (REELAY_URL, REELAY_API_KEY).

--video is a local file, checked before any request and streamed (never read into memory), or
an http(s) link the server fetches. The upload shows a progress bar on a terminal and a line
at every tenth elsewhere. Unless --no-wait, each destination's state is then shown live on
stderr until every one has settled, and the post is printed on stdout (--json: as
GET /posts/{id} answers it). A scheduled post (--at) is printed at once.

Every publish carries an Idempotency-Key (printed on stderr; set one with --idempotency-key)
that the client sends unchanged on each of its retries, so a flaky network never posts twice;
run the same command with the same key to repeat it safely.

Per-platform settings: the common ones have flags (--youtube-privacy, --tiktok-mode, ...);
any other field is --option platform.field=value (true/false become booleans;
platform.field:=JSON takes a JSON value), or a whole object with --platform-json
platform='{"field":...}'.

Exit codes: 0 published (or scheduled, or accepted with --no-wait), 1 an error answer or a
wait that ran out, 2 a bad command line (nothing sent), 3 server unreachable, 4 API key
refused, 5 the post settled with failed destinations.`,
		Example: `  reelay publish --video clip.mp4 --platforms youtube,tiktok --title "Launch day" --tiktok-mode direct
  reelay publish --video https://example.com/clip.mp4 --channels CH1,CH2 --at +2h
  reelay publish --video clip.mp4 --platforms reddit --reddit-subreddit videos --option reddit.nsfw=false --json`,
		Args: cobra.NoArgs,
	}
	a := apiCommand(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return runPublish(cmd, a, &pf) }

	f := cmd.Flags()
	f.StringVar(&pf.video, "video", "", "the video: a local MP4, MOV or WebM file, or an http(s) URL (required)")
	f.StringVar(&pf.thumbnail, "thumbnail", "", "a thumbnail: a local JPEG, PNG or WebP file, or an http(s) URL")
	f.StringSliceVar(&pf.platforms, "platforms", nil, "platforms to publish to, comma-separated (default: the server's, youtube,instagram,tiktok); the project's channels on them are used")
	f.StringSliceVar(&pf.channels, "channels", nil, "channel ids to publish to, comma-separated (instead of --platforms)")
	f.StringVar(&pf.title, "title", "", "title (YouTube's, and the default caption), at most 100 characters; without it YouTube's is made from the caption's first line, else the video's file name")
	f.StringVar(&pf.caption, "caption", "", "caption: description and hashtags, at most 5000 characters")
	f.StringVar(&pf.at, "at", "", "schedule: an RFC 3339 time with its offset (2026-12-01T09:00:00+01:00) or a delay (+2h, +30m, +1d)")
	f.StringVar(&pf.project, "project", "", "project id or name (default: the account's only project)")
	f.StringVar(&pf.youtubePrivacy, "youtube-privacy", "", "YouTube privacy: public, unlisted or private")
	f.BoolVar(&pf.youtubeKids, "youtube-made-for-kids", false, "mark the YouTube video as made for kids")
	f.StringVar(&pf.tiktokMode, "tiktok-mode", "", "TikTok mode: inbox (the app finishes it, the default) or direct")
	f.StringVar(&pf.tiktokPrivacy, "tiktok-privacy", "", "TikTok privacy: PUBLIC_TO_EVERYONE, MUTUAL_FOLLOW_FRIENDS or SELF_ONLY")
	f.BoolVar(&pf.tiktokAIGC, "tiktok-aigc", false, "label the TikTok video as made with AI tools")
	f.BoolVar(&pf.instagramFeed, "instagram-share-to-feed", true, "share the Instagram reel to the feed too")
	f.StringVar(&pf.pinterestBoard, "pinterest-board", "", "Pinterest board id (see `reelay channels options`)")
	f.StringVar(&pf.redditSubreddit, "reddit-subreddit", "", "subreddit to post to, without r/")
	f.StringVar(&pf.redditTitle, "reddit-title", "", "Reddit post title")
	f.StringArrayVar(&pf.options, "option", nil, "a platform field: platform.field=value, or platform.field:=JSON (repeatable)")
	f.StringArrayVar(&pf.platformJSON, "platform-json", nil, `a platform's whole object: platform='{"field":"value"}' (repeatable)`)
	f.BoolVar(&pf.dryRun, "dry-run", false, "run every check and show what each destination would receive; nothing is stored or sent")
	f.BoolVar(&pf.allowDuplicate, "allow-duplicate", false, "publish even if the same video and text went to the same channel in the last 10 minutes")
	f.StringVar(&pf.fit, "fit", "", "what may be done to a video whose aspect ratio a platform does not take: refuse (default), pad or crop")
	f.StringVar(&pf.transcode, "transcode", "", "auto (default: convert the video for each platform that would refuse it) or off (refuse instead)")
	f.BoolVar(&pf.noWait, "no-wait", false, "print the post as soon as the server has accepted it, without following its destinations")
	f.StringVar(&pf.idempotencyKey, "idempotency-key", "", "the publish's Idempotency-Key (default: a new random one, printed on stderr)")
	f.DurationVar(&pf.timeout, "timeout", defaultWatchTimeout, "stop following the destinations after this long (0: no limit)")
	return cmd
}

func runPublish(cmd *cobra.Command, a *apiFlags, pf *publishFlags) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()

	// Every check of the command line comes before the first request.
	req := client.PublishRequest{Title: pf.title, Caption: pf.caption, ChannelIDs: pf.channels, AllowDuplicate: pf.allowDuplicate,
		Fit: client.Fit(pf.fit), Transcode: pf.transcode}
	if pf.video == "" {
		return usagef("--video is required: a local file or an http(s) URL")
	}
	if isURL(pf.video) {
		req.VideoURL = pf.video
	} else {
		up, f, err := openUpload("video", pf.video)
		if err != nil {
			return err
		}
		defer f.Close()
		req.Video = up
	}
	if pf.thumbnail != "" {
		if isURL(pf.thumbnail) {
			req.ThumbnailURL = pf.thumbnail
		} else {
			up, f, err := openUpload("thumbnail", pf.thumbnail)
			if err != nil {
				return err
			}
			defer f.Close()
			req.Thumbnail = up
		}
	}
	if pf.at != "" {
		at, err := parseAt(pf.at, time.Now())
		if err != nil {
			return err
		}
		req.ScheduledFor = &at
	}
	platforms, err := parsePlatforms("platforms", pf.platforms)
	if err != nil {
		return err
	}
	req.Platforms = platforms
	settings, err := pf.settings(cmd)
	if err != nil {
		return err
	}
	if len(settings) > 0 {
		req.Extra = map[string]any{}
		for p, obj := range settings {
			req.Extra[p] = obj
		}
	}

	c, err := a.client(cmd)
	if err != nil {
		return err
	}
	if req.ProjectID, err = resolveProject(ctx, c, pf.project); err != nil {
		return err
	}

	progress := newUploadProgress(stderr, isTerminal(stderr))
	if req.Video != nil || req.Thumbnail != nil {
		req.Progress = progress.update
	}
	if pf.dryRun {
		dr, err := c.DryRun(ctx, req)
		progress.done()
		if err != nil {
			return err
		}
		return printDryRun(stdout, a.json, dr)
	}

	req.IdempotencyKey = pf.idempotencyKey
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = uuid.NewString()
	}
	fmt.Fprintf(stderr, "idempotency key %s (to repeat this publish safely, run it again with --idempotency-key %s)\n",
		req.IdempotencyKey, req.IdempotencyKey)
	// The server answers at once; the destinations are then followed here, where each change
	// can be shown.
	req.Wait = new(time.Duration)
	res, err := c.Publish(ctx, req)
	progress.done()
	if err != nil {
		return err
	}
	if res.Replayed {
		fmt.Fprintf(stderr, "this idempotency key was used before: post %s is that publish, and nothing new was sent\n", res.PostID)
	}

	if res.Status == client.PostScheduled || pf.noWait {
		post, err := c.GetPost(ctx, res.PostID)
		if err != nil {
			return err
		}
		if res.Status == client.PostScheduled && !a.json {
			fmt.Fprintf(stderr, "post %s is scheduled for %s\n", post.ID, timeCell(post.ScheduledFor))
		}
		return printPost(stdout, a.json, post)
	}
	view := newStatusView(stderr, isTerminal(stderr))
	post, err := watchPost(ctx, c, res.PostID, nil, view, pf.timeout)
	if err != nil {
		return err
	}
	if err := printPost(stdout, a.json, post); err != nil {
		return err
	}
	return outcome(post)
}

// settings gathers the per-platform objects from the typed flags, then --platform-json, then
// --option, each over the one before.
func (pf *publishFlags) settings(cmd *cobra.Command) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	set := func(platform, field string, v any) {
		if out[platform] == nil {
			out[platform] = map[string]any{}
		}
		out[platform][field] = v
	}
	fs := cmd.Flags()
	for flag, target := range map[string][2]string{
		"youtube-privacy":         {"youtube", "privacy_status"},
		"youtube-made-for-kids":   {"youtube", "made_for_kids"},
		"tiktok-mode":             {"tiktok", "mode"},
		"tiktok-privacy":          {"tiktok", "privacy_level"},
		"tiktok-aigc":             {"tiktok", "is_aigc"},
		"instagram-share-to-feed": {"instagram", "share_to_feed"},
		"pinterest-board":         {"pinterest", "board_id"},
		"reddit-subreddit":        {"reddit", "subreddit"},
		"reddit-title":            {"reddit", "title"},
	} {
		fl := fs.Lookup(flag)
		if !fl.Changed {
			continue
		}
		if fl.Value.Type() == "bool" {
			v, _ := fs.GetBool(flag)
			set(target[0], target[1], v)
		} else {
			set(target[0], target[1], strings.TrimSpace(fl.Value.String()))
		}
	}
	for _, pj := range pf.platformJSON {
		name, raw, ok := strings.Cut(pj, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, usagef(`--platform-json %q: give platform='{"field":"value"}'`, pj)
		}
		if !knownPlatform(client.Platform(name)) {
			return nil, usagef("--platform-json: unknown platform %q; one of %s", name, platformList())
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, usagef("--platform-json %s: not a JSON object: %v", name, err)
		}
		for k, v := range obj {
			set(name, k, v)
		}
	}
	for _, o := range pf.options {
		key, value, ok := strings.Cut(o, "=")
		rawJSON := false
		if ok && strings.HasSuffix(key, ":") {
			key, rawJSON = strings.TrimSuffix(key, ":"), true
		}
		platform, field, dotted := strings.Cut(strings.TrimSpace(key), ".")
		platform = strings.ToLower(platform)
		if !ok || !dotted || platform == "" || field == "" {
			return nil, usagef("--option %q: give platform.field=value or platform.field:=JSON", o)
		}
		if !knownPlatform(client.Platform(platform)) {
			return nil, usagef("--option %q: unknown platform %q; one of %s", o, platform, platformList())
		}
		var v any = value
		switch {
		case rawJSON:
			if err := json.Unmarshal([]byte(value), &v); err != nil {
				return nil, usagef("--option %q: the value after := is not JSON: %v", o, err)
			}
		case value == "true":
			v = true
		case value == "false":
			v = false
		}
		set(platform, field, v)
	}
	return out, nil
}

// printDryRun shows what each destination would receive.
func printDryRun(w io.Writer, asJSON bool, dr *client.DryRunResponse) error {
	if asJSON {
		return printJSON(w, dr)
	}
	if v := dr.Video; v != nil {
		size := ""
		if v.Width != nil && v.Height != nil {
			size = fmt.Sprintf(", %dx%d", *v.Width, *v.Height)
		}
		dur := ""
		if v.DurationSeconds != nil {
			dur = fmt.Sprintf(", %.1f s", *v.DurationSeconds)
		}
		fmt.Fprintf(w, "video: %s, %s%s%s\n", v.ContentType, humanBytes(v.Bytes), size, dur)
	}
	fmt.Fprintf(w, "dry run: every check passed; nothing was stored or sent\n\n")
	tw := newTable(w)
	fmt.Fprintln(tw, "PLATFORM\tCHANNEL\tWOULD SEND")
	var warnings, derived []string
	for _, d := range dr.Platforms {
		keys := make([]string, 0, len(d.Payload))
		for k := range d.Payload {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			b, _ := json.Marshal(d.Payload[k])
			parts[i] = k + "=" + oneLine(string(b), 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Platform, dash(d.ChannelTitle), dash(strings.Join(parts, " ")))
		for _, warn := range d.Warnings {
			warnings = append(warnings, fmt.Sprintf("%s: %s", d.Platform, warn))
		}
		for _, field := range slices.Sorted(maps.Keys(d.Derived)) {
			derived = append(derived, fmt.Sprintf("%s %s from %s", d.Platform, field, client.DerivedFromWords(d.Derived[field])))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(derived) > 0 {
		fmt.Fprintf(w, "\nfilled in by reelay: %s\n", strings.Join(derived, "; "))
	}
	for _, warn := range warnings {
		fmt.Fprintln(w, "warning:", warn)
	}
	return nil
}
