package media

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/reelay/reelay/internal/media/s3test"
)

// TestS3Upload puts files around the part size into a real S3 server (SeaweedFS) through the
// store's own multipart upload, and reads them back whole; a source that fails midway leaves
// neither an object nor an unfinished multipart upload behind.
func TestS3Upload(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(ctx, s3test.BlobURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.s3 == nil {
		t.Fatal("an s3:// store uploads through gocloud's writer")
	}
	rng := rand.NewChaCha8([32]byte{7})
	for _, tc := range []struct {
		name string
		size int
	}{
		{"empty", 0},
		{"one byte", 1},
		{"a byte short of a part", s3PartSize - 1},
		{"one part", s3PartSize},
		{"a byte over a part", s3PartSize + 1},
		{"two parts and some", 2*s3PartSize + 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := make([]byte, tc.size)
			rng.Read(want)
			sum := sha256.Sum256(want)
			// Put writes 256 KiB at a time (CopyHashed): a part gathers many writes.
			b, err := s.Put(ctx, bytes.NewReader(want), KindMP4)
			if err != nil {
				t.Fatal(err)
			}
			if b.Size != int64(tc.size) || b.SHA256 != hex.EncodeToString(sum[:]) || b.Key != KeyForSHA256(b.SHA256) {
				t.Fatalf("stored %+v, want %d bytes with sha256 %x", b, tc.size, sum)
			}
			r, err := s.Open(ctx, b.Key, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			r.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes (%v), want the %d put", len(got), err, tc.size)
			}
			a, err := s.bucket.Attributes(ctx, b.Key)
			if err != nil || a.ContentType != KindMP4.ContentType {
				t.Fatalf("attributes %+v (%v), want content type %s", a, err, KindMP4.ContentType)
			}
			if err := s.Delete(ctx, b.Key); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("source fails after two parts", func(t *testing.T) {
		broken := errors.New("the client went away")
		src := io.MultiReader(io.LimitReader(rand.NewChaCha8([32]byte{8}), 2*s3PartSize+100), errReader{broken})
		if _, err := s.Put(ctx, src, KindMP4); !errors.Is(err, broken) {
			t.Fatalf("Put: %v, want the source's error", err)
		}
		if keys := bucketKeys(t, s); len(keys) != 0 {
			t.Errorf("bucket holds %v after a failed put", keys)
		}
		bucket := s.s3.bucket
		out, err := s.s3.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Uploads) != 0 {
			t.Errorf("%d multipart uploads left unfinished", len(out.Uploads))
		}
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func bucketKeys(t *testing.T, s *Store) []string {
	t.Helper()
	var keys []string
	it := s.bucket.List(nil)
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, obj.Key)
	}
}
