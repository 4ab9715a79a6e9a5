package linkedin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/provider"
)

// API paths below the base URL (https://api.linkedin.com).
const (
	pathVideos   = "/rest/videos"
	pathPosts    = "/rest/posts"
	pathUserinfo = "/v2/userinfo"
)

// apiError is an error answer of LinkedIn's API: {"status","serviceErrorCode","code","message"}
// (the Rest.li error shape), or {"status","message","errorDetails":{"inputErrors":[...]}} for
// validation errors, or any other body from a proxy.
type apiError struct {
	HTTP        int
	ServiceCode int
	Code        string
	Message     string
	InputCodes  []string // errorDetails.inputErrors[].code
	RetryAfter  time.Duration
	header      http.Header
}

func (e *apiError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.HTTP)
	}
	var tags []string
	if e.Code != "" {
		tags = append(tags, e.Code)
	}
	tags = append(tags, e.InputCodes...)
	if e.ServiceCode != 0 {
		tags = append(tags, "serviceErrorCode "+strconv.Itoa(e.ServiceCode))
	}
	s := fmt.Sprintf("LinkedIn: %s (HTTP %d", msg, e.HTTP)
	if len(tags) > 0 {
		s += ", " + strings.Join(tags, ", ")
	}
	return s + ")"
}

func (e *apiError) has(code string) bool {
	if e.Code == code {
		return true
	}
	for _, c := range e.InputCodes {
		if c == code {
			return true
		}
	}
	return false
}

// duplicateOf is the post LinkedIn names in a DUPLICATE_POST answer ("Content is a duplicate of
// urn:li:share:7141138937766391808"), or "".
func (e *apiError) duplicateOf() string {
	if !e.has("DUPLICATE_POST") {
		return ""
	}
	return duplicateURN.FindString(e.Message)
}

var duplicateURN = regexp.MustCompile(`urn:li:(?:share|ugcPost):[0-9]+`)

// classify turns a failed call into a *provider.Error.
func (p *Provider) classify(err error) *provider.Error {
	var ae *apiError
	if !errors.As(err, &ae) {
		var pe *provider.Error
		if errors.As(err, &pe) {
			return pe
		}
		err = provider.WithoutURL(err) // the URL may be a signed upload URL: keep it out of messages
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "LinkedIn: %v", err)
	}
	msg := ae.Error()
	switch {
	case ae.HTTP == http.StatusUnauthorized:
		// INVALID_ACCESS_TOKEN (65600), REVOKED_ACCESS_TOKEN (65601), EXPIRED_ACCESS_TOKEN (65602).
		return provider.Permanent(provider.CategoryAuthExpired, ae.HTTP, "%s", msg)
	case ae.HTTP == http.StatusForbidden:
		// ACCESS_DENIED: the token lacks w_member_social, or the member may not act for the
		// author. Connecting the channel again with the right scopes is the way out.
		return provider.Permanent(provider.CategoryAuthExpired, ae.HTTP, "%s", msg)
	case ae.HTTP == http.StatusUpgradeRequired || ae.Code == "NONEXISTENT_VERSION" || ae.Code == "VERSION_MISSING":
		return provider.Permanent(provider.CategoryAPIVersion, ae.HTTP,
			"%s; LinkedIn does not serve LinkedIn-Version %s: set REELAY_LINKEDIN_API_VERSION to a version "+
				"LinkedIn lists as active (https://learn.microsoft.com/en-us/linkedin/marketing/versioning)",
			msg, p.cfg.APIVersion)
	case ae.HTTP == http.StatusTooManyRequests:
		if strings.Contains(ae.Message, "DAY limit") {
			// A daily budget (the member's posts per day, or the application's calls per day)
			// is spent; LinkedIn resets it at midnight UTC.
			return provider.Permanent(provider.CategoryQuotaExceeded, ae.HTTP,
				"%s; LinkedIn's daily limits reset at midnight UTC", msg)
		}
		ra := ae.RetryAfter
		if ra <= 0 {
			ra = p.cfg.ThrottleWait
		}
		return provider.Transient(provider.CategoryRateLimited, ae.HTTP, ra, "%s", msg)
	case ae.HTTP >= 500 || ae.HTTP == http.StatusRequestTimeout:
		return provider.Transient(provider.CategoryUpstreamUnavailable, ae.HTTP, ae.RetryAfter, "%s", msg)
	}
	return provider.Permanent(provider.CategoryInternal, ae.HTTP, "%s", msg)
}

// client calls LinkedIn with one access token.
type client struct {
	p     *Provider
	base  string
	token string
}

