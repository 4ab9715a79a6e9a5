// Package telegramsim is the simulator of Telegram's API: the platform as its documentation
// describes it, for the sandbox and the tests, on what all simulators share (package sim).
package telegramsim

// Telegram Bot API simulator. Sources: core.telegram.org/bots/api (Making requests, sendVideo,
// Sending files, getMe, getChat, getChatMember, ChatMemberAdministrator, ResponseParameters),
// as copied in client libraries' documentation; Bot API error answers as bots receive them.
//
// What it reproduces:
//   - paths /bot{token}/{method} (method names case-insensitive, GET or POST), parameters in
//     the query string, a urlencoded or JSON body, or multipart/form-data;
//   - every answer as {"ok":true,"result":...} or {"ok":false,"error_code":N,"description":
//     "...","parameters":{"retry_after":N}}, with the HTTP status equal to error_code; an
//     unknown token answers 401 "Unauthorized";
//   - one channel per account: username = the account's id, a -100… numeric id, type channel,
//     title = the account's username; the sandbox bot (getMe) is its administrator with
//     can_post_messages;
//   - getMe, getChat, getChatMember, and sendVideo, which must be multipart/form-data with the
//     video uploaded as a file part (directly, or by attach://name): the part is hashed while
//     it streams and never held in memory; at most 50 MB (Options.MaxVideoBytes; a
//     local Bot API server allows 2000 MB), else 413 "Request Entity Too Large"; the caption at
//     most 1024 UTF-16 units; parse_mode HTML, Markdown or MarkdownV2 if given; width, height,
//     duration integers; supports_streaming a boolean; thumbnail a JPEG file part under 200 kB
//     and at most 320 px a side; chat_id the account's channel (else "chat not found");
//   - a file that is not an MP4 is posted as a document, as Telegram does;
//   - faults: unavailable → 500, auth → 401, rate_limit → 429 with parameters.retry_after,
//     reject → 400 for the video. Telegram posts synchronously: processing_ms has no effect.
//
// A channel's message ids are Config.State's (tgChat), so that they go on increasing whichever
// process serves the simulator, and after a restart. sendVideo takes the whole video in its one
// request and nothing refers to its bytes afterwards (a file_id is refused, see
// serveSendVideo): they are hashed as they stream and none is kept.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
)

// Telegram limits the simulator enforces.
const (
	tgDefaultMaxVideo = 50 * 1000 * 1000
	tgMaxThumbBytes   = 200 * 1000
	tgMaxThumbSide    = 320
	tgMaxCaption      = 1024
	tgMaxFieldBytes   = 1 << 16
	tgRetryAfter      = 7
	// tgBotName is the sandbox bot's username.
	tgBotName = "reelay_sandbox_bot"
)

// Options tune the Telegram simulator.
type Options struct {
	// MaxVideoBytes is the upload limit (50 MB, the cloud Bot API's).
	MaxVideoBytes int64
}

// Sim is the Telegram Bot API simulator.
type Sim struct {
	cfg  sim.Config
	opts Options
}

// tgChatKind is the kind of the records of an account's channel (tgChat), kept until
// retention: a channel not posted to for that long starts again from message 1, having
// forgotten, with its record, everything it received before.
const tgChatKind = "chat"

func tgKey(kind, id string) sim.Key { return sim.Key{Platform: platform.Telegram, Kind: kind, ID: id} }

// tgChat is what the simulator keeps of an account's channel. Message ids are "unique
// message identifier inside this chat" (Bot API, Message): counted per chat, from 1.
type tgChat struct {
	LastMessageID int64 `json:"last_message_id"`
}

// New returns the Telegram Bot API simulator.
func New(cfg sim.Config) http.Handler { return NewSim(cfg, Options{}) }

// NewSim returns the simulator with options.
func NewSim(cfg sim.Config, o Options) *Sim {
	cfg.Normalize()
	if o.MaxVideoBytes <= 0 {
		o.MaxVideoBytes = tgDefaultMaxVideo
	}
	return &Sim{cfg: cfg, opts: o}
}

