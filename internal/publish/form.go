package publish

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
)

// Multipart fields of the publish form besides the files: plain strings, JSON arrays, JSON
// objects (the per-platform objects) and one boolean.
var (
	formStrings = []string{"project_id", "video_url", "thumbnail_url", "title", "caption", "scheduled_for", "fit", "transcode"}
	formArrays  = []string{"platforms", "channel_ids"}
	formObjects = platform.All
)

// maxFormField bounds one non-file form field (a caption is at most 5000 characters).
const maxFormField = 64 << 10

// maxFileName bounds an uploaded file's name, which is kept with the post (a YouTube title may
// be derived from it); file systems take 255 bytes.
const maxFileName = 1024

// MaxFormBytes bounds a whole multipart publish request: the largest video and thumbnail and
// room for the other fields.
const MaxFormBytes = media.MaxVideoBytes + media.MaxImageBytes + 4*media.MB

// FormTooLarge is the answer to a publish form over MaxFormBytes, 413 stating the limits in
// the unit they are documented in; size is the body's declared length (0: unknown, the
// excess was met while reading).
func FormTooLarge(size int64) *apierr.Error {
	is := "is over " + media.FormatBytes(MaxFormBytes)
	if size > 0 {
		is = "is " + media.FormatBytes(size)
	}
	return apierr.Newf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge,
		"the request body %s; a publish form may be at most %s: a video of up to %s, a thumbnail of up to %s and the other fields (1 MB = 1,000,000 bytes)",
		is, media.FormatBytes(MaxFormBytes), media.FormatBytes(media.MaxVideoBytes), media.FormatBytes(media.MaxImageBytes))
}

// ReadRequestForm reads r's multipart/form-data body into sub with ReadForm. The body is read
// in blocks of formReadBuf: mime/multipart reads its source 4 KiB at a time, which on a
// network body is one read system call per 4 KiB of video. The caller bounds the body
// (http.MaxBytesReader with MaxFormBytes). A body whose declared length is over the bound is
// refused before a byte of it is read: a client that sent Expect: 100-continue is answered
// before it sends the body, since net/http sends "100 Continue" only on the first read.
func (s *Service) ReadRequestForm(r *http.Request, sub *Submission) error {
	if r.ContentLength > MaxFormBytes {
		return FormTooLarge(r.ContentLength)
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err != nil || mt != "multipart/form-data":
		return apierr.Field("body", "is not a readable multipart form: "+http.ErrNotMultipart.Error())
	case params["boundary"] == "":
		return apierr.Field("body", "is not a readable multipart form: "+http.ErrMissingBoundary.Error())
	}
	body := &limitWatch{r: r.Body}
	br := formReaders.Get().(*bufio.Reader)
	br.Reset(body)
	defer func() {
		br.Reset(nil)
		formReaders.Put(br)
	}()
	err = s.ReadForm(r.Context(), multipart.NewReader(br, params["boundary"]), sub)
	if err != nil && body.over {
		// mime/multipart reports a header cut off by the limit as malformed, not as the
		// limit's error: the body was refused for its size all the same.
		return FormTooLarge(0)
	}
	return err
}

// limitWatch notes whether its reader reported an http.MaxBytesError.
type limitWatch struct {
	r    io.Reader
	over bool
}

func (l *limitWatch) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	var mbe *http.MaxBytesError
	if err != nil && errors.As(err, &mbe) {
		l.over = true
	}
	return n, err
}

// formReadBuf is the block in which ReadRequestForm reads a body; the readers are pooled, so
// that small forms do not each allocate one.
const formReadBuf = 256 << 10

var formReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, formReadBuf) }}

