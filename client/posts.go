package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// PostStatus is a post's state.
type PostStatus string

// Post statuses: a post is scheduled, then processing until every destination has settled.
const (
	PostScheduled          PostStatus = "scheduled"
	PostProcessing         PostStatus = "processing"
	PostPublished          PostStatus = "published"
	PostPartiallyPublished PostStatus = "partially_published"
	PostFailed             PostStatus = "failed"
	PostCanceled           PostStatus = "canceled"
)

// UploadStatus is one destination's state: queued → uploading → processing → published, or
// sent_to_inbox, failed, canceled.
type UploadStatus string

// Destination statuses.
const (
	UploadQueued      UploadStatus = "queued"
	UploadUploading   UploadStatus = "uploading"
	UploadProcessing  UploadStatus = "processing"
	UploadPublished   UploadStatus = "published"
	UploadSentToInbox UploadStatus = "sent_to_inbox"
	UploadFailed      UploadStatus = "failed"
	UploadCanceled    UploadStatus = "canceled"
)

// Settled tells whether a destination has reached its final state.
func (s UploadStatus) Settled() bool {
	switch s {
	case UploadPublished, UploadSentToInbox, UploadFailed, UploadCanceled:
		return true
	}
	return false
}

// Post is a publish request and the result of each of its destinations.
type Post struct {
	ID        string     `json:"id"`
	ProjectID string     `json:"project_id"`
	Status    PostStatus `json:"status"`
	Platforms []Platform `json:"platforms"`
	Title     string     `json:"title"`
	Caption   string     `json:"caption"`
	// ScheduledFor is nil for a post published at once.
	ScheduledFor *time.Time `json:"scheduled_for"`
	// PublishedAt is when the first destination was published; nil until then.
	PublishedAt *time.Time `json:"published_at"`
	CreatedAt   time.Time  `json:"created_at"`
	// PublishResults has one entry per destination: read the outcome here.
	PublishResults []DestinationResult `json:"publish_results"`
}

// Settled tells whether every destination has reached its final state, so that polling can
// stop.
func (p *Post) Settled() bool {
	if p.Status == PostScheduled || p.Status == PostProcessing {
		return false
	}
	for _, d := range p.PublishResults {
		if !d.UploadStatus.Settled() {
			return false
		}
	}
	return true
}

// DestinationResult is one destination (one channel) of a post. The platform's nullable
// fields are empty strings until known.
type DestinationResult struct {
	// DestinationID names this destination, as webhooks and analytics do.
	DestinationID string   `json:"destination_id"`
	Platform      Platform `json:"platform"`
	ChannelID     string   `json:"channel_id"`
	ChannelTitle  string   `json:"channel_title"`
	// Success is false only once the destination failed or was canceled; it is true before
	// publication too: see Published.
	Success bool `json:"success"`
	// Published: the video is live on the platform.
	Published    bool         `json:"published"`
	UploadStatus UploadStatus `json:"upload_status"`
	// ID is the item's id on the platform, URL its public address, once known.
	ID  string `json:"id"`
	URL string `json:"url"`
	// Error is the platform's own message when the destination failed.
	Error string `json:"error"`
	// ErrorCategory classifies a failure: auth_expired (the channel needs reconnecting),
	// media_rejected, rate_limited, quota_exceeded, upstream_unavailable, invalid_options,
	// internal, api_version (the operator must choose another version of the platform's API),
	// app_access (reelay's app on the platform lacks an access level).
	ErrorCategory string `json:"error_category"`
	// Message notes a published destination the platform has not finished with (TikTok's
	// moderation, an inbox draft to complete in the app).
	Message string `json:"message"`
	// PublishedAt is when the destination was published; nil before.
	PublishedAt *time.Time `json:"published_at"`
	// Derived names the texts sent to the platform that reelay filled in, with where each came
	// from (DerivedFromTitle, ...): {"title": "caption_first_line"}.
	Derived map[string]string `json:"derived,omitempty"`
	// Conversion is what the video needed for the platform; nil for posts made before reelay
	// planned conversions.
	Conversion *Conversion `json:"conversion,omitempty"`
}

// Conversion is what a destination's video needed for its platform: Action "none" (sent as
// it is), "remux" or "reencode"; Changes say what changed, Reasons which of the platform's
// rules the file broke.
type Conversion struct {
	Action  string   `json:"action"`
	Changes []string `json:"changes"`
	Reasons []string `json:"reasons"`
}

// Where a text reelay filled in for a platform came from: the values of Derived.
const (
	DerivedFromTitle            = "title"              // the post's title
	DerivedFromCaption          = "caption"            // the post's caption
	DerivedFromCaptionFirstLine = "caption_first_line" // the caption's first line, cut to the platform's limit
	DerivedFromVideoFileName    = "video_file_name"    // the uploaded video's file name, without its extension
	DerivedFromVideoURL         = "video_url"          // the last segment of video_url's path, without its extension
)

// DerivedFromWords says in words where a text reelay filled in came from, given one of the
// DerivedFrom values: "the caption's first line".
func DerivedFromWords(from string) string {
	switch from {
	case DerivedFromTitle:
		return "the title"
	case DerivedFromCaption:
		return "the caption"
	case DerivedFromCaptionFirstLine:
		return "the caption's first line"
	case DerivedFromVideoFileName:
		return "the video's file name"
	case DerivedFromVideoURL:
		return "the video link's file name"
	}
	return from
}

