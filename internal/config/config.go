// Package config holds reelay's settings. Each is a command-line flag with an environment
// variable named REELAY_ + the flag's name in upper case with dashes as underscores
// (--publish-wait → REELAY_PUBLISH_WAIT); a flag given on the command line wins.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/pinterest"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/spf13/pflag"
)

// Config is the server's configuration.
type Config struct {
	Addr        string
	DataDir     string
	DatabaseURL string
	BlobURL     string
	PublicURL   string
	SandboxURL  string
	SecretKey   string
	// SecretKeyPrevious are the keys REELAY_SECRET_KEY had before a rotation, comma-separated:
	// values sealed and links signed with them are still accepted, never made.
	SecretKeyPrevious string
	Sandbox           bool
	AllowPrivateURLs  bool
	// AllowHosts is a comma-separated list of host names and CIDRs on the operator's own
	// network that the address guard lets through (media.ParseAllowList reads it).
	AllowHosts     string
	PublishWait    time.Duration
	RetryAttempts  int
	RetryBaseDelay time.Duration
	// PublishWorkers is how many destinations one worker process takes forward at once.
	PublishWorkers int
	// MediaRetention is how long a stored video or picture is kept after its last use (taken
	// in, or a post using it settled or changed); 0 keeps media for good.
	MediaRetention time.Duration
	// MaxKeysPerAccount, MaxProjectsPerAccount, MaxChannelsPerAccount and
	// MaxWebhooksPerAccount cap how many active API keys, projects, connected channels and
	// webhooks one account may hold (0 = no cap); see DefaultMaxKeysPerAccount.
	MaxKeysPerAccount     int
	MaxProjectsPerAccount int
	MaxChannelsPerAccount int
	MaxWebhooksPerAccount int
	// WebhookRetryBase is the first retry delay of a webhook delivery; the rest of the
	// Standard Webhooks schedule (5 min, 30 min, 2 h, ...) scales with it.
	WebhookRetryBase time.Duration
	RateLimitRPS     float64
	RateLimitBurst   int
	// RateLimitAccountRPS and RateLimitAccountBurst bound an account's requests, all its keys
	// (and dashboard sessions) together; 0 is the key's limit.
	RateLimitAccountRPS   float64
	RateLimitAccountBurst int
	// RateLimitAddressRPS and RateLimitAddressBurst bound, per client address, the requests
	// served without a credential and the failed credentials; a rate of 0 turns them off.
	RateLimitAddressRPS   float64
	RateLimitAddressBurst int
	// TrustedProxies are the CIDRs of reverse proxies whose X-Forwarded-For names the client,
	// comma-separated ("" trusts none).
	TrustedProxies string
	OIDCIssuer     string
	OIDCAudience   string
	OIDCAutoCreate bool
	// OIDCClientID and OIDCClientSecret are the web dashboard's client at the OIDC issuer:
	// with them, the sign-in page offers signing in there (redirect URI
	// <public URL>/signin/oidc/callback).
	OIDCClientID     string
	OIDCClientSecret string
	Role             string
	LogLevel         string
	LogFormat        string
	// OAuthClients are reelay's OAuth apps on the platforms that connect by consent, by
	// platform (--youtube-client-id, REELAY_YOUTUBE_CLIENT_ID, ...); a platform without one
	// cannot be connected by consent, only with a pasted token pair or as a sandbox channel.
	OAuthClients map[string]*OAuthClient
	// APIVersions are the versions of the platforms' APIs the providers speak, by platform,
	// for the platforms that version theirs (--linkedin-api-version, REELAY_LINKEDIN_API_VERSION,
	// ...); each defaults to the version in the platform's description.
	APIVersions map[string]*string
	// PinterestAPIURL is Pinterest's API root: https://api-sandbox.pinterest.com for an app
	// with Trial access, which may create Pins only there.
	PinterestAPIURL string
	// ConnectReturnURL is where the OAuth callback sends the browser after connecting a
	// channel ("" answers a small page instead).
	ConnectReturnURL string
	// LLMURL is the base URL of an OpenAI-compatible chat-completions API that writes AI copy
	// and storyboards ("" = the built-in engine); LLMModel the model asked for; LLMAPIKey its
	// Bearer key (never logged); LLMTimeout bounds each call.
	LLMURL     string
	LLMModel   string
	LLMAPIKey  string
	LLMTimeout time.Duration
	// VideoURL is a hosted video-generation model's queue endpoint for text-to-video ("" = the
	// local ffmpeg renderer), VideoImageURL its image-to-video endpoint ("" = VideoURL),
	// VideoAPIKey its key (never logged; a request's apiKey overrides it) and VideoTimeout the
	// bound of one generation.
	VideoURL      string
	VideoImageURL string
	VideoAPIKey   string
	VideoTimeout  time.Duration
	// FFmpeg is the ffmpeg the local renderer, stitching and conversions run.
	FFmpeg string
	// ConvertWorkers is how many conversions (ffmpeg processes) one worker process runs at
	// once.
	ConvertWorkers int
	// AIWait is how long POST /ai/generate-video and /ai/storyboard/stitch wait for their job
	// before answering 202 with the job to read.
	AIWait time.Duration

	// MetricsAddr, when set, is a listener of its own that serves /metrics (and nothing else);
	// the main listener then serves none. MetricsToken, when set, is the bearer token /metrics
	// asks for, wherever it is served (never logged). With neither, /metrics is not served.
	MetricsAddr  string
	MetricsToken string

	// BlueskyVideoService is the root URL of Bluesky's video service for channels that are not
	// sandbox channels, or "none": their videos then go to their PDS (uploadBlob).
	BlueskyVideoService string

	// MinBodyRate (bytes a second) and BodyRateWindow are the slowest a request body may
	// arrive, averaged over each window of waiting for it; RequestTimeout bounds a whole
	// request. Zero takes the defaults below.
	MinBodyRate    int64
	BodyRateWindow time.Duration
	RequestTimeout time.Duration

	// ShutdownTimeout bounds a stop (SIGTERM, Ctrl-C) from the signal to the exit: the drain
	// delay, the requests in flight and the running jobs' current steps (0 takes
	// DefaultShutdownTimeout). DrainDelay is how long /readyz answers 503 before the listener
	// closes, when something probed it lately (see serve).
	ShutdownTimeout time.Duration
	DrainDelay      time.Duration
}

