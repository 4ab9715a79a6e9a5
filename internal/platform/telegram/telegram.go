// Package telegram publishes video to a Telegram channel (or group) through the Bot API: one
// multipart sendVideo request, streamed from the stored video, by a bot that is an
// administrator of the chat. Credentials are bot_token and chat_id (a numeric id or
// @channelusername).
//
// Steps, each returning the State to store before the next:
//
//  1. start: local checks (caption length, video size), then getMe and getChatMember, so that a
//     bot that is not allowed to post fails before a byte of video is sent. It ends by arming
//     the send: State{phase: sending, ticket}.
//  2. sending: sendVideo with chat_id, video, caption (plain text: no parse_mode, so nothing
//     in it is read as markup), supports_streaming, width, height, duration and, when the
//     post's thumbnail qualifies (JPEG, under 200 kB, at most 320 px a side), thumbnail as
//     attach://reelay_thumbnail. Published, with the post's t.me link.
//
// Never twice. sendVideo takes no idempotency key and a bot cannot read a channel's history,
// so once a sendVideo may have reached Telegram nothing can tell whether it posted. The send
// therefore runs only under a ticket (package sendonce): a random value that step 1 stores in
// State and keeps in the provider's memory, and that the send step takes out of memory before
// it sends. A second Step with the same State (after a crash, a restart, or a failure the
// publisher retries) finds no ticket and does not send: it fails with a permanent error
// (category internal, so that POST /posts/{id}/retry starts over) that asks the user to look
// at the channel and retry only if the video is not there. Failures that are known not to have
// posted (Telegram's own error answers, a connection never made, the video unreadable
// mid-upload) do not reach that point: the send step stores them as State{phase: start,
// pending error} with a fresh ticket, the next Step reports the error to the publisher once
// (which retries transient ones with back-off), and the Step after that arms a new send.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sendonce"
	"github.com/reelay/reelay/internal/provider"
)

// DefaultBaseURL is the Bot API's host.
const DefaultBaseURL = "https://api.telegram.org"

// Upload limits of sendVideo: "Bots can currently send video files of up to 50 MB in size"
// through the cloud Bot API; a self-hosted Bot API server (telegram-bot-api --local) accepts
// files up to 2000 MB.
const (
	CloudMaxVideoBytes = 50 * 1000 * 1000
	LocalMaxVideoBytes = 2000 * 1000 * 1000
)

// Thumbnail rule of sendVideo: "JPEG format and less than 200 kB in size. A thumbnail's width
// and height should not exceed 320."
const (
	maxThumbBytes = 200 * 1000
	maxThumbSide  = 320
)

