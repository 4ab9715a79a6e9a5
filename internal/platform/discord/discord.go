// Package discord publishes video to a Discord channel as a message with the video attached:
// through a webhook (credential webhook_url, https://discord.com/api/webhooks/{id}/{token}),
// or through a bot (credentials bot_token and channel_id). The body is multipart/form-data,
// streamed from the stored video: payload_json {content, attachments:[{id:0, filename}],
// allowed_mentions:{parse:[]}} and files[0].
//
// Steps, each returning the State to store before the next:
//
//  1. start: local checks (content length, upload limit), then the target is read once (GET
//     the webhook: its guild and channel make the message's link; for a bot, GET /users/@me
//     and GET /channels/{id}). It ends by arming the send: State{phase: sending, ticket}.
//  2. sending: POST {webhook_url}?wait=true (Discord then answers with the message), or POST
//     /channels/{id}/messages. Published, with https://discord.com/channels/{guild}/{channel}/
//     {message}.
//
// Never twice. Executing a webhook takes no idempotency key (nonce and enforce_nonce exist
// only on the bot's Create Message), and a webhook cannot read the channel. So the send runs
// only under a ticket (package sendonce): a random value that step 1 stores in State and keeps
// in the provider's memory, and that the send step takes out before it sends. A Step that
// finds the State armed but no ticket (a crash or restart during the request, or the same
// State stepped again) does not send through a webhook: it fails permanently (category
// internal, so that a retry of the post starts over) asking the user to look at the channel
// first. A bot can do better: it reads the channel's messages since the send was armed, and
// finds its own message there (published) or not (sent again, with the same nonce and
// enforce_nonce, so that Discord itself drops a duplicate within its dedup window). Failures
// known not to have posted (Discord's error answers, no connection, the video unreadable
// mid-body) are stored as State{phase: start, pending error} with a fresh ticket, reported
// once by the next Step, and the Step after that arms a new send.
package discord

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sendonce"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is the Discord API root that bot requests go to, version included. Webhook
// requests go to the webhook URL as the user gave it.
const DefaultBaseURL = APIRoot + "/" + APIVersion

// APIRoot is the root of Discord's API; bot calls go below it and the version
// (Config.APIVersion).
const APIRoot = "https://discord.com/api"

// APIVersion is the version of Discord's API the provider speaks (Description.API).
const APIVersion = "v10"

// DefaultMaxVideoBytes is Discord's upload limit for a server without boosts (10 MiB since
// January 2025); boosted servers allow 50 or 100 MiB.
const DefaultMaxVideoBytes = 10 << 20

// discordEpoch is the first millisecond of 2015, where snowflake timestamps start.
const discordEpoch = 1420070400000

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the API root for bot requests, version included (APIRoot and APIVersion); a
	// destination's BaseURL wins.
	BaseURL string
	// APIVersion replaces APIVersion in the API root when BaseURL is empty
	// (REELAY_DISCORD_API_VERSION).
	APIVersion string
	// MaxVideoBytes is the upload limit (DefaultMaxVideoBytes); set it for boosted servers.
	MaxVideoBytes int64
	// HTTPClient makes every request (provider.NewHTTPClient(0)).
	HTTPClient *http.Client
	// APITimeout bounds each call other than the upload (30 s).
	APITimeout time.Duration
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
	// MaxSends is how many sends one destination may make after failures that did not post
	// before a transient failure becomes permanent (sendonce.DefaultMaxSends).
	MaxSends int
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Provider is Discord's provider.Provider.
type Provider struct {
	cfg Config

	tickets sendonce.Tickets // armed sends of this process
}

// The contract the Provider keeps (internal/provider), checked by the compiler: app.New
// finds these abilities by asking.
var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.Identifier    = (*Provider)(nil)
	_ provider.OptionsReader = (*Provider)(nil)
)

// New returns a Discord provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, APIRoot+"/"+cmp.Or(cfg.APIVersion, APIVersion))
	cfg.MaxVideoBytes = provider.Positive(cfg.MaxVideoBytes, DefaultMaxVideoBytes)
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.MaxSends = provider.Positive(cfg.MaxSends, sendonce.DefaultMaxSends(cfg.Repeat))
	cfg.Now = provider.Clock(cfg.Now)
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.Discord }

const (
	phaseStart   = ""
	phaseSending = "sending"
	phaseDone    = "done"
)

