package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Comment is a comment on a published destination, from its audience or written by the
// channel (Own), as stored once per platform id.
type Comment struct {
	ID            string
	AccountID     string
	ProjectID     string
	PostID        string
	DestinationID string
	ChannelID     string
	Platform      string
	// PlatformID is the platform's id of the comment; ParentPlatformID that of the comment it
	// answers ("" for a comment on the item itself), and ParentID reelay's id of that comment
	// when it is stored ("" otherwise).
	PlatformID       string
	ParentPlatformID string
	ParentID         string
	Author           string
	Text             string
	LikeCount        *int64
	Own              bool
	CreatedAt        time.Time
	SyncedAt         time.Time
}

const commentColumns = `c.id, c.account_id, c.project_id, c.post_id, c.destination_id, c.channel_id, c.platform,
	c.platform_id, c.parent_platform_id, COALESCE(CAST(p.id AS TEXT), ''), c.author, c.text, c.like_count, c.own, c.created_at, c.synced_at`

// commentsFrom joins each comment with its parent, for ParentID.
const commentsFrom = ` FROM comments c LEFT JOIN comments p
	ON p.channel_id = c.channel_id AND p.platform_id = c.parent_platform_id AND c.parent_platform_id <> ''`

func scanComment(r scanner) (Comment, error) {
	var c Comment
	var likes sql.NullInt64
	err := r.Scan(&c.ID, &c.AccountID, &c.ProjectID, &c.PostID, &c.DestinationID, &c.ChannelID, &c.Platform,
		&c.PlatformID, &c.ParentPlatformID, &c.ParentID, &c.Author, &c.Text, &likes, &c.Own, &c.CreatedAt, &c.SyncedAt)
	if likes.Valid {
		c.LikeCount = &likes.Int64
	}
	return c, err
}

// SaveComments stores the comments read from one published destination (new ones added, known
// ones brought up to date: platforms let authors edit) and schedules its next read, in one
// transaction. It returns how many comments were new.
func (s *Store) SaveComments(ctx context.Context, target AudienceTarget, comments []Comment, at, next time.Time) (added int, err error) {
	err = s.InTx(ctx, func(tx *Tx) error {
		added = 0
		for _, c := range comments {
			n, err := tx.saveComment(ctx, target, c, at)
			if err != nil {
				return err
			}
			added += n
		}
		_, err := tx.tx.ExecContext(ctx, `UPDATE published_items SET comments_synced_at = $1, comments_next_at = $2,
			comments_error = '' WHERE destination_id = $3`, at, next, target.DestinationID)
		if err != nil {
			return fmt.Errorf("store: schedule comments: %w", err)
		}
		return nil
	})
	return added, err
}

