package mastodon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/provider"
)

// API paths (docs.joinmastodon.org/methods/...).
const (
	pathInstanceV2   = "/api/v2/instance"
	pathInstanceV1   = "/api/v1/instance"
	pathVerify       = "/api/v1/accounts/verify_credentials"
	pathMediaUpload  = "/api/v2/media"
	pathMedia        = "/api/v1/media/"
	pathStatuses     = "/api/v1/statuses"
	pathAccountsBase = "/api/v1/accounts/"
)

// apiError is a Mastodon answer other than 2xx: {"error": "..."} (Rails' own errors), or
// whatever a proxy in front of the instance sent (nginx's HTML 502, 413).
type apiError struct {
	Host       string
	Status     int
	Message    string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Mastodon (%s): %s (HTTP %d)", e.Host, e.Message, e.Status)
}

// classify turns a call's failure into a *provider.Error. rejected is the category of a 422
// for the call at hand: media_rejected for media, invalid_options for statuses.
func classify(err error, rejected string) *provider.Error {
	var ae *apiError
	if errors.As(err, &ae) {
		msg := ae.Error()
		switch {
		case ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden:
			// 401: the token is invalid, revoked or expired; 403: outside its scopes, or the
			// account's login is disabled. Both need the channel connected again.
			return provider.Permanent(provider.CategoryAuthExpired, ae.Status, "%s", msg)
		case ae.Status == http.StatusTooManyRequests:
			return provider.Transient(provider.CategoryRateLimited, ae.Status, ae.RetryAfter, "%s", msg)
		case ae.Status >= 500 || ae.Status == http.StatusRequestTimeout:
			return provider.Transient(provider.CategoryUpstreamUnavailable, ae.Status, ae.RetryAfter, "%s", msg)
		case ae.Status == http.StatusRequestEntityTooLarge:
			return provider.Permanent(provider.CategoryMediaRejected, ae.Status, "%s: the instance refused a request this large", msg)
		case ae.Status == http.StatusUnprocessableEntity && rejected != "":
			return provider.Permanent(rejected, ae.Status, "%s", msg)
		}
		return provider.Permanent(provider.CategoryInternal, ae.Status, "%s", msg)
	}
	var pe *provider.Error
	if errors.As(err, &pe) {
		return pe
	}
	return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "Mastodon: %v", err)
}

// client is one instance and token.
type client struct {
	p     *Provider
	base  string // the API root: Destination.BaseURL, else instance_url
	host  string // the instance's host, for messages and ids
	token string
}

// call makes one request and decodes a 2xx JSON answer into out (nil: ignored). It returns
// the HTTP status; a non-2xx answer is an *apiError.
func (c *client) call(ctx context.Context, method, path string, hdr http.Header, body io.Reader, length int64, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		if cl, ok := body.(io.Closer); ok {
			cl.Close() // the transport would have, had the request been made
		}
		return 0, err
	}
	if body != nil && length >= 0 {
		req.ContentLength = length
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.p.cfg.HTTPClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, c.errorOf(resp, raw)
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("Mastodon (%s) %s: decoding the answer: %w", c.host, path, err)
		}
	}
	return resp.StatusCode, nil
}

// callJSON is call bounded by the API timeout, with an optional JSON body.
func (c *client) callJSON(ctx context.Context, method, path string, hdr http.Header, in, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.p.cfg.APITimeout)
	defer cancel()
	if in == nil {
		return c.call(ctx, method, path, hdr, nil, -1, out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", "application/json")
	return c.call(ctx, method, path, hdr, bytes.NewReader(b), int64(len(b)), out)
}

// get is callJSON of a GET under the provider's Repeat: a read, which asking again changes
// nothing.
func (c *client) get(ctx context.Context, path string, out any) (int, error) {
	var code int
	err := c.p.cfg.Repeat.Do(ctx, func(err error) *provider.Error { return classify(err, "") }, func() error {
		var err error
		code, err = c.callJSON(ctx, http.MethodGet, path, nil, nil, out)
		return err
	})
	return code, err
}

func (c *client) errorOf(resp *http.Response, raw []byte) *apiError {
	e := &apiError{Host: c.host, Status: resp.StatusCode}
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Error != "" {
		e.Message = body.Error
		if body.ErrorDescription != "" {
			e.Message += ": " + body.ErrorDescription
		}
	} else {
		e.Message = http.StatusText(resp.StatusCode) // an HTML page from a proxy
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		e.RetryAfter = retryAfter(resp.Header, c.p.cfg.Now())
		if e.RetryAfter <= 0 && resp.StatusCode == http.StatusTooManyRequests {
			e.RetryAfter = time.Minute
		}
	}
	return e
}

// retryAfter reads Retry-After (seconds or an HTTP date), else Mastodon's X-RateLimit-Reset
// (an ISO 8601 time): how long until the window that refused the call is over.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := httpx.RetryAfter(h, now); ok {
		return max(d, time.Second)
	}
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			// A second more: the window ends at the reset instant, and clocks differ.
			return max(t.Sub(now), 0) + time.Second
		}
	}
	return 0
}