// DefaultShutdownTimeout bounds a stop from the signal to the exit. It stays below the 30 s an
// orchestrator commonly allows before it kills (Kubernetes' terminationGracePeriodSeconds), so
// that reelay ends its own runs, their state saved, rather than being killed in them.
const DefaultShutdownTimeout = 25 * time.Second

// DefaultDrainDelay is how long a stopping process keeps serving with /readyz answering 503, so
// that load balancers that probe it every few seconds stop sending it requests before its
// listener closes (a closed listener would refuse their requests instead).
const DefaultDrainDelay = 5 * time.Second

// A request body must arrive at DefaultMinBodyRate or faster over each DefaultBodyRateWindow
// spent waiting for it: 30 KB in 30 s, far below any real uplink, so that only a client that
// dribbles bytes to hold the connection is cut off.
const (
	DefaultMinBodyRate    = 1024
	DefaultBodyRateWindow = 30 * time.Second
)

// DefaultRequestTimeout bounds a whole request. A 100 MB video uploaded at the minimum rate
// would take 27 hours; an hour lets it through at 28 KB/s (about 220 kbit/s), and is far
// above the longest a request waits by design (60 s for a publish's destinations).
const DefaultRequestTimeout = time.Hour

// DefaultConvertWorkers is the convert queue's concurrency in a worker process: one ffmpeg
// encoding 1080p keeps two cores busy on its own.
const DefaultConvertWorkers = 1

// DefaultPublishWorkers is the publish queue's concurrency in a worker process. A job spends
// most of its time waiting on a platform, so this is well above the number of cores; but each
// job in flight also holds connections and memory, and on two cores a burst of 2,000
// destinations to the simulators drained with a fifth less CPU at 300 than at 1,000
// (docs/benchmarks-history.md, "2026-11-26, a seventh machine").
const DefaultPublishWorkers = 300

// DefaultMediaRetention keeps media 30 days after their last use: long enough to retry a failed
// post or publish the same file again without uploading it anew, short enough that a busy
// server's disk does not fill with videos that were published weeks ago.
const DefaultMediaRetention = 30 * 24 * time.Hour

