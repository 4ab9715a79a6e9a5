package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
)

// Stored is media taken in by IngestUpload or IngestURL: where it is stored and what it is.
type Stored struct {
	Blob Blob
	Info Info
	// Claim is the registry's token for this use of the file ("" without a registry): a
	// request that ends up not using the file releases it.
	Claim string
}

// IngestUpload takes a file from part (a multipart file part, or any stream) into store:
//
//  1. it reads the first SniffLen bytes and refuses anything whose magic bytes are not one
//     of the allowed kinds (names as in Kind.Name, e.g. VideoKinds) before storing a byte;
//  2. it streams the file into the store, failing with a *TooLargeError as soon as it
//     passes limit bytes (limit <= 0 means the contract's limit: MaxVideoBytes when a video
//     kind is allowed, else MaxImageBytes);
//  3. it probes the stored blob (headers only, through range reads).
//
// On any failure it deletes what it stored, so nothing is left behind; a blob that was
// already stored before (the same bytes uploaded earlier) is left alone. Errors wrap
// ErrUnsupportedFormat (415), ErrTooLarge (413), ErrCorrupt (400), or are part's own read
// error; HTTPStatus maps them.
func IngestUpload(ctx context.Context, store *Store, part io.Reader, limit int64, allowed []string) (Stored, error) {
	if limit <= 0 {
		limit = MaxImageBytes
		for _, name := range allowed {
			if k, ok := KindByName(name); ok && k.IsVideo() {
				limit = MaxVideoBytes
			}
		}
	}
	head := make([]byte, SniffLen)
	n, err := io.ReadFull(part, head)
	switch {
	case err == io.EOF:
		return Stored{}, fmt.Errorf("%w: the file is empty", ErrUnsupportedFormat)
	case err != nil && err != io.ErrUnexpectedEOF:
		return Stored{}, err
	}
	head = head[:n]
	kind, ok := Sniff(head)
	if !ok {
		return Stored{}, fmt.Errorf("%w: the file is not %s", ErrUnsupportedFormat, describeKinds(allowed))
	}
	if !slices.Contains(allowed, kind.Name) {
		return Stored{}, fmt.Errorf("%w: %s files are not accepted here, only %s", ErrUnsupportedFormat, strings.ToUpper(kind.Name), describeKinds(allowed))
	}
	if int64(n) > limit {
		return Stored{}, &TooLargeError{Limit: limit}
	}

	body := &capReader{r: io.MultiReader(bytes.NewReader(head), part), left: limit, limit: limit}
	tmp, b, err := store.receive(ctx, body, kind)
	if err != nil {
		return Stored{}, err
	}
	st := Stored{Blob: b}
	purged := false
	if st.Info, err = probeStored(ctx, store, tmp, b.Size); err == nil {
		// The claim comes before keep looks for the bytes under their key: once claimed, they
		// cannot be deleted by retention, so finding them there means they stay.
		st.Claim, purged, err = store.claim(ctx, st)
	}
	if err == nil {
		st.Blob, err = store.keep(ctx, tmp, b)
	} else {
		store.deleteQuietly(tmp)
	}
	if err == nil && purged {
		err = store.registry.RestoreMedia(ctx, b.SHA256)
	}
	if err != nil {
		return Stored{}, err
	}
	return st, nil
}

func (s *Store) claim(ctx context.Context, st Stored) (token string, purged bool, err error) {
	if s.registry == nil {
		return "", false, nil
	}
	token, purged, err = s.registry.ClaimMedia(ctx, st)
	if err != nil {
		return "", false, fmt.Errorf("media store: claiming %s: %w", st.Blob.Key, err)
	}
	return token, purged, nil
}

func probeStored(ctx context.Context, store *Store, key string, size int64) (Info, error) {
	ra, err := store.OpenAt(ctx, key)
	if err != nil {
		return Info{}, err
	}
	return Probe(ra, size)
}

// IngestURL is IngestUpload for a file at a URL, downloaded through fetcher (address
// policy, redirects, time limits): a URL that is refused, fails, declares a size over limit
// or serves the wrong kind of file stores nothing. Fetch errors wrap ErrBadURL,
// ErrBlockedAddress, ErrUpstream or ErrTooLarge.
func IngestURL(ctx context.Context, fetcher *Fetcher, store *Store, rawURL string, limit int64, allowed []string) (Stored, error) {
	if limit <= 0 {
		limit = MaxImageBytes
		for _, name := range allowed {
			if k, ok := KindByName(name); ok && k.IsVideo() {
				limit = MaxVideoBytes
			}
		}
	}
	resp, err := fetcher.Open(ctx, rawURL, limit)
	if err != nil {
		return Stored{}, err
	}
	defer resp.Close()
	return IngestUpload(ctx, store, resp, limit, allowed)
}

