package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// CalendarEntry is a post as a calendar shows it: at its scheduled time, else when it was
// published, else when it was created.
type CalendarEntry struct {
	ID        string
	ProjectID string
	Title     string
	// Caption is the first 80 characters of the caption of a post without a title ("" otherwise).
	Caption string
	Status  string
	At      time.Time
	// Scheduled says At is the post's scheduled time.
	Scheduled bool
}

// calendarAt is the time a post is placed at; the posts_calendar_idx index is on it, and the
// query must use the very same expression for the index to serve it.
const calendarAt = `COALESCE(scheduled_for, published_at, created_at)`

// ListCalendar lists an account's posts placed in [from, to), in time order, of one project
// ("" for all); at most limit (0: no limit).
func (s *Store) ListCalendar(ctx context.Context, accountID, projectID string, from, to time.Time, limit int) ([]CalendarEntry, error) {
	w := newWhere()
	w.add("account_id = ?", accountID)
	if projectID != "" {
		if !ValidID(projectID) {
			return []CalendarEntry{}, nil
		}
		w.add("project_id = ?", projectID)
	}
	w.add(calendarAt+" >= ?", from.UTC())
	w.add(calendarAt+" < ?", to.UTC())
	order := ` ORDER BY ` + calendarAt + `, id`
	entries, err := collect(scanCalendarEntry)(s.read.QueryContext(ctx, `SELECT id, project_id, title, CASE WHEN title = '' THEN SUBSTR(caption, 1, 80) ELSE '' END, status, scheduled_for, published_at, created_at
		FROM posts WHERE `+w.sql()+order+w.limit(limit), w.args...))
	if err != nil {
		return nil, fmt.Errorf("store: list calendar: %w", err)
	}
	return entries, nil
}

func scanCalendarEntry(r scanner) (CalendarEntry, error) {
	var e CalendarEntry
	// The three times are read as they are (SQLite gives a computed COALESCE back as text) and
	// the first one set is taken, as calendarAt does.
	var scheduled, published sql.NullTime
	err := r.Scan(&e.ID, &e.ProjectID, &e.Title, &e.Caption, &e.Status, &scheduled, &published, &e.At)
	switch {
	case scheduled.Valid:
		e.At, e.Scheduled = scheduled.Time, true
	case published.Valid:
		e.At = published.Time
	}
	e.At = e.At.UTC()
	return e, err
}
