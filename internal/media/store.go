package media

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob" // mem:// stores, for tests of other packages
	_ "gocloud.dev/blob/s3blob"  // s3:// stores
	"gocloud.dev/gcerrors"

	"github.com/reelay/reelay/internal/fileperm"
)

// ErrNotFound: no blob has the key (or the media link names no stored media).
var ErrNotFound = errors.New("media not found")

// Store keeps media in blob storage (a local folder or an S3-compatible bucket through
// gocloud.dev/blob), each file once under a key derived from its SHA-256, and signs the
// links reelay serves it by. It is safe for concurrent use.
type Store struct {
	bucket  *blob.Bucket
	dir     string // the folder of a file:// store, for Put's rename shortcut
	linkKey []byte // HMAC key for media links, derived from the signing key
	// previousLinkKeys verify links signed before a key rotation; links are never signed
	// with them.
	previousLinkKeys [][]byte
	public           string
	now              func() time.Time
	registry         Registry
	// s3 uploads to an s3:// store with a bounded memory (s3upload.go) instead of gocloud's
	// writer, and aborts the multipart uploads of dead Puts; nil for other stores.
	s3 *s3Target
}

// Registry records which stored files are in use (the database does): retention deletes a
// file only when nothing has claimed it for a while, under a lock that ClaimMedia waits for.
// A Store with a registry claims every file it takes in or finds by its link before it trusts
// the bytes already stored (see IngestUpload and Linked). purged says retention deleted the
// file's bytes; once they are stored again, RestoreMedia says so.
type Registry interface {
	ClaimMedia(ctx context.Context, st Stored) (token string, purged bool, err error)
	RestoreMedia(ctx context.Context, sha256 string) error
}

// WithRegistry makes the store claim the files it takes in.
func WithRegistry(r Registry) StoreOption {
	return func(s *Store) { s.registry = r }
}

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithPublicURL sets the base URL (REELAY_PUBLIC_URL) that signed media links start with.
// Without it, SignedURL returns links relative to the server root.
func WithPublicURL(u string) StoreOption {
	return func(s *Store) { s.public = strings.TrimRight(u, "/") }
}

// WithPreviousSigningKeys lets links signed with earlier signing keys (the same derivation as
// OpenStore's signingKey, from REELAY_SECRET_KEY_PREVIOUS) verify until they expire, so that a
// key rotation does not break links already handed to platforms.
func WithPreviousSigningKeys(keys ...[]byte) StoreOption {
	return func(s *Store) {
		for _, k := range keys {
			s.previousLinkKeys = append(s.previousLinkKeys, deriveKey(k, "reelay media links v1"))
		}
	}
}

// WithClock replaces the clock used for link expiry (tests).
func WithClock(now func() time.Time) StoreOption {
	return func(s *Store) { s.now = now }
}