// ChatID is the numeric id of an account's sandbox channel (-100 followed by ten
// digits, as Bot API ids of channels are).
func ChatID(account string) int64 {
	h := sha256.Sum256([]byte("telegram-chat|" + account))
	return -(1_000_000_000_000 + 1_000_000_000 + int64(binary.BigEndian.Uint64(h[:8])%8_000_000_000))
}

// BotID is the numeric id of the sandbox bot that an account's token belongs to.
func BotID(account string) int64 {
	h := sha256.Sum256([]byte("telegram-bot|" + account))
	return 1_000_000_000 + int64(binary.BigEndian.Uint64(h[:8])%5_000_000_000)
}

type tgError struct {
	code       int
	desc       string
	retryAfter int
}

func tgWrite(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func tgFail(w http.ResponseWriter, e tgError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.desc}
	if e.retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.code)
	_ = json.NewEncoder(w).Encode(body)
}

func tgBad(desc string) tgError {
	return tgError{code: http.StatusBadRequest, desc: "Bad Request: " + desc}
}

// tgInternal is the Bot API's answer to a failure of the simulator's own (its State): a server
// error, which bots retry.
var tgInternal = tgError{code: http.StatusInternalServerError, desc: "Internal Server Error"}

func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || token == "" || method == "" || strings.Contains(method, "/") {
		tgFail(w, tgError{code: http.StatusNotFound, desc: "Not Found"})
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		tgFail(w, tgError{code: http.StatusMethodNotAllowed, desc: "Method Not Allowed"})
		return
	}
	acct, ok := s.cfg.Accounts.Resolve(r.Context(), token)
	if !ok {
		tgFail(w, tgError{code: http.StatusUnauthorized, desc: "Unauthorized"})
		return
	}
	switch sim.CallFault(acct.Behavior, s.cfg.Rand) {
	case sim.FailUnavailable:
		tgFail(w, tgError{code: http.StatusInternalServerError, desc: "Internal Server Error: restart"})
		return
	case sim.FailAuth:
		tgFail(w, tgError{code: http.StatusUnauthorized, desc: "Unauthorized"})
		return
	case sim.FailRateLimit:
		tgFail(w, tgError{code: http.StatusTooManyRequests, desc: fmt.Sprintf("Too Many Requests: retry after %d", tgRetryAfter), retryAfter: tgRetryAfter})
		return
	}
	switch strings.ToLower(method) {
	case "getme":
		tgWrite(w, s.bot(acct))
	case "getchat":
		s.serveGetChat(w, r, acct)
	case "getchatmember":
		s.serveGetChatMember(w, r, acct)
	case "sendvideo":
		s.serveSendVideo(w, r, acct)
	default:
		tgFail(w, tgError{code: http.StatusNotFound, desc: "Not Found: method not found"})
	}
}

