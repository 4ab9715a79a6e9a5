package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// On PostgreSQL a settling step (one that publishes, fails or otherwise ends a destination)
// is a transaction of four round trips: BEGIN, a statement that locks the post with all its
// destinations (lockDelivery), one that writes the destination, the post and the published
// item (saveStepWithPost), COMMIT. A burst of scheduled posts settles thousands at once, and
// each transaction costs the database server its round trips and a commit beyond its writes.
// settlingSteps runs the settling steps that arrive together in one transaction of four round
// trips for all of them (see batcher), as openSteps does for the open steps.
type settlingSteps = batcher[*settlingCall]

// settlingCall is one settling step to save, and what became of it: saved (postID and
// postStatus set), or left to its caller to save alone (saveStep).
type settlingCall struct {
	callState
	id                 string
	seq                int
	u                  StepUpdate
	at                 time.Time
	postID, postStatus string
	err                error
}

// maxSettlingSteps bounds a batch, and so the posts its transaction holds locked.
const maxSettlingSteps = 64

// settlingTimeout bounds a batch's transaction. Its only waits are for figure_totals rows,
// which others hold only while committing.
const settlingTimeout = 30 * time.Second

// saveSettlingBatched is saveStep on PostgreSQL for a settling step, sharing a transaction
// with the settling steps of other destinations saved at the same moment. done is false when
// the step is to be saved alone.
func (s *Store) saveSettlingBatched(ctx context.Context, id string, seq int, u StepUpdate, at time.Time) (postID, postStatus string, done bool, err error) {
	c := &settlingCall{callState: callState{ctx: ctx}, id: id, seq: seq, u: u, at: at}
	s.settlingSteps.do(c, maxSettlingSteps, s.runSettlingSteps)
	if !c.alone {
		return c.postID, c.postStatus, true, c.err
	}
	if err := ctx.Err(); err != nil {
		return "", "", true, err
	}
	return "", "", false, nil
}

// runSettlingSteps saves a batch of settling steps in one transaction: it locks the posts of
// the steps with all their destinations, works out each post's status from all its
// destinations (two of a post may settle in one batch), and writes every step, post and
// published item in one statement. The lock skips rows another transaction holds, so it never
// waits: a post whose rows it could not all lock is left to its steps' callers, as are the
// steps it must not apply (stale, a post not yet fired) and the posts whose change of status
// has an event to record for the account's webhooks (saveStepWithPost records it). Those
// callers wait for the lock, or answer ErrStale, as before. When the transaction fails (a
// deadlock over figure_totals rows with another process's batch, say) every step is saved
// alone, so that none is told it failed because of another.
func (s *Store) runSettlingSteps(batch []*settlingCall) {
	live := liveCalls(batch)
	if len(live) == 0 {
		return
	}
	// A batch of one step too. Saved alone by the leader (as a lone open step is,
	// runOpenSteps), it could wait for its post's lock while the steps arriving meanwhile
	// queued behind it; handed back to its caller, no batch would form (the batcher gathers
	// calls only while a batch runs). The batch never waits for a post's lock nor records an
	// event, so the steps that gather into the next wait only for its few round trips.
	ctx, cancel := context.WithTimeout(context.Background(), settlingTimeout)
	defer cancel()
	var settled []*settlingPost
	err := s.InTx(ctx, func(tx *Tx) error {
		posts, err := tx.lockSettlingPosts(ctx, live)
		if err != nil {
			return err
		}
		settled = settlePosts(posts, live)
		if len(settled) == 0 {
			return nil
		}
		return tx.writeSettledPosts(ctx, settled)
	})
	if err != nil {
		return
	}
	for _, p := range settled {
		for _, c := range p.calls {
			c.postID, c.postStatus, c.alone = p.post.id, p.next, false
		}
	}
}

// settlingPost is a post locked by a batch of settling steps: what the lock read, and what
// the batch makes of it.
type settlingPost struct {
	post  lockedPost
	dests []destinationStatus
	// total is the number of the post's destinations, locked or not: the lock skipped some
	// when it read fewer.
	total int
	calls []*settlingCall
	// next and published are the post's status and published_at after the batch's steps.
	next      string
	published sql.NullTime
}