// State is what the publisher stores between Steps. It holds no secret: not the webhook's
// token, not the bot's.
type State struct {
	Phase string `json:"phase,omitempty"`
	// Attempt holds the ticket that arms one send (phase sending) or one report of Pending
	// (phase start), and counts the sends made.
	sendonce.Attempt
	Checked   bool             `json:"checked,omitempty"`
	WebhookID string           `json:"webhook_id,omitempty"`
	BotID     string           `json:"bot_id,omitempty"`
	GuildID   string           `json:"guild_id,omitempty"`
	ChannelID string           `json:"channel_id,omitempty"`
	Result    *sendonce.Result `json:"result,omitempty"`
}

var webhookPath = regexp.MustCompile(`/webhooks/([0-9A-Za-z_]+)/[A-Za-z0-9_.-]+$`)

// target is one channel's way in.
type target struct {
	c         client
	webhookID string
	channelID string // a bot's channel
}

// target reads the credentials: webhook_url, else bot_token and channel_id.
func (p *Provider) target(baseURL string, creds map[string]string) (target, error) {
	c := client{hc: p.cfg.HTTPClient, timeout: p.cfg.APITimeout, now: p.cfg.Now}
	if raw := strings.TrimSpace(creds["webhook_url"]); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return target{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "the Discord webhook URL is not a URL")
		}
		m := webhookPath.FindStringSubmatch(u.Path)
		if m == nil {
			return target{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "the Discord webhook URL does not end in /webhooks/{id}/{token}")
		}
		u.RawQuery, u.Fragment = "", ""
		c.webhook = u.String()
		return target{c: c, webhookID: m[1]}, nil
	}
	token, channel := strings.TrimSpace(creds["bot_token"]), strings.TrimSpace(creds["channel_id"])
	if token == "" {
		return target{}, provider.Permanent(provider.CategoryAuthExpired, 0, "the Discord channel has neither a webhook URL nor a bot token")
	}
	if channel == "" {
		return target{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "the Discord channel has a bot token but no channel_id")
	}
	c.base = strings.TrimRight(baseURL, "/")
	if c.base == "" {
		c.base = p.cfg.BaseURL
	}
	c.botToken = strings.TrimPrefix(token, "Bot ")
	return target{c: c, channelID: channel}, nil
}

func (t target) bot() bool { return t.c.webhook == "" }

// content is the text sent: the discord object's content, else the post's caption, else its
// title.
func content(d *provider.Destination) (string, error) {
	var o Options
	if err := provider.UnmarshalStored(d.Options, &o); err != nil {
		return "", fmt.Errorf("discord options: %v", err)
	}
	return d.Text(o.Content), nil
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "Discord", &st); err != nil {
		return provider.Outcome{}, err
	}
	t, err := p.target(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, t, d, st)
	case phaseSending:
		return p.sending(ctx, t, d, st)
	case phaseDone:
		if st.Result != nil {
			return st.outcome(), nil
		}
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored Discord state has unknown phase %q", st.Phase)
}

func (p *Provider) start(ctx context.Context, t target, d *provider.Destination, st State) (provider.Outcome, error) {
	if e := st.Report(&p.tickets, p.cfg.MaxSends); e != nil {
		return provider.Outcome{}, e
	}
	text, err := content(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	caps := Description.Capabilities
	if lim := caps.Text["content"]; !lim.Check(text) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Discord message is %d UTF-16 units long; Discord accepts at most %d", lim.Count(text), lim.Max)
	}
	v := d.Video
	if v.Size <= 0 || v.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	if v.Size > p.cfg.MaxVideoBytes {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %d bytes; this Discord server accepts uploads of at most %d (boosted servers allow more)", v.Size, p.cfg.MaxVideoBytes)
	}
	if !st.Checked {
		if err := p.check(ctx, t, &st); err != nil {
			return provider.Outcome{}, err
		}
	}
	st.Phase = phaseSending
	st.Arm(&p.tickets, p.cfg.Now())
	return st.next(), nil
}

// check reads the target once: where messages land (guild, channel) and who posts them.
func (p *Provider) check(ctx context.Context, t target, st *State) error {
	// GETs: asking again changes nothing.
	get := func(u string, out any) error {
		return p.cfg.Repeat.Do(ctx, classify, func() error { return t.c.get(ctx, u, out) })
	}
	if !t.bot() {
		var w Webhook
		if err := get(t.c.webhook, &w); err != nil {
			return classify(err)
		}
		st.WebhookID, st.GuildID, st.ChannelID = w.ID, w.GuildID, w.ChannelID
	} else {
		var me User
		if err := get(t.c.base+"/users/@me", &me); err != nil {
			return classify(err)
		}
		var ch Channel
		if err := get(t.c.base+"/channels/"+url.PathEscape(t.channelID), &ch); err != nil {
			return classify(err)
		}
		st.BotID, st.GuildID, st.ChannelID = me.ID, ch.GuildID, ch.ID
	}
	st.Checked = true
	return nil
}