// ReadForm streams a multipart publish request into sub: files go straight to media storage
// (sniffed, size-capped, probed) as their parts arrive; the other fields are collected and
// decoded as the JSON request would be, and sub.RequestHash is set from all of them. On any
// error the files taken in are deleted. The HTTP API and the web dashboard both read their
// publish forms with it (through ReadRequestForm), so the two cannot drift apart.
func (s *Service) ReadForm(ctx context.Context, mr *multipart.Reader, sub *Submission) (err error) {
	defer func() {
		if err != nil {
			s.Discard(sub.Video, sub.Thumbnail)
			sub.Video, sub.Thumbnail = nil, nil
		}
	}()
	fields := map[string]json.RawMessage{}
	var hashParts []string
	var videoFileName string
	checked := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return mediaReadError("body", &formReadError{err})
		}
		part := formPart{p}
		name := part.FormName()
		switch {
		case name == "video" || name == "thumbnail":
			dst, kinds, limit := &sub.Video, media.VideoKinds, media.MaxVideoBytes
			if name == "thumbnail" {
				dst, kinds, limit = &sub.Thumbnail, media.ImageKinds, media.MaxImageBytes
			}
			if *dst != nil {
				return apierr.Field(name, "is given twice")
			}
			if !utf8.ValidString(part.FileName()) {
				return apierr.Field(name, "has a file name that is not valid UTF-8")
			}
			if len(part.FileName()) > maxFileName {
				return apierr.Field(name, fmt.Sprintf("has a file name of %d bytes; at most %d are taken", len(part.FileName()), maxFileName))
			}
			if !checked && len(fields) > 0 {
				checked = true
				if err := s.checkBeforeFile(ctx, sub, name, fields); err != nil {
					return err
				}
			}
			stored, err := media.IngestUpload(ctx, s.Media, part, limit, kinds)
			if err != nil {
				return mediaReadError(name, err)
			}
			*dst = &stored
			hashParts = append(hashParts, name+"="+stored.Blob.SHA256)
			if name == "video" {
				// The file's name is part of the request: YouTube's title may be derived from it.
				videoFileName = part.FileName()
				hashParts = append(hashParts, "video_file_name="+videoFileName)
			}
		case slices.Contains(formStrings, name), slices.Contains(formArrays, name), slices.Contains(formObjects, name), name == "allow_duplicate":
			if _, dup := fields[name]; dup {
				return apierr.Field(name, "is given twice")
			}
			raw, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err != nil {
				return mediaReadError(name, err)
			}
			if len(raw) > maxFormField {
				return apierr.Field(name, fmt.Sprintf("must be at most %d bytes", maxFormField))
			}
			v, err := formValue(name, string(raw))
			if err != nil {
				return err
			}
			fields[name] = v
			hashParts = append(hashParts, name+"="+string(raw))
		default:
			return apierr.Field(name, "unknown field")
		}
	}
	body, _ := json.Marshal(fields)
	if err := apierr.DecodeJSON(bytes.NewReader(body), &sub.Request); err != nil {
		return err
	}
	sub.Request.VideoFileName = videoFileName
	if sub.CRLFLineEnds {
		sub.Request.NormalizeNewlines()
	}
	sort.Strings(hashParts)
	sub.RequestHash = RequestHash(append([]string{"multipart"}, hashParts...)...)
	return nil
}

