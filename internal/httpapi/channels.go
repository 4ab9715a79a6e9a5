package httpapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

type channelJSON struct {
	ID                string                `json:"id"`
	ProjectID         string                `json:"project_id"`
	Platform          string                `json:"platform"`
	Name              string                `json:"name"`
	Username          string                `json:"username"`
	AvatarURL         string                `json:"avatar_url"`
	ExternalAccountID string                `json:"external_account_id"`
	Capabilities      platform.Capabilities `json:"capabilities"`
	Sandbox           bool                  `json:"sandbox"`
	Status            string                `json:"status"`
	CreatedAt         time.Time             `json:"created_at"`
}

func toChannelJSON(c store.Channel) channelJSON {
	caps, _ := registry.CapabilitiesOf(c.Platform)
	return channelJSON{ID: c.ID, ProjectID: c.ProjectID, Platform: c.Platform, Name: c.Name, Username: c.Username,
		AvatarURL: c.AvatarURL, ExternalAccountID: c.ExternalAccountID, Capabilities: caps, Sandbox: c.Sandbox,
		Status: c.Status, CreatedAt: c.CreatedAt}
}

// listChannels answers the channels of one project. The contract lets callers leave projectId out
// when the account has exactly one project (docs/CONTRACT.md, Channels and connecting); with
// several, leaving it out is ambiguous.
func (s *Server) listChannels(w http.ResponseWriter, r *http.Request) error {
	p := mustPrincipal(r)
	q := r.URL.Query()
	projectID := q.Get("projectId")
	if projectID == "" {
		projectID = q.Get("project_id")
	}
	if projectID != "" && !store.ValidID(projectID) {
		return apierr.Field("projectId", "must be a UUID")
	}
	project, err := s.projectOrOnly(r, projectID, "projectId")
	if err != nil {
		return err
	}
	channels, err := s.channels.List(r.Context(), p.AccountID, project.ID)
	if err != nil {
		return err
	}
	out := make([]channelJSON, len(channels))
	for i, c := range channels {
		out[i] = toChannelJSON(c)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "project_id": project.ID, "channels": out})
	return nil
}

// projectOrOnly is the caller's project id, or when id is empty the account's only project:
// with several, leaving it out is ambiguous.
// field names the parameter in the error.
func (s *Server) projectOrOnly(r *http.Request, id, field string) (store.Project, error) {
	if id != "" {
		return s.ownProject(r, id)
	}
	projects, err := s.store.ListProjects(r.Context(), mustPrincipal(r).AccountID)
	if err != nil {
		return store.Project{}, err
	}
	if len(projects) != 1 {
		return store.Project{}, apierr.Field(field, fmt.Sprintf("is required: the account has %d projects (GET /projects lists them)", len(projects)))
	}
	return projects[0], nil
}

func (s *Server) ownProject(r *http.Request, id string) (store.Project, error) {
	p, err := s.store.GetProject(r.Context(), mustPrincipal(r).AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		return p, apierr.NotFound("project")
	}
	return p, err
}

type createChannelRequest struct {
	ProjectID       string                   `json:"project_id"`
	Platform        string                   `json:"platform"`
	Name            string                   `json:"name"`
	Credentials     map[string]string        `json:"credentials"`
	Sandbox         bool                     `json:"sandbox"`
	SandboxBehavior *connect.SandboxBehavior `json:"sandbox_behavior"`
}

func (s *Server) createChannel(w http.ResponseWriter, r *http.Request) error {
	var req createChannelRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	saved, created, err := s.channels.Connect(r.Context(), mustPrincipal(r).AccountID, connect.NewChannel{
		ProjectID: req.ProjectID, Platform: req.Platform, Name: req.Name, Credentials: req.Credentials,
		Sandbox: req.Sandbox, SandboxBehavior: req.SandboxBehavior})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"success": true, "channel": toChannelJSON(saved)})
	return nil
}

func (s *Server) deleteChannel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.channels.Disconnect(r.Context(), mustPrincipal(r).AccountID, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id})
	return nil
}

// channelCaller calls channels' platforms outside publishing, renewing tokens where this
// server can (it has a connector).
func (s *Server) channelCaller() publish.ChannelCaller {
	c := publish.ChannelCaller{Access: s.access, Store: s.store}
	if s.connector != nil {
		c.Tokens = s.connector
	}
	return c
}

// OptionsSource reads a channel's live publish options from its platform (YouTube categories,
// Instagram account, TikTok creator info, Pinterest boards, ...); query is the request's, for
// options scoped further (Reddit's ?subreddit=).
type OptionsSource func(ctx context.Context, baseURL string, credentials map[string]string, query url.Values) (map[string]any, error)

// channelOptions answers the publish choices a channel offers: live from the platform where
// its provider reads them, else the platform registry's static choices; source says which.
func (s *Server) channelOptions(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	c, err := s.channels.Get(r.Context(), mustPrincipal(r).AccountID, id)
	if err != nil {
		return err
	}
	options, source := registry.StaticOptions(c.Platform), "registry"
	if read, ok := s.optionSources[c.Platform]; ok {
		// The caller renews a token that is due (or refused) first, and marks a channel whose
		// token the platform still refuses reauth_required.
		err := s.channelCaller().Call(r.Context(), c, func(ch provider.Channel) error {
			creds := maps.Clone(ch.Credentials)
			// Instagram's calls are made on the account's own node.
			creds["ig_user_id"] = c.ExternalAccountID
			var err error
			options, err = read(r.Context(), ch.BaseURL, creds, r.URL.Query())
			return err
		})
		if err != nil {
			pe := provider.AsError(err)
			if pe.Category == provider.CategoryInvalidOptions && r.URL.Query().Get("subreddit") != "" {
				return apierr.Field("subreddit", pe.Message)
			}
			return apierr.Newf(http.StatusBadGateway, apierr.CodeUpstreamError, "%s answered: %s",
				registry.DisplayName(c.Platform), pe.Message).Wrap(err)
		}
		source = "platform"
	}
	if options == nil {
		options = map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "channel_id": c.ID, "platform": c.Platform,
		"options": options, "source": source})
	return nil
}

type channelCheckJSON struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// checkChannel asks the channel's platform whether the channel works (connect.CheckChannel)
// and answers one line per check. A failed check is still a 200: the check itself worked.
func (s *Server) checkChannel(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if s.connector == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "checking channels is not available on this process")
	}
	c, checks, err := s.connector.CheckChannel(r.Context(), mustPrincipal(r).AccountID, id)
	if err != nil {
		return err
	}
	ok := true
	out := make([]channelCheckJSON, len(checks))
	for i, k := range checks {
		out[i] = channelCheckJSON{Name: k.Name, Status: k.Status, Detail: k.Detail, Fix: k.Fix}
		ok = ok && k.Status != provider.CheckFailed
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "channel": toChannelJSON(c), "ok": ok, "checks": out})
	return nil
}
