package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// PublishRequest publishes or schedules one video to a project's channels. The video is at
// VideoURL, or uploaded from Video.
type PublishRequest struct {
	ProjectID string `json:"project_id"`
	// ChannelIDs are the channels to publish to; empty: the project's channels on Platforms.
	ChannelIDs []string `json:"channel_ids,omitempty"`
	// VideoURL is a public http(s) link to an MP4, MOV or WebM file (or a videoUrl of this
	// server's AI helpers). Leave it empty when uploading Video.
	VideoURL     string `json:"video_url,omitempty"`
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	// Title is YouTube's title and the default caption. Without it (and YouTube.Title),
	// YouTube's title is derived from the caption's first line, else the video's file name.
	Title string `json:"title,omitempty"`
	// Caption is the default text of every platform.
	Caption string `json:"caption,omitempty"`
	// Platforms default to youtube, instagram and tiktok when ChannelIDs is empty.
	Platforms []Platform `json:"platforms,omitempty"`
	// ScheduledFor publishes at a future time; nil publishes now.
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	// AllowDuplicate publishes even when the same video and text went to the same channel in
	// the last 10 minutes.
	AllowDuplicate bool `json:"allow_duplicate,omitempty"`
	// Fit says what may be done to a video whose aspect ratio a platform does not take
	// (FitRefuse when empty).
	Fit Fit `json:"fit,omitempty"`
	// Transcode is "auto" (empty: convert what a platform would refuse, per destination) or
	// "off" (refuse it instead).
	Transcode string `json:"transcode,omitempty"`

	// The per-platform settings; nil leaves a platform's defaults.
	YouTube   *YouTubeOptions   `json:"youtube,omitempty"`
	Instagram *InstagramOptions `json:"instagram,omitempty"`
	TikTok    *TikTokOptions    `json:"tiktok,omitempty"`
	LinkedIn  *LinkedInOptions  `json:"linkedin,omitempty"`
	Pinterest *PinterestOptions `json:"pinterest,omitempty"`
	Threads   *ThreadsOptions   `json:"threads,omitempty"`
	Facebook  *FacebookOptions  `json:"facebook,omitempty"`
	Bluesky   *BlueskyOptions   `json:"bluesky,omitempty"`
	Telegram  *TelegramOptions  `json:"telegram,omitempty"`
	Discord   *DiscordOptions   `json:"discord,omitempty"`
	Mastodon  *MastodonOptions  `json:"mastodon,omitempty"`
	Reddit    *RedditOptions    `json:"reddit,omitempty"`

	// Extra is merged into the body last, over the typed fields: for a field or platform
	// this client does not know yet. In an upload each value becomes a form field (JSON text
	// for anything but a string).
	Extra map[string]any `json:"-"`

	// Video uploads the file instead of VideoURL, streamed as multipart/form-data.
	Video *Upload `json:"-"`
	// Thumbnail uploads an image (instead of ThumbnailURL), with Video or with VideoURL: the
	// server reads video_url from the multipart form too.
	Thumbnail *Upload `json:"-"`
	// Progress, when set, is called as Video and Thumbnail are read, with the bytes read so
	// far and their total (-1 when a size is unknown). It is called from another goroutine,
	// one call at a time; a retried upload starts again from 0.
	Progress func(sent, total int64) `json:"-"`

	// IdempotencyKey makes the publish safe to repeat: the same key and body within 24 h
	// answer the first post instead of publishing twice. Publish makes one up when it is
	// empty, and uses the same one on each of its retries; set it yourself to repeat a
	// publish across processes (after a crash, say).
	IdempotencyKey string `json:"-"`
	// Wait is how long the server waits for the destinations to settle before answering
	// (Prefer: wait=N, 0 to 60 s, whole seconds); nil: the server's default (15 s).
	Wait *time.Duration `json:"-"`
}

// The per-platform settings of a post follow, one type per platform with every field of its
// contract object. Pointer booleans are the ones whose default is not false.

// YouTubeOptions: Title defaults to the post's title, else to one derived from the caption's
// first line or the video's file name; Description defaults to the caption.
type YouTubeOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit         Fit    `json:"fit,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// PrivacyStatus is "public" (default), "unlisted" or "private".
	PrivacyStatus string `json:"privacy_status,omitempty"`
	MadeForKids   *bool  `json:"made_for_kids,omitempty"`
	// CategoryID is one of the categories the channel's options list, such as "22" (the
	// default, People & Blogs); an extension of the contract's object.
	CategoryID string `json:"category_id,omitempty"`
}

// InstagramOptions: Caption defaults to the post's caption; ShareToFeed defaults to true.
type InstagramOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit         Fit    `json:"fit,omitempty"`
	Caption     string `json:"caption,omitempty"`
	ShareToFeed *bool  `json:"share_to_feed,omitempty"`
}

// TikTokOptions: Mode "inbox" (default) sends the video to the TikTok app for review;
// "direct" publishes at once. PrivacyLevel must be among the creator's (ChannelOptions).
// IsAIGC must be true for a video made with AI tools.
type TikTokOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit          Fit    `json:"fit,omitempty"`
	Mode         string `json:"mode,omitempty"`
	Title        string `json:"title,omitempty"`
	PrivacyLevel string `json:"privacy_level,omitempty"`
	IsAIGC       *bool  `json:"is_aigc,omitempty"`
	AllowComment *bool  `json:"allow_comment,omitempty"`
	AllowDuet    *bool  `json:"allow_duet,omitempty"`
	AllowStitch  *bool  `json:"allow_stitch,omitempty"`
}

// LinkedInOptions are LinkedIn's post texts.
type LinkedInOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit        Fit    `json:"fit,omitempty"`
	Commentary string `json:"commentary,omitempty"`
	Title      string `json:"title,omitempty"`
}

// PinterestOptions: BoardID is required by Pinterest (ChannelOptions lists the boards).
type PinterestOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit         Fit    `json:"fit,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Link        string `json:"link,omitempty"`
	BoardID     string `json:"board_id,omitempty"`
}

