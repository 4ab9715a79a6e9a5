package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// OpenMedia opens a signed media link of this server (an AI helper's VideoURL): the link is
// its own credential, so the API key is not sent with it. The caller closes the reader.
func (c *Client) OpenMedia(ctx context.Context, link string) (io.ReadCloser, error) {
	target, err := c.resolve(link)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, &call{method: http.MethodGet, absolute: target, noAuth: true, safety: idempotent})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// DownloadMedia copies a signed media link's bytes to dst and answers how many there were.
func (c *Client) DownloadMedia(ctx context.Context, link string, dst io.Writer) (int64, error) {
	body, err := c.OpenMedia(ctx, link)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	n, err := io.Copy(dst, body)
	if err != nil {
		return n, fmt.Errorf("reelay: download %s: %w", redactQuery(link), err)
	}
	return n, nil
}

// resolve makes a link absolute against the server root ("/api/v1/media/…" is accepted).
func (c *Client) resolve(link string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("reelay: media link %q is not an http(s) URL", redactQuery(link))
	}
	return c.root.ResolveReference(u).String(), nil
}

// Health answers nil while the server is serving (GET /healthz, no credential needed): a
// cheap way to tell "cannot reach reelay" from any other failure.
func (c *Client) Health(ctx context.Context) error {
	var out health
	cl := &call{method: http.MethodGet, path: "/healthz", rooted: true, noAuth: true, safety: idempotent}
	if _, err := c.send(ctx, cl, &out); err != nil {
		return err
	}
	if out.Status != "ok" {
		return fmt.Errorf("reelay: GET /healthz answered status %q", out.Status)
	}
	return nil
}

type health struct {
	Status string `json:"status"`
}

// SandboxIntrospection is what a platform simulator received from the account's sandbox
// channels.
type SandboxIntrospection struct {
	// Uploads has one entry per complete upload (an upload repeated after a crash shows
	// twice).
	Uploads   []SandboxUpload    `json:"uploads"`
	Published []SandboxPublished `json:"published"`
	Replies   []SandboxReply     `json:"replies"`
}

// SandboxUpload is a video a simulator received. Account is the channel's ExternalAccountID.
type SandboxUpload struct {
	Account string `json:"account"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
}

// SandboxPublished is an item a simulator published.
type SandboxPublished struct {
	Account string `json:"account"`
	ID      string `json:"id"`
	URL     string `json:"url"`
	SHA256  string `json:"sha256"`
	Text    string `json:"text"`
}

// SandboxReply is a reply a simulator received.
type SandboxReply struct {
	Account   string `json:"account"`
	CommentID string `json:"comment_id"`
	Text      string `json:"text"`
}

// SandboxIntrospect reads what the simulator of platform received: one upload per complete
// upload, the items it published, the replies it got.
func (c *Client) SandboxIntrospect(ctx context.Context, platform Platform) (*SandboxIntrospection, error) {
	path, err := idPath("/sandbox", string(platform), "/_introspect")
	if err != nil {
		return nil, err
	}
	var out SandboxIntrospection
	if _, err := c.send(ctx, &call{method: http.MethodGet, path: path, rooted: true, safety: idempotent}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
