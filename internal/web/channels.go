package web

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/store"
)

type channelsData struct {
	Channels []store.Channel
	// Platforms are every platform; OAuthPlatforms those that connect by consent.
	Platforms      []string
	OAuthPlatforms []string
	Failures       []string
	Sandbox        bool
	CanConnect     bool
	// Form is what the sandbox form was sent with, shown again with Errors beside its fields.
	Form   sandboxForm
	Errors map[string]string
	Notice string
	Error  string
}

type sandboxForm struct {
	Platform, Name, Fail, ProcessingMS, FailRate string
}

// channelsPage lists the current project's channels with their state, and the forms that
// connect more.
func (h *Handler) channelsPage(w http.ResponseWriter, r *http.Request, s *session) error {
	q := r.URL.Query()
	d := channelsData{Form: sandboxForm{Platform: platform.TikTok, Fail: "none"}}
	switch {
	case q.Get("status") == "connected":
		d.Notice = platform.DisplayName(q.Get("platform")) + " channel connected."
	case q.Get("status") == "error":
		d.Error = "Could not connect " + platform.DisplayName(q.Get("platform")) + ": " + q.Get("message")
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
		if d.Channels, err = h.o.Store.ListChannels(r.Context(), s.AccountID, p.Project.ID); err != nil {
			return err
		}
	}
	d.Platforms, d.Failures, d.Sandbox, d.CanConnect = platform.All, connect.SandboxFailures, h.o.Sandbox, h.o.Connector != nil
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
		FailRate: strings.TrimSpace(r.PostFormValue("fail_rate"))}
	var f apierr.Fields
	if !h.o.Sandbox {
		f.Add("sandbox", "sandbox channels are disabled on this server (REELAY_SANDBOX=false)")
	}
	if !platform.Valid(form.Platform) {
		f.Add("platform", "choose a platform")
	}
	if utf8.RuneCountInString(form.Name) > 100 {
		f.Add("name", "must be at most 100 characters")
	}
	b := connect.SandboxBehavior{Fail: form.Fail}
	if form.ProcessingMS != "" {
		n, err := strconv.Atoi(form.ProcessingMS)
		if err != nil {
			f.Add("sandbox_behavior.processing_ms", "must be a whole number of milliseconds")
		}
		b.ProcessingMS = &n
	}
	if form.FailRate != "" {
		x, err := strconv.ParseFloat(form.FailRate, 64)
		if err != nil {
			f.Add("sandbox_behavior.fail_rate", "must be a number from 0 to 1")
		}
		b.FailRate = &x
	}
	b.Check(&f)
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	if p.Project.ID == "" {
		f.Add("project_id", "this account has no project")
	}
	if len(f) > 0 {
		return h.renderChannels(w, r, s, http.StatusBadRequest, channelsData{Form: form, Errors: f,
			Error: "The channel was not connected: see the messages beside the fields."})
	}
	if _, _, err := h.o.Store.SaveChannel(r.Context(), connect.SandboxChannel(p.Project, form.Platform, form.Name, b)); err != nil {
		return err
	}
	http.Redirect(w, r, "/channels?done=connected", http.StatusSeeOther)
	return nil
}

// connectOAuth starts a platform's OAuth consent for the current project (the same flow as
// GET /api/v1/channels/connect/{platform}): the browser goes to the consent page, and the
// platform sends it back to the API's callback, which stores the channel and returns here.
// Reconnecting a channel is the same consent: the account connected again replaces its tokens.
func (h *Handler) connectOAuth(w http.ResponseWriter, r *http.Request, s *session) error {
	name := r.PostFormValue("platform")
	if !connect.OAuthPlatform(name) {
		return apierr.Field("platform", "does not connect by OAuth; choose another platform")
	}
	sandbox := r.PostFormValue("sandbox") == "true"
	if sandbox && !h.o.Sandbox {
		return apierr.Field("sandbox", "sandbox channels are disabled on this server")
	}
	if h.o.Connector == nil {
		return apierr.New(http.StatusServiceUnavailable, apierr.CodeUnavailable, "connecting channels is not available on this server")
	}
	p, err := h.pageFor(r, s, "", "", nil)
	if err != nil {
		return err
	}
	if p.Project.ID == "" {
		return apierr.Field("project_id", "this account has no project")
	}
	link, err := h.o.Connector.BeginReturning(r.Context(), s.AccountID, p.Project.ID, name, sandbox, "/channels")
	if err != nil {
		return err
	}
	if u, err := url.Parse(link); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("web: consent link is not an http(s) URL")
	}
	http.Redirect(w, r, link, http.StatusSeeOther)
	return nil
}

// deleteChannel removes one of the account's channels.
func (h *Handler) deleteChannel(w http.ResponseWriter, r *http.Request, s *session) error {
	err := h.o.Store.DeleteChannel(r.Context(), s.AccountID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound("channel")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/channels?done=deleted", http.StatusSeeOther)
	return nil
}