// ThreadsOptions is the post's text on Threads.
type ThreadsOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit  Fit    `json:"fit,omitempty"`
	Text string `json:"text,omitempty"`
}

// FacebookOptions are the video's texts on Facebook.
type FacebookOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit         Fit    `json:"fit,omitempty"`
	Description string `json:"description,omitempty"`
	Title       string `json:"title,omitempty"`
}

// BlueskyOptions is the post's text on Bluesky (300 graphemes).
type BlueskyOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit  Fit    `json:"fit,omitempty"`
	Text string `json:"text,omitempty"`
}

// TelegramOptions is the video's caption on Telegram.
type TelegramOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit     Fit    `json:"fit,omitempty"`
	Caption string `json:"caption,omitempty"`
}

// DiscordOptions is the message sent with the video.
type DiscordOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit     Fit    `json:"fit,omitempty"`
	Content string `json:"content,omitempty"`
}

// MastodonOptions is the status: its text and, optionally, visibility (public, unlisted,
// private or direct; public when empty), a content warning (SpoilerText, counted with Text
// against the limit), Sensitive, a Language (ISO 639-1) and the video's alt text
// (Description, at most 1500 characters).
type MastodonOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit         Fit    `json:"fit,omitempty"`
	Text        string `json:"text,omitempty"`
	Visibility  string `json:"visibility,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
	SpoilerText string `json:"spoiler_text,omitempty"`
	Language    string `json:"language,omitempty"`
	Description string `json:"description,omitempty"`
}

// RedditOptions: Subreddit without "r/"; FlairID is one of the subreddit's link flair
// templates (ChannelOptions with a subreddit lists them), required by some subreddits.
type RedditOptions struct {
	// Fit overrides PublishRequest.Fit for this platform.
	Fit       Fit    `json:"fit,omitempty"`
	Title     string `json:"title,omitempty"`
	Subreddit string `json:"subreddit,omitempty"`
	NSFW      *bool  `json:"nsfw,omitempty"`
	Spoiler   *bool  `json:"spoiler,omitempty"`
	FlairID   string `json:"flair_id,omitempty"`
	FlairText string `json:"flair_text,omitempty"`
}

// MarshalJSON merges Extra into the body.
func (r PublishRequest) MarshalJSON() ([]byte, error) {
	type plain PublishRequest // no methods: no recursion
	return withExtra(plain(r), r.Extra)
}

// withExtra encodes v and sets the extra members over its own.
func withExtra(v any, extra map[string]any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, err
	}
	for k, x := range extra {
		raw, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
		members[k] = raw
	}
	return json.Marshal(members)
}

// PublishResponse is what is known of a post when the publish answers.
type PublishResponse struct {
	// Success is true when the request was accepted, which can be before publication: read
	// each destination's Published, or wait with WaitPost.
	Success bool `json:"success"`
	// PostID reads the post later (GetPost, WaitPost).
	PostID    string              `json:"post_id"`
	Status    PostStatus          `json:"status"`
	Platforms []DestinationResult `json:"platforms"`
	// ScheduledFor is when a scheduled post goes out; nil for an immediate one.
	ScheduledFor *time.Time `json:"scheduled_for"`

	// IdempotencyKey is the key the publish was sent with.
	IdempotencyKey string `json:"-"`
	// Replayed: the key had been used with this request before; this is that post, as it
	// stands now, and nothing new was published.
	Replayed bool `json:"-"`
}

// DryRunResponse is what a publish would send to each destination.
type DryRunResponse struct {
	DryRun    bool                `json:"dry_run"`
	Status    PostStatus          `json:"status"`
	Video     *MediaInfo          `json:"video"`
	Platforms []DryRunDestination `json:"platforms"`
}

// DryRunDestination is what one destination would receive.
type DryRunDestination struct {
	Platform     Platform `json:"platform"`
	ChannelID    string   `json:"channel_id"`
	ChannelTitle string   `json:"channel_title"`
	// Payload is the text and settings that would go to the platform, in its own terms.
	Payload map[string]any `json:"payload"`
	// Derived names the texts of Payload that reelay would fill in, with where each comes
	// from (DerivedFromTitle, ...).
	Derived  map[string]string `json:"derived,omitempty"`
	Warnings []string          `json:"warnings"`
	// Conversion is what the video would need for the platform.
	Conversion *Conversion `json:"conversion,omitempty"`
}

// MediaInfo is what the server found in a video.
type MediaInfo struct {
	ContentType     string   `json:"content_type"`
	Bytes           int64    `json:"bytes"`
	DurationSeconds *float64 `json:"duration_seconds"`
	Width           *int     `json:"width"`
	Height          *int     `json:"height"`
	// VideoCodec, VideoProfile, FrameRate (average, per second), Bitrate (bits per second) and
	// AudioCodec are what the probe read; empty or nil where the file does not say.
	VideoCodec   string   `json:"video_codec"`
	VideoProfile string   `json:"video_profile"`
	FrameRate    *float64 `json:"frame_rate"`
	Bitrate      *int64   `json:"bitrate"`
	AudioCodec   string   `json:"audio_codec"`
}

type publishQuery struct {
	DryRun bool `query:"dry_run"`
}

// Publish publishes or schedules a video, by URL (JSON) or by upload (multipart, streamed
// from req.Video). Every check runs before anything is stored: bad input is an *Error with
// Fields. The answer comes once the destinations settle or the wait runs out, so a
// destination can still be uploading: read the outcome with GetPost or WaitPost, and never
// publish the same content again when it is unknown.
//
// A publish whose every destination failed is not an error of the call: the post exists,
// with Status PostFailed and each destination's Error (the server answers it 502 when a
// platform caused it; the client reads that answer like a 200).
//
// Publish is retried (network errors, 429, 502, 503, 504) under one Idempotency-Key, so a
// retry cannot publish twice. An upload from a reader that cannot be rewound is retried only
// when the failed attempt read none of it (the server refused the request before taking the
// body).
func (c *Client) Publish(ctx context.Context, req PublishRequest) (*PublishResponse, error) {
	if req.IdempotencyKey == "" {
		req.IdempotencyKey = uuid.NewString()
	}
	var out PublishResponse
	resp, err := c.publish(ctx, req, false, &out)
	if err != nil {
		return nil, err
	}
	out.IdempotencyKey = req.IdempotencyKey
	out.Replayed = resp.Get("Idempotent-Replayed") == "true"
	return &out, nil
}

// DryRun runs every check of req and answers what each destination would receive; nothing is
// stored, sent or counted. An upload is still sent whole, to be checked.
func (c *Client) DryRun(ctx context.Context, req PublishRequest) (*DryRunResponse, error) {
	// Not sent: a key used before with the same request would answer its post, not a dry run.
	req.IdempotencyKey = ""
	var out DryRunResponse
	if _, err := c.publish(ctx, req, true, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// publish sends req as JSON or as a multipart upload, and answers the response headers.
func (c *Client) publish(ctx context.Context, req PublishRequest, dryRun bool, out any) (http.Header, error) {
	cl := &call{method: http.MethodPost, path: "/publish", query: encodeQuery(publishQuery{DryRun: dryRun}),
		header: http.Header{}, safety: idempotent, answerOn502: !dryRun}
	if req.IdempotencyKey != "" {
		cl.header.Set("Idempotency-Key", req.IdempotencyKey)
	}
	if req.Wait != nil {
		cl.header.Set("Prefer", "wait="+strconv.Itoa(waitSeconds(*req.Wait)))
	}
	if req.Video != nil || req.Thumbnail != nil {
		f, err := publishForm(req)
		if err != nil {
			return nil, err
		}
		cl.form = f
	} else {
		cl.body = req
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	return resp.Header, decode(resp, out, cl.label())
}

// waitSeconds rounds a wait up to whole seconds, within the server's 0 to 60.
func waitSeconds(d time.Duration) int {
	return int(min(max(math.Ceil(d.Seconds()), 0), 60))
}

// publishForm lays req out as the multipart form the server reads: each member of the JSON
// body becomes a field (strings as they are; arrays, objects and booleans as JSON text),
// then the files.
func publishForm(req PublishRequest) (*form, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("reelay: encode publish request: %w", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	slices.Sort(names)
	var fields []formField
	for _, name := range names {
		raw := members[name]
		if bytes.Equal(raw, []byte("null")) {
			continue
		}
		value := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			value = s
		}
		fields = append(fields, formField{name: name, value: value})
	}
	files := []formFile{{field: "thumbnail", up: req.Thumbnail}, {field: "video", up: req.Video}}
	return newForm(fields, files, req.Progress)
}

// Fit is what may be done to a video whose aspect ratio a platform does not take.
type Fit string

// Fit choices.
const (
	FitRefuse Fit = "refuse" // refuse the destination (the default)
	FitPad    Fit = "pad"    // black bars, into the platform's nearest ratio
	FitCrop   Fit = "crop"   // cut the overflow off both sides
)
