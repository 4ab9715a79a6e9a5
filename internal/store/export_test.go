package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// OpenMigratedTo opens a store with reelay's migrations applied up to version and no further
// (River's not at all), so that a test can write rows as an older schema held them and then
// let Open migrate the rest.
func OpenMigratedTo(ctx context.Context, databaseURL string, version int64) (*Store, error) {
	var s *Store
	var err error
	if isPostgresURL(databaseURL) {
		s, err = openPostgres(ctx, databaseURL)
	} else {
		s, err = openSQLite(databaseURL)
	}
	if err != nil {
		return nil, err
	}
	p, err := s.gooseProvider()
	if err == nil {
		_, err = p.UpTo(ctx, version)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// WriteDB is the store's write handle, for tests that need SQL of their own.
func (s *Store) WriteDB() *sql.DB { return s.write }

// PostListPlan is the query plan of ListPosts with f (see queryPlan).
func (s *Store) PostListPlan(ctx context.Context, accountID string, f PostFilter) (string, error) {
	query, args := listPostsQuery(accountID, f)
	return s.queryPlan(ctx, query, args)
}

// CommentListPlan is the query plan of ListComments with f (see queryPlan).
func (s *Store) CommentListPlan(ctx context.Context, accountID string, f CommentFilter) (string, error) {
	query, args := listCommentsQuery(accountID, f)
	return s.queryPlan(ctx, query, args)
}

// queryPlan is how the engine would run a query, one step a line. PostgreSQL is told to avoid
// sequential scans, as it would on tables of real size (on a test's few rows a scan is
// cheapest): a plan that scans anyway has no index to use.
func (s *Store) queryPlan(ctx context.Context, query string, args []any) (string, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	explain := "EXPLAIN QUERY PLAN "
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
			return "", err
		}
		explain = "EXPLAIN "
	}
	rows, err := tx.QueryContext(ctx, explain+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var plan []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		// The step's text is the last column on both engines.
		step := vals[len(vals)-1]
		if b, ok := step.([]byte); ok {
			step = string(b)
		}
		plan = append(plan, fmt.Sprint(step))
	}
	return strings.Join(plan, "\n"), rows.Err()
}

// InGroupTx is inGroupTx, for tests of group commit.
func (s *Store) InGroupTx(ctx context.Context, fn func(tx *Tx) error) error {
	return s.inGroupTx(ctx, fn)
}

// ListenerPID is the PostgreSQL server process of ListenPostSettled's connection, 0 before it
// first listens.
func (s *Store) ListenerPID() uint32 { return s.listenerPID.Load() }

// AgeMediaClaims moves every media claim's expiry d into the past, as if d had gone by.
func AgeMediaClaims(ctx context.Context, s *Store, d time.Duration) error {
	rows, err := s.read.QueryContext(ctx, `SELECT token, expires_at FROM media_claims`)
	if err != nil {
		return err
	}
	expiry := map[string]time.Time{}
	for rows.Next() {
		var token string
		var at time.Time
		if err := rows.Scan(&token, &at); err != nil {
			rows.Close()
			return err
		}
		expiry[token] = at
	}
	rows.Close()
	for token, at := range expiry {
		if _, err := s.write.ExecContext(ctx, `UPDATE media_claims SET expires_at = $1 WHERE token = $2`, at.Add(-d), token); err != nil {
			return err
		}
	}
	return rows.Err()
}

// AgeMedia moves every stored file's last use d into the past.
func AgeMedia(ctx context.Context, s *Store, d time.Duration) error {
	rows, err := s.read.QueryContext(ctx, `SELECT sha256, last_used_at FROM media WHERE last_used_at IS NOT NULL`)
	type use struct {
		sha string
		at  time.Time
	}
	used, err := collect(func(r scanner) (u use, err error) { return u, r.Scan(&u.sha, &u.at) })(rows, err)
	if err != nil {
		return err
	}
	for _, u := range used {
		if _, err := s.write.ExecContext(ctx, `UPDATE media SET last_used_at = $1 WHERE sha256 = $2`, u.at.Add(-d), u.sha); err != nil {
			return err
		}
	}
	return nil
}

// ClaimMediaHeld claims m as ClaimMedia does, calling hold inside the claim's transaction,
// before it commits.
func ClaimMediaHeld(ctx context.Context, s *Store, m Media, hold func(context.Context) error) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.claimMedia(ctx, m, newClaimToken(), now()); err != nil {
			return err
		}
		return hold(ctx)
	})
}