// do sends a request to LinkedIn's API with the headers every versioned call carries and
// decodes a 2xx JSON answer into out (when out is not nil and there is a body). It returns the
// answer's headers.
func (c client) do(ctx context.Context, method, path string, body, out any, versioned bool) (http.Header, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(ctx, c.p.cfg.APITimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, provider.Permanent(provider.CategoryInternal, 0, "LinkedIn: building %s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if versioned {
		req.Header.Set("LinkedIn-Version", c.p.cfg.APIVersion)
		req.Header.Set("X-Restli-Protocol-Version", "2.0.0")
	}
	resp, err := c.p.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, parseError(resp, raw, c.p.cfg.Now())
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("%s %s: unexpected answer: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

// parseError reads LinkedIn's error body.
func parseError(resp *http.Response, raw []byte, now time.Time) *apiError {
	var body struct {
		Status       int    `json:"status"`
		ServiceCode  int    `json:"serviceErrorCode"`
		Code         string `json:"code"`
		Message      string `json:"message"`
		ErrorDetails struct {
			InputErrors []struct {
				Code        string `json:"code"`
				Description string `json:"description"`
			} `json:"inputErrors"`
		} `json:"errorDetails"`
	}
	ae := &apiError{HTTP: resp.StatusCode, header: resp.Header, RetryAfter: retryAfter(resp.Header, now)}
	if json.Unmarshal(raw, &body) == nil && (body.Message != "" || body.Code != "") {
		ae.ServiceCode, ae.Code, ae.Message = body.ServiceCode, body.Code, body.Message
		for _, ie := range body.ErrorDetails.InputErrors {
			if ie.Code != "" {
				ae.InputCodes = append(ae.InputCodes, ie.Code)
			}
		}
		return ae
	}
	ae.Message = provider.Excerpt(raw, 300)
	return ae
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	d, _ := httpx.RetryAfter(h, now)
	return d
}

// Videos API wire types.

type initializeUploadRequest struct {
	Owner           string `json:"owner"`
	FileSizeBytes   int64  `json:"fileSizeBytes"`
	UploadCaptions  bool   `json:"uploadCaptions"`
	UploadThumbnail bool   `json:"uploadThumbnail"`
}

type uploadInstruction struct {
	UploadURL string `json:"uploadUrl"`
	FirstByte int64  `json:"firstByte"`
	LastByte  int64  `json:"lastByte"`
}

type initializeUploadResponse struct {
	Value struct {
		UploadURLsExpireAt int64               `json:"uploadUrlsExpireAt"` // epoch milliseconds
		Video              string              `json:"video"`
		UploadInstructions []uploadInstruction `json:"uploadInstructions"`
		UploadToken        string              `json:"uploadToken"`
		ThumbnailUploadURL string              `json:"thumbnailUploadUrl"`
	} `json:"value"`
}

type finalizeUploadRequest struct {
	Video           string   `json:"video"`
	UploadToken     string   `json:"uploadToken"`
	UploadedPartIDs []string `json:"uploadedPartIds"`
}

type video struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// ProcessingFailureReason is read when present; the Videos API pages do not promise it.
	ProcessingFailureReason string `json:"processingFailureReason"`
}

// Video statuses of GET /rest/videos/{urn}.
const (
	videoWaitingUpload    = "WAITING_UPLOAD"
	videoProcessing       = "PROCESSING"
	videoAvailable        = "AVAILABLE"
	videoProcessingFailed = "PROCESSING_FAILED"
)

func (c client) getVideo(ctx context.Context, urn string) (video, error) {
	var v video
	// A GET: asking again changes nothing.
	err := c.p.cfg.Repeat.Do(ctx, c.p.classify, func() error {
		_, err := c.do(ctx, http.MethodGet, pathVideos+"/"+url.QueryEscape(urn), nil, &v, true)
		return err
	})
	return v, err
}

// Posts API wire types.

type postRequest struct {
	Author                    string       `json:"author"`
	Commentary                string       `json:"commentary"`
	Visibility                string       `json:"visibility"`
	Distribution              distribution `json:"distribution"`
	Content                   postContent  `json:"content"`
	LifecycleState            string       `json:"lifecycleState"`
	IsReshareDisabledByAuthor bool         `json:"isReshareDisabledByAuthor"`
}

type distribution struct {
	FeedDistribution               string   `json:"feedDistribution"`
	TargetEntities                 []string `json:"targetEntities"`
	ThirdPartyDistributionChannels []string `json:"thirdPartyDistributionChannels"`
}

type postContent struct {
	Media postMedia `json:"media"`
}

type postMedia struct {
	Title string `json:"title,omitempty"`
	ID    string `json:"id"`
}

// userinfo is the OpenID Connect userinfo answer (Sign In with LinkedIn using OpenID Connect).
type userinfo struct {
	Sub     string `json:"sub"`
	Name    string `json:"name"`
	Picture string `json:"picture"`
	Email   string `json:"email"`
}
