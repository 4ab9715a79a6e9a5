// Package app assembles one reelay process from its parts: media storage, platform providers,
// the publish service and worker, the job queue and the HTTP API. `reelay serve` runs it; tests
// run the very same assembly against their own database and listener.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/reelay/reelay/api"
	"github.com/reelay/reelay/internal/ai"
	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/analytics"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/backlog"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/httpapi"
	"github.com/reelay/reelay/internal/inbox"
	"github.com/reelay/reelay/internal/jobs"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/bluesky"
	"github.com/reelay/reelay/internal/platform/discord"
	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/instagram"
	"github.com/reelay/reelay/internal/platform/linkedin"
	"github.com/reelay/reelay/internal/platform/mastodon"
	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/reddit"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/platform/sandboxtoken"
	"github.com/reelay/reelay/internal/platform/sim/simset"
	"github.com/reelay/reelay/internal/platform/telegram"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/reelay/reelay/internal/platform/tiktok"
	"github.com/reelay/reelay/internal/platform/youtube"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/videogen"
	"github.com/reelay/reelay/internal/web"
	"github.com/reelay/reelay/internal/webhooks"
)

// maintenanceTimeout is the time limit of the default queue's periodic jobs. Each round is
// bounded on its own (a batch of token refreshes, of media to purge, two 25-second syncs), and
// the next period goes on with what a cut round left.
const maintenanceTimeout = 10 * time.Minute

// Params are what an App is built from.
type Params struct {
	Config    *config.Config
	Store     *store.Store
	SecretKey []byte
	// PreviousSecretKeys are the keys SecretKey replaced (REELAY_SECRET_KEY_PREVIOUS): what
	// they sealed still opens and what they signed still verifies, until the values are
	// resealed (Reseal) and the keys dropped.
	PreviousSecretKeys [][]byte
	Logger             *slog.Logger
	Registry           *prometheus.Registry
	// PollInterval, when positive, replaces every provider's first processing-poll interval
	// (tests).
	PollInterval time.Duration
	// Version goes into the User-Agent of media downloads.
	Version string
	// SoleWorker says this process is the only worker of its database (SQLite, locked): jobs
	// found running at start belong to a dead process and resume at once.
	SoleWorker bool
	// ListeningPoll, when positive, replaces publish.Service.ListeningPoll (tests).
	ListeningPoll time.Duration
	// SimulatorClock is the sandbox simulators' clock (time.Now when nil): tests move it to let
	// a simulated audience grow.
	SimulatorClock func() time.Time
	// WebClock is the web dashboard's clock (time.Now when nil): tests move it to expire
	// sessions.
	WebClock func() time.Time
}

// App is one reelay process.
type App struct {
	Handler http.Handler // a worker's serves only /healthz, /readyz and /metrics
	Queue   *jobs.Queue
	Media   *media.Store
	Service *publish.Service

	// MetricsHandler serves /metrics on a listener of its own (REELAY_METRICS_ADDR); nil when
	// there is none, Handler then serving /metrics if a token is set.
	MetricsHandler http.Handler

	usage *auth.UsageTracker
	role  string
	log   *slog.Logger
	stop  []func()
}