// saveComment inserts or updates one comment; it answers 1 when the comment was new.
func (t *Tx) saveComment(ctx context.Context, target AudienceTarget, c Comment, at time.Time) (int, error) {
	var likes sql.NullInt64
	if c.LikeCount != nil {
		likes = sql.NullInt64{Int64: *c.LikeCount, Valid: true}
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE comments SET author = $1, text = $2, like_count = $3, synced_at = $4
		WHERE channel_id = $5 AND platform_id = $6`, c.Author, c.Text, likes, at, target.ChannelID, c.PlatformID)
	if err != nil {
		return 0, fmt.Errorf("store: update comment: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return 0, nil
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO comments (id, account_id, project_id, post_id, destination_id, channel_id,
		platform, platform_id, parent_platform_id, author, text, like_count, own, created_at, synced_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		uuid.NewString(), target.AccountID, target.ProjectID, target.PostID, target.DestinationID, target.ChannelID,
		target.Platform, c.PlatformID, c.ParentPlatformID, c.Author, c.Text, likes, c.Own, c.CreatedAt.UTC().Truncate(time.Microsecond), at)
	if err != nil {
		return 0, fmt.Errorf("store: add comment: %w", err)
	}
	return 1, nil
}

// SaveReply stores a reply the channel posted to parent, and returns it as stored. A key,
// claimed by ClaimReplyKey for the request, gets the reply in the same transaction.
func (s *Store) SaveReply(ctx context.Context, parent Comment, reply Comment, key string) (Comment, error) {
	target := AudienceTarget{
		DestinationID: parent.DestinationID, AccountID: parent.AccountID, ProjectID: parent.ProjectID,
		PostID: parent.PostID, ChannelID: parent.ChannelID, Platform: parent.Platform,
	}
	reply.Own = true
	err := s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.saveComment(ctx, target, reply, now()); err != nil || key == "" {
			return err
		}
		_, err := tx.tx.ExecContext(ctx, `UPDATE reply_keys
			SET reply_id = (SELECT id FROM comments WHERE channel_id = $1 AND platform_id = $2)
			WHERE account_id = $3 AND key = $4`, parent.ChannelID, reply.PlatformID, parent.AccountID, key)
		if err != nil {
			return fmt.Errorf("store: reply key: %w", err)
		}
		return nil
	})
	if err != nil {
		return Comment{}, err
	}
	c, err := scanComment(s.write.QueryRowContext(ctx, `SELECT `+commentColumns+commentsFrom+`
		WHERE c.channel_id = $1 AND c.platform_id = $2`, parent.ChannelID, reply.PlatformID))
	if err != nil {
		return Comment{}, fmt.Errorf("store: read reply: %w", err)
	}
	return c, nil
}

// ErrReplyUnsettled answers a reply's idempotency key that was claimed by the same request
// but has no reply: that request is still being sent, or its outcome was never learned.
var ErrReplyUnsettled = errors.New("store: the reply of this idempotency key is being sent or its outcome is unknown")

// ClaimReplyKey claims an account's idempotency key for a reply request that hashes to hash,
// before the reply goes to the platform. It answers "" once the key is claimed (new, or older
// than IdempotencyWindow): the caller sends the reply, then passes the key to SaveReply, or to
// ReleaseReplyKey when the platform refused it. A key the same request claimed before answers
// its reply's id (the caller answers that reply again), or ErrReplyUnsettled when it has none;
// a key used with another request answers ErrIdempotencyConflict.
func (s *Store) ClaimReplyKey(ctx context.Context, accountID, key, hash string) (replyID string, err error) {
	t := now()
	err = s.InTx(ctx, func(tx *Tx) error {
		// Identical requests sent at once wait here for each other, so that one claims the key
		// and the others see its claim.
		if err := tx.advisoryLock(ctx, "reelay-reply-key:"+accountID+":"+key); err != nil {
			return err
		}
		var claimed string
		var reply sql.NullString
		err := tx.tx.QueryRowContext(ctx, `SELECT request_hash, reply_id FROM reply_keys
			WHERE account_id = $1 AND key = $2 AND created_at > $3`, accountID, key, t.Add(-IdempotencyWindow)).Scan(&claimed, &reply)
		switch {
		case err == nil && claimed != hash:
			return ErrIdempotencyConflict
		case err == nil && !reply.Valid:
			return ErrReplyUnsettled
		case err == nil:
			replyID = reply.String
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("store: reply key: %w", err)
		}
		// New, or over an expired claim of the key.
		if _, err := tx.tx.ExecContext(ctx, `INSERT INTO reply_keys (account_id, key, request_hash, created_at)
			VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, key)
			DO UPDATE SET request_hash = excluded.request_hash, reply_id = NULL, created_at = excluded.created_at`,
			accountID, key, hash, t); err != nil {
			return fmt.Errorf("store: reply key: %w", err)
		}
		return nil
	})
	return replyID, err
}

// ReleaseReplyKey gives up a claimed key that has no reply, when the platform refused the
// reply: nothing was posted, so the same request may be sent again under the key.
func (s *Store) ReleaseReplyKey(ctx context.Context, accountID, key string) error {
	if _, err := s.write.ExecContext(ctx, `DELETE FROM reply_keys WHERE account_id = $1 AND key = $2 AND reply_id IS NULL`,
		accountID, key); err != nil {
		return fmt.Errorf("store: release reply key: %w", err)
	}
	return nil
}

// GetComment returns one of an account's comments.
func (s *Store) GetComment(ctx context.Context, accountID, id string) (Comment, error) {
	if !ValidID(id) {
		return Comment{}, ErrNotFound
	}
	c, err := scanComment(s.read.QueryRowContext(ctx, `SELECT `+commentColumns+commentsFrom+`
		WHERE c.id = $1 AND c.account_id = $2`, id, accountID))
	return c, notFound(err)
}

// CommentFilter selects comments for ListComments.
type CommentFilter struct {
	Platform  string
	ProjectID string
	PostID    string
	// Since keeps comments written at or after it.
	Since *time.Time
	// Unanswered keeps the audience's comments the channel has not replied to: neither its own
	// comments nor those with a reply of its own among the stored comments.
	Unanswered bool
	Limit      int
	// AfterTime and AfterID continue a listing after the previous page's last comment.
	AfterTime *time.Time
	AfterID   string
}

// ListComments lists an account's comments, newest first.
func (s *Store) ListComments(ctx context.Context, accountID string, f CommentFilter) ([]Comment, error) {
	if (f.ProjectID != "" && !ValidID(f.ProjectID)) || (f.PostID != "" && !ValidID(f.PostID)) {
		return nil, nil
	}
	query, args := listCommentsQuery(accountID, f)
	comments, err := collect(scanComment)(s.read.QueryContext(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf("store: list comments: %w", err)
	}
	return comments, nil
}

// listCommentsQuery is ListComments' SQL: the account's comments by comments_account_idx.
func listCommentsQuery(accountID string, f CommentFilter) (string, []any) {
	q := newWhere()
	q.add("c.account_id = ?", accountID)
	if f.Platform != "" {
		q.add("c.platform = ?", f.Platform)
	}
	if f.ProjectID != "" {
		q.add("c.project_id = ?", f.ProjectID)
	}
	if f.PostID != "" {
		q.add("c.post_id = ?", f.PostID)
	}
	if f.Since != nil {
		q.add("c.created_at >= ?", f.Since.UTC())
	}
	if f.Unanswered {
		// The replies are found by comments_replies_idx: the channel's comments under this one.
		q.add(`NOT c.own AND NOT EXISTS (SELECT 1 FROM comments r
			WHERE r.channel_id = c.channel_id AND r.parent_platform_id = c.platform_id AND r.own)`)
	}
	if f.AfterTime != nil {
		q.add("(c.created_at < ? OR (c.created_at = ? AND c.id < ?))", *f.AfterTime, *f.AfterTime, f.AfterID)
	}
	return `SELECT ` + commentColumns + commentsFrom + ` WHERE ` + q.sql() + ` ORDER BY c.created_at DESC, c.id DESC` + q.limit(f.Limit), q.args
}