// OpenStore opens the blob storage at blobURL:
//
//   - file:///abs/path: a local folder (created when missing). A base_url query parameter
//     also configures fileblob's own URL signer (gocloud's Bucket.SignedURL); reelay's
//     media links do not need it.
//   - s3://bucket?endpoint=...&region=...&use_path_style=true: an S3-compatible bucket
//     (aws-sdk-go-v2; credentials from the usual AWS environment and files, or
//     anonymous=true).
//   - mem://: in memory, for tests.
//
// signingKey (REELAY_SECRET_KEY) keys the HMAC of media links; it may be empty when the
// caller never signs links, else it must be at least 16 bytes.
func OpenStore(ctx context.Context, blobURL string, signingKey []byte, opts ...StoreOption) (*Store, error) {
	u, err := url.Parse(blobURL)
	if err != nil {
		return nil, fmt.Errorf("media store: bad blob URL: %w", err)
	}
	var bucket *blob.Bucket
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("media store: file URL %q must be file:///absolute/path", blobURL)
		}
		dir := filepath.FromSlash(u.Path)
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("media store: file URL %q must name an absolute path", blobURL)
		}
		if err := os.MkdirAll(dir, fileperm.Dir); err != nil {
			return nil, fmt.Errorf("media store: %w", err)
		}
		fo := &fileblob.Options{
			CreateDir: true,
			// The media are the users' own until published: the folders fileblob makes for
			// keys are this user's only, and so are the files (fileperm.BeforeWrite at each
			// write, since fileblob has no setting for them).
			DirFileMode: fileperm.Dir,
			// Temporary files next to their destination: os.TempDir may be another mount,
			// where the final rename would fail.
			NoTempDir: true,
			// No ".attrs" sidecar: fileblob would compute an MD5 of every upload for it (a
			// tenth of a second per 100 MB, on the upload's critical path) and store the
			// content type, which reelay keeps in the media row and Stat sniffs again from
			// the blob's first bytes. Sidecars written before are still read.
			Metadata: fileblob.MetadataDontWrite,
		}
		if base := u.Query().Get("base_url"); base != "" && len(signingKey) > 0 {
			bu, err := url.Parse(base)
			if err != nil {
				return nil, fmt.Errorf("media store: bad base_url: %w", err)
			}
			fo.URLSigner = fileblob.NewURLSignerHMAC(bu, signingKey)
		}
		bucket, err = fileblob.OpenBucket(dir, fo)
	case "s3", "mem":
		bucket, err = blob.OpenBucket(ctx, blobURL)
	default:
		return nil, fmt.Errorf("media store: unsupported blob URL scheme %q (want file, s3 or mem)", u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("media store: opening %s: %w", u.Redacted(), err)
	}
	s, err := NewStore(bucket, signingKey, opts...)
	if err != nil {
		bucket.Close()
		return nil, err
	}
	switch u.Scheme {
	case "file":
		s.dir = filepath.FromSlash(u.Path)
	case "s3":
		var client *s3.Client
		if bucket.As(&client) {
			s.s3 = newS3Target(client, u.Host)
		}
	}
	return s, nil
}

