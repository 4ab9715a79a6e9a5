// Package web is reelay's web dashboard: server-rendered pages (html/template) with a little
// plain JavaScript, all embedded in the binary, served by `reelay serve` at / beside the API.
// A user signs in with an API key into a server-side session (cookie); every form carries a
// CSRF token. Handlers call the same services as the HTTP API (and the store only for reads
// the API has no service for), scoped by the session's account, so validation, its words and
// tenant isolation are the API's own.
//
// Layout: one file per page (signin.go and oidc.go, posts.go, calendar.go, publish.go,
// analytics.go with charts.go, inbox.go, ai.go, channels.go, webhooks.go, keys.go), the session and
// CSRF machinery in session.go, rendering in render.go; templates/ holds one template per page
// plus the shared layout, static/ the stylesheet and scripts. A new page is a handler
// registered in routes with h.handle (which brings the session and the CSRF checks), a
// template that defines "content" (and "head" for a script of its own), and an entry in the
// layout's navigation.
package web

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/inbox"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/webhooks"
)

// Options are what the dashboard needs from the process that serves it.
type Options struct {
	Store     *store.Store
	Publisher *publish.Service
	// Queue inserts the jobs of retries and edits.
	Queue publish.Enqueuer
	// Connector starts OAuth consents and verifies pasted credentials; nil hides the OAuth
	// connect buttons. Access seals the credentials of channels connected here.
	Connector *connect.Connector
	Access    publish.ChannelAccess
	// Sandbox offers channels on the built-in simulators.
	Sandbox bool
	// PublicURL is how users reach this server: an https URL makes the session cookie Secure,
	// and its origin is accepted by the CSRF origin check (behind a proxy the request's own
	// Host may differ).
	PublicURL string
	// SessionIdle is how long a session lasts unused (sliding); SessionMax its absolute limit.
	SessionIdle, SessionMax time.Duration
	// Now is the clock (time.Now when nil); tests move it to expire sessions.
	Now func() time.Time
	// AI writes copy and storyboards; nil answers the AI page with 503.
	AI AIEngine
	// AIVideo generates clips; nil leaves the video form out.
	AIVideo *aivideo.Service
	// Analytics reads figures from the platforms when asked; nil hides the button.
	Analytics *analytics.Syncer
	// Inbox reads comments from the platforms and posts replies; nil hides replying.
	Inbox *inbox.Service
	// Box seals webhook signing secrets; WebhookPolicy is where webhook URLs may point.
	Box           *secret.Box
	WebhookPolicy media.AddressPolicy
	// OIDC verifies the ID tokens of browser sign-ins at the issuer (its audience is
	// OIDCClientID); with OIDCClientID set (and Box), the sign-in page offers the issuer, named
	// OIDCName. OIDCAutoCreate makes an account for a subject seen for the first time;
	// OIDCHTTPClient calls the token endpoint (a client with a timeout when nil).
	OIDC             *auth.OIDCVerifier
	OIDCClientID     string
	OIDCClientSecret string
	OIDCName         string
	OIDCAutoCreate   bool
	OIDCHTTPClient   *http.Client
	// FormTargets are further origins forms may lead to (by redirect): the OIDC issuer.
	FormTargets []string
	// Limits bound sign-in per client address and signed-in pages per account, as the API's
	// requests are bounded (nil: no limits).
	Limits *httpapi.Limits
	// Logger receives the dashboard's own events (sign-ins); requests are logged by the API's
	// middleware around it.
	Logger *slog.Logger
}

// Default session lifetimes.
const (
	DefaultSessionIdle = 12 * time.Hour
	DefaultSessionMax  = 7 * 24 * time.Hour
)

// Handler serves the dashboard.
type Handler struct {
	o   Options
	mux *http.ServeMux
	// The services this dashboard shares with the API, built on Options.
	keys     auth.Keys
	webhooks webhooks.Service
	channels connect.Channels
	posts    publish.Posts
	comments inbox.Comments
	figures  analytics.Figures
	// csp is the Content-Security-Policy of every answer.
	csp string
}