// Providers returns the providers of the platforms reelay publishes to, set up by cfg (nil:
// every platform's defaults). userHosts makes the requests of the platforms whose host a user
// names (a Mastodon instance, a Bluesky PDS): it must refuse the server's own network. poll,
// when positive, replaces every provider's first processing-poll interval (tests).
func Providers(cfg *config.Config, poll time.Duration, userHosts *http.Client) map[string]provider.Provider {
	if cfg == nil {
		cfg = &config.Config{}
	}
	version := cfg.APIVersion
	// One instance per platform per process: some keep what must not leave memory (Bluesky's
	// sessions, Pinterest's and Reddit's upload policies, Telegram's and Discord's send tickets).
	return map[string]provider.Provider{
		platform.YouTube:   youtube.New(youtube.Config{UploadStepDuration: 30 * time.Second, PollInitial: poll}),
		platform.Instagram: instagram.New(instagram.Config{APIVersion: version(platform.Instagram), PollInitial: poll}),
		platform.TikTok:    tiktok.New(tiktok.Config{APIVersion: version(platform.TikTok), PollInitial: poll}),
		platform.LinkedIn:  linkedin.New(linkedin.Config{APIVersion: version(platform.LinkedIn), PollInitial: poll}),
		platform.Pinterest: pinterest.New(pinterest.Config{BaseURL: cfg.PinterestAPIURL, APIVersion: version(platform.Pinterest), PollInitial: poll}),
		platform.Bluesky:   bluesky.New(bluesky.Config{PollInitial: poll, HTTPClient: userHosts, VideoServiceURL: cfg.BlueskyVideoService}),
		platform.Telegram:  telegram.New(telegram.Config{}),
		platform.Discord:   discord.New(discord.Config{APIVersion: version(platform.Discord)}),
		platform.Mastodon:  mastodon.New(mastodon.Config{MinServerVersion: version(platform.Mastodon), PollInitial: poll, HTTPClient: userHosts}),
		platform.Reddit:    reddit.New(reddit.Config{PollInitial: poll}),
		platform.Threads:   threads.New(threads.Config{APIVersion: version(platform.Threads), PollInitial: poll}),
		platform.Facebook:  facebook.New(facebook.Config{APIVersion: version(platform.Facebook), PollInitial: poll}),
	}
}