// MediaClaims counts the claims stored, live or lapsed.
func MediaClaims(ctx context.Context, s *Store) (n int, err error) {
	err = s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM media_claims`).Scan(&n)
	return n, err
}

// BatchedStep is a step for SaveOpenStepsAsOne and SaveSettlingStepsAsOne.
type BatchedStep struct {
	ID     string
	Seq    int
	Update StepUpdate
}

// SaveOpenStepsAsOne saves steps as one batch of PostgreSQL's open steps (runOpenSteps) and
// answers, for each, the post id the batch saved it under, or "" when it was left to be saved
// alone.
func (s *Store) SaveOpenStepsAsOne(ctx context.Context, steps []BatchedStep) []string {
	calls := make([]*openStepCall, len(steps))
	for i, st := range steps {
		calls[i] = &openStepCall{callState: callState{ctx: ctx}, id: st.ID, seq: st.Seq, u: st.Update}
	}
	s.runOpenSteps(calls)
	saved := make([]string, len(steps))
	for i, c := range calls {
		if !c.alone && c.err == nil {
			saved[i] = c.postID
		}
	}
	return saved
}

// SaveSettlingStepsAsOne saves steps as one batch of PostgreSQL's settling steps
// (runSettlingSteps) and answers, for each, its post's status after the batch, or "" when it
// was left to be saved alone.
func (s *Store) SaveSettlingStepsAsOne(ctx context.Context, steps []BatchedStep) []string {
	calls := make([]*settlingCall, len(steps))
	for i, st := range steps {
		calls[i] = &settlingCall{callState: callState{ctx: ctx}, id: st.ID, seq: st.Seq, u: st.Update, at: now()}
	}
	s.runSettlingSteps(calls)
	saved := make([]string, len(steps))
	for i, c := range calls {
		if !c.alone && c.err == nil {
			saved[i] = c.postStatus
		}
	}
	return saved
}

// StartDeliveriesAsOne starts the jobs of steps (their Update unused) as one batch of
// PostgreSQL's starts (runFirings) and answers, for each, whether the batch made it, and its
// error (nil or ErrStale) if so.
func (s *Store) StartDeliveriesAsOne(ctx context.Context, steps []BatchedStep) ([]bool, []error) {
	calls := make([]*fireCall, len(steps))
	for i, st := range steps {
		calls[i] = &fireCall{callState: callState{ctx: ctx}, id: st.ID, seq: st.Seq}
	}
	s.runFirings(calls)
	made, errs := make([]bool, len(steps)), make([]error, len(steps))
	for i, c := range calls {
		made[i], errs[i] = !c.alone, c.err
	}
	return made, errs
}

// LoadDeliveriesAsOne reads the deliveries of ids (without thumbnails) as one batch of
// PostgreSQL's reads (runLoads), and answers, for each, whether the batch read it, and what it
// read; alone is what the statement for one destination reads.
func (s *Store) LoadDeliveriesAsOne(ctx context.Context, ids []string) (batched, alone []Delivery, read []bool) {
	calls := make([]*loadCall, len(ids))
	for i, id := range ids {
		calls[i] = &loadCall{callState: callState{ctx: ctx}, id: id}
	}
	s.runLoads(calls)
	batched, alone, read = make([]Delivery, len(ids)), make([]Delivery, len(ids)), make([]bool, len(ids))
	for i, c := range calls {
		batched[i], read[i] = c.dl, !c.alone
		alone[i], _ = s.loadDelivery(ctx, c.id)
	}
	return batched, alone, read
}

// SetRenditionKey makes a destination wait for a rendition.
func SetRenditionKey(ctx context.Context, s *Store, destinationID, key string) error {
	_, err := s.write.ExecContext(ctx, `UPDATE destinations SET rendition_key = $1 WHERE id = $2`, key, destinationID)
	return err
}

// QueueStatePlans are the plans of QueueState's reads of open destinations and pending
// webhook deliveries.
func (s *Store) QueueStatePlans(ctx context.Context) (destinations, webhooks string, err error) {
	if destinations, err = s.queryPlan(ctx, openDestinationsQuery, []any{time.Now().UTC()}); err != nil {
		return "", "", err
	}
	webhooks, err = s.queryPlan(ctx, pendingWebhooksQuery, nil)
	return destinations, webhooks, err
}
