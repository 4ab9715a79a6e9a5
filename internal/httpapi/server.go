// Package httpapi is reelay's HTTP API: plain net/http handlers, one file per resource, each
// reading as decode → service (which validates and stores) → respond. Errors become the
// contract's error body in one place (writeError).
package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/inbox"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/webhooks"
)

// APIPrefix is the base path of the versioned API.
const APIPrefix = "/api/v1"

// Options are what the API needs from the process that runs it.
type Options struct {
	Store *store.Store
	Usage *auth.UsageTracker
	// OIDC verifies bearer tokens that are not reelay keys; nil when no issuer is configured.
	OIDC           *auth.OIDCVerifier
	OIDCAutoCreate bool
	Logger         *slog.Logger
	RateLimitRPS   float64
	RateLimitBurst int
	// RateBuckets, when set, holds the rate limits' token buckets that every API process on
	// the database shares (the store, on PostgreSQL); nil keeps them in this process.
	RateBuckets RateBuckets
	// Limits, when set, are the rate limits (shared with the dashboard) and replace the three
	// settings above; see NewLimits.
	Limits *Limits
	// Sandbox enables channels on the built-in platform simulators.
	Sandbox bool
	// Registry receives the request metrics; /metrics serves it, as Metrics says.
	Registry *prometheus.Registry
	Metrics  MetricsAccess
	// OpenAPIJSON is the contract, served at /api/v1/openapi.json.
	OpenAPIJSON []byte
	// Simulators are mounted at /sandbox/{platform}/ when Sandbox is on; SandboxKey signs the
	// sandbox access tokens they accept; PublicURL is how they are reached.
	Simulators map[string]SimulatorFactory
	SandboxKey []byte
	// SandboxPreviousKeys verify tokens signed before a secret key rotation.
	SandboxPreviousKeys [][]byte
	PublicURL           string
	// SimulatorClock is the simulators' clock (time.Now when nil).
	SimulatorClock func() time.Time

	// Publisher takes publish requests; Queue inserts the jobs of edits and retries; Media
	// serves signed media links; PublishWait is how long POST /publish waits for destinations
	// to settle unless the client asks otherwise.
	Publisher   *publish.Service
	Queue       publish.Enqueuer
	Media       *media.Store
	PublishWait time.Duration
	// Access opens channels' credentials (and seals new ones); ChannelOptions reads live
	// publish options of a platform's channel.
	Access         publish.ChannelAccess
	ChannelOptions map[string]OptionsSource
	// Connector connects channels (OAuth consents, verified credentials); ConnectReturnURL is
	// where the OAuth callback sends the browser ("" answers a page).
	Connector        *connect.Connector
	ConnectReturnURL string
	// Analytics reads figures from the platforms when a sync is asked for; Inbox reads comments
	// and posts replies.
	Analytics *analytics.Syncer
	Inbox     *inbox.Service
	// WebhookPolicy is where webhook URLs may point (media.Guard); nil: public addresses only.
	WebhookPolicy media.AddressPolicy
	// AI writes copy and storyboards (/ai/adapt, /ai/storyboard/create); the built-in engine
	// when nil.
	AI AIEngine
	// AIVideo generates and stitches videos (/ai/generate-video, /ai/storyboard/stitch,
	// /ai/jobs/{id}); AIWait is how long those calls wait for their job before answering 202.
	AIVideo *aivideo.Service
	AIWait  time.Duration
	// Web serves every path outside the API, the simulators and the operational endpoints (the
	// web dashboard); nil answers those with the API's 404.
	Web http.Handler
	// MinBodyRate (bytes a second, averaged over BodyRateWindow of waiting for the body) and
	// RequestTimeout limit every request in time (bodypace.go); zero takes config's defaults.
	MinBodyRate    int64
	BodyRateWindow time.Duration
	RequestTimeout time.Duration
}

// Server is the HTTP API.
type Server struct {
	store          *store.Store
	usage          *auth.UsageTracker
	oidc           *auth.OIDCVerifier
	oidcAutoCreate bool
	sandbox        bool
	log            *slog.Logger
	limits         *Limits
	metrics        *httpMetrics
	registry       *prometheus.Registry
	metricsAccess  MetricsAccess
	openapiJSON    []byte
	publisher      *publish.Service
	queue          publish.Enqueuer
	media          *media.Store
	publishWait    time.Duration
	access         publish.ChannelAccess
	optionSources  map[string]OptionsSource
	connector      *connect.Connector
	// connectReturnURL: see Options.
	connectReturnURL string
	analytics        *analytics.Syncer
	inbox            *inbox.Service
	ai               AIEngine
	aiVideo          *aivideo.Service
	aiWait           time.Duration
	web              http.Handler
	// pace is how slowly a body may arrive and how long a request may take.
	pace pace

	// The services this API shares with the dashboard, built on Options.
	keys     auth.Keys
	webhooks webhooks.Service
	channels connect.Channels
	posts    publish.Posts
	comments inbox.Comments
	figures  analytics.Figures

	// mcpHandler speaks the agent-tool protocol at /api/v1/mcp (mcp.go).
	mcpHandler http.Handler

	mux     *http.ServeMux
	methods map[string][]string // path pattern → methods served, for 405 answers
	handler http.Handler
}