// The default caps per account. Anyone holding one of an account's keys can create keys,
// projects, channels and webhooks, and every one is a row kept for good (and a channel is
// work: its tokens refreshed, its figures synced; a webhook is a delivery written for every
// event), so each is bounded. The bounds sit far above what one team uses, so that nobody
// meets them by accident: a key per person or integration (100), a project per brand or
// client (100), a few channels on each of the twelve platforms per project (500 across the
// account); webhooks stay at the 20 they were bounded to before the bounds were settings,
// since each one multiplies the writes of every post.
const (
	DefaultMaxKeysPerAccount     = 100
	DefaultMaxProjectsPerAccount = 100
	DefaultMaxChannelsPerAccount = 500
	DefaultMaxWebhooksPerAccount = 20
)

// DefaultRetryAttempts is how many transient failures in a row a destination's step may have
// before the destination fails (REELAY_RETRY_ATTEMPTS).
const DefaultRetryAttempts = 8

// MinMetricsTokenLen is the shortest REELAY_METRICS_TOKEN accepted: it guards an endpoint
// anyone may try, so it must not be guessable.
const MinMetricsTokenLen = 16

// The default limits per client address of the work done without a credential: a person
// signing in or connecting a channel asks for a few of those pages a minute, and the burst
// leaves room for a platform's fetchers pulling a hundred media links at once.
const (
	DefaultAddressRPS   = 5
	DefaultAddressBurst = 100
)

// OAuthClient is an OAuth app's credentials on one platform.
type OAuthClient struct {
	ID     string
	Secret string
}

// OAuthPlatforms are the platforms whose channels connect through an OAuth consent.
var OAuthPlatforms = []string{"youtube", "instagram", "tiktok", "linkedin", "pinterest", "threads", "facebook", "reddit"}

// Roles a process can take.
const (
	RoleAll    = "all"
	RoleAPI    = "api"
	RoleWorker = "worker"
)

// RegisterStorage adds the flags every command that opens the database needs.
func (c *Config) RegisterStorage(fs *pflag.FlagSet) {
	fs.StringVar(&c.DataDir, "data-dir", "./data", "folder for the SQLite file, blobs and the generated secret key")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "database: a postgres:// URL, or a SQLite file (default <data-dir>/reelay.db)")
	// --data is accepted as a short spelling of --data-dir.
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "data" {
			name = "data-dir"
		}
		return pflag.NormalizedName(name)
	})
}

// RegisterSecretKeys adds the flags of the keys that seal stored secrets, for the commands that
// open or seal them (serve, secret-key reseal); the other administration commands touch no
// sealed value and do not offer them.
func (c *Config) RegisterSecretKeys(fs *pflag.FlagSet) {
	fs.StringVar(&c.SecretKey, "secret-key", "", "base64 32-byte key that encrypts platform tokens (default: generated into <data-dir>/secret.key)")
	fs.StringVar(&c.SecretKeyPrevious, "secret-key-previous", "", "earlier secret keys, comma-separated, still accepted while reelay secret-key reseal moves what they sealed to --secret-key; prefer the environment variable")
}

