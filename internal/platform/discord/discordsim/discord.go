// Package discordsim is the simulator of Discord's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package discordsim

// Discord API simulator: webhooks and a bot's channel messages. Sources: Discord developer
// docs for Execute Webhook, Get Webhook with Token, Create Message (nonce, enforce_nonce), Get
// Channel Messages, Uploading Files, rate limits (429 body and X-RateLimit-* headers) and JSON
// error codes, as mirrored by discord-api-types and discord.js; the 10 MiB default upload
// limit (discord-api-docs, January 2025).
//
// What it reproduces:
//   - paths below /api, with or without a version (/api/v{N}), as Discord's API root is
//     https://discord.com/api (its reference's "Base URL"); anything else is 404:
//     /webhooks/{id}/{token} (GET,
//     POST), /users/@me, /channels/{id}, /channels/{id}/messages (GET, POST) with
//     "Authorization: Bot {token}";
//   - a webhook's token resolved with Config.Accounts, and its id equal to that account's id
//     (else 401 Invalid Webhook Token, code 50027); a bot token resolved the same way, its
//     channel the account's (else 404 Unknown Channel, 10003);
//   - one guild and one text channel per account, with snowflake ids derived from the account;
//   - Execute Webhook: multipart/form-data with payload_json and files[n], or JSON; content at
//     most 2000 UTF-16 units; attachments[].id referring to a files[id] part; allowed_mentions
//     parse values; an empty message refused (50006); a file over the upload limit (10 MiB,
//     Options.MaxUploadBytes) → 413 code 40005, hashed as it streams and never held in
//     memory; wait=true answers the message, otherwise 204;
//   - Create Message likewise, plus nonce (at most 25 characters) and enforce_nonce: the same
//     nonce from the same author within Options.NonceWindow answers the first message
//     and creates none;
//   - Get Channel Messages with after/before and limit (1-100), newest first;
//   - errors {"code","message","errors"}; faults: unavailable → 500, auth → 404 Unknown
//     Webhook (10015) or 401 for a bot, rate_limit → 429 {"message","retry_after","global"}
//     with Retry-After and X-RateLimit-* headers, reject → 400 code 20009 (explicit content).
//     Discord posts synchronously: processing_ms has no effect.
//
// A channel's messages, the snowflake it handed out last and the nonces of its messages within
// the nonce window are records of Config.State, so that any process serving the simulator, or
// one started after a restart, lists the same messages and answers a repeated nonce with its
// first message. A message takes its files whole in its one request, and nothing refers to
// their bytes afterwards: they are hashed as they stream and none is kept.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

const (
	dcDefaultMaxUpload = 10 << 20
	dcMaxContent       = 2000
	dcMaxFiles         = 10
	dcMaxJSON          = 1 << 20
	dcEpoch            = 1420070400000
	dcDefaultNonceWin  = 5 * time.Minute
)

// Options tune the Discord simulator.
type Options struct {
	// MaxUploadBytes is the largest file accepted (10 MiB, a server without boosts).
	MaxUploadBytes int64
	// NonceWindow is how long enforce_nonce remembers a nonce (5 minutes: "the past few
	// minutes").
	NonceWindow time.Duration
}

// Sim is the Discord API simulator.
type Sim struct {
	cfg  sim.Config
	opts Options
}

// The kinds of the Discord simulator's records.
const (
	// dcChannelKind is an account's text channel (dcChannel), kept until retention.
	dcChannelKind = "channel"
	// dcMessageKind is a message of an account's channel (dcMessage, under dcMessageID), kept
	// until retention.
	dcMessageKind = "message"
	// dcNonceKind is the messages an author created with one nonce in a channel within the
	// nonce window ([]dcNonceUse, under dcNonceID), expiring with the window of the last.
	dcNonceKind = "nonce"
)

func dcKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Discord, Kind: kind, ID: id} }

// dcMessageID is the id of a message's record: its channel's and its own.
func dcMessageID(channel, id string) string { return channel + "/" + id }

// dcNonceID is the id of the record of an author's nonce in a channel.
func dcNonceID(channel, author, nonce string) string { return channel + "/" + author + "/" + nonce }