// New builds the API.
func New(o Options) *Server {
	s := &Server{
		store: o.Store, keys: auth.Keys{Store: o.Store}, usage: o.Usage, oidc: o.OIDC, oidcAutoCreate: o.OIDCAutoCreate,
		sandbox: o.Sandbox, log: o.Logger, limits: o.Limits,
		registry: o.Registry, metricsAccess: o.Metrics, openapiJSON: o.OpenAPIJSON,
		publisher: o.Publisher, queue: o.Queue, media: o.Media, publishWait: o.PublishWait, access: o.Access,
		optionSources: o.ChannelOptions, connector: o.Connector, connectReturnURL: o.ConnectReturnURL,
		analytics: o.Analytics, inbox: o.Inbox,
		webhooks: webhooks.Service{Store: o.Store, Box: o.Access.Box, Policy: o.WebhookPolicy},
		channels: connect.Channels{Store: o.Store, Connector: o.Connector, Access: o.Access, Sandbox: o.Sandbox},
		posts:    publish.Posts{Store: o.Store},
		comments: inbox.Comments{Store: o.Store},
		figures:  analytics.Figures{Store: o.Store},
		ai:       o.AI,
		aiVideo:  o.AIVideo,
		aiWait:   o.AIWait,
		web:      o.Web,
		pace:     newPace(o.MinBodyRate, o.BodyRateWindow, o.RequestTimeout),
	}
	if s.limits == nil {
		s.limits = NewLimits(LimitsConfig{RPS: o.RateLimitRPS, Burst: o.RateLimitBurst, Shared: o.RateBuckets, Logger: o.Logger})
	}
	if s.ai == nil {
		s.ai = ai.Builtin{}
	}
	return s.build(func() {
		s.mcpHandler = s.newMCPHandler()
		if s.sandbox {
			s.mountSandbox(o.Simulators, sandboxtoken.Mint{Key: o.SandboxKey, Previous: o.SandboxPreviousKeys}, o.PublicURL, o.SimulatorClock)
		}
		s.routes()
	})
}

// NewOperational builds what a worker process serves: /healthz, /readyz and /metrics (as
// metrics says), so that an orchestrator can probe it and Prometheus can read the job metrics,
// which only workers record. Every other path answers 404.
func NewOperational(st *store.Store, registry *prometheus.Registry, log *slog.Logger, metrics MetricsAccess) *Server {
	s := &Server{store: st, registry: registry, log: log, metricsAccess: metrics}
	return s.build(func() {})
}

// build gives s what every Server has (a logger, a registry with its request metrics, the
// operational endpoints, the 405 and 404 answers) around the routes that routes registers.
func (s *Server) build(routes func()) *Server {
	if s.log == nil {
		s.log = discardLogger
	}
	if s.registry == nil {
		s.registry = prometheus.NewRegistry()
	}
	if s.pace == (pace{}) {
		s.pace = newPace(0, 0, 0)
	}
	s.metrics = newHTTPMetrics(s.registry)
	s.mux, s.methods = http.NewServeMux(), map[string][]string{}
	s.operationalRoutes()
	routes()
	s.fallbackRoutes()
	// limitTime goes outside observe, which reads the route ServeMux writes into the very
	// request observe passed on.
	s.handler = s.limitTime(s.observe(s.checkURLs(s.mux)))
	return s
}

// ServeHTTP makes Server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// operationalRoutes are the endpoints outside the versioned API, without credentials, that
// every role serves.
func (s *Server) operationalRoutes() {
	s.probe("GET /healthz", s.healthz)
	s.probe("GET /readyz", s.readyz)
	if !s.metricsAccess.Hidden {
		s.register("GET /metrics", metricsHandler(s.registry, s.metricsAccess.Token))
	}
}

