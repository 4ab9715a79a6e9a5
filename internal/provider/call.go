package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// WithoutURL is err without the URL that net/http's *url.Error puts in front of it, for a
// message that ends up in a destination: the URL of a provider's call may carry a token
// (Telegram's Bot API paths, Discord's webhooks) or a signature (signed upload URLs). Any other
// error is returned as it is.
func WithoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Answer sends req with hc and reads the answer's body whole, at most limit bytes of it, and
// closes it: what a provider's JSON call does before it reads the platform's words. A request
// that got no answer, or whose answer was cut short, is a transient upstream_unavailable *Error
// (the call did not complete: the provider may make it again or leave it to the publisher)
// whose message is what ("Pinterest: GET /v5/pins") and the cause, without the URL.
func Answer(hc *http.Client, req *http.Request, limit int64, what string) (*http.Response, []byte, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, Transient(CategoryUpstreamUnavailable, 0, 0, "%s: %v", what, WithoutURL(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, nil, Transient(CategoryUpstreamUnavailable, resp.StatusCode, 0, "%s: reading the answer: %v", what, err)
	}
	return resp, raw, nil
}

// Excerpt is the start of an answer that is not the platform's own error format (a proxy's
// page, a body cut short), for a message: at most n bytes, made valid UTF-8, trimmed.
func Excerpt(raw []byte, n int) string {
	return strings.TrimSpace(string(bytes.ToValidUTF8(raw[:min(len(raw), n)], nil)))
}

// Decode reads a successful answer's JSON into out (nothing when out is nil). An answer that
// is not the JSON the call expects (a proxy's page, a changed API) is a transient
// upstream_unavailable *Error: what ("Pinterest: GET /v5/pins"), then the cause.
func Decode(resp *http.Response, raw []byte, out any, what string) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return Transient(CategoryUpstreamUnavailable, resp.StatusCode, 0, "%s: unexpected answer: %v", what, err)
	}
	return nil
}

// Extension is the file name extension of a media's content type, for the file name of a
// multipart upload (platforms read the kind of file from the name as well as from the part's
// Content-Type): .mov, .webm, .jpg, .png, .webp or .gif, and .mp4 for any other.
func Extension(contentType string) string {
	switch contentType {
	case "video/quicktime":
		return ".mov"
	case "video/webm":
		return ".webm"
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/webp":
		return ".webp"
	case "image/gif":
		return ".gif"
	}
	return ".mp4"
}