// New builds the dashboard.
func New(o Options) *Handler {
	if o.SessionIdle <= 0 {
		o.SessionIdle = DefaultSessionIdle
	}
	if o.SessionMax <= 0 {
		o.SessionMax = DefaultSessionMax
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	// Forms may lead to this server, to https sites (platforms' consent pages, identity
	// providers) and to the origins named: the public URL and the OIDC issuer, which may be
	// plain http on a developer's machine. Chromium applies form-action to redirects too.
	// Media (an AI clip's signed link) come from the public URL too.
	formAction, mediaSrc := "'self' https:", "'self' https:"
	if u, err := url.Parse(o.PublicURL); err == nil && u.Scheme == "http" && u.Host != "" {
		mediaSrc += " http://" + u.Host
	}
	for _, raw := range append([]string{o.PublicURL}, o.FormTargets...) {
		if u, err := url.Parse(raw); err == nil && u.Scheme == "http" && u.Host != "" {
			formAction += " http://" + u.Host
		}
	}
	h := &Handler{o: o, mux: http.NewServeMux(), keys: auth.Keys{Store: o.Store},
		webhooks: webhooks.Service{Store: o.Store, Box: o.Box, Policy: o.WebhookPolicy},
		channels: connect.Channels{Store: o.Store, Connector: o.Connector, Access: o.Access, Sandbox: o.Sandbox},
		posts:    publish.Posts{Store: o.Store},
		comments: inbox.Comments{Store: o.Store},
		figures:  analytics.Figures{Store: o.Store},
		csp: "default-src 'self'; img-src 'self' data: https:; media-src " + mediaSrc + "; style-src 'self'; script-src 'self'; " +
			"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action " + formAction}
	h.routes()
	return h
}

// ServeHTTP makes Handler an http.Handler. Every answer forbids framing (clickjacking) and
// sniffing, and keeps the Referer to this origin.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Content-Security-Policy", h.csp)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			// The page may be half written; the error page goes after it, which browsers show.
			logger(r).Error("panic in a dashboard handler", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			h.renderError(w, r, nil, http.StatusInternalServerError, "")
		}
	}()
	// A key in a page's URL is refused as the API refuses it, and so is a query that is not
	// UTF-8.
	if err := httpapi.CheckQuery(r); err != nil {
		h.fail(w, r, err)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) routes() {
	h.mux.Handle("GET /static/{file}", staticHandler())
	h.mux.HandleFunc("GET /signin", h.signinPage)
	h.mux.HandleFunc("POST /signin", h.limitAddress(h.signin))
	h.mux.HandleFunc("POST /signin/oidc", h.limitAddress(h.oidcStart))
	h.mux.HandleFunc("GET "+oidcCallback, h.limitAddress(h.oidcReturn))
	h.handle("POST /signout", h.signout)
	h.handle("POST /project", h.switchProject)

	h.handle("GET /{$}", func(w http.ResponseWriter, r *http.Request, s *session) error {
		http.Redirect(w, r, "/posts", http.StatusSeeOther)
		return nil
	})
	h.handle("GET /posts", h.postsPage)
	h.handle("GET /posts/{id}", h.postPage)
	h.handle("GET /posts/{id}/events", h.postEvents)
	h.handle("POST /posts/{id}/retry", h.retryPost)
	h.handle("POST /posts/{id}/cancel", h.cancelPost)
	h.handle("POST /posts/{id}/reschedule", h.reschedulePost)
	h.handle("GET /calendar", h.calendarPage)

	h.handle("GET /publish", h.publishPage)
	h.handle("POST /publish", h.publish)

	h.handle("GET /channels", h.channelsPage)
	h.handle("POST /channels/sandbox", h.connectSandbox)
	h.handle("POST /channels/connect", h.connectOAuth)
	h.handle("POST /channels/credentials", h.connectWithCredentials)
	h.handle("POST /channels/{id}/delete", h.deleteChannel)
	h.handle("POST /channels/{id}/check", h.checkChannel)

	h.handle("GET /analytics", h.analyticsPage)
	h.handle("POST /analytics/sync", h.syncAnalytics)

	h.handle("GET /ai", h.aiPage)
	h.handle("POST /ai/adapt", h.aiAdapt)
	h.handle("POST /ai/storyboard", h.aiStoryboard)
	h.handle("POST /ai/video", h.aiVideo)
	h.handle("POST /ai/render", h.aiRender)
	h.handle("GET /ai/jobs/{id}", h.aiJobPage)

	h.handle("GET /inbox", h.inboxPage)
	h.handle("POST /inbox/refresh", h.refreshInbox)
	h.handle("POST /inbox/{id}/reply", h.replyToComment)

	h.handle("GET /webhooks", h.webhooksPage)
	h.handle("POST /webhooks", h.createWebhook)
	h.handle("GET /webhooks/{id}", h.webhookPage)
	h.handle("POST /webhooks/{id}/delete", h.deleteWebhook)
	h.handle("POST /webhooks/{id}/enable", h.enableWebhook)

	h.handle("GET /keys", h.keysPage)
	h.handle("POST /keys", h.createKey)
	h.handle("POST /keys/{id}/revoke", h.revokeKey)

	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, r, nil, http.StatusNotFound, "There is no page at this address.")
	})
}

