package store

import (
	"context"
	"fmt"
	"time"
)

// QueueState is the backlog of the whole fleet at one moment, for the gauges of /metrics
// (internal/queuegauge): what waits in the database, whichever process will work it.
type QueueState struct {
	// Destinations are the open (unsettled) destinations, one entry per platform and status.
	Destinations []OpenDestinations
	// Jobs are River's unfinished jobs, one entry per queue.
	Jobs []JobBacklog
	// WebhooksPending counts the deliveries neither delivered nor given up;
	// OldestWebhookPending is when the oldest of them was recorded (nil when none).
	WebhooksPending      int64
	OldestWebhookPending *time.Time
}

// OpenDestinations counts the open destinations of one platform in one status.
type OpenDestinations struct {
	Platform string
	Status   string
	Count    int64
	// IdleSince is, among those that are due (their post is not scheduled in the future),
	// the earliest moment one last moved: its last step, or its post's scheduled time when
	// later. nil when none is due.
	IdleSince *time.Time
}

// JobBacklog counts a queue's unfinished jobs by what they wait for.
type JobBacklog struct {
	Queue string
	// Available jobs wait for a worker to fetch them.
	Available int64
	// Due jobs are scheduled or retryable ones whose time has come, waiting for River's
	// scheduler to make them available.
	Due int64
	// Scheduled jobs wait for a time still to come.
	Scheduled int64
	Running   int64
	// OldestDue is the earliest scheduled time of the jobs that are due and not running
	// (available or due): how late the queue runs. nil when none.
	OldestDue *time.Time
}

// QueueState reads the backlog as of now. Each count is one statement on an index: the open
// destinations and pending deliveries have partial indexes (migration 00022), River's jobs
// its own index on their state.
func (s *Store) QueueState(ctx context.Context, now time.Time) (QueueState, error) {
	now = now.UTC()
	var qs QueueState
	var err error
	if qs.Destinations, err = s.openDestinations(ctx, now); err != nil {
		return QueueState{}, err
	}
	if qs.Jobs, err = s.jobBacklog(ctx, now); err != nil {
		return QueueState{}, err
	}
	var oldest dbTime
	if err := s.read.QueryRowContext(ctx, pendingWebhooksQuery).Scan(&qs.WebhooksPending, &oldest); err != nil {
		return QueueState{}, fmt.Errorf("store: count pending webhook deliveries: %w", err)
	}
	qs.OldestWebhookPending = oldest.t
	return qs, nil
}

// The conditions are written out, not passed, so that they match the partial indexes of
// migration 00022 (destinations_open_idx, webhook_deliveries_pending_idx).
const (
	openDestinationsQuery = `SELECT d.platform, d.status, count(*),
		MIN(CASE WHEN p.scheduled_for IS NULL OR p.scheduled_for <= $1 THEN
			CASE WHEN p.scheduled_for > d.updated_at THEN p.scheduled_for ELSE d.updated_at END END)
		FROM destinations d JOIN posts p ON p.id = d.post_id
		WHERE d.status IN ('queued', 'uploading', 'processing')
		GROUP BY d.platform, d.status ORDER BY d.platform, d.status`
	pendingWebhooksQuery = `SELECT count(*), MIN(created_at) FROM webhook_deliveries WHERE status = 'pending'`
)

func (s *Store) openDestinations(ctx context.Context, now time.Time) ([]OpenDestinations, error) {
	rows, err := s.read.QueryContext(ctx, openDestinationsQuery, now)
	if err != nil {
		return nil, fmt.Errorf("store: count open destinations: %w", err)
	}
	defer rows.Close()
	var out []OpenDestinations
	for rows.Next() {
		var o OpenDestinations
		var idle dbTime
		if err := rows.Scan(&o.Platform, &o.Status, &o.Count, &idle); err != nil {
			return nil, fmt.Errorf("store: count open destinations: %w", err)
		}
		o.IdleSince = idle.t
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: count open destinations: %w", err)
	}
	return out, nil
}

// riverTimeFormat is how River's SQLite driver writes its times, which its columns compare
// as text: a parameter must have the same form to compare right.
const riverTimeFormat = "2006-01-02 15:04:05.000"

func (s *Store) jobBacklog(ctx context.Context, now time.Time) ([]JobBacklog, error) {
	var at any = now
	if s.dialect == SQLite {
		at = now.Round(time.Millisecond).Format(riverTimeFormat)
	}
	// River's own table on either engine; running and waiting jobs are few beside the
	// finished ones River keeps for a day, and its index on (state, queue, ...) finds them.
	rows, err := s.read.QueryContext(ctx, `SELECT queue,
		SUM(CASE WHEN state = 'available' THEN 1 ELSE 0 END),
		SUM(CASE WHEN state <> 'available' AND state <> 'running' AND scheduled_at <= $1 THEN 1 ELSE 0 END),
		SUM(CASE WHEN state <> 'available' AND state <> 'running' AND scheduled_at > $1 THEN 1 ELSE 0 END),
		SUM(CASE WHEN state = 'running' THEN 1 ELSE 0 END),
		MIN(CASE WHEN state <> 'running' AND scheduled_at <= $1 THEN scheduled_at END)
		FROM river_job WHERE state IN ('available', 'scheduled', 'retryable', 'running')
		GROUP BY queue ORDER BY queue`, at)
	if err != nil {
		return nil, fmt.Errorf("store: count jobs: %w", err)
	}
	defer rows.Close()
	var out []JobBacklog
	for rows.Next() {
		var j JobBacklog
		var oldest dbTime
		if err := rows.Scan(&j.Queue, &j.Available, &j.Due, &j.Scheduled, &j.Running, &oldest); err != nil {
			return nil, fmt.Errorf("store: count jobs: %w", err)
		}
		j.OldestDue = oldest.t
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: count jobs: %w", err)
	}
	return out, nil
}

// dbTime scans a time an aggregate returns: PostgreSQL gives a time.Time, SQLite the stored
// text (an aggregate's result has no declared type for the driver to convert by). NULL leaves
// t nil.
type dbTime struct{ t *time.Time }

// sqliteTimeFormats are the forms times take in reelay's SQLite tables (the driver's, with
// _time_format=sqlite) and in River's.
var sqliteTimeFormats = []string{"2006-01-02 15:04:05.999999999-07:00", riverTimeFormat, time.RFC3339Nano}

func (d *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		d.t = nil
		return nil
	case time.Time:
		t := v.UTC()
		d.t = &t
		return nil
	case []byte:
		return d.parse(string(v))
	case string:
		return d.parse(v)
	}
	return fmt.Errorf("store: scan a time from %T", src)
}

func (d *dbTime) parse(s string) error {
	for _, layout := range sqliteTimeFormats {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			d.t = &t
			return nil
		}
	}
	return fmt.Errorf("store: unrecognised time %q", s)
}