// dcChannel is what the simulator keeps of an account's channel: the last snowflake it handed
// out to a message or an attachment.
type dcChannel struct {
	Last uint64 `json:"last"`
}

// next hands out the channel's next snowflake at t: t's millisecond since Discord's epoch in
// the high bits, low the worker, process and increment fields below (which mean nothing here
// but make two channels' ids of one millisecond differ), and above the last one, so that the
// channel's ids increase whichever process, with whichever clock, makes them.
func (c *dcChannel) next(t time.Time, low uint64) string {
	c.Last = max(uint64(max(t.UnixMilli()-dcEpoch, 0))<<22|low&(1<<22-1), c.Last+1)
	return strconv.FormatUint(c.Last, 10)
}

// dcNonceUse is a message created with a nonce, and when.
type dcNonceUse struct {
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

type dcMessage struct {
	ID          string         `json:"id"`
	Type        int            `json:"type"`
	ChannelID   string         `json:"channel_id"`
	Content     string         `json:"content"`
	Author      map[string]any `json:"author"`
	WebhookID   string         `json:"webhook_id,omitempty"`
	Attachments []dcAttachment `json:"attachments"`
	Embeds      []any          `json:"embeds"`
	Timestamp   string         `json:"timestamp"`
	Nonce       string         `json:"nonce,omitempty"`
}

type dcAttachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	Size        int64  `json:"size"`
	URL         string `json:"url"`
	ProxyURL    string `json:"proxy_url"`
	ContentType string `json:"content_type,omitempty"`
}

// New returns the Discord API simulator.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the simulator with options.
func NewSim(cfg sim.Config, o Options) *Sim {
	cfg.Normalize()
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = dcDefaultMaxUpload
	}
	if o.NonceWindow <= 0 {
		o.NonceWindow = dcDefaultNonceWin
	}
	return &Sim{cfg: cfg, opts: o}
}

func dcID(kind, account string) string {
	h := sha256.Sum256([]byte("discord-" + kind + "|" + account))
	// A snowflake of 2020–2024 with random low bits.
	ms := uint64(1577836800000-dcEpoch) + binary.BigEndian.Uint64(h[:8])%(4*365*24*3600*1000)
	return strconv.FormatUint(ms<<22|binary.BigEndian.Uint64(h[8:16])&(1<<22-1), 10)
}

// GuildID, ChannelID and BotID are the snowflakes of an account's
// sandbox guild, its text channel, and the bot user that its bot token belongs to.
func GuildID(account string) string   { return dcID("guild", account) }
func ChannelID(account string) string { return dcID("channel", account) }
func BotID(account string) string     { return dcID("bot", account) }

type dcErr struct {
	status int
	code   int
	msg    string
	errors map[string]any
}

func dcWrite(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-RateLimit-Limit", "5")
	w.Header().Set("X-RateLimit-Remaining", "4")
	w.Header().Set("X-RateLimit-Reset-After", "1")
	w.Header().Set("X-RateLimit-Bucket", "sandbox")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// dcInternal is Discord's answer to a failure of the simulator's own (its State): a server
// error, which clients retry.
var dcInternal = dcErr{status: http.StatusInternalServerError, code: 0, msg: "500: Internal Server Error"}

func dcFail(w http.ResponseWriter, e dcErr) {
	body := map[string]any{"code": e.code, "message": e.msg}
	if e.errors != nil {
		body["errors"] = e.errors
	}
	dcWrite(w, e.status, body)
}

// dcField is a 50035 Invalid Form Body with one field error at path (dot separated).
func dcField(path, code, msg string) dcErr {
	leaf := map[string]any{"_errors": []any{map[string]any{"code": code, "message": msg}}}
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		leaf = map[string]any{parts[i]: leaf}
	}
	return dcErr{status: http.StatusBadRequest, code: 50035, msg: "Invalid Form Body", errors: leaf}
}

var dcVersion = regexp.MustCompile(`^v[0-9]+$`)

