package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/store"
)

//go:embed templates
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// page is what every template gets: the layout's parts (navigation, project switcher, the
// session's CSRF token) and the page's own Data.
type page struct {
	Title string
	// Nav names the navigation entry of this page.
	Nav     string
	Session *session
	// Projects are the account's; Project is the one the dashboard shows.
	Projects  []store.Project
	Project   store.Project
	Path      string
	RequestID string
	Data      any
}

// CSRF is the session's CSRF token ("" before sign-in).
func (p page) CSRF() string {
	if p.Session == nil {
		return ""
	}
	return p.Session.CSRF()
}

// pageFor is the page of a signed-in request: the account's projects and the current one (the
// session's choice, else the first).
func (h *Handler) pageFor(r *http.Request, s *session, title, nav string, data any) (page, error) {
	projects, err := h.o.Store.ListProjects(r.Context(), s.AccountID)
	if err != nil {
		return page{}, err
	}
	p := page{Title: title, Nav: nav, Session: s, Projects: projects, Path: r.URL.RequestURI(), Data: data}
	for _, pr := range projects {
		if pr.ID == s.ProjectID {
			p.Project = pr
		}
	}
	if p.Project.ID == "" && len(projects) > 0 {
		p.Project = projects[0]
	}
	return p, nil
}

// staticFiles are the embedded assets with a content hash each, so that their URLs change with
// their content and can be cached for good.
var staticFiles = func() map[string]staticFile {
	out := map[string]staticFile{}
	entries, _ := fs.ReadDir(staticFS, "static")
	for _, e := range entries {
		b, _ := staticFS.ReadFile("static/" + e.Name())
		sum := sha256.Sum256(b)
		out[e.Name()] = staticFile{body: b, version: hex.EncodeToString(sum[:6])}
	}
	return out
}()

type staticFile struct {
	body    []byte
	version string
}

var startTime = time.Now()

func staticHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := staticFiles[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if ct := mime.TypeByExtension(path.Ext(r.PathValue("file"))); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		if r.URL.Query().Get("v") == f.version {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		http.ServeContent(w, r, r.PathValue("file"), startTime, bytes.NewReader(f.body))
	})
}

var funcs = template.FuncMap{
	"static": func(name string) string {
		f, ok := staticFiles[name]
		if !ok {
			panic("web: no static file " + name)
		}
		return "/static/" + name + "?v=" + f.version
	},
	"platformName": registry.DisplayName,
	// isoTime and shortTime write times in UTC; the page's script shows them in the reader's
	// own timezone.
	"isoTime": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"shortTime": func(t time.Time) string {
		return t.UTC().Format("2 Jan 2006 15:04 UTC")
	},
	"deref": func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	},
	"label": statusLabel,
	// seconds writes a video's length, e.g. "10.0 s".
	"seconds": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + " s" },
	"join":    strings.Join,
}

// statusLabel is a status as people read it.
func statusLabel(s string) string {
	return strings.ReplaceAll(strings.ToUpper(s[:min(1, len(s))])+s[min(1, len(s)):], "_", " ")
}

// templates are parsed once: the layout with each page.
var templates = func() map[string]*template.Template {
	out := map[string]*template.Template{}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return out
}()

// render writes the named page inside the layout.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	h.renderTemplate(w, r, status, name, "layout", p)
}

// renderTemplate writes one template of a page's set (a fragment, or the layout). It renders
// into memory first, so that a template error becomes an error page rather than half a page.
func (h *Handler) renderTemplate(w http.ResponseWriter, r *http.Request, status int, name, tmpl string, data any) {
	if p, ok := data.(page); ok {
		p.RequestID = httpapi.RequestID(r.Context())
		data = p
	}
	var buf bytes.Buffer
	if err := templates[name].ExecuteTemplate(&buf, tmpl, data); err != nil {
		logger(r).Error("template failed", "template", name, "error", err)
		if name != "error" {
			h.renderError(w, r, nil, http.StatusInternalServerError, "")
		}
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

type errorData struct {
	Status  int
	Heading string
	Message string
}

// renderError writes the error page: what went wrong in words, and the request id to quote.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, s *session, status int, message string) {
	heading := http.StatusText(status)
	if status >= 500 {
		heading = "Something went wrong"
		if message == "" {
			message = "The server could not complete this request. It has been logged; if it keeps happening, give the request id below to whoever runs this server."
		}
	}
	h.renderTemplate(w, r, status, "error", "layout", page{Title: heading, Session: s,
		Data: errorData{Status: status, Heading: heading, Message: message}})
}

// wantsJSON says the request comes from the dashboard's scripts, which read errors as JSON.
func wantsJSON(r *http.Request) bool {
	return r.Header.Get(csrfHeader) != "" || strings.Contains(r.Header.Get("Accept"), "application/json")
}

// fail answers err: as JSON to scripts, as the error page to browsers. Causes of server errors
// are logged, never shown.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	ae := httpapi.ClientError(err)
	if ae.Status >= 500 {
		logger(r).Error("request failed", "error", err, "code", ae.Code)
	}
	if wantsJSON(r) {
		writeJSONError(w, r, ae)
		return
	}
	message := ae.Message
	if ae.Status == http.StatusNotFound {
		message = "There is nothing here, or it is not yours to see."
	}
	if ae.Status >= 500 {
		message = ""
	}
	for f, m := range ae.Fields {
		message += " " + f + ": " + m + "."
	}
	h.renderError(w, r, nil, ae.Status, message)
}

// writeJSONError writes the API's error body.
func writeJSONError(w http.ResponseWriter, r *http.Request, ae *apierr.Error) {
	writeJSON(w, ae.Status, map[string]any{"success": false,
		"error":      map[string]any{"code": ae.Code, "message": ae.Message, "fields": ae.Fields},
		"request_id": httpapi.RequestID(r.Context())})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