// NewStore wraps an open bucket; the Store takes ownership (Close closes the bucket).
func NewStore(bucket *blob.Bucket, signingKey []byte, opts ...StoreOption) (*Store, error) {
	if len(signingKey) > 0 && len(signingKey) < 16 {
		return nil, errors.New("media store: signing key must be at least 16 bytes")
	}
	s := &Store{bucket: bucket, now: time.Now}
	if len(signingKey) > 0 {
		s.linkKey = deriveKey(signingKey, "reelay media links v1")
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Close closes the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Bucket returns the underlying bucket, for callers that need gocloud features directly.
func (s *Store) Bucket() *blob.Bucket { return s.bucket }

// Key layout. Content-addressed keys make each file stored once; temporary keys hold a file
// while it is being received and hashed.
const (
	keyPrefix = "media/sha256/"
	tmpPrefix = "media/tmp/"
	// renditionPrefix holds renditions, named by what they are made from (a digest of their
	// source's SHA-256 and their conversion) rather than by their own bytes, which would take
	// another read of the whole file to hash. Their links carry renditionID before the name.
	renditionPrefix = "media/rendition/"
	renditionID     = "r-"
)

// KeyForRendition returns the key of the rendition named by the hex digest name.
func KeyForRendition(name string) string { return renditionPrefix + name }

// KeyForSHA256 returns the key of the media whose SHA-256 is the given hex digest.
func KeyForSHA256(hexDigest string) string { return keyPrefix + hexDigest }

// IDFromKey returns the media id of a key, as it appears in media links: the hex SHA-256 of
// a content-addressed file, "r-" and the name of a rendition.
func IDFromKey(key string) (string, bool) {
	if name, ok := strings.CutPrefix(key, renditionPrefix); ok && isHexDigest(name) {
		return renditionID + name, true
	}
	id, ok := strings.CutPrefix(key, keyPrefix)
	if !ok || !isHexDigest(id) {
		return "", false
	}
	return id, true
}

// KeyFromID is the inverse of IDFromKey; it refuses anything but a hex SHA-256 (after "r-"
// for a rendition), so that an id from a URL cannot name another key.
func KeyFromID(id string) (string, bool) {
	if name, ok := strings.CutPrefix(id, renditionID); ok && isHexDigest(name) {
		return renditionPrefix + name, true
	}
	if !isHexDigest(id) {
		return "", false
	}
	return keyPrefix + id, true
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Blob describes stored media.
type Blob struct {
	Key         string
	Size        int64
	SHA256      string // hex
	ContentType string
	// Deduplicated is true when the same bytes were already stored and this Put reused
	// them; such a blob may be shared, so whoever did not create it must not delete it.
	Deduplicated bool
}

// Put streams r into storage and returns where it lives. The bytes go to a temporary key
// while being hashed, then move to media/sha256/<hex>; when that key already exists the
// temporary copy is deleted and the existing one reused, so each file is stored once. On
// any error (including r's, such as a size cap) nothing is left behind.
func (s *Store) Put(ctx context.Context, r io.Reader, kind Kind) (Blob, error) {
	tmp, b, err := s.receive(ctx, r, kind)
	if err != nil {
		return Blob{}, err
	}
	return s.keep(ctx, tmp, b)
}

// receive streams r to a temporary key and describes the file it holds, under the
// content-addressed key it will have.
func (s *Store) receive(ctx context.Context, r io.Reader, kind Kind) (tmp string, b Blob, err error) {
	tmp = tmpPrefix + randomHex(16)
	size, sum, err := s.write(ctx, tmp, r, kind.ContentType)
	if err != nil {
		s.deleteQuietly(tmp)
		return "", Blob{}, err
	}
	return tmp, Blob{Key: KeyForSHA256(sum), Size: size, SHA256: sum, ContentType: kind.ContentType}, nil
}

// keep moves a received file from tmp to its key, unless the same bytes are stored there
// already (b.Deduplicated then).
func (s *Store) keep(ctx context.Context, tmp string, b Blob) (Blob, error) {
	exists, err := s.bucket.Exists(ctx, b.Key)
	if err == nil && !exists && !s.renameLocal(tmp, b.Key) {
		err = s.bucket.Copy(ctx, b.Key, tmp, &blob.CopyOptions{BeforeCopy: fileperm.BeforeWrite})
	}
	// Two uploads of the same bytes at once both copy: the result is the same object.
	s.deleteQuietly(tmp)
	if err != nil {
		return Blob{}, fmt.Errorf("media store: storing %s: %w", b.Key, err)
	}
	b.Deduplicated = exists
	return b, nil
}

// renameLocal moves a blob of a file:// store to another key by renaming its file, instead
// of copying 100 MB through the blob API. It relies on fileblob's layout (keys of [a-z0-9/]
// map to the same relative path), which TestStore checks; when anything fails it reports
// false and Put copies instead. OpenStore's file stores write no ".attrs" sidecar, so there
// is none to move.
func (s *Store) renameLocal(from, to string) bool {
	if s.dir == "" {
		return false
	}
	src := filepath.Join(s.dir, filepath.FromSlash(from))
	dst := filepath.Join(s.dir, filepath.FromSlash(to))
	if err := os.MkdirAll(filepath.Dir(dst), fileperm.Dir); err != nil {
		return false
	}
	return os.Rename(src, dst) == nil
}

// write streams r to key, returning its size and hex SHA-256 (hashed alongside the writes by
// CopyHashed).
func (s *Store) write(ctx context.Context, key string, r io.Reader, contentType string) (int64, string, error) {
	w, discard, err := s.newWriter(ctx, key, contentType)
	if err != nil {
		return 0, "", fmt.Errorf("media store: %w", err)
	}
	h := sha256.New()
	// The source's own errors (size cap, client gone) come back as they are; the storage's
	// are marked as such.
	n, err := CopyHashed(storageWriter{w}, r, h)
	if err != nil {
		discard()
		return 0, "", err
	}
	if err := w.Close(); err != nil {
		return 0, "", fmt.Errorf("media store: writing: %w", err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// newWriter opens a writer of key: Close stores what was written, discard drops it instead.
func (s *Store) newWriter(ctx context.Context, key, contentType string) (w io.WriteCloser, discard func(), err error) {
	if s.s3 != nil && plainKey(key) {
		sw := s.s3.newWriter(ctx, key, contentType)
		return sw, sw.Abort, nil
	}
	// Canceling wctx before Close is how a gocloud writer is told to discard the object.
	wctx, cancel := context.WithCancel(ctx)
	bw, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{
		ContentType:                 contentType,
		DisableContentTypeDetection: true,
		// For an S3 key plainKey refuses: the transfer manager's part size and parts in flight.
		BufferSize:     s3PartSize,
		MaxConcurrency: 1,
		BeforeWrite:    fileperm.BeforeWrite,
	})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return closeThen{bw, cancel}, func() { cancel(); bw.Close() }, nil
}

// closeThen is a writer that calls after once closed.
type closeThen struct {
	io.WriteCloser
	after func()
}

func (c closeThen) Close() error {
	defer c.after()
	return c.WriteCloser.Close()
}

// plainKey says key is stored in S3 under its own name: gocloud escapes control characters
// and "../" in keys, which reelay's (media/sha256/<hex> and the like) never have; a key that
// would be escaped goes through gocloud's writer, so that it reads back under the same name.
func plainKey(key string) bool {
	for _, c := range key {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '-' || c == '_') {
			return false
		}
	}
	return !strings.Contains(key, "__")
}

// storageWriter marks the errors of writing to storage.
type storageWriter struct{ w io.Writer }

func (s storageWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil {
		err = fmt.Errorf("media store: writing: %w", err)
	}
	return n, err
}

// deleteQuietly removes a key in the background of an error path: it uses its own context
// so that cleanup still happens when the request's context is what failed.
func (s *Store) deleteQuietly(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = s.Delete(ctx, key)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func notFound(key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return fmt.Errorf("media store: %s: %w", key, err)
}

// Open returns the blob's bytes from offset to the end (a range read: the storage sends
// only those bytes).
func (s *Store) Open(ctx context.Context, key string, offset int64) (io.ReadCloser, error) {
	r, err := s.bucket.NewRangeReader(ctx, key, offset, -1, nil)
	if err != nil {
		// S3 refuses a range that starts at the end (416 InvalidRange), where the other
		// stores answer no bytes: a resumed upload whose platform has them all may ask so.
		if offset > 0 {
			if a, aerr := s.bucket.Attributes(ctx, key); aerr == nil && a.Size == offset {
				return io.NopCloser(bytes.NewReader(nil)), nil
			}
		}
		return nil, notFound(key, err)
	}
	return r, nil
}

// BlobAttrs describes a stored blob.
type BlobAttrs struct {
	Size        int64
	ContentType string
	ModTime     time.Time
}

// Stat returns a blob's attributes.
func (s *Store) Stat(ctx context.Context, key string) (BlobAttrs, error) {
	a, err := s.bucket.Attributes(ctx, key)
	if err != nil {
		return BlobAttrs{}, notFound(key, err)
	}
	ct := a.ContentType
	if ct == "" || ct == genericType || ct == s3DefaultType {
		ct = s.sniffType(ctx, key, ct)
	}
	return BlobAttrs{Size: a.Size, ContentType: ct, ModTime: a.ModTime}, nil
}

// genericType is what a bucket reports for a blob stored without a content type: fileblob
// for every blob written without its sidecar (OpenStore's file stores).
const genericType = "application/octet-stream"

// s3DefaultType is what AWS S3 documents it gives an object uploaded without a content type
// (by another tool, say).
const s3DefaultType = "binary/octet-stream"

// sniffType finds a blob's content type from its first bytes, as Put found it from the
// upload's: reelay stores only the kinds Sniff knows. It answers reported when the head
// cannot be read or is no known kind.
func (s *Store) sniffType(ctx context.Context, key, reported string) string {
	r, err := s.bucket.NewRangeReader(ctx, key, 0, SniffLen, nil)
	if err != nil {
		return reported
	}
	defer r.Close()
	head := make([]byte, SniffLen)
	n, _ := io.ReadFull(r, head)
	if k, ok := Sniff(head[:n]); ok {
		return k.ContentType
	}
	return reported
}

// Exists reports whether key is stored.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	ok, err := s.bucket.Exists(ctx, key)
	if err != nil {
		return false, fmt.Errorf("media store: %s: %w", key, err)
	}
	return ok, nil
}

// Delete removes key; deleting a missing key is not an error, so cleanup can be retried.
// Content-addressed blobs may be shared by several posts: delete one only when nothing
// refers to it any more.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := s.bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("media store: deleting %s: %w", key, err)
	}
	return nil
}

// ListStoredBefore calls fn with the ids (hex SHA-256) of stored files last written before
// cutoff, up to page at a time, in key order.
func (s *Store) ListStoredBefore(ctx context.Context, cutoff time.Time, page int, fn func(ids []string) error) error {
	it := s.bucket.List(&blob.ListOptions{Prefix: keyPrefix})
	var ids []string
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("media store: listing media: %w", err)
		}
		id, ok := IDFromKey(obj.Key)
		if obj.IsDir || !ok || !obj.ModTime.Before(cutoff) {
			continue
		}
		if ids = append(ids, id); len(ids) == page {
			if err := fn(ids); err != nil {
				return err
			}
			ids = nil
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return fn(ids)
}

// CleanupTemp deletes temporary objects older than age, which a process killed in the
// middle of a Put leaves behind, and, on S3, aborts the multipart uploads of temporary objects
// begun before then: a Put of more than a part that a kill cut off leaves no object, only
// its parts, which no listing of objects shows but the bucket keeps (and bills) until the
// upload is aborted. It returns how many objects and uploads it removed.
func (s *Store) CleanupTemp(ctx context.Context, age time.Duration) (int, error) {
	cutoff := s.now().Add(-age)
	n := 0
	if s.s3 != nil {
		var err error
		if n, err = s.s3.abortUploads(ctx, tmpPrefix, cutoff); err != nil {
			return n, err
		}
	}
	it := s.bucket.List(&blob.ListOptions{Prefix: tmpPrefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("media store: listing temporary objects: %w", err)
		}
		if obj.IsDir || obj.ModTime.After(cutoff) {
			continue
		}
		if err := s.Delete(ctx, obj.Key); err != nil {
			return n, err
		}
		n++
	}
}

// ReaderAt reads a stored blob at arbitrary offsets through range reads, with a small block
// cache: Probe's many small header reads cost a handful of requests.
type ReaderAt struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
	size   int64

	mu     sync.Mutex
	blocks map[int64][]byte
	order  []int64 // least recently fetched first
}

const (
	readerBlock  = 64 << 10
	readerBlocks = 16 // 1 MiB of cache per open reader
)

// OpenAt returns a ReaderAt over key, for Probe. ctx bounds every read made through it.
func (s *Store) OpenAt(ctx context.Context, key string) (*ReaderAt, error) {
	a, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return &ReaderAt{ctx: ctx, bucket: s.bucket, key: key, size: a.Size, blocks: map[int64][]byte{}}, nil
}

// Size returns the blob's size.
func (r *ReaderAt) Size() int64 { return r.size }

// ReadAt implements io.ReaderAt.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("media store: negative offset")
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := len(p)
	if rem := r.size - off; int64(want) > rem {
		p = p[:rem]
	}
	// Large reads bypass the cache: they would only evict the header blocks.
	if len(p) > readerBlock*readerBlocks/4 {
		n, err := r.fetch(p, off)
		if err == nil && n < want {
			err = io.EOF
		}
		return n, err
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		idx := pos / readerBlock
		blk, err := r.block(idx)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], blk[pos-idx*readerBlock:])
	}
	if n < want {
		return n, io.EOF
	}
	return n, nil
}