// Config configures the provider. Zero fields take the defaults in their comments.
type Config struct {
	// BaseURL is the Bot API server (DefaultBaseURL; a self-hosted server's URL for a local
	// Bot API). A destination's BaseURL wins over it.
	BaseURL string
	// LocalServer says BaseURL is a self-hosted Bot API server, which accepts videos up to
	// LocalMaxVideoBytes instead of CloudMaxVideoBytes.
	LocalServer bool
	// MaxVideoBytes overrides the upload limit (0: by LocalServer).
	MaxVideoBytes int64
	// HTTPClient makes every request (provider.NewHTTPClient(0): uploads are bounded by their
	// context).
	HTTPClient *http.Client
	// APITimeout bounds each call other than the upload (30 s).
	APITimeout time.Duration
	// Repeat is how a call that failed transiently is made again within a Step (provider.Repeat's
	// defaults); each call says why repeating it is safe.
	Repeat provider.Repeat
	// MaxSends is how many sendVideo requests one destination may make after failures that
	// did not post before a transient failure becomes permanent (sendonce.DefaultMaxSends).
	MaxSends int
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Provider is Telegram's provider.Provider.
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

// New returns a Telegram provider.
func New(cfg Config) *Provider {
	cfg.BaseURL = provider.BaseURL(cfg.BaseURL, DefaultBaseURL)
	if cfg.MaxVideoBytes <= 0 {
		cfg.MaxVideoBytes = CloudMaxVideoBytes
		if cfg.LocalServer {
			cfg.MaxVideoBytes = LocalMaxVideoBytes
		}
	}
	cfg.HTTPClient = provider.HTTPClient(cfg.HTTPClient, 0)
	cfg.APITimeout = provider.Positive(cfg.APITimeout, provider.DefaultAPITimeout)
	cfg.MaxSends = provider.Positive(cfg.MaxSends, sendonce.DefaultMaxSends(cfg.Repeat))
	cfg.Now = provider.Clock(cfg.Now)
	return &Provider{cfg: cfg}
}

// Platform implements provider.Provider.
func (p *Provider) Platform() string { return platform.Telegram }

// Phases of State.
const (
	phaseStart   = ""
	phaseSending = "sending"
	phaseDone    = "done"
)

// State is what the publisher stores between Steps. It holds no secret.
type State struct {
	Phase string `json:"phase,omitempty"`
	// Attempt holds the ticket that arms one send (phase sending) or one report of Pending
	// (phase start), and counts the sendVideo requests made.
	sendonce.Attempt
	// Checked is set once getMe and getChatMember allowed the post.
	Checked  bool             `json:"checked,omitempty"`
	BotID    int64            `json:"bot_id,omitempty"`
	ChatID   int64            `json:"chat_id,omitempty"`
	ChatUser string           `json:"chat_username,omitempty"`
	Message  int64            `json:"message_id,omitempty"`
	Result   *sendonce.Result `json:"result,omitempty"`
}

// Step implements provider.Provider.
func (p *Provider) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	var st State
	if err := provider.ReadState(d, "Telegram", &st); err != nil {
		return provider.Outcome{}, err
	}
	c, chatID, err := p.client(d.BaseURL, d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	switch st.Phase {
	case phaseStart:
		return p.start(ctx, c, chatID, d, st)
	case phaseSending:
		return p.send(ctx, c, chatID, d, st)
	case phaseDone:
		if st.Result != nil {
			return st.outcome(), nil
		}
	}
	return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "stored Telegram state has unknown phase %q", st.Phase)
}

// client resolves the API base and the channel's credentials.
func (p *Provider) client(baseURL string, creds map[string]string) (client, string, error) {
	token, chatID := strings.TrimSpace(creds["bot_token"]), strings.TrimSpace(creds["chat_id"])
	if token == "" {
		return client{}, "", provider.Permanent(provider.CategoryAuthExpired, 0, "the Telegram channel has no bot token")
	}
	if chatID == "" {
		return client{}, "", provider.Permanent(provider.CategoryInvalidOptions, 0, "the Telegram channel has no chat_id")
	}
	base := strings.TrimRight(baseURL, "/")
	if base == "" {
		base = p.cfg.BaseURL
	}
	return client{base: base, token: token, hc: p.cfg.HTTPClient, timeout: p.cfg.APITimeout, now: p.cfg.Now}, chatID, nil
}

// caption is the text sent: the telegram object's caption, else the post's caption, else its
// title.
func caption(d *provider.Destination) (string, error) {
	var o Options
	if err := provider.UnmarshalStored(d.Options, &o); err != nil {
		return "", fmt.Errorf("telegram options: %v", err)
	}
	return d.Text(o.Caption), nil
}

// start reports a pending error once, checks the post, and arms the send.
func (p *Provider) start(ctx context.Context, c client, chatID string, d *provider.Destination, st State) (provider.Outcome, error) {
	if e := st.Report(&p.tickets, p.cfg.MaxSends); e != nil {
		return provider.Outcome{}, e
	}
	text, err := caption(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	caps := Description.Capabilities
	if lim := caps.Text["caption"]; !lim.Check(text) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0,
			"the Telegram caption is %d UTF-16 units long; Telegram accepts at most %d", lim.Count(text), lim.Max)
	}
	v := d.Video
	if v.Size <= 0 || v.Open == nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "the video is empty")
	}
	if v.Size > p.cfg.MaxVideoBytes {
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"the video is %d bytes; the Telegram Bot API accepts at most %d (a self-hosted Bot API server allows %d)",
			v.Size, p.cfg.MaxVideoBytes, int64(LocalMaxVideoBytes))
	}
	if !st.Checked {
		bot, err := p.rights(ctx, c, chatID)
		if err != nil {
			return provider.Outcome{}, err
		}
		st.Checked, st.BotID = true, bot.ID
	}
	st.Phase = phaseSending
	st.Arm(&p.tickets, p.cfg.Now())
	return st.next(), nil
}

