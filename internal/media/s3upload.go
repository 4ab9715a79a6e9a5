package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// An upload to S3 holds at most s3PartBuffers parts of s3PartSize in memory, whatever the
// file's size: one part being filled from the stream while the one before is sent. gocloud's
// writer (aws-sdk-go-v2's transfer manager) holds more, and more than its settings say: it
// reads the first 16 MiB with io.ReadAll (up to twice that while the slice grows) before it
// decides on a multipart upload, and then allocates concurrency + 1 part buffers afresh for
// each upload; gocloud exposes neither.
//
// 5 MiB is the smallest part S3 takes (but the last), so a part can be no smaller. A second
// buffer lets the stream go on while a part is on its way; more parts in flight would send
// faster to a distant store but cost 5 MiB each for every upload at once. The 10,000 parts S3
// allows make 48.8 GiB the largest upload; the copy that then keeps a file under its hash
// (CopyObject, in Store.keep) takes at most 5 GiB, which bounds a file on S3 first.
const (
	s3PartSize    = 5 << 20
	s3PartBuffers = 2
	s3MaxParts    = 10000
)

// s3PartPool keeps part buffers between uploads, so that a server taking one upload after
// another allocates them once.
var s3PartPool = sync.Pool{New: func() any { b := make([]byte, 0, s3PartSize); return &b }}

// s3Target is an S3 bucket reached through its own client, for uploads that bypass gocloud's
// writer.
type s3Target struct {
	client *s3.Client
	bucket string
	// crc32 says every part carries a CRC32 checksum, as the SDK's default
	// (RequestChecksumCalculation when_supported) asks; when_required leaves them out, for
	// S3-compatible stores that refuse them.
	crc32 bool
}

func newS3Target(client *s3.Client, bucket string) *s3Target {
	return &s3Target{client: client, bucket: bucket,
		crc32: client.Options().RequestChecksumCalculation != aws.RequestChecksumCalculationWhenRequired}
}

// s3Writer streams an object to S3: written bytes fill a part, and each full part is sent
// (UploadPart) while the next fills. A file that fits in one part is sent with one PutObject
// at Close. Close completes the upload; Abort discards it instead, and must be called when
// Close is not.
type s3Writer struct {
	ctx              context.Context
	t                *s3Target
	key, contentType string

	buf      *[]byte // the part being filled
	spare    *[]byte // a buffer back from a part sent
	uploadID *string
	parts    []types.CompletedPart
	inFlight chan partSent // the part being sent, or nil
	err      error         // the first failure; every later call returns it
}

type partSent struct {
	buf  *[]byte
	part types.CompletedPart
	err  error
}

func (t *s3Target) newWriter(ctx context.Context, key, contentType string) *s3Writer {
	return &s3Writer{ctx: ctx, t: t, key: key, contentType: contentType}
}

func (w *s3Writer) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if w.err != nil {
			return n, w.err
		}
		if w.buf == nil {
			w.buf, w.spare = w.spare, nil
			if w.buf == nil {
				w.buf = s3PartPool.Get().(*[]byte)
			}
		}
		b := *w.buf
		k := copy(b[len(b):cap(b)], p[n:])
		*w.buf = b[:len(b)+k]
		n += k
		if len(*w.buf) == cap(*w.buf) {
			w.err = w.sendPart()
		}
	}
	return n, w.err
}

// sendPart waits for the part in flight, then starts sending the filled buffer.
func (w *s3Writer) sendPart() error {
	if err := w.waitPart(); err != nil {
		return err
	}
	if w.uploadID == nil {
		in := &s3.CreateMultipartUploadInput{Bucket: &w.t.bucket, Key: &w.key, ContentType: &w.contentType}
		if w.t.crc32 {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
		}
		out, err := w.t.client.CreateMultipartUpload(w.ctx, in)
		if err != nil {
			return fmt.Errorf("starting the multipart upload: %w", err)
		}
		w.uploadID = out.UploadId
	}
	if len(w.parts) == s3MaxParts {
		return fmt.Errorf("over %d parts of %d bytes: the file is larger than S3 takes", s3MaxParts, s3PartSize)
	}
	num := int32(len(w.parts) + 1)
	w.parts = append(w.parts, types.CompletedPart{}) // filled in by waitPart
	buf := w.buf
	w.buf = nil
	done := make(chan partSent, 1)
	w.inFlight = done
	go func() {
		in := &s3.UploadPartInput{Bucket: &w.t.bucket, Key: &w.key, UploadId: w.uploadID, PartNumber: &num,
			Body: bytes.NewReader(*buf), ContentLength: aws.Int64(int64(len(*buf)))}
		if w.t.crc32 {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
		}
		out, err := w.t.client.UploadPart(w.ctx, in)
		if err != nil {
			done <- partSent{buf: buf, err: fmt.Errorf("sending part %d: %w", num, err)}
			return
		}
		done <- partSent{buf: buf, part: types.CompletedPart{PartNumber: &num, ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32}}
	}()
	return nil
}