// New builds the process for cfg.Role: the API (with the simulators when sandbox is on), the
// workers, or both.
func New(ctx context.Context, p Params) (*App, error) {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Registry == nil {
		p.Registry = prometheus.NewRegistry()
	}
	a := &App{role: p.Config.Role, log: p.Logger}
	w, err := a.wire(ctx, p)
	if err != nil {
		a.Close()
		return nil, err
	}
	if err := a.queue(w); err != nil {
		a.Close()
		return nil, err
	}
	if p.Config.Role == config.RoleWorker {
		a.Handler = httpapi.NewOperational(w.st, p.Registry, w.log, metricsAccess(w.cfg, w.log))
		return a, nil
	}
	if a.Handler, err = a.api(w); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// wiring is what New builds once and the roles' parts share: the platforms' providers and
// what reaches them, and the services on top.
type wiring struct {
	p         Params
	cfg       *config.Config
	st        *store.Store
	log       *slog.Logger
	box       *secret.Box
	access    publish.ChannelAccess
	guard     media.AddressPolicy // where connections to hosts users name may go
	providers map[string]provider.Provider
	connector *connect.Connector
	worker    *publish.Worker
	syncer    *analytics.Syncer
	comments  *inbox.Service
	videos    *aivideo.Service
	// converter runs ffmpeg for the renditions platforms need.
	converter *render.Renderer
}

// wire opens the media store and builds the providers and the services every role needs.
func (a *App) wire(ctx context.Context, p Params) (*wiring, error) {
	cfg, st, log := p.Config, p.Store, p.Logger
	box, err := secret.NewBox(p.SecretKey, p.PreviousSecretKeys...)
	if err != nil {
		return nil, err
	}
	w := &wiring{p: p, cfg: cfg, st: st, log: log, box: box}
	st.SetCaps(store.Caps{APIKeys: cfg.MaxKeysPerAccount, Projects: cfg.MaxProjectsPerAccount,
		Channels: cfg.MaxChannelsPerAccount, Webhooks: cfg.MaxWebhooksPerAccount})
	a.Media, err = media.OpenStore(ctx, cfg.BlobURL, secret.Derive(p.SecretKey, "media links"), media.WithPublicURL(cfg.PublicURL),
		media.WithRegistry(publish.MediaRegistry{Store: st}),
		media.WithPreviousSigningKeys(secret.DeriveAll(p.PreviousSecretKeys, "media links")...))
	if err != nil {
		return nil, fmt.Errorf("media storage: %w", err)
	}
	a.stop = append(a.stop, func() { a.Media.Close() })

	simulators := cfg.SandboxURL
	if simulators == "" {
		simulators = cfg.PublicURL
	}
	w.access = publish.ChannelAccess{
		Box: box, SandboxKey: sandboxtoken.Key(p.SecretKey), SimulatorsURL: simulators,
		SandboxAPIPaths: map[string]string{},
	}
	for _, d := range registry.Descriptions() {
		if d.API.InPath {
			w.access.SandboxAPIPaths[d.ID] = d.API.PathPrefix + "/" + cfg.APIVersion(d.ID)
		}
	}
	allowHosts, err := media.ParseAllowList(cfg.AllowHosts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvName("allow-hosts"), err)
	}
	w.guard = media.Guard(cfg.AllowPrivateURLs, allowHosts)
	policy := w.guard
	if !cfg.AllowPrivateURLs {
		if policy, err = userHostPolicy(w.guard, simulators); err != nil {
			return nil, err
		}
	}
	providerTransport := media.SafeTransport(policy)
	provider.KeepConnections(providerTransport)
	if err := bluesky.CheckVideoService(cfg.BlueskyVideoService); err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvName("bluesky-video-service"), err)
	}
	w.providers = Providers(cfg, p.PollInterval, &http.Client{Transport: providerTransport})
	a.stop = append(a.stop, func() {
		for _, prov := range w.providers {
			if c, ok := prov.(provider.Closer); ok {
				c.Close()
			}
		}
	})
	w.connector = &connect.Connector{
		Store: st, Access: w.access, Identifiers: abilities[provider.Identifier](w.providers),
		Checkers: abilities[provider.Checker](w.providers), Clients: map[string]connect.Client{},
		PublicURL: cfg.PublicURL, StateKey: secret.Derive(p.SecretKey, "oauth states"),
		PreviousStateKeys: secret.DeriveAll(p.PreviousSecretKeys, "oauth states"),
		HTTPClient:        provider.NewHTTPClient(30 * time.Second),
	}
	for name, cl := range cfg.OAuthClients {
		if cl != nil && cl.ID != "" {
			w.connector.Clients[name] = connect.Client{ID: cl.ID, Secret: cl.Secret}
		}
	}
	hub := publish.NewHub()
	w.worker = &publish.Worker{
		Store: st, Media: a.Media, Access: w.access, Hub: hub, Log: log.With("component", "publish"),
		Providers: w.providers, RetryAttempts: cfg.RetryAttempts, RetryBaseDelay: cfg.RetryBaseDelay,
		Tokens: w.connector,
	}
	caller := publish.ChannelCaller{Access: w.access, Tokens: w.connector, Store: st}
	w.syncer = &analytics.Syncer{Store: st, Caller: caller, Sources: abilities[provider.MetricsSource](w.providers),
		Log: log.With("component", "analytics")}
	w.comments = &inbox.Service{Store: st, Caller: caller, Sources: abilities[provider.CommentSource](w.providers),
		Log: log.With("component", "inbox")}
	fetcher := media.NewFetcher(media.FetcherConfig{Policy: w.guard, UserAgent: "reelay/" + p.Version})
	w.converter = render.New(cfg.FFmpeg)
	a.Service = &publish.Service{Store: st, Media: a.Media, Fetcher: fetcher, Hub: hub, Log: log.With("component", "publish"),
		ListeningPoll: p.ListeningPoll, Converter: w.converter}
	if w.videos, err = aiVideo(cfg, st, a, fetcher, box, p.PollInterval, log); err != nil {
		return nil, err
	}
	return w, nil
}

// abilities are the providers that have the optional ability A, by platform.
func abilities[A any](providers map[string]provider.Provider) map[string]A {
	out := map[string]A{}
	for name, prov := range providers {
		if ab, ok := prov.(A); ok {
			out[name] = ab
		}
	}
	return out
}

