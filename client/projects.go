package client

import (
	"context"
	"time"
)

// Project isolates its own channels; every account starts with one named "Default".
type Project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
}

// CreateProjectRequest is the body of CreateProject.
type CreateProjectRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type projectList struct {
	Projects []Project `json:"projects"`
}

type projectResponse struct {
	Project Project `json:"project"`
}

// ListProjects answers the account's projects, oldest first. The API has no way to read,
// rename or delete one project; operators do that with `reelay projects`.
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	var out projectList
	if err := c.get(ctx, "/projects", nil, &out); err != nil {
		return nil, err
	}
	return out.Projects, nil
}

// CreateProject creates a project in the account.
func (c *Client) CreateProject(ctx context.Context, req CreateProjectRequest) (*Project, error) {
	var out projectResponse
	if _, err := c.post(ctx, "/projects", req, &out); err != nil {
		return nil, err
	}
	return &out.Project, nil
}
