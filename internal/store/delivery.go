package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrStale is returned to a job whose destination moved on without it: settled, canceled, or
// rescheduled or retried under a newer job.
var ErrStale = errors.New("destination job is stale")

// Delivery is everything a worker needs to take one destination a step further.
type Delivery struct {
	Post        Post // without Destinations
	Destination Destination
	Channel     Channel
	Video       Media
	Thumbnail   *Media
}

// LoadDelivery reads a destination with its post, channel and media. It answers ErrStale when
// the job's seq is not the destination's or the destination has settled.
func (s *Store) LoadDelivery(ctx context.Context, destinationID string, seq int) (Delivery, error) {
	var dl Delivery
	var err error
	if s.dialect == Postgres {
		dl, err = s.loadDeliveryBatched(ctx, destinationID)
	} else {
		dl, err = s.loadDelivery(ctx, destinationID)
	}
	if err != nil {
		return dl, fmt.Errorf("store: load delivery: %w", notFound(err))
	}
	if dl.Destination.Seq != seq || Settled(dl.Destination.Status) {
		return dl, ErrStale
	}
	if dl.Post.ThumbnailSHA256 != "" {
		m, err := getMedia(ctx, s.read, dl.Post.ThumbnailSHA256)
		if err != nil {
			return dl, fmt.Errorf("store: read thumbnail: %w", err)
		}
		dl.Thumbnail = &m
	}
	return dl, nil
}

// loadDelivery reads one delivery, without its thumbnail.
func (s *Store) loadDelivery(ctx context.Context, destinationID string) (Delivery, error) {
	return scanDelivery(s.read.QueryRowContext(ctx, deliveryQuery("d.id = $1"), destinationID))
}

// scanDelivery reads a row of deliveryQuery: the delivery without its thumbnail.
func scanDelivery(r scanner) (Delivery, error) {
	var d destinationScan
	var p postScan
	var c channelScan
	var v mediaScan
	if err := r.Scan(slices.Concat(d.targets(), p.targets(), c.targets(), v.targets())...); err != nil {
		return Delivery{}, err
	}
	return Delivery{Destination: d.destination(), Post: p.post(), Channel: c.channel(), Video: v.media()}, nil
}

// deliveryQuery reads what LoadDelivery answers, for the destinations d that cond selects, in
// one statement rather than four (every job starts with it). Each table's part is a subquery
// selecting the columns its scan reads, so the column lists serve here unchanged, without
// table prefixes; both databases fold such subqueries into one plain join.
func deliveryQuery(cond string) string {
	return `SELECT dq.*, pq.*, cq.*, vq.* FROM
	(SELECT ` + destinationColumns + ` FROM destinations d JOIN channels c ON c.id = d.channel_id WHERE ` + cond + `) dq
	JOIN (SELECT ` + postColumns + ` FROM posts) pq ON pq.id = dq.post_id
	JOIN (SELECT ` + channelColumns + ` FROM channels) cq ON cq.id = dq.channel_id
	JOIN (SELECT ` + mediaColumns + ` FROM media) vq ON vq.sha256 = pq.video_sha256`
}

// StepUpdate is what a step learned about a destination.
type StepUpdate struct {
	Status        string
	State         []byte // nil keeps the stored state
	ExternalID    string // "" keeps the stored one
	URL           string
	Message       string
	Error         string
	ErrorCategory string
	Attempts      int
}

// SaveStep stores the outcome of a step of destination id (only while seq is current and the
// destination unsettled: ErrStale otherwise) and brings the post's status up to date. It
// returns the post's status after the update.
func (s *Store) SaveStep(ctx context.Context, id string, seq int, u StepUpdate) (postID, postStatus string, err error) {
	t := now()
	// Most steps move a destination of a post that has fired between unsettled statuses,
	// which changes nothing else: one statement does it (saveOpenStep). On PostgreSQL it runs
	// without a transaction around it, in a statement shared with the open steps of other
	// destinations (opensteps.go); on SQLite inside the group transaction, which shares its
	// commit with other steps. On PostgreSQL a settling step shares its transaction with
	// others too, when it can (settling.go).
	open := !Settled(u.Status)
	if s.dialect == Postgres {
		var done bool
		if open {
			switch postID, err = s.saveOpenStepBatched(ctx, id, seq, u); {
			case err == nil:
				return postID, PostProcessing, nil
			case !errors.Is(err, sql.ErrNoRows):
				return "", "", err
			}
		} else if postID, postStatus, done, err = s.saveSettlingBatched(ctx, id, seq, u, t); done {
			return postID, postStatus, err
		}
	}
	return s.saveStep(ctx, id, seq, u, t)
}