// queue opens the job queue; a process that works jobs (every role but the API alone) also
// gets the workers and their periodic jobs.
func (a *App) queue(w *wiring) error {
	cfg, st, log := w.cfg, w.st, w.log
	// Each queue's jobs have their own time limit, at which River cancels a run:
	//
	//   publish   the worker's run budget plus one step, a step being as long as one request
	//             of a slow upload may take (publish.Worker.Timeout: 12 minutes)
	//   ai_video  a hosted model's generation and its download (VideoTimeout plus 2 minutes),
	//             and never less than publishing's (a local stitch renders for minutes)
	//   webhooks  one delivery's request (webhooks.Worker.Timeout: 30 s)
	//   default   maintenanceTimeout: housekeeping, token refreshes, audience syncs, AI sweeps
	//
	// None of them decides how soon a dead worker's jobs move on: on PostgreSQL a running job
	// holds a lease its process renews, and another worker takes the job over within a minute
	// of the renewals stopping (jobs.DefaultLease).
	aiTimeout := max(w.worker.Timeout(nil), cfg.VideoTimeout+2*time.Minute)
	queueCfg := jobs.Config{Logger: log.With("component", "jobs"), JobTimeout: maintenanceTimeout,
		LongestTimeout: max(w.worker.Timeout(nil), aiTimeout, (&webhooks.Worker{}).Timeout(nil), publish.RenditionTimeout)}
	if cfg.Role != config.RoleAPI {
		w.worker.Metrics = publish.NewMetrics(w.p.Registry)
		queueCfg.Workers = river.NewWorkers()
		if err := river.AddWorkerSafely(queueCfg.Workers, w.worker); err != nil {
			return err
		}
		river.AddWorker(queueCfg.Workers, &publish.Housekeeper{Store: st, Media: a.Media, MediaRetention: cfg.MediaRetention,
			Log: log.With("component", "housekeeping")})
		river.AddWorker(queueCfg.Workers, &connect.RefreshWorker{Connector: w.connector, Log: log.With("component", "connect")})
		river.AddWorker(queueCfg.Workers, &connect.CheckWorker{Connector: w.connector, Log: log.With("component", "connect")})
		river.AddWorker(queueCfg.Workers, &analytics.SyncWorker{Syncs: map[string]analytics.DueSync{"figures": w.syncer, "comments": w.comments},
			Log: log.With("component", "analytics")})
		queueCfg.PeriodicJobs = []*river.PeriodicJob{publish.HousekeepingJob(), connect.RefreshJob(), connect.CheckJob(), analytics.SyncJob()}
		queueCfg.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: 10},
			publish.QueueName:  {MaxWorkers: cfg.PublishWorkers},
		}
		river.AddWorker(queueCfg.Workers, &webhooks.Worker{
			Store: st, Box: w.box, Client: webhooks.NewClient(w.guard),
			UserAgent: "reelay-webhooks/" + w.p.Version, RetryBase: cfg.WebhookRetryBase, Log: log.With("component", "webhooks"),
			Metrics: webhooks.NewMetrics(w.p.Registry),
		})
		queueCfg.Queues[webhooks.QueueName] = river.QueueConfig{MaxWorkers: 50}
		river.AddWorker(queueCfg.Workers, &aivideo.Worker{Service: w.videos, JobTimeout: aiTimeout})
		river.AddWorker(queueCfg.Workers, &aivideo.Sweeper{Store: st, StaleAfter: aivideo.MaxAttempts*(aiTimeout+2*time.Minute) + time.Hour})
		queueCfg.PeriodicJobs = append(queueCfg.PeriodicJobs, aivideo.SweepJob())
		queueCfg.Queues[aivideo.QueueName] = river.QueueConfig{MaxWorkers: aivideo.Concurrency}
		river.AddWorker(queueCfg.Workers, &publish.RenditionWorker{Store: st, Media: a.Media, Converter: w.converter, Hub: w.worker.Hub,
			Log: log.With("component", "convert")})
		queueCfg.Queues[publish.ConvertQueue] = river.QueueConfig{MaxWorkers: cfg.ConvertWorkers}
		queueCfg.RescueRunningOnStart = w.p.SoleWorker
	}
	var err error
	if a.Queue, err = jobs.New(st, queueCfg); err != nil {
		return err
	}
	// Every role records events (the API creates scheduled posts), so every role queues their
	// deliveries; workers send them.
	st.SetWebhookEnqueuer(webhooks.Enqueuer(a.Queue))
	a.Service.Queue, w.videos.Queue = a.Queue, a.Queue
	if cfg.MetricsAddr != "" {
		a.MetricsHandler = httpapi.NewMetricsHandler(w.p.Registry, cfg.MetricsToken)
	}
	return nil
}