// Instance is what the provider reads of an instance's configuration (GET /api/v2/instance,
// or /api/v1/instance on Mastodon 3.x). Zero limits are unknown and not checked.
type Instance struct {
	Domain                   string
	Version                  string
	MaxCharacters            int
	MaxMediaAttachments      int
	CharactersReservedPerURL int
	SupportedMimeTypes       []string
	ImageSizeLimit           int64
	VideoSizeLimit           int64
	VideoFrameRateLimit      int
	VideoMatrixLimit         int64
}

type instanceJSON struct {
	Domain        string `json:"domain"` // v2
	URI           string `json:"uri"`    // v1
	Version       string `json:"version"`
	Configuration struct {
		Statuses struct {
			MaxCharacters            int `json:"max_characters"`
			MaxMediaAttachments      int `json:"max_media_attachments"`
			CharactersReservedPerURL int `json:"characters_reserved_per_url"`
		} `json:"statuses"`
		MediaAttachments struct {
			SupportedMimeTypes  []string `json:"supported_mime_types"`
			ImageSizeLimit      int64    `json:"image_size_limit"`
			VideoSizeLimit      int64    `json:"video_size_limit"`
			VideoFrameRateLimit float64  `json:"video_frame_rate_limit"`
			VideoMatrixLimit    int64    `json:"video_matrix_limit"`
		} `json:"media_attachments"`
	} `json:"configuration"`
}

// Mastodon's own defaults, for instances that leave a value out.
const (
	defaultMaxCharacters = 500
	defaultPerURL        = 23
)

type cachedInstance struct {
	inst    Instance
	fetched time.Time
}

// instanceCache keeps each instance's configuration for Config.InstanceTTL.
type instanceCache struct {
	mu sync.Mutex
	m  map[string]cachedInstance
}

// instance returns the instance's configuration, from the cache while it is fresh.
func (c *client) instance(ctx context.Context) (Instance, error) {
	cache := &c.p.instances
	now := c.p.cfg.Now()
	cache.mu.Lock()
	e, ok := cache.m[c.base]
	cache.mu.Unlock()
	if ok && now.Sub(e.fetched) < c.p.cfg.InstanceTTL {
		return e.inst, nil
	}
	// The instance endpoints are public: the token is not sent where it is not needed.
	anon := *c
	anon.token = ""
	var raw instanceJSON
	_, err := anon.get(ctx, pathInstanceV2, &raw)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		raw = instanceJSON{}
		_, err = anon.get(ctx, pathInstanceV1, &raw) // Mastodon 3.x
	}
	if err != nil {
		return Instance{}, err
	}
	st, ma := raw.Configuration.Statuses, raw.Configuration.MediaAttachments
	inst := Instance{
		Domain: raw.Domain, Version: raw.Version,
		MaxCharacters: st.MaxCharacters, MaxMediaAttachments: st.MaxMediaAttachments,
		CharactersReservedPerURL: st.CharactersReservedPerURL,
		SupportedMimeTypes:       ma.SupportedMimeTypes, ImageSizeLimit: ma.ImageSizeLimit,
		VideoSizeLimit: ma.VideoSizeLimit, VideoFrameRateLimit: int(ma.VideoFrameRateLimit),
		VideoMatrixLimit: ma.VideoMatrixLimit,
	}
	if inst.Domain == "" {
		inst.Domain = raw.URI
	}
	if inst.Domain == "" {
		inst.Domain = c.host
	}
	if inst.MaxCharacters <= 0 {
		inst.MaxCharacters = defaultMaxCharacters
	}
	if inst.CharactersReservedPerURL <= 0 {
		inst.CharactersReservedPerURL = defaultPerURL
	}
	cache.mu.Lock()
	if cache.m == nil {
		cache.m = map[string]cachedInstance{}
	}
	cache.m[c.base] = cachedInstance{inst: inst, fetched: now}
	cache.mu.Unlock()
	return inst, nil
}