// sending makes the armed send, or finds out what became of an earlier one.
func (p *Provider) sending(ctx context.Context, t target, d *provider.Destination, st State) (provider.Outcome, error) {
	text, err := content(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "%v", err)
	}
	filename := "video" + provider.Extension(d.Video.ContentType)
	if !p.tickets.Take(st.Ticket) {
		if !t.bot() {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0,
				"the Discord upload started at %s was interrupted before Discord answered, so it is not known whether the video was posted "+
					"(a webhook takes no idempotency key and cannot read the channel). "+
					"Check the channel: if the video is not there, retry this post; reelay does not send it again by itself",
				st.ArmedAt.UTC().Format(time.RFC3339))
		}
		msg, found, err := p.findOwn(ctx, t, st, text, filename)
		if err != nil {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0,
				"the Discord upload started at %s was interrupted before Discord answered, and reading the channel to find out whether it was posted failed (%v). "+
					"Check the channel: if the video is not there, retry this post", st.ArmedAt.UTC().Format(time.RFC3339), err)
		}
		if found {
			return p.done(st, msg, "Found in the channel after an interrupted upload: it was not sent again."), nil
		}
		// Not in the channel: the interrupted send did not post. Send again, with the same nonce.
	}
	f := p.body(d, text, filename, t.bot())
	u := t.c.webhook + "?wait=true"
	if t.bot() {
		u = t.c.base + "/channels/" + url.PathEscape(t.channelID) + "/messages"
	}
	// A message Discord answered with an error of its own was not created (the HTTP status
	// codes, discord.com/developers/docs/topics/opcodes-and-status-codes), and one that never
	// reached it neither: it is sent again at once. One without an answer is not
	// (sendonce.Attempt.Send); a bot's carries its nonce with enforce_nonce besides.
	var msg message
	err = st.Send(ctx, p.cfg.Repeat, p.cfg.MaxSends, "Discord", classify, func() error {
		var err error
		msg, err = t.c.create(ctx, u, f)
		return err
	})
	if err != nil {
		if sendonce.Unknown(ctx, err) {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0,
				"the Discord upload ended without an answer (%v), so it is not known whether the video was posted; "+
					"check the channel and retry this post only if the video is not there", err)
		}
		st.Phase = phaseStart
		st.Fail(&p.tickets, p.cfg.Now(), sendonce.NotPosted(err, "Discord", classify))
		return st.next(), nil
	}
	return p.done(st, msg, ""), nil
}

// body is the multipart message: payload_json, then the video as files[0].
func (p *Provider) body(d *provider.Destination, text, filename string, bot bool) sendonce.Form {
	payload := map[string]any{
		"attachments":      []map[string]any{{"id": 0, "filename": filename}},
		"allowed_mentions": map[string]any{"parse": []string{}},
	}
	if text != "" {
		payload["content"] = text
	}
	if bot {
		payload["nonce"] = nonce(d.ID)
		payload["enforce_nonce"] = true
	}
	raw, _ := json.Marshal(payload)
	ctype := d.Video.ContentType
	if ctype == "" {
		ctype = "video/mp4"
	}
	return sendonce.NewForm(
		sendonce.Part{Name: "payload_json", Value: string(raw), ContentType: "application/json"},
		sendonce.Part{Name: "files[0]", Filename: filename, ContentType: ctype, Size: d.Video.Size, Open: d.Video.Open},
	)
}

// findOwn looks for the bot's message among the channel's messages since the send was armed:
// by the bot, with the same content and the same attachment.
func (p *Provider) findOwn(ctx context.Context, t target, st State, text, filename string) (message, bool, error) {
	after := snowflake(st.ArmedAt.Add(-time.Minute))
	u := fmt.Sprintf("%s/channels/%s/messages?after=%d&limit=100", t.c.base, url.PathEscape(t.channelID), after)
	var msgs []message
	if err := t.c.get(ctx, u, &msgs); err != nil {
		return message{}, false, err
	}
	for _, m := range msgs {
		if m.Author.ID == st.BotID && m.Content == text && len(m.Attachments) == 1 && m.Attachments[0].Filename == filename {
			return m, true, nil
		}
	}
	return message{}, false, nil
}