// checkBeforeFile answers, before the form's first file (file, "video" or "thumbnail") is
// read, what the fields sent before it already refuse, so that the file is not streamed to
// storage for nothing: the checks that need no file (CheckStatic: an unknown platform, a text
// over its own limits, ...), the account's suspension, the project, the channels it resolves
// to (a platform with no channel, a channel not in the project) and the allowance. Only
// what no later field can undo is answered: the problems of the fields that came, each of
// which is given once. The checks a later field could change (a platform's text that falls
// back to the caption, which a platform object sent after the file would replace) wait for
// the whole form, as every check does when the file comes first.
func (s *Service) checkBeforeFile(ctx context.Context, sub *Submission, file string, fields map[string]json.RawMessage) error {
	var req Request
	body, _ := json.Marshal(fields)
	if err := apierr.DecodeJSON(bytes.NewReader(body), &req); err != nil {
		return err
	}
	if sub.CRLFLineEnds {
		req.NormalizeNewlines()
	}
	// came keeps the problems of the fields that came ("channel_ids[1]" is channel_ids').
	came := func(f apierr.Fields) error {
		var out apierr.Fields
		for field, msg := range f {
			root := field
			if i := strings.IndexAny(field, ".["); i >= 0 {
				root = field[:i]
			}
			if _, ok := fields[root]; ok {
				out.Add(field, msg)
			}
		}
		return out.Err()
	}
	_, f := req.CheckStatic(s.now(), file == "video", file == "thumbnail")
	if err := came(f); err != nil {
		return err
	}
	account, err := s.Store.GetAccount(ctx, sub.AccountID)
	if err != nil {
		return err
	}
	if account.Suspended {
		return errSuspended
	}
	if _, ok := fields["project_id"]; ok {
		project, err := s.Store.GetProject(ctx, sub.AccountID, req.ProjectID)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("project")
		}
		if err != nil {
			return err
		}
		var cf apierr.Fields
		if _, err := s.destinationChannels(ctx, project, &req, &cf); err != nil {
			return err
		}
		if err := came(cf); err != nil {
			return err
		}
	}
	// A spent allowance refuses a new post, but not the replay of one made under the same
	// Idempotency-Key (whose request, file included, only Submit can compare).
	unusedKey := sub.IdempotencyKey == ""
	if !unusedKey {
		_, _, err := s.Store.LookupIdempotencyKey(ctx, sub.AccountID, sub.IdempotencyKey)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		unusedKey = err != nil
	}
	if unusedKey {
		return s.checkAllowance(ctx, account)
	}
	return nil
}

// formValue turns one form field into the JSON value the JSON request would carry. Text that
// is not UTF-8 is refused here: json.Marshal would replace it with U+FFFD.
func formValue(name, v string) (json.RawMessage, error) {
	if !utf8.ValidString(v) {
		return nil, apierr.Field(name, "is not valid UTF-8; form fields must be sent as UTF-8")
	}
	switch {
	case slices.Contains(formArrays, name):
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "[") {
			// A comma-separated list is accepted too: platforms=youtube,tiktok.
			var list []string
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" {
					list = append(list, item)
				}
			}
			b, _ := json.Marshal(list)
			return b, nil
		}
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			return nil, apierr.Field(name, "must be a JSON array of strings, e.g. [\"youtube\",\"tiktok\"]")
		}
		return json.RawMessage(v), nil
	case slices.Contains(formObjects, name):
		if strings.TrimSpace(v) == "null" {
			return json.RawMessage("null"), nil // as in JSON: the object is not given
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(v), &obj); err != nil {
			return nil, apierr.Field(name, "must be a JSON object, e.g. {\"privacy_status\":\"unlisted\"}")
		}
		return json.RawMessage(v), nil
	case name == "allow_duplicate":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, apierr.Field(name, "must be true or false")
		}
		return json.RawMessage(strconv.FormatBool(b)), nil
	default:
		b, _ := json.Marshal(v)
		return b, nil
	}
}

// formPart is a part of the form whose read errors are marked as the body's.
type formPart struct{ *multipart.Part }

func (p formPart) Read(b []byte) (int, error) {
	n, err := p.Part.Read(b)
	if err != nil && err != io.EOF {
		err = &formReadError{err}
	}
	return n, err
}

// formReadError is a failure to read the form itself (a malformed or cut-off multipart
// body), as opposed to a failure to store what was read: the client's fault, not the server's.
type formReadError struct{ err error }

func (e *formReadError) Error() string { return e.err.Error() }
func (e *formReadError) Unwrap() error { return e.err }

// mediaReadError maps an error reading or storing a form part.
func mediaReadError(field string, err error) error {
	var mbe *http.MaxBytesError
	var refused *apierr.Error
	var fre *formReadError
	switch {
	case errors.As(err, &mbe):
		return FormTooLarge(0)
	case errors.As(err, &refused):
		// The body itself was refused while it was read (too slow, or past the request's time
		// limit): that refusal is the answer, not the form it left cut short.
		return refused
	case errors.As(err, &fre):
		return apierr.Field(field, "could not be read: the multipart body is malformed or cut short ("+fre.Error()+")")
	}
	return media.FieldError(field, err)
}
