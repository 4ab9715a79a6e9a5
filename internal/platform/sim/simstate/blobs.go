package simstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"gocloud.dev/blob"
)

// The blobs of a record (Record.Blobs) are named here, beside the record, because two parties
// reach them: the simulators, which store the bytes of uploads in progress there, and the
// service's housekeeping, which deletes them with the record without knowing any simulator.

// BlobPrefix is where the blobs of the record under key are stored: below "sandbox/", apart
// from the media reelay keeps, and named by a hash, so that any id makes a valid key.
func BlobPrefix(key Key) string {
	sum := sha256.Sum256([]byte(key.Platform + "\x00" + key.Kind + "\x00" + key.ID))
	return "sandbox/" + key.Platform + "/" + hex.EncodeToString(sum[:16]) + "/"
}

// DeleteBlobs deletes the blobs of the record under key (housekeeping, once it expired).
func DeleteBlobs(ctx context.Context, bucket *blob.Bucket, key Key) error {
	it := bucket.List(&blob.ListOptions{Prefix: BlobPrefix(key)})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("simstate: list blobs: %w", err)
		}
		if err := bucket.Delete(ctx, obj.Key); err != nil {
			return fmt.Errorf("simstate: delete blob: %w", err)
		}
	}
}