// rights checks that the bot may post in the chat: an administrator with can_post_messages in
// a channel; in a group, a member not restricted from sending videos.
func (p *Provider) rights(ctx context.Context, c client, chatID string) (User, error) {
	// getMe and getChatMember read: asking again changes nothing.
	var bot User
	err := p.cfg.Repeat.Do(ctx, classify, func() error {
		var err error
		bot, err = c.getMe(ctx)
		return err
	})
	if err != nil {
		return User{}, classify(err)
	}
	var m ChatMember
	err = p.cfg.Repeat.Do(ctx, classify, func() error {
		var err error
		m, err = c.getChatMember(ctx, chatID, bot.ID)
		return err
	})
	if err != nil {
		return User{}, classify(err)
	}
	if err := canPost(m, chatID); err != nil {
		return User{}, err
	}
	return bot, nil
}

// canPost turns a ChatMember into a clear error when it cannot post. A channel's members other
// than administrators cannot post at all; there Telegram reports can_post_messages.
func canPost(m ChatMember, chatID string) *provider.Error {
	switch m.Status {
	case "creator":
		return nil
	case "administrator":
		if m.CanPostMessages != nil && !*m.CanPostMessages {
			return provider.Permanent(provider.CategoryAuthExpired, http.StatusForbidden,
				"the bot is an administrator of Telegram chat %s without the right to post messages: turn on \"Post messages\" in its administrator rights", chatID)
		}
		return nil
	case "member":
		if m.CanPostMessages == nil {
			return nil // a group member; a channel reports administrators only
		}
		return provider.Permanent(provider.CategoryAuthExpired, http.StatusForbidden,
			"the bot is not an administrator of Telegram channel %s: add it as an administrator allowed to post messages", chatID)
	case "restricted":
		if (m.IsMember == nil || *m.IsMember) && (m.CanSendVideos == nil || *m.CanSendVideos) {
			return nil
		}
		return provider.Permanent(provider.CategoryAuthExpired, http.StatusForbidden,
			"the bot is restricted in Telegram chat %s and cannot send videos", chatID)
	case "left", "kicked":
		return provider.Permanent(provider.CategoryAuthExpired, http.StatusForbidden,
			"the bot is not in Telegram chat %s (status %s): add it as an administrator allowed to post messages", chatID, m.Status)
	}
	return provider.Permanent(provider.CategoryAuthExpired, http.StatusForbidden,
		"the bot's status in Telegram chat %s is %q; it must be an administrator allowed to post messages", chatID, m.Status)
}