// PostList is a page of posts, newest first.
type PostList struct {
	Posts []Post `json:"posts"`
	// NextCursor is empty on the last page.
	NextCursor string `json:"next_cursor"`
}

// ListPostsParams filters and pages the post history; every filter set must hold. The time
// ranges include their Since and exclude their Before; zero times are no bound.
type ListPostsParams struct {
	ProjectID string     `query:"project_id"`
	Status    PostStatus `query:"status"`
	// Platform keeps the posts with a destination on this platform; empty (or "all"): every
	// platform.
	Platform      Platform  `query:"platform"`
	CreatedSince  time.Time `query:"created_since"`
	CreatedBefore time.Time `query:"created_before"`
	// ScheduledSince and ScheduledBefore bound the scheduled time: posts published at once
	// have none and are left out.
	ScheduledSince  time.Time `query:"scheduled_since"`
	ScheduledBefore time.Time `query:"scheduled_before"`
	ListParams
}

// UpdatePostRequest changes a scheduled post; nil fields stay as they are.
type UpdatePostRequest struct {
	ScheduledFor *time.Time `json:"scheduled_for,omitempty"`
	Title        *string    `json:"title,omitempty"`
	Caption      *string    `json:"caption,omitempty"`
	// Each platform object given is merged into the post's.
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
	// Extra is merged into the body last, as in PublishRequest.
	Extra map[string]any `json:"-"`
}

// MarshalJSON merges Extra into the body.
func (r UpdatePostRequest) MarshalJSON() ([]byte, error) {
	type plain UpdatePostRequest
	return withExtra(plain(r), r.Extra)
}

type postResponse struct {
	Post
}

// GetPost reads a post and the result of each destination.
func (c *Client) GetPost(ctx context.Context, id string) (*Post, error) {
	path, err := idPath("/posts", id, "")
	if err != nil {
		return nil, err
	}
	var out postResponse
	if err := c.get(ctx, path, nil, &out); err != nil {
		return nil, err
	}
	return &out.Post, nil
}

// ListPosts answers a page of the post history, newest first.
func (c *Client) ListPosts(ctx context.Context, params ListPostsParams) (*PostList, error) {
	var out PostList
	if err := c.get(ctx, "/posts", encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllPosts walks the post history from params' cursor to the end, page by page:
//
//	for post, err := range c.AllPosts(ctx, client.ListPostsParams{Status: client.PostFailed}) {
//		if err != nil { return err }
//		...
//	}
func (c *Client) AllPosts(ctx context.Context, params ListPostsParams) iter.Seq2[Post, error] {
	return pages(ctx, params.Cursor, func(ctx context.Context, cursor string) ([]Post, string, error) {
		p := params
		p.Cursor = cursor
		l, err := c.ListPosts(ctx, p)
		if err != nil {
			return nil, "", err
		}
		return l.Posts, l.NextCursor, nil
	})
}

// UpdatePost reschedules or edits a post that has not fired (409 invalid_state after).
func (c *Client) UpdatePost(ctx context.Context, id string, req UpdatePostRequest) (*Post, error) {
	path, err := idPath("/posts", id, "")
	if err != nil {
		return nil, err
	}
	var out postResponse
	// An edit sets fields to given values, so sending it twice changes nothing more.
	if _, err := c.send(ctx, &call{method: http.MethodPatch, path: path, body: req, safety: idempotent}, &out); err != nil {
		return nil, err
	}
	return &out.Post, nil
}

// CancelPost cancels a post that has not fired; its month's allowance unit is refunded. A
// post that has fired answers 409 invalid_state (so does a cancel repeated after a lost
// answer: read the post to know).
func (c *Client) CancelPost(ctx context.Context, id string) (*Post, error) {
	path, err := idPath("/posts", id, "")
	if err != nil {
		return nil, err
	}
	var out postResponse
	if err := c.delete(ctx, path, &out); err != nil {
		return nil, err
	}
	return &out.Post, nil
}

// RetryPost queues a post's failed destinations again; published ones are never sent again.
// Read the outcome with GetPost or WaitPost.
func (c *Client) RetryPost(ctx context.Context, id string) (*Post, error) {
	path, err := idPath("/posts", id, "/retry")
	if err != nil {
		return nil, err
	}
	var out postResponse
	if _, err := c.post(ctx, path, nil, &out); err != nil {
		return nil, err
	}
	return &out.Post, nil
}

// WaitPost polls a post until it has settled (Post.Settled) or ctx ends, with a back-off from
// 500 ms to 5 s between reads; bound it with a context deadline. When ctx ends first it
// answers the last post read with ctx's error: the outcome is then unknown, and the same
// content must not be published again.
func (c *Client) WaitPost(ctx context.Context, id string) (*Post, error) {
	interval := 500 * time.Millisecond
	for {
		p, err := c.GetPost(ctx, id)
		if err != nil {
			return nil, err
		}
		if p.Settled() {
			return p, nil
		}
		if err := c.sleep(ctx, interval); err != nil {
			return p, err
		}
		interval = min(interval*2, 5*time.Second)
	}
}
