package client

import (
	"context"
	"net/http"
	"time"
)

// Channel is a connected social account.
type Channel struct {
	ID        string   `json:"id"`
	ProjectID string   `json:"project_id"`
	Platform  Platform `json:"platform"`
	// Name is the account's display name.
	Name     string `json:"name"`
	Username string `json:"username"`
	// AvatarURL may be empty.
	AvatarURL string `json:"avatar_url"`
	// ExternalAccountID is the account's id on its platform.
	ExternalAccountID string `json:"external_account_id"`
	// Capabilities are the platform's limits and abilities (sizes, durations, formats, text
	// limits under "text", "comments", "replies", "reply_text", "analytics"). The contract
	// leaves the object open, so it is kept as decoded JSON rather than a struct that would
	// claim more than the contract promises.
	Capabilities map[string]any `json:"capabilities"`
	// Sandbox is true for a channel on the built-in simulator.
	Sandbox bool `json:"sandbox"`
	// Status is ChannelActive, or ChannelReauthRequired after the platform refused the
	// channel's token: connect it again.
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// Channel statuses.
const (
	ChannelActive         = "active"
	ChannelReauthRequired = "reauth_required"
)

// ChannelList is the answer of ListChannels.
type ChannelList struct {
	// ProjectID is the project listed: the one asked for, or the account's only project.
	ProjectID string    `json:"project_id"`
	Channels  []Channel `json:"channels"`
}

// CreateChannelRequest connects a channel with credentials, or on the simulator with Sandbox.
type CreateChannelRequest struct {
	ProjectID string   `json:"project_id"`
	Platform  Platform `json:"platform"`
	// Name defaults to the account's name on the platform.
	Name string `json:"name,omitempty"`
	// Credentials are checked with the platform before anything is stored. bluesky: handle,
	// app_password, optional pds_url; telegram: bot_token, chat_id; discord: webhook_url;
	// mastodon: instance_url, access_token; the others: access_token, optional refresh_token.
	Credentials map[string]string `json:"credentials,omitempty"`
	// Sandbox connects a channel on the platform's built-in simulator (no credentials).
	Sandbox         bool             `json:"sandbox,omitempty"`
	SandboxBehavior *SandboxBehavior `json:"sandbox_behavior,omitempty"`
}

// SandboxBehavior is how a sandbox channel's simulator behaves.
type SandboxBehavior struct {
	// ProcessingMS is the simulated processing time after an upload (0 to 600000).
	ProcessingMS *int `json:"processing_ms,omitempty"`
	// Fail is "none" (default), "reject", "unavailable", "auth", "rate_limit" or "flaky".
	Fail string `json:"fail,omitempty"`
	// FailRate is the share of calls that fail with Fail "flaky".
	FailRate *float64 `json:"fail_rate,omitempty"`
	// DailyQuotaUnits sets a YouTube sandbox channel's simulated general daily quota in units
	// (default 10,000), which every call but an upload draws on; negative means none. Uploads
	// have a bucket of their own, 100 a day.
	DailyQuotaUnits *int `json:"daily_quota_units,omitempty"`
	// AppAccess is the access level the simulated platform granted reelay's app: Pinterest
	// "standard" (default) or "trial" (production refuses its Pins); TikTok "unaudited"
	// (default, as a new app: its direct posts may only be SELF_ONLY) or "audited".
	AppAccess string `json:"app_access,omitempty"`
	// BarePDS makes a Bluesky sandbox channel's PDS a self-hosted one with neither AppView nor
	// video service: the account is named from its session, the video goes to uploadBlob
	// (at most 5 MiB, the reference PDS's default limit).
	BarePDS bool `json:"bare_pds,omitempty"`
}

type channelResponse struct {
	Channel Channel `json:"channel"`
}

// ChannelOptions are a channel's publish choices, read from its platform.
type ChannelOptions struct {
	ChannelID string   `json:"channel_id"`
	Platform  Platform `json:"platform"`
	// Options depend on the platform (YouTube categories, TikTok creator settings, Pinterest
	// boards, subreddit flair, Mastodon limits, ...), so they are kept as decoded JSON.
	Options map[string]any `json:"options"`
	// Source is "platform" when the options were read live from the platform, "registry"
	// when they are reelay's static description of its choices.
	Source string `json:"source"`
}

// ChannelOptionsParams narrows ChannelOptions.
type ChannelOptionsParams struct {
	// Subreddit, for a Reddit channel, answers that subreddit's requirements and flair.
	Subreddit string `query:"subreddit"`
}

// ConnectURL is where a browser goes to connect an OAuth channel: reelay's start page, which
// binds the consent to the first browser that opens it.
type ConnectURL struct {
	URL      string   `json:"url"`
	Platform Platform `json:"platform"`
	// ExpiresAt is when the consent's state expires.
	ExpiresAt time.Time `json:"expires_at"`
}

// ConnectURLParams says where the connected channel goes.
type ConnectURLParams struct {
	// ProjectID may be empty when the account has one project.
	ProjectID string `query:"project_id"`
	// Sandbox uses the simulator's consent page, which approves at once.
	Sandbox bool `query:"sandbox"`
}

type channelsQuery struct {
	ProjectID string `query:"projectId"`
}

// ListChannels answers a project's channels; projectID may be empty when the account has
// exactly one project.
func (c *Client) ListChannels(ctx context.Context, projectID string) (*ChannelList, error) {
	var out ChannelList
	if err := c.get(ctx, "/channels", encodeQuery(channelsQuery{ProjectID: projectID}), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateChannel connects a channel. Connecting an account that is already connected to the
// project updates its channel, which is answered the same way.
func (c *Client) CreateChannel(ctx context.Context, req CreateChannelRequest) (*Channel, error) {
	var out channelResponse
	if _, err := c.post(ctx, "/channels", req, &out); err != nil {
		return nil, err
	}
	return &out.Channel, nil
}

// DeleteChannel disconnects a channel and deletes its stored tokens; its posts are kept.
func (c *Client) DeleteChannel(ctx context.Context, id string) error {
	path, err := idPath("/channels", id, "")
	if err != nil {
		return err
	}
	return c.remove(ctx, path, id)
}

// ChannelOptions reads a channel's publish choices from its platform.
func (c *Client) ChannelOptions(ctx context.Context, id string, params ChannelOptionsParams) (*ChannelOptions, error) {
	path, err := idPath("/channels", id, "/options")
	if err != nil {
		return nil, err
	}
	var out ChannelOptions
	if err := c.get(ctx, path, encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ConnectURL answers the link that starts an OAuth platform's consent (youtube, instagram,
// tiktok, linkedin, pinterest, threads, facebook, reddit): reelay's start page, to open in the
// browser that connects the account. It binds the consent to that browser and sends it to
// the platform's consent page; the platform sends the browser back to reelay, which stores the
// channel (only for that browser). Token platforms connect with CreateChannel instead.
func (c *Client) ConnectURL(ctx context.Context, platform Platform, params ConnectURLParams) (*ConnectURL, error) {
	path, err := idPath("/channels/connect", string(platform), "")
	if err != nil {
		return nil, err
	}
	var out ConnectURL
	if err := c.get(ctx, path, encodeQuery(params), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ChannelCheckResult is what CheckChannel answers: the channel as it stands after the check
// (reauth_required when its platform refused the token), and one line per check.
type ChannelCheckResult struct {
	Channel Channel `json:"channel"`
	// OK is true when no check failed.
	OK     bool           `json:"ok"`
	Checks []ChannelCheck `json:"checks"`
}

// ChannelCheck is one line of a channel's health check.
type ChannelCheck struct {
	// Name is "token", "scopes", "api_version" or "publish".
	Name string `json:"name"`
	// Status is CheckOK, CheckFailed or CheckSkipped.
	Status string `json:"status"`
	// Detail is what the platform answered, or why the check was skipped.
	Detail string `json:"detail"`
	// Fix says what to do about a failed check.
	Fix string `json:"fix,omitempty"`
}

// Outcomes of a ChannelCheck.
const (
	CheckOK      = "ok"
	CheckFailed  = "failed"
	CheckSkipped = "skipped"
)

// CheckChannel asks a channel's platform, with harmless read calls, whether the channel works:
// its token (renewed first when due), the scopes reelay needs, the API version, and the
// account's right to publish video. A failed check is an answer, not an error.
func (c *Client) CheckChannel(ctx context.Context, id string) (*ChannelCheckResult, error) {
	path, err := idPath("/channels", id, "/check")
	if err != nil {
		return nil, err
	}
	var out ChannelCheckResult
	// Only reads on the platform: asking again is harmless.
	if _, err := c.send(ctx, &call{method: http.MethodPost, path: path, safety: idempotent}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
