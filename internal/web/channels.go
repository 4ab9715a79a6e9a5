package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/store"
)

type channelsData struct {
	Channels []store.Channel
	// Platforms are every platform; OAuthPlatforms those that connect by consent.
	Platforms      []string
	OAuthPlatforms []string
	Failures       []string
	AppAccess      []appAccessChoice
	Sandbox        bool
	CanConnect     bool
	// Form is what the sandbox form was sent with, shown again with Errors beside its fields.
	Form   sandboxForm
	Errors map[string]string
	Notice string
	Error  string
	// The credentials form: each platform's fields, the platform and name sent, and the
	// messages of a refused attempt.
	CredForms    []credentialPlatform
	CredPlatform string
	CredName     string
	CredErrors   map[string]string
	// Check is the result of the check a Check button asked for (nil when none).
	Check *channelCheck
}

// channelCheck is one channel's health check, as the channels page shows it.
type channelCheck struct {
	Channel store.Channel
	Lines   []provider.Check
	Failed  bool
}

type sandboxForm struct {
	Platform, Name, Fail, ProcessingMS, FailRate, AppAccess string
}

// appAccessChoice is an access level of reelay's app the sandbox form offers, with the
// platform it is one of.
type appAccessChoice struct{ Level, Platform string }

// appAccessChoices are the levels of connect.SandboxAppAccess, platform by platform.
func appAccessChoices() []appAccessChoice {
	var out []appAccessChoice
	for _, p := range platform.All {
		for _, level := range connect.SandboxAppAccess[p] {
			out = append(out, appAccessChoice{Level: level, Platform: registry.DisplayName(p)})
		}
	}
	return out
}

// channelsPage lists the current project's channels with their state, and the forms that
// connect more.
func (h *Handler) channelsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	d := channelsData{Form: sandboxForm{Platform: platform.TikTok, Fail: "none"}}
	switch {
	case q.Get("status") == "connected":
		d.Notice = registry.DisplayName(q.Get("platform")) + " channel connected."
	case q.Get("status") == "error":
		d.Error = "Could not connect " + registry.DisplayName(q.Get("platform")) + ": " + q.Get("message")
	default:
		d.Notice = notices[q.Get("done")]
	}
	return h.renderChannels(w, r, s, http.StatusOK, d)
}

func (h *Handler) renderChannels(w http.ResponseWriter, r *http.Request, s *session, status int, d channelsData) error {
	p, err := h.pageFor(r, s, "Channels", "channels", nil)
	if err != nil {
		return err
	}
	if p.Project.ID != "" {
		if d.Channels, err = h.channels.List(r.Context(), s.AccountID, p.Project.ID); err != nil {
			return err
		}
	}
	d.Platforms, d.Failures, d.Sandbox, d.CanConnect = platform.All, connect.SandboxFailures, h.o.Sandbox, h.o.Connector != nil
	d.AppAccess = appAccessChoices()
	if d.CredForms == nil {
		d.CredPlatform = platform.Bluesky
		d.CredForms = credentialForms("", nil, nil)
	}
	for _, name := range platform.All {
		if connect.OAuthPlatform(name) {
			d.OAuthPlatforms = append(d.OAuthPlatforms, name)
		}
	}
	p.Data = d
	h.render(w, r, status, "channels", p)
	return nil
}

