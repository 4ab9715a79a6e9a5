package httpapi

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

// channelSubresource serves GET /channels/{a}/{b}: /channels/connect/{platform} and
// /channels/{id}/options share the shape, and ServeMux refuses two patterns that both match
// /channels/connect/options, so one handler tells them apart.
func (s *Server) channelSubresource(w http.ResponseWriter, r *http.Request) error {
	a, b := r.PathValue("a"), r.PathValue("b")
	switch {
	case a == "connect":
		return s.connectChannel(w, r, b)
	case b == "options":
		r.SetPathValue("id", a)
		return s.channelOptions(w, r)
	}
	return apierr.Newf(http.StatusNotFound, apierr.CodeNotFound, "no endpoint at %s", r.URL.Path)
}

// connectChannel answers the consent URL of a platform for a channel in the caller's project.
func (s *Server) connectChannel(w http.ResponseWriter, r *http.Request, name string) error {
	q := r.URL.Query()
	var f apierr.Fields
	projectID := q.Get("project_id")
	if projectID == "" {
		projectID = q.Get("projectId")
	}
	if projectID != "" && !store.ValidID(projectID) {
		f.Add("project_id", "must be a UUID")
	}
	sandbox := false
	switch q.Get("sandbox") {
	case "", "false":
	case "true":
		sandbox = true
	default:
		f.Add("sandbox", "must be true or false")
	}
	s.channels.CheckConsent(&f, name, sandbox)
	if err := f.Err(); err != nil {
		return err
	}
	project, err := s.projectOrOnly(r, projectID, "project_id")
	if err != nil {
		return err
	}
	link, err := s.channels.BeginConsent(r.Context(), project, name, sandbox, "")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "url": link, "platform": name,
		"expires_at": time.Now().Add(connect.StateTTL).UTC().Format(time.RFC3339)})
	return nil
}

var connectedPage = template.Must(template.New("connected").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>reelay: {{.Title}}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}.err{color:#a11}</style></head>
<body><h1{{if .Failed}} class="err"{{end}}>{{.Title}}</h1>
{{range .Channels}}<p>{{.Platform}} account <strong>{{.Name}}</strong>{{if .Username}} ({{.Username}}){{end}} is connected as channel <code>{{.ID}}</code>.</p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
<p>You can close this window.</p></body></html>
`))

type connectedChannel struct{ Platform, Name, Username, ID string }

// oauthStart is the page a consent link leads to, opened in the browser that is to connect an
// account: it binds the consent to that browser with a cookie the callback later asks for, and
// sends the browser on to the platform's consent page (303). A link that is forged, spent,
// expired or already opened in another browser answers a page saying so, and sets nothing.
func (s *Server) oauthStart(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("platform")
	if !connect.OAuthPlatform(name) || s.connector == nil {
		return apierr.Newf(http.StatusNotFound, apierr.CodeNotFound, "no endpoint at %s", r.URL.Path)
	}
	if r.Method == http.MethodHead {
		// Link checkers ask with HEAD: the consent is for the browser that GETs the page.
		w.Header().Set("Allow", http.MethodGet)
		return apierr.Newf(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "open this link in a browser")
	}
	state := r.URL.Query().Get("state")
	consentURL, cookie, err := s.connector.Start(r.Context(), name, state, browserSecret(r, state))
	if refusal, ok := connect.ErrRefusal(err); ok {
		s.log.Info("channel connection start refused", "platform", name, "reason", refusal.Message)
		return s.connectResult(w, r, "", refusal.HTTPStatus(), name, nil, refusal.Message)
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return s.connectResult(w, r, "", ae.Status, name, nil, ae.Message)
	}
	if err != nil {
		return err
	}
	http.SetCookie(w, cookie)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, consentURL, http.StatusSeeOther)
	return nil
}

// browserSecret is the value of the browser's cookie for the consent of state, "" when it sent
// none.
func browserSecret(r *http.Request, state string) string {
	name := connect.BrowserCookie(state)
	if name == "" {
		return ""
	}
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// oauthCallback finishes a consent: the platform sends the browser here with a code and the
// state. It answers a small page (or sends the browser to REELAY_CONNECT_RETURN_URL) saying
// what was connected, or why nothing was. Only the browser that opened the consent's start
// page can finish it: any other is answered 403 and the consent stays for the right one.
func (s *Server) oauthCallback(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("platform")
	if !connect.OAuthPlatform(name) || s.connector == nil {
		return apierr.Newf(http.StatusNotFound, apierr.CodeNotFound, "no endpoint at %s", r.URL.Path)
	}
	q := r.URL.Query()
	state := q.Get("state")
	presented := browserSecret(r, state)
	done, err := s.connector.CompleteReturning(r.Context(), name, connect.Callback{
		Code: q.Get("code"), State: state, Error: q.Get("error"), ErrorDescription: q.Get("error_description"), Browser: presented})
	if done.Spent && presented != "" {
		http.SetCookie(w, connect.ClearBrowserCookie(name, state))
	}
	returnTo := done.ReturnTo
	if returnTo == "" {
		returnTo = s.connectReturnURL
	}
	if refusal, ok := connect.ErrRefusal(err); ok {
		s.log.Info("channel connection refused", "platform", name, "reason", refusal.Message)
		if refusal.HTTPStatus() == http.StatusForbidden {
			// Not the starter's browser: the starter's return URL is nothing to it, and the
			// status must reach it as it is.
			returnTo = ""
		}
		return s.connectResult(w, r, returnTo, refusal.HTTPStatus(), name, nil, refusal.Message)
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return s.connectResult(w, r, returnTo, ae.Status, name, nil, ae.Message)
	}
	if err != nil {
		s.log.Warn("channel connection failed", "platform", name, "error", err)
		return s.connectResult(w, r, returnTo, http.StatusBadGateway, name, nil,
			registry.DisplayName(name)+" could not be reached to finish the connection; try again in a moment.")
	}
	return s.connectResult(w, r, returnTo, http.StatusOK, name, done.Channels, "")
}

// connectResult tells the browser how a consent ended: by sending it to returnURL (a consent
// the web dashboard started, or REELAY_CONNECT_RETURN_URL) with the outcome in the query, or
// with a page of its own.
func (s *Server) connectResult(w http.ResponseWriter, r *http.Request, returnURL string, status int, name string, channels []store.Channel, message string) error {
	if returnURL != "" {
		u, err := url.Parse(returnURL)
		if err == nil {
			v := u.Query()
			v.Set("platform", name)
			if status == http.StatusOK {
				v.Set("status", "connected")
				for _, c := range channels {
					v.Add("channel_id", c.ID)
				}
			} else {
				v.Set("status", "error")
				v.Set("message", message)
			}
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.String(), http.StatusFound)
			return nil
		}
	}
	data := struct {
		Title    string
		Failed   bool
		Channels []connectedChannel
		Message  string
	}{Title: registry.DisplayName(name) + " connected", Message: message}
	if status != http.StatusOK {
		data.Title, data.Failed = "Could not connect "+registry.DisplayName(name), true
	}
	for _, c := range channels {
		data.Channels = append(data.Channels, connectedChannel{registry.DisplayName(c.Platform), c.Name, c.Username, c.ID})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	return connectedPage.Execute(w, data)
}
