package store

import (
	"context"
	"errors"
)

// Every job of a scheduled post starts with StartDelivery, which on PostgreSQL is one
// autocommitted statement (startDeliveryPostgres): a burst of 1,000 two-destination posts
// makes 2,000 of them at the instant, each a round trip and a commit, most waiting for the
// post's lock held by its sibling's. firings makes the starts that arrive together in one
// statement (see batcher), as openSteps does for the open steps.
type firings = batcher[*fireCall]

// fireCall is one job's start, and what became of it: made (err nil or ErrStale), or left to
// its caller to make alone.
type fireCall struct {
	callState
	id  string
	seq int
	err error
}

// maxFirings bounds a batch's statement.
const maxFirings = 64

// startDeliveryBatched is startDeliveryPostgres, sharing a statement with the starts of other
// jobs made at the same moment.
func (s *Store) startDeliveryBatched(ctx context.Context, id string, seq int) error {
	c := &fireCall{callState: callState{ctx: ctx}, id: id, seq: seq}
	s.firings.do(c, maxFirings, s.runFirings)
	if !c.alone {
		return c.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.startDeliveryPostgres(ctx, id, seq)
}

// runFirings makes a batch of starts in one statement: it locks each job's destination with
// its post, skipping the rows other transactions hold (so it never waits, nor takes part in a
// deadlock), marks processing the scheduled posts of current jobs, and reads each locked
// destination as startDeliveryPostgres does, to tell a stale job. The starts whose rows it
// skipped, or that it did not find, are left to their callers, who wait for the lock or learn
// ErrNotFound as before; so is every start when the statement fails. Unlike a lone open step,
// a lone start is made as a batch too, which gathers the starts arriving meanwhile without
// their waiting for a lock.
func (s *Store) runFirings(batch []*fireCall) {
	live := liveCalls(batch)
	if len(live) == 0 {
		return
	}
	ids, seqs := make([]string, len(live)), make([]int64, len(live))
	for i, c := range live {
		ids[i], seqs[i] = c.id, int64(c.seq)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openStepsTimeout)
	defer cancel()
	// The same decision as startDeliveryPostgres's, a row of v for each job.
	rows, err := s.write.QueryContext(ctx, `WITH v AS (
			SELECT * FROM unnest($1::uuid[], $2::int[]) AS v(id, seq)
		), locked AS (
			SELECT p.id, p.status, d.id AS destination_id, d.seq, d.status AS destination_status, v.seq AS job_seq
			FROM v JOIN destinations d ON d.id = v.id JOIN posts p ON p.id = d.post_id
			FOR UPDATE OF p, d SKIP LOCKED
		), fired AS (
			UPDATE posts SET status = $3, updated_at = $4 FROM locked
			WHERE posts.id = locked.id AND locked.status = $5 AND locked.seq = locked.job_seq
				AND locked.destination_status NOT IN ($6, $7, $8, $9)
		)
		SELECT destination_id, seq, destination_status FROM locked`,
		ids, seqs, PostProcessing, now(), PostScheduled, DestPublished, DestSentToInbox, DestFailed, DestCanceled)
	if err != nil {
		return
	}
	type found struct {
		seq    int
		status string
	}
	got := make(map[string]found, len(live))
	for rows.Next() {
		var id string
		var f found
		if err := rows.Scan(&id, &f.seq, &f.status); err != nil {
			rows.Close()
			return // made alone, each finds its post fired or fires it: no harm
		}
		got[id] = f
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return // the statement failed, so wrote nothing
	}
	for _, c := range live {
		f, ok := got[c.id]
		if !ok {
			continue
		}
		c.alone = false
		if f.seq != c.seq || Settled(f.status) {
			c.err = ErrStale
		}
	}
}