func (r *ReaderAt) block(idx int64) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b, ok := r.blocks[idx]; ok {
		return b, nil
	}
	start := idx * readerBlock
	b := make([]byte, min(readerBlock, r.size-start))
	if _, err := r.fetch(b, start); err != nil {
		return nil, err
	}
	if len(r.order) >= readerBlocks {
		delete(r.blocks, r.order[0])
		r.order = r.order[1:]
	}
	r.blocks[idx] = b
	r.order = append(r.order, idx)
	return b, nil
}

func (r *ReaderAt) fetch(p []byte, off int64) (int, error) {
	rr, err := r.bucket.NewRangeReader(r.ctx, r.key, off, int64(len(p)), nil)
	if err != nil {
		return 0, notFound(r.key, err)
	}
	defer rr.Close()
	n, err := io.ReadFull(rr, p)
	if err != nil {
		return n, fmt.Errorf("media store: reading %s at %d: %w", r.key, off, err)
	}
	return n, nil
}

// ServeBlob answers an HTTP request with the blob, honouring Range and conditional
// requests (platforms fetch large media in ranges and resume). It writes nothing and
// returns ErrNotFound when the blob does not exist, so the caller can answer in its own
// error format.
func (s *Store) ServeBlob(w http.ResponseWriter, r *http.Request, key string) error {
	a, err := s.Stat(r.Context(), key)
	if err != nil {
		return err
	}
	if a.ContentType != "" {
		w.Header().Set("Content-Type", a.ContentType)
	}
	if id, ok := IDFromKey(key); ok {
		w.Header().Set("ETag", `"`+id+`"`) // content-addressed: the hash is the version
	}
	var content io.ReadSeeker
	if f, closer := s.localFile(r.Context(), key); f != nil {
		defer closer.Close()
		content = f
	} else {
		rs := &blobSeeker{ctx: r.Context(), bucket: s.bucket, key: key, size: a.Size}
		defer rs.Close()
		content = rs
	}
	http.ServeContent(w, r, "", a.ModTime, content)
	return nil
}