func (s *Sim) bot(a sim.Account) map[string]any {
	return map[string]any{"id": BotID(a.ID), "is_bot": true, "first_name": "Reelay Sandbox", "username": tgBotName,
		"can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false}
}

func (s *Sim) chat(a sim.Account) map[string]any {
	title := a.Username
	if title == "" {
		title = "Sandbox channel " + a.ID
	}
	return map[string]any{"id": ChatID(a.ID), "type": "channel", "title": title, "username": a.ID}
}

// chatMatches reports whether a chat_id names the account's channel.
func chatMatches(a sim.Account, chatID string) bool {
	if name, ok := strings.CutPrefix(chatID, "@"); ok {
		return strings.EqualFold(name, a.ID)
	}
	return chatID == strconv.FormatInt(ChatID(a.ID), 10)
}

// tgParams reads the parameters of a method that takes no file: query string, urlencoded or
// JSON body.
func tgParams(r *http.Request) (url.Values, *tgError) {
	v := r.URL.Query()
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "", "application/x-www-form-urlencoded":
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, tgMaxFieldBytes+1))
			if err != nil || len(body) > tgMaxFieldBytes {
				e := tgBad("request is too big")
				return nil, &e
			}
			form, err := url.ParseQuery(string(body))
			if err != nil {
				e := tgBad("can't parse request body")
				return nil, &e
			}
			for k, vs := range form {
				v[k] = vs
			}
		}
	case "application/json":
		var m map[string]any
		dec := json.NewDecoder(io.LimitReader(r.Body, tgMaxFieldBytes))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			e := tgBad("can't parse JSON object")
			return nil, &e
		}
		for k, x := range m {
			switch x := x.(type) {
			case string:
				v.Set(k, x)
			case json.Number:
				v.Set(k, x.String())
			case bool:
				v.Set(k, strconv.FormatBool(x))
			}
		}
	case "multipart/form-data":
		if err := r.ParseMultipartForm(tgMaxFieldBytes); err != nil {
			e := tgBad("can't parse multipart/form-data")
			return nil, &e
		}
		for k, vs := range r.MultipartForm.Value {
			v[k] = vs
		}
	default:
		e := tgBad("unsupported Content-Type " + ct)
		return nil, &e
	}
	return v, nil
}

func (s *Sim) serveGetChat(w http.ResponseWriter, r *http.Request, a sim.Account) {
	p, perr := tgParams(r)
	if perr != nil {
		tgFail(w, *perr)
		return
	}
	switch id := p.Get("chat_id"); {
	case id == "":
		tgFail(w, tgBad("chat_id is empty"))
	case !chatMatches(a, id):
		tgFail(w, tgBad("chat not found"))
	default:
		tgWrite(w, s.chat(a))
	}
}

func (s *Sim) serveGetChatMember(w http.ResponseWriter, r *http.Request, a sim.Account) {
	p, perr := tgParams(r)
	if perr != nil {
		tgFail(w, *perr)
		return
	}
	chatID, userID := p.Get("chat_id"), p.Get("user_id")
	switch {
	case chatID == "":
		tgFail(w, tgBad("chat_id is empty"))
		return
	case !chatMatches(a, chatID):
		tgFail(w, tgBad("chat not found"))
		return
	case userID == "":
		tgFail(w, tgBad("user_id is empty"))
		return
	}
	uid, err := strconv.ParseInt(userID, 10, 64)
	if err != nil || uid <= 0 {
		tgFail(w, tgBad("invalid user_id specified"))
		return
	}
	if uid != BotID(a.ID) {
		tgFail(w, tgBad("user not found"))
		return
	}
	tgWrite(w, map[string]any{
		"status": "administrator", "user": s.bot(a), "can_be_edited": false, "is_anonymous": false,
		"can_manage_chat": true, "can_delete_messages": true, "can_manage_video_chats": false,
		"can_restrict_members": false, "can_promote_members": false, "can_change_info": false,
		"can_invite_users": true, "can_post_messages": true, "can_edit_messages": true,
		"can_post_stories": false, "can_edit_stories": false, "can_delete_stories": false,
	})
}

// tgFile is a file part of a sendVideo request, as received.
type tgFile struct {
	size   int64
	sha    string
	head   []byte // the first bytes, to tell an MP4
	thumb  []byte // whole, for thumbnail-sized parts only
	tooBig bool
}

