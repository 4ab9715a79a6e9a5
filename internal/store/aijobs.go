package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Kinds of AI jobs.
const (
	AIJobGenerateVideo    = "generate_video"
	AIJobStoryboardStitch = "storyboard_stitch"
)

// States of an AI job: it is running until it leaves that state, once.
const (
	AIJobRunning   = "running"
	AIJobSucceeded = "succeeded"
	AIJobFailed    = "failed"
)

// AIJob is a long AI request: what was asked, what has been done so far, and how it ended.
type AIJob struct {
	ID        string
	AccountID string
	Kind      string
	Status    string
	// Input is the validated request; it never holds a key.
	Input json.RawMessage
	// ProviderKey is the video provider key the request gave, sealed by internal/secret; nil
	// when it gave none, and erased when the job ends.
	ProviderKey []byte
	// Progress is what the work has done that must not be done twice (provider requests
	// submitted); "{}" at first.
	Progress json.RawMessage
	// Result is set once the job succeeded, Error once it failed.
	Result json.RawMessage
	Error  json.RawMessage
	// ReservationID is the credit reservation the job holds ("" when it costs nothing) and
	// Credits its amount.
	ReservationID string
	Credits       int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
	FinishedAt    *time.Time
}

const aiJobColumns = `id, account_id, kind, status, input, provider_key, progress, result, error, reservation_id,
	credits, created_at, updated_at, finished_at`

func scanAIJob(r scanner) (AIJob, error) {
	var j AIJob
	var input, progress string
	var result, errBody, reservation sql.NullString
	var finished sql.NullTime
	err := r.Scan(&j.ID, &j.AccountID, &j.Kind, &j.Status, &input, &j.ProviderKey, &progress, &result, &errBody,
		&reservation, &j.Credits, &j.CreatedAt, &j.UpdatedAt, &finished)
	if err != nil {
		return j, err
	}
	j.Input, j.Progress = json.RawMessage(input), json.RawMessage(progress)
	if result.Valid {
		j.Result = json.RawMessage(result.String)
	}
	if errBody.Valid {
		j.Error = json.RawMessage(errBody.String)
	}
	j.ReservationID = reservation.String
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	if finished.Valid {
		t := finished.Time.UTC()
		j.FinishedAt = &t
	}
	return j, nil
}

// CreateAIJob records a running job (j.ID, AccountID, Kind, Input, ProviderKey, ReservationID
// and Credits set by the caller) inside the transaction that reserves its credits and inserts
// its River job.
func (t *Tx) CreateAIJob(ctx context.Context, j AIJob) (AIJob, error) {
	if !ValidID(j.ID) || !ValidID(j.AccountID) {
		return AIJob{}, fmt.Errorf("store: create AI job: bad id")
	}
	at := now()
	j.Status, j.CreatedAt, j.UpdatedAt, j.Progress = AIJobRunning, at, at, json.RawMessage(`{}`)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO ai_jobs (id, account_id, kind, status, input, provider_key, progress,
		reservation_id, credits, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		j.ID, j.AccountID, j.Kind, j.Status, string(j.Input), j.ProviderKey, string(j.Progress),
		nullString(j.ReservationID), j.Credits, at, at)
	if err != nil {
		return AIJob{}, fmt.Errorf("store: create AI job: %w", err)
	}
	return j, nil
}

// GetAIJob reads an account's AI job; another account's is ErrNotFound.
func (s *Store) GetAIJob(ctx context.Context, accountID, id string) (AIJob, error) {
	if !ValidID(accountID) || !ValidID(id) {
		return AIJob{}, ErrNotFound
	}
	j, err := scanAIJob(s.read.QueryRowContext(ctx, `SELECT `+aiJobColumns+` FROM ai_jobs WHERE id = $1 AND account_id = $2`,
		id, accountID))
	return j, notFound(err)
}

// AIJobByID reads a job whatever its account (the worker's read).
func (s *Store) AIJobByID(ctx context.Context, id string) (AIJob, error) {
	if !ValidID(id) {
		return AIJob{}, ErrNotFound
	}
	j, err := scanAIJob(s.read.QueryRowContext(ctx, `SELECT `+aiJobColumns+` FROM ai_jobs WHERE id = $1`, id))
	return j, notFound(err)
}

// SaveAIJobProgress replaces a running job's progress; a job that has ended keeps its own.
func (s *Store) SaveAIJobProgress(ctx context.Context, id string, progress json.RawMessage) error {
	_, err := s.write.ExecContext(ctx, `UPDATE ai_jobs SET progress = $1, updated_at = $2 WHERE id = $3 AND status = $4`,
		string(progress), now(), id, AIJobRunning)
	if err != nil {
		return fmt.Errorf("store: save AI job progress: %w", err)
	}
	return nil
}

// FinishAIJob ends a running job as succeeded with result, settling its credits, or as failed
// with errBody, refunding them (reason goes to the ledger), in one transaction; either way the
// provider key is erased. It reports whether this call ended the job: a job that had already
// ended is left as it was (a retried worker finishing twice), and false is returned.
func (s *Store) FinishAIJob(ctx context.Context, id string, result, errBody json.RawMessage, reason string) (bool, error) {
	if (result == nil) == (errBody == nil) {
		return false, fmt.Errorf("store: finish AI job: exactly one of result and error")
	}
	ended := false
	err := s.InTx(ctx, func(tx *Tx) error {
		var status string
		var reservation sql.NullString
		if err := tx.tx.QueryRowContext(ctx, `SELECT status, reservation_id FROM ai_jobs WHERE id = $1`, id).
			Scan(&status, &reservation); err != nil {
			return notFound(err)
		}
		if status != AIJobRunning {
			return nil
		}
		// Credits first: closeReservation locks the account row, the lock every credit movement
		// takes first.
		if reservation.Valid {
			var err error
			if result != nil {
				_, err = tx.SettleCredits(ctx, reservation.String)
			} else {
				_, err = tx.RefundCredits(ctx, reservation.String, reason)
			}
			if err != nil {
				return err
			}
		}
		to, body := AIJobSucceeded, sql.NullString{String: string(result), Valid: result != nil}
		errText := sql.NullString{String: string(errBody), Valid: errBody != nil}
		if errBody != nil {
			to = AIJobFailed
		}
		at := now()
		res, err := tx.tx.ExecContext(ctx, `UPDATE ai_jobs SET status = $1, result = $2, error = $3, provider_key = NULL,
			updated_at = $4, finished_at = $4 WHERE id = $5 AND status = $6`, to, body, errText, at, id, AIJobRunning)
		if err != nil {
			return fmt.Errorf("store: finish AI job: %w", err)
		}
		n, _ := res.RowsAffected()
		ended = n == 1
		return nil
	})
	return ended, err
}

// StaleAIJobs returns running jobs (at most 100) whose last change is before cutoff.
func (s *Store) StaleAIJobs(ctx context.Context, cutoff time.Time) ([]string, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM ai_jobs WHERE status = $1 AND updated_at < $2 ORDER BY updated_at LIMIT 100`,
		AIJobRunning, cutoff.UTC())
	if err != nil {
		return nil, fmt.Errorf("store: stale AI jobs: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
