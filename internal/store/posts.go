package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Post statuses (status in the API).
const (
	PostScheduled          = "scheduled"
	PostProcessing         = "processing"
	PostPublished          = "published"
	PostPartiallyPublished = "partially_published"
	PostFailed             = "failed"
	PostCanceled           = "canceled"
)

// Destination statuses (upload_status in the API); the same words as publish's.
const (
	DestQueued      = "queued"
	DestUploading   = "uploading"
	DestProcessing  = "processing"
	DestPublished   = "published"
	DestSentToInbox = "sent_to_inbox"
	DestFailed      = "failed"
	DestCanceled    = "canceled"
)

// Settled reports whether a destination status is final.
func Settled(status string) bool {
	switch status {
	case DestPublished, DestSentToInbox, DestFailed, DestCanceled:
		return true
	}
	return false
}

// Media is a stored file, once per content hash.
type Media struct {
	SHA256      string
	BlobKey     string
	Kind        string // mp4, mov, webm, jpeg, png, webp
	ContentType string
	Size        int64
	Width       int
	Height      int
	Duration    time.Duration
	// What the probe read for the platforms' media rules (media.Info); zero values are
	// unknown, as for files stored before these were kept.
	VideoCodec, AudioCodec         string
	AudioChannels, AudioSampleRate int
	FrameRate, MaxFrameRate        float64
	MoovAfterMdat, EditList        bool
	CreatedAt                      time.Time
}

// Post is a publish request and its destinations.
type Post struct {
	ID        string
	AccountID string
	ProjectID string
	Status    string
	Title     string
	Caption   string
	// Request is the validated publish request, kept so that an edit before the post fires
	// can recompute what each destination receives.
	Request         json.RawMessage
	VideoSHA256     string
	ThumbnailSHA256 string // "" when none
	ContentHash     string
	UsageMonth      string
	ScheduledFor    *time.Time
	PublishedAt     *time.Time
	CreatedAt       time.Time
	UpdatedAt       time.Time
	Destinations    []Destination
}

// Destination is one channel a post goes to.
type Destination struct {
	ID          string
	PostID      string
	ChannelID   string
	ChannelName string // read from the channel
	Platform    string
	Position    int
	Status      string
	Options     json.RawMessage
	State       json.RawMessage // the provider's references, nil before the first step
	// Seq numbers the jobs of a destination: rescheduling or retrying bumps it, and a job
	// carrying an older number does nothing.
	Seq           int
	ExternalID    string
	URL           string
	Message       string
	Error         string
	ErrorCategory string
	// Attempts counts transient failures of the current step.
	Attempts    int
	PublishedAt *time.Time
	UpdatedAt   time.Time
	// Conversion is what the destination's video needs for its platform (a JSON
	// conform.Plan), nil when that was never planned; RenditionKey names the rendition sent
	// instead of the post's video ("" to send the video itself).
	Conversion   json.RawMessage
	RenditionKey string
}

// Errors of CreatePost.
var (
	ErrAccountSuspended    = errors.New("account suspended")
	ErrMonthlyLimit        = errors.New("monthly post limit reached")
	ErrIdempotencyConflict = errors.New("idempotency key reused with another request")
)

// ReplayError is CreatePost's answer to an idempotency key already used with the same
// request: the post it created.
type ReplayError struct{ PostID string }

func (e *ReplayError) Error() string { return "idempotent replay of post " + e.PostID }

// DuplicateError is CreatePost's answer to the same video and text sent to the same channel
// within DuplicateWindow.
type DuplicateError struct{ PostID string }

func (e *DuplicateError) Error() string { return "duplicate of post " + e.PostID }

// Windows of idempotency keys and duplicate detection (docs/CONTRACT.md, Idempotency and
// duplicates).
const (
	IdempotencyWindow = 24 * time.Hour
	DuplicateWindow   = 10 * time.Minute
)

// NewPost is what CreatePost stores.
type NewPost struct {
	AccountID    string
	ProjectID    string
	Title        string
	Caption      string
	Request      json.RawMessage
	Video        Media
	Thumbnail    *Media
	ContentHash  string
	ScheduledFor *time.Time
	// Destinations need ChannelID, Platform and Options.
	Destinations []Destination
	// IdempotencyKey and RequestHash, when the client sent a key.
	IdempotencyKey string
	RequestHash    string
	// AllowDuplicate skips duplicate detection.
	AllowDuplicate bool
	// Claims are the request's media claims (ClaimMedia): the post holds its files from its
	// commit on, so they end with it.
	Claims []string
}