// connectSandbox connects a channel on a platform's built-in simulator, with the behaviour
// chosen (what the simulated platform does with what it receives).
func (h *Handler) connectSandbox(w http.ResponseWriter, r *http.Request, s *session) error {
	form := sandboxForm{Platform: r.PostFormValue("platform"), Name: strings.TrimSpace(r.PostFormValue("name")),
		Fail: r.PostFormValue("fail"), ProcessingMS: strings.TrimSpace(r.PostFormValue("processing_ms")),
		FailRate: strings.TrimSpace(r.PostFormValue("fail_rate")), AppAccess: r.PostFormValue("app_access")}
	// What the form itself gets wrong (numbers that do not read as numbers); the service checks
	// the rest, as it does the API's requests.
	var f apierr.Fields
	b := connect.SandboxBehavior{Fail: form.Fail, AppAccess: form.AppAccess}
	if form.ProcessingMS != "" {
		if n, err := strconv.Atoi(form.ProcessingMS); err != nil {
			f.Add("sandbox_behavior.processing_ms", "must be a whole number of milliseconds")
		} else {
			b.ProcessingMS = &n
		}
	}
	if form.FailRate != "" {
		if x, err := strconv.ParseFloat(form.FailRate, 64); err != nil {
			f.Add("sandbox_behavior.fail_rate", "must be a number from 0 to 1")
		} else {
			b.FailRate = &x
		}
	}
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	noProject(&f, p.Project)
	req := connect.NewChannel{ProjectID: p.Project.ID, Platform: form.Platform, Name: form.Name, Sandbox: true, SandboxBehavior: &b}
	refuse := func(status int, fields map[string]string, message string) error {
		return h.renderChannels(w, r, s, status, channelsData{Form: form, Errors: fields, Error: message})
	}
	if len(f) > 0 {
		h.channels.Check(&f, req)
		return refuse(http.StatusBadRequest, f, notConnectedFields)
	}
	_, _, err = h.channels.Connect(r.Context(), s.AccountID, req)
	if ae := refusal(err); ae != nil {
		if len(ae.Fields) > 0 {
			return refuse(ae.Status, ae.Fields, notConnectedFields)
		}
		return refuse(ae.Status, nil, pageSentence(ae))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/channels?done=connected", http.StatusSeeOther)
	return nil
}

// noProject says so when the session has no project to connect a channel to: the dashboard's
// own state, which the API's request names instead (project_id).
func noProject(f *apierr.Fields, p store.Project) {
	if p.ID == "" {
		f.Add("project_id", "this account has no project")
	}
}

// notConnectedFields heads a connect form refused for its fields.
const notConnectedFields = "The channel was not connected: see the messages beside the fields."

// connectOAuth starts a platform's OAuth consent for the current project (the same flow as
// GET /api/v1/channels/connect/{platform}): the browser goes to reelay's start page, which
// binds the consent to it and sends it on to the platform's consent page, and the platform
// sends it back to the API's callback, which stores the channel and returns here.
// Reconnecting a channel is the same consent: the account connected again replaces its tokens.
func (h *Handler) connectOAuth(w http.ResponseWriter, r *http.Request, s *session) error {
	name, sandbox := r.PostFormValue("platform"), r.PostFormValue("sandbox") == "true"
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	var f apierr.Fields
	if noProject(&f, p.Project); len(f) > 0 {
		return f.Err()
	}
	link, err := h.channels.BeginConsent(r.Context(), p.Project, name, sandbox, "/channels")
	if err != nil {
		return err
	}
	if u, err := url.Parse(link); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("web: consent link is not an http(s) URL")
	}
	http.Redirect(w, r, link, http.StatusSeeOther)
	return nil
}

// checkChannel asks one of the account's channels' platform whether the channel works (the
// same check as POST /api/v1/channels/{id}/check) and shows its lines on the channels page.
func (h *Handler) checkChannel(w http.ResponseWriter, r *http.Request, s *session) error {
	if h.o.Connector == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "checking channels is not available on this process")
	}
	ch, lines, err := h.o.Connector.CheckChannel(r.Context(), s.AccountID, r.PathValue("id"))
	if err != nil {
		return err
	}
	c := &channelCheck{Channel: ch, Lines: lines}
	for _, l := range lines {
		c.Failed = c.Failed || l.Status == provider.CheckFailed
	}
	return h.renderChannels(w, r, s, http.StatusOK, channelsData{Form: sandboxForm{Platform: platform.TikTok, Fail: "none"}, Check: c})
}