// saveStep is SaveStep in a transaction of its own (on SQLite, the group's).
func (s *Store) saveStep(ctx context.Context, id string, seq int, u StepUpdate, t time.Time) (postID, postStatus string, err error) {
	open := !Settled(u.Status)
	err = s.inGroupTx(ctx, func(tx *Tx) error {
		if open && s.dialect != Postgres {
			switch pid, err := saveOpenStep(ctx, tx.tx, id, seq, u, t); {
			case err == nil:
				postID, postStatus = pid, PostProcessing
				return nil
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		// The long way, which also tells a stale job from a post still scheduled.
		post, siblings, err := tx.lockDelivery(ctx, id, seq)
		if err != nil {
			return err
		}
		postID = post.id
		// Moves between unsettled statuses leave a post that has fired processing; only a
		// destination settling, or a post still marked scheduled, can change its status.
		if !Settled(u.Status) && post.status != PostScheduled {
			if _, err = tx.tx.ExecContext(ctx, updateDestinationStep, stepArgs(id, u, t)...); err != nil {
				return fmt.Errorf("store: save step: %w", err)
			}
			postStatus = post.status
			return nil
		}
		postStatus, err = tx.saveStepWithPost(ctx, post, siblings, id, u, t)
		return err
	})
	return postID, postStatus, err
}

// saveOpenStep stores a step that leaves destination id unsettled, provided seq is current,
// the destination unsettled and its post processing: then nothing else changes, and no lock
// on the post is needed (a cancel or an edit needs a scheduled post, and the post stays
// processing while a destination is open). It answers sql.ErrNoRows otherwise.
func saveOpenStep(ctx context.Context, q queryer, id string, seq int, u StepUpdate, t time.Time) (postID string, err error) {
	err = q.QueryRowContext(ctx, updateDestinationStep+` AND seq = $12
		AND status NOT IN ($13, $14, $15, $16)
		AND EXISTS (SELECT 1 FROM posts p WHERE p.id = destinations.post_id AND p.status = $17)
		RETURNING post_id`, append(stepArgs(id, u, t),
		seq, DestPublished, DestSentToInbox, DestFailed, DestCanceled, PostProcessing)...).Scan(&postID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: save step: %w", err)
	}
	return postID, err
}

// updateDestinationStep stores a step's outcome in destination $11; stepArgs gives $1 to $11.
const updateDestinationStep = `UPDATE destinations SET status = $1, state = COALESCE($2, state),
	external_id = CASE WHEN $3 = '' THEN external_id ELSE $3 END,
	url = CASE WHEN $4 = '' THEN url ELSE $4 END, message = $5, error = $6, error_category = $7,
	attempts = $8, published_at = COALESCE(published_at, $9), updated_at = $10 WHERE id = $11`

func stepArgs(id string, u StepUpdate, at time.Time) []any {
	var publishedAt *time.Time
	if u.Status == DestPublished {
		publishedAt = &at
	}
	return []any{u.Status, nullBytes(u.State), u.ExternalID, u.URL, u.Message, u.Error, u.ErrorCategory, u.Attempts,
		publishedAt, at, id}
}

// stepRows are the steps of several destinations as the arrays of a PostgreSQL statement
// that writes them all at once: unnest(stepRowsUnnest, ...) AS v(stepRowsColumns, ...) gives a
// row v a step, and setStepFromV writes it into destination d as updateDestinationStep does
// (but for updated_at and published_at, which are the statement's own).
type stepRows struct {
	ids, statuses, externalIDs, urls, messages, errs, categories []string
	states                                                       []*string
	attempts                                                     []int64
}

const (
	stepRowsUnnest  = `$1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[]`
	stepRowsColumns = `id, status, state, external_id, url, message, error, error_category, attempts`
	setStepFromV    = `status = v.status, state = COALESCE(v.state, d.state),
		external_id = CASE WHEN v.external_id = '' THEN d.external_id ELSE v.external_id END,
		url = CASE WHEN v.url = '' THEN d.url ELSE v.url END, message = v.message, error = v.error,
		error_category = v.error_category, attempts = v.attempts`
)

func (r *stepRows) add(id string, u StepUpdate) {
	var state *string
	if u.State != nil {
		st := string(u.State)
		state = &st
	}
	r.ids, r.statuses, r.externalIDs, r.urls = append(r.ids, id), append(r.statuses, u.Status), append(r.externalIDs, u.ExternalID), append(r.urls, u.URL)
	r.messages, r.errs, r.categories = append(r.messages, u.Message), append(r.errs, u.Error), append(r.categories, u.ErrorCategory)
	r.states, r.attempts = append(r.states, state), append(r.attempts, int64(u.Attempts))
}

// args are the arrays, $1 to $9 of stepRowsUnnest, followed by more.
func (r *stepRows) args(more ...any) []any {
	return append([]any{r.ids, r.statuses, r.states, r.externalIDs, r.urls, r.messages, r.errs, r.categories, r.attempts}, more...)
}

func nullBytes(b []byte) sql.NullString {
	return sql.NullString{String: string(b), Valid: b != nil}
}

// postDestinations is what a post's status is made of: its destinations' statuses, and the
// first of their published_at.
type postDestinations struct {
	statuses  []string
	published sql.NullTime
}

func (p *postDestinations) add(status string, publishedAt sql.NullTime) {
	p.statuses = append(p.statuses, status)
	p.publishedAt(publishedAt)
}

// publishedAt keeps the earlier of p.published and t.
func (p *postDestinations) publishedAt(t sql.NullTime) {
	if t.Valid && (!p.published.Valid || t.Time.Before(p.published.Time)) {
		p.published = t
	}
}

// readPostDestinations reads a post's destinations for its status. The caller holds the
// post locked (lockPost), so that two destinations settling at once on
// PostgreSQL cannot both read the other as unsettled: this read, a statement after the lock
// was taken, sees what the one that held it committed.
func (t *Tx) readPostDestinations(ctx context.Context, postID string) (postDestinations, error) {
	// Not MIN(published_at) in SQL: SQLite's aggregate loses the column type the driver reads
	// times by.
	var p postDestinations
	rows, err := t.tx.QueryContext(ctx, `SELECT status, published_at FROM destinations WHERE post_id = $1`, postID)
	if err != nil {
		return p, fmt.Errorf("store: read destination statuses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var at sql.NullTime
		if err := rows.Scan(&st, &at); err != nil {
			return p, fmt.Errorf("store: read destination statuses: %w", err)
		}
		p.add(st, at)
	}
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("store: read destination statuses: %w", err)
	}
	return p, nil
}

// saveStepWithPost stores a step's outcome in destination id together with what it changes
// of its post: the post's status (and, when it settles, its event), and, when the destination
// is published, its published item. The caller holds the post locked, and has read its
// destinations (siblings, as they were before this step). It answers the post's new status.
// SQLite writes them one statement after another; PostgreSQL, where each is a round trip
// made while the post is locked, in one.
func (t *Tx) saveStepWithPost(ctx context.Context, post lockedPost, siblings []destinationStatus, id string, u StepUpdate, at time.Time) (string, error) {
	var dests postDestinations
	for _, d := range siblings {
		if d.id == id {
			d.apply(u, at)
		}
		dests.add(d.status, d.publishedAt)
	}
	if t.dialect != Postgres {
		if _, err := t.tx.ExecContext(ctx, updateDestinationStep, stepArgs(id, u, at)...); err != nil {
			return "", fmt.Errorf("store: save step: %w", err)
		}
		next, err := t.setPostStatus(ctx, post, dests, at)
		if err != nil {
			return "", err
		}
		if u.Status == DestPublished {
			if err := t.addPublishedItem(ctx, id, at); err != nil {
				return "", err
			}
		}
		return next, nil
	}
	next := PostStatusOf(post.status, dests.statuses)
	// A post that settles announces it to the account's webhooks, in this transaction.
	emits := next != post.status && !post.noWebhooks
	// One statement rather than two or three: the post stays locked until the commit, and
	// every round trip under that lock delays the post's other destinations. Its parts see one
	// snapshot, taken after the lock: the published item reads the destination and the post
	// as they were, which the updates do not change for it.
	q := `WITH step AS (` + updateDestinationStep + ` RETURNING id),
		post AS (UPDATE posts SET status = $12, published_at = $13, updated_at = $10 WHERE id = $14 RETURNING id)`
	args := append(stepArgs(id, u, at), next, timePtr(dests.published), post.id)
	// itemPending: the destination's published item is still to be written. It counts the
	// destination in a figure_totals row that every publish of the project on this platform
	// and day updates, which then stays locked until the commit: it is written last, after
	// the event if there is one.
	itemPending := u.Status == DestPublished
	if itemPending && !emits {
		q += `, ` + publishedItemWrites("$11", "$10", "$15")
		args = append(args, publishedDay(at))
		itemPending = false
	}
	if next != post.status {
		// The processes waiting for the post hear of its new status at commit (notify.go).
		q += ` SELECT pg_notify('` + postSettledChannel + `', id::text) FROM post`
	} else {
		q += ` SELECT id FROM post`
	}
	if _, err := t.tx.ExecContext(ctx, q, args...); err != nil {
		return "", fmt.Errorf("store: save step: %w", err)
	}
	if emits {
		if err := t.emitPostSettled(ctx, post.accountID, post.id, next, at); err != nil {
			return "", err
		}
	}
	if itemPending {
		if err := t.addPublishedItem(ctx, id, at); err != nil {
			return "", err
		}
	}
	return next, nil
}

// setPostStatus sets a post's status and published_at from its destinations.
func (t *Tx) setPostStatus(ctx context.Context, post lockedPost, dests postDestinations, at time.Time) (string, error) {
	postID, accountID, current := post.id, post.accountID, post.status
	next := PostStatusOf(current, dests.statuses)
	update := updatePostStatus
	if next != current && t.dialect == Postgres {
		// The processes waiting for the post hear of its new status at commit (notify.go).
		update = `WITH p AS (` + update + ` RETURNING id) SELECT pg_notify('` + postSettledChannel + `', id::text) FROM p`
	}
	if _, err := t.tx.ExecContext(ctx, update, next, timePtr(dests.published), at, postID); err != nil {
		return "", fmt.Errorf("store: update post status: %w", err)
	}
	if next != current && !post.noWebhooks {
		// A post that settles announces it to the account's webhooks, in this transaction.
		if err := t.emitPostSettled(ctx, accountID, postID, next, at); err != nil {
			return "", err
		}
	}
	return next, nil
}

const updatePostStatus = `UPDATE posts SET status = $1, published_at = $2, updated_at = $3 WHERE id = $4`

// CancelPost cancels one of an account's scheduled posts: its destinations become canceled
// (their jobs, when they fire, find nothing to do) and its allowance unit is given back.
// A post that is no longer scheduled answers ErrConflict.
func (s *Store) CancelPost(ctx context.Context, accountID, id string) (Post, error) {
	err := s.InTx(ctx, func(tx *Tx) error {
		p, err := tx.lockPost(ctx, accountID, id)
		if err != nil {
			return err
		}
		if p.Status != PostScheduled {
			return ErrConflict
		}
		t := now()
		if _, err := tx.tx.ExecContext(ctx, `UPDATE destinations SET status = $1, seq = seq + 1, updated_at = $2
			WHERE post_id = $3`, DestCanceled, t, id); err != nil {
			return fmt.Errorf("store: cancel destinations: %w", err)
		}
		if _, err := tx.tx.ExecContext(ctx, `UPDATE posts SET status = $1, updated_at = $2 WHERE id = $3`, PostCanceled, t, id); err != nil {
			return fmt.Errorf("store: cancel post: %w", err)
		}
		_, err = tx.tx.ExecContext(ctx, `UPDATE usage_months SET posts = posts - 1
			WHERE account_id = $1 AND month = $2 AND posts > 0`, accountID, p.UsageMonth)
		if err != nil {
			return fmt.Errorf("store: refund usage: %w", err)
		}
		return nil
	})
	if err != nil {
		return Post{}, err
	}
	return s.GetPost(ctx, accountID, id)
}

func (t *Tx) lockPost(ctx context.Context, accountID, id string) (Post, error) {
	if !ValidID(id) {
		return Post{}, ErrNotFound
	}
	p, err := scanPost(t.tx.QueryRowContext(ctx, accountPostQuery+t.forUpdate(), id, accountID))
	return p, notFound(err)
}

// PostEdit changes a scheduled post; UpdatePost hands it the post as stored and writes back
// Title, Caption, Request, ScheduledFor and each destination's Options, Conversion and
// RenditionKey.
type PostEdit func(p *Post) error

// UpdatePost edits one of an account's scheduled posts in a transaction: edit changes it, the
// destinations' job numbers move on (their old jobs will do nothing), and enqueue inserts the
// new jobs. A post that is no longer scheduled answers ErrConflict.
func (s *Store) UpdatePost(ctx context.Context, accountID, id string, edit PostEdit, enqueue func(tx *Tx, p Post) error) (Post, error) {
	err := s.InTx(ctx, func(tx *Tx) error {
		p, err := tx.lockPost(ctx, accountID, id)
		if err != nil {
			return err
		}
		if p.Status != PostScheduled {
			return ErrConflict
		}
		if err := s.attachDestinations(ctx, tx.tx, []*Post{&p}); err != nil {
			return err
		}
		if err := edit(&p); err != nil {
			return err
		}
		t := now()
		_, err = tx.tx.ExecContext(ctx, `UPDATE posts SET title = $1, caption = $2, request = $3, scheduled_for = $4,
			updated_at = $5 WHERE id = $6`, p.Title, p.Caption, string(p.Request), p.ScheduledFor, t, p.ID)
		if err != nil {
			return fmt.Errorf("store: update post: %w", err)
		}
		for i := range p.Destinations {
			d := &p.Destinations[i]
			d.Seq++
			if _, err := tx.tx.ExecContext(ctx, `UPDATE destinations SET options = $1, seq = $2, updated_at = $3,
				conversion = $4, rendition_key = $5 WHERE id = $6`,
				string(d.Options), d.Seq, t, string(d.Conversion), d.RenditionKey, d.ID); err != nil {
				return fmt.Errorf("store: update destination: %w", err)
			}
		}
		return enqueue(tx, p)
	})
	if err != nil {
		return Post{}, err
	}
	return s.GetPost(ctx, accountID, id)
}

// Error categories after which a retry keeps the provider's state (the platform may still hold
// the upload session or container); after the others it starts over.
var resumableCategories = []any{"auth_expired", "rate_limited", "quota_exceeded", "upstream_unavailable"}

// RetryPost queues the failed destinations of one of an account's posts again, in a
// transaction with their new jobs (enqueue receives the post with only those destinations).
// Published destinations are never touched. A post without failed destinations answers
// ErrConflict; a suspended account ErrAccountSuspended.
func (s *Store) RetryPost(ctx context.Context, accountID, id string, enqueue func(tx *Tx, p Post) error) (Post, error) {
	err := s.InTx(ctx, func(tx *Tx) error {
		var suspended bool
		if err := tx.tx.QueryRowContext(ctx, `SELECT suspended FROM accounts WHERE id = $1`, accountID).Scan(&suspended); err != nil {
			return notFound(err)
		}
		if suspended {
			return ErrAccountSuspended
		}
		p, err := tx.lockPost(ctx, accountID, id)
		if err != nil {
			return err
		}
		if err := s.attachDestinations(ctx, tx.tx, []*Post{&p}); err != nil {
			return err
		}
		if slices.ContainsFunc(p.Destinations, func(d Destination) bool { return d.Status == DestFailed }) {
			if err := tx.checkMediaPresent(ctx, p); err != nil {
				return err
			}
		}
		t := now()
		var retried []Destination
		for _, d := range p.Destinations {
			if d.Status != DestFailed {
				continue
			}
			d.Seq++
			args := append([]any{DestQueued, d.Seq, t, d.ID}, resumableCategories...)
			_, err := tx.tx.ExecContext(ctx, `UPDATE destinations SET status = $1, seq = $2, error = '', error_category = '',
				message = '', attempts = 0, updated_at = $3,
				state = CASE WHEN error_category IN ($5, $6, $7, $8) THEN state ELSE NULL END WHERE id = $4`, args...)
			if err != nil {
				return fmt.Errorf("store: retry destination: %w", err)
			}
			d.Status = DestQueued
			retried = append(retried, d)
		}
		if len(retried) == 0 {
			return ErrConflict
		}
		dests, err := tx.readPostDestinations(ctx, p.ID)
		if err != nil {
			return err
		}
		if _, err := tx.setPostStatus(ctx, lockedPost{id: p.ID, accountID: p.AccountID, status: p.Status}, dests, t); err != nil {
			return err
		}
		p.Destinations = retried
		return enqueue(tx, p)
	})
	if err != nil {
		return Post{}, err
	}
	return s.GetPost(ctx, accountID, id)
}

// Usage is an account's allowance use in one month.
type Usage struct {
	Month            string
	Posts            int
	MonthlyPostLimit *int
	AICredits        int64
}

// GetUsage reads an account's use of the current UTC month.
func (s *Store) GetUsage(ctx context.Context, accountID string) (Usage, error) {
	a, err := s.GetAccount(ctx, accountID)
	if err != nil {
		return Usage{}, err
	}
	return s.UsageOf(ctx, a)
}

// UsageOf is GetUsage for an account already read.
func (s *Store) UsageOf(ctx context.Context, a Account) (Usage, error) {
	u := Usage{Month: UsageMonth(now()), MonthlyPostLimit: a.MonthlyPostLimit, AICredits: a.AICredits}
	err := s.read.QueryRowContext(ctx, `SELECT posts FROM usage_months WHERE account_id = $1 AND month = $2`,
		a.ID, u.Month).Scan(&u.Posts)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Usage{}, fmt.Errorf("store: read usage: %w", err)
	}
	return u, nil
}

// PostStatus reads a post's status; the publish wait polls it.
func (s *Store) PostStatus(ctx context.Context, id string) (string, error) {
	var st string
	err := s.read.QueryRowContext(ctx, `SELECT status FROM posts WHERE id = $1`, id).Scan(&st)
	return st, notFound(err)
}

// StartDelivery is called when a destination's job runs: it answers ErrStale when the job is
// not the destination's current one or the destination has settled, and otherwise marks a
// scheduled post as fired (processing). A cancel or an edit of the post and its firing cannot
// interleave: on PostgreSQL the post row is locked first, and SQLite runs one write
// transaction at a time.
func (s *Store) StartDelivery(ctx context.Context, destinationID string, seq int) error {
	if s.dialect == Postgres {
		return s.startDeliveryBatched(ctx, destinationID, seq)
	}
	return s.inGroupTx(ctx, func(tx *Tx) error {
		// Most often the job is current and the post scheduled: one statement fires it. (With
		// one writer at a time, SQLite needs no lock between the check and the update.)
		res, err := tx.tx.ExecContext(ctx, `UPDATE posts SET status = $1, updated_at = $2 WHERE status = $3
			AND id = (SELECT post_id FROM destinations WHERE id = $4 AND seq = $5 AND status NOT IN ($6, $7, $8, $9))`,
			PostProcessing, now(), PostScheduled, destinationID, seq, DestPublished, DestSentToInbox, DestFailed, DestCanceled)
		if err != nil {
			return fmt.Errorf("store: fire post: %w", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			return nil
		}
		// Stale, or the post fired already (no write needed): lockDelivery tells which.
		_, _, err = tx.lockDelivery(ctx, destinationID, seq)
		return err
	})
}

// startDeliveryPostgres is StartDelivery in one statement rather than four (BEGIN, lock,
// update, COMMIT), for a job whose start could not share a batch's (fires.go). locked locks
// the post, then the destination (as lockDelivery does, without the other destinations, which
// firing does not read) and, having waited for them, reads the rows as the transaction that
// held them left them; fired marks the post processing only if that reading allows it. (An update
// deciding on the statement's snapshot alone would fire a post that an edit, committed while
// the statement waited, had given new jobs.)
func (s *Store) startDeliveryPostgres(ctx context.Context, destinationID string, seq int) error {
	var curSeq int
	var destStatus string
	err := s.write.QueryRowContext(ctx, `WITH locked AS (
			SELECT p.id, p.status, d.seq, d.status AS destination_status
			FROM posts p JOIN destinations d ON d.post_id = p.id WHERE d.id = $1 FOR UPDATE
		), fired AS (
			UPDATE posts SET status = $3, updated_at = $4 FROM locked
			WHERE posts.id = locked.id AND locked.status = $5 AND locked.seq = $2
				AND locked.destination_status NOT IN ($6, $7, $8, $9)
		)
		SELECT seq, destination_status FROM locked`,
		destinationID, seq, PostProcessing, now(), PostScheduled, DestPublished, DestSentToInbox, DestFailed, DestCanceled).
		Scan(&curSeq, &destStatus)
	if err != nil {
		return fmt.Errorf("store: start delivery: %w", notFound(err))
	}
	if curSeq != seq || Settled(destStatus) {
		return ErrStale
	}
	return nil
}

// lockDelivery locks a destination's post and all its destinations (post first, then
// destinations, as every transaction on a post does, so that none wait for each other in a
// cycle) and reads them: the post, and each destination's id, status and published_at. It
// answers ErrStale when seq is not the destination's or it has settled. One statement locks
// and reads them all: PostgreSQL's FOR UPDATE locks each row's tables in the order its FROM
// lists them and, having waited for a lock, answers the row as the transaction that held it
// left it, so what it reads stays true until the commit. SQLite runs one write transaction
// at a time, which makes the same true with no lock.
func (t *Tx) lockDelivery(ctx context.Context, destinationID string, seq int) (lockedPost, []destinationStatus, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT p.id, p.account_id, p.status,
			NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = p.account_id AND w.disabled_at IS NULL),
			d.id, d.seq, d.status, d.published_at
		FROM posts p JOIN destinations d ON d.post_id = p.id
		WHERE p.id = (SELECT post_id FROM destinations WHERE id = $1)`+t.forUpdate(), destinationID)
	if err != nil {
		return lockedPost{}, nil, fmt.Errorf("store: lock delivery: %w", err)
	}
	defer rows.Close()
	var post lockedPost
	var siblings []destinationStatus
	found := false
	for rows.Next() {
		var d destinationStatus
		if err := rows.Scan(&post.id, &post.accountID, &post.status, &post.noWebhooks, &d.id, &d.seq, &d.status, &d.publishedAt); err != nil {
			return lockedPost{}, nil, fmt.Errorf("store: lock delivery: %w", err)
		}
		if d.id == destinationID {
			found = true
			if d.seq != seq || Settled(d.status) {
				return lockedPost{}, nil, ErrStale
			}
		}
		siblings = append(siblings, d)
	}
	if err := rows.Err(); err != nil {
		return lockedPost{}, nil, fmt.Errorf("store: lock delivery: %w", err)
	}
	if !found {
		return lockedPost{}, nil, ErrNotFound
	}
	return post, siblings, nil
}

// destinationStatus is what a post's status is computed from, of one of its destinations,
// and the seq of its current job.
type destinationStatus struct {
	id, status  string
	seq         int
	publishedAt sql.NullTime
}

// apply makes d what updateDestinationStep writes for step u at time at, worked out here
// rather than read back.
func (d *destinationStatus) apply(u StepUpdate, at time.Time) {
	d.status = u.Status
	if !d.publishedAt.Valid && u.Status == DestPublished {
		d.publishedAt = sql.NullTime{Time: at, Valid: true}
	}
}

// lockedPost is a post a transaction holds locked, as it read it.
type lockedPost struct {
	id, accountID, status string
	// noWebhooks is set when the account had no enabled webhook as the post was locked: a
	// status change then has no event to record, and the webhooks need not be read again.
	noWebhooks bool
}