// UsageMonth is the allowance month of t: UTC "YYYY-MM".
func UsageMonth(t time.Time) string { return t.UTC().Format("2006-01") }

// CreatePost checks the account's standing, idempotency key, duplicates and allowance, then
// writes the post, its destinations and (through enqueue, in the same transaction) their jobs.
// Requests that could answer for each other (the same idempotency key, the same content) are
// serialised so that each sees the other's post: SQLite has one writer; on PostgreSQL they
// take transaction-scoped advisory locks on the key and on the content. Other publishes of the
// account run in parallel: the allowance is counted last, so that its row lock is held only
// while the transaction commits. On SQLite the publishes of the same moment share a commit
// (inGroupTx): each COMMIT writes every page it touched to the WAL again, and consecutive
// posts touch mostly the same pages. enqueue may then run twice, and must write only through tx.
func (s *Store) CreatePost(ctx context.Context, np NewPost, enqueue func(tx *Tx, p Post) error) (Post, error) {
	var out Post
	err := s.inGroupTx(ctx, func(tx *Tx) error {
		t := now()
		var limit sql.NullInt64
		var suspended bool
		err := tx.tx.QueryRowContext(ctx, `SELECT monthly_post_limit, suspended FROM accounts WHERE id = $1`,
			np.AccountID).Scan(&limit, &suspended)
		if err != nil {
			return notFound(err)
		}
		if suspended {
			return ErrAccountSuspended
		}
		// Key first, then content, in every transaction: no two can wait for each other.
		if np.IdempotencyKey != "" {
			if err := tx.advisoryLock(ctx, "reelay-idempotency:"+np.AccountID+":"+np.IdempotencyKey); err != nil {
				return err
			}
		}
		if !np.AllowDuplicate {
			if err := tx.advisoryLock(ctx, "reelay-content:"+np.AccountID+":"+np.ContentHash); err != nil {
				return err
			}
		}
		if np.IdempotencyKey != "" {
			var hash, postID string
			err := tx.tx.QueryRowContext(ctx, `SELECT request_hash, post_id FROM idempotency_keys
				WHERE account_id = $1 AND key = $2 AND created_at > $3`,
				np.AccountID, np.IdempotencyKey, t.Add(-IdempotencyWindow)).Scan(&hash, &postID)
			switch {
			case err == nil && hash == np.RequestHash:
				return &ReplayError{PostID: postID}
			case err == nil:
				return ErrIdempotencyConflict
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("store: idempotency key: %w", err)
			}
		}
		if !np.AllowDuplicate {
			if id, err := duplicateOf(ctx, tx.tx, np, t); err != nil {
				return err
			} else if id != "" {
				return &DuplicateError{PostID: id}
			}
		}
		month := UsageMonth(t)
		for _, m := range []*Media{&np.Video, np.Thumbnail} {
			if m != nil {
				if err := saveMedia(ctx, tx.tx, m, t); err != nil {
					return err
				}
			}
		}
		p := Post{ID: uuid.NewString(), AccountID: np.AccountID, ProjectID: np.ProjectID, Status: PostProcessing,
			Title: np.Title, Caption: np.Caption, Request: np.Request, VideoSHA256: np.Video.SHA256,
			ContentHash: np.ContentHash, UsageMonth: month, ScheduledFor: np.ScheduledFor, CreatedAt: t, UpdatedAt: t}
		if np.Thumbnail != nil {
			p.ThumbnailSHA256 = np.Thumbnail.SHA256
		}
		if p.ScheduledFor != nil {
			p.Status = PostScheduled
		}
		_, err = tx.tx.ExecContext(ctx, `INSERT INTO posts (id, account_id, project_id, status, title, caption, request,
			video_sha256, thumbnail_sha256, content_hash, usage_month, scheduled_for, published_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, $13, $13)`,
			p.ID, p.AccountID, p.ProjectID, p.Status, p.Title, p.Caption, string(p.Request), p.VideoSHA256,
			nullString(p.ThumbnailSHA256), p.ContentHash, p.UsageMonth, p.ScheduledFor, t)
		if err != nil {
			return fmt.Errorf("store: insert post: %w", err)
		}
		for i, d := range np.Destinations {
			d.ID, d.PostID, d.Position, d.Status, d.Seq, d.UpdatedAt = uuid.NewString(), p.ID, i, DestQueued, 1, t
			_, err := tx.tx.ExecContext(ctx, `INSERT INTO destinations (id, post_id, channel_id, platform, position, status,
				options, seq, updated_at, conversion, rendition_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
				d.ID, d.PostID, d.ChannelID, d.Platform, d.Position, d.Status, string(d.Options), d.Seq, t,
				string(d.Conversion), d.RenditionKey)
			if err != nil {
				return fmt.Errorf("store: insert destination: %w", err)
			}
			p.Destinations = append(p.Destinations, d)
		}
		if len(np.Claims) > 0 {
			q := newWhere()
			q.in("token", np.Claims)
			if _, err := tx.tx.ExecContext(ctx, `DELETE FROM media_claims WHERE `+q.sql(), q.args...); err != nil {
				return fmt.Errorf("store: end media claims: %w", err)
			}
		}
		if np.IdempotencyKey != "" {
			// An expired row for the key is replaced.
			if _, err := tx.tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2`,
				np.AccountID, np.IdempotencyKey); err != nil {
				return fmt.Errorf("store: idempotency key: %w", err)
			}
			if _, err := tx.tx.ExecContext(ctx, `INSERT INTO idempotency_keys (account_id, key, request_hash, post_id, created_at)
				VALUES ($1, $2, $3, $4, $5)`, np.AccountID, np.IdempotencyKey, np.RequestHash, p.ID, t); err != nil {
				return fmt.Errorf("store: idempotency key: %w", err)
			}
		}
		if p.Status == PostScheduled {
			if err := tx.emit(ctx, p.AccountID, EventPostScheduled, t, func() (any, error) { return postEventOf(p), nil }); err != nil {
				return err
			}
		}
		if enqueue != nil {
			if err := enqueue(tx, p); err != nil {
				return err
			}
		}
		if err := useAllowance(ctx, tx.tx, np.AccountID, month, limit); err != nil {
			return err
		}
		out = p
		return nil
	})
	return out, err
}