// limitAddress puts a page that anyone may ask for (signing in) behind the rate limit of the
// client's address.
func (h *Handler) limitAddress(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.o.Limits != nil && !h.o.Limits.AllowAddress(w, r) {
			h.fail(w, r, httpapi.ErrRateLimited())
			return
		}
		fn(w, r)
	}
}

// pageFunc is a handler of a signed-in page; it returns its error instead of writing it.
type pageFunc func(w http.ResponseWriter, r *http.Request, s *session) error

// handle registers a page that needs a session: without one the browser goes to sign-in (and
// comes back); unsafe methods must pass the CSRF checks first.
func (h *Handler) handle(pattern string, fn pageFunc) {
	h.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		s, err := h.session(w, r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if s == nil {
			h.toSignin(w, r)
			return
		}
		// A session spends its account's requests, as the account's keys do at the API.
		if h.o.Limits != nil && !h.o.Limits.AllowAccount(r.Context(), w, s.AccountID) {
			h.fail(w, r, httpapi.ErrRateLimited())
			return
		}
		if !safeMethod(r.Method) {
			if err := h.checkCSRF(r, s); err != nil {
				h.fail(w, r, err)
				return
			}
			normalizeFormNewlines(r)
			if err := checkFormText(r); err != nil {
				h.fail(w, r, err)
				return
			}
		}
		if err := fn(w, r, s); err != nil {
			h.fail(w, r, err)
		}
	})
}

// normalizeFormNewlines turns the CRLF line ends of a URL-encoded form's values into LF.
// Browsers send a textarea's lines ending in CRLF, and the texts it feeds (a script, a reply)
// are refused with a carriage return in them, as the API refuses them: the dashboard's forms
// are the one place where CRLF means nothing but a line end.
func normalizeFormNewlines(r *http.Request) {
	if !isURLEncodedForm(r) || r.ParseForm() != nil {
		return // no form, or one the handler refuses when it reads it
	}
	for _, form := range []url.Values{r.PostForm, r.Form} {
		for _, values := range form {
			for i, v := range values {
				values[i] = strings.ReplaceAll(v, "\r\n", "\n")
			}
		}
	}
}

// checkFormText refuses a URL-encoded form with a value that is not UTF-8, naming the field,
// as the API refuses such text: stored as it is, it would reach platforms and pages garbled.
func checkFormText(r *http.Request) error {
	if !isURLEncodedForm(r) || r.ParseForm() != nil {
		return nil
	}
	for name, values := range r.PostForm {
		if !utf8.ValidString(name) {
			return apierr.Field("form", "has a field name that is not valid UTF-8")
		}
		for _, v := range values {
			if !utf8.ValidString(v) {
				return apierr.Field(name, "is not valid UTF-8")
			}
		}
	}
	return nil
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// logger is the request's logger (it carries the request id).
func logger(r *http.Request) *slog.Logger { return httpapi.Logger(r.Context()) }