// RegisterServer adds the flags of `reelay serve`.
func (c *Config) RegisterServer(fs *pflag.FlagSet) {
	c.RegisterStorage(fs)
	c.RegisterSecretKeys(fs)
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&c.BlobURL, "blob-url", "", "media storage: file:///path or s3://bucket?endpoint=...&region=... (default file://<data-dir>/blobs)")
	fs.StringVar(&c.PublicURL, "public-url", "", "how platforms and users reach this server (default http://<addr>)")
	fs.StringVar(&c.SandboxURL, "sandbox-url", "", "where sandbox channels reach their simulators (default: this server's own, at <public-url>/sandbox/)")
	fs.BoolVar(&c.Sandbox, "sandbox", true, "serve the built-in platform simulators for sandbox channels")
	fs.BoolVar(&c.AllowPrivateURLs, "allow-private-urls", false, "let video_url, thumbnail_url and webhook URLs point at private addresses (tests only)")
	fs.StringVar(&c.AllowHosts, "allow-hosts", "", "host names and CIDRs of your own network that webhooks, media URLs and self-hosted platforms (Mastodon, Bluesky PDS) may reach, comma-separated, e.g. nas.local,192.168.1.0/24")
	fs.DurationVar(&c.PublishWait, "publish-wait", 15*time.Second, "how long POST /publish waits for destinations to settle")
	fs.IntVar(&c.RetryAttempts, "retry-attempts", DefaultRetryAttempts, "attempts for a destination step that fails transiently")
	fs.DurationVar(&c.RetryBaseDelay, "retry-base-delay", 5*time.Second, "first retry delay, doubled per attempt, with jitter")
	fs.IntVar(&c.PublishWorkers, "publish-workers", DefaultPublishWorkers, "destinations a worker process takes forward at once (each a job on the publish queue)")
	fs.IntVar(&c.ConvertWorkers, "convert-workers", DefaultConvertWorkers, "conversions (ffmpeg processes) a worker process runs at once, making videos the platforms accept")
	fs.DurationVar(&c.MediaRetention, "media-retention", DefaultMediaRetention, "how long stored media are kept after their last use (taken in, or a post using them settled); 0 keeps them for good")
	fs.DurationVar(&c.WebhookRetryBase, "webhook-retry-base", 5*time.Second, "first retry delay of a webhook delivery; later ones (5m, 30m, 2h, ... 24h) scale with it")
	fs.Float64Var(&c.RateLimitRPS, "rate-limit-rps", 20, "requests per second allowed per credential")
	fs.IntVar(&c.RateLimitBurst, "rate-limit-burst", 40, "burst of requests allowed per credential")
	fs.Float64Var(&c.RateLimitAccountRPS, "rate-limit-account-rps", 0, "requests per second allowed per account, all its keys and sessions together (0 = --rate-limit-rps)")
	fs.IntVar(&c.RateLimitAccountBurst, "rate-limit-account-burst", 0, "burst of requests allowed per account (0 = --rate-limit-burst)")
	fs.Float64Var(&c.RateLimitAddressRPS, "rate-limit-address-rps", DefaultAddressRPS, "requests per second per client address to sign-in, OAuth callbacks, sandbox consents and tokens and media links, and failed credentials per address (0 = no limit)")
	fs.IntVar(&c.RateLimitAddressBurst, "rate-limit-address-burst", DefaultAddressBurst, "burst of those requests per client address")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", "", "CIDRs of reverse proxies whose X-Forwarded-For names the client address, comma-separated (default: none, the connection's address)")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", "", "issuer URL whose bearer JWTs are accepted")
	fs.StringVar(&c.OIDCAudience, "oidc-audience", "", "audience those JWTs must carry")
	fs.BoolVar(&c.OIDCAutoCreate, "oidc-auto-create", false, "create an account for an OIDC subject seen for the first time")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", "", "the web dashboard's client id at the OIDC issuer (browser sign-in)")
	fs.StringVar(&c.OIDCClientSecret, "oidc-client-secret", "", "the web dashboard's client secret at the OIDC issuer")
	fs.StringVar(&c.Role, "role", RoleAll, "what this process does: all, api (HTTP only) or worker (jobs only)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "address of a listener serving only /metrics, e.g. 127.0.0.1:9090 (the main listener then serves none)")
	fs.StringVar(&c.MetricsToken, "metrics-token", "", "bearer token that /metrics asks for; prefer the environment variable (with neither this nor --metrics-addr, /metrics is not served)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "text", "text or json")
	fs.StringVar(&c.ConnectReturnURL, "connect-return-url", "", "where the browser goes after connecting a channel by OAuth (default: a page saying what was connected)")
	fs.StringVar(&c.LLMURL, "llm-url", "", "base URL of an OpenAI-compatible chat-completions API for /ai/adapt and /ai/storyboard/create, e.g. https://api.openai.com/v1 or http://localhost:11434/v1 (default: the built-in engine)")
	fs.StringVar(&c.LLMModel, "llm-model", "", "model asked for at --llm-url, e.g. gpt-4o-mini or llama3.1")
	fs.StringVar(&c.LLMAPIKey, "llm-api-key", "", "Bearer key for --llm-url (none for local servers); prefer the environment variable")
	fs.DurationVar(&c.LLMTimeout, "llm-timeout", 60*time.Second, "how long one call to the language model may take")
	fs.StringVar(&c.VideoURL, "video-url", "", "queue endpoint of a hosted text-to-video model (fal.ai's queue protocol), e.g. https://queue.fal.run/fal-ai/kling-video/v2/master/text-to-video (default: render locally with ffmpeg)")
	fs.StringVar(&c.VideoImageURL, "video-image-url", "", "queue endpoint of the image-to-video model (default: --video-url)")
	fs.StringVar(&c.VideoAPIKey, "video-api-key", "", "key for the video model (a request's apiKey overrides it); prefer the environment variable")
	fs.DurationVar(&c.VideoTimeout, "video-timeout", 10*time.Minute, "how long one hosted video generation may take")
	fs.StringVar(&c.FFmpeg, "ffmpeg", "ffmpeg", "the ffmpeg that renders clips locally and stitches storyboards")
	fs.DurationVar(&c.AIWait, "ai-wait", 60*time.Second, "how long video generation and stitching requests wait before answering 202 with a job")
	fs.Int64Var(&c.MinBodyRate, "min-body-rate", DefaultMinBodyRate, "slowest a request body may arrive, in bytes a second averaged over --body-rate-window; slower is answered 408 and the connection closed")
	fs.DurationVar(&c.BodyRateWindow, "body-rate-window", DefaultBodyRateWindow, "the time over which a request body's rate is averaged (only time spent waiting for the client counts)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", DefaultRequestTimeout, "longest a request may take, body included; an upload must finish within it")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", DefaultShutdownTimeout, "longest a stop (SIGTERM, Ctrl-C) takes: the drain delay, requests in flight and the running jobs' current steps; steps still running then are cut and resume elsewhere")
	fs.DurationVar(&c.DrainDelay, "drain-delay", DefaultDrainDelay, "how long a stopping process answers /readyz 503 before closing its listener, when /readyz was probed in the last 5 minutes (at most half of --shutdown-timeout; 0 = close at once)")
	fs.StringVar(&c.BlueskyVideoService, "bluesky-video-service", "https://video.bsky.app", "root URL of Bluesky's video service, or none: videos then go to the channel's PDS (uploadBlob, at most its blob limit, 5 MiB on a default self-hosted PDS)")
	fs.IntVar(&c.MaxKeysPerAccount, "max-keys-per-account", DefaultMaxKeysPerAccount, "active API keys one account may hold (0 = no cap)")
	fs.IntVar(&c.MaxProjectsPerAccount, "max-projects-per-account", DefaultMaxProjectsPerAccount, "projects one account may hold (0 = no cap)")
	fs.IntVar(&c.MaxChannelsPerAccount, "max-channels-per-account", DefaultMaxChannelsPerAccount, "connected channels one account may hold, across its projects (0 = no cap)")
	fs.IntVar(&c.MaxWebhooksPerAccount, "max-webhooks-per-account", DefaultMaxWebhooksPerAccount, "webhooks one account may hold (0 = no cap)")
	c.APIVersions = map[string]*string{}
	for _, d := range registry.Descriptions() {
		if d.API.Version == "" {
			continue
		}
		v := new(string)
		c.APIVersions[d.ID] = v
		usage := fmt.Sprintf("version of %s's API reelay speaks (checked against %s on %s", d.Name, d.API.Source, d.API.Checked)
		if d.API.Sunset != "" {
			usage += "; " + d.API.Version + " is served until " + d.API.Sunset
		}
		fs.StringVar(v, d.VersionSetting(), d.API.Version, usage+")")
	}
	fs.StringVar(&c.PinterestAPIURL, "pinterest-api-url", pinterest.DefaultBaseURL, "Pinterest's API root; an app with Trial access creates Pins only on https://api-sandbox.pinterest.com")
	c.OAuthClients = map[string]*OAuthClient{}
	for _, p := range OAuthPlatforms {
		cl := &OAuthClient{}
		c.OAuthClients[p] = cl
		fs.StringVar(&cl.ID, p+"-client-id", "", "OAuth client id of reelay's app on "+p)
		fs.StringVar(&cl.Secret, p+"-client-secret", "", "OAuth client secret of reelay's app on "+p)
	}
}

// APIVersion is the version of the named platform's API the providers speak: its setting, or
// the one in the platform's description.
func (c *Config) APIVersion(name string) string {
	if v := c.APIVersions[name]; v != nil && *v != "" {
		return *v
	}
	d, _ := registry.Describe(name)
	return d.API.Version
}

// EnvName is the environment variable of a flag.
func EnvName(flag string) string {
	return "REELAY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// ApplyEnv sets every flag not given on the command line from its environment variable.
func ApplyEnv(fs *pflag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", EnvName(f.Name), err))
			}
		}
	})
	return errors.Join(errs...)
}

