package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// Client is the little of reelay's HTTP API the publishing scenarios need: projects, sandbox
// channels, publish (multipart, streamed) and posts. Every call carries the key in the
// X-API-Key header.
type Client struct {
	// URL is the server's base URL (scheme and host).
	URL string
	Key string
	hc  *http.Client
}

// NewClient returns a client with a connection pool of its own, sized for conns concurrent
// requests, and no proxy: the scenarios measure the server.
func NewClient(baseURL, key string, conns int) *Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        max(conns, 2),
		MaxIdleConnsPerHost: max(conns, 2),
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &Client{URL: strings.TrimRight(baseURL, "/"), Key: key, hc: &http.Client{Transport: tr}}
}

// Close releases the idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// APIError is an answer outside 2xx.
type APIError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *APIError) Error() string {
	body := e.Body
	if len(body) > 500 {
		body = body[:500] + "..."
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, body)
}

// call sends one request and decodes a 2xx JSON answer into out (when not nil).
func (c *Client) call(ctx context.Context, method, path string, body io.Reader, size int64, header http.Header, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.ContentLength = size
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("X-API-Key", c.Key)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Body: string(raw)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) callJSON(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	var size int64
	h := http.Header{}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, size = bytes.NewReader(b), int64(len(b))
		h.Set("Content-Type", "application/json")
	}
	return c.call(ctx, method, path, body, size, h, out)
}

// CreateProject creates a project and returns its id.
func (c *Client) CreateProject(ctx context.Context, name string) (string, error) {
	var out struct {
		Project struct {
			ID string `json:"id"`
		} `json:"project"`
	}
	err := c.callJSON(ctx, http.MethodPost, "/api/v1/projects", map[string]string{"name": name}, &out)
	return out.Project.ID, err
}

// CreateSandboxChannel connects a sandbox channel of platform that behaves as SandboxBehavior
// says, and returns its id.
func (c *Client) CreateSandboxChannel(ctx context.Context, projectID, platform string) (string, error) {
	var out struct {
		Channel struct {
			ID string `json:"id"`
		} `json:"channel"`
	}
	behavior := map[string]any{"processing_ms": SandboxBehavior.ProcessingMS}
	if platform == "tiktok" {
		behavior["app_access"] = SandboxBehavior.AppAccess
	}
	err := c.callJSON(ctx, http.MethodPost, "/api/v1/channels", map[string]any{
		"project_id": projectID, "platform": platform, "sandbox": true, "sandbox_behavior": behavior,
	}, &out)
	return out.Channel.ID, err
}

// Received reads what platform's simulator received, from GET /sandbox/{platform}/_introspect:
// on a server, for the account's own sandbox channels; on a simulator host apart
// (internal/platform/sim/simhost), whose introspection key is the client's key, for every
// account.
func (c *Client) Received(ctx context.Context, platform string) (sim.Introspection, error) {
	var rec sim.Introspection
	err := c.callJSON(ctx, http.MethodGet, "/sandbox/"+url.PathEscape(platform)+"/_introspect", nil, &rec)
	return rec, err
}

// Post is a post as GET /posts/{id} and GET /posts show it, with what the scenarios read.
type Post struct {
	ID             string        `json:"id"`
	Status         string        `json:"status"`
	ScheduledFor   *time.Time    `json:"scheduled_for"`
	PublishedAt    *time.Time    `json:"published_at"`
	CreatedAt      time.Time     `json:"created_at"`
	PublishResults []Destination `json:"publish_results"`
}

// Destination is one entry of a post's publish_results.
type Destination struct {
	Platform     string     `json:"platform"`
	UploadStatus string     `json:"upload_status"`
	PublishedAt  *time.Time `json:"published_at"`
	Error        *string    `json:"error"`
}

// Settled reports whether the post has reached a final status.
func (p Post) Settled() bool {
	switch p.Status {
	case "published", "partially_published", "failed", "canceled":
		return true
	}
	return false
}

// LastPublished is the published_at of the destination published last: when the post was
// complete. It is nil unless every destination is published.
func (p Post) LastPublished() *time.Time {
	var last *time.Time
	for _, d := range p.PublishResults {
		if d.PublishedAt == nil {
			return nil
		}
		if last == nil || d.PublishedAt.After(*last) {
			last = d.PublishedAt
		}
	}
	return last
}

// problem describes why a settled post is not published, for error messages.
func (p Post) problem() string {
	var parts []string
	for _, d := range p.PublishResults {
		if d.UploadStatus != "published" {
			msg := d.UploadStatus
			if d.Error != nil {
				msg += ": " + *d.Error
			}
			parts = append(parts, d.Platform+" "+msg)
		}
	}
	return fmt.Sprintf("post %s is %s (%s)", p.ID, p.Status, strings.Join(parts, "; "))
}

// GetPost reads one post.
func (c *Client) GetPost(ctx context.Context, id string) (Post, error) {
	var p Post
	err := c.callJSON(ctx, http.MethodGet, "/api/v1/posts/"+url.PathEscape(id), nil, &p)
	return p, err
}

// ListPosts reads one page of the account's posts, newest first, with the given status (""
// for any).
func (c *Client) ListPosts(ctx context.Context, status, cursor string, limit int) (posts []Post, next string, err error) {
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	if status != "" {
		q.Set("status", status)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	var out struct {
		Posts      []Post  `json:"posts"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := c.callJSON(ctx, http.MethodGet, "/api/v1/posts?"+q.Encode(), nil, &out); err != nil {
		return nil, "", err
	}
	if out.NextCursor != nil {
		next = *out.NextCursor
	}
	return out.Posts, next, nil
}

// PublishForm is one multipart publish request: its fields and the video, streamed from
// Video (Size bytes) without being held in memory.
type PublishForm struct {
	Fields map[string]string
	Video  io.Reader
	Size   int64
}

// Publish sends a multipart publish request with Prefer: wait=0, so that the answer comes
// as soon as the post is stored and queued, and returns the post's id.
func (c *Client) Publish(ctx context.Context, f PublishForm) (string, error) {
	body, size, ctype := f.encode()
	var out struct {
		PostID string `json:"post_id"`
		Status string `json:"status"`
	}
	h := http.Header{"Content-Type": {ctype}, "Prefer": {"wait=0"}}
	if err := c.call(ctx, http.MethodPost, "/api/v1/publish", body, size, h, &out); err != nil {
		return "", err
	}
	if out.PostID == "" {
		return "", errors.New("POST /api/v1/publish answered no post_id")
	}
	return out.PostID, nil
}

// encode lays the form out as multipart/form-data: the fields and the file part's header,
// then the video as it is read, then the closing boundary; its length is known up front.
func (f PublishForm) encode() (body io.Reader, size int64, contentType string) {
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	for k, v := range f.Fields {
		mw.WriteField(k, v) // writes to a buffer: cannot fail
	}
	mw.CreateFormFile("video", "video.mp4")
	closing := []byte("\r\n--" + mw.Boundary() + "--\r\n") // what mw.Close would write after the file
	size = int64(head.Len()) + f.Size + int64(len(closing))
	return io.MultiReader(bytes.NewReader(head.Bytes()), io.LimitReader(f.Video, f.Size), bytes.NewReader(closing)),
		size, mw.FormDataContentType()
}
