package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Stored files are shared: each is kept once per content hash, and any number of posts, AI
// jobs and requests in flight may use it. Retention deletes a file's bytes once nothing has
// used it for a while, and three things must never happen: a post that still needs its bytes
// (scheduled, processing) finds them gone, a retried post finds them gone without being told,
// and a request that is taking the same file in at that moment loses it. The media row is where they meet: a request claims
// the file (ClaimMedia) before it decides whether to store the bytes again, retention and the
// cleanup of refused requests delete bytes only under the row's lock and only when no claim
// and no recent post holds the file.

// MediaClaimLease is how long a claim holds a file: longer than any request takes between
// taking the file in and committing its post. A claim ends with the post's commit
// (NewPost.Claims), or early when the request is refused (ReleaseMedia); one of a process that
// died, or of a use that makes no post (AI jobs), lapses.
const MediaClaimLease = time.Hour

// ErrMediaPurged: a post's media were deleted by retention, so it cannot be published again.
var ErrMediaPurged = errors.New("store: the post's media were deleted")

// ClaimMedia records that a request is about to use the stored file m, whose bytes may or may
// not be in blob storage: it marks the file used now and holds it for MediaClaimLease. A
// retention or cleanup that had the row locked has finished by the time it returns, so bytes
// found stored after it returns stay. purged tells that retention deleted the bytes: the caller
// stores them again and then says so (RestoreMedia). The token releases the claim.
func (s *Store) ClaimMedia(ctx context.Context, m Media) (token string, purged bool, err error) {
	token = newClaimToken()
	t := now()
	// A small write of every request that takes a file in: on SQLite it shares its commit with
	// whatever else is writing at the moment (group commit), as the publish steps do.
	err = s.inGroupTx(ctx, func(tx *Tx) (err error) {
		purged, err = tx.claimMedia(ctx, m, token, t)
		return err
	})
	return token, purged, err
}

func (t *Tx) claimMedia(ctx context.Context, m Media, token string, at time.Time) (purged bool, err error) {
	if purged, err = t.holdMedia(ctx, m, at); err != nil {
		return false, err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO media_claims (token, sha256, expires_at) VALUES ($1, $2, $3)`,
		token, m.SHA256, at.Add(MediaClaimLease))
	if err != nil {
		return false, fmt.Errorf("store: claim media: %w", err)
	}
	return purged, nil
}

// mediaUseSlack is how stale a claim may leave a file's last_used_at: writing it takes the
// row's exclusive lock, for which every claim of the file would otherwise queue (a burst of
// publishes of one video on PostgreSQL waited 49 ms each on one row). The claim itself holds
// the file for far longer than this.
const mediaUseSlack = time.Minute

// holdMedia makes sure file m has a row and holds the row until the transaction ends, with a
// lock that a purge's (FOR UPDATE) waits for, so a purge either has finished (purged tells
// whether it took the bytes) or cannot start before the caller's claim is committed. Claims
// of one file share the lock, unless last_used_at is due: the exclusive lock that writing it
// takes is taken first, never after a shared one, which two claims could not both upgrade.
func (t *Tx) holdMedia(ctx context.Context, m Media, at time.Time) (purged bool, err error) {
	for range 3 {
		// A new row is this transaction's alone until it commits.
		res, err := t.tx.ExecContext(ctx, `INSERT INTO media (`+mediaColumns+`, last_used_at)
			VALUES (`+mediaValues+`, $17, $17) ON CONFLICT (sha256) DO NOTHING`, append(mediaArgs(m), at)...)
		if err != nil {
			return false, fmt.Errorf("store: claim media: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return false, nil
		}
		var purgedAt sql.NullTime
		err = t.tx.QueryRowContext(ctx, `UPDATE media SET last_used_at = $1
			WHERE sha256 = $2 AND (last_used_at IS NULL OR last_used_at < $3) RETURNING purged_at`,
			at, m.SHA256, at.Add(-mediaUseSlack)).Scan(&purgedAt)
		if errors.Is(err, sql.ErrNoRows) {
			err = t.tx.QueryRowContext(ctx, `SELECT purged_at FROM media WHERE sha256 = $1`+t.forShare(), m.SHA256).Scan(&purgedAt)
		}
		if errors.Is(err, sql.ErrNoRows) {
			continue // a purge deleted the row while this waited for it
		}
		if err != nil {
			return false, fmt.Errorf("store: claim media: %w", err)
		}
		return purgedAt.Valid, nil
	}
	return false, fmt.Errorf("store: claim media: the file's row was deleted three times over")
}

// RestoreMedia records that the bytes of a purged file are stored again, so that its posts can
// be retried.
func (s *Store) RestoreMedia(ctx context.Context, sha256 string) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE media SET purged_at = NULL WHERE sha256 = $1`, sha256); err != nil {
		return fmt.Errorf("store: restore media: %w", err)
	}
	return nil
}

func newClaimToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ReleaseMedia ends a claim of a request that was refused. When the request stored the bytes
// itself (created) and nothing else uses the file (no other claim, no post), deleteBlob removes
// them and the row goes too; otherwise they stay for whoever else uses them.
func (s *Store) ReleaseMedia(ctx context.Context, token string, created bool, deleteBlob func(ctx context.Context, key string) error) error {
	return s.InTx(ctx, func(tx *Tx) error {
		var sha string
		err := tx.tx.QueryRowContext(ctx, `DELETE FROM media_claims WHERE token = $1 RETURNING sha256`, token).Scan(&sha)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // lapsed and deleted already
		}
		if err != nil {
			return fmt.Errorf("store: release media: %w", err)
		}
		if !created {
			return nil
		}
		key, unused, err := tx.lockUnusedMedia(ctx, sha, now(), time.Time{})
		if err != nil || !unused {
			return err
		}
		if err := deleteBlob(ctx, key); err != nil {
			return err
		}
		if _, err := tx.tx.ExecContext(ctx, `DELETE FROM media WHERE sha256 = $1`, sha); err != nil {
			return fmt.Errorf("store: release media: %w", err)
		}
		return nil
	})
}

// lockUnusedMedia locks a file's row and reports whether nothing holds the file at time at: no
// claim live then, and no post that is scheduled, processing, or changed at or after
// usedBefore (zero: no post at all); with a non-zero usedBefore the file must also have been
// last taken in before it, and its bytes must not be purged already.
func (t *Tx) lockUnusedMedia(ctx context.Context, sha string, at, usedBefore time.Time) (key string, unused bool, err error) {
	var (
		lastUsed sql.NullTime
		purged   sql.NullTime
	)
	err = t.tx.QueryRowContext(ctx, `SELECT blob_key, last_used_at, purged_at FROM media WHERE sha256 = $1`+t.forUpdate(), sha).
		Scan(&key, &lastUsed, &purged)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: lock media: %w", err)
	}
	if !usedBefore.IsZero() && (purged.Valid || !lastUsed.Valid || !lastUsed.Time.Before(usedBefore)) {
		return key, false, nil
	}
	// A zero usedBefore (year 1) comes before every post's time: any post holds the file.
	var held bool
	err = t.tx.QueryRowContext(ctx, `SELECT
		EXISTS (SELECT 1 FROM media_claims WHERE sha256 = $1 AND expires_at > $2)
		OR EXISTS (SELECT 1 FROM posts WHERE video_sha256 = $1 AND (status IN ($3, $4) OR updated_at >= $5))
		OR EXISTS (SELECT 1 FROM posts WHERE thumbnail_sha256 = $1 AND (status IN ($3, $4) OR updated_at >= $5))`,
		sha, at, PostScheduled, PostProcessing, usedBefore).Scan(&held)
	if err != nil {
		return "", false, fmt.Errorf("store: check media use: %w", err)
	}
	return key, !held, nil
}

// PurgeMedia deletes, through deleteBlob, the bytes of up to limit files that nothing has used
// for retention at time at: none taken in since, no claim live at at, no post scheduled or
// processing, none settled or changed since. A file no post refers to loses its row as well;
// one that posts refer to keeps it, marked purged, so that the posts still read and a retry
// is refused (ErrMediaPurged). It answers how many files it purged.
func (s *Store) PurgeMedia(ctx context.Context, at time.Time, retention time.Duration, limit int, deleteBlob func(ctx context.Context, key string) error) (int, error) {
	at = at.UTC().Truncate(time.Microsecond)
	usedBefore := at.Add(-retention)
	rows, err := s.read.QueryContext(ctx, `SELECT sha256 FROM media WHERE purged_at IS NULL AND last_used_at < $1
		ORDER BY last_used_at LIMIT $2`, usedBefore, limit)
	candidates, err := collect(scanSHA256)(rows, err)
	if err != nil {
		return 0, fmt.Errorf("store: find old media: %w", err)
	}
	purged := 0
	for _, sha := range candidates {
		// One transaction per file: the row stays locked while its bytes are deleted, and a
		// request taking the same file in waits for that rather than trusting bytes about to go.
		err := s.InTx(ctx, func(tx *Tx) error {
			key, unused, err := tx.lockUnusedMedia(ctx, sha, at, usedBefore)
			if err != nil || !unused {
				return err
			}
			if err := deleteBlob(ctx, key); err != nil {
				return err
			}
			if err := tx.deleteRenditions(ctx, sha, deleteBlob); err != nil {
				return err
			}
			res, err := tx.tx.ExecContext(ctx, `DELETE FROM media WHERE sha256 = $1
				AND NOT EXISTS (SELECT 1 FROM posts WHERE video_sha256 = $1)
				AND NOT EXISTS (SELECT 1 FROM posts WHERE thumbnail_sha256 = $1)`, sha)
			if err != nil {
				return fmt.Errorf("store: purge media: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				if _, err := tx.tx.ExecContext(ctx, `UPDATE media SET purged_at = $1 WHERE sha256 = $2`, at, sha); err != nil {
					return fmt.Errorf("store: purge media: %w", err)
				}
			}
			purged++
			return nil
		})
		if err != nil {
			return purged, err
		}
	}
	return purged, nil
}