func (s *Server) routes() {
	s.public("GET "+APIPrefix+"/openapi.json", s.openapi)

	s.private("GET "+APIPrefix+"/projects", s.listProjects)
	s.private("POST "+APIPrefix+"/projects", s.createProject)

	s.private("GET "+APIPrefix+"/channels", s.listChannels)
	s.private("POST "+APIPrefix+"/channels", s.createChannel)
	s.private("DELETE "+APIPrefix+"/channels/{id}", s.deleteChannel)
	s.private("POST "+APIPrefix+"/channels/{id}/check", s.checkChannel)
	s.private("GET "+APIPrefix+"/channels/{a}/{b}", s.channelSubresource) // connect/{platform}, {id}/options
	s.public("GET "+APIPrefix+"/oauth/{platform}/start", s.oauthStart)
	s.public("GET "+APIPrefix+"/oauth/{platform}/callback", s.oauthCallback)

	s.private("POST "+APIPrefix+"/publish", s.publish)
	s.private("POST "+APIPrefix+"/posts/publish", s.publish)
	s.private("GET "+APIPrefix+"/posts", s.listPosts)
	s.private("GET "+APIPrefix+"/posts/{id}", s.getPost)
	s.private("PATCH "+APIPrefix+"/posts/{id}", s.updatePost)
	s.private("DELETE "+APIPrefix+"/posts/{id}", s.cancelPost)
	s.private("POST "+APIPrefix+"/posts/{id}/retry", s.retryPost)
	s.private("GET "+APIPrefix+"/account/usage", s.accountUsage)
	s.private("GET "+APIPrefix+"/account/credits", s.accountCredits)
	s.private("GET "+APIPrefix+"/analytics/overview", s.analyticsOverview)
	s.private("GET "+APIPrefix+"/analytics/metrics", s.analyticsMetrics)
	s.private("POST "+APIPrefix+"/analytics/sync", s.analyticsSync)
	s.private("GET "+APIPrefix+"/inbox/comments", s.listComments)
	s.private("POST "+APIPrefix+"/inbox/reply", s.replyToComment)
	s.public("GET "+APIPrefix+"/media/{id}", s.serveMedia)

	s.private("POST "+APIPrefix+"/ai/adapt", s.adaptScript)
	s.private("POST "+APIPrefix+"/ai/storyboard/create", s.createStoryboard)
	s.private("POST "+APIPrefix+"/ai/generate-video", s.generateVideo)
	s.private("POST "+APIPrefix+"/ai/storyboard/stitch", s.stitchStoryboard)
	s.private("GET "+APIPrefix+"/ai/jobs/{id}", s.getAIJob)

	s.private("GET "+APIPrefix+"/api-keys", s.listAPIKeys)
	s.private("POST "+APIPrefix+"/api-keys", s.createAPIKey)
	s.private("DELETE "+APIPrefix+"/api-keys/{id}", s.revokeAPIKey)

	s.private("GET "+APIPrefix+"/webhooks", s.listWebhooks)
	s.private("POST "+APIPrefix+"/webhooks", s.createWebhook)
	s.private("PATCH "+APIPrefix+"/webhooks/{id}", s.updateWebhook)
	s.private("DELETE "+APIPrefix+"/webhooks/{id}", s.deleteWebhook)
	s.private("GET "+APIPrefix+"/webhooks/{id}/deliveries", s.listWebhookDeliveries)

	s.private("POST "+APIPrefix+"/mcp", s.serveMCP)
}

// fallbackRoutes come last: every path registered before answers other methods with a 405
// in the contract's body, and every other path a 404 (or the dashboard's page).
func (s *Server) fallbackRoutes() {
	for path, methods := range s.methods {
		sort.Strings(methods)
		allow := strings.Join(methods, ", ")
		notAllowed := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, r, apierr.Newf(http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed,
				"%s is not allowed here; allowed: %s", r.Method, allow))
		}
		// One pattern per missing method, not a method-less one: "/posts/publish" without a
		// method would collide with "GET /posts/{id}" in ServeMux's precedence rules.
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			if !slices.Contains(methods, m) {
				s.mux.HandleFunc(m+" "+path, notAllowed)
			}
		}
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.web != nil && !apiPath(r.URL.Path) {
			s.web.ServeHTTP(w, r)
			return
		}
		writeError(w, r, apierr.Newf(http.StatusNotFound, apierr.CodeNotFound, "no endpoint at %s", r.URL.Path))
	})
}

// apiPath reports whether path belongs to the API, the simulators or the operational
// endpoints, which answer in the API's way even where nothing is served (never the dashboard's
// pages).
func apiPath(path string) bool {
	for _, p := range []string{APIPrefix, "/api/", "/sandbox/"} {
		if path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, p) {
			return true
		}
	}
	switch path {
	case "/healthz", "/readyz", "/metrics":
		return true
	}
	return false
}

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) adapt(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, r, err)
		}
	})
}

func (s *Server) register(pattern string, h http.Handler) {
	method, path, _ := strings.Cut(pattern, " ")
	s.methods[path] = append(s.methods[path], method)
	if method == http.MethodGet {
		s.methods[path] = append(s.methods[path], http.MethodHead)
	}
	s.mux.Handle(pattern, h)
}

// public registers an endpoint that needs no credentials. Anyone may call it, so each client
// address has its rate limit there.
func (s *Server) public(pattern string, h handlerFunc) {
	s.register(pattern, s.limitAddress(s.adapt(h)))
}

// probe registers an operational endpoint without credentials or limits: orchestrators and
// load balancers probe often, from few addresses, and the answer costs next to nothing.
func (s *Server) probe(pattern string, h handlerFunc) { s.register(pattern, s.adapt(h)) }

// private registers an endpoint behind authentication and rate limiting.
func (s *Server) private(pattern string, h handlerFunc) {
	s.register(pattern, s.authenticate(s.adapt(h)))
}

// NewHTTPServer returns the http.Server settings reelay runs with: headers must arrive within
// ReadHeaderTimeout, and the handler limits the rest of each request (limitTime: a minimum
// body rate and a time limit, long enough for a large upload, rather than a read timeout of
// the server's, which would have to be as long for every request). Requests inherit baseCtx:
// it carries the process's Drain (WithDrain), which ends the long waits when the process
// begins to stop, and its end cancels whatever requests are left.
func NewHTTPServer(addr string, h http.Handler, baseCtx context.Context) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
}