func (s *Sim) serveSendVideo(w http.ResponseWriter, r *http.Request, a sim.Account) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		// A video given by file_id or URL: the sandbox has no files to refer to.
		p, perr := tgParams(r)
		if perr != nil {
			tgFail(w, *perr)
			return
		}
		if p.Get("video") == "" {
			tgFail(w, tgBad("there is no video in the request"))
		} else {
			tgFail(w, tgBad("wrong remote file identifier specified: can't unserialize it. Wrong last symbol"))
		}
		return
	}
	if params["boundary"] == "" {
		tgFail(w, tgBad("can't parse multipart/form-data: no boundary"))
		return
	}
	// Telegram's front end refuses a declared body over the limit before reading it.
	if r.ContentLength > s.opts.MaxVideoBytes+tgMaxThumbBytes+1<<20 {
		tgFail(w, tgError{code: http.StatusRequestEntityTooLarge, desc: "Request Entity Too Large"})
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		tgFail(w, tgBad("can't parse multipart/form-data"))
		return
	}
	fields := map[string]string{}
	files := map[string]*tgFile{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			tgFail(w, tgBad("can't parse multipart/form-data: "+err.Error()))
			return
		}
		name := part.FormName()
		if name == "" {
			part.Close()
			tgFail(w, tgBad("can't parse multipart/form-data: a part has no name"))
			return
		}
		if part.FileName() == "" {
			b, err := io.ReadAll(io.LimitReader(part, tgMaxFieldBytes+1))
			part.Close()
			if err != nil || len(b) > tgMaxFieldBytes {
				tgFail(w, tgBad("parameter "+name+" is too long"))
				return
			}
			fields[name] = string(b)
			continue
		}
		f, err := s.readFile(part)
		part.Close()
		if err != nil {
			tgFail(w, tgBad("can't read the uploaded file: "+err.Error()))
			return
		}
		if f.tooBig {
			tgFail(w, tgError{code: http.StatusRequestEntityTooLarge, desc: "Request Entity Too Large"})
			return
		}
		files[name] = f
	}
	s.sendVideo(w, r, a, fields, files)
}