// DeleteUnknownMedia deletes, through deleteFile, those of the stored files ids (hex SHA-256)
// that have no media row: files that reelay stored before it kept a row for every file it
// takes in (generated videos, pictures for them, uploads of refused requests), which retention
// would otherwise never find. It answers how many it deleted.
func (s *Store) DeleteUnknownMedia(ctx context.Context, ids []string, deleteFile func(ctx context.Context, sha256 string) error) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q := newWhere()
	q.in("sha256", ids)
	rows, err := s.read.QueryContext(ctx, `SELECT sha256 FROM media WHERE `+q.sql(), q.args...)
	known, err := collect(scanSHA256)(rows, err)
	if err != nil {
		return 0, fmt.Errorf("store: find unknown media: %w", err)
	}
	deleted := 0
	for _, sha := range ids {
		if slices.Contains(known, sha) {
			continue
		}
		err := s.InTx(ctx, func(tx *Tx) error {
			// A row of our own, while the bytes go: a request claiming the same file meanwhile
			// waits for it (or finds its own row first, and this leaves the file alone).
			res, err := tx.tx.ExecContext(ctx, `INSERT INTO media (`+mediaColumns+`, last_used_at, purged_at)
				VALUES ($1, '', '', '', 0, 0, 0, 0, '', '', 0, 0, 0, 0, FALSE, FALSE, $2, $2, $2) ON CONFLICT (sha256) DO NOTHING`, sha, now())
			if err != nil {
				return fmt.Errorf("store: delete unknown media: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			if err := deleteFile(ctx, sha); err != nil {
				return err
			}
			if _, err := tx.tx.ExecContext(ctx, `DELETE FROM media WHERE sha256 = $1`, sha); err != nil {
				return fmt.Errorf("store: delete unknown media: %w", err)
			}
			deleted++
			return nil
		})
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

func scanSHA256(r scanner) (sha string, err error) {
	return sha, r.Scan(&sha)
}

// DeleteLapsedMediaClaims forgets claims past their lease.
func (s *Store) DeleteLapsedMediaClaims(ctx context.Context) (int64, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM media_claims WHERE expires_at <= $1`, now())
	if err != nil {
		return 0, fmt.Errorf("store: delete lapsed media claims: %w", err)
	}
	return res.RowsAffected()
}

// checkMediaPresent locks the rows of a post's media and answers ErrMediaPurged when
// retention deleted their bytes: a post retried must not find its video gone, and a purge
// waits for the retry (and then sees the post processing).
func (t *Tx) checkMediaPresent(ctx context.Context, p Post) error {
	for _, sha := range []string{p.VideoSHA256, p.ThumbnailSHA256} {
		if sha == "" {
			continue
		}
		var purged sql.NullTime
		err := t.tx.QueryRowContext(ctx, `SELECT purged_at FROM media WHERE sha256 = $1`+t.forUpdate(), sha).Scan(&purged)
		if err != nil {
			return fmt.Errorf("store: check media: %w", err)
		}
		if purged.Valid {
			return ErrMediaPurged
		}
	}
	return nil
}

func saveMedia(ctx context.Context, q queryer, m *Media, t time.Time) error {
	// Most posts reuse a file stored before (and claimed by the request just now). Looking
	// first keeps them from waiting on the media row's unique index while another open
	// transaction inserts the same file (on PostgreSQL an INSERT that conflicts with an
	// uncommitted row waits for its outcome).
	var known int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM media WHERE sha256 = $1`, m.SHA256).Scan(&known)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("store: save media: %w", err)
	}
	_, err = q.ExecContext(ctx, `INSERT INTO media (`+mediaColumns+`, last_used_at)
		VALUES (`+mediaValues+`, $17, $17) ON CONFLICT (sha256) DO NOTHING`, append(mediaArgs(*m), t)...)
	if err != nil {
		return fmt.Errorf("store: save media: %w", err)
	}
	return nil
}

// mediaValues are the placeholders of mediaColumns but created_at, in order; mediaArgs their
// values.
const mediaValues = `$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16`

func mediaArgs(m Media) []any {
	return []any{m.SHA256, m.BlobKey, m.Kind, m.ContentType, m.Size, m.Width, m.Height, m.Duration.Milliseconds(),
		m.VideoCodec, m.AudioCodec, m.AudioChannels, m.AudioSampleRate, m.FrameRate, m.MaxFrameRate, m.MoovAfterMdat, m.EditList}
}

// GetMedia reads a stored file's description.
func (s *Store) GetMedia(ctx context.Context, sha256 string) (Media, error) {
	return getMedia(ctx, s.read, sha256)
}

func getMedia(ctx context.Context, q queryer, sha256 string) (Media, error) {
	var m mediaScan
	err := q.QueryRowContext(ctx, `SELECT `+mediaColumns+` FROM media WHERE sha256 = $1`, sha256).Scan(m.targets()...)
	return m.media(), notFound(err)
}