// account is the part of an Account the provider reads.
type account struct {
	ID          string `json:"id"`
	Username    string `json:"username"`
	Acct        string `json:"acct"`
	DisplayName string `json:"display_name"`
	Avatar      string `json:"avatar"`
	URL         string `json:"url"`
}

func (c *client) verifyCredentials(ctx context.Context) (account, error) {
	var a account
	_, err := c.get(ctx, pathVerify, &a)
	if err == nil && a.ID == "" {
		err = fmt.Errorf("Mastodon (%s): verify_credentials answered without an account id", c.host)
	}
	return a, err
}

// attachment is the part of a MediaAttachment the provider reads; URL is null while the
// instance processes the file.
type attachment struct {
	ID  string  `json:"id"`
	URL *string `json:"url"`
}

// status is the part of a Status the provider reads.
type status struct {
	ID    string       `json:"id"`
	URL   string       `json:"url"`
	URI   string       `json:"uri"`
	Media []attachment `json:"media_attachments"`
}

func (s status) link() string {
	if s.URL != "" {
		return s.URL
	}
	return s.URI
}

// uploadBody is the multipart/form-data body of POST /api/v2/media: description, file and
// thumbnail, the files streamed from their media. Its length is known beforehand (the parts'
// headers are fixed), so the request carries Content-Length instead of a chunked body.
type uploadBody struct {
	io.Reader
	closers     []io.Closer
	length      int64
	contentType string
}

func (b *uploadBody) Close() error {
	for _, c := range b.closers {
		_ = c.Close()
	}
	return nil
}

// newUploadBody opens the video (and thumbnail) and lays out the form around them.
func newUploadBody(ctx context.Context, video provider.Media, videoType string, thumb *provider.Media, thumbType, description string) (*uploadBody, error) {
	var cur bytes.Buffer
	mw := multipart.NewWriter(&cur)
	take := func() []byte { b := bytes.Clone(cur.Bytes()); cur.Reset(); return b }
	if description != "" {
		if err := mw.WriteField("description", description); err != nil {
			return nil, err
		}
	}
	part := func(name, filename, ctype string) error {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, name, filename))
		h.Set("Content-Type", ctype)
		_, err := mw.CreatePart(h)
		return err
	}
	if err := part("file", "video"+provider.Extension(videoType), videoType); err != nil {
		return nil, err
	}
	b := &uploadBody{contentType: mw.FormDataContentType()}
	head := take()
	rc, err := video.Open(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the video: %w", err)
	}
	b.closers = append(b.closers, rc)
	readers := []io.Reader{bytes.NewReader(head), io.LimitReader(rc, video.Size)}
	b.length = int64(len(head)) + video.Size
	if thumb != nil {
		if err := part("thumbnail", "thumbnail"+provider.Extension(thumbType), thumbType); err != nil {
			b.Close()
			return nil, err
		}
		mid := take()
		trc, err := thumb.Open(ctx, 0)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("opening the thumbnail: %w", err)
		}
		b.closers = append(b.closers, trc)
		readers = append(readers, bytes.NewReader(mid), io.LimitReader(trc, thumb.Size))
		b.length += int64(len(mid)) + thumb.Size
	}
	if err := mw.Close(); err != nil {
		b.Close()
		return nil, err
	}
	tail := take()
	readers = append(readers, bytes.NewReader(tail))
	b.length += int64(len(tail))
	b.Reader = io.MultiReader(readers...)
	return b, nil
}

// instanceBase normalizes an instance URL: https:// when no scheme is given, no trailing
// slash, no query.
func instanceBase(raw string) (base, host string, err error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", "", errors.New("no instance URL")
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return "", "", fmt.Errorf("%q is not an http(s) URL of a Mastodon instance", raw)
	}
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimRight(u.String(), "/"), strings.ToLower(u.Host), nil
}
