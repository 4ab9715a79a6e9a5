package store

import (
	"context"
	"errors"
	"time"
)

// On PostgreSQL the open steps of destinations (those that leave them unsettled, two or more
// of each destination's life) are each one autocommitted statement; a burst of scheduled
// posts makes thousands at once, and each costs the database server a round trip and a
// commit beyond its small update. openSteps writes the open steps that arrive together in one
// statement (see batcher), a commit for all of them: a PostgreSQL burst of 1,000 posts drained
// about a fifth sooner with it (docs/BENCHMARKS.md).
type openSteps = batcher[*openStepCall]

// openStepCall is one open step to save, and what became of it: saved (postID set), found
// not to apply (err sql.ErrNoRows, as saveOpenStep answers), failed, or left to its caller to
// save alone.
type openStepCall struct {
	callState
	id     string
	seq    int
	u      StepUpdate
	postID string
	err    error
}

// maxOpenSteps bounds a batch's statement.
const maxOpenSteps = 64

// openStepsTimeout bounds a batch's statement, which never waits for a lock.
const openStepsTimeout = 30 * time.Second

// saveOpenStepBatched is saveOpenStep on PostgreSQL, sharing a statement with the open steps
// of other destinations saved at the same moment.
func (s *Store) saveOpenStepBatched(ctx context.Context, id string, seq int, u StepUpdate) (postID string, err error) {
	c := &openStepCall{callState: callState{ctx: ctx}, id: id, seq: seq, u: u}
	s.openSteps.do(c, maxOpenSteps, s.runOpenSteps)
	if !c.alone {
		return c.postID, c.err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return saveOpenStep(ctx, s.write, id, seq, u, now())
}

// runOpenSteps saves a batch of open steps in one statement. The statement skips the
// destinations another transaction holds locked, and so never waits, nor takes part in a
// deadlock (a settling step locks all its post's destinations); those, and the steps the
// statement does not apply (stale, settled, or of a post not processing: saveOpenStep's
// conditions), are left to their callers to save alone, which waits for the lock or answers
// sql.ErrNoRows as before. When the statement fails, every step is saved alone, so that none
// is told it failed because of another.
func (s *Store) runOpenSteps(batch []*openStepCall) {
	live := liveCalls(batch)
	switch len(live) {
	case 0:
		return
	case 1:
		// Saved here rather than by its caller, so that the steps arriving meanwhile wait
		// for the next batch, which gathers more of them, rather than run alone too (in the
		// burst, handing it back gained nothing). They also wait while it waits for a lock
		// (most often a settling sibling's, held briefly).
		c := live[0]
		c.postID, c.err = saveOpenStep(c.ctx, s.write, c.id, c.seq, c.u, now())
		c.alone = false
		return
	}
	var steps stepRows
	seqs := make([]int64, len(live))
	for i, c := range live {
		steps.add(c.id, c.u)
		seqs[i] = int64(c.seq)
	}
	ctx, cancel := context.WithTimeout(context.Background(), openStepsTimeout)
	defer cancel()
	// The same writes as updateDestinationStep with saveOpenStep's conditions, a row of v for
	// each step.
	rows, err := s.write.QueryContext(ctx, `WITH v AS (
			SELECT * FROM unnest(`+stepRowsUnnest+`, $10::int[]) AS v(`+stepRowsColumns+`, seq)
		), unlocked AS (
			SELECT d.id FROM v JOIN destinations d ON d.id = v.id FOR UPDATE OF d SKIP LOCKED
		)
		UPDATE destinations d SET `+setStepFromV+`, updated_at = $11
		FROM v JOIN unlocked ON unlocked.id = v.id
		WHERE d.id = v.id AND d.seq = v.seq
			AND d.status NOT IN ($12, $13, $14, $15)
			AND EXISTS (SELECT 1 FROM posts p WHERE p.id = d.post_id AND p.status = $16)
		RETURNING d.id, d.post_id`,
		steps.args(seqs, now(), DestPublished, DestSentToInbox, DestFailed, DestCanceled, PostProcessing)...)
	if err != nil {
		return
	}
	saved := make(map[string]string, len(live))
	for rows.Next() {
		var id, postID string
		if err := rows.Scan(&id, &postID); err != nil {
			rows.Close()
			return // saved alone, each writes what the statement wrote again: no harm
		}
		saved[id] = postID
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return // the statement failed, so wrote nothing
	}
	for _, c := range live {
		if postID, ok := saved[c.id]; ok {
			c.postID, c.alone = postID, false
		}
	}
}