// deleteChannel removes one of the account's channels.
func (h *Handler) deleteChannel(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.channels.Disconnect(r.Context(), s.AccountID, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/channels?done=deleted", http.StatusSeeOther)
	return nil
}

// credentialPlatform is a platform's part of the credentials form: the fields of its
// POST /channels credentials.
type credentialPlatform struct {
	Platform, Name string
	Fields         []credentialField
}

type credentialField struct {
	Key, Label string
	Required   bool
	// Secret fields are password inputs, never filled in again.
	Secret bool
	Value  string
	Error  string
}

func isSecretField(key string) bool {
	return strings.Contains(key, "token") || strings.Contains(key, "password") || strings.Contains(key, "secret") ||
		key == "webhook_url" // a Discord webhook URL carries its token
}

// credentialForms lays out each platform's credential fields; form holds what was sent (the
// secrets are not shown again) and errs the messages, keyed as the API names them.
func credentialForms(chosen string, form map[string]string, errs map[string]string) []credentialPlatform {
	var out []credentialPlatform
	for _, name := range platform.All {
		caps, _ := registry.CapabilitiesOf(name)
		cp := credentialPlatform{Platform: name, Name: registry.DisplayName(name)}
		required := registry.RequiredCredentials(name)
		for _, k := range caps.CredentialFields {
			f := credentialField{Key: k, Label: labelOf(k), Required: slices.Contains(required, k), Secret: isSecretField(k)}
			if name == chosen {
				if !f.Secret {
					f.Value = form[k]
				}
				f.Error = errs["credentials."+k]
			}
			cp.Fields = append(cp.Fields, f)
		}
		out = append(out, cp)
	}
	return out
}

// connectWithCredentials connects a channel with credentials the user pastes (a Bluesky app
// password, a Telegram bot, a Discord webhook, a Mastodon token, or an OAuth platform's token
// pair), checked and verified with the platform as POST /api/v1/channels does.
func (h *Handler) connectWithCredentials(w http.ResponseWriter, r *http.Request, s *session) error {
	name := r.PostFormValue("platform")
	label := strings.TrimSpace(r.PostFormValue("name"))
	creds := map[string]string{}
	if platform.Valid(name) {
		caps, _ := registry.CapabilitiesOf(name)
		for _, k := range caps.CredentialFields {
			if v := strings.TrimSpace(r.PostFormValue("cred." + name + "." + k)); v != "" {
				creds[k] = v
			}
		}
	}
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	req := connect.NewChannel{ProjectID: p.Project.ID, Platform: name, Name: label, Credentials: creds}
	refuse := func(status int, fields map[string]string, message string) error {
		return h.renderChannels(w, r, s, status, channelsData{Form: sandboxForm{Platform: platform.TikTok, Fail: "none"},
			CredPlatform: name, CredName: label, CredForms: credentialForms(name, creds, fields), CredErrors: fields,
			Error: message})
	}
	// The shape first, then the platform (Connect checks the shape again, at no cost): a refusal
	// of the fields sends the user to them, the platform's refusal is told as the platform said it.
	var f apierr.Fields
	noProject(&f, p.Project)
	if h.channels.Check(&f, req); len(f) > 0 {
		return refuse(http.StatusBadRequest, f, "The channel was not connected: see the messages beside the fields (secrets are not shown again: enter them once more).")
	}
	_, _, err = h.channels.Connect(r.Context(), s.AccountID, req)
	ae := refusal(err)
	switch {
	case ae != nil && ae.Code == apierr.CodeLimitReached:
		return refuse(ae.Status, nil, pageSentence(ae))
	case ae != nil:
		fields := ae.Fields
		if len(fields) == 0 {
			fields = map[string]string{"credentials": ae.Message}
		}
		return refuse(http.StatusBadRequest, fields, "The channel was not connected: "+ae.Message)
	case err != nil:
		return err
	}
	http.Redirect(w, r, "/channels?done=connected", http.StatusSeeOther)
	return nil
}