// send makes the one sendVideo request of an armed State.
func (p *Provider) send(ctx context.Context, c client, chatID string, d *provider.Destination, st State) (provider.Outcome, error) {
	if !p.tickets.Take(st.Ticket) {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0,
			"the Telegram upload started at %s was interrupted before Telegram answered, so it is not known whether the video was posted "+
				"(sendVideo cannot be repeated safely and a bot cannot read the channel's history). "+
				"Check the channel %s: if the video is not there, retry this post; reelay does not send it again by itself",
			st.ArmedAt.UTC().Format(time.RFC3339), chatID)
	}
	text, err := caption(d)
	if err != nil {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInvalidOptions, 0, "%v", err)
	}
	f, note := p.sendForm(chatID, text, d)
	// A sendVideo Telegram refused ("If 'ok' equals False, the request was unsuccessful",
	// core.telegram.org/bots/api#making-requests) or that never reached it posted nothing, and
	// is sent again at once; one without an answer is not (sendonce.Attempt.Send).
	var msg message
	err = st.Send(ctx, p.cfg.Repeat, p.cfg.MaxSends, "Telegram", classify, func() error {
		var err error
		msg, err = c.upload(ctx, "sendVideo", f)
		return err
	})
	if err != nil {
		if sendonce.Unknown(ctx, err) {
			return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0,
				"the Telegram upload ended without an answer (%v), so it is not known whether the video was posted; "+
					"check the channel %s and retry this post only if the video is not there", err, chatID)
		}
		// Telegram did not post it: keep the error, to be reported once by the next Step.
		st.Phase = phaseStart
		st.Fail(&p.tickets, p.cfg.Now(), sendonce.NotPosted(err, "Telegram", classify))
		return st.next(), nil
	}
	st.Phase, st.Ticket = phaseDone, ""
	st.ChatID, st.ChatUser, st.Message = msg.Chat.ID, msg.Chat.Username, msg.MessageID
	res := &sendonce.Result{ExternalID: fmt.Sprintf("%d:%d", msg.Chat.ID, msg.MessageID), URL: postURL(msg.Chat, msg.MessageID)}
	var notes []string
	if note != "" {
		notes = append(notes, note)
	}
	if msg.Video == nil && msg.Document != nil {
		notes = append(notes, "Telegram did not recognize the file as a streamable video and posted it as a document.")
	}
	if res.URL == "" {
		notes = append(notes, "The chat is private and has no public link; the message is in the chat.")
	}
	res.Message = strings.Join(notes, " ")
	st.Result = res
	return st.outcome(), nil
}

// sendForm builds the sendVideo body, and a note when the thumbnail is left out.
func (p *Provider) sendForm(chatID, text string, d *provider.Destination) (sendonce.Form, string) {
	v := d.Video
	ctype := v.ContentType
	if ctype == "" {
		ctype = "video/mp4"
	}
	f := sendonce.NewForm(
		sendonce.Part{Name: "chat_id", Value: chatID},
		sendonce.Part{Name: "video", Filename: "video" + provider.Extension(ctype), ContentType: ctype, Size: v.Size, Open: v.Open},
	)
	if text != "" {
		f.Parts = append(f.Parts, sendonce.Part{Name: "caption", Value: text})
	}
	f.Parts = append(f.Parts, sendonce.Part{Name: "supports_streaming", Value: "true"})
	if v.Width > 0 && v.Height > 0 {
		f.Parts = append(f.Parts, sendonce.Part{Name: "width", Value: strconv.Itoa(v.Width)}, sendonce.Part{Name: "height", Value: strconv.Itoa(v.Height)})
	}
	if v.Duration > 0 {
		secs := int(math.Round(v.Duration.Seconds()))
		f.Parts = append(f.Parts, sendonce.Part{Name: "duration", Value: strconv.Itoa(max(secs, 1))})
	}
	note := ""
	if t := d.Thumbnail; t != nil {
		if why := thumbnailProblem(t); why != "" {
			note = "The thumbnail was not sent: " + why + "; Telegram made its own."
		} else {
			f.Parts = append(f.Parts, sendonce.Part{Name: "thumbnail", Value: "attach://reelay_thumbnail"},
				sendonce.Part{Name: "reelay_thumbnail", Filename: "thumbnail.jpg", ContentType: "image/jpeg", Size: t.Size, Open: t.Open})
		}
	}
	return f, note
}

// thumbnailProblem says why a thumbnail does not meet sendVideo's rule ("" when it does).
func thumbnailProblem(t *provider.Media) string {
	switch {
	case t.Open == nil || t.Size <= 0:
		return "it is empty"
	case t.ContentType != "image/jpeg":
		return "Telegram takes only JPEG thumbnails"
	case t.Size >= maxThumbBytes:
		return fmt.Sprintf("it is %d bytes and Telegram takes less than 200 kB", t.Size)
	case t.Width <= 0 || t.Height <= 0:
		return "its size in pixels is unknown"
	case t.Width > maxThumbSide || t.Height > maxThumbSide:
		return fmt.Sprintf("it is %dx%d and Telegram takes at most 320 px a side", t.Width, t.Height)
	}
	return ""
}