// api builds the API process's handler: the JSON API, the dashboard, the agent tools and, in
// sandbox, the simulators.
func (a *App) api(w *wiring) (http.Handler, error) {
	cfg, st, log := w.cfg, w.st, w.log
	a.usage = auth.NewUsageTracker(st.TouchAPIKeys, log.With("component", "auth"))
	var oidc *auth.OIDCVerifier
	if cfg.OIDCIssuer != "" {
		oidc = auth.NewOIDCVerifier(cfg.OIDCIssuer, cfg.OIDCAudience, &http.Client{Timeout: 10 * time.Second})
	}
	spec, err := api.JSON()
	if err != nil {
		return nil, err
	}
	options := map[string]httpapi.OptionsSource{}
	for name, r := range abilities[provider.OptionsReader](w.providers) {
		sr, scoped := w.providers[name].(provider.SubredditOptionsReader)
		options[name] = func(ctx context.Context, base string, creds map[string]string, q url.Values) (map[string]any, error) {
			if sub := q.Get("subreddit"); scoped && sub != "" {
				return sr.SubredditOptions(ctx, base, creds, sub)
			}
			return r.Options(ctx, base, creds)
		}
	}
	engine, err := aiEngine(cfg, log)
	if err != nil {
		return nil, err
	}
	// Any number of API processes may share a PostgreSQL database: they share the rate
	// limits' buckets there too. The dashboard spends the same accounts' buckets.
	var rateBuckets httpapi.RateBuckets
	if st.Dialect() == store.Postgres {
		rateBuckets = st
	}
	proxies, err := config.ParseTrustedProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	limits := httpapi.NewLimits(httpapi.LimitsConfig{RPS: cfg.RateLimitRPS, Burst: cfg.RateLimitBurst,
		AccountRPS: cfg.RateLimitAccountRPS, AccountBurst: cfg.RateLimitAccountBurst,
		AddressRPS: cfg.RateLimitAddressRPS, AddressBurst: cfg.RateLimitAddressBurst, TrustedProxies: proxies,
		Shared: rateBuckets, Logger: log})
	webOpts := web.Options{Limits: limits, Store: st, Publisher: a.Service, Queue: a.Queue, Connector: w.connector, Access: w.access,
		Sandbox: cfg.Sandbox, PublicURL: cfg.PublicURL, Now: w.p.WebClock, Logger: log.With("component", "web"),
		Box: w.box, WebhookPolicy: w.guard, Inbox: w.comments, Analytics: w.syncer, AI: engine, AIVideo: w.videos}
	if cfg.OIDCIssuer != "" && cfg.OIDCClientID != "" {
		// The dashboard's sign-in at the issuer: ID tokens are for its own client id.
		webOpts.OIDC = auth.NewOIDCVerifier(cfg.OIDCIssuer, cfg.OIDCClientID, &http.Client{Timeout: 10 * time.Second})
		webOpts.OIDCClientID, webOpts.OIDCClientSecret, webOpts.OIDCAutoCreate = cfg.OIDCClientID, cfg.OIDCClientSecret, cfg.OIDCAutoCreate
		webOpts.OIDCName, webOpts.FormTargets = cfg.OIDCIssuer, []string{cfg.OIDCIssuer}
		if u, err := url.Parse(cfg.OIDCIssuer); err == nil && u.Host != "" {
			webOpts.OIDCName = u.Host
		}
	}
	// The backlog gauges are the fleet's state, read from the database, the same whichever
	// process reads it: API processes serve them and workers do not, so that the reads grow
	// with the API processes (a few) and not with the workers a busy fleet adds. Each process
	// reads at most once per backlog.DefaultMaxAge however many servers scrape it, and alerts
	// take max() over the API processes' series.
	platforms := make([]string, 0, len(w.providers))
	for name := range w.providers {
		platforms = append(platforms, name)
	}
	w.p.Registry.MustRegister(backlog.New(st, backlog.Options{Platforms: platforms,
		Queues: []string{river.QueueDefault, publish.QueueName, publish.ConvertQueue, webhooks.QueueName, aivideo.QueueName},
		Logger: log.With("component", "backlog")}))
	return httpapi.New(httpapi.Options{
		Store: st, Usage: a.usage, OIDC: oidc, OIDCAutoCreate: cfg.OIDCAutoCreate, Logger: log,
		Limits:  limits,
		Sandbox: cfg.Sandbox, Registry: w.p.Registry, Metrics: metricsAccess(cfg, log), OpenAPIJSON: spec,
		SandboxKey: w.access.SandboxKey, SandboxPreviousKeys: sandboxtoken.PreviousKeys(w.p.PreviousSecretKeys), PublicURL: cfg.PublicURL, Simulators: simset.All,
		Publisher: a.Service, Queue: a.Queue, Media: a.Media, PublishWait: cfg.PublishWait,
		Access: w.access, ChannelOptions: options, Connector: w.connector, ConnectReturnURL: cfg.ConnectReturnURL,
		Analytics: w.syncer, Inbox: w.comments, SimulatorClock: w.p.SimulatorClock,
		WebhookPolicy: w.guard,
		AI:            engine,
		AIVideo:       w.videos,
		AIWait:        cfg.AIWait,
		Web:           web.New(webOpts),
		MinBodyRate:   cfg.MinBodyRate, BodyRateWindow: cfg.BodyRateWindow, RequestTimeout: cfg.RequestTimeout,
	}), nil
}

