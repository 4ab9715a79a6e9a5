package pinterest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// ticket is what registering a media answered: the upload URL and the form fields of an S3
// browser POST. The fields carry temporary AWS credentials (x-amz-security-token and the
// policy's signature), so tickets live in the provider's memory only, never in State: a
// process that did not register the media asks Pinterest where the upload stands instead, and
// registers again when it has to.
type ticket struct {
	url       string
	fields    map[string]string
	issued    time.Time
	attempted bool // a POST of the file was started: its outcome must be asked before another
}

// ticketTTL is how long an unused ticket is kept in memory.
const ticketTTL = 24 * time.Hour

func (p *Provider) putTicket(mediaID string, t *ticket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, old := range p.tickets {
		if t.issued.Sub(old.issued) > ticketTTL {
			delete(p.tickets, id)
		}
	}
	p.tickets[mediaID] = t
}

// takeTicket returns the ticket of a media and marks it attempted.
func (p *Provider) takeTicket(mediaID string) (ticket, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tickets[mediaID]
	if !ok {
		return ticket{}, false
	}
	out := *t
	t.attempted = true
	return out, true
}

func (p *Provider) peekTicket(mediaID string) (ticket, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tickets[mediaID]
	if !ok {
		return ticket{}, false
	}
	return *t, true
}

func (p *Provider) dropTicket(mediaID string) {
	p.mu.Lock()
	delete(p.tickets, mediaID)
	p.mu.Unlock()
}

// s3Result is what the upload URL answered.
type s3Result struct {
	status        int
	code, message string
}

func (r s3Result) ok() bool {
	return r.status == http.StatusNoContent || r.status == http.StatusOK || r.status == http.StatusCreated
}

func (r s3Result) String() string {
	if r.code == "" {
		return fmt.Sprintf("HTTP %d %s", r.status, r.message)
	}
	return fmt.Sprintf("%s: %s (HTTP %d)", r.code, r.message, r.status)
}

// postFile uploads the video to the ticket's URL as S3 expects a browser POST: a
// multipart/form-data body with every upload parameter first (key first, as S3's examples
// do) and the file last, streamed from the media, with an exact Content-Length (S3 refuses
// chunked bodies). No Authorization header goes to it: the form carries its own credentials.
func (p *Provider) postFile(ctx context.Context, d *provider.Destination, t ticket, contentType string) (s3Result, error) {
	size := d.Video.Size
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	names := make([]string, 0, len(t.fields))
	for k := range t.fields {
		if k != "key" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if _, ok := t.fields["key"]; ok {
		names = append([]string{"key"}, names...)
	}
	for _, k := range names {
		if err := mw.WriteField(k, t.fields[k]); err != nil {
			return s3Result{}, err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": fileName(t.fields["key"], contentType)}))
	h.Set("Content-Type", contentType)
	if _, err := mw.CreatePart(h); err != nil {
		return s3Result{}, err
	}
	n := head.Len()
	if err := mw.Close(); err != nil {
		return s3Result{}, err
	}
	all := head.Bytes()
	pre, post := all[:n], slices.Clone(all[n:])

	rc, err := d.Video.Open(ctx, 0)
	if err != nil {
		return s3Result{}, fmt.Errorf("opening the video: %w", err)
	}
	body := struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(pre), io.LimitReader(rc, size), bytes.NewReader(post)), rc}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, body)
	if err != nil {
		rc.Close()
		return s3Result{}, err
	}
	req.ContentLength = int64(len(pre)) + size + int64(len(post))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		err = provider.WithoutURL(err)
		return s3Result{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	res := s3Result{status: resp.StatusCode}
	if !res.ok() {
		var e struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(raw, &e) == nil && e.Code != "" {
			res.code, res.message = e.Code, e.Message
		} else {
			res.message = provider.Excerpt(raw, 300)
		}
	}
	return res, nil
}

// fileName names the file part after the object key's last element, with the video's
// extension.
func fileName(key, contentType string) string {
	ext := ".mp4"
	if contentType == "video/quicktime" {
		ext = ".mov"
	}
	base := path.Base(key)
	if base == "." || base == "/" || base == "" || strings.ContainsAny(base, ":\\\"") {
		base = "video"
	}
	return strings.TrimSuffix(base, path.Ext(base)) + ext
}