// waitPart waits until the part in flight, if any, is sent, and takes its buffer back.
func (w *s3Writer) waitPart() error {
	if w.inFlight == nil {
		return nil
	}
	sent := <-w.inFlight
	w.inFlight = nil
	*sent.buf = (*sent.buf)[:0]
	w.spare = sent.buf
	if sent.err != nil {
		return sent.err
	}
	w.parts[*sent.part.PartNumber-1] = sent.part
	return nil
}

// Close sends what is left and completes the upload.
func (w *s3Writer) Close() error {
	defer w.release()
	if w.err != nil {
		w.abort()
		return w.err
	}
	if w.uploadID == nil {
		var body []byte
		if w.buf != nil {
			body = *w.buf
		}
		in := &s3.PutObjectInput{Bucket: &w.t.bucket, Key: &w.key, ContentType: &w.contentType,
			Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))}
		if w.t.crc32 {
			in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
		}
		_, err := w.t.client.PutObject(w.ctx, in)
		return err
	}
	err := error(nil)
	if w.buf != nil && len(*w.buf) > 0 {
		err = w.sendPart()
	}
	if werr := w.waitPart(); err == nil {
		err = werr
	}
	if err == nil {
		_, err = w.t.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{Bucket: &w.t.bucket,
			Key: &w.key, UploadId: w.uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts}})
		if err != nil {
			err = fmt.Errorf("completing the multipart upload: %w", err)
		}
	}
	if err != nil {
		w.abort()
	}
	return err
}

// Abort discards the upload: nothing is stored, and S3 drops the parts sent.
func (w *s3Writer) Abort() {
	if w.err == nil {
		w.err = errors.New("upload aborted")
	}
	w.abort()
	w.release()
}

func (w *s3Writer) abort() {
	w.waitPart()
	if w.uploadID == nil {
		return
	}
	// Its own context: the upload's may be what failed.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.t.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &w.t.bucket, Key: &w.key, UploadId: w.uploadID})
	w.uploadID = nil
}

// release gives the buffers back to the pool, once no part is in flight.
func (w *s3Writer) release() {
	w.waitPart()
	for _, b := range []*[]byte{w.buf, w.spare} {
		if b != nil {
			*b = (*b)[:0]
			s3PartPool.Put(b)
		}
	}
	w.buf, w.spare = nil, nil
}

// abortUploads aborts the multipart uploads of keys under prefix begun before cutoff, and
// returns how many it aborted.
func (t *s3Target) abortUploads(ctx context.Context, prefix string, cutoff time.Time) (int, error) {
	n := 0
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(t.bucket), Prefix: aws.String(prefix)}
	for {
		out, err := t.client.ListMultipartUploads(ctx, in)
		var api smithy.APIError
		if err != nil && errors.As(err, &api) && (api.ErrorCode() == "AccessDenied" || api.ErrorCode() == "NotImplemented") {
			// A credential without s3:ListBucketMultipartUploads, or a store that does not
			// list uploads: the cleanup of objects goes on as it did before this one existed.
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("media store: listing temporary multipart uploads: %w", err)
		}
		for _, u := range out.Uploads {
			if u.Initiated == nil || u.Initiated.After(cutoff) {
				continue
			}
			_, err := t.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(t.bucket), Key: u.Key, UploadId: u.UploadId})
			var gone *types.NoSuchUpload
			if err != nil && !errors.As(err, &gone) {
				return n, fmt.Errorf("media store: aborting the multipart upload of %s: %w", aws.ToString(u.Key), err)
			}
			if err == nil {
				n++
			}
		}
		if !aws.ToBool(out.IsTruncated) || aws.ToString(out.NextKeyMarker) == "" {
			return n, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}