func metricsAccess(cfg *config.Config, log *slog.Logger) httpapi.MetricsAccess {
	switch {
	case cfg.MetricsAddr != "":
		return httpapi.MetricsAccess{Hidden: true}
	case cfg.MetricsToken != "":
		return httpapi.MetricsAccess{Token: cfg.MetricsToken}
	}
	log.Info("/metrics is not served: set " + config.EnvName("metrics-addr") + " (a listener of its own) or " +
		config.EnvName("metrics-token") + " (a bearer token) to scrape it")
	return httpapi.MetricsAccess{Hidden: true}
}

// aiEngine is the configured language model, or the built-in engine when there is none.
func aiEngine(cfg *config.Config, log *slog.Logger) (httpapi.AIEngine, error) {
	if cfg.LLMURL == "" {
		return ai.Builtin{}, nil
	}
	llm, err := ai.NewLLM(ai.LLMConfig{BaseURL: cfg.LLMURL, Model: cfg.LLMModel, APIKey: cfg.LLMAPIKey,
		Timeout: cfg.LLMTimeout, Logger: log.With("component", "ai")})
	if err != nil {
		return nil, fmt.Errorf("language model: %w", err)
	}
	// The key stays out of the log, and so does the URL's query, where some gateways take one.
	shown := cfg.LLMURL
	if u, err := url.Parse(cfg.LLMURL); err == nil {
		u.RawQuery, u.User = "", nil
		shown = u.String()
	}
	log.Info("AI copy and storyboards by a language model", "url", shown, "model", cfg.LLMModel)
	return llm, nil
}