// FinishStorage fills the storage settings that default to others; it is all that the local
// administration commands need.
func (c *Config) FinishStorage() error {
	if c.DatabaseURL == "" {
		c.DatabaseURL = filepath.Join(c.DataDir, "reelay.db")
	}
	return nil
}

// Finish fills the server settings that default to others and checks the whole.
func (c *Config) Finish() error {
	if err := c.FinishStorage(); err != nil {
		return err
	}
	if c.BlobURL == "" {
		abs, err := filepath.Abs(filepath.Join(c.DataDir, "blobs"))
		if err != nil {
			return err
		}
		c.BlobURL = "file://" + filepath.ToSlash(abs)
	}
	if c.PublicURL == "" && c.Addr != "" {
		host := c.Addr
		if strings.HasPrefix(host, ":") {
			host = "127.0.0.1" + host
		}
		c.PublicURL = "http://" + host
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	c.SandboxURL = strings.TrimRight(c.SandboxURL, "/")
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("public URL %q must be an absolute http(s) URL", c.PublicURL)
		}
	}
	for name, v := range c.APIVersions {
		// The version goes into call paths (Graph API) or a header (LinkedIn-Version).
		if *v != "" && (strings.TrimSpace(*v) != *v || strings.ContainsAny(*v, "/?#% \t\r\n")) {
			return fmt.Errorf("%s %q: a version is one word, as the platform writes it", EnvName(name+"-api-version"), *v)
		}
	}
	if c.PinterestAPIURL != "" && !platform.IsWebURL(c.PinterestAPIURL) {
		return fmt.Errorf("%s %q must be an absolute http(s) URL", EnvName("pinterest-api-url"), c.PinterestAPIURL)
	}
	switch c.Role {
	case RoleAll, RoleAPI, RoleWorker, "":
	default:
		return fmt.Errorf("role %q: want all, api or worker", c.Role)
	}
	if c.Role == "" {
		c.Role = RoleAll
	}
	if c.MetricsAddr != "" {
		_, port, err := net.SplitHostPort(c.MetricsAddr)
		if err != nil {
			return fmt.Errorf("%s %q: want host:port, e.g. 127.0.0.1:9090", EnvName("metrics-addr"), c.MetricsAddr)
		}
		if c.MetricsAddr == c.Addr && port != "0" {
			return fmt.Errorf("%s must differ from %s", EnvName("metrics-addr"), EnvName("addr"))
		}
	}
	c.MetricsToken = strings.TrimSpace(c.MetricsToken)
	if c.MetricsToken != "" && len(c.MetricsToken) < MinMetricsTokenLen {
		// The value itself stays out of the message: it is a secret, however weak.
		return fmt.Errorf("%s must be at least %d characters (e.g. openssl rand -hex 16)", EnvName("metrics-token"), MinMetricsTokenLen)
	}
	if c.RateLimitRPS <= 0 || c.RateLimitBurst <= 0 {
		return errors.New("rate limits must be positive")
	}
	if c.RateLimitAccountRPS < 0 || c.RateLimitAccountBurst < 0 || c.RateLimitAddressRPS < 0 || c.RateLimitAddressBurst < 0 {
		return errors.New("the rate limits per account and per address must not be negative (0 = the key's, and no limit per address)")
	}
	if _, err := ParseTrustedProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("%s: %w", EnvName("trusted-proxies"), err)
	}
	if c.RateLimitAddressRPS > 0 && c.RateLimitAddressBurst == 0 {
		return fmt.Errorf("%s must be positive when %s is", EnvName("rate-limit-address-burst"), EnvName("rate-limit-address-rps"))
	}
	if c.PublishWait < 0 || c.PublishWait > time.Minute {
		return errors.New("publish wait must be between 0 and 60s")
	}
	if c.RetryAttempts < 1 {
		return errors.New("retry attempts must be at least 1")
	}
	if c.MediaRetention != 0 && c.MediaRetention < time.Hour {
		return errors.New("media retention must be 0 (keep for good) or at least 1h")
	}
	switch {
	case c.PublishWorkers == 0:
		c.PublishWorkers = DefaultPublishWorkers
	case c.PublishWorkers < 0:
		return errors.New("publish workers must be at least 1 (0 = the default, 300)")
	}
	switch {
	case c.ConvertWorkers == 0:
		c.ConvertWorkers = DefaultConvertWorkers
	case c.ConvertWorkers < 0:
		return errors.New("convert workers must be at least 1 (0 = the default, 1)")
	}
	for p, cl := range c.OAuthClients {
		if (cl.ID == "") != (cl.Secret == "") {
			return fmt.Errorf("%s OAuth app needs both %s and %s", p, EnvName(p+"-client-id"), EnvName(p+"-client-secret"))
		}
	}
	if c.ConnectReturnURL != "" {
		if u, err := url.Parse(c.ConnectReturnURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("connect return URL %q must be an absolute http(s) URL", c.ConnectReturnURL)
		}
	}
	if c.LLMURL != "" {
		if u, err := url.Parse(c.LLMURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("LLM URL %q must be an absolute http(s) URL, such as https://api.openai.com/v1", c.LLMURL)
		}
		if strings.TrimSpace(c.LLMModel) == "" {
			return fmt.Errorf("%s is set: %s must name the model", EnvName("llm-url"), EnvName("llm-model"))
		}
	} else if c.LLMModel != "" || c.LLMAPIKey != "" {
		// Without a URL the built-in engine would answer, silently ignoring the model asked for.
		return fmt.Errorf("a language model is configured without %s (e.g. https://api.openai.com/v1)", EnvName("llm-url"))
	}
	if c.LLMTimeout < 0 {
		return errors.New("LLM timeout must not be negative (0 = the default, 60s)")
	}
	for flag, v := range map[string]string{"video-url": c.VideoURL, "video-image-url": c.VideoImageURL} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s %q must be an absolute http(s) URL, such as https://queue.fal.run/fal-ai/kling-video/v2/master/text-to-video", EnvName(flag), v)
		}
	}
	if c.VideoURL == "" && (c.VideoImageURL != "" || c.VideoAPIKey != "") {
		return fmt.Errorf("a video model is configured without %s", EnvName("video-url"))
	}
	if c.MinBodyRate < 0 || c.BodyRateWindow < 0 || c.RequestTimeout < 0 {
		return errors.New("the minimum body rate, its window and the request timeout must not be negative (0 = the defaults)")
	}
	if c.RequestTimeout > 0 && c.RequestTimeout < 2*time.Minute {
		// A publish may wait 60 s for its destinations after its body has arrived, and the AI
		// video calls REELAY_AI_WAIT (60 s by default) for their jobs.
		return fmt.Errorf("%s must be at least 2m: requests wait up to a minute by design", EnvName("request-timeout"))
	}
	if c.RequestTimeout > 0 && c.AIWait >= c.RequestTimeout {
		return fmt.Errorf("%s must be shorter than %s", EnvName("ai-wait"), EnvName("request-timeout"))
	}
	switch {
	case c.ShutdownTimeout < 0 || c.DrainDelay < 0:
		return errors.New("the shutdown timeout and the drain delay must not be negative")
	case c.ShutdownTimeout == 0:
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.VideoTimeout < 0 || c.AIWait < 0 {
		return errors.New("the video timeout and the AI wait must not be negative")
	}
	for _, limit := range []struct {
		flag string
		v    int
	}{{"max-keys-per-account", c.MaxKeysPerAccount}, {"max-projects-per-account", c.MaxProjectsPerAccount},
		{"max-channels-per-account", c.MaxChannelsPerAccount}, {"max-webhooks-per-account", c.MaxWebhooksPerAccount}} {
		if limit.v < 0 {
			return fmt.Errorf("%s is %d: a cap must be 0 (no cap) or more", EnvName(limit.flag), limit.v)
		}
	}
	if (c.OIDCIssuer == "") != (c.OIDCAudience == "") {
		return errors.New("OIDC needs both an issuer and an audience")
	}
	if c.OIDCIssuer == "" && (c.OIDCClientID != "" || c.OIDCClientSecret != "") {
		return fmt.Errorf("an OIDC client is configured without %s", EnvName("oidc-issuer"))
	}
	return nil
}

// IsPostgres tells whether the database URL selects PostgreSQL.
func (c *Config) IsPostgres() bool {
	return strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://")
}

// ParseTrustedProxies reads a comma-separated list of CIDRs and IP addresses (an address is a
// network of its own).
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an IP address nor a CIDR", item)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