func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	notFound := dcErr{status: http.StatusNotFound, code: 0, msg: "404: Not Found"}
	if len(segs) == 0 || segs[0] != "api" {
		dcFail(w, notFound)
		return
	}
	segs = segs[1:]
	if len(segs) > 0 && dcVersion.MatchString(segs[0]) {
		segs = segs[1:]
	}
	switch {
	case len(segs) == 3 && segs[0] == "webhooks":
		acct, ok := s.cfg.Accounts.Resolve(r.Context(), segs[2])
		if !ok || acct.ID != segs[1] {
			dcFail(w, dcErr{status: http.StatusUnauthorized, code: 50027, msg: "Invalid Webhook Token"})
			return
		}
		if s.fault(w, acct, true) {
			return
		}
		switch r.Method {
		case http.MethodGet:
			dcWrite(w, http.StatusOK, s.webhook(acct, segs[2]))
		case http.MethodPost:
			s.create(w, r, acct, true)
		default:
			dcFail(w, dcErr{status: http.StatusMethodNotAllowed, code: 0, msg: "405: Method Not Allowed"})
		}
	case len(segs) >= 2 && (segs[0] == "users" || segs[0] == "channels"):
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bot ")
		acct, found := s.cfg.Accounts.Resolve(r.Context(), tok)
		if !ok || !found {
			dcFail(w, dcErr{status: http.StatusUnauthorized, code: 0, msg: "401: Unauthorized"})
			return
		}
		if s.fault(w, acct, false) {
			return
		}
		switch {
		case len(segs) == 2 && segs[0] == "users" && segs[1] == "@me" && r.Method == http.MethodGet:
			dcWrite(w, http.StatusOK, s.botUser(acct))
		case segs[0] == "channels" && segs[1] != ChannelID(acct.ID):
			dcFail(w, dcErr{status: http.StatusNotFound, code: 10003, msg: "Unknown Channel"})
		case len(segs) == 2 && segs[0] == "channels" && r.Method == http.MethodGet:
			dcWrite(w, http.StatusOK, map[string]any{"id": ChannelID(acct.ID), "type": 0, "guild_id": GuildID(acct.ID),
				"name": "sandbox-videos", "position": 0, "nsfw": false})
		case len(segs) == 3 && segs[0] == "channels" && segs[2] == "messages" && r.Method == http.MethodPost:
			s.create(w, r, acct, false)
		case len(segs) == 3 && segs[0] == "channels" && segs[2] == "messages" && r.Method == http.MethodGet:
			s.list(w, r, acct)
		default:
			dcFail(w, notFound)
		}
	default:
		dcFail(w, notFound)
	}
}

// fault answers the account's call fault, if any.
func (s *Sim) fault(w http.ResponseWriter, a sim.Account, webhook bool) bool {
	switch sim.CallFault(a.Behavior, s.cfg.Rand) {
	case sim.FailUnavailable:
		dcFail(w, dcErr{status: http.StatusInternalServerError, code: 0, msg: "500: Internal Server Error"})
	case sim.FailAuth:
		if webhook {
			dcFail(w, dcErr{status: http.StatusNotFound, code: 10015, msg: "Unknown Webhook"})
		} else {
			dcFail(w, dcErr{status: http.StatusUnauthorized, code: 0, msg: "401: Unauthorized"})
		}
	case sim.FailRateLimit:
		w.Header().Set("Retry-After", "2")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Limit", "5")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset-After", "1.500")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatFloat(float64(s.cfg.Now().Add(1500*time.Millisecond).UnixMilli())/1000, 'f', 3, 64))
		w.Header().Set("X-RateLimit-Bucket", "sandbox")
		w.Header().Set("X-RateLimit-Scope", "user")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(map[string]any{"message": "You are being rate limited.", "retry_after": 1.5, "global": false})
	default:
		return false
	}
	return true
}

func (s *Sim) webhook(a sim.Account, token string) map[string]any {
	name := a.Username
	if name == "" {
		name = "Reelay sandbox"
	}
	return map[string]any{"type": 1, "id": a.ID, "name": name, "avatar": nil, "channel_id": ChannelID(a.ID),
		"guild_id": GuildID(a.ID), "application_id": nil, "token": token}
}

