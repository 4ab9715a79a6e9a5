package connect

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// Channels connects channels without a consent (on a platform's simulator, or with
// credentials a user pastes) and disconnects them, for both front doors: POST and DELETE
// /api/v1/channels and the dashboard's channels page. It checks a request once, so that the
// same mistake gets the same words from either.
type Channels struct {
	Store *store.Store
	// Connector verifies pasted credentials with their platform; nil derives the identity
	// from the credentials (CredentialChannel).
	Connector *Connector
	// Access seals the credentials of the channels connected here.
	Access publish.ChannelAccess
	// Sandbox allows channels on the built-in simulators.
	Sandbox bool
}

// MaxChannelNameLen is the longest name a channel may be given, in characters.
const MaxChannelNameLen = 100

// NewChannel is a channel to connect.
type NewChannel struct {
	ProjectID string
	Platform  string
	// Name may be empty: the platform's account (or the simulator's) names the channel.
	Name string
	// Credentials connect a channel of a real platform (nil: none given); Sandbox one on the
	// platform's simulator instead, which SandboxBehavior may tune.
	Credentials     map[string]string
	Sandbox         bool
	SandboxBehavior *SandboxBehavior
}

// Check adds to f what is wrong with req that needs neither the store nor the platform.
func (s Channels) Check(f *apierr.Fields, req NewChannel) {
	switch {
	case req.ProjectID == "":
		f.Add("project_id", "is required")
	case !store.ValidID(req.ProjectID):
		f.Add("project_id", "must be a UUID")
	}
	checkPlatform(f, req.Platform)
	f.Label("name", req.Name, MaxChannelNameLen)
	if !req.Sandbox {
		if req.SandboxBehavior != nil {
			f.Add("sandbox_behavior", "applies to sandbox channels only; set \"sandbox\": true")
		}
		if platform.Valid(req.Platform) {
			CheckCredentials(f, req.Platform, req.Credentials)
		}
		return
	}
	s.checkSandbox(f)
	if req.Credentials != nil {
		f.Add("credentials", "a sandbox channel takes no credentials")
	}
	if req.SandboxBehavior != nil {
		req.SandboxBehavior.Check(req.Platform, f)
	}
}

func checkPlatform(f *apierr.Fields, name string) {
	switch {
	case name == "":
		f.Add("platform", "is required")
	case !platform.Valid(name):
		f.Addf("platform", "unknown platform %q; one of %s", name, strings.Join(platform.All, ", "))
	}
}

// checkSandbox refuses a channel on the simulators where this server offers none.
func (s Channels) checkSandbox(f *apierr.Fields) {
	if !s.Sandbox {
		f.Add("sandbox", "sandbox channels are disabled on this server (REELAY_SANDBOX=false)")
	}
}

// CheckConsent adds to f what is wrong with starting a consent for a channel of
// platformName, on its simulator when sandbox.
func (s Channels) CheckConsent(f *apierr.Fields, platformName string, sandbox bool) {
	checkPlatform(f, platformName)
	if sandbox {
		s.checkSandbox(f)
	}
}

// BeginConsent checks a consent (CheckConsent) and starts it for a channel of project, which
// must be the caller's (the caller found it): it answers the link to open in a browser
// (Connector.BeginReturning; returnTo is where the browser goes afterwards, "" for the API's
// result page).
func (s Channels) BeginConsent(ctx context.Context, project store.Project, platformName string, sandbox bool, returnTo string) (string, error) {
	var f apierr.Fields
	s.CheckConsent(&f, platformName, sandbox)
	if err := f.Err(); err != nil {
		return "", err
	}
	if s.Connector == nil {
		return "", apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "connecting channels is not available on this process")
	}
	return s.Connector.BeginReturning(ctx, project.AccountID, project.ID, platformName, sandbox, returnTo)
}

// Connect checks req and stores its channel in the account's project: on the simulator, or
// with credentials the platform itself has accepted (nothing is stored when it refuses them).
// created is false when the same platform account was connected to the project before (its
// credentials are replaced). The account's cap of channels is counted by the store, inside
// the insert's transaction.
func (s Channels) Connect(ctx context.Context, accountID string, req NewChannel) (saved store.Channel, created bool, err error) {
	var f apierr.Fields
	s.Check(&f, req)
	if err := f.Err(); err != nil {
		return store.Channel{}, false, err
	}
	project, err := s.Store.GetProject(ctx, accountID, req.ProjectID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Channel{}, false, apierr.NotFound("project")
	}
	if err != nil {
		return store.Channel{}, false, err
	}
	var c store.Channel
	if req.Sandbox {
		behavior := SandboxBehavior{}
		if req.SandboxBehavior != nil {
			behavior = *req.SandboxBehavior
		}
		c, err = NewSandboxChannel(ctx, s.Store, project, req.Platform, req.Name, behavior)
	} else {
		c, err = CredentialChannel(ctx, s.Connector, s.Access, project, req.Platform, req.Name, req.Credentials)
	}
	if err != nil {
		return store.Channel{}, false, err
	}
	return s.Store.SaveChannel(ctx, c)
}

// List is the channels of one of the account's projects.
func (s Channels) List(ctx context.Context, accountID, projectID string) ([]store.Channel, error) {
	return s.Store.ListChannels(ctx, accountID, projectID)
}

// Get is one of the account's channels.
func (s Channels) Get(ctx context.Context, accountID, id string) (store.Channel, error) {
	c, err := s.Store.GetChannel(ctx, accountID, id)
	return c, channelNotFound(err)
}

// Disconnect removes one of the account's channels.
func (s Channels) Disconnect(ctx context.Context, accountID, id string) error {
	return channelNotFound(s.Store.DeleteChannel(ctx, accountID, id))
}

// channelNotFound words the store's refusal of a channel id the account does not hold.
func channelNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("channel")
	}
	return err
}
