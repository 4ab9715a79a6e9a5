package tiktok

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/provider"
)

// API paths (developers.tiktok.com Content Posting API reference), below the version (/v2).
const (
	pathCreatorInfo = "/post/publish/creator_info/query/"
	pathDirectInit  = "/post/publish/video/init/"
	pathInboxInit   = "/post/publish/inbox/video/init/"
	pathStatus      = "/post/publish/status/fetch/"
	pathUserInfo    = "/user/info/"
)

// apiError is a TikTok API v2 error: {"error":{"code","message","log_id"}}, which TikTok sends
// with HTTP 200 in some cases (creator_info's spam_risk_too_many_posts), so the code is checked
// on every answer.
type apiError struct {
	HTTP       int
	Code       string
	Message    string
	LogID      string
	RetryAfter time.Duration
}

func (e *apiError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.HTTP)
	}
	s := fmt.Sprintf("TikTok: %s (%s", msg, e.Code)
	if e.LogID != "" {
		s += ", log_id " + e.LogID
	}
	return s + ")"
}

// publishError classifies a TikTok error code (TikTok API v2 error handling page and the
// per-endpoint error tables).
func (e *apiError) publishError() *provider.Error {
	msg := e.Error()
	switch e.Code {
	case "access_token_invalid", "scope_not_authorized", "scope_permission_missed":
		return provider.Permanent(provider.CategoryAuthExpired, e.HTTP, "%s", msg)
	case "rate_limit_exceeded":
		ra := e.RetryAfter
		if ra <= 0 {
			// TikTok's limits are per minute and it documents no Retry-After: a minute
			// always empties the window.
			ra = time.Minute
		}
		return provider.Transient(provider.CategoryRateLimited, e.HTTP, ra, "%s", msg)
	case "spam_risk_too_many_posts", "spam_risk_too_many_pending_share", "reached_active_user_cap":
		return provider.Permanent(provider.CategoryQuotaExceeded, e.HTTP, "%s", msg)
	case "privacy_level_option_mismatch", "unaudited_client_can_only_post_to_private_accounts",
		"url_ownership_unverified", "invalid_params", "invalid_param", "spam_risk_user_banned_from_posting":
		return provider.Permanent(provider.CategoryInvalidOptions, e.HTTP, "%s", msg)
	case "invalid_file_upload":
		return provider.Permanent(provider.CategoryMediaRejected, e.HTTP, "%s", msg)
	case "internal_error":
		return provider.Transient(provider.CategoryUpstreamUnavailable, e.HTTP, e.RetryAfter, "%s", msg)
	}
	switch {
	case e.HTTP == http.StatusTooManyRequests:
		return provider.Transient(provider.CategoryRateLimited, e.HTTP, max(e.RetryAfter, time.Minute), "%s", msg)
	case e.HTTP >= 500 || e.HTTP == http.StatusRequestTimeout:
		return provider.Transient(provider.CategoryUpstreamUnavailable, e.HTTP, e.RetryAfter, "%s", msg)
	case e.HTTP == http.StatusUnauthorized:
		return provider.Permanent(provider.CategoryAuthExpired, e.HTTP, "%s", msg)
	}
	return provider.Permanent(provider.CategoryInternal, e.HTTP, "%s", msg)
}