// localFile opens the blob of a file:// store as the file it is, so that serving it hands
// the copy to the kernel (ServeContent's copy of a file to a TCP connection is a sendfile)
// instead of reading it through this process's memory 32 KiB at a time. It answers nil for
// other stores, or when the file cannot be had; the closer closes the file.
func (s *Store) localFile(ctx context.Context, key string) (*os.File, io.Closer) {
	if s.dir == "" {
		return nil, nil
	}
	var f *os.File
	rr, err := s.bucket.NewReader(ctx, key, &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
		as(&f)
		return nil
	}})
	if err != nil {
		return nil, nil
	}
	if f == nil {
		rr.Close()
		return nil, nil
	}
	return f, rr
}

// blobSeeker is an io.ReadSeeker over range reads, for http.ServeContent: a seek drops the
// open reader and the next read starts a new range at the new offset.
type blobSeeker struct {
	ctx    context.Context
	bucket *blob.Bucket
	key    string
	size   int64
	off    int64
	rc     io.ReadCloser
}

func (b *blobSeeker) Read(p []byte) (int, error) {
	if b.off >= b.size {
		return 0, io.EOF
	}
	if b.rc == nil {
		rc, err := b.bucket.NewRangeReader(b.ctx, b.key, b.off, -1, nil)
		if err != nil {
			return 0, err
		}
		b.rc = rc
	}
	n, err := b.rc.Read(p)
	b.off += int64(n)
	return n, err
}

func (b *blobSeeker) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = b.off + offset
	case io.SeekEnd:
		abs = b.size + offset
	}
	if abs < 0 {
		return 0, errors.New("media store: negative position")
	}
	if abs != b.off {
		b.Close()
	}
	b.off = abs
	return abs, nil
}

func (b *blobSeeker) Close() error {
	if b.rc == nil {
		return nil
	}
	err := b.rc.Close()
	b.rc = nil
	return err
}
