package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reelay/reelay/client"
)

// PublishInput is reelay_publish_post's arguments: the fields of POST /publish, plus video_path
// and thumbnail_path (stdio only), idempotency_key (the Idempotency-Key header) and
// wait_seconds (Prefer: wait).
type PublishInput struct {
	ProjectID     string            `json:"project_id" jsonschema:"Id of the project that holds the channels (reelay_list_projects)."`
	VideoURL      string            `json:"video_url,omitempty" jsonschema:"Public http(s) link to the video: MP4, MOV or WebM, up to 100 MB; reelay fetches it once. Required unless video_path is given."`
	VideoPath     string            `json:"video_path,omitempty" jsonschema:"A local video file; see the tool's description for whether this connection takes it."`
	ThumbnailURL  string            `json:"thumbnail_url,omitempty" jsonschema:"Public http(s) link to a cover image: JPEG, PNG or WebP, up to 10 MB."`
	ThumbnailPath string            `json:"thumbnail_path,omitempty" jsonschema:"A local cover image; see the tool's description for whether this connection takes it."`
	Title         string            `json:"title,omitempty" jsonschema:"At most 100 characters. YouTube's title (optional: without it or youtube.title, YouTube's is made from the caption's first line, else the video's file name), and the text of platforms given no caption."`
	Caption       string            `json:"caption,omitempty" jsonschema:"At most 5000 characters: description and hashtags, the default text of every platform (each platform's own limit applies too; see capabilities.text of reelay_list_channels)."`
	Platforms     []client.Platform `json:"platforms,omitempty" jsonschema:"Platforms to publish to, meaning the project's channels on them. Default: youtube, instagram, tiktok (when channel_ids is not given). A platform without a channel in the project is refused."`
	ChannelIDs    []string          `json:"channel_ids,omitempty" jsonschema:"Ids of the channels to publish to (reelay_list_channels); they must belong to project_id. Preferred over platforms: it says exactly where the video goes."`
	ScheduledFor  string            `json:"scheduled_for,omitempty" jsonschema:"Publish later, at this future time: RFC 3339 with an explicit offset, e.g. 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z. Omit to publish now."`

	YouTube   *client.YouTubeOptions   `json:"youtube,omitempty"`
	Instagram *client.InstagramOptions `json:"instagram,omitempty"`
	TikTok    *client.TikTokOptions    `json:"tiktok,omitempty"`
	LinkedIn  *client.LinkedInOptions  `json:"linkedin,omitempty"`
	Pinterest *client.PinterestOptions `json:"pinterest,omitempty"`
	Threads   *client.ThreadsOptions   `json:"threads,omitempty"`
	Facebook  *client.FacebookOptions  `json:"facebook,omitempty"`
	Bluesky   *client.BlueskyOptions   `json:"bluesky,omitempty"`
	Telegram  *client.TelegramOptions  `json:"telegram,omitempty"`
	Discord   *client.DiscordOptions   `json:"discord,omitempty"`
	Mastodon  *client.MastodonOptions  `json:"mastodon,omitempty"`
	Reddit    *client.RedditOptions    `json:"reddit,omitempty"`

	AllowDuplicate bool   `json:"allow_duplicate,omitempty" jsonschema:"Publish even though the same video and text went to the same channel in the last 10 minutes (refused as duplicate_post otherwise). Default: false."`
	Fit            string `json:"fit,omitempty" jsonschema:"What may be done to a video whose aspect ratio a platform does not take: refuse (the default), pad (black bars) or crop (cut the overflow off both sides). A platform's object may set its own fit."`
	Transcode      string `json:"transcode,omitempty" jsonschema:"auto (the default) converts the video for each platform that would refuse it as it is (the answer's conversion says what changed); off refuses such a publish instead."`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"Makes the call safe to repeat: the same key with the same arguments within 24 h answers the first post instead of publishing again. Optional: without it a key is derived from the arguments, so repeating an identical call never posts twice. 1 to 255 visible ASCII characters."`
	WaitSeconds    *int   `json:"wait_seconds,omitempty" jsonschema:"How long reelay waits for the destinations to settle before answering, 0 to 60 seconds. Default: the server's (15 s). The answer may still be processing: then poll reelay_get_post."`
}

// PublishResult is reelay_publish_post's answer: the API's publish answer with the key it was
// sent under and whether it replayed an earlier call.
type PublishResult struct {
	client.PublishResponse
	// IdempotencyKey is the key the publish went under (given or derived).
	IdempotencyKey string `json:"idempotency_key" jsonschema:"The key this publish went under: repeating the call with it (and the same arguments) answers this post."`
	// Replayed: an earlier call with this key made the post; nothing new was published.
	Replayed bool `json:"replayed" jsonschema:"True when an earlier call with the same key made this post and nothing new was published."`
}

func (t *tools) publishPost(ctx context.Context, api *client.Client, in PublishInput) (answer[PublishResult], error) {
	var none answer[PublishResult]
	req := client.PublishRequest{
		ProjectID: in.ProjectID, ChannelIDs: in.ChannelIDs, VideoURL: in.VideoURL, ThumbnailURL: in.ThumbnailURL,
		Title: in.Title, Caption: in.Caption, Platforms: in.Platforms, AllowDuplicate: in.AllowDuplicate,
		Fit: client.Fit(in.Fit), Transcode: in.Transcode,
		YouTube: in.YouTube, Instagram: in.Instagram, TikTok: in.TikTok, LinkedIn: in.LinkedIn,
		Pinterest: in.Pinterest, Threads: in.Threads, Facebook: in.Facebook, Bluesky: in.Bluesky,
		Telegram: in.Telegram, Discord: in.Discord, Mastodon: in.Mastodon, Reddit: in.Reddit,
		IdempotencyKey: in.IdempotencyKey,
	}
	if in.ScheduledFor != "" {
		at, err := time.Parse(time.RFC3339, strings.TrimSpace(in.ScheduledFor))
		if err != nil {
			return none, badArgument("scheduled_for", "must be an RFC 3339 time with an explicit offset, such as 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z; got %q", in.ScheduledFor)
		}
		req.ScheduledFor = &at
	}
	if in.WaitSeconds != nil {
		w := time.Duration(*in.WaitSeconds) * time.Second
		req.Wait = &w
	}
	video, err := t.openArgument("video_path", in.VideoPath, "video_url", in.VideoURL)
	if err != nil {
		return none, err
	}
	if video != nil {
		defer video.Close()
		req.Video = video.upload()
	}
	// An uploaded thumbnail goes with video_url as well as with an uploaded video: the API
	// reads video_url from a multipart form too.
	thumbnail, err := t.openArgument("thumbnail_path", in.ThumbnailPath, "thumbnail_url", in.ThumbnailURL)
	if err != nil {
		return none, err
	}
	if thumbnail != nil {
		defer thumbnail.Close()
		req.Thumbnail = thumbnail.upload()
	}
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = derivedKey(in, video, thumbnail)
	}

	res, err := api.Publish(ctx, req)
	if err != nil {
		return none, publishFailure(err, req.IdempotencyKey)
	}
	out := PublishResult{PublishResponse: *res, IdempotencyKey: res.IdempotencyKey, Replayed: res.Replayed}
	return answer[PublishResult]{Value: out, Summary: publishSummary(out), Failed: res.Status == client.PostFailed}, nil
}

// openArgument opens the local file of a path argument (arg, with urlArg its public-link
// alternative); nil when the path is not given.
func (t *tools) openArgument(arg, path, urlArg, url string) (*localFile, error) {
	switch {
	case path == "":
		return nil, nil
	case !t.localFiles:
		return nil, badArgument(arg, "this server is reached over HTTP and cannot read files on your machine; give %s (a public link), or run the tools locally with `reelay mcp`", urlArg)
	case url != "":
		return nil, badArgument(arg, "give %s or %s, not both", urlArg, arg)
	}
	return openLocal(arg, path)
}

// publishFailure adds to an error whose outcome is unknown (no answer came back) what the
// model must do: repeat the same call, never a different one.
func publishFailure(err error, key string) error {
	if _, ok := client.AsError(err); ok {
		return err
	}
	var reqErr *client.RequestError
	if !errors.As(err, &reqErr) {
		return err
	}
	return &unknownOutcome{err: err, key: key}
}

// unknownOutcome is a publish that got no answer: the post may exist.
type unknownOutcome struct {
	err error
	key string
}

func (u *unknownOutcome) Error() string {
	return u.err.Error() + ". The outcome is unknown: the post may have been created. Do not publish different arguments; repeat this exact call (idempotency key " + u.key + "), which answers the existing post instead of posting twice."
}

func (u *unknownOutcome) Unwrap() error { return u.err }

// derivedKey is the idempotency key of a call that gave none: the same arguments give the same
// key, so a model that repeats a call (after a timeout, or by mistake) gets the first post
// back instead of a second one. wait_seconds is left out: it changes how long the answer takes,
// not what is published. A local file counts by its path, size and modification time, so an
// edited file is a new post. The thumbnail is marked as such, and added only when there is
// one, so that the keys of calls without one stay what they were.
func derivedKey(in PublishInput, video, thumbnail *localFile) string {
	in.IdempotencyKey, in.WaitSeconds = "", nil
	body, _ := json.Marshal(in)
	h := sha256.New()
	h.Write(body)
	if video != nil {
		fmt.Fprintf(h, "\x00%s\x00%d\x00%d", video.path, video.size, video.modTime.UnixNano())
	}
	if thumbnail != nil {
		fmt.Fprintf(h, "\x00thumbnail\x00%s\x00%d\x00%d", thumbnail.path, thumbnail.size, thumbnail.modTime.UnixNano())
	}
	return "mcp-" + hex.EncodeToString(h.Sum(nil))
}

// localFile is a video or cover image on this machine (stdio only).
type localFile struct {
	f       *os.File
	path    string
	size    int64
	modTime time.Time
}

func (l *localFile) Close() error { return l.f.Close() }

// upload gives the client the open file itself, so that it is streamed as the request is
// sent rather than copied first.
func (l *localFile) upload() *client.Upload {
	return &client.Upload{Reader: l.f, Name: filepath.Base(l.path), Size: l.size}
}

// openLocal opens a regular file for upload; it is streamed, never read into memory. Its
// errors name arg, the argument that gave the path.
func openLocal(arg, path string) (*localFile, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, badArgument(arg, "%v", err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, badArgument(arg, "cannot open %s: %v", abs, unwrapPathError(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, badArgument(arg, "cannot read %s: %v", abs, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, badArgument(arg, "%s is not a regular file", abs)
	}
	return &localFile{f: f, path: abs, size: st.Size(), modTime: st.ModTime()}, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