// readFile hashes one file part as it streams, keeping only its first bytes (and the whole
// part when it is small enough to be a thumbnail).
func (s *Sim) readFile(part io.Reader) (*tgFile, error) {
	h := sha256.New()
	var head bytes.Buffer
	buf := make([]byte, 64<<10)
	f := &tgFile{}
	for {
		n, err := part.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			if head.Len() < tgMaxThumbBytes+1 {
				head.Write(buf[:min(n, tgMaxThumbBytes+1-head.Len())])
			}
			f.size += int64(n)
			if f.size > s.opts.MaxVideoBytes {
				f.tooBig = true
				return f, nil
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	f.sha = hex.EncodeToString(h.Sum(nil))
	f.head = head.Bytes()[:min(head.Len(), 16)]
	if f.size <= tgMaxThumbBytes {
		f.thumb = head.Bytes()
	}
	return f, nil
}

// fileRef resolves an InputFile parameter: a file part of that name, or attach://name.
func fileRef(fields map[string]string, files map[string]*tgFile, name string) (*tgFile, string, bool) {
	if v, ok := fields[name]; ok {
		ref, ok := strings.CutPrefix(v, "attach://")
		if !ok {
			return nil, v, false
		}
		f, ok := files[ref]
		return f, v, ok
	}
	f, ok := files[name]
	return f, "", ok
}

func (s *Sim) sendVideo(w http.ResponseWriter, r *http.Request, a sim.Account, fields map[string]string, files map[string]*tgFile) {
	chatID := fields["chat_id"]
	switch {
	case chatID == "":
		tgFail(w, tgBad("chat_id is empty"))
		return
	case !chatMatches(a, chatID):
		tgFail(w, tgBad("chat not found"))
		return
	}
	video, ref, ok := fileRef(fields, files, "video")
	if !ok {
		if ref != "" && !strings.HasPrefix(ref, "attach://") {
			tgFail(w, tgBad("wrong remote file identifier specified: can't unserialize it. Wrong last symbol"))
		} else {
			tgFail(w, tgBad("there is no video in the request"))
		}
		return
	}
	if video.size == 0 {
		tgFail(w, tgBad("file must be non-empty"))
		return
	}
	caption := fields["caption"]
	if len(utf16.Encode([]rune(caption))) > tgMaxCaption {
		tgFail(w, tgBad("message caption is too long"))
		return
	}
	switch fields["parse_mode"] {
	case "", "HTML", "Markdown", "MarkdownV2":
	default:
		tgFail(w, tgBad("unsupported parse_mode"))
		return
	}
	ints := map[string]int{}
	for _, k := range []string{"width", "height", "duration"} {
		if v, ok := fields[k]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				tgFail(w, tgBad("invalid "+k+" specified"))
				return
			}
			ints[k] = n
		}
	}
	for _, k := range []string{"supports_streaming", "disable_notification", "protect_content", "has_spoiler"} {
		if v, ok := fields[k]; ok {
			if _, err := strconv.ParseBool(v); err != nil {
				tgFail(w, tgBad("invalid "+k+" specified: expected a Boolean"))
				return
			}
		}
	}
	if _, has := fields["thumbnail"]; has || files["thumbnail"] != nil {
		th, _, ok := fileRef(fields, files, "thumbnail")
		if !ok {
			tgFail(w, tgBad("wrong thumbnail: it must be uploaded as a new file (attach://<file_attach_name>)"))
			return
		}
		if msg := tgThumbProblem(th); msg != "" {
			tgFail(w, tgBad(msg))
			return
		}
	}
	if a.Behavior.Fail == sim.FailReject {
		tgFail(w, tgBad("VIDEO_FILE_INVALID"))
		return
	}

	chat := s.chat(a)
	var id int64
	err := s.cfg.State.Update(r.Context(), func(tx sim.Tx) error {
		c, rec, _, err := sim.LoadTx[tgChat](tx, tgKey(tgChatKind, a.ID))
		if err != nil {
			return err
		}
		c.LastMessageID++
		id = c.LastMessageID
		rec.Account = a.ID
		if err := sim.Save(tx, rec, c); err != nil {
			return err
		}
		if err := sim.RecordTx(tx, platform.Telegram, sim.Upload{Account: a.ID, Bytes: video.size, SHA256: video.sha}); err != nil {
			return err
		}
		return sim.RecordTx(tx, platform.Telegram, sim.Published{Account: a.ID, ID: fmt.Sprintf("%d:%d", ChatID(a.ID), id),
			URL: fmt.Sprintf("https://t.me/%s/%d", a.ID, id), SHA256: video.sha, Text: caption})
	})
	if err != nil {
		tgFail(w, tgInternal)
		return
	}
	fileID := "BAACAgIAAx0Sim" + video.sha[:24]
	msg := map[string]any{
		"message_id": id, "date": s.cfg.Now().Unix(), "chat": chat, "sender_chat": chat,
	}
	if caption != "" {
		msg["caption"] = caption
	}
	if len(video.head) >= 8 && string(video.head[4:8]) == "ftyp" {
		msg["video"] = map[string]any{"file_id": fileID, "file_unique_id": video.sha[:16], "width": ints["width"],
			"height": ints["height"], "duration": ints["duration"], "mime_type": "video/mp4", "file_size": video.size}
	} else {
		// Telegram clients play MP4; anything else arrives as a document.
		msg["document"] = map[string]any{"file_id": fileID, "file_unique_id": video.sha[:16], "file_size": video.size}
	}
	tgWrite(w, msg)
}

// tgThumbProblem checks sendVideo's thumbnail rule: JPEG, under 200 kB, at most 320 px a side.
func tgThumbProblem(f *tgFile) string {
	if f.size >= tgMaxThumbBytes || f.thumb == nil {
		return "thumbnail is too big: it must be less than 200 kB"
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(f.thumb))
	if err != nil {
		return "wrong thumbnail: it must be in JPEG format"
	}
	if cfg.Width > tgMaxThumbSide || cfg.Height > tgMaxThumbSide {
		return fmt.Sprintf("wrong thumbnail dimensions %dx%d: width and height must not exceed 320", cfg.Width, cfg.Height)
	}
	return ""
}