// postURL is the public link of a message: t.me/{username}/{id} in a public chat,
// t.me/c/{internal id}/{id} in a private channel or supergroup (readable by its members), ""
// in a basic group or private chat.
func postURL(ch Chat, msgID int64) string {
	if ch.Username != "" {
		return fmt.Sprintf("https://t.me/%s/%d", ch.Username, msgID)
	}
	const prefix = -1_000_000_000_000 // -100… ids of channels and supergroups
	if ch.ID < prefix {
		return fmt.Sprintf("https://t.me/c/%d/%d", -ch.ID+prefix, msgID)
	}
	return ""
}

// Identify returns the chat that the credentials post to, after checking that the bot may
// post there: ExternalID is the chat's numeric id, Name its title, Username its @username.
// baseURL "" means the configured one. A refused token or a bot without the right to post is
// an auth_expired *provider.Error.
func (p *Provider) Identify(ctx context.Context, baseURL string, creds map[string]string) (provider.Identity, error) {
	c, chatID, err := p.client(baseURL, creds)
	if err != nil {
		return provider.Identity{}, err
	}
	ch, _, _, err := p.target(ctx, c, chatID)
	if err != nil {
		return provider.Identity{}, err
	}
	id := provider.Identity{ExternalID: strconv.FormatInt(ch.ID, 10), Name: ch.Title}
	if ch.Username != "" {
		id.Username = "@" + ch.Username
	}
	if id.Name == "" {
		id.Name = id.Username
	}
	return id, nil
}

// target reads the bot, the chat and the bot's membership, and checks the bot may post.
func (p *Provider) target(ctx context.Context, c client, chatID string) (Chat, User, ChatMember, error) {
	bot, err := c.getMe(ctx)
	if err != nil {
		return Chat{}, User{}, ChatMember{}, classify(err)
	}
	ch, err := c.getChat(ctx, chatID)
	if err != nil {
		return Chat{}, User{}, ChatMember{}, classify(err)
	}
	m, err := c.getChatMember(ctx, chatID, bot.ID)
	if err != nil {
		return Chat{}, User{}, ChatMember{}, classify(err)
	}
	if err := canPost(m, chatID); err != nil {
		return Chat{}, User{}, ChatMember{}, err
	}
	return ch, bot, m, nil
}

// Options returns what a post to the channel can choose and where it goes: the caption (plain
// text, at most 1024 UTF-16 units), the target chat, the bot and its rights there, and the
// upload limit. Errors are *provider.Error values, classified as for Step.
func (p *Provider) Options(ctx context.Context, baseURL string, creds map[string]string) (map[string]any, error) {
	c, chatID, err := p.client(baseURL, creds)
	if err != nil {
		return nil, err
	}
	ch, bot, m, err := p.target(ctx, c, chatID)
	if err != nil {
		return nil, err
	}
	caps := Description.Capabilities
	opts := map[string]any{}
	opts["caption"] = map[string]any{"type": "string", "max": caps.Text["caption"].Max, "unit": caps.Text["caption"].Unit,
		"note": "sent as plain text (no Markdown or HTML); defaults to the post's caption, else its title"}
	rights := map[string]any{"status": m.Status}
	if m.CanPostMessages != nil {
		rights["can_post_messages"] = *m.CanPostMessages
	}
	opts["target"] = map[string]any{
		"chat":             map[string]any{"id": ch.ID, "type": ch.Type, "title": ch.Title, "username": ch.Username},
		"bot":              map[string]any{"id": bot.ID, "username": bot.Username, "rights": rights},
		"max_video_bytes":  p.cfg.MaxVideoBytes,
		"thumbnail_rule":   "JPEG, under 200 kB, at most 320 px a side; other thumbnails are left out",
		"public_post_link": ch.Username != "",
	}
	return opts, nil
}

func (st State) next() provider.Outcome {
	return provider.Next(st, provider.StatusUploading, 0)
}

func (st State) outcome() provider.Outcome {
	return st.Result.Outcome(st)
}

// classify turns a call's error into a *provider.Error.
func classify(err error) *provider.Error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.publishError()
	}
	return provider.AsError(err)
}