// lockSettlingPosts locks the posts of the calls' destinations, each with all its
// destinations, skipping the rows other transactions hold, and reads them (as lockDelivery
// does, without waiting). It answers the posts by destination id.
func (t *Tx) lockSettlingPosts(ctx context.Context, calls []*settlingCall) (map[string]*settlingPost, error) {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.id
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT p.id, p.account_id, p.status,
			NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = p.account_id AND w.disabled_at IS NULL),
			(SELECT count(*) FROM destinations a WHERE a.post_id = p.id),
			d.id, d.seq, d.status, d.published_at
		FROM posts p JOIN destinations d ON d.post_id = p.id
		WHERE p.id IN (SELECT post_id FROM destinations WHERE id = ANY($1::uuid[]))
		FOR UPDATE OF p, d SKIP LOCKED`, ids)
	if err != nil {
		return nil, fmt.Errorf("store: lock settling posts: %w", err)
	}
	defer rows.Close()
	posts := make(map[string]*settlingPost)
	byDestination := make(map[string]*settlingPost)
	for rows.Next() {
		var post lockedPost
		var total int
		var d destinationStatus
		if err := rows.Scan(&post.id, &post.accountID, &post.status, &post.noWebhooks, &total,
			&d.id, &d.seq, &d.status, &d.publishedAt); err != nil {
			return nil, fmt.Errorf("store: lock settling posts: %w", err)
		}
		p := posts[post.id]
		if p == nil {
			p = &settlingPost{post: post, total: total}
			posts[post.id] = p
		}
		p.dests = append(p.dests, d)
		byDestination[d.id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: lock settling posts: %w", err)
	}
	return byDestination, nil
}

// settlePosts answers the locked posts whose steps the batch applies, in the order of their
// first call, each with its calls, next status and published_at. A post's steps are applied
// all together or not at all.
func settlePosts(byDestination map[string]*settlingPost, calls []*settlingCall) []*settlingPost {
	var posts []*settlingPost
	for _, c := range calls {
		p := byDestination[c.id]
		if p == nil {
			continue // its post, or the destination itself, is locked by another transaction
		}
		if p.calls == nil {
			posts = append(posts, p)
		}
		p.calls = append(p.calls, c)
	}
	applied := posts[:0]
	for _, p := range posts {
		if p.settle() {
			applied = append(applied, p)
		}
	}
	return applied
}

// settle works out the post's status after its calls' steps, and reports whether the batch
// may apply them: every destination of the post is locked, the post has fired, each call's
// job is current for an unsettled destination (one call a destination), and no event is to be
// recorded.
func (p *settlingPost) settle() bool {
	if len(p.dests) != p.total || p.post.status != PostProcessing {
		return false
	}
	var dests postDestinations
	for _, d := range p.dests {
		calls := 0
		for _, c := range p.calls {
			if c.id != d.id {
				continue
			}
			if calls++; calls > 1 || c.seq != d.seq || Settled(d.status) {
				return false
			}
			d.apply(c.u, c.at)
		}
		dests.add(d.status, d.publishedAt)
	}
	p.next, p.published = PostStatusOf(p.post.status, dests.statuses), dests.published
	return p.next == p.post.status || p.post.noWebhooks
}

// writeSettledPosts writes the settled posts' steps in one statement: each destination as
// updateDestinationStep writes it, each post's status and published_at, and a published item
// for each destination published, counted in figure_totals as addPublishedItem counts it (the
// first item of a post, and of a post on a platform, counting the post once, whether or not
// its other destinations are in the batch). The figure_totals rows are updated in the order
// of their keys, so that two batches wait for each other's rows, if at all, in one order.
func (t *Tx) writeSettledPosts(ctx context.Context, posts []*settlingPost) error {
	var (
		steps                 stepRows
		days                  []string
		order                 []int64
		publishedAts          []*time.Time
		updatedAts            []time.Time
		postIDs, postStatuses []string
		postPublished         []*time.Time
		postUpdated           []time.Time
		changed               []bool
	)
	for _, p := range posts {
		last := time.Time{}
		for _, c := range p.calls {
			steps.add(c.id, c.u)
			order = append(order, int64(len(order)))
			var publishedAt *time.Time
			if c.u.Status == DestPublished {
				publishedAt = &c.at
			}
			publishedAts, updatedAts, days = append(publishedAts, publishedAt), append(updatedAts, c.at), append(days, publishedDay(c.at))
			if c.at.After(last) {
				last = c.at
			}
		}
		postIDs, postStatuses = append(postIDs, p.post.id), append(postStatuses, p.next)
		postPublished, postUpdated = append(postPublished, timePtr(p.published)), append(postUpdated, last)
		changed = append(changed, p.next != p.post.status)
	}
	// The processes waiting for a post hear of its new status at commit (notify.go).
	rows, err := t.tx.QueryContext(ctx, `WITH v AS (
			SELECT * FROM unnest(`+stepRowsUnnest+`, $10::timestamptz[], $11::timestamptz[], $12::text[], $13::int[])
				AS v(`+stepRowsColumns+`, published_at, updated_at, day, ord)
		), step AS (
			UPDATE destinations d SET `+setStepFromV+`,
				published_at = COALESCE(d.published_at, v.published_at), updated_at = v.updated_at
			FROM v WHERE d.id = v.id
		), pv AS (
			SELECT * FROM unnest($14::uuid[], $15::text[], $16::timestamptz[], $17::timestamptz[], $18::bool[])
				AS pv(id, status, published_at, updated_at, changed)
		), post AS (
			UPDATE posts p SET status = pv.status, published_at = pv.published_at, updated_at = pv.updated_at
			FROM pv WHERE p.id = pv.id
		), item AS (
			INSERT INTO published_items (destination_id, account_id, project_id, post_id, channel_id, platform,
				published_at, published_day, first_of_post, first_on_platform, metrics_next_at, comments_next_at)
			SELECT d.id, p.account_id, p.project_id, d.post_id, d.channel_id, d.platform, v.published_at, v.day,
				NOT EXISTS (SELECT 1 FROM published_items o WHERE o.post_id = d.post_id)
					AND row_number() OVER (PARTITION BY d.post_id ORDER BY v.ord) = 1,
				NOT EXISTS (SELECT 1 FROM published_items o WHERE o.post_id = d.post_id AND o.platform = d.platform)
					AND row_number() OVER (PARTITION BY d.post_id, d.platform ORDER BY v.ord) = 1,
				v.published_at, v.published_at
			FROM v JOIN destinations d ON d.id = v.id JOIN posts p ON p.id = d.post_id
			WHERE v.status = $19
			ON CONFLICT (destination_id) DO NOTHING
			RETURNING account_id, project_id, platform, published_day, first_of_post, first_on_platform
		), counted AS (
			INSERT INTO figure_totals (account_id, project_id, platform, day, destinations, posts, first_posts)
			SELECT account_id, project_id, platform, published_day, count(*),
				count(*) FILTER (WHERE first_on_platform), count(*) FILTER (WHERE first_of_post)
			FROM item GROUP BY account_id, published_day, project_id, platform
			ORDER BY account_id, published_day, project_id, platform
			ON CONFLICT (account_id, day, project_id, platform) DO UPDATE
				SET destinations = figure_totals.destinations + excluded.destinations,
				posts = figure_totals.posts + excluded.posts, first_posts = figure_totals.first_posts + excluded.first_posts
		)
		SELECT pg_notify('`+postSettledChannel+`', id::text) FROM pv WHERE changed`,
		steps.args(publishedAts, updatedAts, days, order, postIDs, postStatuses, postPublished, postUpdated, changed, DestPublished)...)
	if err != nil {
		return fmt.Errorf("store: save settling steps: %w", err)
	}
	for rows.Next() {
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("store: save settling steps: %w", err)
	}
	return nil
}