func (p *Provider) done(st State, msg message, note string) provider.Outcome {
	channel := msg.ChannelID
	if channel == "" {
		channel = st.ChannelID
	}
	st.Phase, st.Ticket, st.ChannelID = phaseDone, "", channel
	res := &sendonce.Result{ExternalID: msg.ID, Message: note}
	if st.GuildID != "" && channel != "" {
		res.URL = fmt.Sprintf("https://discord.com/channels/%s/%s/%s", st.GuildID, channel, msg.ID)
	}
	st.Result = res
	return st.outcome()
}

// Identify returns who posts with the credentials. A webhook: ExternalID "webhook:"+id, Name
// the webhook's name. A bot: ExternalID "channel:"+channel id, Name "#"+channel name, Username
// the bot's. A refused credential is an auth_expired *provider.Error.
func (p *Provider) Identify(ctx context.Context, baseURL string, creds map[string]string) (provider.Identity, error) {
	t, err := p.target(baseURL, creds)
	if err != nil {
		return provider.Identity{}, err
	}
	if !t.bot() {
		var w Webhook
		if err := t.c.get(ctx, t.c.webhook, &w); err != nil {
			return provider.Identity{}, classify(err)
		}
		id := provider.Identity{ExternalID: "webhook:" + w.ID, Name: w.Name, Username: "webhook " + w.ID}
		if w.Avatar != nil && *w.Avatar != "" {
			id.AvatarURL = "https://cdn.discordapp.com/avatars/" + w.ID + "/" + *w.Avatar + ".png"
		}
		return id, nil
	}
	var me User
	if err := t.c.get(ctx, t.c.base+"/users/@me", &me); err != nil {
		return provider.Identity{}, classify(err)
	}
	var ch Channel
	if err := t.c.get(ctx, t.c.base+"/channels/"+url.PathEscape(t.channelID), &ch); err != nil {
		return provider.Identity{}, classify(err)
	}
	return provider.Identity{ExternalID: "channel:" + ch.ID, Name: "#" + ch.Name, Username: me.Username}, nil
}

// Options returns what a post to the channel can choose and where it goes: the content (at
// most 2000 UTF-16 units), the webhook (or bot) and its channel and guild, and the upload
// limit this provider applies.
func (p *Provider) Options(ctx context.Context, baseURL string, creds map[string]string) (map[string]any, error) {
	t, err := p.target(baseURL, creds)
	if err != nil {
		return nil, err
	}
	caps := Description.Capabilities
	opts := map[string]any{}
	opts["content"] = map[string]any{"type": "string", "max": caps.Text["content"].Max, "unit": caps.Text["content"].Unit,
		"note": "mentions in it do not ping anyone; defaults to the post's caption, else its title"}
	tg := map[string]any{"max_video_bytes": p.cfg.MaxVideoBytes}
	if !t.bot() {
		var w Webhook
		if err := t.c.get(ctx, t.c.webhook, &w); err != nil {
			return nil, classify(err)
		}
		tg["webhook"] = map[string]any{"id": w.ID, "name": w.Name}
		tg["channel_id"], tg["guild_id"] = w.ChannelID, w.GuildID
	} else {
		var me User
		if err := t.c.get(ctx, t.c.base+"/users/@me", &me); err != nil {
			return nil, classify(err)
		}
		var ch Channel
		if err := t.c.get(ctx, t.c.base+"/channels/"+url.PathEscape(t.channelID), &ch); err != nil {
			return nil, classify(err)
		}
		tg["bot"] = map[string]any{"id": me.ID, "username": me.Username}
		tg["channel_id"], tg["guild_id"], tg["channel_name"] = ch.ID, ch.GuildID, ch.Name
	}
	opts["target"] = tg
	return opts, nil
}

func (st State) next() provider.Outcome {
	return provider.Next(st, provider.StatusUploading, 0)
}

func (st State) outcome() provider.Outcome {
	return st.Result.Outcome(st)
}

func classify(err error) *provider.Error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.publishError()
	}
	return provider.AsError(err)
}

// nonce is the destination's Create Message nonce (at most 25 characters), the same on every
// send of one destination.
func nonce(destinationID string) string {
	h := sha256.Sum256([]byte("reelay-discord-nonce|" + destinationID))
	return "rl" + hex.EncodeToString(h[:])[:23]
}

// snowflake is the smallest snowflake of instant t.
func snowflake(t time.Time) uint64 {
	ms := t.UnixMilli() - discordEpoch
	if ms < 0 {
		return 0
	}
	return uint64(ms) << 22
}