type envelope struct {
	Data  json.RawMessage `json:"data"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		LogID   string `json:"log_id"`
	} `json:"error"`
}

// call POSTs a JSON body to a TikTok API path and decodes data into out. A failure is an
// *apiError (TikTok answered) or a transport error.
func (p *Provider) call(ctx context.Context, base, token, path string, body, out any) error {
	return p.send(ctx, http.MethodPost, base, token, path, body, out)
}

// send is call with any method; a GET has no body (path carries the query).
func (p *Provider) send(ctx context.Context, method, base, token, path string, body, out any) error {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.APITimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+"/"+p.cfg.APIVersion+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	}
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	var env envelope
	jsonErr := json.Unmarshal(raw, &env)
	if jsonErr != nil || env.Error.Code == "" {
		if resp.StatusCode/100 == 2 && jsonErr == nil {
			env.Error.Code = "ok" // tolerate an answer without an error object
		} else {
			return &apiError{HTTP: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode),
				Message: strings.TrimSpace(string(truncate(raw, 300))), RetryAfter: retryAfter(resp.Header, p.cfg.Now())}
		}
	}
	if env.Error.Code != "ok" {
		return &apiError{HTTP: resp.StatusCode, Code: env.Error.Code, Message: env.Error.Message,
			LogID: env.Error.LogID, RetryAfter: retryAfter(resp.Header, p.cfg.Now())}
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{HTTP: resp.StatusCode, Code: "http_" + strconv.Itoa(resp.StatusCode),
			Message: "unexpected answer", LogID: env.Error.LogID, RetryAfter: retryAfter(resp.Header, p.cfg.Now())}
	}
	if out != nil && len(env.Data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(env.Data))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return fmt.Errorf("TikTok %s: decoding data: %w", path, err)
		}
	}
	return nil
}

type creatorInfo struct {
	Username        string   `json:"creator_username"`
	Nickname        string   `json:"creator_nickname"`
	AvatarURL       string   `json:"creator_avatar_url"`
	PrivacyOptions  []string `json:"privacy_level_options"`
	CommentDisabled bool     `json:"comment_disabled"`
	DuetDisabled    bool     `json:"duet_disabled"`
	StitchDisabled  bool     `json:"stitch_disabled"`
	MaxDurationSec  int      `json:"max_video_post_duration_sec"`
}

// creatorInfo queries creator_info. TikTok asks clients to call it before every post, so the
// privacy levels and interaction settings it answers are current.
func (p *Provider) creatorInfo(ctx context.Context, base, token string) (creatorInfo, error) {
	var ci creatorInfo
	// creator_info/query reads the creator's settings: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, classify, func() error { return p.call(ctx, base, token, pathCreatorInfo, nil, &ci) })
	return ci, err
}

type postInfo struct {
	Title              string `json:"title,omitempty"`
	PrivacyLevel       string `json:"privacy_level"`
	DisableDuet        bool   `json:"disable_duet"`
	DisableComment     bool   `json:"disable_comment"`
	DisableStitch      bool   `json:"disable_stitch"`
	BrandContentToggle bool   `json:"brand_content_toggle"`
	BrandOrganicToggle bool   `json:"brand_organic_toggle"`
	IsAIGC             bool   `json:"is_aigc"`
}

type sourceInfo struct {
	Source          string `json:"source"`
	VideoSize       int64  `json:"video_size"`
	ChunkSize       int64  `json:"chunk_size"`
	TotalChunkCount int    `json:"total_chunk_count"`
}

type initRequest struct {
	PostInfo   *postInfo  `json:"post_info,omitempty"`
	SourceInfo sourceInfo `json:"source_info"`
}

type initData struct {
	PublishID string `json:"publish_id"`
	UploadURL string `json:"upload_url"`
}

type statusData struct {
	Status        string        `json:"status"`
	FailReason    string        `json:"fail_reason"`
	PostIDs       []json.Number `json:"publicaly_available_post_id"` // sic
	UploadedBytes int64         `json:"uploaded_bytes"`
}

func (p *Provider) fetchStatus(ctx context.Context, base, token, publishID string) (statusData, error) {
	var s statusData
	// status/fetch reads where a publish stands: asking again changes nothing.
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		return p.call(ctx, base, token, pathStatus, map[string]string{"publish_id": publishID}, &s)
	})
	return s, err
}

// chunkResult is what the upload URL answered to one PUT.
type chunkResult struct {
	status int
	// uploaded is the byte count the Content-Range header reports, in both of its readings
	// (the docs write "bytes 0-{UPLOADED_BYTES}/{TOTAL}", HTTP would put the last byte's index
	// there); -1 when the header is missing.
	asCount, asLastIndex int64
	body                 string
}

// putChunk sends one chunk, streaming it from the media. The upload URL carries its own
// token: no Authorization header goes to it.
func (p *Provider) putChunk(ctx context.Context, d *provider.Destination, st *State, i int) (chunkResult, error) {
	first, n := st.plan().Range(i)
	rc, err := d.Video.Open(ctx, first)
	if err != nil {
		return chunkResult{}, fmt.Errorf("opening the video at byte %d: %w", first, err)
	}
	body := struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, n), rc}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, st.UploadURL, body)
	if err != nil {
		rc.Close()
		return chunkResult{}, err
	}
	req.ContentLength = n
	req.Header.Set("Content-Type", st.ContentType)
	req.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, first+n-1, st.VideoSize))
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return chunkResult{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	res := chunkResult{status: resp.StatusCode, asCount: -1, asLastIndex: -1, body: strings.TrimSpace(string(raw))}
	if cr := resp.Header.Get("Content-Range"); cr != "" {
		res.asCount, res.asLastIndex = parseProgress(cr)
	}
	return res, nil
}

// parseProgress reads "bytes 0-E/T" (or "bytes */T": nothing yet) and returns the uploaded
// byte count under both readings of E: E itself, and E+1.
func parseProgress(s string) (asCount, asLastIndex int64) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !ok {
		return -1, -1
	}
	rng, _, ok := strings.Cut(rest, "/")
	if !ok {
		return -1, -1
	}
	if rng == "*" {
		return 0, 0
	}
	_, e, ok := strings.Cut(rng, "-")
	if !ok {
		return -1, -1
	}
	v, err := strconv.ParseInt(e, 10, 64)
	if err != nil || v < 0 {
		return -1, -1
	}
	return v, v + 1
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	d, _ := httpx.RetryAfter(h, now)
	return d
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
