package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Rendition states.
const (
	// RenditionPending: a make_rendition job is to make it, or is making it.
	RenditionPending = "pending"
	// RenditionReady: its file is stored (Output).
	RenditionReady = "ready"
	// RenditionFailed: it could not be made (Error); a retry of a destination that needs it
	// makes it again.
	RenditionFailed = "failed"
)

// Rendition is a conversion of a post's video that a platform accepts (see the migration
// 00021_renditions).
type Rendition struct {
	// Key names the rendition by its source and conversion (publish.RenditionKey).
	Key          string
	SourceSHA256 string
	// Conversion is the JSON render.Conversion it is made by.
	Conversion string
	Status     string
	// Progress is the share of the conversion done, from 0 to 1.
	Progress float64
	Error    string
	// Output is the made file: its blob key, size and picture (Kind "mp4"), and its SHA-256
	// where storing it read it (S3; "" for a file moved into a local store).
	Output    Media
	UpdatedAt time.Time
}

const renditionColumns = `key, source_sha256, conversion, status, progress, error, blob_key, sha256, size, width,
	height, duration_ms, updated_at`

func scanRendition(r scanner) (Rendition, error) {
	var x Rendition
	var ms int64
	err := r.Scan(&x.Key, &x.SourceSHA256, &x.Conversion, &x.Status, &x.Progress, &x.Error, &x.Output.BlobKey,
		&x.Output.SHA256, &x.Output.Size, &x.Output.Width, &x.Output.Height, &ms, &x.UpdatedAt)
	x.Output.Duration = time.Duration(ms) * time.Millisecond
	if x.Status == RenditionReady {
		x.Output.Kind, x.Output.ContentType, x.Output.VideoCodec = "mp4", "video/mp4", "h264"
	}
	x.UpdatedAt = x.UpdatedAt.UTC()
	return x, err
}

// EnsureRendition makes sure the rendition key of source by conversion exists and is not
// failed, within the transaction that creates or retries the destinations that need it. It
// answers true when the rendition must be made (new, or failed before and now pending
// again): the caller queues its job in the same transaction; false when it is made or being
// made already, and is shared.
func (t *Tx) EnsureRendition(ctx context.Context, key, sourceSHA256, conversion string) (needed bool, err error) {
	at := now()
	res, err := t.tx.ExecContext(ctx, `INSERT INTO renditions (key, source_sha256, conversion, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (key) DO NOTHING`, key, sourceSHA256, conversion, RenditionPending, at)
	if err != nil {
		return false, fmt.Errorf("store: add rendition: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	res, err = t.tx.ExecContext(ctx, `UPDATE renditions SET status = $1, progress = 0, error = '', updated_at = $2
		WHERE key = $3 AND status = $4`, RenditionPending, at, key, RenditionFailed)
	if err != nil {
		return false, fmt.Errorf("store: add rendition: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// GetRendition reads a rendition; ErrNotFound when there is none (retention deleted it with
// its source).
func (s *Store) GetRendition(ctx context.Context, key string) (Rendition, error) {
	x, err := scanRendition(s.read.QueryRowContext(ctx, `SELECT `+renditionColumns+` FROM renditions WHERE key = $1`, key))
	return x, notFound(err)
}

// RenditionPlatforms lists the platforms of the destinations that are waiting for a
// rendition, and the posts they belong to.
func (s *Store) RenditionPlatforms(ctx context.Context, key string) (platforms, postIDs []string, err error) {
	rows, err := s.read.QueryContext(ctx, `SELECT DISTINCT platform, post_id FROM destinations WHERE rendition_key = $1`, key)
	if err != nil {
		return nil, nil, fmt.Errorf("store: rendition platforms: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var p, post string
		if err := rows.Scan(&p, &post); err != nil {
			return nil, nil, fmt.Errorf("store: rendition platforms: %w", err)
		}
		if !seen[p] {
			platforms = append(platforms, p)
			seen[p] = true
		}
		if !seen["post:"+post] {
			postIDs = append(postIDs, post)
			seen["post:"+post] = true
		}
	}
	return platforms, postIDs, rows.Err()
}

// SaveRenditionProgress records how far a conversion is, and shows it as message on the
// destinations that wait for it (those not yet started on their platform).
func (s *Store) SaveRenditionProgress(ctx context.Context, key string, progress float64, message string) error {
	return s.InTx(ctx, func(tx *Tx) error {
		at := now()
		if _, err := tx.tx.ExecContext(ctx, `UPDATE renditions SET progress = $1, updated_at = $2 WHERE key = $3 AND status = $4`,
			progress, at, key, RenditionPending); err != nil {
			return fmt.Errorf("store: rendition progress: %w", err)
		}
		if _, err := tx.tx.ExecContext(ctx, `UPDATE destinations SET message = $1, updated_at = $2
			WHERE rendition_key = $3 AND status = $4 AND state IS NULL`, message, at, key, DestQueued); err != nil {
			return fmt.Errorf("store: rendition progress: %w", err)
		}
		return nil
	})
}

// FinishRendition records the made file of a pending rendition. ErrStale when it is no
// longer pending (retention deleted it meanwhile).
func (s *Store) FinishRendition(ctx context.Context, key string, out Media) error {
	res, err := s.write.ExecContext(ctx, `UPDATE renditions SET status = $1, progress = 1, error = '', blob_key = $2,
		sha256 = $3, size = $4, width = $5, height = $6, duration_ms = $7, updated_at = $8 WHERE key = $9 AND status = $10`,
		RenditionReady, out.BlobKey, out.SHA256, out.Size, out.Width, out.Height, out.Duration.Milliseconds(), now(), key, RenditionPending)
	return settled(res, err, "finish rendition")
}

// FailRendition records why a pending rendition could not be made.
func (s *Store) FailRendition(ctx context.Context, key, reason string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE renditions SET status = $1, error = $2, updated_at = $3 WHERE key = $4 AND status = $5`,
		RenditionFailed, reason, now(), key, RenditionPending)
	return settled(res, err, "fail rendition")
}

func settled(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrStale
	}
	return nil
}

// deleteRenditions deletes, through deleteBlob, the renditions of source with their files:
// they go when it goes.
func (t *Tx) deleteRenditions(ctx context.Context, sourceSHA256 string, deleteBlob func(ctx context.Context, key string) error) error {
	rows, err := t.tx.QueryContext(ctx, `SELECT blob_key FROM renditions WHERE source_sha256 = $1 AND blob_key <> ''`, sourceSHA256)
	keys, err := collect(func(r scanner) (k string, err error) { return k, r.Scan(&k) })(rows, err)
	if err != nil {
		return fmt.Errorf("store: rendition files: %w", err)
	}
	for _, k := range keys {
		if err := deleteBlob(ctx, k); err != nil {
			return err
		}
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM renditions WHERE source_sha256 = $1`, sourceSHA256); err != nil {
		return fmt.Errorf("store: delete renditions: %w", err)
	}
	return nil
}