// advisoryLock holds a PostgreSQL advisory lock on name until the transaction ends. SQLite
// needs none: its one writer serialises every transaction.
func (t *Tx) advisoryLock(ctx context.Context, name string) error {
	if t.dialect != Postgres {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, name); err != nil {
		return fmt.Errorf("store: lock %q: %w", name, err)
	}
	return nil
}

// DuplicateOf answers the post np would duplicate, "" for none: CreatePost's duplicate check
// alone, writing nothing, for a dry run to answer what the request would.
func (s *Store) DuplicateOf(ctx context.Context, np NewPost) (string, error) {
	return duplicateOf(ctx, s.read, np, now())
}

// duplicateOf finds a live post of the account with the same content to one of the same
// channels within DuplicateWindow.
func duplicateOf(ctx context.Context, q queryer, np NewPost, t time.Time) (string, error) {
	if len(np.Destinations) == 0 {
		return "", nil
	}
	args := []any{np.AccountID, np.ContentHash, t.Add(-DuplicateWindow), PostCanceled}
	marks := make([]string, len(np.Destinations))
	for i, d := range np.Destinations {
		args = append(args, d.ChannelID)
		marks[i] = fmt.Sprintf("$%d", len(args))
	}
	var id string
	err := q.QueryRowContext(ctx, `SELECT p.id FROM posts p JOIN destinations d ON d.post_id = p.id
		WHERE p.account_id = $1 AND p.content_hash = $2 AND p.created_at > $3 AND p.status <> $4
		AND d.channel_id IN (`+strings.Join(marks, ", ")+`) ORDER BY p.created_at DESC LIMIT 1`, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: duplicate check: %w", err)
	}
	return id, nil
}

