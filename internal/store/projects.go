package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Project groups an account's channels; a project sees only its own.
type Project struct {
	ID          string
	AccountID   string
	Name        string
	Description string
	CreatedAt   time.Time
}

// CreateProject creates a project for an account, within its cap of projects.
func (s *Store) CreateProject(ctx context.Context, accountID, name, description string) (p Project, err error) {
	err = s.InTx(ctx, func(tx *Tx) error {
		if err := tx.roomFor(ctx, s.capOf(CappedProjects), CappedProjects, accountID, 1); err != nil {
			return err
		}
		p, err = createProject(ctx, tx.tx, accountID, name, description)
		return err
	})
	return p, err
}

func createProject(ctx context.Context, q queryer, accountID, name, description string) (Project, error) {
	p := Project{ID: uuid.NewString(), AccountID: accountID, Name: name, Description: description, CreatedAt: now()}
	_, err := q.ExecContext(ctx, `INSERT INTO projects (id, account_id, name, description, created_at) VALUES ($1, $2, $3, $4, $5)`,
		p.ID, p.AccountID, p.Name, p.Description, p.CreatedAt)
	if err != nil {
		return Project{}, fmt.Errorf("store: create project: %w", err)
	}
	return p, nil
}

// ListProjects lists an account's projects, oldest first.
func (s *Store) ListProjects(ctx context.Context, accountID string) ([]Project, error) {
	projects, err := collect(scanProject)(s.read.QueryContext(ctx, `SELECT id, account_id, name, description, created_at
		FROM projects WHERE account_id = $1 ORDER BY created_at, id`, accountID))
	if err != nil {
		return nil, fmt.Errorf("store: list projects: %w", err)
	}
	return projects, nil
}

// GetProject reads one of an account's projects.
func (s *Store) GetProject(ctx context.Context, accountID, id string) (Project, error) {
	if !ValidID(id) {
		return Project{}, ErrNotFound
	}
	row := s.read.QueryRowContext(ctx, `SELECT id, account_id, name, description, created_at
		FROM projects WHERE id = $1 AND account_id = $2`, id, accountID)
	p, err := scanProject(row)
	return p, notFound(err)
}

func scanProject(r scanner) (Project, error) {
	var p Project
	err := r.Scan(&p.ID, &p.AccountID, &p.Name, &p.Description, &p.CreatedAt)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, err
}