// aiVideo assembles video generation: a hosted model when one is configured, the local ffmpeg
// renderer otherwise, ffmpeg in any case for stitching. Its Queue is set once the queue exists.
// poll, when positive, is the model's first poll interval (tests).
func aiVideo(cfg *config.Config, st *store.Store, a *App, fetcher *media.Fetcher, box *secret.Box, poll time.Duration, log *slog.Logger) (*aivideo.Service, error) {
	svc := &aivideo.Service{Store: st, Media: a.Media, Fetcher: fetcher, Box: box, Renderer: render.New(cfg.FFmpeg),
		Discard: a.Service.Discard, Log: log.With("component", "aivideo")}
	if cfg.VideoURL == "" {
		return svc, nil
	}
	gen, err := videogen.New(videogen.Config{TextURL: cfg.VideoURL, ImageURL: cfg.VideoImageURL, APIKey: cfg.VideoAPIKey,
		Timeout: cfg.VideoTimeout, PollInitial: poll, PollMax: 10 * poll, Logger: log.With("component", "videogen")})
	if err != nil {
		return nil, fmt.Errorf("video model: %w", err)
	}
	svc.Generator = gen
	log.Info("AI video by a hosted model", "model", gen.Name())
	return svc, nil
}

// Start starts the workers and the API's background flushes.
func (a *App) Start(ctx context.Context) error {
	if err := a.Queue.Start(ctx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	if a.role != config.RoleWorker && a.Service.Store.Dialect() == store.Postgres {
		// Requests here may wait for posts that workers of other processes settle.
		listenCtx, stopListening := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		hub := a.Service.Hub
		go func() {
			defer close(done)
			a.Service.Store.ListenPostSettled(listenCtx, hub.Notify, func(err error) {
				hub.SetListening(err == nil)
				if err != nil {
					a.log.Warn("not hearing posts settled by other processes; reading them instead", "error", err)
				}
			})
		}()
		a.stop = append(a.stop, func() { stopListening(); <-done; hub.SetListening(false) })
	}
	if a.usage != nil {
		usageCtx, stopUsage := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() { a.usage.Run(usageCtx, 15*time.Second); close(done) }()
		a.stop = append(a.stop, func() { stopUsage(); <-done })
	}
	return nil
}

// Stop stops the workers (StopJobs) and flushes what is pending.
func (a *App) Stop(ctx context.Context) error {
	err := a.StopJobs(ctx)
	a.Close()
	return err
}

// StopJobs stops fetching jobs and lets the running ones end or reach a step where they can
// stop, until shortly before ctx's deadline; those still running then are cut, and resume from
// their stored state (jobs.Queue.Stop). What the API serves keeps working: Close ends it.
func (a *App) StopJobs(ctx context.Context) error {
	return a.Queue.Stop(ctx)
}

// Close releases what New acquired, last first.
func (a *App) Close() {
	for i := len(a.stop) - 1; i >= 0; i-- {
		a.stop[i]()
	}
	a.stop = nil
}

// userHostPolicy is where requests to hosts users name may go: where guard lets them, and
// this server's simulators (sandbox channels of those platforms live there).
func userHostPolicy(guard media.AddressPolicy, simulators string) (media.AddressPolicy, error) {
	allowed := map[netip.AddrPort]bool{}
	if u, err := url.Parse(simulators); err == nil && u.Host != "" {
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", u.Hostname())
		if err != nil {
			return nil, fmt.Errorf("simulators URL %s: %w", simulators, err)
		}
		for _, a := range addrs {
			if ap, err := netip.ParseAddrPort(net.JoinHostPort(a.Unmap().String(), port)); err == nil {
				allowed[ap] = true
			}
		}
	}
	return func(ap netip.AddrPort) error {
		if allowed[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] {
			return nil
		}
		return guard(ap)
	}, nil
}