// useAllowance counts one post in the month, refusing when the limit is reached. The check
// and the count are one statement, so no interleaving can overspend.
func useAllowance(ctx context.Context, q queryer, accountID, month string, limit sql.NullInt64) error {
	if limit.Valid && limit.Int64 <= 0 {
		return ErrMonthlyLimit
	}
	res, err := q.ExecContext(ctx, `INSERT INTO usage_months (account_id, month, posts) VALUES ($1, $2, 1)
		ON CONFLICT (account_id, month) DO UPDATE SET posts = usage_months.posts + 1
		WHERE $3 < 0 OR usage_months.posts < $3`, accountID, month, nullLimit(limit))
	if err != nil {
		return fmt.Errorf("store: count usage: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrMonthlyLimit
	}
	return nil
}

func nullLimit(limit sql.NullInt64) int64 {
	if !limit.Valid {
		return -1
	}
	return limit.Int64
}

// The scans below each read one table's columns (the matching *Columns list) from a row; a
// row that joins several tables is read by several scans at once (LoadDelivery).

const mediaColumns = `sha256, blob_key, kind, content_type, size, width, height, duration_ms,
	video_codec, audio_codec, audio_channels, audio_sample_rate, frame_rate, max_frame_rate, moov_after_mdat, edit_list, created_at`

type mediaScan struct {
	m  Media
	ms int64
}

func (s *mediaScan) targets() []any {
	m := &s.m
	return []any{&m.SHA256, &m.BlobKey, &m.Kind, &m.ContentType, &m.Size, &m.Width, &m.Height, &s.ms,
		&m.VideoCodec, &m.AudioCodec, &m.AudioChannels, &m.AudioSampleRate, &m.FrameRate, &m.MaxFrameRate, &m.MoovAfterMdat, &m.EditList, &m.CreatedAt}
}

func (s *mediaScan) media() Media {
	m := s.m
	m.Duration = time.Duration(s.ms) * time.Millisecond
	return m
}

const postColumns = `id, account_id, project_id, status, title, caption, request, video_sha256,
	COALESCE(thumbnail_sha256, ''), content_hash, usage_month, scheduled_for, published_at, created_at, updated_at`

func scanPost(r scanner) (Post, error) {
	var s postScan
	err := r.Scan(s.targets()...)
	return s.post(), err
}

type postScan struct {
	p          Post
	req        string
	sched, pub sql.NullTime
}

func (s *postScan) targets() []any {
	p := &s.p
	return []any{&p.ID, &p.AccountID, &p.ProjectID, &p.Status, &p.Title, &p.Caption, &s.req, &p.VideoSHA256,
		&p.ThumbnailSHA256, &p.ContentHash, &p.UsageMonth, &s.sched, &s.pub, &p.CreatedAt, &p.UpdatedAt}
}

func (s *postScan) post() Post {
	p := s.p
	p.Request = json.RawMessage(s.req)
	p.ScheduledFor, p.PublishedAt = timePtr(s.sched), timePtr(s.pub)
	p.CreatedAt, p.UpdatedAt = p.CreatedAt.UTC(), p.UpdatedAt.UTC()
	return p
}

const destinationColumns = `d.id, d.post_id, d.channel_id, c.name, d.platform, d.position, d.status, d.options,
	COALESCE(d.state, ''), d.seq, d.external_id, d.url, d.message, d.error, d.error_category, d.attempts,
	d.published_at, d.updated_at, d.conversion, d.rendition_key`

func scanDestination(r scanner) (Destination, error) {
	var s destinationScan
	err := r.Scan(s.targets()...)
	return s.destination(), err
}

type destinationScan struct {
	d                       Destination
	opts, state, conversion string
	pub                     sql.NullTime
}

func (s *destinationScan) targets() []any {
	d := &s.d
	return []any{&d.ID, &d.PostID, &d.ChannelID, &d.ChannelName, &d.Platform, &d.Position, &d.Status, &s.opts,
		&s.state, &d.Seq, &d.ExternalID, &d.URL, &d.Message, &d.Error, &d.ErrorCategory, &d.Attempts, &s.pub, &d.UpdatedAt,
		&s.conversion, &d.RenditionKey}
}

func (s *destinationScan) destination() Destination {
	d := s.d
	d.Options = json.RawMessage(s.opts)
	if s.conversion != "" {
		d.Conversion = json.RawMessage(s.conversion)
	}
	if s.state != "" {
		d.State = json.RawMessage(s.state)
	}
	d.PublishedAt = timePtr(s.pub)
	d.UpdatedAt = d.UpdatedAt.UTC()
	return d
}

// GetPost reads one of an account's posts with its destinations.
func (s *Store) GetPost(ctx context.Context, accountID, id string) (Post, error) {
	if !ValidID(id) {
		return Post{}, ErrNotFound
	}
	rows, err := s.read.QueryContext(ctx, getPostQuery, id, accountID)
	if err != nil {
		return Post{}, fmt.Errorf("store: read post: %w", err)
	}
	defer rows.Close()
	var ps postScan
	var ds destinationScan
	targets := slices.Concat(ps.targets(), ds.targets())
	dests := []Destination{}
	for rows.Next() {
		if err := rows.Scan(targets...); err != nil {
			return Post{}, fmt.Errorf("store: read post: %w", err)
		}
		dests = append(dests, ds.destination())
	}
	if err := rows.Err(); err != nil {
		return Post{}, fmt.Errorf("store: read post: %w", err)
	}
	p := ps.post()
	if len(dests) == 0 {
		// Not the account's post, or (never made by the API) a post without destinations.
		p, err = scanPost(s.read.QueryRowContext(ctx, accountPostQuery, id, accountID))
		if err != nil {
			return Post{}, notFound(err)
		}
	}
	p.Destinations = dests
	return p, nil
}

// accountPostQuery reads post $1 if account $2 owns it.
const accountPostQuery = `SELECT ` + postColumns + ` FROM posts WHERE id = $1 AND account_id = $2`

// getPostQuery reads a post and its destinations in one statement: a row per destination, in
// their order, each with the post's columns first. One statement reads one snapshot on both
// databases, so the post's status and its destinations' agree without a transaction, whose
// BEGIN and end were half the statements of a GET /posts/{id}.
const getPostQuery = `SELECT pq.*, dq.* FROM
	(` + accountPostQuery + `) pq
	JOIN (SELECT ` + destinationColumns + ` FROM destinations d JOIN channels c ON c.id = d.channel_id WHERE d.post_id = $1) dq
	ON true ORDER BY dq.position`

// snapshot runs reads that must agree with each other (a post's status and its destinations')
// in one read-only transaction: on PostgreSQL a repeatable-read one, whose statements all see
// the same snapshot (each statement of read committed sees its own); on SQLite every
// transaction reads one snapshot of the WAL.
func (s *Store) snapshot(ctx context.Context, fn func(q queryer) error) error {
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.read.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("store: begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(tx)
}

// attachDestinations reads the destinations of posts in one query.
func (s *Store) attachDestinations(ctx context.Context, q queryer, posts []*Post) error {
	if len(posts) == 0 {
		return nil
	}
	args := make([]any, len(posts))
	marks := make([]string, len(posts))
	byID := make(map[string]*Post, len(posts))
	for i, p := range posts {
		args[i], marks[i], byID[p.ID] = p.ID, fmt.Sprintf("$%d", i+1), p
		p.Destinations = []Destination{}
	}
	ds, err := collect(scanDestination)(q.QueryContext(ctx, `SELECT `+destinationColumns+`
		FROM destinations d JOIN channels c ON c.id = d.channel_id
		WHERE d.post_id IN (`+strings.Join(marks, ", ")+`) ORDER BY d.post_id, d.position`, args...))
	if err != nil {
		return fmt.Errorf("store: read destinations: %w", err)
	}
	for _, d := range ds {
		p := byID[d.PostID]
		p.Destinations = append(p.Destinations, d)
	}
	return nil
}

// PostFilter selects posts for ListPosts. Every filter is optional; the time ranges are
// half-open: from Since (included) to Before (excluded).
type PostFilter struct {
	ProjectID string
	Status    string
	// Platform keeps the posts with a destination on this platform.
	Platform string
	// CreatedSince and CreatedBefore bound the creation time.
	CreatedSince, CreatedBefore *time.Time
	// ScheduledSince and ScheduledBefore bound the scheduled time (posts published at once
	// have none, and are left out by either).
	ScheduledSince, ScheduledBefore *time.Time
	Limit                           int
	// After continues a listing after the post with this creation time and id (the last of
	// the previous page).
	AfterTime *time.Time
	AfterID   string
}

// ListPosts lists an account's posts, newest first.
func (s *Store) ListPosts(ctx context.Context, accountID string, f PostFilter) ([]Post, error) {
	query, args := listPostsQuery(accountID, f)
	var posts []Post
	err := s.snapshot(ctx, func(tx queryer) (err error) {
		posts, err = collect(scanPost)(tx.QueryContext(ctx, query, args...))
		if err != nil {
			return fmt.Errorf("store: list posts: %w", err)
		}
		ptrs := make([]*Post, len(posts))
		for i := range posts {
			ptrs[i] = &posts[i]
		}
		return s.attachDestinations(ctx, tx, ptrs)
	})
	if err != nil {
		return nil, err
	}
	return posts, nil
}

// listPostsQuery is ListPosts' SQL. It stays on the account's rows of an index whatever the
// filters: posts_account_idx (account, creation time) gives the order and the creation range,
// posts_scheduled_idx the scheduled range, and a platform is looked up among each post's
// destinations by destinations_post_idx, never across every account's destinations.
func listPostsQuery(accountID string, f PostFilter) (string, []any) {
	q := newWhere()
	q.add("account_id = ?", accountID)
	if f.ProjectID != "" {
		q.add("project_id = ?", f.ProjectID)
	}
	if f.Status != "" {
		q.add("status = ?", f.Status)
	}
	if f.Platform != "" {
		q.add("EXISTS (SELECT 1 FROM destinations d WHERE d.post_id = posts.id AND d.platform = ?)", f.Platform)
	}
	// Times are compared in UTC: SQLite compares its stored times as text.
	if f.CreatedSince != nil {
		q.add("created_at >= ?", f.CreatedSince.UTC())
	}
	if f.CreatedBefore != nil {
		q.add("created_at < ?", f.CreatedBefore.UTC())
	}
	if f.ScheduledSince != nil {
		q.add("scheduled_for >= ?", f.ScheduledSince.UTC())
	}
	if f.ScheduledBefore != nil {
		q.add("scheduled_for < ?", f.ScheduledBefore.UTC())
	}
	if f.AfterTime != nil {
		q.add("(created_at < ? OR (created_at = ? AND id < ?))", f.AfterTime.UTC(), f.AfterTime.UTC(), f.AfterID)
	}
	return `SELECT ` + postColumns + ` FROM posts WHERE ` + q.sql() + ` ORDER BY created_at DESC, id DESC` + q.limit(f.Limit), q.args
}

// PostStatusOf aggregates destination statuses into the post's status (docs/CONTRACT.md,
// Destination and post statuses). A post whose destinations have not started keeps scheduled
// until it fires.
func PostStatusOf(current string, destStatuses []string) string {
	var ok, failed, open, started int
	for _, st := range destStatuses {
		switch st {
		case DestPublished, DestSentToInbox:
			ok++
		case DestFailed:
			failed++
		case DestCanceled:
		case DestQueued:
			open++
		default:
			open++
			started++
		}
	}
	switch {
	case open > 0:
		if current == PostScheduled && started == 0 && ok+failed == 0 {
			return PostScheduled
		}
		return PostProcessing
	case ok == 0 && failed == 0:
		return PostCanceled
	case failed == 0:
		return PostPublished
	case ok == 0:
		return PostFailed
	default:
		return PostPartiallyPublished
	}
}

// forUpdate locks the selected row until the transaction ends, on PostgreSQL; SQLite
// transactions are already serialised (BEGIN IMMEDIATE on one writer).
func (t *Tx) forUpdate() string {
	if t.dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// forShare locks the rows read against FOR UPDATE, not against each other (SQLite's single
// writer needs no lock).
func (t *Tx) forShare() string {
	if t.dialect == Postgres {
		return " FOR SHARE"
	}
	return ""
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// LookupIdempotencyKey reads an account's unexpired idempotency key: the hash of the request
// that used it and the post it created.
func (s *Store) LookupIdempotencyKey(ctx context.Context, accountID, key string) (requestHash, postID string, err error) {
	err = s.read.QueryRowContext(ctx, `SELECT request_hash, post_id FROM idempotency_keys
		WHERE account_id = $1 AND key = $2 AND created_at > $3`, accountID, key, now().Add(-IdempotencyWindow)).Scan(&requestHash, &postID)
	return requestHash, postID, notFound(err)
}

// DeleteExpiredIdempotencyKeys forgets the keys of publishes and of replies older than
// IdempotencyWindow.
func (s *Store) DeleteExpiredIdempotencyKeys(ctx context.Context) (int64, error) {
	var n int64
	for _, table := range []string{"idempotency_keys", "reply_keys"} {
		res, err := s.write.ExecContext(ctx, `DELETE FROM `+table+` WHERE created_at <= $1`, now().Add(-IdempotencyWindow))
		if err != nil {
			return n, fmt.Errorf("store: delete expired %s: %w", table, err)
		}
		deleted, _ := res.RowsAffected()
		n += deleted
	}
	return n, nil
}