// Linked returns media this store already holds, named by one of this server's own signed
// links (a videoUrl from /ai/generate-video, say), so that it is used where it lies instead of
// being downloaded from ourselves. ok is false when rawURL is not such a link, or no longer a
// valid one: the caller then fetches it like any URL, and gets the server's own refusal. The
// blob is marked Deduplicated, since it belongs to whatever stored it first.
func (s *Store) Linked(ctx context.Context, rawURL string, allowed []string) (st Stored, ok bool, err error) {
	key, ok := s.linkedKey(rawURL)
	if !ok {
		return Stored{}, false, nil
	}
	a, err := s.Stat(ctx, key)
	if err != nil {
		return Stored{}, false, nil
	}
	id, _ := IDFromKey(key)
	b := Blob{Key: key, Size: a.Size, SHA256: id, ContentType: a.ContentType, Deduplicated: true}
	info, err := probeStored(ctx, s, key, b.Size)
	if err != nil {
		return Stored{}, true, err
	}
	if !slices.Contains(allowed, info.Kind.Name) {
		return Stored{}, true, fmt.Errorf("%w: %s files are not accepted here, only %s", ErrUnsupportedFormat,
			strings.ToUpper(info.Kind.Name), describeKinds(allowed))
	}
	st = Stored{Blob: b, Info: info}
	purged := false
	if st.Claim, purged, err = s.claim(ctx, st); err != nil {
		return Stored{}, true, err
	}
	// Retention may have deleted the bytes between the look above and the claim; after the
	// claim they cannot go any more.
	if ok, err := s.Exists(ctx, key); purged || err != nil || !ok {
		return Stored{}, false, nil
	}
	return st, true, nil
}

// linkedKey returns the key a valid media link of this server names.
func (s *Store) linkedKey(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false
	}
	_, id, found := strings.Cut(u.Path, MediaPath)
	if !found {
		return "", false
	}
	key, err := s.VerifySignedURL(id, u.Query())
	return key, err == nil
}

// describeKinds lists allowed kinds for an error message: "MP4, MOV or WebM".
func describeKinds(names []string) string {
	pretty := map[string]string{"mp4": "MP4", "mov": "MOV", "webm": "WebM", "jpeg": "JPEG", "png": "PNG", "webp": "WebP"}
	var parts []string
	for _, n := range names {
		if p, ok := pretty[n]; ok {
			parts = append(parts, p)
		}
	}
	switch len(parts) {
	case 0:
		return "an accepted format"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// HTTPStatus maps an error of this package to the status an API answers with: 413 for
// ErrTooLarge, 415 for ErrUnsupportedFormat, 400 for a bad, blocked or failing URL or a
// corrupt file, 403 for a bad or expired media link, 404 for ErrNotFound, and 500 for
// anything else (storage failures).
func HTTPStatus(err error) int {
	switch {
	case err == nil:
		return http.StatusOK
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrUnsupportedFormat):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, ErrBadURL), errors.Is(err, ErrBlockedAddress), errors.Is(err, ErrUpstream), errors.Is(err, ErrCorrupt):
		return http.StatusBadRequest
	case errors.Is(err, ErrBadSignature), errors.Is(err, ErrLinkExpired):
		return http.StatusForbidden
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// FieldError turns a failure to take in the media of an API field into the API's answer: the
// error body naming field with the status HTTPStatus gives (413, 415, 400), or, for storage
// failures, the error itself (a 500).
func FieldError(field string, err error) error {
	status := HTTPStatus(err)
	switch status {
	case http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		code := apierr.CodePayloadTooLarge
		if status == http.StatusUnsupportedMediaType {
			code = apierr.CodeUnsupportedMediaType
		}
		e := apierr.New(status, code, err.Error())
		e.Fields = map[string]string{field: err.Error()}
		return e
	case http.StatusBadRequest:
		return apierr.Field(field, err.Error())
	}
	return fmt.Errorf("taking in %s: %w", field, err)
}