func (s *Sim) botUser(a sim.Account) map[string]any {
	return map[string]any{"id": BotID(a.ID), "username": "reelay-sandbox", "discriminator": "0", "bot": true, "avatar": nil}
}

// dcUpload is one file part as received.
type dcUpload struct {
	field, filename, ctype string
	size                   int64
	sha                    string
}

func (s *Sim) create(w http.ResponseWriter, r *http.Request, a sim.Account, webhook bool) {
	wait := true
	if webhook {
		switch v := r.URL.Query().Get("wait"); v {
		case "true", "True", "1":
		case "", "false", "False", "0":
			wait = false
		default:
			dcFail(w, dcField("wait", "BOOLEAN_TYPE_COERCE", fmt.Sprintf("Value %q is not a valid boolean.", v)))
			return
		}
	}
	if r.ContentLength > dcMaxFiles*s.opts.MaxUploadBytes+dcMaxJSON {
		dcFail(w, dcErr{status: http.StatusRequestEntityTooLarge, code: 40005, msg: "Request entity too large"})
		return
	}
	var payload json.RawMessage
	var files []dcUpload
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(r.Body, dcMaxJSON+1))
		if err != nil || len(b) > dcMaxJSON {
			dcFail(w, dcErr{status: http.StatusRequestEntityTooLarge, code: 40005, msg: "Request entity too large"})
			return
		}
		payload = b
	case "multipart/form-data":
		if params["boundary"] == "" {
			dcFail(w, dcErr{status: http.StatusBadRequest, code: 50035, msg: "Invalid Form Body"})
			return
		}
		mr, err := r.MultipartReader()
		if err != nil {
			dcFail(w, dcErr{status: http.StatusBadRequest, code: 50035, msg: "Invalid Form Body"})
			return
		}
		fields := map[string]string{}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				dcFail(w, dcErr{status: http.StatusBadRequest, code: 50035, msg: "Invalid Form Body"})
				return
			}
			name := part.FormName()
			if part.FileName() == "" {
				b, err := io.ReadAll(io.LimitReader(part, dcMaxJSON+1))
				part.Close()
				if err != nil || len(b) > dcMaxJSON {
					dcFail(w, dcErr{status: http.StatusRequestEntityTooLarge, code: 40005, msg: "Request entity too large"})
					return
				}
				fields[name] = string(b)
				continue
			}
			if len(files) == dcMaxFiles {
				part.Close()
				dcFail(w, dcErr{status: http.StatusBadRequest, code: 30015, msg: "Maximum number of attachments in a message reached (10)"})
				return
			}
			up, tooBig, err := s.readUpload(part)
			part.Close()
			if err != nil {
				dcFail(w, dcErr{status: http.StatusBadRequest, code: 50035, msg: "Invalid Form Body"})
				return
			}
			if tooBig {
				dcFail(w, dcErr{status: http.StatusRequestEntityTooLarge, code: 40005, msg: "Request entity too large"})
				return
			}
			files = append(files, up)
		}
		if pj, ok := fields["payload_json"]; ok {
			payload = json.RawMessage(pj)
		} else {
			m := map[string]any{}
			if c, ok := fields["content"]; ok {
				m["content"] = c
			}
			payload, _ = json.Marshal(m)
		}
	default:
		dcFail(w, dcErr{status: http.StatusBadRequest, code: 50035, msg: "Invalid Form Body"})
		return
	}
	s.post(w, r, a, webhook, wait, payload, files)
}

func (s *Sim) readUpload(part *multipart.Part) (dcUpload, bool, error) {
	up := dcUpload{field: part.FormName(), filename: part.FileName(), ctype: part.Header.Get("Content-Type")}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(part, s.opts.MaxUploadBytes+1))
	if err != nil {
		return up, false, err
	}
	if n > s.opts.MaxUploadBytes {
		return up, true, nil
	}
	up.size, up.sha = n, hex.EncodeToString(h.Sum(nil))
	return up, false, nil
}

var dcFileField = regexp.MustCompile(`^files\[([0-9]+)\]$`)

