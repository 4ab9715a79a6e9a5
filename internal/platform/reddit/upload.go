package reddit

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// lease is what POST /api/media/asset.json hands out: an S3 POST policy for one object. Its
// fields carry a signature and a temporary AWS security token, so a lease lives in memory
// only (Provider.leases), never in State.
type lease struct {
	action  string // with the scheme: https://reddit-uploaded-video.s3-accelerate.amazonaws.com
	fields  [][2]string
	key     string
	assetID string
	ws      string
	expires time.Time // the policy's expiration on Config.Now
}

// objectURL is the uploaded object's URL, what /api/submit takes as url or video_poster_url
// (PRAW: upload_url + "/" + key).
func (l *lease) objectURL() string { return l.action + "/" + l.key }

// requestLease asks for an upload lease of one file. scheme is the API base's ("https" for
// Reddit), used for Reddit's protocol-relative action URLs.
func (c client) requestLease(ctx context.Context, filepath, mimetype, scheme string) (*lease, error) {
	var out struct {
		Args struct {
			Action string `json:"action"`
			Fields []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"fields"`
		} `json:"args"`
		Asset struct {
			AssetID      string `json:"asset_id"`
			WebsocketURL string `json:"websocket_url"`
		} `json:"asset"`
	}
	now := c.p.cfg.Now()
	if err := c.post(ctx, "/api/media/asset.json", url.Values{"filepath": {filepath}, "mimetype": {mimetype}}, &out); err != nil {
		return nil, err
	}
	l := &lease{action: strings.TrimRight(out.Args.Action, "/"), assetID: out.Asset.AssetID, ws: out.Asset.WebsocketURL,
		expires: now.Add(time.Minute)}
	if strings.HasPrefix(l.action, "//") {
		l.action = scheme + ":" + l.action
	}
	var policy string
	for _, f := range out.Args.Fields {
		l.fields = append(l.fields, [2]string{f.Name, f.Value})
		switch strings.ToLower(f.Name) {
		case "key":
			l.key = f.Value
		case "policy":
			policy = f.Value
		}
	}
	if exp, ok := policyExpiration(policy); ok {
		l.expires = exp
	}
	if u, err := url.Parse(l.action); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || l.key == "" || l.assetID == "" {
		return nil, provider.Permanent(provider.CategoryInternal, http.StatusOK,
			"Reddit's media lease has no usable upload action, key or asset id (action %q)", out.Args.Action)
	}
	return l, nil
}

// policyExpiration reads the expiration of a base64 S3 POST policy.
func policyExpiration(policy string) (time.Time, bool) {
	raw, err := base64.StdEncoding.DecodeString(policy)
	if err != nil {
		return time.Time{}, false
	}
	var p struct {
		Expiration string `json:"expiration"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, p.Expiration)
	return t, err == nil
}

// s3Error is S3's XML error answer.
type s3Error struct {
	status  int
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
	Max     string `xml:"MaxSizeAllowed"`
}

func (e *s3Error) Error() string {
	s := fmt.Sprintf("S3 HTTP %d %s: %s", e.status, e.Code, e.Message)
	if e.Max != "" {
		s += " (at most " + e.Max + " bytes)"
	}
	return s
}

// expired reports whether S3 refused the upload because the lease's policy has expired.
func (e *s3Error) expired() bool {
	return e.Code == "AccessDenied" && strings.Contains(strings.ToLower(e.Message), "expired")
}

// upload POSTs the file to the lease's action as S3's POST-policy form: every field of the
// lease in order, then the file as the last part. The body is streamed from m with an exact
// Content-Length (S3 takes no chunked POST), so the video is never held in memory.
func (p *Provider) upload(ctx context.Context, l *lease, m provider.Media, filename, ctype string) error {
	var pre bytes.Buffer
	mw := multipart.NewWriter(&pre)
	for _, f := range l.fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
	h.Set("Content-Type", ctype)
	if _, err := mw.CreatePart(h); err != nil {
		return err
	}
	head := append([]byte(nil), pre.Bytes()...)
	pre.Reset()
	if err := mw.Close(); err != nil {
		return err
	}
	tail := pre.Bytes()

	rc, err := m.Open(ctx, 0)
	if err != nil {
		return provider.Transient(provider.CategoryInternal, 0, 0, "opening %s: %v", filename, err)
	}
	// The transport closes the body (and rc with it) once done with it, which may be after Do
	// returned (an answer before the whole body was read): closing rc here too would race its
	// reads.
	body := struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), io.LimitReader(rc, m.Size), bytes.NewReader(tail)), rc}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.action, body)
	if err != nil {
		rc.Close()
		return provider.Permanent(provider.CategoryInternal, 0, "Reddit upload: %v", err)
	}
	req.ContentLength = int64(len(head)) + m.Size + int64(len(tail))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("User-Agent", p.cfg.UserAgent)
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		err = provider.WithoutURL(err)
		return provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "uploading %s to Reddit's storage: %v", filename, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	e := &s3Error{status: resp.StatusCode}
	if xml.Unmarshal(raw, e) != nil || e.Code == "" {
		e.Code = http.StatusText(resp.StatusCode)
		e.Message = provider.Excerpt(raw, 300)
	}
	return e
}

// classifyS3 turns a refused upload into a *provider.Error.
func classifyS3(e *s3Error, what string) *provider.Error {
	msg := "Reddit's storage refused " + what + ": " + e.Error()
	switch {
	case e.Code == "EntityTooLarge" || e.Code == "EntityTooSmall":
		return provider.Permanent(provider.CategoryMediaRejected, e.status, "%s", msg)
	case e.status >= 500 || e.Code == "SlowDown" || e.Code == "RequestTimeout":
		return provider.Transient(provider.CategoryUpstreamUnavailable, e.status, 0, "%s", msg)
	}
	return provider.Permanent(provider.CategoryInternal, e.status, "%s", msg)
}

// exists reports whether an uploaded object is there (HEAD; Reddit's uploads are
// public-read). S3 stores a POST whole or not at all, so an object that exists is complete.
func (p *Provider) exists(ctx context.Context, objectURL string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.APITimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, objectURL, nil)
	if err != nil {
		return false, provider.Permanent(provider.CategoryInternal, 0, "Reddit upload check: %v", err)
	}
	req.Header.Set("User-Agent", p.cfg.UserAgent)
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		err = provider.WithoutURL(err)
		return false, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "checking an earlier upload on Reddit's storage: %v", err)
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2:
		return true, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden:
		return false, nil
	}
	return false, provider.Transient(provider.CategoryUpstreamUnavailable, resp.StatusCode, 0,
		"checking an earlier upload on Reddit's storage: HTTP %d", resp.StatusCode)
}

// Leases in memory, by destination and asset.

func (p *Provider) putLease(destID string, l *lease) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.cfg.Now()
	for k, v := range p.leases {
		if !now.Before(v.expires) {
			delete(p.leases, k)
		}
	}
	p.leases[destID+"|"+l.assetID] = l
}

// takeLease returns the lease of an asset if it is still good for an upload to start.
func (p *Provider) takeLease(destID, assetID string) *lease {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.leases[destID+"|"+assetID]
	if l == nil {
		return nil
	}
	if !p.cfg.Now().Before(l.expires.Add(-leaseMargin)) {
		delete(p.leases, destID+"|"+assetID)
		return nil
	}
	return l
}

func (p *Provider) dropLease(destID, assetID string) {
	p.mu.Lock()
	delete(p.leases, destID+"|"+assetID)
	p.mu.Unlock()
}