type dcPayload struct {
	Content     *string `json:"content"`
	Attachments []struct {
		ID       json.Number `json:"id"`
		Filename string      `json:"filename"`
	} `json:"attachments"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
	Embeds       []json.RawMessage `json:"embeds"`
	Nonce        json.RawMessage   `json:"nonce"`
	EnforceNonce bool              `json:"enforce_nonce"`
}

func (s *Sim) post(w http.ResponseWriter, r *http.Request, a sim.Account, webhook, wait bool, raw json.RawMessage, files []dcUpload) {
	var p dcPayload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		dcFail(w, dcErr{status: http.StatusBadRequest, code: 50109, msg: "The request body contains invalid JSON."})
		return
	}
	text := ""
	if p.Content != nil {
		text = *p.Content
	}
	if len(utf16.Encode([]rune(text))) > dcMaxContent {
		dcFail(w, dcField("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length."))
		return
	}
	if p.AllowedMentions != nil {
		for i, v := range p.AllowedMentions.Parse {
			if v != "roles" && v != "users" && v != "everyone" {
				dcFail(w, dcField(fmt.Sprintf("allowed_mentions.parse.%d", i), "ENUM_TYPE_COERCE", fmt.Sprintf("Value %q is not a valid enum value.", v)))
				return
			}
		}
	}
	byIndex := map[string]*dcUpload{}
	for i := range files {
		m := dcFileField.FindStringSubmatch(files[i].field)
		if m == nil && files[i].field != "file" {
			dcFail(w, dcField("files", "BINARY_TYPE_INVALID", fmt.Sprintf("Unexpected file field %q: use files[n].", files[i].field)))
			return
		}
		idx := "0"
		if m != nil {
			idx = m[1]
		}
		byIndex[idx] = &files[i]
	}
	names := map[string]string{}
	for i, at := range p.Attachments {
		f, ok := byIndex[at.ID.String()]
		if !ok {
			dcFail(w, dcField(fmt.Sprintf("attachments.%d.id", i), "ATTACHMENT_NOT_FOUND", "Attachment data not found"))
			return
		}
		if at.Filename != "" {
			names[f.field] = at.Filename
		}
	}
	nonce := ""
	if len(p.Nonce) > 0 && string(p.Nonce) != "null" {
		if webhook {
			// Execute Webhook has no nonce parameter; Discord ignores unknown fields.
		} else {
			var sv string
			var nv json.Number
			switch {
			case json.Unmarshal(p.Nonce, &sv) == nil:
				nonce = sv
			case json.Unmarshal(p.Nonce, &nv) == nil:
				nonce = nv.String()
			}
			if nonce == "" || len(nonce) > 25 {
				dcFail(w, dcField("nonce", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 25 in length."))
				return
			}
		}
	}
	if text == "" && len(files) == 0 && len(p.Embeds) == 0 {
		dcFail(w, dcErr{status: http.StatusBadRequest, code: 50006, msg: "Cannot send an empty message"})
		return
	}
	if a.Behavior.Fail == sim.FailReject && len(files) > 0 {
		dcFail(w, dcErr{status: http.StatusBadRequest, code: 20009, msg: "Explicit content cannot be sent to the desired recipient(s)"})
		return
	}

	now := s.cfg.Now()
	authorID := BotID(a.ID)
	author := s.botUser(a)
	if webhook {
		authorID = a.ID
		author = map[string]any{"id": a.ID, "username": s.webhook(a, "")["name"], "bot": true, "discriminator": "0000"}
	}
	channel := ChannelID(a.ID)
	low := rand.Uint64N(1 << 22)
	var msg dcMessage
	err := s.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		// What Discord received counts whether or not the nonce answers an earlier message.
		for _, f := range files {
			if err := sim.RecordTx(tx, platform.Discord, sim.Upload{Account: a.ID, Bytes: f.size, SHA256: f.sha}); err != nil {
				return err
			}
		}
		var uses []dcNonceUse
		nonceRec := sim.Record{Key: dcKey(dcNonceKind, dcNonceID(channel, authorID, nonce)), Account: a.ID}
		if nonce != "" {
			var err error
			if uses, _, _, err = sim.LoadTx[[]dcNonceUse](tx, nonceRec.Key); err != nil {
				return err
			}
			uses = slices.DeleteFunc(uses, func(u dcNonceUse) bool { return !now.Before(u.At.Add(s.opts.NonceWindow)) })
			if p.EnforceNonce && len(uses) > 0 {
				first, _, found, err := sim.LoadTx[dcMessage](tx, dcKey(dcMessageKind, dcMessageID(channel, uses[0].Message)))
				if err != nil || found {
					msg = first
					return err
				}
			}
		}
		c, crec, _, err := sim.LoadTx[dcChannel](tx, dcKey(dcChannelKind, a.ID))
		if err != nil {
			return err
		}
		msg = dcMessage{ID: c.next(now, low), Type: 0, ChannelID: channel, Content: text, Author: author,
			Attachments: []dcAttachment{}, Embeds: []any{}, Timestamp: now.UTC().Format("2006-01-02T15:04:05.000000+00:00"),
			Nonce: nonce}
		if webhook {
			msg.WebhookID = a.ID
		}
		for _, f := range files {
			name := f.filename
			if n, ok := names[f.field]; ok {
				name = n
			}
			id := c.next(now, low)
			u := fmt.Sprintf("%s/attachments/%s/%s/%s", s.cfg.BaseURL, channel, id, name)
			msg.Attachments = append(msg.Attachments, dcAttachment{ID: id, Filename: name, Size: f.size, URL: u, ProxyURL: u, ContentType: f.ctype})
		}
		crec.Account = a.ID
		if err := sim.Save(tx, crec, c); err != nil {
			return err
		}
		if err := sim.Save(tx, sim.Record{Key: dcKey(dcMessageKind, dcMessageID(channel, msg.ID)), Account: a.ID}, msg); err != nil {
			return err
		}
		if nonce != "" {
			uses = append(uses, dcNonceUse{Message: msg.ID, At: now})
			nonceRec.Expires = now.Add(s.opts.NonceWindow)
			if err := sim.Save(tx, nonceRec, uses); err != nil {
				return err
			}
		}
		sha := ""
		if len(files) > 0 {
			sha = files[0].sha
		}
		return sim.RecordTx(tx, platform.Discord, sim.Published{Account: a.ID, ID: msg.ID,
			URL: fmt.Sprintf("https://discord.com/channels/%s/%s/%s", GuildID(a.ID), channel, msg.ID), SHA256: sha, Text: text})
	})
	if err != nil {
		dcFail(w, dcInternal)
		return
	}
	if !wait {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	dcWrite(w, http.StatusOK, msg)
}

func (s *Sim) list(w http.ResponseWriter, r *http.Request, a sim.Account) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			dcFail(w, dcField("limit", "NUMBER_TYPE_MAX", "int value should be between 1 and 100."))
			return
		}
		limit = n
	}
	var after, before uint64
	for k, dst := range map[string]*uint64{"after": &after, "before": &before} {
		if v := q.Get(k); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				dcFail(w, dcField(k, "NUMBER_TYPE_COERCE", fmt.Sprintf("Value %q is not snowflake.", v)))
				return
			}
			*dst = n
		}
	}
	msgs, err := sim.ListJSON[dcMessage](r.Context(), s.cfg.State, dcKey(dcMessageKind, ""), a.ID)
	if err != nil {
		dcFail(w, dcInternal)
		return
	}
	var out []dcMessage
	for _, m := range msgs {
		id, _ := strconv.ParseUint(m.ID, 10, 64)
		if (after == 0 || id > after) && (before == 0 || id < before) {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		x, _ := strconv.ParseUint(out[i].ID, 10, 64)
		y, _ := strconv.ParseUint(out[j].ID, 10, 64)
		return x > y
	})
	if after != 0 && len(out) > limit {
		out = out[len(out)-limit:] // the oldest after the cursor
	} else if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []dcMessage{}
	}
	dcWrite(w, http.StatusOK, out)
}
